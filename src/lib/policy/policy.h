/* policy.h — the grant matrix: load a policy file strictly, decide
 * requests against it, explain a decision, and test a policy against its
 * own examples and generated boundary cases.
 *
 * Trust boundary: the policy file is operator input but may be broken or
 * hostile (it is parsed with caps on size, depth, nodes and grants; aliases,
 * anchors and tags are refused).  Requests come from agents through the
 * front ends and are hostile: every attribute is canonicalized or compared
 * byte for byte, and anything unclear is a deny.  Nothing here prints,
 * exits or reads the environment. */
#ifndef CD_POLICY_H
#define CD_POLICY_H

#include "util/err.h"
#include "mask/mask.h"
#include "store/store-rows.h"

#include <stddef.h>
#include <stdint.h>

/* Caps on a policy file (in bytes and in parsed things). */
#define CD_POLICY_MAX_BYTES  (8 * 1024 * 1024)
#define CD_POLICY_MAX_DEPTH  32
#define CD_POLICY_MAX_NODES  (2 * 1000 * 1000)
#define CD_POLICY_MAX_GRANTS 100000 /* grants + forbid rules */
#define CD_POLICY_MAX_KEYS   1024   /* keys in one mapping */
#define CD_POLICY_MAX_SCALAR 4096   /* bytes in one scalar */
#define CD_POLICY_MAX_LIST   4096   /* items in one matcher list */

/* Caps on one request. */
#define CD_REQ_MAX_PATHS 256
#define CD_REQ_MAX_ARGV  4096
#define CD_REQ_MAX_ARGS  256

/* The fixed action classes.  Keep the order: it is the order of bits in a
 * rule's action mask and of the names in messages. */
enum cd_action {
	CD_ACTION_READ,
	CD_ACTION_CREATE,
	CD_ACTION_UPDATE,
	CD_ACTION_DELETE,
	CD_ACTION_EXECUTE,
	CD_ACTION_NETWORK,
	CD_ACTION_COUNT
};

/* "read" ... "network"; "?" for an out-of-range value. */
const char *cd_action_name(enum cd_action a);
/* Parse an action class name (exact, lower case); 0 or -EINVAL. */
int cd_action_parse(const char *s, enum cd_action *ret);

/* Parse a time as policies and --at write it, in seconds since the epoch:
 * what cd_time_parse reads ("YYYY-MM-DD", "YYYY-MM-DDTHH:MM:SSZ" or with an
 * offset "+01:00", "@SECONDS"; a fraction is dropped).  0 or -EINVAL. */
int cd_policy_parse_time(const char *s, size_t len, int64_t *ret);

/* One named argument of a request ("branch" = "main"). */
struct cd_req_arg {
	const char *name;
	const char *value;
};

/* A request: who, what, when.  Everything is borrowed from the caller for
 * the duration of the call. */
struct cd_request {
	const char *agent; /* required */
	const char *task;  /* NULL when the call is not tied to a task */
	const char *tool;  /* required */
	enum cd_action action;
	const char *const *paths; /* absolute; canonicalized before matching */
	size_t npaths;
	const char *host;        /* NULL when none; normalized before matching */
	long port;               /* -1 when none, else 0..65535 */
	const char *const *argv; /* command tools: the command line */
	size_t argc;
	const struct cd_req_arg *args; /* named arguments */
	size_t nargs;
	const char *const *fields; /* record fields the call reads or writes */
	size_t nfields;
	int64_t now; /* seconds since the epoch, UTC: the time of the decision */
};

/* Initialize a request with no attributes (port -1, everything NULL/0). */
void cd_request_init(struct cd_request *req);

enum cd_verdict {
	CD_VERDICT_DENY = 0,
	CD_VERDICT_ALLOW,
	CD_VERDICT_NEEDS_APPROVAL,
};

/* "deny", "allow", "needs-approval". */
const char *cd_verdict_name(enum cd_verdict v);

#define CD_DECISION_MAX_IDS         32
#define CD_DECISION_MAX_FIELD_LISTS 8
#define CD_DECISION_MAX_TEMP_IDS    16

/* The outcome of a decision.  The strings point into the policy and live as
 * long as it does. */
struct cd_decision {
	enum cd_verdict verdict;
	/* The ids that decided, sorted: the forbid rules that matched when
	 * `forbidden`, else every grant that matched (none for a default
	 * deny). */
	const char *ids[CD_DECISION_MAX_IDS];
	size_t nids;          /* entries in ids */
	size_t nids_total;    /* all that matched; > nids when ids was truncated */
	int forbidden;        /* 1 when a forbid rule decided */
	const char *profile;  /* allow/needs-approval: the grants' profile, or NULL */
	const char *approval; /* needs-approval: "human" or "policy:NAME" */
	char reason[256];     /* one line, no control bytes from the request */
	/* Data minimization required by the grants behind an allow or a
	 * needs-approval (all of them, so the strictest wins): `mask` merges
	 * their mask: actions (stricter per type); `field_lists` holds the
	 * fields: list of each that has one, and a result keeps a field only
	 * when every list admits it (cd_mask_fields).  `minimize_overflow` is
	 * set when more grants name fields than there are slots: the front end
	 * must then withhold results rather than scope them loosely.  A
	 * delegated grant adds what its parent's decision for the same request
	 * requires (every level of a chain), and a break-glass grant what the
	 * agent's written grants on the tool require (cd_policy_add_temp). */
	struct cd_mask_rules mask;
	const char *const *field_lists[CD_DECISION_MAX_FIELD_LISTS];
	size_t field_counts[CD_DECISION_MAX_FIELD_LISTS];
	size_t nfield_lists;
	int minimize_overflow;
	/* The temporary grants (break-glass, delegated) the verdict rests on:
	 * those among the deciding grants and, for a delegated one, those
	 * behind its parent's decision, all the way up the chain.  A front
	 * end checks each is still in force in the state database before
	 * acting (cd_temp_use_active).  `temp_overflow`: more than fit — the
	 * front end must deny. */
	const char *temp_ids[CD_DECISION_MAX_TEMP_IDS];
	size_t ntemp_ids;
	int temp_overflow;
};

struct cd_policy;

/* Load a policy from a file (at most CD_POLICY_MAX_BYTES) or from memory;
 * `name` is used in messages.  Every error is "NAME:LINE:COL: message
 * (hint)" in err and -CD_E_PARSE (malformed or inconsistent file, failing
 * inline example), -CD_E_LIMIT (a cap), -ENOMEM or -errno (reading).  On
 * success *ret is a new policy the caller frees with cd_policy_free(). */
int cd_policy_load_file(const char *path, struct cd_policy **ret, struct cd_err *err);
int cd_policy_load_buf(const char *name, const char *data, size_t len, struct cd_policy **ret,
                       struct cd_err *err);
void cd_policy_free(struct cd_policy *p);

/* 1 when some grant (in the file or added since) masks results: front
 * ends then need a masker (and the deployment's key). */
int cd_policy_masks(const struct cd_policy *p);
/* Every grant's mask: merged, the strictest action per type winning. */
void cd_policy_mask_union(const struct cd_policy *p, struct cd_mask_rules *ret);

/* SHA-256 of the loaded bytes, as 64 lower-case hex digits. */
const char *cd_policy_sha256(const struct cd_policy *p);

/* Counts for messages: agents, tools, grants, forbid rules, examples. */
struct cd_policy_stats {
	size_t agents, tasks, tools, profiles, grants, forbids, examples;
};
void cd_policy_stats(const struct cd_policy *p, struct cd_policy_stats *ret);

/* Decide one request.  Default deny; a matching forbid rule beats any
 * grant; the order of rules never matters; a grant whose `expires` is at or
 * before req->now is absent.  A request that cannot be evaluated (a path
 * escaping "/", a host that does not normalize, a NULL agent ...) is a
 * deny with its reason, returning 0.  Returns a negative code only for a
 * NULL policy or ret; *ret (when not NULL) is always written, and is a deny
 * whenever the return value is negative. */
int cd_policy_decide(const struct cd_policy *p, const struct cd_request *req,
                     struct cd_decision *ret, struct cd_err *err);

/* One rule considered by cd_policy_explain(). */
struct cd_explain_step {
	const char *id;
	int forbid;      /* 1 for a forbid rule */
	int matched;     /* 1 when the rule applies to the request */
	const char *why; /* what matched, or the first thing that did not */
};
typedef void (*cd_explain_fn)(const struct cd_explain_step *step, void *ctx);

/* Like cd_policy_decide(), calling fn for every grant and forbid rule of
 * the policy (sorted by id), saying whether it matched and why. */
int cd_policy_explain(const struct cd_policy *p, const struct cd_request *req, cd_explain_fn fn,
                      void *ctx, struct cd_decision *ret, struct cd_err *err);

/* Run the inline examples and the generated boundary cases of every grant:
 * fn is called once per case with pass (1/0), a one-line description and,
 * for a failure, the ids of the grants that leak.  *ret_failed is the number
 * of failures.  0, or -ENOMEM. */
typedef void (*cd_policy_test_fn)(int pass, const char *desc, void *ctx);
int cd_policy_test(const struct cd_policy *p, cd_policy_test_fn fn, void *ctx, size_t *ret_failed);

/* ---- temporary grants -------------------------------------------- */

/* enum cd_temp_kind (break-glass, delegated): store-rows.h. */

/* The longest a break-glass grant may live: the policy's
 * `break_glass: {max_ttl: ...}`, 4 hours when absent (seconds). */
#define CD_BREAK_GLASS_DEFAULT_TTL (4 * 3600)
#define CD_BREAK_GLASS_CEILING_TTL (7 * 24 * 3600) /* no policy may set more */
#define CD_DELEGATION_MAX_DEPTH    8               /* A/b/c/...: levels below a declared agent */
int64_t cd_policy_break_glass_max_ttl(const struct cd_policy *p);

/* Check a temporary grant against the policy and add it for this process's
 * decisions.  `grant_json` is a grant mapping (the keys of a written grant,
 * no examples) whose id is `id`.  A break-glass grant names a declared
 * agent and lives at most until created + the policy's max TTL; a delegated
 * grant names a sub-agent "PARENT/NAME" of `parent` (not itself declared),
 * and every decision it takes part in also asks PARENT's grants for the
 * same request: the stricter verdict wins, so a parent's forbid rules,
 * approvals, expiry and removal all reach the child, and so does the data
 * minimization of the parent's deciding grants (mask, fields and
 * require_task: a child never sees more of a result than its parent).
 * Forbid rules on an agent apply to all its sub-agents.  A break-glass
 * grant carries the data minimization of every grant the file gives the
 * same agent on the same tool: their masks (strictest wins), require_task
 * when any has it, and — when each of them scopes fields — only the fields
 * one of them keeps.  0, -ENOMEM, or -CD_E_PARSE with the loader's message
 * (nothing added). */
int cd_policy_add_temp(struct cd_policy *p, enum cd_temp_kind kind, const char *id,
                       const char *parent, const char *grant_json, int64_t created,
                       struct cd_err *err);

/* Take temporary grant `id` out of `p` (revoked or ended since it was
 * added): later decisions do without it.  0, or -ENOENT. */
int cd_policy_temp_drop(struct cd_policy *p, const char *id);

/* The kind of the temporary grant `id` added to p, or 0 when `id` is not
 * one. */
enum cd_temp_kind cd_policy_temp_kind(const struct cd_policy *p, const char *id);
/* The first instant the temporary grant `id` is absent, as the policy
 * holds it (a break-glass grant capped by the policy's max_ttl), or 0
 * when `id` is not one. */
int64_t cd_policy_temp_expires(const struct cd_policy *p, const char *id);

/* Delegation: may `parent` hand the grant `grant_json` (agent PARENT/NAME)
 * down until `expires`?  Yes when, for every action class it names, one
 * grant PARENT holds (in the file or delegated to it, active at `now`) for
 * the same tool and task covers its whole scope and lives past `expires`.
 * On success *ret_approval is the strictest approval those grants require
 * (NULL, "human" or "policy:NAME") and *ret_profile their profile (NULL for
 * none), which the child must carry: a delegation never changes the
 * sandbox.  Covering grants with different profiles are refused.  -CD_E_DENIED
 * with the first uncovered part in err, or -CD_E_PARSE for a bad grant. */
int cd_policy_delegation_check(struct cd_policy *p, const char *parent, const char *id,
                               const char *grant_json, int64_t now, int64_t expires,
                               const char **ret_approval, const char **ret_profile,
                               struct cd_err *err);

/* The declared agents' ids, sorted; returns how many there are (at most
 * max are written). */
size_t cd_policy_agents(const struct cd_policy *p, const char **out, size_t max);

/* An agent's limits behind `cordon mcp --listen` (its mcp_front: entry):
 * each 0 when the policy sets none (the front's flags then apply). */
struct cd_agent_limits {
	unsigned max_sessions;         /* sessions at once */
	uint64_t max_request;          /* bytes of one POST body */
	unsigned max_calls_per_minute; /* tools/call messages, all sessions */
};
#define CD_AGENT_MAX_SESSIONS 256
#define CD_AGENT_MAX_REQUEST  (16u << 20)
#define CD_AGENT_MAX_CPM      100000

/* The limits of `agent` (a sub-agent PARENT/NAME not declared itself: its
 * declared ancestor's) into *ret: 1 when the policy sets some, else 0
 * (all zero). */
int cd_policy_agent_limits(const struct cd_policy *p, const char *agent,
                           struct cd_agent_limits *ret);

/* ---- approvers ---------------------------------------------------- */

/* May `person` approve a request of `agent`?  1, or 0 with the reason in
 * why: the policy's approvers.people lists who may (anyone but an agent
 * when it lists nobody); an agent of the policy — above all the requesting
 * agent or one it descends from — never approves. */
int cd_policy_approver_person(const struct cd_policy *p, const char *person, const char *agent,
                              char *why, size_t wn);

/* Does the approver rule `rule` (approval: policy:RULE) approve the
 * request?  Each condition it names must hold: its scope (as a grant's);
 * `operands` — every argv token after the scope's argv prefix that is not
 * an option, resolved against `cwd` lexically, matches one of its globs,
 * at most `max` of them; `max_paths`; `below` — each named argument is a
 * plain decimal number strictly below its limit.  1, or 0 with why. */
int cd_policy_approver_check(const struct cd_policy *p, const char *rule,
                             const struct cd_request *req, const char *cwd, char *why, size_t wn);

/* What approver rule `rule` requires, for people, appended to b ("the
 * command starts with 'rm -f'; every operand within /src/app/...; at most 10
 * operands; amount below 100").  0, -ENOENT (no such rule) or -CD_E_LIMIT.
 * The policy's text is tame (loaded strictly) but b still goes through
 * the caller's escaping. */
struct cd_buf;
int cd_policy_approver_describe(const struct cd_policy *p, const char *rule, struct cd_buf *b);

/* Is name an agent the policy declares?  1 or 0. */
int cd_policy_is_agent(const struct cd_policy *p, const char *name);

/* approvers.keys: person's Ed25519 public key into pk: 1, or 0 when the
 * policy pins none for them. */
int cd_policy_approver_key(const struct cd_policy *p, const char *person, unsigned char pk[32]);

/* approvers.consoles: the i-th console key into pk: 1, or 0 past the
 * last.  A console key signs decisions for any person the console
 * authenticated (the console host is then trusted to do that). */
int cd_policy_console_key(const struct cd_policy *p, size_t i, unsigned char pk[32]);

/* approvers.people: the i-th listed person, or NULL past the last. */
const char *cd_policy_approver_listed(const struct cd_policy *p, size_t i);

/* "ed25519:BASE64" (a 32-byte key, standard base64) -> pk: 0 or -EINVAL. */
int cd_policy_parse_pubkey(const char *s, unsigned char pk[32]);

/* The settings of a named profile, as validated key/value lists (a scalar
 * setting has one value).  The sandbox interprets them. */
struct cd_profile_setting {
	const char *key;
	const char *const *values;
	size_t nvalues;
};
/* 0 and the settings, or -ENOENT for an unknown profile. */
int cd_policy_profile(const struct cd_policy *p, const char *name,
                      const struct cd_profile_setting **ret_settings, size_t *ret_n);

#endif
