/* policy-decide-index.c — the index the decision finds rules through
 * (policy-decide.c): buckets by (agent, tool), built once when a policy is
 * loaded, and within a large bucket an index of the grants by the fixed
 * directory their path globs start with.
 *
 * Trust boundary: built from a checked policy (policy-load.c); looked up
 * with a request's agent, tool and canonical path, which are hostile but
 * only compared. */
#include "policy-decide-int.h"

#include "util/util.h"

/* ---- the index ---- */

static uint64_t hash_pair(const char *a, const char *b)
{
	uint64_t h = 1469598103934665603ULL;
	const unsigned char *p;

	for (p = (const unsigned char *)a; *p; p++)
		h = (h ^ *p) * 1099511628211ULL;
	h = (h ^ 0x1f) * 1099511628211ULL;
	for (p = (const unsigned char *)b; *p; p++)
		h = (h ^ *p) * 1099511628211ULL;
	return h;
}

static int cmp_pair_id(const void *x, const void *y)
{
	const struct cd_rule *a = *(const struct cd_rule *const *)x;
	const struct cd_rule *b = *(const struct cd_rule *const *)y;
	int c = strcmp(a->agent, b->agent);
	if (c)
		return c;
	c = strcmp(a->tool, b->tool);
	if (c)
		return c;
	return strcmp(a->id, b->id);
}

const struct cd_bucket *cd_pd_ix_find(const struct cd_index *ix, const char *agent,
                                      const char *tool)
{
	size_t i;

	if (!ix->nslots)
		return NULL;
	i = hash_pair(agent, tool) & (ix->nslots - 1);
	for (;;) {
		const struct cd_bucket *b = &ix->slots[i];
		if (!b->agent)
			return NULL;
		if (strcmp(b->agent, agent) == 0 && strcmp(b->tool, tool) == 0)
			return b;
		i = (i + 1) & (ix->nslots - 1);
	}
}

static int ix_build(struct cd_policy *p, struct cd_index *ix, const struct cd_rule *rules, size_t n)
{
	const struct cd_rule **sorted;
	size_t i, start, nslots = 16;

	if (n == 0)
		return 0;
	sorted = cd_arena_alloc(&p->arena, n * sizeof *sorted);
	if (!sorted)
		return -ENOMEM;
	for (i = 0; i < n; i++)
		sorted[i] = &rules[i];
	qsort(sorted, n, sizeof *sorted, cmp_pair_id);
	while (nslots < 2 * n)
		nslots *= 2;
	ix->slots = calloc(nslots, sizeof *ix->slots);
	if (!ix->slots)
		return -ENOMEM;
	ix->nslots = nslots;
	for (start = 0; start < n; start = i) {
		const struct cd_rule *r = sorted[start];
		size_t slot = hash_pair(r->agent, r->tool) & (nslots - 1);
		for (i = start + 1; i < n; i++)
			if (strcmp(sorted[i]->agent, r->agent) || strcmp(sorted[i]->tool, r->tool))
				break;
		while (ix->slots[slot].agent)
			slot = (slot + 1) & (nslots - 1);
		ix->slots[slot].agent = r->agent;
		ix->slots[slot].tool = r->tool;
		ix->slots[slot].rules = &sorted[start];
		ix->slots[slot].n = i - start;
	}
	return 0;
}

static int cmp_pkey(const void *x, const void *y)
{
	const struct cd_path_key *a = x, *b = y;
	size_t n = a->len < b->len ? a->len : b->len;
	int c = memcmp(a->dir, b->dir, n);
	return c ? c : (a->len > b->len) - (a->len < b->len);
}

/* The directory the literal part of a canonical glob ends in. */
static size_t glob_dir_len(const char *g)
{
	size_t lit = strcspn(g, "*?"), i;

	for (i = lit; i > 0 && g[i - 1] != '/'; i--)
		;
	/* g[0..i) ends with '/': drop it, except for the root itself. */
	return i > 1 ? i - 1 : 1;
}

static int path_index(struct cd_policy *p, struct cd_bucket *b)
{
	size_t i, j, nk = 0, nn = 0;

	for (i = 0; i < b->n; i++) {
		if (b->rules[i]->npaths)
			nk += b->rules[i]->npaths;
		else
			nn++;
	}
	b->pkeys = nk ? cd_arena_alloc(&p->arena, nk * sizeof *b->pkeys) : NULL;
	b->nopath = nn ? cd_arena_alloc(&p->arena, nn * sizeof *b->nopath) : NULL;
	if ((nk && !b->pkeys) || (nn && !b->nopath))
		return -ENOMEM;
	for (i = 0; i < b->n; i++) {
		const struct cd_rule *g = b->rules[i];
		if (!g->npaths)
			b->nopath[b->nnopath++] = g;
		for (j = 0; j < g->npaths; j++) {
			struct cd_path_key *k = &b->pkeys[b->npkeys++];
			k->dir = g->paths[j];
			k->len = glob_dir_len(g->paths[j]);
			k->rule = g;
		}
	}
	qsort(b->pkeys, b->npkeys, sizeof *b->pkeys, cmp_pkey);
	return 0;
}

int cd_policy_index_build(struct cd_policy *p)
{
	size_t i;
	int r = ix_build(p, &p->grants_ix, p->rules, p->ngrants);

	if (r < 0)
		return r;
	for (i = 0; i < p->grants_ix.nslots; i++) {
		struct cd_bucket *b = &p->grants_ix.slots[i];
		if (b->agent && b->n >= PATH_INDEX_MIN && (r = path_index(p, b)) < 0)
			return r;
	}
	cd_policy_mask_union_update(p);
	return ix_build(p, &p->forbids_ix, p->rules + p->ngrants, p->nforbids);
}

size_t cd_policy_grants_of(const struct cd_policy *p, const char *agent, const char *tool,
                           const struct cd_rule *const **ret)
{
	const struct cd_bucket *b = cd_pd_ix_find(&p->grants_ix, agent, tool);

	*ret = b ? b->rules : NULL;
	return b ? b->n : 0;
}

static int cmp_rule_id(const void *x, const void *y)
{
	return strcmp((*(const struct cd_rule *const *)x)->id,
	              (*(const struct cd_rule *const *)y)->id);
}

/* The grants of an indexed bucket that can match a request: with paths,
 * those with a glob keyed by the first (canonical) path or a directory
 * above it — a grant must hold every path, so the first narrows enough;
 * without paths, those with no path scope.  Written to out (room for
 * b->npkeys + b->nnopath), deduplicated and sorted by id like the bucket;
 * returns the count. */
size_t cd_pd_path_candidates(const struct cd_bucket *b, const char *path,
                             const struct cd_rule **out)
{
	size_t n = 0, len, i, k;

	if (!path) {
		if (b->nnopath)
			memcpy(out, b->nopath, b->nnopath * sizeof *out);
		return b->nnopath;
	}
	len = strlen(path);
	/* Each ancestor: "/", then "/a", "/a/b", ..., the path itself. */
	for (i = 1; i <= len; i++) {
		struct cd_path_key key;
		size_t lo = 0, hi = b->npkeys;
		if (i > 1 && i < len && path[i] != '/')
			continue;
		if (i == 1 && len > 1 && path[1] == '/')
			continue; /* not canonical: cannot happen */
		key.dir = path;
		key.len = i;
		while (lo < hi) { /* the first key >= the ancestor */
			size_t mid = lo + (hi - lo) / 2;
			if (cmp_pkey(&b->pkeys[mid], &key) < 0)
				lo = mid + 1;
			else
				hi = mid;
		}
		for (k = lo; k < b->npkeys && cmp_pkey(&b->pkeys[k], &key) == 0; k++)
			out[n++] = b->pkeys[k].rule;
	}
	qsort(out, n, sizeof *out, cmp_rule_id);
	for (i = k = 0; i < n; i++)
		if (!k || out[k - 1] != out[i])
			out[k++] = out[i];
	return k;
}
