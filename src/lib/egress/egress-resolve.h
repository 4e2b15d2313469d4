/* egress-resolve.h — the egress proxy's decisions off its event loop.
 *
 * A decision resolves the name it allows (egress-policy.h), and a lookup
 * can take seconds (a slow or hostile authoritative server, a resolver
 * timing out).  Made on the proxy's one event loop, one slow answer
 * stalled every other client.  Here a small pool of threads makes the
 * whole decision — allowlist, the one lookup, the address classes — and
 * hands it back through an eventfd the loop polls, so the loop only ever
 * waits in epoll.
 *
 * Threads: the pool's threads call cd_egress_decide() (and
 * cd_egress_report_only()) on a policy nobody changes while the pool
 * runs, and the policy's resolver (getaddrinfo by default: thread-safe).
 * They touch nothing else: a job's fields are theirs from submit until
 * the loop takes it back with cd_egress_resolver_done().  The loop alone
 * reads and writes `owner`.
 *
 * Trust boundary: the host comes from an agent, parsed and normalized by
 * egress-http.c; the answer comes from the network and is classified by
 * the decision as before.  Nothing here parses either. */
#ifndef CD_EGRESS_RESOLVE_H
#define CD_EGRESS_RESOLVE_H

#include "egress-policy.h"
#include "policy/match-host.h"

#include <stdint.h>

struct cd_egress_resolver;

/* One decision to make.  The caller fills host, port and report_only,
 * sets owner to what the answer is for, and keeps the job allocated until
 * cd_egress_resolver_done() returns it. */
struct cd_egress_job {
	char host[CD_HOST_MAX];
	uint16_t port;
	int report_only; /* refused: find the address enforcement would not reach */
	char client[64]; /* who asked (an address): per_client jobs of one client at once */
	void *owner;     /* the loop's; NULL: abandoned, free it when it comes back */
	/* the answer */
	int rc;        /* cd_egress_decide()'s: 0, or negative (no decision) */
	int report_ok; /* report_only and refused: cd_egress_report_only() found an address */
	struct cd_egress_decision d;
	struct cd_egress_job *next; /* the pool's */
};

/* Start `threads` threads (1..64) deciding against `policy`, which must
 * outlive the pool.  At most `per_client` (1..threads) of them work for
 * one client at a time, so one client's slow lookups leave the others
 * threads; its other jobs wait their turn.  0 and a pool, or -errno. */
int cd_egress_resolver_new(const struct cd_egress_policy *policy, unsigned threads,
                           unsigned per_client, struct cd_egress_resolver **ret);

/* Readable (an eventfd, non-blocking, close-on-exec) while answers wait
 * to be taken.  Owned by the pool. */
int cd_egress_resolver_fd(const struct cd_egress_resolver *r);

/* Queue a job; jobs are started oldest first among those whose client is
 * under its share, as threads free up. */
void cd_egress_resolver_submit(struct cd_egress_resolver *r, struct cd_egress_job *job);

/* Take one answered job back, or NULL when none waits (the eventfd is
 * drained when the last one is taken). */
struct cd_egress_job *cd_egress_resolver_done(struct cd_egress_resolver *r);

/* Stop the threads (a lookup in progress is waited for), hand every job
 * not yet answered back as answered with rc -ECANCELED, and free the
 * pool after the caller has taken them: call cd_egress_resolver_done()
 * until NULL before cd_egress_resolver_free().  NULL is fine. */
void cd_egress_resolver_stop(struct cd_egress_resolver *r);
void cd_egress_resolver_free(struct cd_egress_resolver *r);

#endif
