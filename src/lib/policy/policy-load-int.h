/* policy-load-int.h — what the policy loader's files (policy-load.c,
 * policy-load-agents.c, policy-load-rules.c, policy-load-examples.c,
 * policy-load-temp.c) share: the loading context and the checked getters
 * over the YAML tree.  Not part of the library's interface.
 *
 * Every cd_pl_ function that fails sets c->err to "FILE:LINE:COL: message
 * (hint)" and returns -CD_E_PARSE (or -ENOMEM); what it allocates lives in
 * the policy's arena. */
#ifndef CD_POLICY_LOAD_INT_H
#define CD_POLICY_LOAD_INT_H

#include "policy-int.h"
#include "policy-yaml.h"

struct lctx {
	struct cd_policy *p;
	const char *name;
	struct cd_err *err;
	size_t examples_cap;
	enum cd_temp_kind temp;  /* loading a temporary grant */
	const char *temp_parent; /* delegated: the delegating agent */
};

/* A key a mapping may hold. */
struct keyspec {
	const char *key;
	int required;
};

/* policy-load.c */
int cd_pl_lfail(struct lctx *c, const struct cd_ynode *n, const char *hint, const char *fmt, ...)
        __attribute__((format(printf, 4, 5)));
int cd_pl_oom(struct lctx *c);
int cd_pl_expect(struct lctx *c, const struct cd_ynode *n, enum cd_ynode_type t, const char *what);
int cd_pl_check_keys(struct lctx *c, const struct cd_ynode *map, const struct keyspec *spec,
                     const char *what);
const struct cd_ynode *cd_pl_map_get(const struct cd_ynode *map, const char *key);
int cd_pl_get_str(struct lctx *c, const struct cd_ynode *n, const char *what, const char **ret);
int cd_pl_get_id(struct lctx *c, const struct cd_ynode *n, const char *what, const char **ret);
int cd_pl_get_time(struct lctx *c, const struct cd_ynode *n, const char *what, int64_t *ret);
int cd_pl_get_str_list(struct lctx *c, const struct cd_ynode *n, const char *what,
                       const char ***ret, size_t *ret_n);
int cd_pl_cmp_named(const void *a, const void *b);
const struct cd_named *cd_pl_find_named(const struct cd_named *v, size_t n, const char *id);
const struct cd_profile *cd_pl_find_profile(const struct cd_policy *p, const char *name);
int cd_pl_count_examples(struct lctx *c, const struct cd_ynode *root);

/* policy-load-agents.c */
int cd_pl_load_named(struct lctx *c, const struct cd_ynode *seq, const char *what,
                     const struct keyspec *spec, struct cd_named **ret, size_t *ret_n);
int cd_pl_tool_has_arg_kind(const struct cd_ynode *tools, const char *tool, const char *kind);
int cd_pl_load_profiles(struct lctx *c, const struct cd_ynode *map);

/* policy-load-rules.c */
int cd_pl_load_approvers(struct lctx *c, const struct cd_ynode *m);
int cd_pl_load_rule(struct lctx *c, const struct cd_ynode *m, const struct cd_ynode *tools,
                    int forbid, struct cd_rule *g);
int cd_pl_load_rules(struct lctx *c, const struct cd_ynode *grants, const struct cd_ynode *forbid,
                     const struct cd_ynode *tools);

/* policy-load-examples.c */
int cd_pl_load_examples(struct lctx *c, const struct cd_ynode *v, const struct cd_rule *of);

#endif
