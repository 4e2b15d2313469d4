/* policy-int.h — the loaded grant matrix, shared by policy-load.c,
 * policy-decide.c and policy-test.c.  Not part of the library's interface:
 * front ends use policy.h.
 *
 * Everything a policy holds is allocated from its arena and freed at once
 * by cd_policy_free(). */
#ifndef CD_POLICY_INT_H
#define CD_POLICY_INT_H

#include "util/match.h"
#include "policy.h"

#include <stdint.h>

#define CD_TIME_NEVER INT64_MAX

struct cd_arena_block;
struct cd_ynode;

struct cd_arena {
	struct cd_arena_block *head;
	size_t total, cap;
};

void *cd_arena_alloc(struct cd_arena *a, size_t n);
char *cd_arena_strndup(struct cd_arena *a, const char *s, size_t n);
void cd_arena_release(struct cd_arena *a);

struct cd_mark {
	unsigned line, col; /* 1-based */
};

/* A request owned by the policy: an inline example. */
struct cd_example {
	struct cd_mark mark;
	int expect_allow;         /* 1: allow (or needs-approval); 0: deny */
	const struct cd_rule *of; /* the grant it belongs to, or NULL */
	int has_at;               /* else expiry is not considered */
	struct cd_request req;
};

/* A grant or a forbid rule. */
struct cd_rule {
	const char *id;
	struct cd_mark mark;
	int forbid;
	const char *agent; /* forbid: may be "*" */
	const char *task;  /* NULL: any task (or none) */
	const char *tool;  /* forbid: may be "*" */
	unsigned actions;  /* bit (1 << enum cd_action) */
	int has_scope;
	const char **paths;
	size_t npaths;
	const char **hosts;
	size_t nhosts;
	struct cd_port_range *ports;
	size_t nports;
	const char **argv;
	size_t nargv;
	struct cd_arg_rule *args;
	size_t nargs;
	const char **fields;
	size_t nfields;
	const char *profile;  /* NULL: none */
	const char *approval; /* NULL: none; "human"; "policy:NAME" */
	/* Data minimization: what the agent sees of results. */
	struct cd_mask_rules mask; /* mask: the action per data type */
	const char **keep_fields;  /* fields: dotted paths kept in JSON results */
	size_t nkeep_fields;       /* 0: no field scoping */
	int require_task;          /* require_task: calls without a task do not match */
	/* Break-glass: the fields the agent's written grants on the tool keep
	 * between them (cd_policy_add_temp), a second list a result must
	 * pass; 0 when one of them keeps every field or there are none. */
	const char **inherited_fields;
	size_t ninherited_fields;
	const char *owner, *justification, *reason;
	int64_t review_by, expires; /* CD_TIME_NEVER when absent (forbid) */
	struct cd_mark expires_mark;
	enum cd_temp_kind temp; /* 0: written in the file */
	const char *parent;     /* delegated: the delegating agent */
};

/* An approver rule (approvers.rules): `approval: policy:ID` grants are
 * approved when the request fits it. */
struct cd_approver_rule {
	const char *id;
	struct cd_mark mark;
	struct cd_rule scope;       /* has_scope 0: no scope condition */
	const char **operand_globs; /* command tools: argv operands must match */
	size_t noperand_globs;
	long max_operands;         /* -1: no cap */
	long max_paths;            /* -1: no cap */
	const char **below_names;  /* named arguments that must be numbers below */
	const char **below_values; /* ... these decimal limits */
	size_t nbelow;
};

/* A public key of approvers.keys (person set) or approvers.consoles. */
struct cd_approver_pk {
	const char *person; /* NULL for a console */
	const char *text;   /* "ed25519:BASE64" as written */
	unsigned char pk[32];
};

struct cd_named {
	const char *id;
	const char *owner;
	const char *description;
	const char *kind; /* tools: command | mcp | http */
	struct cd_mark mark;
	/* tools: the inventory, in file order (for `policy diff`): each
	 * operation with its action class, each argument with its kind. */
	const char **op_names;
	unsigned *op_actions; /* enum cd_action */
	size_t nops;
	const char **arg_names, **arg_kinds;
	size_t nargkinds;
	/* tools of kind mcp: definitions pinned in the file (pins:). */
	const char **pin_names, **pin_shas;
	size_t npins;
	/* tools of kind mcp: a remote server (url:, checked by
	 * cd_tool_url_parse) and the secret whose value is the Authorization
	 * header sent to it (secret:, a name; NULL: none). */
	const char *url, *secret;
	/* tools of kind mcp, launched: behind `cordon mcp --listen` the
	 * sessions of one agent may share one instance (shared: true). */
	int shared;
	/* agents: limits of their sessions behind `cordon mcp --listen`
	 * (mcp_front:; 0: not set, the front's flags apply). */
	struct cd_agent_limits limits;
};

struct cd_profile {
	const char *name;
	struct cd_profile_setting *settings;
	size_t nsettings;
};

/* One path glob of a grant, keyed by the directory its literal part ends
 * in (the directory /data/g1 for a glob of everything below it, or of the
 * files x*.txt in it): a path can only match the glob when that directory
 * is the path or above it. */
struct cd_path_key {
	const char *dir;
	size_t len;
	const struct cd_rule *rule;
};

/* A run of rules with the same (agent, tool), sorted by id. */
struct cd_bucket {
	const char *agent, *tool;
	const struct cd_rule **rules;
	size_t n;
	/* Large grant buckets: their path globs sorted by directory, and the
	 * grants without a path scope.  NULL/0 for small buckets (scanned). */
	struct cd_path_key *pkeys;
	size_t npkeys;
	const struct cd_rule **nopath;
	size_t nnopath;
};

struct cd_index {
	struct cd_bucket *slots; /* open addressing; agent NULL = empty */
	size_t nslots;
};

struct cd_policy {
	struct cd_arena arena;
	char sha256[65];
	struct cd_named *agents, *tasks, *tools;
	size_t nagents, ntasks, ntools;
	struct cd_profile *profiles;
	size_t nprofiles;
	struct cd_rule *rules; /* grants, then forbid rules */
	size_t ngrants, nforbids;
	const struct cd_rule **by_id; /* every rule, sorted by id */
	struct cd_example *examples;  /* per grant and per file */
	size_t nexamples;
	struct cd_index grants_ix, forbids_ix;
	/* Every grant's mask (written and temporary) merged, strictest
	 * wins: what a refused call's records are masked with.  Kept by
	 * cd_policy_mask_union_update whenever the grants change. */
	struct cd_mask_rules mask_union;
	int64_t break_glass_max_ttl; /* seconds */
	/* approvers: the people who may approve, and the approver rules. */
	const char **people;
	size_t npeople;
	struct cd_approver_rule *arules;
	size_t narules;
	/* approvers.keys: each person's Ed25519 public key; approvers.consoles:
	 * keys that may sign for any person (a console that authenticated
	 * them). */
	struct cd_approver_pk *akeys;
	size_t nakeys;
	struct cd_approver_pk *consoles;
	size_t nconsoles;
	/* The file's tools node, kept for checking temporary grants later. */
	const struct cd_ynode *tools_node;
	/* Temporary grants added after loading (cd_policy_add_temp). */
	const struct cd_rule **temps;
	size_t ntemps, temps_cap;
};

/* policy-load.c: check a temporary grant and allocate it in p's arena
 * (not added). */
int cd_policy_parse_temp(struct cd_policy *p, enum cd_temp_kind kind, const char *id,
                         const char *parent, const char *grant_json, struct cd_rule **ret,
                         struct cd_err *err);
/* A rule by id (file rules, then temporary ones), or NULL. */
const struct cd_rule *cd_policy_rule(const struct cd_policy *p, const char *id);

/* policy-load.c: 1 for a plain decimal number ("100", "12.50"). */
int cd_decimal_valid(const char *s);

/* policy-decide.c: 1 when g's scope matchers (grant semantics) admit the
 * request, else 0 with why; a request that cannot be canonicalized is 0. */
int cd_rule_scope_admits(const struct cd_rule *g, const struct cd_request *r, char *why, size_t wn);

/* policy-diff.c: 1 when o's scope matchers admit every request in's do. */
int cd_rule_scope_covers(const struct cd_rule *o, const struct cd_rule *in);

/* policy-decide.c */
/* policy-decide.c: recompute p->mask_union from the grants. */
void cd_policy_mask_union_update(struct cd_policy *p);
int cd_policy_index_build(struct cd_policy *p);
/* The grants the file gives `agent` on `tool` (not forbid rules, not
 * temporary grants), sorted by id; returns how many (*ret NULL for none). */
size_t cd_policy_grants_of(const struct cd_policy *p, const char *agent, const char *tool,
                           const struct cd_rule *const **ret);
/* The decision, with expiry ignored when `check_expiry` is 0 (inline
 * examples without `at`). */
int cd_policy_decide_ex(const struct cd_policy *p, const struct cd_request *req, int check_expiry,
                        cd_explain_fn fn, void *ctx, struct cd_decision *ret);
/* Run the inline examples; on the first failure write a message to err
 * and return -CD_E_PARSE. */
int cd_policy_check_examples(const struct cd_policy *p, const char *name, struct cd_err *err);
/* Describe a request in one line ("agent=a tool=t action=read path=/x"). */
void cd_request_describe(const struct cd_request *req, char *out, size_t outlen);

#endif
