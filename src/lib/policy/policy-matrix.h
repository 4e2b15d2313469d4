/* policy-matrix.h — the grant matrix as a table for review: `cordon policy
 * matrix`.  For every declared agent and tool, which action classes a grant
 * in force gives, which only with approval, which a forbid rule takes away,
 * and when the first grant of the pair expires; plus every grant as one row.
 *
 * Trust boundary: the policy was loaded strictly (policy.h), so every id is
 * made of letters, digits and ". _ - : @ / +".  The matrix is a summary for
 * a human: scopes are not shown in the cells (they are in the policy and in
 * `cordon policy explain`), and a letter means "some request of this class
 * may be allowed", never "every request is".  Nothing here prints. */
#ifndef CD_POLICY_MATRIX_H
#define CD_POLICY_MATRIX_H

#include "policy.h"

#include <stddef.h>
#include <stdint.h>

#define CD_MATRIX_NEVER INT64_MAX

/* One (agent, tool) pair.  Action sets are bit masks (1 << enum cd_action). */
struct cd_matrix_cell {
	unsigned allow;     /* given without approval by some grant in force */
	unsigned approval;  /* given by grants in force, every one needing approval */
	unsigned forbidden; /* denied for every request: a forbid rule without scope or task */
	unsigned narrowed;  /* a forbid rule with a scope or a task removes part of it */
	unsigned task_only; /* given only by grants bound to a task */
	size_t ngrants;     /* grants of the pair in force at `at` */
	size_t nexpired;    /* grants of the pair already absent at `at` */
	int64_t expires;    /* first expiry among the grants in force, or CD_MATRIX_NEVER */
};

/* One grant, as a row of the review list.  Strings point into the policy. */
struct cd_matrix_grant {
	const char *id, *agent, *task, *tool;
	const char *approval; /* NULL: none */
	const char *profile;  /* NULL: the default sandbox */
	const char *owner;
	unsigned actions;
	int64_t review_by, expires;
	int expired; /* expires is at or before `at`: the grant is absent */
};

/* One declared tool: its kind and its operations with their classes. */
struct cd_matrix_tool {
	const char *id, *kind;
	const char *const *op_names;
	const unsigned *op_actions; /* enum cd_action */
	size_t nops;
};

struct cd_matrix {
	const char **agents; /* rows, sorted by id */
	size_t nagents;
	struct cd_matrix_tool *tools; /* columns, sorted by id */
	size_t ntools;
	struct cd_matrix_cell *cells;   /* nagents * ntools, row by row */
	struct cd_matrix_grant *grants; /* sorted by agent, tool, id */
	size_t ngrants;
};

/* Build the matrix of a loaded policy at time `at` (seconds since the epoch,
 * UTC), for every agent or, when `agent` is not NULL, for that agent only.
 * Returns 0 and a new matrix the caller frees with cd_matrix_free();
 * -ENOENT when `agent` is not declared; -EINVAL for a NULL policy or ret;
 * -ENOMEM.  The matrix borrows strings from the policy: free it first. */
int cd_policy_matrix(const struct cd_policy *p, const char *agent, int64_t at,
                     struct cd_matrix **ret);
void cd_matrix_free(struct cd_matrix *m);

/* The cell of (row, column); NULL when out of range. */
const struct cd_matrix_cell *cd_matrix_cell(const struct cd_matrix *m, size_t row, size_t col);

/* The one-letter name of an action class: r c u d x n ('?' out of range). */
char cd_action_letter(enum cd_action a);

/* Write the action mask of a cell as six characters and a NUL into out[7]:
 * per class in enum order, its letter in lower case when allowed, upper case
 * when it needs approval, '!' when forbidden outright (whatever the grants
 * say), '-' when not given. */
void cd_matrix_cell_mask(const struct cd_matrix_cell *c, char out[7]);

#endif
