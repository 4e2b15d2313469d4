/* egress-policy.c — see egress-policy.h.
 *
 * Trust boundary: the host and the resolver's answers are untrusted; the
 * entries are the operator's and are parsed strictly.  A decision fails
 * closed: anything unexpected (a family other than IPv4/IPv6, too many
 * addresses, no address) is a refusal with a one-line reason. */
#include "egress-policy.h"

#include "egress-addr.h"
#include "util/num.h"
#include "util/util.h"

#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

enum rule_kind { RULE_NAME, RULE_WILD, RULE_ADDR };

struct rule {
	enum rule_kind kind;
	char text[CD_HOST_MAX + 8]; /* the entry as given */
	char host[CD_HOST_MAX];     /* RULE_NAME, RULE_WILD: the pattern */
	int family;                 /* RULE_ADDR */
	unsigned char net[16];
	unsigned bits;
	uint16_t port; /* 0: 80 and 443 */
};

struct cd_egress_policy {
	struct rule *rules;
	size_t n;
	cd_egress_resolve_fn resolve;
	void *resolve_ctx;
};

int cd_egress_resolve_system(const char *host, struct sockaddr_storage *addrs, size_t max,
                             void *ctx)
{
	struct addrinfo hints, *res = NULL, *ai;
	size_t n = 0;
	int r;

	memset(&hints, 0, sizeof hints);
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	r = getaddrinfo(host, NULL, &hints, &res);
	if (r != 0)
		return r == EAI_MEMORY ? -ENOMEM : -ENOENT;
	for (ai = res; ai; ai = ai->ai_next) {
		if (n < max) {
			memset(&addrs[n], 0, sizeof addrs[n]);
			if (ai->ai_addrlen > sizeof addrs[n])
				continue;
			memcpy(&addrs[n], ai->ai_addr, ai->ai_addrlen);
		}
		n++;
	}
	freeaddrinfo(res);
	return n > INT32_MAX ? INT32_MAX : (int)n;
}

int cd_egress_policy_new(struct cd_egress_policy **ret)
{
	struct cd_egress_policy *p = calloc(1, sizeof *p);

	if (!p)
		return -ENOMEM;
	p->resolve = cd_egress_resolve_system;
	*ret = p;
	return 0;
}

void cd_egress_policy_free(struct cd_egress_policy *p)
{
	if (!p)
		return;
	free(p->rules);
	free(p);
}

void cd_egress_policy_set_resolver(struct cd_egress_policy *p, cd_egress_resolve_fn fn, void *ctx)
{
	p->resolve = fn ? fn : cd_egress_resolve_system;
	p->resolve_ctx = fn ? ctx : NULL;
}

static void addr_bytes(const struct sockaddr_storage *ss, int *family, unsigned char out[16])
{
	*family = ss->ss_family;
	if (ss->ss_family == AF_INET)
		memcpy(out, &((const struct sockaddr_in *)ss)->sin_addr, 4);
	else
		memcpy(out, ((const struct sockaddr_in6 *)ss)->sin6_addr.s6_addr, 16);
}

static int prefix_match(const unsigned char *a, const unsigned char *net, unsigned bits)
{
	unsigned full = bits / 8, rest = bits % 8;

	if (memcmp(a, net, full) != 0)
		return 0;
	if (rest == 0)
		return 1;
	return ((a[full] ^ net[full]) & (unsigned char)(0xff << (8 - rest))) == 0;
}

/* Parse the host part of an entry into r. */
static int parse_rule_host(const char *h, size_t len, struct rule *r, struct cd_err *err)
{
	const char *slash = memchr(h, '/', len);
	struct sockaddr_storage ss;
	size_t alen = slash ? (size_t)(slash - h) : len;
	unsigned maxbits;
	int lit, rc;

	if (alen == 0)
		return cd_err_set(err, -EINVAL, "empty host");
	lit = cd_addr_literal(h, alen, &ss);
	if (lit == CD_LIT_IPV4 || lit == CD_LIT_IPV6) {
		uint64_t bits;
		addr_bytes(&ss, &r->family, r->net);
		maxbits = lit == CD_LIT_IPV4 ? 32 : 128;
		r->bits = maxbits;
		if (slash) {
			size_t blen = len - alen - 1;
			if (blen == 0 || (blen > 1 && slash[1] == '0') ||
			    cd_parse_u64(slash + 1, blen, maxbits, &bits) < 0 || bits == 0)
				return cd_err_set(err, -EINVAL, "invalid prefix length");
			r->bits = (unsigned)bits;
			for (unsigned b = r->bits; b < maxbits; b++)
				if (r->net[b / 8] & (0x80 >> (b % 8)))
					return cd_err_set(err, -EINVAL, "range has host bits set");
		}
		r->kind = RULE_ADDR;
		return 0;
	}
	if (slash)
		return cd_err_set(err, -EINVAL, "a range needs an address");
	if (lit < 0)
		return cd_err_set(err, -EINVAL, "IP address not in canonical form");
	if (len >= sizeof r->host)
		return cd_err_set(err, -EINVAL, "host too long");
	memcpy(r->host, h, len);
	r->host[len] = '\0';
	/* Kept in its ASCII form: a U-label entry matches its A-label. */
	rc = cd_host_pattern_normalize(r->host, r->host, sizeof r->host);
	if (rc == -CD_E_DENIED)
		return cd_err_set(err, -EINVAL, "wildcard '%s' covers a public suffix", r->host);
	if (rc < 0)
		return cd_err_set(err, -EINVAL, "host is not a normalized name or '*.' pattern");
	r->kind = r->host[0] == '*' ? RULE_WILD : RULE_NAME;
	return 0;
}

int cd_egress_policy_add(struct cd_egress_policy *p, const char *entry, struct cd_err *err)
{
	struct rule r, *grown;
	const char *colon;
	size_t len, hlen;
	int rc;

	if (!p || !entry)
		return cd_err_set(err, -EINVAL, "no entry");
	if (p->n >= CD_EGRESS_RULES_MAX)
		return cd_err_set(err, -CD_E_LIMIT, "more than %d allowlist entries",
		                  CD_EGRESS_RULES_MAX);
	len = strnlen(entry, sizeof r.text);
	if (len == 0 || len >= sizeof r.text)
		return cd_err_set(err, -EINVAL, "allowlist entry empty or too long");
	memset(&r, 0, sizeof r);
	memcpy(r.text, entry, len + 1);
	/* The port follows the first ':' after the host ("[v6]" holds colons). */
	if (entry[0] == '[') {
		const char *close = strchr(entry, ']');
		colon = close ? strchr(close, ':') : NULL;
	} else {
		colon = strchr(entry, ':');
	}
	hlen = colon ? (size_t)(colon - entry) : len;
	if (colon) {
		uint64_t port;
		size_t plen = len - hlen - 1;
		if (plen == 0 || colon[1] == '0' || cd_parse_u64(colon + 1, plen, 65535, &port) < 0)
			return cd_err_set(err, -EINVAL, "allowlist entry '%s': invalid port",
			                  r.text);
		r.port = (uint16_t)port;
	}
	rc = parse_rule_host(entry, hlen, &r, err);
	if (rc < 0)
		return cd_err_prefix(err, "allowlist entry '%s': ", r.text);
	grown = realloc(p->rules, (p->n + 1) * sizeof *grown);
	if (!grown)
		return cd_err_set(err, -ENOMEM, "out of memory");
	p->rules = grown;
	p->rules[p->n++] = r;
	return 0;
}

static int port_ok(const struct rule *r, uint16_t port)
{
	return r->port ? r->port == port : (port == 80 || port == 443);
}

static int addr_in_rule(const struct rule *r, const struct sockaddr_storage *ss)
{
	unsigned char a[16];
	int family;

	if (r->kind != RULE_ADDR || ss->ss_family != r->family)
		return 0;
	addr_bytes(ss, &family, a);
	return prefix_match(a, r->net, r->bits);
}

/* An address entry for this port that holds the address, or NULL. */
static const struct rule *addr_named(const struct cd_egress_policy *p,
                                     const struct sockaddr_storage *ss, uint16_t port)
{
	size_t i;

	for (i = 0; i < p->n; i++)
		if (port_ok(&p->rules[i], port) && addr_in_rule(&p->rules[i], ss))
			return &p->rules[i];
	return NULL;
}

static int deny(struct cd_egress_decision *d, const char *fmt, ...)
        __attribute__((format(printf, 2, 3)));
static int deny(struct cd_egress_decision *d, const char *fmt, ...)
{
	va_list ap;
	int n;

	d->allow = 0;
	va_start(ap, fmt);
	n = vsnprintf(d->reason, sizeof d->reason, fmt, ap);
	va_end(ap);
	if (n < 0)
		memcpy(d->reason, "denied", sizeof "denied");
	return 0;
}

int cd_egress_report_only(const struct cd_egress_policy *p, const char *host, uint16_t port,
                          struct cd_egress_decision *d)
{
	size_t hlen = strnlen(host, CD_HOST_MAX);
	int lit, n;

	if (!p || !d || d->allow || hlen == 0 || hlen >= CD_HOST_MAX || port == 0)
		return -EINVAL;
	if (d->naddrs > 0 && d->naddrs <= CD_EGRESS_ADDRS_MAX)
		goto chosen; /* resolved once already: never twice */
	lit = cd_addr_literal(host, hlen, &d->addrs[0]);
	if (lit < 0)
		return -EINVAL;
	if (lit == CD_LIT_NAME) {
		n = p->resolve(host, d->addrs, CD_EGRESS_ADDRS_MAX, p->resolve_ctx);
		if (n <= 0)
			return n < 0 ? n : -ENOENT;
		d->naddrs = (size_t)n > CD_EGRESS_ADDRS_MAX ? CD_EGRESS_ADDRS_MAX : (size_t)n;
	} else {
		d->naddrs = 1;
	}
chosen:
	d->connect = d->addrs[0];
	cd_addr_set_port(&d->connect, port);
	return 0;
}

static int decide(const struct cd_egress_policy *p, const char *host, uint16_t port,
                  struct cd_egress_decision *d)
{
	const struct rule *match = NULL;
	char name[CD_HOST_MAX];
	int lit, port_other = 0, n;
	size_t i, hlen = strnlen(host, CD_HOST_MAX);

	if (hlen == 0 || hlen >= CD_HOST_MAX || port == 0)
		return -EINVAL;
	lit = cd_addr_literal(host, hlen, &d->addrs[0]);
	if (lit < 0)
		return deny(d, "host is not a valid name or canonical address");
	if (lit == CD_LIT_NAME) {
		if (cd_host_normalize(host, hlen, name, sizeof name) < 0)
			return deny(d, "host is not a valid name or canonical address");
		host = name;
	}
	for (i = 0; i < p->n && !match; i++) {
		const struct rule *r = &p->rules[i];
		int hit = lit == CD_LIT_NAME ? r->kind != RULE_ADDR && cd_host_match(r->host, host)
		                             : addr_in_rule(r, &d->addrs[0]);
		if (hit && port_ok(r, port))
			match = r;
		else if (hit)
			port_other = 1;
	}
	if (!match)
		return port_other ? deny(d, "port %u is not allowed for this host", port)
		                  : deny(d, "host is not in the allowlist");
	n = snprintf(d->rule, sizeof d->rule, "%s", match->text);
	if (n < 0 || (size_t)n >= sizeof d->rule)
		d->rule[0] = '\0';

	if (lit == CD_LIT_NAME) {
		n = p->resolve(host, d->addrs, CD_EGRESS_ADDRS_MAX, p->resolve_ctx);
		if (n == -ENOMEM)
			return -ENOMEM;
		if (n < 0)
			return deny(d, "host does not resolve");
		if (n == 0)
			return deny(d, "host resolves to no address");
		if ((size_t)n > CD_EGRESS_ADDRS_MAX)
			return deny(d, "host resolves to more than %d addresses",
			            CD_EGRESS_ADDRS_MAX);
		d->naddrs = (size_t)n;
	} else {
		d->naddrs = 1;
	}
	for (i = 0; i < d->naddrs; i++) {
		char text[64];
		int cls = cd_addr_classify(&d->addrs[i]);
		if (cls < 0)
			return deny(d, "resolver returned an address of another family");
		if (cls == CD_ADDR_PUBLIC || addr_named(p, &d->addrs[i], port))
			continue;
		if (cd_addr_format(&d->addrs[i], text, sizeof text) < 0)
			text[0] = '\0';
		return deny(d, "%s is %s and not named in the allowlist", text,
		            cd_addr_class_name((enum cd_addr_class)cls));
	}
	d->connect = d->addrs[0];
	cd_addr_set_port(&d->connect, port);
	d->allow = 1;
	n = snprintf(d->reason, sizeof d->reason, "allowed by '%s'", match->text);
	if (n < 0 || (size_t)n >= sizeof d->reason)
		memcpy(d->reason, "allowed", sizeof "allowed");
	return 0;
}

int cd_egress_decide(const struct cd_egress_policy *p, const char *host, uint16_t port,
                     struct cd_egress_decision *ret)
{
	struct cd_egress_decision *d;
	int r;

	if (!p || !host || !ret)
		return -EINVAL;
	d = calloc(1, sizeof *d);
	if (!d)
		return -ENOMEM;
	r = decide(p, host, port, d);
	if (r == 0)
		memcpy(ret, d, sizeof *d);
	free(d);
	return r;
}
