/* policy-load.c — a YAML tree (policy-yaml.c) into a checked grant matrix.
 *
 * Trust boundary: the tree is shaped by an untrusted file.  Every key is
 * known or refused, every value has the type its key says, every reference
 * (agent, task, tool, profile) resolves, every id is unique, every host and
 * glob is in its one canonical spelling, and every inline example holds —
 * or nothing is loaded.  Errors are "FILE:LINE:COL: message (hint)". */
#include "policy-load-int.h"

#include "util/editdist.h"
#include "util/num.h"
#include "util/util.h"

#include <fcntl.h>
#include <sodium.h>
#include <stdarg.h>
#include <stdio.h>
#include <sys/stat.h>

int cd_pl_lfail(struct lctx *c, const struct cd_ynode *n, const char *hint, const char *fmt, ...)
{
	char msg[CD_ERR_MSG_MAX];
	va_list ap;
	int r;

	va_start(ap, fmt);
	r = vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	if (r < 0)
		msg[0] = '\0';
	return cd_err_set(c->err, -CD_E_PARSE, "%s:%u:%u: %s%s%s%s", c->name, n ? n->mark.line : 1,
	                  n ? n->mark.col : 1, msg, hint ? " (" : "", hint ? hint : "",
	                  hint ? ")" : "");
}

int cd_pl_oom(struct lctx *c)
{
	return cd_err_set(c->err, -ENOMEM, "%s: out of memory", c->name);
}

static const char *type_name(const struct cd_ynode *n)
{
	switch (n->type) {
	case CD_Y_SCALAR:
		return "a value";
	case CD_Y_SEQ:
		return "a list";
	case CD_Y_MAP:
		return "a mapping";
	}
	return "?";
}

int cd_pl_expect(struct lctx *c, const struct cd_ynode *n, enum cd_ynode_type t, const char *what)
{
	static const char *const want[] = { "a value", "a list", "a mapping" };
	if (n->type != t)
		return cd_pl_lfail(c, n, NULL, "%s must be %s, not %s", what, want[t],
		                   type_name(n));
	return 0;
}

/* ---- keys ---- */

int cd_pl_check_keys(struct lctx *c, const struct cd_ynode *map, const struct keyspec *spec,
                     const char *what)
{
	const struct cd_ynode *k;
	const struct keyspec *s;
	char hint[160];

	for (k = map->child; k; k = k->next->next) {
		for (s = spec; s->key; s++)
			if (strcmp(k->s, s->key) == 0)
				break;
		if (s->key)
			continue;
		hint[0] = '\0';
		for (s = spec; s->key; s++) {
			if (cd_edit_distance(k->s, strlen(k->s), s->key) <= 2) {
				int w = snprintf(hint, sizeof hint, "did you mean '%s'?", s->key);
				if (w < 0 || (size_t)w >= sizeof hint)
					hint[0] = '\0';
				break;
			}
		}
		if (!hint[0]) {
			size_t o = 0;
			int w = snprintf(hint, sizeof hint, "known keys:");
			o = w > 0 ? (size_t)w : 0;
			for (s = spec; s->key && o < sizeof hint; s++) {
				w = snprintf(hint + o, sizeof hint - o, " %s", s->key);
				if (w < 0)
					break;
				o += (size_t)w;
			}
			if (o >= sizeof hint)
				hint[sizeof hint - 1] = '\0';
		}
		return cd_pl_lfail(c, k, hint, "unknown key '%s' in %s", k->s, what);
	}
	for (s = spec; s->key; s++) {
		if (!s->required)
			continue;
		for (k = map->child; k; k = k->next->next)
			if (strcmp(k->s, s->key) == 0)
				break;
		if (!k)
			return cd_pl_lfail(c, map, NULL, "missing required key '%s' in %s", s->key,
			                   what);
	}
	return 0;
}

const struct cd_ynode *cd_pl_map_get(const struct cd_ynode *map, const char *key)
{
	const struct cd_ynode *k;

	for (k = map->child; k; k = k->next->next)
		if (strcmp(k->s, key) == 0)
			return k->next;
	return NULL;
}

/* ---- scalars ---- */

static int has_ctl(const char *s, size_t len)
{
	size_t i;
	for (i = 0; i < len; i++)
		if ((unsigned char)s[i] < 0x20 || s[i] == 0x7f)
			return 1;
	return 0;
}

/* A non-empty string without control bytes. */
int cd_pl_get_str(struct lctx *c, const struct cd_ynode *n, const char *what, const char **ret)
{
	int r = cd_pl_expect(c, n, CD_Y_SCALAR, what);
	if (r < 0)
		return r;
	if (n->len == 0)
		return cd_pl_lfail(c, n, NULL, "%s is empty", what);
	if (has_ctl(n->s, n->len))
		return cd_pl_lfail(c, n, NULL, "%s holds a control character", what);
	*ret = n->s;
	return 0;
}

/* An id: letters, digits and . _ - : @ / +, at most 128 bytes. */
int cd_pl_get_id(struct lctx *c, const struct cd_ynode *n, const char *what, const char **ret)
{
	size_t i;
	int r = cd_pl_get_str(c, n, what, ret);

	if (r < 0)
		return r;
	if (n->len > 128)
		return cd_pl_lfail(c, n, NULL, "%s is longer than 128 bytes", what);
	for (i = 0; i < n->len; i++) {
		unsigned char ch = (unsigned char)n->s[i];
		if ((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
		    (ch >= '0' && ch <= '9') || strchr("._-:@/+", ch))
			continue;
		return cd_pl_lfail(c, n, "use letters, digits and . _ - : @ / +",
		                   "%s '%s' has a '%c'", what, n->s, ch);
	}
	return 0;
}

int cd_pl_get_time(struct lctx *c, const struct cd_ynode *n, const char *what, int64_t *ret)
{
	int r = cd_pl_expect(c, n, CD_Y_SCALAR, what);
	if (r < 0)
		return r;
	if (cd_policy_parse_time(n->s, n->len, ret) < 0)
		return cd_pl_lfail(c, n, "write YYYY-MM-DD or YYYY-MM-DDTHH:MM:SSZ",
		                   "%s '%s' is not a date", what, n->s);
	return 0;
}

/* A list of strings; each item checked by `check` (may be NULL). */
int cd_pl_get_str_list(struct lctx *c, const struct cd_ynode *n, const char *what,
                       const char ***ret, size_t *ret_n)
{
	const struct cd_ynode *it;
	const char **v;
	size_t i = 0;
	int r = cd_pl_expect(c, n, CD_Y_SEQ, what);

	if (r < 0)
		return r;
	if (n->n == 0)
		return cd_pl_lfail(c, n, NULL, "%s is an empty list", what);
	if (n->n > CD_POLICY_MAX_LIST)
		return cd_pl_lfail(c, n, NULL, "%s has more than %d items", what,
		                   CD_POLICY_MAX_LIST);
	v = cd_arena_alloc(&c->p->arena, n->n * sizeof *v);
	if (!v)
		return cd_pl_oom(c);
	for (it = n->child; it; it = it->next) {
		if (it->type != CD_Y_SCALAR)
			return cd_pl_lfail(c, it, NULL, "items of %s must be values, not %s", what,
			                   type_name(it));
		if (has_ctl(it->s, it->len))
			return cd_pl_lfail(c, it, NULL, "an item of %s holds a control character",
			                   what);
		v[i++] = it->s;
	}
	*ret = v;
	*ret_n = i;
	return 0;
}

/* ---- lookups over sorted arrays ---- */

int cd_pl_cmp_named(const void *a, const void *b)
{
	return strcmp(((const struct cd_named *)a)->id, ((const struct cd_named *)b)->id);
}

const struct cd_named *cd_pl_find_named(const struct cd_named *v, size_t n, const char *id)
{
	struct cd_named key = { .id = id };
	if (!v || n == 0)
		return NULL;
	return bsearch(&key, v, n, sizeof *v, cd_pl_cmp_named);
}

const struct cd_profile *cd_pl_find_profile(const struct cd_policy *p, const char *name)
{
	size_t i;
	for (i = 0; i < p->nprofiles; i++)
		if (strcmp(p->profiles[i].name, name) == 0)
			return &p->profiles[i];
	return NULL;
}

/* ---- the top level ---- */

static size_t count_list(const struct cd_ynode *ex)
{
	const struct cd_ynode *l;
	size_t n = 0;

	if (!ex || ex->type != CD_Y_MAP)
		return 0;
	if ((l = cd_pl_map_get(ex, "allow")) && l->type == CD_Y_SEQ)
		n += l->n;
	if ((l = cd_pl_map_get(ex, "deny")) && l->type == CD_Y_SEQ)
		n += l->n;
	return n;
}

/* Examples per grant and per file, counted once so that one array holds
 * them all. */
int cd_pl_count_examples(struct lctx *c, const struct cd_ynode *root)
{
	const struct cd_ynode *grants = cd_pl_map_get(root, "grants"), *it;
	size_t n = count_list(cd_pl_map_get(root, "examples"));

	if (grants && grants->type == CD_Y_SEQ)
		for (it = grants->child; it; it = it->next)
			if (it->type == CD_Y_MAP)
				n += count_list(cd_pl_map_get(it, "examples"));
	if (n == 0)
		return 0;
	c->p->examples = cd_arena_alloc(&c->p->arena, n * sizeof *c->p->examples);
	if (!c->p->examples)
		return cd_pl_oom(c);
	c->examples_cap = n;
	return 0;
}

/* break_glass: {max_ttl: DURATION}: the cap on every break-glass grant. */
static int load_break_glass(struct lctx *c, const struct cd_ynode *m)
{
	static const struct keyspec spec[] = { { "max_ttl", 1 }, { NULL, 0 } };
	const struct cd_ynode *v;
	uint64_t ms;
	int r;

	if ((r = cd_pl_expect(c, m, CD_Y_MAP, "break_glass")) < 0 ||
	    (r = cd_pl_check_keys(c, m, spec, "break_glass")) < 0)
		return r;
	v = cd_pl_map_get(m, "max_ttl");
	if ((r = cd_pl_expect(c, v, CD_Y_SCALAR, "max_ttl")) < 0)
		return r;
	if (cd_parse_duration_ms(v->s, &ms) < 0 || ms < 60000 ||
	    ms > (uint64_t)CD_BREAK_GLASS_CEILING_TTL * 1000)
		return cd_pl_lfail(c, v, "a duration from 1m to 168h, e.g. 4h", "bad max_ttl '%s'",
		                   v->s);
	c->p->break_glass_max_ttl = (int64_t)(ms / 1000);
	return 0;
}

static int load_tree(struct lctx *c, const struct cd_ynode *root)
{
	static const struct keyspec spec[] = {
		{ "version", 1 },     { "agents", 1 },    { "tasks", 0 },  { "tools", 1 },
		{ "profiles", 0 },    { "grants", 0 },    { "forbid", 0 }, { "examples", 0 },
		{ "break_glass", 0 }, { "approvers", 0 }, { NULL, 0 },
	};
	static const struct keyspec agent_spec[] = {
		{ "id", 1 }, { "owner", 1 }, { "description", 0 }, { "mcp_front", 0 }, { NULL, 0 }
	};
	static const struct keyspec task_spec[] = {
		{ "id", 1 }, { "owner", 0 }, { "description", 0 }, { NULL, 0 }
	};
	static const struct keyspec tool_spec[] = { { "id", 1 },          { "kind", 1 },
		                                    { "description", 0 }, { "operations", 0 },
		                                    { "args", 0 },        { "pins", 0 },
		                                    { "url", 0 },         { "secret", 0 },
		                                    { "shared", 0 },      { NULL, 0 } };
	struct cd_policy *p = c->p;
	const struct cd_ynode *v;
	int r;

	if ((r = cd_pl_expect(c, root, CD_Y_MAP, "a policy")) < 0 ||
	    (r = cd_pl_check_keys(c, root, spec, "the policy")) < 0)
		return r;
	v = cd_pl_map_get(root, "version");
	if (v->type != CD_Y_SCALAR || !v->plain || strcmp(v->s, "1") != 0)
		return cd_pl_lfail(c, v, "this cordon reads version 1",
		                   "unsupported policy version");
	if ((r = cd_pl_load_named(c, cd_pl_map_get(root, "agents"), "agent", agent_spec, &p->agents,
	                          &p->nagents)) < 0)
		return r;
	if ((v = cd_pl_map_get(root, "tasks")) &&
	    (r = cd_pl_load_named(c, v, "task", task_spec, &p->tasks, &p->ntasks)) < 0)
		return r;
	if ((r = cd_pl_load_named(c, cd_pl_map_get(root, "tools"), "tool", tool_spec, &p->tools,
	                          &p->ntools)) < 0)
		return r;
	if ((v = cd_pl_map_get(root, "profiles")) && (r = cd_pl_load_profiles(c, v)) < 0)
		return r;
	if ((v = cd_pl_map_get(root, "break_glass")) && (r = load_break_glass(c, v)) < 0)
		return r;
	if ((v = cd_pl_map_get(root, "approvers")) && (r = cd_pl_load_approvers(c, v)) < 0)
		return r;
	p->tools_node = cd_pl_map_get(root, "tools");
	if ((r = cd_pl_count_examples(c, root)) < 0)
		return r;
	if ((r = cd_pl_load_rules(c, cd_pl_map_get(root, "grants"), cd_pl_map_get(root, "forbid"),
	                          cd_pl_map_get(root, "tools"))) < 0)
		return r;
	if ((v = cd_pl_map_get(root, "examples")) && (r = cd_pl_load_examples(c, v, NULL)) < 0)
		return r;
	return 0;
}

int cd_policy_load_buf(const char *name, const char *data, size_t len, struct cd_policy **ret,
                       struct cd_err *err)
{
	struct cd_policy *p;
	struct cd_ynode *root;
	struct lctx c;
	unsigned char hash[crypto_hash_sha256_BYTES];
	int r;

	if (!name)
		name = "policy";
	if (!data && len)
		return cd_err_set(err, -EINVAL, "%s: no data", name);
	p = calloc(1, sizeof *p);
	if (!p)
		return cd_err_set(err, -ENOMEM, "%s: out of memory", name);
	/* Parsed structures stay within a fixed multiple of the input. */
	p->arena.cap = 64 * (size_t)CD_POLICY_MAX_BYTES;
	c.p = p;
	c.name = name;
	c.err = err;
	c.examples_cap = 0;
	c.temp = 0;
	c.temp_parent = NULL;
	p->break_glass_max_ttl = CD_BREAK_GLASS_DEFAULT_TTL;
	r = cd_yaml_parse(&p->arena, name, data ? data : "", len, &root, err);
	if (r < 0)
		goto fail;
	r = load_tree(&c, root);
	if (r < 0)
		goto fail;
	r = cd_policy_index_build(p);
	if (r < 0) {
		r = cd_pl_oom(&c);
		goto fail;
	}
	r = cd_policy_check_examples(p, name, err);
	if (r < 0)
		goto fail;
	if (sodium_init() < 0) {
		r = cd_err_set(err, -EIO, "%s: libsodium failed to start", name);
		goto fail;
	}
	crypto_hash_sha256(hash, (const unsigned char *)(data ? data : ""), len);
	sodium_bin2hex(p->sha256, sizeof p->sha256, hash, sizeof hash);
	*ret = p;
	return 0;
fail:
	cd_policy_free(p);
	return r;
}

int cd_policy_load_file(const char *path, struct cd_policy **ret, struct cd_err *err)
{
	CD_AUTOCLOSE int fd = -1;
	CD_AUTOFREE char *data = NULL;
	struct stat st;
	size_t got = 0;

	if (!path)
		return cd_err_set(err, -EINVAL, "no policy file given");
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	if (fd < 0)
		return cd_err_sys(err, -errno, "%s: cannot open", path);
	if (fstat(fd, &st) < 0)
		return cd_err_sys(err, -errno, "%s: cannot stat", path);
	if (!S_ISREG(st.st_mode))
		return cd_err_set(err, -EINVAL, "%s: not a regular file", path);
	if (st.st_size > CD_POLICY_MAX_BYTES)
		return cd_err_set(err, -CD_E_LIMIT, "%s: larger than %d bytes", path,
		                  CD_POLICY_MAX_BYTES);
	data = malloc((size_t)st.st_size + 1);
	if (!data)
		return cd_err_set(err, -ENOMEM, "%s: out of memory", path);
	while (got < (size_t)st.st_size) {
		ssize_t n = read(fd, data + got, (size_t)st.st_size - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return cd_err_sys(err, -errno, "%s: cannot read", path);
		if (n == 0)
			break;
		got += (size_t)n;
	}
	return cd_policy_load_buf(path, data, got, ret, err);
}

void cd_policy_free(struct cd_policy *p)
{
	if (!p)
		return;
	free(p->grants_ix.slots);
	free(p->forbids_ix.slots);
	free(p->temps);
	cd_arena_release(&p->arena);
	free(p);
}

const char *cd_policy_sha256(const struct cd_policy *p)
{
	return p ? p->sha256 : "";
}

void cd_policy_stats(const struct cd_policy *p, struct cd_policy_stats *ret)
{
	memset(ret, 0, sizeof *ret);
	if (!p)
		return;
	ret->agents = p->nagents;
	ret->tasks = p->ntasks;
	ret->tools = p->ntools;
	ret->profiles = p->nprofiles;
	ret->grants = p->ngrants;
	ret->forbids = p->nforbids;
	ret->examples = p->nexamples;
}

int cd_policy_profile(const struct cd_policy *p, const char *name,
                      const struct cd_profile_setting **ret_settings, size_t *ret_n)
{
	const struct cd_profile *pr;

	if (!p || !name)
		return -EINVAL;
	pr = cd_pl_find_profile(p, name);
	if (!pr)
		return -ENOENT;
	*ret_settings = pr->settings;
	*ret_n = pr->nsettings;
	return 0;
}

size_t cd_policy_agents(const struct cd_policy *p, const char **out, size_t max)
{
	size_t i;

	for (i = 0; p && i < p->nagents && i < max; i++)
		out[i] = p->agents[i].id;
	return p ? p->nagents : 0;
}

int cd_policy_agent_limits(const struct cd_policy *p, const char *agent,
                           struct cd_agent_limits *ret)
{
	char name[256];
	size_t i, n;

	memset(ret, 0, sizeof *ret);
	if (!p || !agent)
		return 0;
	/* A sub-agent not declared itself: its declared ancestor's. */
	for (n = strlen(agent); n;) {
		if (n < sizeof name) {
			memcpy(name, agent, n);
			name[n] = 0;
			for (i = 0; i < p->nagents; i++)
				if (!strcmp(p->agents[i].id, name)) {
					*ret = p->agents[i].limits;
					return ret->max_sessions || ret->max_request ||
					       ret->max_calls_per_minute;
				}
		}
		while (n && agent[n - 1] != '/')
			n--;
		if (n)
			n--; /* drop the '/' */
	}
	return 0;
}
