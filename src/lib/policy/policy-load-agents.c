/* policy-load-agents.c — the agents, tasks and tools lists, and the
 * profiles (a sandbox's settings by name), of a policy being loaded
 * (policy-load.c).
 *
 * Trust boundary: the same as policy-load.c's: the YAML tree is shaped by
 * an untrusted file; every key is known, every value has its type, every
 * id is unique and every setting is checked, or nothing is loaded. */
#include "policy-load-int.h"
#include "tool-url.h"

#include "match-host.h"
#include "util/match.h"
#include "util/num.h"
#include "util/util.h"

/* ---- agents, tasks, tools ---- */

/* operations: {NAME: ACTION} — a tool's operations and their action classes. */
static int load_operations(struct lctx *c, const struct cd_ynode *v, struct cd_named *x)
{
	const struct cd_ynode *k;
	enum cd_action a;
	int r;

	if ((r = cd_pl_expect(c, v, CD_Y_MAP, "operations")) < 0)
		return r;
	x->op_names = cd_arena_alloc(&c->p->arena, (v->n / 2 + 1) * sizeof(char *));
	x->op_actions = cd_arena_alloc(&c->p->arena, (v->n / 2 + 1) * sizeof(unsigned));
	if (!x->op_names || !x->op_actions)
		return cd_pl_oom(c);
	for (k = v->child; k; k = k->next->next) {
		if (k->next->type != CD_Y_SCALAR || cd_action_parse(k->next->s, &a) < 0)
			return cd_pl_lfail(c, k->next,
			                   "read, create, update, delete, execute or network",
			                   "operation '%s' needs an action class", k->s);
		x->op_names[x->nops] = k->s;
		x->op_actions[x->nops++] = (unsigned)a;
	}
	return 0;
}

/* args: {NAME: KIND} — what each of a tool's arguments names. */
static int load_arg_kinds(struct lctx *c, const struct cd_ynode *v, struct cd_named *x)
{
	const struct cd_ynode *k;
	int r;

	if ((r = cd_pl_expect(c, v, CD_Y_MAP, "args")) < 0)
		return r;
	x->arg_names = cd_arena_alloc(&c->p->arena, (v->n / 2 + 1) * sizeof(char *));
	x->arg_kinds = cd_arena_alloc(&c->p->arena, (v->n / 2 + 1) * sizeof(char *));
	if (!x->arg_names || !x->arg_kinds)
		return cd_pl_oom(c);
	for (k = v->child; k; k = k->next->next) {
		const struct cd_ynode *t = k->next;
		if (t->type != CD_Y_SCALAR ||
		    (strcmp(t->s, "path") && strcmp(t->s, "host") && strcmp(t->s, "port") &&
		     strcmp(t->s, "record") && strcmp(t->s, "value")))
			return cd_pl_lfail(c, t, "path, host, port, record or value",
			                   "argument '%s' needs a kind", k->s);
		x->arg_names[x->nargkinds] = k->s;
		x->arg_kinds[x->nargkinds++] = t->s;
	}
	return 0;
}

/* pins: {TOOL: SHA256} — MCP tool definitions approved by the file itself
 * (lower-case hex of `cordon mcp pins`). */
static int load_pins(struct lctx *c, const struct cd_ynode *v, struct cd_named *x)
{
	const struct cd_ynode *k;
	int r;

	if ((r = cd_pl_expect(c, v, CD_Y_MAP, "pins")) < 0)
		return r;
	if (!x->kind || strcmp(x->kind, "mcp") != 0)
		return cd_pl_lfail(c, v, "only MCP servers have pins", "pins on a %s tool",
		                   x->kind ? x->kind : "?");
	x->pin_names = cd_arena_alloc(&c->p->arena, (v->n / 2 + 1) * sizeof(char *));
	x->pin_shas = cd_arena_alloc(&c->p->arena, (v->n / 2 + 1) * sizeof(char *));
	if (!x->pin_names || !x->pin_shas)
		return cd_pl_oom(c);
	for (k = v->child; k; k = k->next->next) {
		const struct cd_ynode *t = k->next;
		if (t->type != CD_Y_SCALAR || t->len != 64 ||
		    strspn(t->s, "0123456789abcdef") != 64)
			return cd_pl_lfail(c, t,
			                   "64 lower-case hex digits, as 'cordon mcp "
			                   "pins list' shows",
			                   "bad pin for '%s'", k->s);
		x->pin_names[x->npins] = k->s;
		x->pin_shas[x->npins++] = t->s;
	}
	return 0;
}

/* url: and secret: of a remote MCP server (tool-url.h). */
static int load_remote(struct lctx *c, const struct cd_ynode *it, struct cd_named *x)
{
	const struct cd_ynode *u = cd_pl_map_get(it, "url"), *sec = cd_pl_map_get(it, "secret");
	struct cd_tool_url parsed;
	struct cd_err uerr = { 0, "" };
	int r;

	if (!u && !sec)
		return 0;
	if (!u)
		return cd_pl_lfail(c, sec, "secret: goes with url:", "a secret without a url");
	if (!x->kind || strcmp(x->kind, "mcp") != 0 || strchr(x->id, '/'))
		return cd_pl_lfail(c, u,
		                   "url: names a remote MCP server: a tool of kind mcp "
		                   "whose id is the server's name",
		                   "url on tool '%s'", x->id);
	if ((r = cd_pl_get_str(c, u, "url", &x->url)) < 0)
		return r;
	if (cd_tool_url_parse(x->url, &parsed, &uerr) < 0)
		return cd_pl_lfail(c, u, "https://HOST[:PORT]/PATH, or http:// to an IP address",
		                   "%s", uerr.msg);
	if (!sec)
		return 0;
	if ((r = cd_pl_get_str(c, sec, "secret", &x->secret)) < 0)
		return r;
	if (!x->secret[0] ||
	    strspn(x->secret, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
	                      "0123456789_") != strlen(x->secret))
		return cd_pl_lfail(c, sec, "a secret's name: letters, digits and '_'",
		                   "bad secret name");
	return 0;
}

/* shared: true on a launched MCP server (cd_named.shared). */
static int load_shared(struct lctx *c, const struct cd_ynode *it, struct cd_named *x)
{
	const struct cd_ynode *v = cd_pl_map_get(it, "shared");

	if (!v)
		return 0;
	if (v->type != CD_Y_SCALAR || !v->plain || (strcmp(v->s, "true") && strcmp(v->s, "false")))
		return cd_pl_lfail(c, v, "true or false", "shared must be a boolean");
	if (!x->kind || strcmp(x->kind, "mcp") != 0 || strchr(x->id, '/') || x->url)
		return cd_pl_lfail(c, v,
		                   "shared: goes on a launched MCP server: a tool of kind mcp "
		                   "whose id is the server's name, without url:",
		                   "shared on tool '%s'", x->id);
	x->shared = !strcmp(v->s, "true");
	return 0;
}

/* mcp_front: {max_sessions: N, max_request: SIZE, max_calls_per_minute:
 * N} on an agent (cd_named.limits): each optional, none zero. */
static int load_limits(struct lctx *c, const struct cd_ynode *it, struct cd_named *x)
{
	static const struct keyspec spec[] = { { "max_sessions", 0 },
		                               { "max_request", 0 },
		                               { "max_calls_per_minute", 0 },
		                               { NULL, 0 } };
	const struct cd_ynode *m = cd_pl_map_get(it, "mcp_front"), *v;
	uint64_t n;
	int r;

	if (!m)
		return 0;
	if ((r = cd_pl_expect(c, m, CD_Y_MAP, "mcp_front")) < 0 ||
	    (r = cd_pl_check_keys(c, m, spec, "mcp_front")) < 0)
		return r;
	if ((v = cd_pl_map_get(m, "max_sessions"))) {
		if (v->type != CD_Y_SCALAR ||
		    cd_parse_u64(v->s, strlen(v->s), CD_AGENT_MAX_SESSIONS, &n) < 0 || !n)
			return cd_pl_lfail(c, v, "a number from 1 to 256", "bad max_sessions");
		x->limits.max_sessions = (unsigned)n;
	}
	if ((v = cd_pl_map_get(m, "max_request"))) {
		if (v->type != CD_Y_SCALAR || cd_parse_size(v->s, 0, &n) < 0 ||
		    n > CD_AGENT_MAX_REQUEST)
			return cd_pl_lfail(c, v, "a size from 1 to 16M, e.g. 64K",
			                   "bad max_request");
		x->limits.max_request = n;
	}
	if ((v = cd_pl_map_get(m, "max_calls_per_minute"))) {
		if (v->type != CD_Y_SCALAR ||
		    cd_parse_u64(v->s, strlen(v->s), CD_AGENT_MAX_CPM, &n) < 0 || !n)
			return cd_pl_lfail(c, v, "a number from 1 to 100000",
			                   "bad max_calls_per_minute");
		x->limits.max_calls_per_minute = (unsigned)n;
	}
	return 0;
}

int cd_pl_load_named(struct lctx *c, const struct cd_ynode *seq, const char *what,
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
		if ((v = cd_pl_map_get(it, "operations")) && (r = load_operations(c, v, x)) < 0)
			return r;
		if ((v = cd_pl_map_get(it, "args")) && (r = load_arg_kinds(c, v, x)) < 0)
			return r;
		if ((v = cd_pl_map_get(it, "pins")) && (r = load_pins(c, v, x)) < 0)
			return r;
		if ((r = load_remote(c, it, x)) < 0 || (r = load_shared(c, it, x)) < 0 ||
		    (r = load_limits(c, it, x)) < 0)
			return r;
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
int cd_pl_tool_has_arg_kind(const struct cd_ynode *tools, const char *tool, const char *kind)
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
	const char *s = item->s, *colon, *why;

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
	} else if (!strcmp(key, "image") || !strcmp(key, "rootfs")) {
		if (!canonical_abs(s))
			return cd_pl_lfail(c, item, "an absolute path without '.', '..', '//'",
			                   "%s '%s' is not canonical", key, s);
	} else if (!strcmp(key, "cover_files")) {
		if (!item->len || item->len > 255 || memchr(s, '\0', item->len) || s[0] == '/' ||
		    s[item->len - 1] == '/')
			return cd_pl_lfail(c, item, "a glob like '*.secret' or 'conf/token.json'",
			                   "cover_files '%s' is not a relative glob of 1-255 bytes",
			                   s);
		if (memmem(s, item->len, "**", 2))
			return cd_pl_lfail(
			        c, item,
			        "'*' stays within one directory; a glob without '/', such "
			        "as '*.tok', matches that name at any depth",
			        "cover_files '%s': '**' is not supported", s);
		if (cd_cover_glob_valid(s, item->len, &why) < 0)
			return cd_pl_lfail(c, item, "a glob like '*.secret' or 'conf/token.json'",
			                   "cover_files '%s': %s", s, why);
	} else if (!strcmp(key, "env")) {
		const char *eq = strchr(s, '=');
		if (!env_name_ok(s, eq ? (size_t)(eq - s) : item->len))
			return cd_pl_lfail(c, item, "NAME or NAME=VALUE",
			                   "env entry '%s' is not valid", s);
	}
	return 0;
}

int cd_pl_load_profiles(struct lctx *c, const struct cd_ynode *map)
{
	static const char *const scalar_keys[] = {
		"memory",    "pids",  "timeout", "cpu_time", "output_limit", "scratch_size", "net",
		"workspace", "image", "rootfs",  NULL
	};
	static const struct keyspec spec[] = {
		{ "memory", 0 },      { "pids", 0 },         { "timeout", 0 },
		{ "cpu_time", 0 },    { "output_limit", 0 }, { "scratch_size", 0 },
		{ "net", 0 },         { "allow_hosts", 0 },  { "ro", 0 },
		{ "rw", 0 },          { "env", 0 },          { "workspace", 0 },
		{ "cover_files", 0 }, { "image", 0 },        { "rootfs", 0 },
		{ NULL, 0 },
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
