/* egress-policy.h — the egress allowlist and the decision for one
 * destination (THREATS rows 20, 22, 24).
 *
 * An allowlist entry is HOST[:PORT], HOST being one of
 *   - a normalized host name, exact ("api.example.com");
 *   - "*." and a normalized name of two labels or more ("*.example.com"),
 *     which matches names below it and never the apex itself;
 *   - a canonical address ("192.0.2.7", "[2001:db8::7]");
 *   - a range "ADDR/BITS" ("10.0.0.0/8", "[fd00::]/8"), host bits zero.
 * Without a port an entry allows 80 and 443.  An entry that is not
 * normalized is an error, not a guess.
 *
 * The decision for (host, port): the host must match an entry for that
 * port (a name against name entries with cd_host_match(), an address
 * against address entries).  A name is then resolved here, once, and
 * every address it resolves to is classified (egress-addr.h): if any one
 * is not public and no address entry for that port holds it, the request
 * is refused.  The address the caller must connect to is returned with
 * the decision: it is the one that was checked, so a second lookup (DNS
 * rebinding) never happens.
 *
 * Trust boundary: entries come from the operator (argv, policy); hosts
 * come from the agent through egress-http.c, already normalized; resolver
 * answers are untrusted and checked address by address. */
#ifndef CD_EGRESS_POLICY_H
#define CD_EGRESS_POLICY_H

#include "util/bounds.h"
#include "util/err.h"
#include "policy/match-host.h"

#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

/* Resolve `host` (a normalized name, never an IP literal) to TCP
 * addresses: write at most `max` of them to addrs (ports ignored) and
 * return how many there were in all (which may exceed max), or a negative
 * code when the name does not resolve. */
typedef int (*cd_egress_resolve_fn)(const char *host, struct sockaddr_storage *addrs, size_t max,
                                    void *ctx);

/* The default resolver: getaddrinfo(host, NULL, SOCK_STREAM).  It blocks. */
int cd_egress_resolve_system(const char *host, struct sockaddr_storage *addrs, size_t max,
                             void *ctx);

struct cd_egress_policy; /* the allowlist */

/* A new, empty allowlist (everything is refused) using the system
 * resolver.  Free with cd_egress_policy_free (NULL is fine). */
int cd_egress_policy_new(struct cd_egress_policy **ret);
void cd_egress_policy_free(struct cd_egress_policy *p);

/* Add one entry (NUL-terminated, as above).  -EINVAL with a one-line
 * reason for an entry that is not valid or not normalized, -CD_E_LIMIT
 * past CD_EGRESS_RULES_MAX. */
int cd_egress_policy_add(struct cd_egress_policy *p, const char *entry, struct cd_err *err);

/* Replace the resolver (tests inject one; NULL restores the system's). */
void cd_egress_policy_set_resolver(struct cd_egress_policy *p, cd_egress_resolve_fn fn, void *ctx);

struct cd_egress_decision {
	int allow;
	char reason[160];           /* one line, never empty */
	char rule[CD_HOST_MAX + 8]; /* the entry that matched, or "" */
	size_t naddrs;              /* addresses resolved (and checked) */
	struct sockaddr_storage addrs[CD_EGRESS_ADDRS_MAX];
	struct sockaddr_storage connect; /* allow: the vetted address, port set */
};

/* Decide (host, port).  `host` is a host as cd_http_parse_head() returns
 * it (normalized name, dotted quad or "[IPv6]").  Returns 0 with *ret
 * filled (allowed or not), or -EINVAL / -ENOMEM when no decision could be
 * made (the caller refuses).  Calls the resolver at most once. */
int cd_egress_decide(const struct cd_egress_policy *p, const char *host, uint16_t port,
                     struct cd_egress_decision *ret);

/* Report-only mode: for a refused decision (d->allow == 0), find the
 * address enforcement would not have let the caller reach: the literal,
 * or the name resolved once with the policy's resolver.  Fills addrs,
 * naddrs and connect (port set) and keeps allow == 0 and the reason.
 * Returns 0, or a negative code when there is no address to use (the
 * caller refuses after all). */
int cd_egress_report_only(const struct cd_egress_policy *p, const char *host, uint16_t port,
                          struct cd_egress_decision *d);

#endif
