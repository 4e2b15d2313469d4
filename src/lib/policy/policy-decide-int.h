/* policy-decide-int.h — the decision's index (policy-decide-index.c), as
 * the decision (policy-decide.c) uses it.  Not part of the library's
 * interface. */
#ifndef CD_POLICY_DECIDE_INT_H
#define CD_POLICY_DECIDE_INT_H

#include "policy-int.h"

/* Buckets of at least this many grants get a path index. */
#define PATH_INDEX_MIN 32

/* policy-decide-index.c */
const struct cd_bucket *cd_pd_ix_find(const struct cd_index *ix, const char *agent,
                                      const char *tool);
size_t cd_pd_path_candidates(const struct cd_bucket *b, const char *path,
                             const struct cd_rule **out);

#endif
