/* policy-load.c — a YAML tree (policy-yaml.c) into a checked grant matrix.
 *
 * Trust boundary: the tree is shaped by an untrusted file.  Every key is
 * known or refused, every value has the type its key says, every reference
 * (agent, task, tool, profile) resolves, every id is unique, every host and
 * glob is in its one canonical spelling, and every inline example holds —
 * or nothing is loaded.  Errors are "FILE:LINE:COL: message (hint)". */
#include "policy-int.h"

#include "editdist.h"
#include "policy-yaml.h"

#include "match-host.h"
#include "num.h"
#include "util.h"

#include <fcntl.h>
#include <sodium.h>
#include <stdarg.h>
#include <stdio.h>
#include <sys/stat.h>

struct lctx {
	struct cd_policy *p;
	const char *name;
	struct cd_err *err;
	size_t examples_cap;
	enum cd_temp_kind temp;  /* loading a temporary grant */
	const char *temp_parent; /* delegated: the delegating agent */
};

static int cd_pl_lfail(struct lctx *c, const struct cd_ynode *n, const char *hint, const char *fmt,
                       ...) __attribute__((format(printf, 4, 5)));
static int cd_pl_lfail(struct lctx *c, const struct cd_ynode *n, const char *hint, const char *fmt,
                       ...)
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

static int cd_pl_oom(struct lctx *c)
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

static int cd_pl_expect(struct lctx *c, const struct cd_ynode *n, enum cd_ynode_type t,
                        const char *what)
{
	static const char *const want[] = { "a value", "a list", "a mapping" };
	if (n->type != t)
		return cd_pl_lfail(c, n, NULL, "%s must be %s, not %s", what, want[t],
		                   type_name(n));
	return 0;
}

/* ---- keys ---- */

struct keyspec {
	const char *key;
	int required;
};

static int cd_pl_check_keys(struct lctx *c, const struct cd_ynode *map, const struct keyspec *spec,
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

static const struct cd_ynode *cd_pl_map_get(const struct cd_ynode *map, const char *key)
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
static int cd_pl_get_str(struct lctx *c, const struct cd_ynode *n, const char *what,
                         const char **ret)
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
static int cd_pl_get_id(struct lctx *c, const struct cd_ynode *n, const char *what,
                        const char **ret)
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

static int cd_pl_get_time(struct lctx *c, const struct cd_ynode *n, const char *what, int64_t *ret)
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
static int cd_pl_get_str_list(struct lctx *c, const struct cd_ynode *n, const char *what,
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

static int cd_pl_cmp_named(const void *a, const void *b)
{
	return strcmp(((const struct cd_named *)a)->id, ((const struct cd_named *)b)->id);
}

static const struct cd_named *cd_pl_find_named(const struct cd_named *v, size_t n, const char *id)
{
	struct cd_named key = { .id = id };
	if (!v || n == 0)
		return NULL;
	return bsearch(&key, v, n, sizeof *v, cd_pl_cmp_named);
}

static const struct cd_profile *cd_pl_find_profile(const struct cd_policy *p, const char *name)
{
	size_t i;
	for (i = 0; i < p->nprofiles; i++)
		if (strcmp(p->profiles[i].name, name) == 0)
			return &p->profiles[i];
	return NULL;
}

/* ---- agents, tasks, tools ---- */

static int cd_pl_load_named(struct lctx *c, const struct cd_ynode *seq, const char *what,
                            const struct keyspec *spec, struct cd_named **ret, size_t *ret_n)
{
	const struct cd_ynode *it, *v;
	struct cd_named *out;
	size_t i = 0;
	int r = cd_pl_expect(c, seq, CD_Y_SEQ, what);

	if (r < 0)
		return r;
	if (seq->n == 0) {
		*ret = NULL;
		*ret_n = 0;
		return 0;
	}
	out = cd_arena_alloc(&c->p->arena, seq->n * sizeof *out);
	if (!out)
		return cd_pl_oom(c);
	for (it = seq->child; it; it = it->next, i++) {
		struct cd_named *x = &out[i];
		if ((r = cd_pl_expect(c, it, CD_Y_MAP, what)) < 0 ||
		    (r = cd_pl_check_keys(c, it, spec, what)) < 0)
			return r;
		x->mark = it->mark;
		if ((r = cd_pl_get_id(c, cd_pl_map_get(it, "id"), "id", &x->id)) < 0)
			return r;
		if ((v = cd_pl_map_get(it, "owner")) &&
		    (r = cd_pl_get_str(c, v, "owner", &x->owner)) < 0)
			return r;
		if ((v = cd_pl_map_get(it, "description")) &&
		    (r = cd_pl_get_str(c, v, "description", &x->description)) < 0)
			return r;
		if ((v = cd_pl_map_get(it, "kind"))) {
			if ((r = cd_pl_get_str(c, v, "kind", &x->kind)) < 0)
				return r;
			if (strcmp(x->kind, "command") && strcmp(x->kind, "mcp") &&
			    strcmp(x->kind, "http"))
				return cd_pl_lfail(c, v, "command, mcp or http",
				                   "unknown tool kind '%s'", x->kind);
		}
		if ((v = cd_pl_map_get(it, "operations"))) {
			const struct cd_ynode *k;
			enum cd_action a;
			if ((r = cd_pl_expect(c, v, CD_Y_MAP, "operations")) < 0)
				return r;
			x->op_names = cd_arena_alloc(&c->p->arena, (v->n / 2 + 1) * sizeof(char *));
			x->op_actions =
			        cd_arena_alloc(&c->p->arena, (v->n / 2 + 1) * sizeof(unsigned));
			if (!x->op_names || !x->op_actions)
				return cd_pl_oom(c);
			for (k = v->child; k; k = k->next->next) {
				if (k->next->type != CD_Y_SCALAR ||
				    cd_action_parse(k->next->s, &a) < 0)
					return cd_pl_lfail(
					        c, k->next,
					        "read, create, update, delete, execute or network",
					        "operation '%s' needs an action class", k->s);
				x->op_names[x->nops] = k->s;
				x->op_actions[x->nops++] = (unsigned)a;
			}
		}
		if ((v = cd_pl_map_get(it, "args"))) {
			const struct cd_ynode *k;
			if ((r = cd_pl_expect(c, v, CD_Y_MAP, "args")) < 0)
				return r;
			x->arg_names =
			        cd_arena_alloc(&c->p->arena, (v->n / 2 + 1) * sizeof(char *));
			x->arg_kinds =
			        cd_arena_alloc(&c->p->arena, (v->n / 2 + 1) * sizeof(char *));
			if (!x->arg_names || !x->arg_kinds)
				return cd_pl_oom(c);
			for (k = v->child; k; k = k->next->next) {
				const struct cd_ynode *t = k->next;
				if (t->type != CD_Y_SCALAR ||
				    (strcmp(t->s, "path") && strcmp(t->s, "host") &&
				     strcmp(t->s, "port") && strcmp(t->s, "record") &&
				     strcmp(t->s, "value")))
					return cd_pl_lfail(c, t,
					                   "path, host, port, record or value",
					                   "argument '%s' needs a kind", k->s);
				x->arg_names[x->nargkinds] = k->s;
				x->arg_kinds[x->nargkinds++] = t->s;
			}
		}
		if ((v = cd_pl_map_get(it, "pins"))) {
			/* pins: {TOOL: SHA256} — MCP tool definitions approved by
			 * the file itself (lower-case hex of `cordon mcp pins`). */
			const struct cd_ynode *k;
			if ((r = cd_pl_expect(c, v, CD_Y_MAP, "pins")) < 0)
				return r;
			if (!x->kind || strcmp(x->kind, "mcp") != 0)
				return cd_pl_lfail(c, v, "only MCP servers have pins",
				                   "pins on a %s tool", x->kind ? x->kind : "?");
			x->pin_names =
			        cd_arena_alloc(&c->p->arena, (v->n / 2 + 1) * sizeof(char *));
			x->pin_shas = cd_arena_alloc(&c->p->arena, (v->n / 2 + 1) * sizeof(char *));
			if (!x->pin_names || !x->pin_shas)
				return cd_pl_oom(c);
			for (k = v->child; k; k = k->next->next) {
				const struct cd_ynode *t = k->next;
				if (t->type != CD_Y_SCALAR || t->len != 64 ||
				    strspn(t->s, "0123456789abcdef") != 64)
					return cd_pl_lfail(
					        c, t,
					        "64 lower-case hex digits, as 'cordon mcp "
					        "pins list' shows",
					        "bad pin for '%s'", k->s);
				x->pin_names[x->npins] = k->s;
				x->pin_shas[x->npins++] = t->s;
			}
		}
	}
	qsort(out, i, sizeof *out, cd_pl_cmp_named);
	for (size_t j = 1; j < i; j++) {
		if (strcmp(out[j - 1].id, out[j].id) == 0) {
			const struct cd_named *later =
			        out[j].mark.line > out[j - 1].mark.line ? &out[j] : &out[j - 1];
			struct cd_ynode fake = { .mark = later->mark };
			return cd_pl_lfail(c, &fake, NULL, "duplicate %s id '%s'", what, later->id);
		}
	}
	*ret = out;
	*ret_n = i;
	return 0;
}

/* Does the tool declare an argument of this kind? */
static int cd_pl_tool_has_arg_kind(const struct cd_ynode *tools, const char *tool, const char *kind)
{
	const struct cd_ynode *it, *id, *args, *k;

	if (!tools)
		return 0;
	for (it = tools->child; it; it = it->next) {
		id = cd_pl_map_get(it, "id");
		if (!id || strcmp(id->s, tool) != 0)
			continue;
		args = cd_pl_map_get(it, "args");
		if (!args)
			return 0;
		for (k = args->child; k; k = k->next->next)
			if (strcmp(k->next->s, kind) == 0)
				return 1;
		return 0;
	}
	return 0;
}

/* ---- profiles ---- */

static int env_name_ok(const char *s, size_t n)
{
	size_t i;
	if (n == 0 || (s[0] >= '0' && s[0] <= '9'))
		return 0;
	for (i = 0; i < n; i++) {
		unsigned char ch = (unsigned char)s[i];
		if (!((ch >= 'A' && ch <= 'Z') || (ch >= 'a' && ch <= 'z') ||
		      (ch >= '0' && ch <= '9') || ch == '_'))
			return 0;
	}
	return 1;
}

static int canonical_abs(const char *s)
{
	char buf[4096];
	size_t n = strlen(s);
	int r = cd_path_canon(s, n, buf, sizeof buf);
	return r >= 0 && (size_t)r == n && memcmp(buf, s, n) == 0;
}

static int check_setting(struct lctx *c, const char *key, const struct cd_ynode *item)
{
	uint64_t v;
	const char *s = item->s, *colon;

	if (!strcmp(key, "memory") || !strcmp(key, "output_limit") ||
	    !strcmp(key, "scratch_size")) {
		if (cd_parse_size(s, 0, &v) < 0)
			return cd_pl_lfail(c, item, "a size like 512M or 2G",
			                   "%s '%s' is not a size", key, s);
	} else if (!strcmp(key, "pids")) {
		if (!item->plain || cd_parse_u64(s, item->len, 1000000, &v) < 0 || v == 0)
			return cd_pl_lfail(c, item, "a number from 1 to 1000000",
			                   "pids '%s' is not valid", s);
	} else if (!strcmp(key, "timeout") || !strcmp(key, "cpu_time")) {
		if (cd_parse_duration_ms(s, &v) < 0)
			return cd_pl_lfail(c, item, "a duration like 30s, 5m or 250ms",
			                   "%s '%s' is not a duration", key, s);
	} else if (!strcmp(key, "net")) {
		if (strcmp(s, "none") && strcmp(s, "proxy"))
			return cd_pl_lfail(c, item, "none or proxy", "net '%s' is not valid", s);
	} else if (!strcmp(key, "workspace")) {
		if (strcmp(s, "read-only") && strcmp(s, "write"))
			return cd_pl_lfail(c, item, "read-only or write",
			                   "workspace '%s' is not valid", s);
	} else if (!strcmp(key, "allow_hosts")) {
		char host[CD_HOST_MAX];
		size_t hlen = item->len;
		uint64_t port;
		colon = strrchr(s, ':');
		if (colon && !(s[0] == '[' && colon < strrchr(s, ']'))) {
			hlen = (size_t)(colon - s);
			if (cd_parse_u64(colon + 1, strlen(colon + 1), 65535, &port) < 0 ||
			    port == 0)
				return cd_pl_lfail(c, item, "HOST or HOST:PORT", "bad port in '%s'",
				                   s);
		}
		if (hlen >= sizeof host)
			return cd_pl_lfail(c, item, NULL, "host '%s' is too long", s);
		int hv;

		memcpy(host, s, hlen);
		host[hlen] = '\0';
		hv = cd_host_pattern_valid(host);
		if (hv == -CD_E_DENIED)
			return cd_pl_lfail(c, item,
			                   "name a registrable domain, e.g. '*.example.co.uk'",
			                   "wildcard '%s' covers a public suffix", host);
		if (hv < 0)
			return cd_pl_lfail(c, item, "lower case, no trailing dot, IDNA A-labels",
			                   "host '%s' is not a normalized host", host);
	} else if (!strcmp(key, "ro") || !strcmp(key, "rw")) {
		char path[4096];
		size_t plen = item->len;
		colon = strchr(s, ':');
		if (colon) {
			plen = (size_t)(colon - s);
			if (!canonical_abs(colon + 1))
				return cd_pl_lfail(c, item,
				                   "an absolute path without '.', '..', '//'",
				                   "destination in '%s' is not canonical", s);
		}
		if (plen >= sizeof path)
			return cd_pl_lfail(c, item, NULL, "path '%s' is too long", s);
		memcpy(path, s, plen);
		path[plen] = '\0';
		if (!canonical_abs(path))
			return cd_pl_lfail(c, item, "an absolute path without '.', '..', '//'",
			                   "path '%s' is not canonical", path);
	} else if (!strcmp(key, "cover_files")) {
		if (!item->len || item->len > 255 || memchr(s, '\0', item->len) || s[0] == '/' ||
		    s[item->len - 1] == '/')
			return cd_pl_lfail(c, item, "a glob like '*.secret' or 'conf/token.json'",
			                   "cover_files '%s' is not a relative glob of 1-255 bytes",
			                   s);
	} else if (!strcmp(key, "env")) {
		const char *eq = strchr(s, '=');
		if (!env_name_ok(s, eq ? (size_t)(eq - s) : item->len))
			return cd_pl_lfail(c, item, "NAME or NAME=VALUE",
			                   "env entry '%s' is not valid", s);
	}
	return 0;
}

static int cd_pl_load_profiles(struct lctx *c, const struct cd_ynode *map)
{
	static const char *const scalar_keys[] = { "memory",   "pids",         "timeout",
		                                   "cpu_time", "output_limit", "scratch_size",
		                                   "net",      "workspace",    NULL };
	static const struct keyspec spec[] = {
		{ "memory", 0 },      { "pids", 0 },         { "timeout", 0 },
		{ "cpu_time", 0 },    { "output_limit", 0 }, { "scratch_size", 0 },
		{ "net", 0 },         { "allow_hosts", 0 },  { "ro", 0 },
		{ "rw", 0 },          { "env", 0 },          { "workspace", 0 },
		{ "cover_files", 0 }, { NULL, 0 },
	};
	const struct cd_ynode *k, *set, *sk;
	size_t i = 0;
	int r = cd_pl_expect(c, map, CD_Y_MAP, "profiles");

	if (r < 0)
		return r;
	c->p->profiles = cd_arena_alloc(&c->p->arena, (map->n / 2 + 1) * sizeof *c->p->profiles);
	if (!c->p->profiles)
		return cd_pl_oom(c);
	for (k = map->child; k; k = k->next->next, i++) {
		struct cd_profile *pr = &c->p->profiles[i];
		const char *name;
		size_t j = 0;
		if ((r = cd_pl_get_id(c, k, "profile name", &name)) < 0)
			return r;
		pr->name = name;
		set = k->next;
		if ((r = cd_pl_expect(c, set, CD_Y_MAP, "a profile")) < 0 ||
		    (r = cd_pl_check_keys(c, set, spec, "a profile")) < 0)
			return r;
		pr->settings =
		        cd_arena_alloc(&c->p->arena, (set->n / 2 + 1) * sizeof *pr->settings);
		if (!pr->settings)
			return cd_pl_oom(c);
		for (sk = set->child; sk; sk = sk->next->next, j++) {
			struct cd_profile_setting *st = &pr->settings[j];
			const struct cd_ynode *val = sk->next, *it;
			const char *const *sc;
			int is_scalar = 0;
			st->key = sk->s;
			for (sc = scalar_keys; *sc; sc++)
				if (!strcmp(*sc, sk->s))
					is_scalar = 1;
			if (is_scalar) {
				const char **one;
				if ((r = cd_pl_get_str(c, val, sk->s, &st->key)) < 0)
					return r;
				st->key = sk->s;
				one = cd_arena_alloc(&c->p->arena, sizeof *one);
				if (!one)
					return cd_pl_oom(c);
				one[0] = val->s;
				st->values = one;
				st->nvalues = 1;
				if ((r = check_setting(c, sk->s, val)) < 0)
					return r;
			} else {
				const char **list;
				if ((r = cd_pl_get_str_list(c, val, sk->s, &list, &st->nvalues)) <
				    0)
					return r;
				st->values = list;
				for (it = val->child; it; it = it->next)
					if ((r = check_setting(c, sk->s, it)) < 0)
						return r;
			}
		}
		pr->nsettings = j;
	}
	c->p->nprofiles = i;
	return 0;
}

/* ---- scope ---- */

static int host_hint(const char *h, char *hint, size_t n)
{
	char norm[CD_HOST_MAX];
	const char *base = h;
	size_t i;
	int w;

	for (i = 0; h[i]; i++) {
		if ((unsigned char)h[i] >= 0x80) {
			w = snprintf(hint, n,
			             "a Unicode name must be IDNA2008 U-labels in lower case and "
			             "NFC, or their xn-- A-labels");
			return w < 0 ? -1 : 0;
		}
	}
	if (h[0] == '*' && h[1] == '.')
		base = h + 2;
	if (strchr(base, '*')) {
		w = snprintf(hint, n, "only a leading '*.' is a wildcard");
		return w < 0 ? -1 : 0;
	}
	if (base != h && (base[0] == '[' || strspn(base, "0123456789.") == strlen(base))) {
		w = snprintf(hint, n, "a wildcard covers names, not addresses");
		return w < 0 ? -1 : 0;
	}
	if (base != h && !strchr(base, '.')) {
		w = snprintf(hint, n, "a wildcard needs a name of two labels or more, e.g. '*.%s'",
		             "example.com");
		return w < 0 ? -1 : 0;
	}
	if (cd_host_normalize(base, strlen(base), norm, sizeof norm) >= 0) {
		w = snprintf(hint, n, "write '%s%s'", base == h ? "" : "*.", norm);
		return w < 0 ? -1 : 0;
	}
	w = snprintf(hint, n, "lower case, no trailing dot, IDNA A-labels");
	return w < 0 ? -1 : 0;
}

static int load_args(struct lctx *c, struct cd_rule *g, const struct cd_ynode *map)
{
	static const struct keyspec spec[] = { { "eq", 0 }, { "prefix", 0 }, { "enum", 0 }, { 0 } };
	const struct cd_ynode *k, *op;
	size_t i = 0;
	int r = cd_pl_expect(c, map, CD_Y_MAP, "scope.args");

	if (r < 0)
		return r;
	if (map->n == 0)
		return cd_pl_lfail(c, map, NULL, "scope.args is empty");
	g->args = cd_arena_alloc(&c->p->arena, (map->n / 2) * sizeof *g->args);
	if (!g->args)
		return cd_pl_oom(c);
	for (k = map->child; k; k = k->next->next, i++) {
		struct cd_arg_rule *a = &g->args[i];
		const char *name;
		if ((r = cd_pl_get_id(c, k, "argument name", &name)) < 0)
			return r;
		a->name = (char *)name;
		if ((r = cd_pl_expect(c, k->next, CD_Y_MAP, "an argument constraint")) < 0 ||
		    (r = cd_pl_check_keys(c, k->next, spec, "an argument constraint")) < 0)
			return r;
		if (k->next->n != 2)
			return cd_pl_lfail(c, k->next, "eq: V, prefix: V or enum: [V, ...]",
			                   "argument '%s' needs exactly one of eq, prefix, enum",
			                   name);
		op = k->next->child;
		if (!strcmp(op->s, "enum")) {
			const char **vals;
			a->op = CD_ARG_ENUM;
			if ((r = cd_pl_get_str_list(c, op->next, "enum", &vals, &a->nvalues)) < 0)
				return r;
			a->values = (char **)vals;
		} else {
			a->op = strcmp(op->s, "eq") ? CD_ARG_PREFIX : CD_ARG_EQ;
			if ((r = cd_pl_expect(c, op->next, CD_Y_SCALAR, op->s)) < 0)
				return r;
			if (a->op == CD_ARG_PREFIX && op->next->len == 0)
				return cd_pl_lfail(c, op->next,
				                   "drop the constraint or name a prefix",
				                   "an empty prefix matches everything");
			a->values = cd_arena_alloc(&c->p->arena, sizeof *a->values);
			if (!a->values)
				return cd_pl_oom(c);
			a->values[0] = (char *)op->next->s;
			a->nvalues = 1;
		}
	}
	g->nargs = i;
	return 0;
}

static int load_scope(struct lctx *c, struct cd_rule *g, const struct cd_ynode *scope)
{
	static const struct keyspec spec[] = { { "paths", 0 }, { "hosts", 0 }, { "ports", 0 },
		                               { "argv", 0 },  { "args", 0 },  { "fields", 0 },
		                               { NULL, 0 } };
	const struct cd_ynode *v, *it;
	const char *why;
	char hint[200];
	size_t i;
	int r = cd_pl_expect(c, scope, CD_Y_MAP, "scope");

	if (r < 0)
		return r;
	if (scope->n == 0)
		return cd_pl_lfail(c, scope, "name paths, hosts, ports, argv, args or fields",
		                   "empty scope");
	if ((r = cd_pl_check_keys(c, scope, spec, "scope")) < 0)
		return r;
	g->has_scope = 1;
	if ((v = cd_pl_map_get(scope, "paths"))) {
		if ((r = cd_pl_get_str_list(c, v, "scope.paths", &g->paths, &g->npaths)) < 0)
			return r;
		for (it = v->child, i = 0; it; it = it->next, i++) {
			why = "invalid";
			if (cd_glob_valid(it->s, &why) < 0)
				return cd_pl_lfail(c, it, why, "bad path glob '%s'", it->s);
		}
	}
	if ((v = cd_pl_map_get(scope, "hosts"))) {
		if ((r = cd_pl_get_str_list(c, v, "scope.hosts", &g->hosts, &g->nhosts)) < 0)
			return r;
		for (it = v->child; it; it = it->next) {
			r = cd_host_pattern_valid(it->s);
			if (r == -CD_E_DENIED)
				return cd_pl_lfail(
				        c, it, "name a registrable domain, e.g. '*.example.co.uk'",
				        "wildcard '%s' covers a public suffix", it->s);
			if (r < 0) {
				if (host_hint(it->s, hint, sizeof hint) < 0)
					hint[0] = '\0';
				return cd_pl_lfail(c, it, hint[0] ? hint : NULL,
				                   "host '%s' is not normalized", it->s);
			}
		}
	}
	if ((v = cd_pl_map_get(scope, "ports"))) {
		if ((r = cd_pl_expect(c, v, CD_Y_SEQ, "scope.ports")) < 0)
			return r;
		if (v->n == 0 || v->n > CD_POLICY_MAX_LIST)
			return cd_pl_lfail(c, v, NULL, "scope.ports must list 1 to %d ports",
			                   CD_POLICY_MAX_LIST);
		g->ports = cd_arena_alloc(&c->p->arena, v->n * sizeof *g->ports);
		if (!g->ports)
			return cd_pl_oom(c);
		for (it = v->child, i = 0; it; it = it->next, i++) {
			if (it->type != CD_Y_SCALAR || !it->plain ||
			    cd_port_range_parse(it->s, it->len, &g->ports[i]) < 0)
				return cd_pl_lfail(
				        c, it, "a port 1..65535 or a range like 8000-8080",
				        "bad port '%s'", it->type == CD_Y_SCALAR ? it->s : "");
		}
		g->nports = i;
	}
	if ((v = cd_pl_map_get(scope, "argv"))) {
		if ((r = cd_pl_get_str_list(c, v, "scope.argv", &g->argv, &g->nargv)) < 0)
			return r;
	}
	if ((v = cd_pl_map_get(scope, "args")) && (r = load_args(c, g, v)) < 0)
		return r;
	if ((v = cd_pl_map_get(scope, "fields"))) {
		if ((r = cd_pl_get_str_list(c, v, "scope.fields", &g->fields, &g->nfields)) < 0)
			return r;
	}
	return 0;
}

/* ---- grants and forbid rules ---- */

static int load_actions(struct lctx *c, const struct cd_ynode *v, unsigned *ret)
{
	const struct cd_ynode *it;
	enum cd_action a;
	unsigned mask = 0;
	int r = cd_pl_expect(c, v, CD_Y_SEQ, "actions");

	if (r < 0)
		return r;
	if (v->n == 0)
		return cd_pl_lfail(c, v, "read, create, update, delete, execute, network",
		                   "actions is an empty list");
	for (it = v->child; it; it = it->next) {
		if (it->type != CD_Y_SCALAR || cd_action_parse(it->s, &a) < 0)
			return cd_pl_lfail(
			        c, it, "read, create, update, delete, execute or network",
			        "unknown action class '%s'", it->type == CD_Y_SCALAR ? it->s : "");
		if (mask & (1u << a))
			return cd_pl_lfail(c, it, NULL, "action '%s' listed twice", it->s);
		mask |= 1u << a;
	}
	*ret = mask;
	return 0;
}

static int cd_pl_load_examples(struct lctx *c, const struct cd_ynode *v, const struct cd_rule *of);

static int ref_check(struct lctx *c, const struct cd_ynode *n, const char *what,
                     const struct cd_named *v, size_t nv, const char *id)
{
	if (cd_pl_find_named(v, nv, id))
		return 0;
	return cd_pl_lfail(c, n, NULL, "unknown %s '%s' (declare it under %ss)", what, id, what);
}

/* A plain decimal number ("100", "12.50"): what `below` compares. */
static int decimal_ok(const char *s)
{
	size_t i = 0, digits = 0;

	while (s[i] >= '0' && s[i] <= '9')
		i++, digits++;
	if (!digits || digits > 18)
		return 0;
	if (s[i] == '.') {
		size_t f = ++i;
		while (s[i] >= '0' && s[i] <= '9')
			i++;
		if (i == f || i - f > 9)
			return 0;
	}
	return s[i] == '\0';
}

int cd_decimal_valid(const char *s)
{
	return decimal_ok(s);
}

static int get_count(struct lctx *c, const struct cd_ynode *n, const char *what, long *ret)
{
	uint64_t v;

	if (n->type != CD_Y_SCALAR || !n->plain || cd_parse_u64(n->s, n->len, 1000000, &v) < 0)
		return cd_pl_lfail(c, n, "a whole number from 0 to 1000000", "bad %s", what);
	*ret = (long)v;
	return 0;
}

static const struct cd_approver_rule *find_arule(const struct cd_policy *p, const char *id)
{
	size_t i;

	for (i = 0; i < p->narules; i++)
		if (!strcmp(p->arules[i].id, id))
			return &p->arules[i];
	return NULL;
}

/* approvers: {people: [ID...], rules: [{id, description?, scope?, operands?,
 * max_paths?, below?}]}. */
static int cd_pl_load_approvers(struct lctx *c, const struct cd_ynode *m)
{
	static const struct keyspec spec[] = { { "people", 0 }, { "rules", 0 }, { NULL, 0 } };
	static const struct keyspec rspec[] = { { "id", 1 },        { "description", 0 },
		                                { "scope", 0 },     { "operands", 0 },
		                                { "max_paths", 0 }, { "below", 0 },
		                                { NULL, 0 } };
	static const struct keyspec ospec[] = { { "paths", 1 }, { "max", 0 }, { NULL, 0 } };
	struct cd_policy *p = c->p;
	const struct cd_ynode *v, *it, *k;
	size_t i, j;
	int r;

	if ((r = cd_pl_expect(c, m, CD_Y_MAP, "approvers")) < 0 ||
	    (r = cd_pl_check_keys(c, m, spec, "approvers")) < 0)
		return r;
	if ((v = cd_pl_map_get(m, "people"))) {
		if ((r = cd_pl_get_str_list(c, v, "approvers.people", &p->people, &p->npeople)) < 0)
			return r;
		for (it = v->child; it; it = it->next) {
			const char *id;
			if ((r = cd_pl_get_id(c, it, "approver", &id)) < 0)
				return r;
			if (cd_pl_find_named(p->agents, p->nagents, id))
				return cd_pl_lfail(c, it, "agents never approve",
				                   "approver '%s' is an agent of the policy", id);
		}
	}
	if (!(v = cd_pl_map_get(m, "rules")))
		return 0;
	if ((r = cd_pl_expect(c, v, CD_Y_SEQ, "approvers.rules")) < 0)
		return r;
	p->arules = cd_arena_alloc(&p->arena, (v->n + 1) * sizeof *p->arules);
	if (!p->arules)
		return cd_pl_oom(c);
	for (it = v->child, i = 0; it; it = it->next, i++) {
		struct cd_approver_rule *a = &p->arules[i];
		const struct cd_ynode *o;
		memset(a, 0, sizeof *a);
		a->max_operands = a->max_paths = -1;
		a->mark = it->mark;
		if ((r = cd_pl_expect(c, it, CD_Y_MAP, "an approver rule")) < 0 ||
		    (r = cd_pl_check_keys(c, it, rspec, "an approver rule")) < 0 ||
		    (r = cd_pl_get_id(c, cd_pl_map_get(it, "id"), "id", &a->id)) < 0)
			return r;
		for (j = 0; j < i; j++)
			if (!strcmp(p->arules[j].id, a->id))
				return cd_pl_lfail(c, cd_pl_map_get(it, "id"), NULL,
				                   "duplicate approver rule '%s'", a->id);
		if ((o = cd_pl_map_get(it, "scope")) && (r = load_scope(c, &a->scope, o)) < 0)
			return r;
		if ((o = cd_pl_map_get(it, "operands"))) {
			const struct cd_ynode *w;
			if ((r = cd_pl_expect(c, o, CD_Y_MAP, "operands")) < 0 ||
			    (r = cd_pl_check_keys(c, o, ospec, "operands")) < 0 ||
			    (r = cd_pl_get_str_list(c, cd_pl_map_get(o, "paths"), "operands.paths",
			                            &a->operand_globs, &a->noperand_globs)) < 0)
				return r;
			for (w = cd_pl_map_get(o, "paths")->child; w; w = w->next) {
				const char *why = "invalid";
				if (cd_glob_valid(w->s, &why) < 0)
					return cd_pl_lfail(c, w, why, "bad path glob '%s'", w->s);
			}
			if ((w = cd_pl_map_get(o, "max")) &&
			    (r = get_count(c, w, "operands.max", &a->max_operands)) < 0)
				return r;
		}
		if ((o = cd_pl_map_get(it, "max_paths")) &&
		    (r = get_count(c, o, "max_paths", &a->max_paths)) < 0)
			return r;
		if ((o = cd_pl_map_get(it, "below"))) {
			if ((r = cd_pl_expect(c, o, CD_Y_MAP, "below")) < 0)
				return r;
			if (o->n == 0)
				return cd_pl_lfail(c, o, NULL, "below is empty");
			a->below_names = cd_arena_alloc(&p->arena, o->n / 2 * sizeof(char *));
			a->below_values = cd_arena_alloc(&p->arena, o->n / 2 * sizeof(char *));
			if (!a->below_names || !a->below_values)
				return cd_pl_oom(c);
			for (k = o->child; k; k = k->next->next, a->nbelow++) {
				if ((r = cd_pl_get_id(c, k, "argument name",
				                      &a->below_names[a->nbelow])) < 0)
					return r;
				if (k->next->type != CD_Y_SCALAR || !decimal_ok(k->next->s))
					return cd_pl_lfail(c, k->next,
					                   "a decimal number such as 100 or 99.50",
					                   "bad limit for '%s'", k->s);
				a->below_values[a->nbelow] = k->next->s;
			}
		}
		if (!a->scope.has_scope && !a->noperand_globs && a->max_paths < 0 && !a->nbelow)
			return cd_pl_lfail(c, it, "give it a scope, operands, max_paths or below",
			                   "approver rule '%s' approves everything", a->id);
	}
	p->narules = i;
	return 0;
}

/* A delegated grant's agent: "PARENT/NAME", NAME one id segment, and not
 * an agent of the file (delegation creates sub-agents, it does not add to a
 * declared agent's grants). */
static int subagent_check(struct lctx *c, const struct cd_ynode *n, const char *agent)
{
	size_t pl = strlen(c->temp_parent), depth = 0;
	const char *s;

	if (strncmp(agent, c->temp_parent, pl) != 0 || agent[pl] != '/' || !agent[pl + 1] ||
	    strchr(agent + pl + 1, '/'))
		return cd_pl_lfail(c, n, "name it PARENT/NAME",
		                   "agent '%s' is not a sub-agent of '%s'", agent, c->temp_parent);
	if (cd_pl_find_named(c->p->agents, c->p->nagents, agent))
		return cd_pl_lfail(c, n, "delegate to a new sub-agent name",
		                   "agent '%s' is declared in the policy", agent);
	for (s = agent; (s = strchr(s, '/')); s++)
		depth++;
	if (depth > CD_DELEGATION_MAX_DEPTH)
		return cd_pl_lfail(c, n, NULL, "agent '%s' is more than %d delegations deep", agent,
		                   CD_DELEGATION_MAX_DEPTH);
	return 0;
}

/* mask: [TYPE, ...] (each redacted) or {TYPE: ACTION, ...}. */
static int load_mask(struct lctx *c, const struct cd_ynode *v, struct cd_mask_rules *ret)
{
	static const char types_hint[] = "email, phone, card, iban, ssn, ipv4, ipv6 or secret";
	const struct cd_ynode *it;
	enum cd_scan_type t;
	enum cd_mask_action a;

	if (v->type != CD_Y_SEQ && v->type != CD_Y_MAP)
		return cd_pl_lfail(
		        c, v, "mask: [email, card] or mask: {email: pseudonymize}",
		        "mask must be a list of data types or a mapping of type to action");
	if (v->n == 0)
		return cd_pl_lfail(c, v, "drop mask: or name a data type", "mask is empty");
	for (it = v->child; it; it = v->type == CD_Y_MAP ? it->next->next : it->next) {
		if (it->type != CD_Y_SCALAR || cd_scan_type_parse(it->s, &t) < 0)
			return cd_pl_lfail(c, it, types_hint, "unknown data type '%s' in mask",
			                   it->type == CD_Y_SCALAR ? it->s : "");
		a = CD_MASK_REDACT;
		if (v->type == CD_Y_MAP) {
			const struct cd_ynode *av = it->next;
			if (av->type != CD_Y_SCALAR || cd_mask_action_parse(av->s, &a) < 0 ||
			    a == CD_MASK_NONE)
				return cd_pl_lfail(c, av, "redact, pseudonymize or drop",
				                   "unknown mask action '%s' for '%s'",
				                   av->type == CD_Y_SCALAR ? av->s : "", it->s);
		}
		if (ret->action[t] != CD_MASK_NONE)
			return cd_pl_lfail(c, it, NULL, "data type '%s' is named twice in mask",
			                   it->s);
		ret->action[t] = (unsigned char)a;
	}
	return 0;
}

/* A field path: dot-separated names, none empty. */
static int field_path_valid(const char *s)
{
	size_t i, seg = 0;

	for (i = 0; s[i]; i++) {
		if (s[i] == '.') {
			if (!seg)
				return 0;
			seg = 0;
		} else if ((unsigned char)s[i] < 0x20 || s[i] == 0x7f) {
			return 0;
		} else {
			seg++;
		}
	}
	return seg > 0;
}

/* mask:, fields: and require_task: of a grant. */
static int load_minimize(struct lctx *c, const struct cd_ynode *m, struct cd_rule *g)
{
	const struct cd_ynode *v, *it;
	int r;

	if ((v = cd_pl_map_get(m, "mask")) && (r = load_mask(c, v, &g->mask)) < 0)
		return r;
	if ((v = cd_pl_map_get(m, "fields"))) {
		if ((r = cd_pl_get_str_list(c, v, "fields", &g->keep_fields, &g->nkeep_fields)) < 0)
			return r;
		for (it = v->child; it; it = it->next)
			if (!field_path_valid(it->s))
				return cd_pl_lfail(c, it, "dotted names like customer.email",
				                   "bad field path '%s'", it->s);
	}
	if ((v = cd_pl_map_get(m, "require_task"))) {
		if (v->type != CD_Y_SCALAR || !v->plain ||
		    (strcmp(v->s, "true") && strcmp(v->s, "false")))
			return cd_pl_lfail(c, v, "true or false", "require_task must be a boolean");
		g->require_task = !strcmp(v->s, "true");
		if (g->require_task && g->task)
			return cd_pl_lfail(c, v, "drop one of them",
			                   "grant '%s' names a task; require_task adds nothing",
			                   g->id);
	}
	return 0;
}

static int cd_pl_load_rule(struct lctx *c, const struct cd_ynode *m, const struct cd_ynode *tools,
                           int forbid, struct cd_rule *g)
{
	static const struct keyspec gspec[] = {
		{ "id", 1 },        { "agent", 1 },
		{ "task", 0 },      { "tool", 1 },
		{ "actions", 1 },   { "scope", 0 },
		{ "profile", 0 },   { "approval", 0 },
		{ "owner", 1 },     { "justification", 1 },
		{ "review_by", 1 }, { "expires", 1 },
		{ "examples", 0 },  { "mask", 0 },
		{ "fields", 0 },    { "require_task", 0 },
		{ NULL, 0 },
	};
	static const struct keyspec fspec[] = {
		{ "id", 1 },    { "agent", 0 },  { "task", 0 },  { "tool", 0 }, { "actions", 0 },
		{ "scope", 0 }, { "reason", 1 }, { "owner", 0 }, { NULL, 0 },
	};
	const char *what = forbid ? "a forbid rule" : "a grant";
	const struct cd_ynode *v;
	const struct cd_named *tool = NULL;
	int r;

	if ((r = cd_pl_expect(c, m, CD_Y_MAP, what)) < 0 ||
	    (r = cd_pl_check_keys(c, m, forbid ? fspec : gspec, what)) < 0)
		return r;
	g->forbid = forbid;
	g->mark = m->mark;
	g->review_by = g->expires = CD_TIME_NEVER;
	g->actions = (1u << CD_ACTION_COUNT) - 1;
	g->agent = g->tool = "*";
	if ((r = cd_pl_get_id(c, cd_pl_map_get(m, "id"), "id", &g->id)) < 0)
		return r;
	if (c->temp && (v = cd_pl_map_get(m, "examples")))
		return cd_pl_lfail(c, v, NULL, "a temporary grant has no examples");
	if ((v = cd_pl_map_get(m, "agent"))) {
		if (forbid && v->type == CD_Y_SCALAR && !strcmp(v->s, "*"))
			g->agent = "*";
		else if ((r = cd_pl_get_id(c, v, "agent", &g->agent)) < 0)
			return r;
		else if (c->temp == CD_TEMP_DELEGATED)
			r = subagent_check(c, v, g->agent);
		else
			r = ref_check(c, v, "agent", c->p->agents, c->p->nagents, g->agent);
		if (r < 0)
			return r;
	}
	if ((v = cd_pl_map_get(m, "task"))) {
		if ((r = cd_pl_get_id(c, v, "task", &g->task)) < 0 ||
		    (r = ref_check(c, v, "task", c->p->tasks, c->p->ntasks, g->task)) < 0)
			return r;
	}
	if ((v = cd_pl_map_get(m, "tool"))) {
		if (forbid && v->type == CD_Y_SCALAR && !strcmp(v->s, "*"))
			g->tool = "*";
		else if ((r = cd_pl_get_id(c, v, "tool", &g->tool)) < 0 ||
		         (r = ref_check(c, v, "tool", c->p->tools, c->p->ntools, g->tool)) < 0)
			return r;
		tool = cd_pl_find_named(c->p->tools, c->p->ntools, g->tool);
	}
	if ((v = cd_pl_map_get(m, "actions")) && (r = load_actions(c, v, &g->actions)) < 0)
		return r;
	if ((v = cd_pl_map_get(m, "scope")) && (r = load_scope(c, g, v)) < 0)
		return r;
	if ((v = cd_pl_map_get(m, "owner")) && (r = cd_pl_get_str(c, v, "owner", &g->owner)) < 0)
		return r;
	if (forbid)
		return cd_pl_get_str(c, cd_pl_map_get(m, "reason"), "reason", &g->reason);

	if ((r = cd_pl_get_str(c, cd_pl_map_get(m, "justification"), "justification",
	                       &g->justification)) < 0 ||
	    (r = cd_pl_get_time(c, cd_pl_map_get(m, "review_by"), "review_by", &g->review_by)) <
	            0 ||
	    (r = cd_pl_get_time(c, cd_pl_map_get(m, "expires"), "expires", &g->expires)) < 0)
		return r;
	g->expires_mark = cd_pl_map_get(m, "expires")->mark;
	if ((v = cd_pl_map_get(m, "profile"))) {
		if ((r = cd_pl_get_id(c, v, "profile", &g->profile)) < 0)
			return r;
		if (!cd_pl_find_profile(c->p, g->profile))
			return cd_pl_lfail(c, v, NULL,
			                   "unknown profile '%s' (declare it under profiles)",
			                   g->profile);
	}
	if ((v = cd_pl_map_get(m, "approval"))) {
		const char *a;
		if ((r = cd_pl_get_str(c, v, "approval", &a)) < 0)
			return r;
		if (!strcmp(a, "human"))
			g->approval = a;
		else if (!strncmp(a, "policy:", 7) && a[7] && find_arule(c->p, a + 7))
			g->approval = a;
		else if (!strncmp(a, "policy:", 7) && a[7])
			return cd_pl_lfail(c, v, "declare it under approvers.rules",
			                   "unknown approver rule '%s'", a + 7);
		else if (strcmp(a, "none"))
			return cd_pl_lfail(c, v, "none, human or policy:NAME",
			                   "unknown approval '%s'", a);
	}
	if ((r = load_minimize(c, m, g)) < 0)
		return r;
	if ((g->actions & (1u << CD_ACTION_DELETE)) && !g->approval)
		return cd_pl_lfail(c, cd_pl_map_get(m, "actions"), "set approval: human",
		                   "grant '%s' allows delete without approval", g->id);
	/* A grant covers the scoped attributes its tool carries, or it would
	 * grant all of them. */
	if (tool && tool->kind && !strcmp(tool->kind, "command") && !g->nargv)
		return cd_pl_lfail(c, m, "add scope.argv, e.g. argv: [git, status]",
		                   "grant '%s' on command tool '%s' has no argv scope", g->id,
		                   g->tool);
	/* A grant with argv on an MCP server's tool is its launch grant
	 * (`cordon mcp` starts the server as a decided run): calls never carry
	 * argv, so it covers no call and needs no path or host scope. */
	if (tool && tool->kind && !strcmp(tool->kind, "mcp") && g->nargv)
		return 0;
	if (tool && cd_pl_tool_has_arg_kind(tools, g->tool, "path") && !g->npaths)
		return cd_pl_lfail(c, m, "add scope.paths",
		                   "grant '%s' on tool '%s' has no path scope", g->id, g->tool);
	if (tool && cd_pl_tool_has_arg_kind(tools, g->tool, "host") && !g->nhosts)
		return cd_pl_lfail(c, m, "add scope.hosts",
		                   "grant '%s' on tool '%s' has no host scope", g->id, g->tool);
	if (!g->has_scope && tool && tool->kind && strcmp(tool->kind, "command") == 0)
		return cd_pl_lfail(c, m, "add a scope", "grant '%s' has no scope", g->id);
	return 0;
}

static int cmp_rule_id(const void *a, const void *b)
{
	const struct cd_rule *x = *(const struct cd_rule *const *)a;
	const struct cd_rule *y = *(const struct cd_rule *const *)b;
	return strcmp(x->id, y->id);
}

static int cd_pl_load_rules(struct lctx *c, const struct cd_ynode *grants,
                            const struct cd_ynode *forbid, const struct cd_ynode *tools)
{
	struct cd_policy *p = c->p;
	const struct cd_ynode *it;
	size_t ng = grants ? grants->n : 0, nf = forbid ? forbid->n : 0, i = 0;
	int r;

	if (grants && (r = cd_pl_expect(c, grants, CD_Y_SEQ, "grants")) < 0)
		return r;
	if (forbid && (r = cd_pl_expect(c, forbid, CD_Y_SEQ, "forbid")) < 0)
		return r;
	if (ng + nf > CD_POLICY_MAX_GRANTS)
		return cd_err_set(c->err, -CD_E_LIMIT, "%s: more than %d grants and forbid rules",
		                  c->name, CD_POLICY_MAX_GRANTS);
	p->rules = cd_arena_alloc(&p->arena, (ng + nf + 1) * sizeof *p->rules);
	p->by_id = cd_arena_alloc(&p->arena, (ng + nf + 1) * sizeof *p->by_id);
	if (!p->rules || !p->by_id)
		return cd_pl_oom(c);
	for (it = grants ? grants->child : NULL; it; it = it->next, i++)
		if ((r = cd_pl_load_rule(c, it, tools, 0, &p->rules[i])) < 0)
			return r;
	p->ngrants = i;
	for (it = forbid ? forbid->child : NULL; it; it = it->next, i++)
		if ((r = cd_pl_load_rule(c, it, tools, 1, &p->rules[i])) < 0)
			return r;
	p->nforbids = i - p->ngrants;
	for (i = 0; i < ng + nf; i++)
		p->by_id[i] = &p->rules[i];
	qsort(p->by_id, ng + nf, sizeof *p->by_id, cmp_rule_id);
	for (i = 1; i < ng + nf; i++) {
		if (strcmp(p->by_id[i - 1]->id, p->by_id[i]->id) == 0) {
			const struct cd_rule *a = p->by_id[i - 1], *b = p->by_id[i];
			const struct cd_rule *later = b->mark.line > a->mark.line ? b : a;
			const struct cd_rule *first = later == b ? a : b;
			struct cd_ynode fake = { .mark = later->mark };
			return cd_pl_lfail(c, &fake, NULL,
			                   "duplicate rule id '%s' (first at line %u)", later->id,
			                   first->mark.line);
		}
	}
	/* Examples after every rule exists. */
	i = 0;
	for (it = grants ? grants->child : NULL; it; it = it->next, i++) {
		const struct cd_ynode *ex = cd_pl_map_get(it, "examples");
		if (ex && (r = cd_pl_load_examples(c, ex, &p->rules[i])) < 0)
			return r;
	}
	return 0;
}

/* ---- examples ---- */

static int load_request(struct lctx *c, const struct cd_ynode *m, const struct cd_rule *of,
                        int expect_allow, struct cd_example *ex)
{
	static const struct keyspec spec[] = {
		{ "agent", 0 },  { "task", 0 }, { "tool", 0 }, { "action", 0 }, { "path", 0 },
		{ "paths", 0 },  { "host", 0 }, { "port", 0 }, { "argv", 0 },   { "args", 0 },
		{ "fields", 0 }, { "at", 0 },   { NULL, 0 },
	};
	struct cd_request *q = &ex->req;
	const struct cd_ynode *v;
	uint64_t port;
	int r;

	if ((r = cd_pl_expect(c, m, CD_Y_MAP, "an example")) < 0 ||
	    (r = cd_pl_check_keys(c, m, spec, "an example")) < 0)
		return r;
	cd_request_init(q);
	ex->mark = m->mark;
	ex->of = of;
	ex->expect_allow = expect_allow;
	if (of) {
		q->agent = of->agent;
		q->task = of->task;
		q->tool = of->tool;
		q->action = (enum cd_action)__builtin_ctz(of->actions);
	}
	if ((v = cd_pl_map_get(m, "agent")) && (r = cd_pl_get_str(c, v, "agent", &q->agent)) < 0)
		return r;
	if ((v = cd_pl_map_get(m, "task")) && (r = cd_pl_get_str(c, v, "task", &q->task)) < 0)
		return r;
	if ((v = cd_pl_map_get(m, "tool")) && (r = cd_pl_get_str(c, v, "tool", &q->tool)) < 0)
		return r;
	if ((v = cd_pl_map_get(m, "action"))) {
		if (v->type != CD_Y_SCALAR || cd_action_parse(v->s, &q->action) < 0)
			return cd_pl_lfail(c, v, "read, create, update, delete, execute or network",
			                   "unknown action class in example");
	} else if (!of) {
		return cd_pl_lfail(c, m, NULL, "missing required key 'action' in an example");
	}
	if (!q->agent || !q->tool)
		return cd_pl_lfail(c, m, NULL, "an example outside a grant names agent and tool");
	if ((v = cd_pl_map_get(m, "path"))) {
		const char **one = cd_arena_alloc(&c->p->arena, sizeof *one);
		if (!one)
			return cd_pl_oom(c);
		if ((r = cd_pl_expect(c, v, CD_Y_SCALAR, "path")) < 0)
			return r;
		one[0] = v->s;
		q->paths = one;
		q->npaths = 1;
	}
	if ((v = cd_pl_map_get(m, "paths"))) {
		const char **list;
		if (q->npaths)
			return cd_pl_lfail(c, v, NULL, "use path or paths, not both");
		if ((r = cd_pl_get_str_list(c, v, "paths", &list, &q->npaths)) < 0)
			return r;
		q->paths = list;
	}
	if ((v = cd_pl_map_get(m, "host")) && (r = cd_pl_expect(c, v, CD_Y_SCALAR, "host")) == 0)
		q->host = v->s;
	if (r < 0)
		return r;
	if ((v = cd_pl_map_get(m, "port"))) {
		if (v->type != CD_Y_SCALAR || !v->plain ||
		    cd_parse_u64(v->s, v->len, 65535, &port) < 0)
			return cd_pl_lfail(c, v, "0..65535", "bad port in example");
		q->port = (long)port;
	}
	if ((v = cd_pl_map_get(m, "argv"))) {
		const char **list;
		if ((r = cd_pl_get_str_list(c, v, "argv", &list, &q->argc)) < 0)
			return r;
		q->argv = list;
	}
	if ((v = cd_pl_map_get(m, "args"))) {
		const struct cd_ynode *k;
		struct cd_req_arg *args;
		size_t i = 0;
		if ((r = cd_pl_expect(c, v, CD_Y_MAP, "args")) < 0)
			return r;
		args = cd_arena_alloc(&c->p->arena, (v->n / 2 + 1) * sizeof *args);
		if (!args)
			return cd_pl_oom(c);
		for (k = v->child; k; k = k->next->next, i++) {
			if ((r = cd_pl_expect(c, k->next, CD_Y_SCALAR, "an argument value")) < 0)
				return r;
			args[i].name = k->s;
			args[i].value = k->next->s;
		}
		q->args = args;
		q->nargs = i;
	}
	if ((v = cd_pl_map_get(m, "fields"))) {
		const char **list;
		if ((r = cd_pl_get_str_list(c, v, "fields", &list, &q->nfields)) < 0)
			return r;
		q->fields = list;
	}
	if ((v = cd_pl_map_get(m, "at"))) {
		if ((r = cd_pl_get_time(c, v, "at", &q->now)) < 0)
			return r;
		ex->has_at = 1;
	}
	return 0;
}

static int cd_pl_load_examples(struct lctx *c, const struct cd_ynode *v, const struct cd_rule *of)
{
	static const struct keyspec spec[] = { { "allow", 0 }, { "deny", 0 }, { NULL, 0 } };
	struct cd_policy *p = c->p;
	const struct cd_ynode *list, *it;
	size_t add = 0, pass;
	int r;

	if ((r = cd_pl_expect(c, v, CD_Y_MAP, "examples")) < 0 ||
	    (r = cd_pl_check_keys(c, v, spec, "examples")) < 0)
		return r;
	for (pass = 0; pass < 2; pass++) {
		list = cd_pl_map_get(v, pass ? "deny" : "allow");
		if (!list)
			continue;
		if ((r = cd_pl_expect(c, list, CD_Y_SEQ,
		                      pass ? "examples.deny" : "examples.allow")) < 0)
			return r;
		add += list->n;
	}
	if (add == 0)
		return cd_pl_lfail(c, v, "list requests under allow: and deny:", "empty examples");
	/* Room was counted by count_examples() before any was loaded. */
	if (p->nexamples + add > c->examples_cap)
		return cd_pl_lfail(c, v, NULL, "too many examples");
	for (pass = 0; pass < 2; pass++) {
		list = cd_pl_map_get(v, pass ? "deny" : "allow");
		for (it = list ? list->child : NULL; it; it = it->next) {
			r = load_request(c, it, of, !pass, &p->examples[p->nexamples]);
			if (r < 0)
				return r;
			p->nexamples++;
		}
	}
	return 0;
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
static int cd_pl_count_examples(struct lctx *c, const struct cd_ynode *root)
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
		{ "id", 1 }, { "owner", 1 }, { "description", 0 }, { NULL, 0 }
	};
	static const struct keyspec task_spec[] = {
		{ "id", 1 }, { "owner", 0 }, { "description", 0 }, { NULL, 0 }
	};
	static const struct keyspec tool_spec[] = { { "id", 1 },          { "kind", 1 },
		                                    { "description", 0 }, { "operations", 0 },
		                                    { "args", 0 },        { "pins", 0 },
		                                    { NULL, 0 } };
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

/* ---- temporary grants ---- */

int64_t cd_policy_break_glass_max_ttl(const struct cd_policy *p)
{
	return p ? p->break_glass_max_ttl : CD_BREAK_GLASS_DEFAULT_TTL;
}

const struct cd_rule *cd_policy_rule(const struct cd_policy *p, const char *id)
{
	size_t lo = 0, hi = p->ngrants + p->nforbids, i;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = strcmp(p->by_id[mid]->id, id);
		if (c == 0)
			return p->by_id[mid];
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (i = 0; i < p->ntemps; i++)
		if (strcmp(p->temps[i]->id, id) == 0)
			return p->temps[i];
	return NULL;
}

enum cd_temp_kind cd_policy_temp_kind(const struct cd_policy *p, const char *id)
{
	const struct cd_rule *g = p && id ? cd_policy_rule(p, id) : NULL;
	return g ? g->temp : 0;
}

int64_t cd_policy_temp_expires(const struct cd_policy *p, const char *id)
{
	const struct cd_rule *g = p && id ? cd_policy_rule(p, id) : NULL;
	return g && g->temp ? g->expires : 0;
}

int cd_policy_parse_temp(struct cd_policy *p, enum cd_temp_kind kind, const char *id,
                         const char *parent, const char *grant_json, struct cd_rule **ret,
                         struct cd_err *err)
{
	char name[128];
	struct cd_ynode *root;
	struct cd_rule *g;
	struct lctx c;
	int r;

	if (!p || !id || !grant_json ||
	    (kind != CD_TEMP_BREAK_GLASS && kind != CD_TEMP_DELEGATED) ||
	    (kind == CD_TEMP_DELEGATED && (!parent || !*parent)))
		return cd_err_set(err, -EINVAL, "temporary grant: bad arguments");
	snprintf(name, sizeof name, "%s grant '%.64s'",
	         kind == CD_TEMP_BREAK_GLASS ? "break-glass" : "delegated", id);
	c.p = p;
	c.name = name;
	c.err = err;
	c.examples_cap = 0;
	c.temp = kind;
	c.temp_parent = kind == CD_TEMP_DELEGATED ? parent : NULL;
	if (strlen(grant_json) > CD_POLICY_MAX_SCALAR * 16)
		return cd_err_set(err, -CD_E_LIMIT, "%s: too large", name);
	if ((r = cd_yaml_parse(&p->arena, name, grant_json, strlen(grant_json), &root, err)) < 0)
		return r;
	g = cd_arena_alloc(&p->arena, sizeof *g);
	if (!g)
		return cd_pl_oom(&c);
	memset(g, 0, sizeof *g);
	if ((r = cd_pl_load_rule(&c, root, p->tools_node, 0, g)) < 0)
		return r;
	if (strcmp(g->id, id) != 0)
		return cd_pl_lfail(&c, root, NULL, "id '%s' is not '%s'", g->id, id);
	if (cd_policy_rule(p, id))
		return cd_pl_lfail(&c, root, NULL, "id '%s' is already taken", id);
	g->temp = kind;
	g->parent = c.temp_parent ? cd_arena_strndup(&p->arena, parent, strlen(parent)) : NULL;
	if (c.temp_parent && !g->parent)
		return cd_pl_oom(&c);
	*ret = g;
	return 0;
}

/* A break-glass grant widens what an agent may touch, never how much of
 * the data it sees (an incident ticket is no data-protection review): it
 * carries the data minimization of every grant the file gives the same
 * agent on the same tool, whatever their scope, task, approval or expiry.
 * A type any of them masks is masked (the strictest action wins), a task
 * is required when any of them requires one, and a field none of them
 * keeps is cut (when each of them scopes fields, their lists together
 * become a second list the result must pass).  The policy in force
 * decides this at every use, as for the rest of the grant. */
static int break_glass_inherit(struct cd_policy *p, struct cd_rule *g)
{
	const struct cd_rule *const *v;
	size_t n = cd_policy_grants_of(p, g->agent, g->tool, &v), i, nf = 0, k = 0;
	int scoped = n > 0, same_profile = n > 0;

	/* The sandbox too: when every such grant names one profile, the
	 * break-glass grant runs under it (else it keeps its own, and a
	 * request matched with a grant of another profile is denied). */
	for (i = 0; i < n; i++)
		if (!v[0]->profile || !v[i]->profile || strcmp(v[i]->profile, v[0]->profile) != 0)
			same_profile = 0;
	if (!g->profile && same_profile)
		g->profile = v[0]->profile;
	for (i = 0; i < n; i++) {
		cd_mask_rules_merge(&g->mask, &v[i]->mask);
		if (v[i]->require_task && !g->task)
			g->require_task = 1;
		if (!v[i]->nkeep_fields)
			scoped = 0;
		else if (nf > SIZE_MAX / sizeof *g->inherited_fields - v[i]->nkeep_fields)
			return -ENOMEM;
		nf += v[i]->nkeep_fields;
	}
	if (!scoped)
		return 0;
	g->inherited_fields = cd_arena_alloc(&p->arena, nf * sizeof *g->inherited_fields);
	if (!g->inherited_fields)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		memcpy(g->inherited_fields + k, v[i]->keep_fields,
		       v[i]->nkeep_fields * sizeof *g->inherited_fields);
		k += v[i]->nkeep_fields;
	}
	g->ninherited_fields = nf;
	return 0;
}

int cd_policy_temp_drop(struct cd_policy *p, const char *id)
{
	size_t i;

	for (i = 0; p && i < p->ntemps; i++) {
		if (strcmp(p->temps[i]->id, id) != 0)
			continue;
		/* The order of the temporary grants carries no meaning (each
		 * decision sorts its ids); the rule stays in the arena. */
		p->temps[i] = p->temps[--p->ntemps];
		cd_policy_mask_union_update(p);
		return 0;
	}
	return -ENOENT;
}

int cd_policy_add_temp(struct cd_policy *p, enum cd_temp_kind kind, const char *id,
                       const char *parent, const char *grant_json, int64_t created,
                       struct cd_err *err)
{
	struct cd_rule *g;
	int r;

	if ((r = cd_policy_parse_temp(p, kind, id, parent, grant_json, &g, err)) < 0)
		return r;
	/* The policy in force caps a break-glass grant, whatever it was
	 * created with. */
	if (kind == CD_TEMP_BREAK_GLASS && created <= INT64_MAX - p->break_glass_max_ttl &&
	    g->expires > created + p->break_glass_max_ttl)
		g->expires = created + p->break_glass_max_ttl;
	if (kind == CD_TEMP_BREAK_GLASS && break_glass_inherit(p, g) < 0)
		return cd_err_set(err, -ENOMEM, "out of memory");
	if (p->ntemps == p->temps_cap) {
		size_t cap = p->temps_cap ? 2 * p->temps_cap : 8;
		const struct cd_rule **v = realloc(p->temps, cap * sizeof *v);
		if (!v)
			return cd_err_set(err, -ENOMEM, "out of memory");
		p->temps = v;
		p->temps_cap = cap;
	}
	p->temps[p->ntemps++] = g;
	cd_mask_rules_merge(&p->mask_union, &g->mask);
	return 0;
}

size_t cd_policy_agents(const struct cd_policy *p, const char **out, size_t max)
{
	size_t i;

	for (i = 0; p && i < p->nagents && i < max; i++)
		out[i] = p->agents[i].id;
	return p ? p->nagents : 0;
}
