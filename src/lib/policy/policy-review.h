/* policy-review.h — re-certification of a grant matrix: `cordon policy
 * review`.  Which grants are past their review date, expired or expiring
 * soon, never used or unused for a while according to the audit log.
 *
 * Trust boundary: the policy was loaded strictly (policy.h).  The audit log
 * is cordon's own, opened read-only by the caller; a use counts only when a
 * "decision" record allowed (or held for approval) a request of the grant's
 * own agent and tool and names the grant among its grant_ids, so a grant id
 * reused by another policy for another agent is not taken as use.  A log
 * that cannot be read is an error, never "all unused" nor "all used".
 * Nothing here prints. */
#ifndef CD_POLICY_REVIEW_H
#define CD_POLICY_REVIEW_H

#include "audit/audit.h"
#include "util/err.h"
#include "policy.h"

#include <stddef.h>
#include <stdint.h>

/* What a grant needs attention for (bits of cd_review_item.flags). */
enum {
	CD_REVIEW_PAST_REVIEW = 1 << 0, /* review_by is at or before `at` */
	CD_REVIEW_EXPIRED = 1 << 1,     /* expires is at or before `at`: already absent */
	CD_REVIEW_EXPIRING = 1 << 2,    /* expires within `soon` seconds of `at` */
	CD_REVIEW_NEVER_USED = 1 << 3,  /* no use in the log (with a log) */
	CD_REVIEW_UNUSED = 1 << 4,      /* last use more than `unused` seconds before `at` */
};

struct cd_review_opts {
	int64_t at;           /* the time of the review, seconds since the epoch (UTC) */
	int64_t soon;         /* seconds: "expiring soon" window; 0: not checked */
	int64_t unused;       /* seconds: "unused for"; 0: only "never used" */
	struct cd_audit *log; /* open for reading, or NULL: no usage checks */
};

/* One grant as the review saw it.  Strings point into the policy. */
struct cd_review_item {
	const char *id, *agent, *tool, *owner;
	int64_t review_by, expires;
	int64_t last_used; /* seconds since the epoch; 0: never (or no log) */
	uint64_t uses;     /* decision records naming it, up to `at` */
	unsigned flags;    /* CD_REVIEW_* */
};

/* "past-review", "expired", "expiring", "never-used", "unused" for one bit;
 * "?" otherwise. */
const char *cd_review_flag_name(unsigned flag);

/* Review every grant of p (sorted by id): fn is called once per grant,
 * flagged or not.  *ret_attention (may be NULL) counts the grants with any
 * flag.  0; -EINVAL for NULL arguments; -ENOMEM; a negative code with a
 * message in err when the log cannot be read. */
typedef void (*cd_review_fn)(const struct cd_review_item *item, void *ctx);
int cd_policy_review(const struct cd_policy *p, const struct cd_review_opts *o, cd_review_fn fn,
                     void *ctx, size_t *ret_attention, struct cd_err *err);

/* Grants that can never work, for `policy lint` (warnings: the policy is
 * still valid).  fn gets the position in the file (1-based) and one line:
 *   - a grant with the delete action (or create, update) whose profile
 *     has no writable path (no rw, no workspace: write): its command can
 *     change nothing on the host;
 *   - a grant already expired at `at`;
 *   - every grant expired at `at` (once, at the first grant): the policy
 *     allows nothing.
 * Returns the number of warnings. */
typedef void (*cd_policy_warn_fn)(unsigned line, unsigned col, const char *msg, void *ctx);
size_t cd_policy_warnings(const struct cd_policy *p, int64_t at, cd_policy_warn_fn fn, void *ctx);

#endif
