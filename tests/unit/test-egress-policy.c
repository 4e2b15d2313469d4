/* test-egress-policy.c — the egress allowlist and decisions (THREATS rows
 * 20, 22, 24), with an injected resolver: no DNS is used.  Table-driven. */
#include "../tap.h"

#include "egress/egress-addr.h"
#include "egress/egress-policy.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>

/* The test's DNS: name -> up to three addresses. */
static const struct {
	const char *name;
	const char *addrs[3];
} zone[] = {
	{ "api.example.com", { "93.184.216.34" } },
	{ "a.example.com", { "93.184.216.35", "2606:2800:220:1::35" } },
	{ "example.com", { "93.184.216.36" } },
	{ "evilexample.com", { "93.184.216.37" } },
	{ "rebind.example.com", { "93.184.216.38", "127.0.0.1" } },
	{ "private.example.com", { "10.1.2.3" } },
	{ "meta.example.com", { "169.254.169.254" } },
	{ "mapped.example.com", { "::ffff:127.0.0.1" } },
	{ "nat64.example.com", { "64:ff9b::a9fe:a9fe" } },
	{ "sixtofour.example.com", { "2002:c0a8:101::1" } },
	{ "teredo.example.com", { "2001:0:808:808::80ff:fffe" } },
	{ "cgnat.example.com", { "100.64.1.1" } },
	{ "v6ll.example.com", { "fe80::1" } },
	{ "localhost", { "127.0.0.1", "::1" } },
	{ "build.corp.example", { "10.9.8.7" } },
	{ "metadata.google.internal", { "169.254.169.254" } },
	{ "xn--bcher-kva.example", { "93.184.216.40" } },
	{ "xn--pple-43d.com", { "93.184.216.41" } }, /* Cyrillic a + "pple" */
	{ "apple.com", { "93.184.216.42" } },
};

static int resolver_calls;

static int fill(const char *text, struct sockaddr_storage *ss)
{
	memset(ss, 0, sizeof *ss);
	if (strchr(text, ':')) {
		ss->ss_family = AF_INET6;
		return inet_pton(AF_INET6, text, &((struct sockaddr_in6 *)ss)->sin6_addr) == 1;
	}
	ss->ss_family = AF_INET;
	return inet_pton(AF_INET, text, &((struct sockaddr_in *)ss)->sin_addr) == 1;
}

static int fake_resolve(const char *host, struct sockaddr_storage *addrs, size_t max, void *ctx)
{
	size_t i, n = 0;

	resolver_calls++;
	if (ctx && strcmp(host, "many.example.com") == 0)
		return (int)max + 1;
	for (i = 0; i < sizeof zone / sizeof zone[0]; i++) {
		if (strcmp(zone[i].name, host) != 0)
			continue;
		while (n < 3 && zone[i].addrs[n]) {
			if (n < max && !fill(zone[i].addrs[n], &addrs[n]))
				return -EINVAL;
			n++;
		}
		return (int)n;
	}
	return -ENOENT;
}

static void test_entries(void)
{
	static const struct {
		const char *entry;
		int ok;
	} cases[] = {
		{ "api.example.com", 1 },
		{ "api.example.com:8443", 1 },
		{ "*.example.com", 1 },
		{ "*.example.com:443", 1 },
		{ "192.0.2.7", 1 },
		{ "127.0.0.1:8080", 1 },
		{ "10.0.0.0/8", 1 },
		{ "10.0.0.0/8:443", 1 },
		{ "[::1]", 1 },
		{ "[::1]:8080", 1 },
		{ "[fd00::]/8", 1 },
		{ "[fd00::]/8:443", 1 },
		{ "API.example.com", 0 },
		{ "api.example.com.", 0 },
		{ "*.com", 0 },
		{ "*example.com", 0 },
		{ "a.*.example.com", 0 },
		/* IDNA: a U-label entry in normal form is its A-label; upper-case
		 * Unicode, full-width letters, invalid A-labels are refused. */
		{ "b\xc3\xbc"
		  "cher.de",
		  1 },
		{ "*.b\xc3\xbc"
		  "cher.de:443",
		  1 },
		{ "B\xc3\x9c"
		  "CHER.de",
		  0 },
		{ "\xef\xbd\x85xample.com", 0 }, /* full-width e */
		{ "xn--zz.example", 0 },
		{ "\xff.example", 0 },
		{ "api.example.com:0", 0 },
		{ "api.example.com:65536", 0 },
		{ "api.example.com:080", 0 },
		{ "api.example.com:", 0 },
		{ "api.example.com:443:443", 0 },
		{ "2130706433", 0 },
		{ "0x7f.1", 0 },
		{ "127.1", 0 },
		{ "[0::1]", 0 },
		{ "::1", 0 },
		{ "10.0.0.1/8", 0 },
		{ "10.0.0.0/33", 0 },
		{ "10.0.0.0/0", 0 },
		{ "10.0.0.0/", 0 },
		{ "10.0.0.0/08", 0 },
		{ "example.com/8", 0 },
		{ "", 0 },
		{ ":443", 0 },
	};
	struct cd_egress_policy *p;
	struct cd_err err;
	size_t i;

	cd_egress_policy_new(&p);
	for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		int r = cd_egress_policy_add(p, cases[i].entry, &err);
		if (cases[i].ok)
			is_int(r, 0, "entry '%s' accepted", cases[i].entry);
		else
			ok(r < 0 && err.msg[0], "entry '%s' refused (%s)", cases[i].entry,
			   r < 0 ? err.msg : "accepted");
	}
	cd_egress_policy_free(p);
	cd_egress_policy_free(NULL);
}

static void test_decide(void)
{
	static const char *const allow[] = {
		"api.example.com",
		"*.example.com:443",
		"example.com:8080",
		"localhost:9000",
		"127.0.0.1:9000",
		"rebind.example.com",
		"private.example.com",
		"meta.example.com",
		"mapped.example.com",
		"nat64.example.com",
		"sixtofour.example.com",
		"teredo.example.com",
		"cgnat.example.com",
		"v6ll.example.com",
		"build.corp.example:443",
		"10.9.0.0/16:443",
		"metadata.google.internal",
		"[::1]:9001",
		"192.0.2.7:443",
		"many.example.com",
		"missing.example.com",
		"b\xc3\xbc"
		"cher.example",
		"apple.com",
	};
	static const struct {
		const char *host;
		unsigned port;
		int allow;
		const char *connect; /* allowed: the address connected to */
		const char *reason;  /* a piece of the reason */
	} cases[] = {
		{ "api.example.com", 443, 1, "93.184.216.34", "allowed by 'api.example.com'" },
		{ "api.example.com", 80, 1, "93.184.216.34", NULL },
		{ "API.EXAMPLE.COM.", 443, 1, "93.184.216.34", NULL },
		{ "api.example.com", 8443, 0, NULL, "port 8443 is not allowed" },
		{ "a.example.com", 443, 1, "93.184.216.35", "'*.example.com:443'" },
		{ "a.example.com", 80, 0, NULL, "port 80" },
		/* Row 24: a wildcard never matches the apex or a lookalike. */
		{ "example.com", 443, 0, NULL, "port 443 is not allowed" },
		{ "example.com", 8080, 1, "93.184.216.36", NULL },
		{ "evilexample.com", 443, 0, NULL, "not in the allowlist" },
		{ "nothere.org", 443, 0, NULL, "not in the allowlist" },
		/* Row 20 and 22: allowed names resolving to non-public addresses. */
		{ "rebind.example.com", 443, 0, NULL, "127.0.0.1 is loopback" },
		{ "private.example.com", 443, 0, NULL, "10.1.2.3 is private" },
		{ "meta.example.com", 80, 0, NULL, "169.254.169.254 is link-local" },
		{ "metadata.google.internal", 80, 0, NULL, "link-local" },
		{ "mapped.example.com", 443, 0, NULL, "[::ffff:127.0.0.1] is loopback" },
		{ "nat64.example.com", 443, 0, NULL, "link-local" },
		{ "sixtofour.example.com", 443, 0, NULL, "private" },
		{ "teredo.example.com", 443, 0, NULL, "loopback" },
		{ "cgnat.example.com", 443, 0, NULL, "cgnat" },
		{ "v6ll.example.com", 443, 0, NULL, "link-local" },
		/* A name is not enough for loopback; the address must be named. */
		{ "localhost", 9000, 0, NULL, "loopback" },
		/* Named explicitly: an address entry, or a range holding it. */
		{ "127.0.0.1", 9000, 1, "127.0.0.1", "allowed by '127.0.0.1:9000'" },
		{ "127.0.0.1", 9001, 0, NULL, "port 9001" },
		{ "127.0.0.2", 9000, 0, NULL, "not in the allowlist" },
		{ "[::1]", 9001, 1, "[::1]", NULL },
		{ "[::ffff:127.0.0.1]", 9000, 0, NULL, "not in the allowlist" },
		{ "build.corp.example", 443, 1, "10.9.8.7", "allowed by 'build.corp.example:443'" },
		{ "build.corp.example", 80, 0, NULL, "port 80" },
		{ "192.0.2.7", 443, 1, "192.0.2.7", NULL },
		{ "0.0.0.0", 443, 0, NULL, "not in the allowlist" },
		/* Odd spellings never reach the resolver. */
		{ "2130706433", 9000, 0, NULL, "not a valid name" },
		{ "0x7f.1", 9000, 0, NULL, "not a valid name" },
		{ "127.1", 9000, 0, NULL, "not a valid name" },
		{ "many.example.com", 443, 0, NULL, "more than" },
		/* IDNA: the U-label entry matches its A-label (what clients
		 * send); a look-alike A-label never matches the ASCII entry. */
		{ "xn--bcher-kva.example", 443, 1, "93.184.216.40",
		  "allowed by 'b\xc3\xbc"
		  "cher.example'" },
		{ "XN--BCHER-KVA.example", 443, 1, "93.184.216.40", NULL },
		{ "xn--pple-43d.com", 443, 0, NULL, "not in the allowlist" },
		{ "apple.com", 443, 1, "93.184.216.42", NULL },
		{ "missing.example.com", 443, 0, NULL, "does not resolve" },
	};
	struct cd_egress_policy *p;
	struct cd_egress_decision d;
	struct cd_err err;
	char text[64];
	size_t i;
	int good = 1;

	cd_egress_policy_new(&p);
	cd_egress_policy_set_resolver(p, fake_resolve, &good);
	for (i = 0; i < sizeof allow / sizeof allow[0]; i++)
		if (cd_egress_policy_add(p, allow[i], &err) < 0)
			diag("entry %s: %s", allow[i], err.msg);

	for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		int r, calls = resolver_calls;
		memset(&d, 0xa5, sizeof d);
		r = cd_egress_decide(p, cases[i].host, (uint16_t)cases[i].port, &d);
		is_int(r, 0, "%s:%u decided", cases[i].host, cases[i].port);
		is_int(d.allow, cases[i].allow, "%s:%u %s (%s)", cases[i].host, cases[i].port,
		       cases[i].allow ? "allowed" : "denied", d.reason);
		ok(resolver_calls - calls <= 1, "  resolved at most once");
		if (cases[i].reason)
			ok(strstr(d.reason, cases[i].reason) != NULL, "  reason has '%s'",
			   cases[i].reason);
		if (cases[i].allow && d.allow) {
			cd_addr_format(&d.connect, text, sizeof text);
			is_str(text, cases[i].connect, "  connects to the checked address");
			is_int(ntohs(d.connect.ss_family == AF_INET
			                     ? ((struct sockaddr_in *)&d.connect)->sin_port
			                     : ((struct sockaddr_in6 *)&d.connect)->sin6_port),
			       cases[i].port, "  with the port");
		}
	}

	/* Literals never reach the resolver. */
	{
		int calls = resolver_calls;
		cd_egress_decide(p, "127.0.0.1", 9000, &d);
		cd_egress_decide(p, "[::1]", 9001, &d);
		is_int(resolver_calls, calls, "literals are not resolved");
	}
	/* Every address of a name is returned and was checked. */
	cd_egress_decide(p, "a.example.com", 443, &d);
	is_int(d.naddrs, 2, "both addresses of a name are checked");

	is_int(cd_egress_decide(p, "", 443, &d), -EINVAL, "empty host: no decision");
	is_int(cd_egress_decide(p, "a.example.com", 0, &d), -EINVAL, "port 0: no decision");

	/* An empty allowlist refuses everything. */
	{
		struct cd_egress_policy *empty;
		cd_egress_policy_new(&empty);
		cd_egress_policy_set_resolver(empty, fake_resolve, NULL);
		cd_egress_decide(empty, "api.example.com", 443, &d);
		is_int(d.allow, 0, "an empty allowlist refuses");
		cd_egress_policy_free(empty);
	}
	cd_egress_policy_free(p);
}

static void test_cap(void)
{
	struct cd_egress_policy *p;
	struct cd_err err;
	int i, r = 0;

	cd_egress_policy_new(&p);
	for (i = 0; i < CD_EGRESS_RULES_MAX && r == 0; i++)
		r = cd_egress_policy_add(p, "api.example.com", &err);
	is_int(r, 0, "%d entries accepted", CD_EGRESS_RULES_MAX);
	is_int(cd_egress_policy_add(p, "api.example.com", &err), -CD_E_LIMIT,
	       "one more is refused");
	cd_egress_policy_free(p);
}

int main(void)
{
	tap_start(30);
	test_entries();
	test_decide();
	test_cap();
	return tap_done();
}
