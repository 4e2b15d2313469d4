/* test-policy-review.c — `policy review`: the date flags at their boundary
 * seconds, and uses counted from a real audit log (only allow or
 * needs-approval decisions of the grant's own agent and tool count). */
#include "../tap.h"

#include "audit/audit.h"
#include "policy/policy-review.h"
#include "policy/policy.h"

#include <time.h>

static const char pol[] =
        "version: 1\n"
        "agents: [{id: a, owner: o}, {id: b, owner: o}]\n"
        "tools: [{id: sh, kind: command}, {id: sh2, kind: command}]\n"
        "grants:\n"
        "  - {id: g1, agent: a, tool: sh, actions: [execute], scope: {argv: [x]}, owner: o,\n"
        "     justification: j, review_by: 2030-01-01, expires: 2031-01-01}\n"
        "  - {id: g2, agent: a, tool: sh, actions: [execute], scope: {argv: [y]}, owner: o,\n"
        "     justification: j, review_by: 2030-06-01, expires: 2030-07-01}\n"
        "  - {id: g3, agent: b, tool: sh, actions: [execute], scope: {argv: [z]}, owner: o,\n"
        "     justification: j, review_by: 2099-01-01, expires: 2099-01-01}\n";

struct seen {
	unsigned flags[3];
	uint64_t uses[3];
	int64_t last[3];
};

static void cb(const struct cd_review_item *it, void *ctx)
{
	struct seen *s = ctx;
	int i = it->id[1] - '1';
	if (i >= 0 && i < 3) {
		s->flags[i] = it->flags;
		s->uses[i] = it->uses;
		s->last[i] = it->last_used;
	}
}

static int64_t t(const char *s)
{
	int64_t v = 0;
	cd_policy_parse_time(s, strlen(s), &v);
	return v;
}

static void test_dates(struct cd_policy *p)
{
	static const struct {
		const char *at;
		int64_t soon;
		unsigned want[3];
	} cases[] = {
		{ "2029-12-31T23:59:59Z", 0, { 0, 0, 0 } },
		{ "2030-01-01", 0, { CD_REVIEW_PAST_REVIEW, 0, 0 } },
		{ "2030-06-01",
		  30 * 86400,
		  { CD_REVIEW_PAST_REVIEW, CD_REVIEW_PAST_REVIEW | CD_REVIEW_EXPIRING, 0 } },
		{ "2030-05-31", 30 * 86400, { CD_REVIEW_PAST_REVIEW, 0, 0 } },
		{ "2030-05-31T23:59:59Z", 86400, { CD_REVIEW_PAST_REVIEW, 0, 0 } },
		{ "2030-06-30",
		  86400,
		  { CD_REVIEW_PAST_REVIEW, CD_REVIEW_PAST_REVIEW | CD_REVIEW_EXPIRING, 0 } },
		{ "2030-06-30T23:59:59Z", 0, { CD_REVIEW_PAST_REVIEW, CD_REVIEW_PAST_REVIEW, 0 } },
		{ "2030-07-01",
		  0,
		  { CD_REVIEW_PAST_REVIEW, CD_REVIEW_PAST_REVIEW | CD_REVIEW_EXPIRED, 0 } },
	};
	size_t i, j, att;

	for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		struct cd_review_opts o = { t(cases[i].at), cases[i].soon, 0, NULL };
		struct seen s;
		size_t want_att = 0;
		memset(&s, 0, sizeof s);
		is_int(cd_policy_review(p, &o, cb, &s, &att, NULL), 0, "review at %s runs",
		       cases[i].at);
		for (j = 0; j < 3; j++) {
			is_int(s.flags[j], cases[i].want[j], "at %s soon %llds: g%zu flags %u",
			       cases[i].at, (long long)cases[i].soon, j + 1, cases[i].want[j]);
			want_att += cases[i].want[j] != 0;
		}
		is_int(att, want_att, "at %s: %zu need attention", cases[i].at, want_att);
	}
}

static void test_log(struct cd_policy *p)
{
	char dir[] = "/tmp/cordon-review.XXXXXX", path[256];
	struct cd_audit_opts ao;
	struct cd_audit *log = NULL;
	struct cd_err err = { 0 };
	static const struct cd_record recs[] = {
		/* counts for g1 */
		{ .kind = "decision",
		  .agent = "a",
		  .tool = "sh",
		  .decision = "allow",
		  .grant_ids = "g1" },
		{ .kind = "decision",
		  .agent = "a",
		  .tool = "sh",
		  .decision = "needs-approval",
		  .grant_ids = "g0,g1,zz" },
		/* none of these count */
		{ .kind = "decision",
		  .agent = "a",
		  .tool = "sh",
		  .decision = "deny",
		  .grant_ids = "g2" },
		{ .kind = "decision",
		  .agent = "b",
		  .tool = "sh",
		  .decision = "allow",
		  .grant_ids = "g2" },
		{ .kind = "decision",
		  .agent = "a",
		  .tool = "sh2",
		  .decision = "allow",
		  .grant_ids = "g2" },
		{ .kind = "run.result",
		  .agent = "a",
		  .tool = "sh",
		  .decision = "allow",
		  .grant_ids = "g2" },
		{ .kind = "decision",
		  .agent = "a",
		  .tool = "sh",
		  .decision = "allow",
		  .grant_ids = "g22,g" },
		/* g3 by its own agent */
		{ .kind = "decision",
		  .agent = "b",
		  .tool = "sh",
		  .decision = "allow",
		  .grant_ids = "g3" },
	};
	struct seen s;
	struct cd_review_opts o;
	int64_t now = (int64_t)time(NULL);
	size_t att;

	if (!mkdtemp(dir) || snprintf(path, sizeof path, "%s/audit.db", dir) < 0) {
		ok(0, "temp dir");
		return;
	}
	memset(&ao, 0, sizeof ao);
	ok(cd_audit_open(path, &ao, &log, &err) == 0, "open a log");
	ok(cd_audit_append_many(log, recs, sizeof recs / sizeof recs[0], NULL, &err) == 0,
	   "append decisions");
	memset(&s, 0, sizeof s);
	o.at = now + 10;
	o.soon = 0;
	o.unused = 90 * 86400;
	o.log = log;
	is_int(cd_policy_review(p, &o, cb, &s, &att, &err), 0, "review with a log runs");
	is_int(s.uses[0], 2, "g1: allow and needs-approval count");
	ok(s.last[0] >= now - 5 && s.last[0] <= now + 10, "g1: last use is now");
	is_int(s.uses[1], 0,
	       "g2: deny, other agent, other tool, other kind, prefix ids don't count");
	ok(s.flags[1] & CD_REVIEW_NEVER_USED, "g2: never used");
	is_int(s.uses[2], 1, "g3: used by its agent");
	ok(!(s.flags[0] & (CD_REVIEW_NEVER_USED | CD_REVIEW_UNUSED)), "g1: in use");
	o.at = now + 91 * 86400;
	memset(&s, 0, sizeof s);
	cd_policy_review(p, &o, cb, &s, &att, &err);
	ok(s.flags[0] & CD_REVIEW_UNUSED, "g1: unused 91 days later");
	ok(s.flags[2] & CD_REVIEW_UNUSED, "g3: unused 91 days later");
	o.unused = 0;
	memset(&s, 0, sizeof s);
	cd_policy_review(p, &o, cb, &s, &att, &err);
	ok(!(s.flags[0] & CD_REVIEW_UNUSED), "--unused 0: only never-used");
	o.at = now - 3600;
	memset(&s, 0, sizeof s);
	cd_policy_review(p, &o, cb, &s, &att, &err);
	is_int(s.uses[0], 0, "uses after --at are not counted");
	cd_audit_close(log);
	unlink(path);
	snprintf(path, sizeof path, "%s/audit.db-wal", dir);
	unlink(path);
	snprintf(path, sizeof path, "%s/audit.db-shm", dir);
	unlink(path);
	rmdir(dir);
}

int main(void)
{
	struct cd_policy *p = NULL;
	struct cd_err err = { 0 };

	tap_start(30);
	if (!ok(cd_policy_load_buf("t.yaml", pol, sizeof pol - 1, &p, &err) == 0, "policy loads")) {
		diag("%s", err.msg);
		return tap_done();
	}
	test_dates(p);
	test_log(p);
	is_int(cd_policy_review(NULL, NULL, NULL, NULL, NULL, NULL) < 0, 1, "NULL: an error");
	cd_policy_free(p);
	return tap_done();
}
