/* test-policy-diff.c — `policy diff`: the coverage proofs for globs, hosts
 * and argument constraints, and whole-policy cases (old rules, new rules ->
 * the widenings and narrowings reported), table-driven. */
#include "../tap.h"

#include "policy/policy-diff.h"
#include "policy/policy.h"

#include <errno.h>

static void test_globs(void)
{
	static const struct {
		const char *outer, *inner;
		int want;
	} cases[] = {
		{ "/repo/**", "/repo/**", 1 },
		{ "/repo/**", "/repo/src/**", 1 },
		{ "/repo/**", "/repo", 1 },
		{ "/repo/**", "/repo/a/*.c", 1 },
		{ "/repo/**", "/repox/a", 0 },
		{ "/repo/**", "/**", 0 },
		{ "/repo/src/**", "/repo/**", 0 },
		{ "/**", "/etc/passwd", 1 },
		{ "/**", "/", 1 },
		{ "/", "/", 1 },
		{ "/", "/a", 0 },
		{ "/repo/*", "/repo/a", 1 },
		{ "/repo/*", "/repo/*.c", 1 },
		{ "/repo/*", "/repo/a/b", 0 },
		{ "/repo/*", "/repo/**", 0 },
		{ "/repo/*.c", "/repo/*", 0 },
		{ "/repo/*.c", "/repo/a?.c", 1 },
		{ "/repo/a?.c", "/repo/a*.c", 0 },
		{ "/repo/??", "/repo/ab", 1 },
		{ "/repo/??", "/repo/a?", 1 },
		{ "/repo/??", "/repo/abc", 0 },
		{ "/repo/**/*.md", "/repo/docs/x.md", 1 },
		{ "/repo/**/*.md", "/repo/*.md", 1 },
		{ "/repo/**/*.md", "/repo/**/a.md", 1 },
		{ "/repo/**/*.md", "/repo/**", 0 },
		{ "/repo/*/x", "/repo/**/x", 0 },
		{ "/a/**/b/**", "/a/b", 1 },
		{ "/a/**/b/**", "/a/x/b/y/z", 1 },
		{ "/a/**/b", "/a/x/c", 0 },
		{ "/REPO/**", "/repo/a", 0 },
	};
	size_t i;

	for (i = 0; i < sizeof cases / sizeof cases[0]; i++)
		is_int(cd_glob_covers(cases[i].outer, cases[i].inner), cases[i].want,
		       "glob %s covers %s: %d", cases[i].outer, cases[i].inner, cases[i].want);
}

static void test_hosts(void)
{
	static const struct {
		const char *outer, *inner;
		int want;
	} cases[] = {
		{ "example.com", "example.com", 1 },
		{ "example.com", "a.example.com", 0 },
		{ "*.example.com", "a.example.com", 1 },
		{ "*.example.com", "a.b.example.com", 1 },
		{ "*.example.com", "example.com", 0 },
		{ "*.example.com", "evilexample.com", 0 },
		{ "*.example.com", "*.example.com", 1 },
		{ "*.example.com", "*.b.example.com", 1 },
		{ "*.b.example.com", "*.example.com", 0 },
		{ "*.example.com", "*.evilexample.com", 0 },
		{ "a.example.com", "*.example.com", 0 },
		{ "10.0.0.1", "10.0.0.1", 1 },
		{ "*.example.com", "a.example.org", 0 },
	};
	size_t i;

	for (i = 0; i < sizeof cases / sizeof cases[0]; i++)
		is_int(cd_host_covers(cases[i].outer, cases[i].inner), cases[i].want,
		       "host %s covers %s: %d", cases[i].outer, cases[i].inner, cases[i].want);
}

static void test_args(void)
{
	char *v_main[] = { "main" }, *v_dev[] = { "dev" }, *v_feat[] = { "feat/" },
	     *v_feat_x[] = { "feat/x" }, *v_md[] = { "main", "dev" }, *v_mx[] = { "main", "x" },
	     *v_f[] = { "f" };
	struct cd_arg_rule eq_main = { "b", CD_ARG_EQ, v_main, 1 };
	struct cd_arg_rule eq_dev = { "b", CD_ARG_EQ, v_dev, 1 };
	struct cd_arg_rule pre_feat = { "b", CD_ARG_PREFIX, v_feat, 1 };
	struct cd_arg_rule pre_featx = { "b", CD_ARG_PREFIX, v_feat_x, 1 };
	struct cd_arg_rule eq_featx = { "b", CD_ARG_EQ, v_feat_x, 1 };
	struct cd_arg_rule en_md = { "b", CD_ARG_ENUM, v_md, 2 };
	struct cd_arg_rule en_mx = { "b", CD_ARG_ENUM, v_mx, 2 };
	struct cd_arg_rule pre_f = { "b", CD_ARG_PREFIX, v_f, 1 };
	static const char *const names[] = { "eq main",       "eq dev",    "prefix feat/",
		                             "prefix feat/x", "eq feat/x", "enum main,dev",
		                             "enum main,x",   "prefix f" };
	const struct cd_arg_rule *r[] = { &eq_main,  &eq_dev, &pre_feat, &pre_featx,
		                          &eq_featx, &en_md,  &en_mx,    &pre_f };
	/* want[outer][inner] */
	static const int want[8][8] = {
		/* eq main */ { 1, 0, 0, 0, 0, 0, 0, 0 },
		/* eq dev */ { 0, 1, 0, 0, 0, 0, 0, 0 },
		/* prefix feat/ */ { 0, 0, 1, 1, 1, 0, 0, 0 },
		/* prefix feat/x */ { 0, 0, 0, 1, 1, 0, 0, 0 },
		/* eq feat/x */ { 0, 0, 0, 0, 1, 0, 0, 0 },
		/* enum main,dev */ { 1, 1, 0, 0, 0, 1, 0, 0 },
		/* enum main,x */ { 1, 0, 0, 0, 0, 0, 1, 0 },
		/* prefix f */ { 0, 0, 1, 1, 1, 0, 0, 1 },
	};
	size_t o, i;

	for (o = 0; o < 8; o++)
		for (i = 0; i < 8; i++)
			is_int(cd_arg_rule_covers(r[o], r[i]), want[o][i], "arg %s covers %s: %d",
			       names[o], names[i], want[o][i]);
}

static const char head[] =
        "version: 1\n"
        "agents: [{id: a, owner: o}, {id: b, owner: o}]\n"
        "tasks: [{id: T1}, {id: T2}]\n"
        "tools:\n"
        "  - {id: fs, kind: mcp, operations: {rd: read, wr: update}, args: {p: path}}\n"
        "  - {id: sh, kind: command}\n"
        "  - {id: web, kind: http}\n"
        "profiles: {p1: {memory: 1G}, p2: {memory: 2G}}\n"
        "approvers: {rules: [{id: x, max_paths: 1}]}\n";

/* A grant: id, then the rest of its keys in flow style. */
#define G(id, rest)                                                                                \
	"  - {id: " id ", owner: o, justification: j, review_by: 2030-01-01, " rest "}\n"
#define FS(id, actions, paths, extra)                                                              \
	G(id, "agent: a, tool: fs, actions: [" actions "], scope: {paths: [" paths "]}, "          \
	      "expires: 2030-01-01" extra)

struct collect {
	char s[2048];
	size_t len;
};

static void collect(const struct cd_diff_item *it, void *ctx)
{
	struct collect *c = ctx;
	int w = snprintf(c->s + c->len, sizeof c->s - c->len, "%s%s%s:%s:%s", c->len ? " " : "",
	                 it->widens ? "+" : "-", it->kind, it->id, it->change);
	if (w > 0 && (size_t)w < sizeof c->s - c->len)
		c->len += (size_t)w;
}

static struct cd_policy *load(const char *tools, const char *rules)
{
	char buf[8192];
	struct cd_policy *p = NULL;
	struct cd_err err = { 0 };
	int n = snprintf(buf, sizeof buf, "%s%s%s", tools ? tools : head, rules[0] ? "" : "",
	                 rules);

	if (n < 0 || (size_t)n >= sizeof buf)
		return NULL;
	if (cd_policy_load_buf("t.yaml", buf, (size_t)n, &p, &err) < 0) {
		diag("load: %s", err.msg);
		return NULL;
	}
	return p;
}

static void test_policies(void)
{
	static const struct {
		const char *name, *old_rules, *new_rules;
		const char *want; /* the items, in order */
		int widens;
	} cases[] = {
		{ "identical", "grants:\n" FS("g", "read", "/r/**", ""),
		  "grants:\n" FS("g", "read", "/r/**", ""), "", 0 },
		{ "grant added", "grants: []\n", "grants:\n" FS("g", "read", "/r/**", ""),
		  "+grant:g:added", 1 },
		{ "grant removed", "grants:\n" FS("g", "read", "/r/**", ""), "grants: []\n",
		  "-grant:g:removed", 0 },
		{ "action added", "grants:\n" FS("g", "read", "/r/**", ""),
		  "grants:\n" FS("g", "read, update", "/r/**", ""), "+grant:g:actions", 1 },
		{ "action removed", "grants:\n" FS("g", "read, update", "/r/**", ""),
		  "grants:\n" FS("g", "read", "/r/**", ""), "-grant:g:actions", 0 },
		{ "narrower path", "grants:\n" FS("g", "read", "/r/**", ""),
		  "grants:\n" FS("g", "read", "/r/src/*.c", ""), "-grant:g:paths", 0 },
		{ "wider path", "grants:\n" FS("g", "read", "/r/src/**", ""),
		  "grants:\n" FS("g", "read", "/r/**", ""), "+grant:g:paths", 1 },
		{ "new path outside", "grants:\n" FS("g", "read", "/r/**", ""),
		  "grants:\n" FS("g", "read", "/r/**, /etc/*", ""), "+grant:g:paths", 1 },
		{ "union not proven", "grants:\n" FS("g", "read", "/r/a/**, /r/b/**", ""),
		  "grants:\n" FS("g", "read", "/r/*/**", ""), "+grant:g:paths", 1 },
		{ "later expiry", "grants:\n" FS("g", "read", "/r/**", ""),
		  "grants:\n" G("g", "agent: a, tool: fs, actions: [read], scope: {paths: "
		                     "[/r/**]}, expires: 2030-01-02"),
		  "+grant:g:expires", 1 },
		{ "earlier expiry", "grants:\n" FS("g", "read", "/r/**", ""),
		  "grants:\n" G("g", "agent: a, tool: fs, actions: [read], scope: {paths: "
		                     "[/r/**]}, expires: 2029-12-31"),
		  "-grant:g:expires", 0 },
		{ "approval human -> none",
		  "grants:\n" FS("g", "read", "/r/**", ", approval: human"),
		  "grants:\n" FS("g", "read", "/r/**", ""), "+grant:g:approval", 1 },
		{ "approval none -> human", "grants:\n" FS("g", "read", "/r/**", ""),
		  "grants:\n" FS("g", "read", "/r/**", ", approval: human"), "-grant:g:approval",
		  0 },
		{ "approval human -> policy",
		  "grants:\n" FS("g", "read", "/r/**", ", approval: human"),
		  "grants:\n" FS("g", "read", "/r/**", ", approval: 'policy:x'"),
		  "+grant:g:approval", 1 },
		{ "agent changed", "grants:\n" FS("g", "read", "/r/**", ""),
		  "grants:\n" G("g", "agent: b, tool: fs, actions: [read], scope: {paths: "
		                     "[/r/**]}, expires: 2030-01-01"),
		  "+grant:g:agent", 1 },
		{ "task dropped", "grants:\n" FS("g", "read", "/r/**", ", task: T1"),
		  "grants:\n" FS("g", "read", "/r/**", ""), "+grant:g:task", 1 },
		{ "task added", "grants:\n" FS("g", "read", "/r/**", ""),
		  "grants:\n" FS("g", "read", "/r/**", ", task: T1"), "-grant:g:task", 0 },
		{ "task changed", "grants:\n" FS("g", "read", "/r/**", ", task: T1"),
		  "grants:\n" FS("g", "read", "/r/**", ", task: T2"), "+grant:g:task", 1 },
		{ "profile added", "grants:\n" FS("g", "read", "/r/**", ""),
		  "grants:\n" FS("g", "read", "/r/**", ", profile: p1"), "+grant:g:profile", 1 },
		{ "profile dropped", "grants:\n" FS("g", "read", "/r/**", ", profile: p1"),
		  "grants:\n" FS("g", "read", "/r/**", ""), "-grant:g:profile", 0 },
		{ "profile changed", "grants:\n" FS("g", "read", "/r/**", ", profile: p1"),
		  "grants:\n" FS("g", "read", "/r/**", ", profile: p2"), "+grant:g:profile", 1 },
		{ "renamed grant is covered", "grants:\n" FS("g", "read", "/r/**", ""),
		  "grants:\n" FS("h", "read", "/r/src/**", ""), "-grant:g:removed -grant:h:covered",
		  0 },
		{ "widened but covered by another",
		  "grants:\n" FS("g", "read", "/r/a/**", "") FS("h", "read, update", "/r/**", ""),
		  "grants:\n" FS("g", "read, update", "/r/**", "")
		          FS("h", "read, update", "/r/**", ""),
		  "-grant:g:covered", 0 },
		{ "argv shorter",
		  "grants:\n" G("g", "agent: a, tool: sh, actions: [execute], scope: {argv: [git, "
		                     "status]}, expires: 2030-01-01"),
		  "grants:\n" G("g", "agent: a, tool: sh, actions: [execute], scope: {argv: "
		                     "[git]}, expires: 2030-01-01"),
		  "+grant:g:argv", 1 },
		{ "argv longer",
		  "grants:\n" G("g", "agent: a, tool: sh, actions: [execute], scope: {argv: "
		                     "[git]}, expires: 2030-01-01"),
		  "grants:\n" G("g", "agent: a, tool: sh, actions: [execute], scope: {argv: [git, "
		                     "log]}, expires: 2030-01-01"),
		  "-grant:g:argv", 0 },
		{ "argv string trick",
		  "grants:\n" G("g", "agent: a, tool: sh, actions: [execute], scope: {argv: [git, "
		                     "status]}, expires: 2030-01-01"),
		  "grants:\n" G("g", "agent: a, tool: sh, actions: [execute], scope: {argv: [git, "
		                     "statusx]}, expires: 2030-01-01"),
		  "+grant:g:argv -grant:g:argv", 1 },
		{ "host wildcard",
		  "grants:\n" G("g", "agent: a, tool: web, actions: [read], scope: {hosts: "
		                     "[a.x.com]}, expires: 2030-01-01"),
		  "grants:\n" G("g", "agent: a, tool: web, actions: [read], scope: {hosts: "
		                     "['*.x.com']}, expires: 2030-01-01"),
		  "+grant:g:hosts", 0 + 1 },
		{ "host narrowed",
		  "grants:\n" G("g", "agent: a, tool: web, actions: [read], scope: {hosts: "
		                     "['*.x.com']}, expires: 2030-01-01"),
		  "grants:\n" G("g", "agent: a, tool: web, actions: [read], scope: {hosts: "
		                     "[a.x.com, '*.b.x.com']}, expires: 2030-01-01"),
		  "-grant:g:hosts", 0 },
		{ "port scope added",
		  "grants:\n" G("g", "agent: a, tool: web, actions: [read], scope: {hosts: "
		                     "[x.com]}, expires: 2030-01-01"),
		  "grants:\n" G("g", "agent: a, tool: web, actions: [read], scope: {hosts: "
		                     "[x.com], ports: [443]}, expires: 2030-01-01"),
		  "+grant:g:ports -grant:g:ports", 1 },
		{ "port range by union",
		  "grants:\n" G("g", "agent: a, tool: web, actions: [read], scope: {hosts: "
		                     "[x.com], ports: [80-90, 91-100]}, expires: 2030-01-01"),
		  "grants:\n" G("g", "agent: a, tool: web, actions: [read], scope: {hosts: "
		                     "[x.com], ports: [85-95]}, expires: 2030-01-01"),
		  "-grant:g:ports", 0 },
		{ "port range wider",
		  "grants:\n" G("g", "agent: a, tool: web, actions: [read], scope: {hosts: "
		                     "[x.com], ports: [80-90]}, expires: 2030-01-01"),
		  "grants:\n" G("g", "agent: a, tool: web, actions: [read], scope: {hosts: "
		                     "[x.com], ports: [80-91]}, expires: 2030-01-01"),
		  "+grant:g:ports", 1 },
		{ "arg constraint dropped",
		  "grants:\n" G("g", "agent: a, tool: web, actions: [read], scope: {hosts: "
		                     "[x.com], args: {m: {eq: GET}}}, expires: 2030-01-01"),
		  "grants:\n" G("g", "agent: a, tool: web, actions: [read], scope: {hosts: "
		                     "[x.com]}, expires: 2030-01-01"),
		  "+grant:g:args", 1 },
		{ "arg constraint added",
		  "grants:\n" G("g", "agent: a, tool: web, actions: [read], scope: {hosts: "
		                     "[x.com]}, expires: 2030-01-01"),
		  "grants:\n" G("g", "agent: a, tool: web, actions: [read], scope: {hosts: "
		                     "[x.com], args: {m: {eq: GET}}}, expires: 2030-01-01"),
		  "-grant:g:args", 0 },
		{ "arg enum grows",
		  "grants:\n" G("g", "agent: a, tool: web, actions: [read], scope: {hosts: "
		                     "[x.com], args: {m: {enum: [GET]}}}, expires: 2030-01-01"),
		  "grants:\n" G("g",
		                "agent: a, tool: web, actions: [read], scope: {hosts: [x.com], "
		                "args: {m: {enum: [GET, POST]}}}, expires: 2030-01-01"),
		  "+grant:g:args", 1 },
		{ "field added",
		  "grants:\n" G("g", "agent: a, tool: web, actions: [read], scope: {hosts: "
		                     "[x.com], fields: [a]}, expires: 2030-01-01"),
		  "grants:\n" G("g", "agent: a, tool: web, actions: [read], scope: {hosts: "
		                     "[x.com], fields: [a, b]}, expires: 2030-01-01"),
		  "+grant:g:fields", 1 },
		{ "forbid removed", "grants: []\nforbid: [{id: f, reason: r}]\n", "grants: []\n",
		  "+forbid:f:removed", 1 },
		{ "forbid added", "grants: []\n", "grants: []\nforbid: [{id: f, reason: r}]\n",
		  "-forbid:f:added", 0 },
		{ "forbid narrowed by agent", "grants: []\nforbid: [{id: f, reason: r}]\n",
		  "grants: []\nforbid: [{id: f, agent: a, reason: r}]\n", "+forbid:f:agent", 1 },
		{ "forbid widened by paths",
		  "grants: []\nforbid: [{id: f, tool: fs, scope: {paths: [/r/a/**]}, reason: r}]\n",
		  "grants: []\nforbid: [{id: f, tool: fs, scope: {paths: [/r/**]}, reason: r}]\n",
		  "-forbid:f:paths", 0 },
		{ "forbid loses a path",
		  "grants: []\nforbid: [{id: f, tool: fs, scope: {paths: [/r/a/**, /r/b]}, reason: "
		  "r}]\n",
		  "grants: []\nforbid: [{id: f, tool: fs, scope: {paths: [/r/a/**]}, reason: r}]\n",
		  "+forbid:f:paths", 1 },
		{ "forbid scope added", "grants: []\nforbid: [{id: f, tool: fs, reason: r}]\n",
		  "grants: []\nforbid: [{id: f, tool: fs, scope: {paths: [/r/**]}, reason: r}]\n",
		  "+forbid:f:paths", 1 },
		{ "forbid loses an action",
		  "grants: []\nforbid: [{id: f, actions: [read, delete], reason: r}]\n",
		  "grants: []\nforbid: [{id: f, actions: [delete], reason: r}]\n",
		  "+forbid:f:actions", 1 },
		{ "grant becomes a forbid", "grants:\n" FS("g", "read", "/r/**", ""),
		  "grants: []\nforbid: [{id: g, reason: r}]\n", "-grant:g:removed -forbid:g:added",
		  0 },
		{ "profile conflict lifted",
		  "grants:\n" FS("g", "read", "/r/**", ", profile: p1")
		          FS("h", "read", "/r/a/**", ", profile: p2"),
		  "grants:\n" FS("h", "read", "/r/a/**", ", profile: p2"),
		  "-grant:g:removed +grant:g:profile-conflict", 1 },
	};
	size_t i;

	for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		struct cd_policy *a = load(NULL, cases[i].old_rules);
		struct cd_policy *b = load(NULL, cases[i].new_rules);
		struct collect c = { .len = 0 };
		size_t w = 0, n = 0;
		c.s[0] = '\0';
		if (!ok(a && b, "%s: both load", cases[i].name)) {
			cd_policy_free(a);
			cd_policy_free(b);
			continue;
		}
		is_int(cd_policy_diff(a, b, collect, &c, &w, &n), 0, "%s: diff runs",
		       cases[i].name);
		is_str(c.s, cases[i].want, "%s: items", cases[i].name);
		is_int(w > 0, cases[i].widens, "%s: widens %d", cases[i].name, cases[i].widens);
		cd_policy_free(a);
		cd_policy_free(b);
	}
}

static void test_tools(void)
{
	static const struct {
		const char *name, *new_tools, *want;
		int widens;
	} cases[] = {
		{ "operation reclassed",
		  "version: 1\nagents: [{id: a, owner: o}]\ntools:\n"
		  "  - {id: fs, kind: mcp, operations: {rd: read, wr: read}, args: {p: path}}\n",
		  "+tool:fs:operations", 1 },
		{ "operation added",
		  "version: 1\nagents: [{id: a, owner: o}]\ntools:\n"
		  "  - {id: fs, kind: mcp, operations: {rd: read, wr: update, rm: delete}, args: "
		  "{p: "
		  "path}}\n",
		  "+tool:fs:operations", 1 },
		{ "operation removed",
		  "version: 1\nagents: [{id: a, owner: o}]\ntools:\n"
		  "  - {id: fs, kind: mcp, operations: {rd: read}, args: {p: path}}\n",
		  "-tool:fs:operations", 0 },
		{ "argument kind changed",
		  "version: 1\nagents: [{id: a, owner: o}]\ntools:\n"
		  "  - {id: fs, kind: mcp, operations: {rd: read, wr: update}, args: {p: value}}\n",
		  "+tool:fs:arguments", 1 },
		{ "argument declared",
		  "version: 1\nagents: [{id: a, owner: o}]\ntools:\n"
		  "  - {id: fs, kind: mcp, operations: {rd: read, wr: update}, args: {p: path, q: "
		  "value}}\n",
		  "-tool:fs:arguments", 0 },
		{ "kind changed",
		  "version: 1\nagents: [{id: a, owner: o}]\ntools:\n"
		  "  - {id: fs, kind: http, operations: {rd: read, wr: update}, args: {p: path}}\n",
		  "+tool:fs:kind", 1 },
		{ "remote url added",
		  "version: 1\nagents: [{id: a, owner: o}]\ntools:\n"
		  "  - {id: fs, kind: mcp, url: 'https://mcp.example.com/mcp', operations: {rd: "
		  "read, wr: update}, args: {p: path}}\n",
		  "+tool:fs:url", 1 },
		{ "secret sent to it",
		  "version: 1\nagents: [{id: a, owner: o}]\ntools:\n"
		  "  - {id: fs, kind: mcp, url: 'https://mcp.example.com/mcp', secret: TOK, "
		  "operations: {rd: read, wr: update}, args: {p: path}}\n",
		  "+tool:fs:url", 1 },
	};
	static const char old_tools[] =
	        "version: 1\nagents: [{id: a, owner: o}]\ntools:\n"
	        "  - {id: fs, kind: mcp, operations: {rd: read, wr: update}, args: {p: path}}\n";
	size_t i;

	for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		struct cd_policy *a = load(old_tools, "");
		struct cd_policy *b = load(cases[i].new_tools, "");
		struct collect c = { .len = 0 };
		size_t w = 0;
		c.s[0] = '\0';
		if (!ok(a && b, "%s: both load", cases[i].name)) {
			cd_policy_free(a);
			cd_policy_free(b);
			continue;
		}
		cd_policy_diff(a, b, collect, &c, &w, NULL);
		is_str(c.s, cases[i].want, "%s: items", cases[i].name);
		is_int(w > 0, cases[i].widens, "%s: widens %d", cases[i].name, cases[i].widens);
		cd_policy_free(a);
		cd_policy_free(b);
	}
	is_int(cd_policy_diff(NULL, NULL, NULL, NULL, NULL, NULL), -EINVAL,
	       "NULL policies: EINVAL");
}

int main(void)
{
	tap_start(30);
	test_globs();
	test_hosts();
	test_args();
	test_policies();
	test_tools();
	return tap_done();
}
