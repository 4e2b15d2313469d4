/* test-policy.c — the grant matrix: load errors with file:line:col, and
 * decisions (default deny, forbid wins, order never matters, expiry at the
 * boundary second, approvals, profiles, path and argv tricks). */
#include "../tap.h"

#include "policy/policy.h"

#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <string.h>

#define CD_ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

static const char base[] = "version: 1\n"
                           "agents:\n"
                           "  - {id: coder, owner: alice}\n"
                           "  - {id: other, owner: bob}\n"
                           "tasks:\n"
                           "  - {id: T1}\n"
                           "tools:\n"
                           "  - {id: fs, kind: mcp, args: {path: path}}\n"
                           "  - {id: sh, kind: command}\n"
                           "  - {id: web, kind: http}\n"
                           "profiles:\n"
                           "  build: {memory: 1G, net: none}\n"
                           "  wide: {memory: 2G}\n";

#define GRANT_TAIL "    owner: alice\n    justification: j\n    review_by: 2030-01-01\n"

static struct cd_policy *load(const char *rules, struct cd_err *err)
{
	char buf[8192];
	struct cd_policy *p = NULL;
	int n = snprintf(buf, sizeof buf, "%s%s", base, rules);

	if (n < 0 || (size_t)n >= sizeof buf)
		return NULL;
	if (cd_policy_load_buf("t.yaml", buf, (size_t)n, &p, err) < 0)
		return NULL;
	return p;
}

struct rq {
	const char *agent, *task, *tool, *action;
	const char *path, *host;
	long port;
	const char *argv[4];
	const char *at;
};

static int decide(const struct cd_policy *p, const struct rq *r, struct cd_decision *d)
{
	struct cd_request q;
	const char *paths[1] = { r->path };
	size_t argc = 0;

	cd_request_init(&q);
	q.agent = r->agent;
	q.task = r->task;
	q.tool = r->tool;
	if (cd_action_parse(r->action, &q.action) < 0)
		return -1;
	if (r->path) {
		q.paths = paths;
		q.npaths = 1;
	}
	q.host = r->host;
	q.port = r->port ? r->port : -1;
	while (argc < 4 && r->argv[argc])
		argc++;
	q.argv = r->argv;
	q.argc = argc;
	q.now = 0;
	if (cd_policy_parse_time(r->at ? r->at : "2029-01-01", strlen(r->at ? r->at : "2029-01-01"),
	                         &q.now) < 0)
		return -1;
	return cd_policy_decide(p, &q, d, NULL);
}

static void test_decisions(void)
{
	static const char rules[] =
	        "grants:\n"
	        "  - id: z-read\n    agent: coder\n    tool: fs\n    actions: [read]\n"
	        "    scope: {paths: [/repo/**]}\n    profile: build\n" GRANT_TAIL
	        "    expires: 2030-01-01T00:00:00Z\n"
	        "  - id: a-read-src\n    agent: coder\n    tool: fs\n    actions: [read, update]\n"
	        "    scope: {paths: [/repo/src/**]}\n    profile: build\n" GRANT_TAIL
	        "    expires: 2030-01-01\n"
	        "  - id: del\n    agent: coder\n    tool: fs\n    actions: [delete]\n"
	        "    scope: {paths: [/repo/tmp/**]}\n    approval: human\n" GRANT_TAIL
	        "    expires: 2030-01-01\n"
	        "  - id: st\n    agent: coder\n    tool: sh\n    actions: [execute]\n"
	        "    scope: {argv: [git, status]}\n" GRANT_TAIL "    expires: 2030-01-01\n"
	        "  - id: web\n    agent: coder\n    tool: web\n    actions: [read]\n"
	        "    scope: {hosts: ['*.example.com'], ports: [443]}\n" GRANT_TAIL
	        "    expires: 2030-01-01\n"
	        "  - id: wide\n    agent: coder\n    task: T1\n    tool: fs\n    actions: [read]\n"
	        "    scope: {paths: [/data/**]}\n    profile: wide\n" GRANT_TAIL
	        "    expires: 2030-01-01\n"
	        "  - id: narrow\n    agent: coder\n    tool: fs\n    actions: [read]\n"
	        "    scope: {paths: [/data/x/**]}\n    profile: build\n" GRANT_TAIL
	        "    expires: 2030-01-01\n"
	        "forbid:\n"
	        "  - id: no-env\n    tool: fs\n    scope: {paths: [/repo/.env]}\n    reason: r\n";
	static const struct {
		struct rq r;
		const char *verdict, *ids, *profile;
	} cases[] = {
		{ { .agent = "coder",
		    .task = 0,
		    .tool = "fs",
		    .action = "read",
		    .path = "/repo/a" },
		  "allow",
		  "z-read",
		  "build" },
		{ { .agent = "coder",
		    .task = 0,
		    .tool = "fs",
		    .action = "read",
		    .path = "/repo/src/a.c" },
		  "allow",
		  "a-read-src,z-read",
		  "build" },
		{ { .agent = "coder",
		    .task = 0,
		    .tool = "fs",
		    .action = "update",
		    .path = "/repo/src/a.c" },
		  "allow",
		  "a-read-src",
		  "build" },
		{ { .agent = "coder",
		    .task = 0,
		    .tool = "fs",
		    .action = "update",
		    .path = "/repo/a" },
		  "deny",
		  "",
		  NULL },
		{ { .agent = "coder",
		    .task = 0,
		    .tool = "fs",
		    .action = "read",
		    .path = "/repo/.env" },
		  "deny",
		  "no-env",
		  NULL },
		{ { .agent = "coder",
		    .task = 0,
		    .tool = "fs",
		    .action = "read",
		    .path = "/repo/x/../.env" },
		  "deny",
		  "no-env",
		  NULL },
		{ { .agent = "coder",
		    .task = 0,
		    .tool = "fs",
		    .action = "read",
		    .path = "/repo//.env" },
		  "deny",
		  "no-env",
		  NULL },
		{ { .agent = "coder",
		    .task = 0,
		    .tool = "fs",
		    .action = "read",
		    .path = "/repo/../etc/passwd" },
		  "deny",
		  "",
		  NULL },
		{ { .agent = "coder",
		    .task = 0,
		    .tool = "fs",
		    .action = "read",
		    .path = "/repo/../../etc/passwd" },
		  "deny",
		  "",
		  NULL },
		{ { .agent = "coder",
		    .task = 0,
		    .tool = "fs",
		    .action = "read",
		    .path = "/REPO/a" },
		  "deny",
		  "",
		  NULL },
		{ { .agent = "coder",
		    .task = 0,
		    .tool = "fs",
		    .action = "read",
		    .path = "/r\xd0\xb5po/a" },
		  "deny",
		  "",
		  NULL },
		{ { .agent = "coder",
		    .task = 0,
		    .tool = "fs",
		    .action = "read",
		    .path = "/repox/a" },
		  "deny",
		  "",
		  NULL },
		{ { .agent = "coder", .task = 0, .tool = "fs", .action = "read", .path = "repo/a" },
		  "deny",
		  "",
		  NULL },
		{ { .agent = "coder",
		    .task = 0,
		    .tool = "fs",
		    .action = "read",
		    .path = "/repo/a/" },
		  "allow",
		  "z-read",
		  "build" },
		{ { .agent = "coder", .task = 0, .tool = "fs", .action = "read", .path = NULL },
		  "deny",
		  "",
		  NULL },
		{ { .agent = "other",
		    .task = 0,
		    .tool = "fs",
		    .action = "read",
		    .path = "/repo/a" },
		  "deny",
		  "",
		  NULL },
		{ { .agent = "nobody",
		    .task = 0,
		    .tool = "fs",
		    .action = "read",
		    .path = "/repo/a" },
		  "deny",
		  "",
		  NULL },
		/* Expiry: absent from the instant it expires. */
		{ { .agent = "coder",
		    .task = 0,
		    .tool = "fs",
		    .action = "read",
		    .path = "/repo/a",
		    .at = "2029-12-31T23:59:59Z" },
		  "allow",
		  "z-read",
		  "build" },
		{ { .agent = "coder",
		    .task = 0,
		    .tool = "fs",
		    .action = "read",
		    .path = "/repo/a",
		    .at = "2030-01-01T00:00:00Z" },
		  "deny",
		  "",
		  NULL },
		{ { .agent = "coder",
		    .task = 0,
		    .tool = "fs",
		    .action = "read",
		    .path = "/repo/a",
		    .at = "2030-01-01T00:00:01Z" },
		  "deny",
		  "",
		  NULL },
		/* Approval. */
		{ { .agent = "coder",
		    .task = 0,
		    .tool = "fs",
		    .action = "delete",
		    .path = "/repo/tmp/x" },
		  "needs-approval",
		  "del",
		  NULL },
		{ { .agent = "coder",
		    .task = 0,
		    .tool = "fs",
		    .action = "delete",
		    .path = "/repo/src/x" },
		  "deny",
		  "",
		  NULL },
		/* argv, token by token. */
		{ { "coder", 0, "sh", "execute", .argv = { "git", "status", "-s" } },
		  "allow",
		  "st",
		  NULL },
		{ { "coder", 0, "sh", "execute", .argv = { "git", "statusx" } }, "deny", "", NULL },
		{ { "coder", 0, "sh", "execute", .argv = { "git", "push" } }, "deny", "", NULL },
		{ { "coder", 0, "sh", "execute", .argv = { "git status" } }, "deny", "", NULL },
		{ { .agent = "coder", .task = 0, .tool = "sh", .action = "execute" },
		  "deny",
		  "",
		  NULL },
		/* Hosts and ports. */
		{ { .agent = "coder",
		    .task = 0,
		    .tool = "web",
		    .action = "read",
		    .host = "API.EXAMPLE.COM.",
		    .port = 443 },
		  "allow",
		  "web",
		  NULL },
		{ { .agent = "coder",
		    .task = 0,
		    .tool = "web",
		    .action = "read",
		    .host = "example.com",
		    .port = 443 },
		  "deny",
		  "",
		  NULL },
		{ { .agent = "coder",
		    .task = 0,
		    .tool = "web",
		    .action = "read",
		    .host = "evilexample.com",
		    .port = 443 },
		  "deny",
		  "",
		  NULL },
		{ { .agent = "coder",
		    .task = 0,
		    .tool = "web",
		    .action = "read",
		    .host = "a.example.com",
		    .port = 80 },
		  "deny",
		  "",
		  NULL },
		{ { .agent = "coder",
		    .task = 0,
		    .tool = "web",
		    .action = "read",
		    .host = "a.example.com" },
		  "deny",
		  "",
		  NULL },
		{ { .agent = "coder",
		    .task = 0,
		    .tool = "web",
		    .action = "read",
		    .host = "a.example.com..",
		    .port = 443 },
		  "deny",
		  "",
		  NULL },
		/* Tasks, and grants that disagree on the profile. */
		{ { .agent = "coder",
		    .task = "T1",
		    .tool = "fs",
		    .action = "read",
		    .path = "/data/y" },
		  "allow",
		  "wide",
		  "wide" },
		{ { .agent = "coder",
		    .task = 0,
		    .tool = "fs",
		    .action = "read",
		    .path = "/data/y" },
		  "deny",
		  "",
		  NULL },
		{ { .agent = "coder",
		    .task = "T1",
		    .tool = "fs",
		    .action = "read",
		    .path = "/data/x/1" },
		  "deny",
		  "narrow,wide",
		  NULL },
		{ { .agent = "coder",
		    .task = 0,
		    .tool = "fs",
		    .action = "read",
		    .path = "/data/x/1" },
		  "allow",
		  "narrow",
		  "build" },
	};
	struct cd_err err = { 0 };
	struct cd_policy *p = load(rules, &err);
	size_t i, k;

	ok(p != NULL, "decision policy loads");
	if (!p) {
		diag("%s", err.msg);
		return;
	}
	for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		struct cd_decision d;
		char ids[256] = "";
		size_t o = 0;
		const struct rq *r = &cases[i].r;
		int ret = decide(p, r, &d);

		for (k = 0; k < d.nids; k++)
			o += (size_t)snprintf(ids + o, sizeof ids - o, "%s%s", k ? "," : "",
			                      d.ids[k]);
		ok(ret == 0 && !strcmp(cd_verdict_name(d.verdict), cases[i].verdict) &&
		           !strcmp(ids, cases[i].ids) &&
		           (cases[i].profile ? d.profile && !strcmp(d.profile, cases[i].profile)
		                             : !d.profile),
		   "%s %s %s %s%s%s -> %s [%s]", r->agent, r->tool, r->action,
		   r->path ? r->path : "", r->host ? r->host : "", r->argv[0] ? r->argv[0] : "",
		   cases[i].verdict, cases[i].ids);
		if (strcmp(cd_verdict_name(d.verdict), cases[i].verdict) ||
		    strcmp(ids, cases[i].ids))
			diag("got %s [%s] (%s)", cd_verdict_name(d.verdict), ids, d.reason);
	}
	{
		struct cd_decision d;
		struct cd_request q;
		const char *two[2] = { "/repo/a", "/repo/.env" };
		cd_request_init(&q);
		q.agent = "coder";
		q.tool = "fs";
		q.action = CD_ACTION_READ;
		q.paths = two;
		q.npaths = 2;
		is_int(cd_policy_decide(p, &q, &d, NULL), 0, "decide two paths");
		ok(d.verdict == CD_VERDICT_DENY && d.forbidden,
		   "one forbidden path denies the call");
		two[1] = "/etc/passwd";
		is_int(cd_policy_decide(p, &q, &d, NULL), 0, "decide two paths again");
		ok(d.verdict == CD_VERDICT_DENY, "one path outside the scope denies the call");
		q.agent = NULL;
		ok(cd_policy_decide(p, &q, &d, NULL) == 0 && d.verdict == CD_VERDICT_DENY,
		   "a request without an agent is denied");
		ok(cd_policy_decide(NULL, &q, &d, NULL) < 0 && d.verdict == CD_VERDICT_DENY,
		   "no policy: an error and a deny");
	}
	cd_policy_free(p);
}

/* The same rules in another order decide the same. */
static void test_order(void)
{
	static const char g1[] =
	        "  - id: g1\n    agent: coder\n    tool: fs\n    actions: [read]\n"
	        "    scope: {paths: [/a/**]}\n" GRANT_TAIL "    expires: 2030-01-01\n";
	static const char g2[] =
	        "  - id: g2\n    agent: coder\n    tool: fs\n    actions: [read]\n"
	        "    scope: {paths: [/a/b/**]}\n" GRANT_TAIL "    expires: 2030-01-01\n";
	static const char f[] =
	        "forbid:\n  - id: f\n    agent: coder\n    scope: {paths: [/a/b/c]}\n"
	        "    reason: r\n";
	char a[2048], b[2048];
	struct cd_policy *p1, *p2;
	struct cd_err err;
	static const char *const paths[] = { "/a/x", "/a/b/x", "/a/b/c", "/b" };
	size_t i;

	(void)snprintf(a, sizeof a, "%sgrants:\n%s%s", f, g1, g2);
	(void)snprintf(b, sizeof b, "grants:\n%s%s%s", g2, g1, f);
	p1 = load(a, &err);
	p2 = load(b, &err);
	ok(p1 && p2, "both orders load");
	for (i = 0; p1 && p2 && i < sizeof paths / sizeof paths[0]; i++) {
		struct cd_decision d1, d2;
		struct rq r = { .agent = "coder",
			        .task = 0,
			        .tool = "fs",
			        .action = "read",
			        .path = paths[i] };
		decide(p1, &r, &d1);
		decide(p2, &r, &d2);
		ok(d1.verdict == d2.verdict && d1.nids == d2.nids && !strcmp(d1.reason, d2.reason),
		   "order does not matter for %s (%s)", paths[i], cd_verdict_name(d1.verdict));
	}
	cd_policy_free(p1);
	cd_policy_free(p2);
}

static void test_load_errors(void)
{
	static const struct {
		const char *rules, *want;
	} cases[] = {
		{ "grants:\n  - id: g\n    agent: coder\n    tool: fs\n    actions: [read]\n"
		  "    scope: {paths: [/a/**]}\n    tols: x\n" GRANT_TAIL
		  "    expires: 2030-01-01\n",
		  "t.yaml:20:5: unknown key 'tols' in a grant (did you mean 'tool'?)" },
		{ "grants:\n  - id: g\n    agent: coder\n    agent: other\n",
		  "t.yaml:17:5: duplicate key 'agent'" },
		{ "grants:\n  - id: g\n    agent: ghost\n    tool: fs\n    actions: [read]\n"
		  "    scope: {paths: [/a/**]}\n" GRANT_TAIL "    expires: 2030-01-01\n",
		  "t.yaml:16:12: unknown agent 'ghost'" },
		{ "grants:\n  - id: g\n    agent: coder\n    tool: web\n    actions: [read]\n"
		  "    scope: {hosts: [EXAMPLE.COM.]}\n" GRANT_TAIL "    expires: 2030-01-01\n",
		  "t.yaml:19:21: host 'EXAMPLE.COM.' is not normalized (write 'example.com')" },
		{ "grants:\n  - id: g\n    agent: coder\n    tool: fs\n    actions: [read]\n"
		  "    scope: {}\n" GRANT_TAIL "    expires: 2030-01-01\n",
		  "t.yaml:19:12: empty scope" },
		{ "grants:\n  - id: g\n    agent: coder\n    tool: fs\n    actions: read\n"
		  "    scope: {paths: [/a/**]}\n" GRANT_TAIL "    expires: 2030-01-01\n",
		  "t.yaml:18:14: actions must be a list, not a value" },
		{ "grants:\n  - id: g\n    agent: coder\n    tool: fs\n    actions: [read]\n"
		  "    scope: {paths: ['/a/**x']}\n" GRANT_TAIL "    expires: 2030-01-01\n",
		  "t.yaml:19:21: bad path glob '/a/**x' ('**' must be a whole segment)" },
		{ "grants:\n  - id: g\n    agent: coder\n    tool: fs\n    actions: [read]\n"
		  "    scope: {paths: [/a/**]}\n" GRANT_TAIL,
		  "t.yaml:15:5: missing required key 'expires' in a grant" },
		{ "x: &a [1]\ny: *a\n", "t.yaml:14:4: anchors are not allowed" },
		{ "grants: !!seq []\n", "t.yaml:14:9: tags ('!...') are not allowed" },
		{ "grants:\n  - id: g\n    agent: coder\n    tool: fs\n    actions: [delete]\n"
		  "    scope: {paths: [/a/**]}\n" GRANT_TAIL "    expires: 2030-01-01\n",
		  "allows delete without approval" },
		{ "grants:\n  - id: g\n    agent: coder\n    tool: fs\n    actions: [read]\n"
		  "    scope: {paths: [/a/**]}\n" GRANT_TAIL "    expires: 2030-01-01\n"
		  "    examples: {deny: [{path: /a/b}]}\n",
		  "t.yaml:24:23: example expects deny but the policy says allow" },
		{ "grants:\n  - id: g\n    agent: coder\n    tool: sh\n    actions: [execute]\n"
		  "    scope: {paths: [/a/**]}\n" GRANT_TAIL "    expires: 2030-01-01\n",
		  "has no argv scope" },
		{ "grants:\n  - id: g\n    agent: coder\n    tool: fs\n    actions: [read]\n"
		  "    scope: {paths: [/a/**]}\n" GRANT_TAIL "    expires: 2030-02-30\n",
		  "expires '2030-02-30' is not a date" },
		{ "forbid:\n  - {id: f, reason: r}\n  - {id: f, reason: r}\n",
		  "t.yaml:16:5: duplicate rule id 'f' (first at line 15)" },
	};
	size_t i;

	for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		struct cd_err err = { 0 };
		struct cd_policy *p = load(cases[i].rules, &err);
		ok(!p && strstr(err.msg, cases[i].want), "load error: %s", cases[i].want);
		if (p || !strstr(err.msg, cases[i].want))
			diag("got: %s", p ? "(loaded)" : err.msg);
		cd_policy_free(p);
	}
}

/* mask:, fields: and require_task: — loaded, merged across the deciding
 * grants, and a missing task denied. */
static void test_minimize(void)
{
	static const char rules[] =
	        "grants:\n"
	        "  - id: crm-a\n    agent: coder\n    tool: fs\n    actions: [read]\n"
	        "    scope: {paths: [/crm/**]}\n    mask: [email, card]\n"
	        "    fields: [customer.email, id]\n    require_task: true\n" GRANT_TAIL
	        "    expires: 2030-01-01\n"
	        "  - id: crm-b\n    agent: coder\n    tool: fs\n    actions: [read]\n"
	        "    scope: {paths: [/crm/x/**]}\n"
	        "    mask: {email: pseudonymize, phone: drop, secret: redact}\n"
	        "    fields: [customer]\n    require_task: true\n" GRANT_TAIL
	        "    expires: 2030-01-01\n"
	        "  - id: open\n    agent: coder\n    tool: fs\n    actions: [read]\n"
	        "    scope: {paths: [/open/**]}\n" GRANT_TAIL "    expires: 2030-01-01\n";
	static const struct {
		const char *rules, *want;
	} bad[] = {
		{ "    mask: [email, nope]\n", "unknown data type 'nope' in mask" },
		{ "    mask: {email: hide}\n", "unknown mask action 'hide' for 'email'" },
		{ "    mask: {email: none}\n", "unknown mask action 'none'" },
		{ "    mask: []\n", "mask is empty" },
		{ "    mask: email\n", "mask must be a list of data types" },
		{ "    mask: [email, email]\n", "data type 'email' is named twice" },
		{ "    fields: [a..b]\n", "bad field path 'a..b'" },
		{ "    fields: [.a]\n", "bad field path '.a'" },
		{ "    fields: []\n", "fields is an empty list" },
		{ "    require_task: yes\n", "require_task must be a boolean" },
		{ "    require_task: 'true'\n", "require_task must be a boolean" },
	};
	struct cd_err err = { 0 };
	struct cd_policy *p = load(rules, &err);
	struct cd_decision d;
	struct rq r = {
		.agent = "coder", .task = "T1", .tool = "fs", .action = "read", .path = "/crm/x/1"
	};
	size_t i;

	if (!ok(p != NULL, "a policy with mask, fields and require_task loads"))
		diag("%s", err.msg);
	decide(p, &r, &d);
	is_str(cd_verdict_name(d.verdict), "allow", "two grants allow");
	is_int(d.mask.action[CD_SCAN_EMAIL], CD_MASK_REDACT, "email: redact beats pseudonymize");
	is_int(d.mask.action[CD_SCAN_CARD], CD_MASK_REDACT, "card from one grant");
	is_int(d.mask.action[CD_SCAN_PHONE], CD_MASK_DROP, "phone from the other");
	is_int(d.mask.action[CD_SCAN_SSN], CD_MASK_NONE, "ssn unmasked");
	is_int(d.nfield_lists, 2, "both field lists apply");
	r.task = NULL;
	decide(p, &r, &d);
	is_str(cd_verdict_name(d.verdict), "deny", "no task: denied");
	ok(strstr(d.reason, "requires a task") != NULL, "... saying why (%s)", d.reason);
	r.path = "/open/1";
	decide(p, &r, &d);
	ok(d.verdict == CD_VERDICT_ALLOW && !cd_mask_rules_active(&d.mask) && !d.nfield_lists,
	   "a grant without them: no task needed, nothing masked");
	cd_policy_free(p);

	for (i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		char buf[1024];
		snprintf(buf, sizeof buf,
		         "grants:\n  - id: g\n    agent: coder\n    tool: fs\n    actions: [read]\n"
		         "    scope: {paths: [/a/**]}\n%s" GRANT_TAIL "    expires: 2030-01-01\n",
		         bad[i].rules);
		p = load(buf, &err);
		ok(!p && strstr(err.msg, bad[i].want), "load error: %s", bad[i].want);
		if (p || !strstr(err.msg, bad[i].want))
			diag("got: %s", p ? "(loaded)" : err.msg);
		cd_policy_free(p);
	}
}

#define TEMP_TAIL "owner: o, justification: j, review_by: '@9000', expires: '@9000'}"

/* Break-glass and delegated grants added to a loaded policy. */
static void test_temp_grants(void)
{
	static const char rules[] =
	        "break_glass: {max_ttl: 1h}\n"
	        "grants:\n"
	        "  - id: fs-read\n    agent: coder\n    tool: fs\n    actions: [read]\n"
	        "    scope: {paths: ['/repo/**']}\n    expires: 2031-01-01\n" GRANT_TAIL
	        "  - id: fs-del\n    agent: coder\n    tool: fs\n    actions: [delete]\n"
	        "    approval: human\n    scope: {paths: ['/repo/tmp/**']}\n"
	        "    expires: 2031-01-01\n" GRANT_TAIL "forbid:\n"
	        "  - {id: no-env, agent: coder, scope: {paths: ['/repo/.env']}, reason: r}\n";
	struct cd_err err = { 0, "" };
	struct cd_policy *p = load(rules, &err);
	struct cd_decision d;
	const char *appr = NULL, *prof = NULL;
	struct rq r = { "other", NULL, "fs", "read", "/data/x", NULL, -1, { NULL }, "@1000" };

	ok(p != NULL, "policy with break_glass loads (%s)", err.msg);
	if (!p)
		return;
	is_int((int)cd_policy_break_glass_max_ttl(p), 3600, "max_ttl is read");
	/* Break-glass: checked like a written grant, capped by the policy. */
	ok(cd_policy_add_temp(p, CD_TEMP_BREAK_GLASS, "bg-1", NULL,
	                      "{id: bg-1, agent: ghost, tool: fs, actions: [read], scope: {paths: "
	                      "['/data/**']}, owner: o, justification: j, review_by: '@9000', "
	                      "expires: '@9000'}",
	                      100, &err) == -CD_E_PARSE,
	   "a break-glass grant for an unknown agent is refused");
	ok(cd_policy_add_temp(p, CD_TEMP_BREAK_GLASS, "bg-1", NULL,
	                      "{id: bg-1, agent: other, tool: fs, actions: [read], scope: {paths: "
	                      "['/data/**']}, owner: o, justification: j, review_by: '@9000', "
	                      "expires: '@9000'}",
	                      100, &err) == 0,
	   "a break-glass grant is added (%s)", err.msg);
	is_int(cd_policy_temp_kind(p, "bg-1"), CD_TEMP_BREAK_GLASS, "its kind is known");
	is_int(cd_policy_temp_kind(p, "fs-read"), 0, "a written grant is not temporary");
	decide(p, &r, &d);
	is_int(d.verdict, CD_VERDICT_ALLOW, "the break-glass grant allows");
	r.at = "@3699";
	decide(p, &r, &d);
	is_int(d.verdict, CD_VERDICT_ALLOW, "until just before created + max_ttl");
	r.at = "@3700";
	decide(p, &r, &d);
	is_int(d.verdict, CD_VERDICT_DENY, "the policy's cap ends it, whatever it was made with");
	ok(cd_policy_add_temp(p, CD_TEMP_BREAK_GLASS, "fs-read", NULL,
	                      "{id: fs-read, agent: other, tool: fs, actions: [read], scope: "
	                      "{paths: ['/x/**']}, owner: o, justification: j, review_by: '@9000', "
	                      "expires: '@9000'}",
	                      100, &err) < 0,
	   "a temporary grant cannot take a written grant's id");

	/* Delegation: coverage proofs. */
	ok(cd_policy_delegation_check(
	           p, "coder", "dg-1",
	           "{id: dg-1, agent: coder/sub, tool: fs, actions: [read], "
	           "scope: {paths: ['/repo/src/**']}, approval: human, owner: o, "
	           "justification: j, review_by: '@9000', expires: '@9000'}",
	           1000, 9000, &appr, &prof, &err) == 0,
	   "a narrower read is covered (%s)", err.msg);
	ok(appr == NULL, "read needs no approval");
	ok(cd_policy_delegation_check(p, "coder", "dg-1",
	                              "{id: dg-1, agent: coder/sub, tool: fs, actions: [read], "
	                              "scope: {paths: ['/**']}, approval: human, owner: o, "
	                              "justification: j, review_by: '@9000', expires: '@9000'}",
	                              1000, 9000, &appr, &prof, &err) == -CD_E_DENIED,
	   "a wider path is not covered");
	ok(cd_policy_delegation_check(
	           p, "coder", "dg-1",
	           "{id: dg-1, agent: coder/sub, tool: fs, actions: [delete], "
	           "scope: {paths: ['/repo/tmp/a/**']}, approval: human, owner: o, "
	           "justification: j, review_by: '@9000', expires: '@9000'}",
	           1000, 9000, &appr, &prof, &err) == 0 &&
	           appr && strcmp(appr, "human") == 0,
	   "delete is covered and carries the parent's approval");
	ok(cd_policy_delegation_check(p, "coder", "dg-1",
	                              "{id: dg-1, agent: coder/sub, tool: fs, actions: [read], "
	                              "scope: {paths: ['/repo/**']}, approval: human, owner: o, "
	                              "justification: j, review_by: '@9000', expires: '@9000'}",
	                              1000, 1924992001, &appr, &prof, &err) == -CD_E_DENIED,
	   "a delegation outliving the parent's grant is refused");
	ok(cd_policy_add_temp(
	           p, CD_TEMP_DELEGATED, "dg-2", "coder",
	           "{id: dg-2, agent: other/sub, tool: fs, actions: [read], scope: "
	           "{paths: ['/repo/**']}, owner: o, justification: j, review_by: '@9000', "
	           "expires: '@9000'}",
	           1000, &err) == -CD_E_PARSE,
	   "a delegated grant must name a sub-agent of its parent");
	ok(cd_policy_add_temp(p, CD_TEMP_DELEGATED, "dg-3", "coder",
	                      "{id: dg-3, agent: coder/sub, tool: fs, actions: [read], scope: "
	                      "{paths: ['/**']}, owner: o, justification: j, review_by: '@9000', "
	                      "expires: '@9000'}",
	                      1000, &err) == 0,
	   "a (too wide) delegated grant can be stored by hand (%s)", err.msg);
	r.agent = "coder/sub";
	r.path = "/repo/a";
	r.at = "@2000";
	decide(p, &r, &d);
	is_int(d.verdict, CD_VERDICT_ALLOW, "the child reads what the parent holds");
	is_str(d.nids ? d.ids[0] : "", "dg-3", "decided by the delegated grant");
	r.path = "/etc/shadow";
	decide(p, &r, &d);
	is_int(d.verdict, CD_VERDICT_DENY, "but never beyond: the parent is asked again");
	ok(strstr(d.reason, "delegating agent 'coder'") != NULL, "and the reason says so (%s)",
	   d.reason);
	r.path = "/repo/.env";
	decide(p, &r, &d);
	is_int(d.verdict, CD_VERDICT_DENY, "the parent's forbid rule reaches the child");
	ok(d.forbidden, "as a forbid");
	r.at = "@1924992001";
	r.path = "/repo/a";
	decide(p, &r, &d);
	is_int(d.verdict, CD_VERDICT_DENY, "the child's grant ends with its own expiry");

	/* The temporary grants a verdict rests on, up the chain: other/sub
	 * reads /data through other's break-glass grant bg-1. */
	ok(cd_policy_add_temp(p, CD_TEMP_DELEGATED, "dg-4", "other",
	                      "{id: dg-4, agent: other/sub, tool: fs, actions: [read], scope: "
	                      "{paths: ['/data/**']}, " TEMP_TAIL,
	                      1000, &err) == 0,
	   "a delegated grant from a break-glass holder (%s)", err.msg);
	r.agent = "other/sub";
	r.path = "/data/x";
	r.at = "@2000";
	decide(p, &r, &d);
	is_int(d.verdict, CD_VERDICT_ALLOW,
	       "the child reads through the parent's break-glass grant");
	is_int((int)d.ntemp_ids, 2, "the decision rests on two temporary grants");
	ok(d.ntemp_ids == 2 &&
	           ((!strcmp(d.temp_ids[0], "dg-4") && !strcmp(d.temp_ids[1], "bg-1")) ||
	            (!strcmp(d.temp_ids[0], "bg-1") && !strcmp(d.temp_ids[1], "dg-4"))),
	   "its own and the parent's, so a front end checks both are still in force");
	r.agent = "coder";
	r.path = "/repo/a";
	decide(p, &r, &d);
	is_int((int)d.ntemp_ids, 0, "a written grant's decision rests on none");
	is_int(cd_policy_temp_drop(p, "bg-1"), 0, "a revoked grant is dropped from the policy");
	is_int(cd_policy_temp_drop(p, "bg-1"), -ENOENT, "... once");
	r.agent = "other/sub";
	r.path = "/data/x";
	decide(p, &r, &d);
	is_int(d.verdict, CD_VERDICT_DENY, "without it the child's grant holds nothing");
	cd_policy_free(p);
}

/* The fields a decision's field lists leave of a JSON document, compact. */
static char *scoped(const struct cd_decision *d, const char *json)
{
	json_t *v = json_loads(json, 0, NULL);
	char *out = NULL;

	if (v && cd_mask_fields(v, d->field_lists, d->field_counts, d->nfield_lists) == 0)
		out = json_dumps(v, JSON_COMPACT | JSON_SORT_KEYS);
	json_decref(v);
	return out;
}

#define CRM_DOC                                                                                    \
	"{\"id\": 7, \"customer\": {\"email\": \"a@b.example\", \"name\": \"Ann\"}, \"x\": 1}"

/* Delegated and break-glass grants carry the data minimization of the
 * grants behind them (THREATS row 35: a child never gets more than its
 * parent; an emergency grant never unmasks data). */
static void test_temp_minimize(void)
{
	static const char rules[] =
	        "grants:\n"
	        "  - id: crm\n    agent: coder\n    tool: fs\n    actions: [read]\n"
	        "    scope: {paths: ['/crm/**']}\n    mask: {email: pseudonymize, card: redact}\n"
	        "    fields: [id, customer]\n    require_task: true\n" GRANT_TAIL
	        "    expires: 2031-01-01\n"
	        "  - id: crm-del\n    agent: coder\n    tool: fs\n    actions: [delete]\n"
	        "    scope: {paths: ['/crm/**']}\n    approval: human\n    mask: [phone]\n    "
	        "fields: [id]\n" GRANT_TAIL "    expires: 2031-01-01\n"
	        "  - id: web-get\n    agent: other\n    tool: web\n    actions: [read]\n"
	        "    scope: {hosts: [a.example]}\n    fields: [id]\n" GRANT_TAIL
	        "    expires: 2031-01-01\n"
	        "  - id: web-get2\n    agent: other\n    tool: web\n    actions: [read]\n"
	        "    scope: {hosts: [b.example]}\n    fields: [customer.email]\n"
	        "    mask: {email: drop}\n" GRANT_TAIL "    expires: 2031-01-01\n"
	        "  - id: sh-open\n    agent: other\n    tool: sh\n    actions: [execute]\n"
	        "    scope: {argv: [ls]}\n" GRANT_TAIL "    expires: 2031-01-01\n"
	        "  - id: sh-masked\n    agent: other\n    tool: sh\n    actions: [execute]\n"
	        "    scope: {argv: [cat]}\n    fields: [id]\n    mask: [card]\n" GRANT_TAIL
	        "    expires: 2031-01-01\n";
	struct cd_err err = { 0, "" };
	struct cd_policy *p = load(rules, &err);
	struct cd_decision d;
	struct rq r = { "coder/sub", "T1", "fs", "read", "/crm/a", NULL, -1, { NULL }, "@2000" };
	char *out;

	ok(p != NULL, "policy with masking grants loads (%s)", err.msg);
	if (!p)
		return;
	ok(cd_policy_add_temp(p, CD_TEMP_DELEGATED, "dg-1", "coder",
	                      "{id: dg-1, agent: coder/sub, tool: fs, actions: [read], "
	                      "scope: {paths: ['/crm/**']}, " TEMP_TAIL,
	                      1000, &err) == 0 &&
	           cd_policy_add_temp(p, CD_TEMP_DELEGATED, "dg-1d", "coder",
	                              "{id: dg-1d, agent: coder/sub, tool: fs, actions: [delete], "
	                              "scope: {paths: ['/crm/**']}, approval: human, " TEMP_TAIL,
	                              1000, &err) == 0,
	   "delegated grants without mask, fields or require_task are added (%s)", err.msg);
	decide(p, &r, &d);
	is_int(d.verdict, CD_VERDICT_ALLOW, "the child reads what the parent holds");
	is_int(d.mask.action[CD_SCAN_EMAIL], CD_MASK_PSEUDONYMIZE,
	       "the parent's mask reaches the child (email pseudonymized)");
	is_int(d.mask.action[CD_SCAN_CARD], CD_MASK_REDACT, "... card redacted");
	is_int(d.mask.action[CD_SCAN_PHONE], CD_MASK_NONE,
	       "... not the mask of a parent grant that did not decide (phone)");
	is_int((int)d.nfield_lists, 1, "the parent's fields reach the child");
	out = scoped(&d, CRM_DOC);
	is_str(out ? out : "",
	       "{\"customer\":{\"email\":\"a@b.example\",\"name\":\"Ann\"},\"id\":7}",
	       "... a field the parent's grant drops is cut from the child's result");
	free(out);
	r.task = NULL;
	decide(p, &r, &d);
	is_int(d.verdict, CD_VERDICT_DENY, "the parent's require_task reaches the child");
	ok(strstr(d.reason, "requires a task") != NULL, "... saying why (%s)", d.reason);
	r.task = "T1";
	r.action = "delete";
	decide(p, &r, &d);
	ok(d.verdict == CD_VERDICT_NEEDS_APPROVAL && d.approval && !strcmp(d.approval, "human"),
	   "a delete waits for approval as the parent's does");
	is_int(d.mask.action[CD_SCAN_PHONE], CD_MASK_REDACT,
	       "... with the mask of the parent's approval grant");
	is_int(d.mask.action[CD_SCAN_EMAIL], CD_MASK_NONE, "... and only that");
	out = scoped(&d, CRM_DOC);
	is_str(out ? out : "", "{\"id\":7}", "... and its fields");
	free(out);
	r.action = "read";

	/* The child's own settings narrow further, never widen. */
	ok(cd_policy_add_temp(p, CD_TEMP_DELEGATED, "dg-2", "coder",
	                      "{id: dg-2, agent: coder/narrow, tool: fs, actions: [read], "
	                      "scope: {paths: ['/crm/**']}, fields: [customer.email, x], "
	                      "mask: {email: drop, card: pseudonymize}, " TEMP_TAIL,
	                      1000, &err) == 0,
	   "a delegated grant with its own fields and mask is added (%s)", err.msg);
	r.agent = "coder/narrow";
	decide(p, &r, &d);
	is_int(d.verdict, CD_VERDICT_ALLOW, "the narrowed child reads");
	is_int(d.mask.action[CD_SCAN_EMAIL], CD_MASK_DROP, "its stricter email action wins");
	is_int(d.mask.action[CD_SCAN_CARD], CD_MASK_REDACT,
	       "the parent's stricter card action wins over its own");
	is_int((int)d.nfield_lists, 2, "both field lists apply");
	out = scoped(&d, CRM_DOC);
	is_str(out ? out : "", "{\"customer\":{\"email\":\"a@b.example\"}}",
	       "fields are intersected: customer (parent) and customer.email, x (child) "
	       "leave customer.email");
	free(out);

	/* Chains: the grandchild carries every level. */
	ok(cd_policy_add_temp(p, CD_TEMP_DELEGATED, "dg-3", "coder/narrow",
	                      "{id: dg-3, agent: coder/narrow/leaf, tool: fs, actions: [read], "
	                      "scope: {paths: ['/crm/**']}, " TEMP_TAIL,
	                      1000, &err) == 0,
	   "a grandchild grant is added (%s)", err.msg);
	r.agent = "coder/narrow/leaf";
	decide(p, &r, &d);
	ok(d.verdict == CD_VERDICT_ALLOW && d.mask.action[CD_SCAN_EMAIL] == CD_MASK_DROP &&
	           d.mask.action[CD_SCAN_CARD] == CD_MASK_REDACT && d.nfield_lists == 2,
	   "the grandchild carries its parent's and grandparent's minimization");

	/* Break-glass: the agent's written grants on the tool still minimize. */
	ok(cd_policy_add_temp(p, CD_TEMP_BREAK_GLASS, "bg-1", NULL,
	                      "{id: bg-1, agent: coder, tool: fs, actions: [read], "
	                      "scope: {paths: ['/other/**']}, " TEMP_TAIL,
	                      1000, &err) == 0,
	   "a break-glass grant outside the masking grant's scope is added (%s)", err.msg);
	r.agent = "coder";
	r.path = "/other/a";
	decide(p, &r, &d);
	is_int(d.verdict, CD_VERDICT_ALLOW, "the break-glass grant allows");
	is_str(d.nids ? d.ids[0] : "", "bg-1", "... alone");
	ok(d.mask.action[CD_SCAN_EMAIL] == CD_MASK_PSEUDONYMIZE &&
	           d.mask.action[CD_SCAN_CARD] == CD_MASK_REDACT &&
	           d.mask.action[CD_SCAN_PHONE] == CD_MASK_REDACT,
	   "it masks every type any of the agent's grants on the tool masks");
	out = scoped(&d, CRM_DOC);
	is_str(out ? out : "",
	       "{\"customer\":{\"email\":\"a@b.example\",\"name\":\"Ann\"},\"id\":7}",
	       "and cuts the fields none of them keeps");
	free(out);
	r.task = NULL;
	decide(p, &r, &d);
	is_int(d.verdict, CD_VERDICT_DENY, "and requires a task as they do");
	r.task = "T1";
	ok(cd_policy_add_temp(p, CD_TEMP_BREAK_GLASS, "bg-2", NULL,
	                      "{id: bg-2, agent: other, tool: web, actions: [read], "
	                      "scope: {hosts: [c.example]}, " TEMP_TAIL,
	                      1000, &err) == 0,
	   "a break-glass grant on a tool with two field-scoped grants is added (%s)", err.msg);
	r.agent = "other";
	r.tool = "web";
	r.path = NULL;
	r.host = "c.example";
	decide(p, &r, &d);
	out = scoped(&d, CRM_DOC);
	is_str(out ? out : "", "{\"customer\":{\"email\":\"a@b.example\"},\"id\":7}",
	       "it keeps a field any of them keeps (id, customer.email), nothing else");
	free(out);
	is_int(d.mask.action[CD_SCAN_EMAIL], CD_MASK_DROP, "with the strictest mask among them");
	ok(cd_policy_add_temp(p, CD_TEMP_BREAK_GLASS, "bg-3", NULL,
	                      "{id: bg-3, agent: other, tool: sh, actions: [execute], "
	                      "scope: {argv: [rm]}, " TEMP_TAIL,
	                      1000, &err) == 0,
	   "a break-glass grant on a tool where one grant keeps every field is added (%s)",
	   err.msg);
	r.tool = "sh";
	r.action = "execute";
	r.host = NULL;
	r.argv[0] = "rm";
	decide(p, &r, &d);
	ok(d.verdict == CD_VERDICT_ALLOW && d.nfield_lists == 0 &&
	           d.mask.action[CD_SCAN_CARD] == CD_MASK_REDACT,
	   "no field scoping then (a grant shows every field), but the mask stays");
	cd_policy_free(p);
}

struct match_ids {
	char ids[64][32];
	size_t n;
};

static void collect_matched(const struct cd_explain_step *st, void *ctx)
{
	struct match_ids *m = ctx;

	if (st->matched && !st->forbid && m->n < 64)
		snprintf(m->ids[m->n++], sizeof m->ids[0], "%s", st->id);
}

/* A large (agent, tool) bucket is decided through its path index: the
 * grants it allows must be exactly those that match one by one (explain
 * looks at every rule without the index). */
static void test_path_index(void)
{
	static const char *const globs[] = {
		"/**",       "/data/**",     "/data/a/**", "/data/a/*.txt", "/data/a/b/c",
		"/data/?/x", "/data/*/y/**", "/other/**",  "/data/ab/**",   "/data",
		"/d*/a/**",  "/data/a/b",    "/x/y/z/**",  "/data/a/b/**",  "/data/a/*",
	};
	static const char *const paths[] = {
		"/data",         "/data/a",       "/data/a/f.txt",  "/data/a/b/c", "/data/b/x",
		"/data/q/y/z",   "/other/1",      "/data/ab/c",     "/dz/a/q",     "/",
		"/data/a/b/c/d", "/x/y/z",        "/x/y",           "/data/a/b",   "/datax/a",
		"/data/a/g.txt", "/data/abc/y/1", "/data/a/b/../c",
	};
	char buf[65536], *w = buf;
	size_t i, j, nfail = 0, ncases = 0;
	struct cd_policy *p;
	struct cd_err err = { 0, "" };

	w += snprintf(w, sizeof buf, "%sgrants:\n", base);
	for (i = 0; i < 120; i++) {
		const char *g1 = globs[i % CD_ARRAY_SIZE(globs)];
		const char *g2 = globs[(i * 7 + 3) % CD_ARRAY_SIZE(globs)];
		w += snprintf(
		        w, sizeof buf - (size_t)(w - buf),
		        "  - {id: g%03zu, agent: coder, tool: fs, actions: [%s], scope: {paths: "
		        "['%s'%s%s%s]}, owner: o, justification: j, review_by: 2030-01-01, "
		        "expires: 2030-01-01}\n",
		        i, i % 3 ? "read" : "read, update", g1, i % 4 ? "" : ", '", i % 4 ? "" : g2,
		        i % 4 ? "" : "'");
	}
	ok(cd_policy_load_buf("big.yaml", buf, (size_t)(w - buf), &p, &err) == 0,
	   "a policy with 120 grants in one bucket loads (%s)", err.msg);
	if (!p)
		return;
	for (i = 0; i < CD_ARRAY_SIZE(paths); i++) {
		for (j = 0; j < 2; j++) {
			struct cd_request q;
			struct cd_decision d;
			struct match_ids m = { .n = 0 };
			const char *pp[1] = { paths[i] };
			size_t k, same;
			cd_request_init(&q);
			q.agent = "coder";
			q.tool = "fs";
			q.action = j ? CD_ACTION_UPDATE : CD_ACTION_READ;
			q.paths = pp;
			q.npaths = 1;
			q.now = 1800000000;
			cd_policy_explain(p, &q, collect_matched, &m, &d, &err);
			same = d.nids_total == m.n;
			for (k = 0; same && k < m.n && k < d.nids; k++)
				same = strcmp(d.ids[k], m.ids[k]) == 0;
			if (!same || (m.n > 0) != (d.verdict == CD_VERDICT_ALLOW)) {
				nfail++;
				diag("%s %s: index %zu ids, rules %zu", paths[i],
				     j ? "update" : "read", d.nids_total, m.n);
			}
			ncases++;
		}
	}
	is_int((int)nfail, 0, "the index decides like a scan over %zu requests", ncases);
	cd_policy_free(p);
}

int main(void)
{
	tap_start(30);
	test_path_index();
	test_decisions();
	test_order();
	test_load_errors();
	test_temp_grants();
	test_minimize();
	test_temp_minimize();
	return tap_done();
}
