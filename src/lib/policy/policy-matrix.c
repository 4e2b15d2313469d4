/* policy-matrix.c — see policy-matrix.h: agents x tools, for review.
 *
 * Trust boundary: reads a policy that policy-load.c checked; allocates the
 * summary itself (sizes overflow-checked) and never changes the policy.
 * The cost is one pass over the rules plus a sort of the grant rows. */
#include "policy-matrix.h"

#include "policy-int.h"

#include "util/util.h"

static const char letters[CD_ACTION_COUNT] = { 'r', 'c', 'u', 'd', 'x', 'n' };

char cd_action_letter(enum cd_action a)
{
	if ((unsigned)a >= CD_ACTION_COUNT)
		return '?';
	return letters[a];
}

void cd_matrix_cell_mask(const struct cd_matrix_cell *c, char out[7])
{
	unsigned a;

	for (a = 0; a < CD_ACTION_COUNT; a++) {
		unsigned bit = 1u << a;
		if (c->forbidden & bit)
			out[a] = '!';
		else if (c->allow & bit)
			out[a] = letters[a];
		else if (c->approval & bit)
			out[a] = (char)(letters[a] - 'a' + 'A');
		else
			out[a] = '-';
	}
	out[CD_ACTION_COUNT] = '\0';
}

const struct cd_matrix_cell *cd_matrix_cell(const struct cd_matrix *m, size_t row, size_t col)
{
	if (!m || row >= m->nagents || col >= m->ntools)
		return NULL;
	return &m->cells[row * m->ntools + col];
}

void cd_matrix_free(struct cd_matrix *m)
{
	if (!m)
		return;
	free(m->agents);
	free(m->tools);
	free(m->cells);
	free(m->grants);
	free(m);
}

/* Index of id in the matrix's sorted rows or columns, or -1. */
static long find_agent(const struct cd_matrix *m, const char *id)
{
	size_t lo = 0, hi = m->nagents;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = strcmp(m->agents[mid], id);
		if (c == 0)
			return (long)mid;
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return -1;
}

static long find_tool(const struct cd_matrix *m, const char *id)
{
	size_t lo = 0, hi = m->ntools;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = strcmp(m->tools[mid].id, id);
		if (c == 0)
			return (long)mid;
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return -1;
}

static int cmp_grant_row(const void *x, const void *y)
{
	const struct cd_matrix_grant *a = x, *b = y;
	int c = strcmp(a->agent, b->agent);

	if (c)
		return c;
	c = strcmp(a->tool, b->tool);
	if (c)
		return c;
	return strcmp(a->id, b->id);
}

/* A grant in force adds its actions to its cell. */
static void add_grant(struct cd_matrix_cell *c, const struct cd_rule *g, unsigned *task_any,
                      unsigned *free_any)
{
	c->ngrants++;
	if (g->expires < c->expires)
		c->expires = g->expires;
	if (g->approval)
		c->approval |= g->actions;
	else
		c->allow |= g->actions;
	if (g->task)
		*task_any |= g->actions;
	else
		*free_any |= g->actions;
}

/* A forbid rule applies to every cell whose agent and tool it names (or
 * "*"): outright without scope and task, else as a narrowing. */
static void apply_forbid(struct cd_matrix *m, const struct cd_rule *f)
{
	size_t r, t;

	for (r = 0; r < m->nagents; r++) {
		if (strcmp(f->agent, "*") && strcmp(f->agent, m->agents[r]))
			continue;
		for (t = 0; t < m->ntools; t++) {
			struct cd_matrix_cell *c = &m->cells[r * m->ntools + t];
			if (strcmp(f->tool, "*") && strcmp(f->tool, m->tools[t].id))
				continue;
			if (!f->has_scope && !f->task)
				c->forbidden |= f->actions;
			else
				c->narrowed |= f->actions;
		}
	}
}

int cd_policy_matrix(const struct cd_policy *p, const char *agent, int64_t at,
                     struct cd_matrix **ret)
{
	struct cd_matrix *m;
	unsigned *task_any = NULL, *free_any = NULL;
	size_t i, ncells, n = 0;
	int r = -ENOMEM;

	if (!p || !ret)
		return -EINVAL;
	m = calloc(1, sizeof *m);
	if (!m)
		return -ENOMEM;
	/* Rows and columns: the policy keeps agents and tools sorted by id. */
	m->agents = calloc(p->nagents + 1, sizeof *m->agents);
	m->tools = calloc(p->ntools + 1, sizeof *m->tools);
	if (!m->agents || !m->tools)
		goto fail;
	for (i = 0; i < p->nagents; i++)
		if (!agent || !strcmp(agent, p->agents[i].id))
			m->agents[m->nagents++] = p->agents[i].id;
	if (agent && m->nagents == 0) {
		r = -ENOENT;
		goto fail;
	}
	for (i = 0; i < p->ntools; i++) {
		struct cd_matrix_tool *t = &m->tools[m->ntools++];
		t->id = p->tools[i].id;
		t->kind = p->tools[i].kind;
		t->op_names = p->tools[i].op_names;
		t->op_actions = p->tools[i].op_actions;
		t->nops = p->tools[i].nops;
	}
	if (cd_size_mul(m->nagents, m->ntools, &ncells) < 0)
		goto fail;
	m->cells = calloc(ncells + 1, sizeof *m->cells);
	task_any = calloc(ncells + 1, sizeof *task_any);
	free_any = calloc(ncells + 1, sizeof *free_any);
	m->grants = calloc(p->ngrants + 1, sizeof *m->grants);
	if (!m->cells || !task_any || !free_any || !m->grants)
		goto fail;
	for (i = 0; i < ncells; i++)
		m->cells[i].expires = CD_MATRIX_NEVER;

	for (i = 0; i < p->ngrants; i++) {
		const struct cd_rule *g = &p->rules[i];
		struct cd_matrix_grant *row;
		long ra = find_agent(m, g->agent), tc = find_tool(m, g->tool);
		size_t ci;

		if (ra < 0 || tc < 0)
			continue; /* another agent (--agent), or not a cell */
		ci = (size_t)ra * m->ntools + (size_t)tc;
		row = &m->grants[n++];
		row->id = g->id;
		row->agent = g->agent;
		row->task = g->task;
		row->tool = g->tool;
		row->approval = g->approval;
		row->profile = g->profile;
		row->owner = g->owner;
		row->actions = g->actions;
		row->review_by = g->review_by;
		row->expires = g->expires;
		/* As the decision sees it: absent from `expires` on. */
		row->expired = at >= g->expires;
		if (row->expired)
			m->cells[ci].nexpired++;
		else
			add_grant(&m->cells[ci], g, &task_any[ci], &free_any[ci]);
	}
	m->ngrants = n;
	for (i = 0; i < ncells; i++) {
		struct cd_matrix_cell *c = &m->cells[i];
		/* A grant without approval decides over one with approval. */
		c->approval &= ~c->allow;
		c->task_only = task_any[i] & ~free_any[i];
	}
	for (i = 0; i < p->nforbids; i++)
		apply_forbid(m, &p->rules[p->ngrants + i]);
	qsort(m->grants, m->ngrants, sizeof *m->grants, cmp_grant_row);
	free(task_any);
	free(free_any);
	*ret = m;
	return 0;
fail:
	free(task_any);
	free(free_any);
	cd_matrix_free(m);
	return r;
}
