/* test-gate.c — the gate: decisions against a policy, write-ahead intent
 * and result records, the code hash of interpreter runs. */
#include "../tap.h"

#include "audit/audit.h"
#include "gate/gate.h"
#include "sandbox/plan.h"
#include "sandbox/sandbox.h"

#include <errno.h>
#include <fcntl.h>
#include <sodium.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

static const char policy_yaml[] = "version: 1\n"
                                  "agents:\n"
                                  "  - id: coder\n"
                                  "    owner: a@example.com\n"
                                  "tools:\n"
                                  "  - id: shell\n"
                                  "    kind: command\n"
                                  "grants:\n"
                                  "  - id: g-make-test\n"
                                  "    agent: coder\n"
                                  "    tool: shell\n"
                                  "    actions: [execute]\n"
                                  "    scope:\n"
                                  "      argv: [make, test]\n"
                                  "    owner: a@example.com\n"
                                  "    justification: tests\n"
                                  "    review_by: 2030-01-01\n"
                                  "    expires: 2030-06-30\n";

static void sha_of(const char *s, size_t n, char out[65])
{
	unsigned char d[32];
	crypto_hash_sha256(d, (const unsigned char *)s, n);
	sodium_bin2hex(out, 65, d, sizeof d);
}

static void test_code_sha(const char *dir)
{
	char *sh[] = { "sh", "-c", "echo hi", NULL };
	char *py[] = { "/usr/bin/python3.11", "-u", "script.py", "arg", NULL };
	char *plain[] = { "ls", "-l", NULL };
	char *bare[] = { "bash", NULL };
	char got[65], want[65], path[512];
	int fd, n;

	is_int(cd_gate_code_sha256(sh, dir, got), 0, "sh -c has code");
	sha_of("echo hi", 7, want);
	is_str(got, want, "the code of sh -c is the string");
	n = snprintf(path, sizeof path, "%s/script.py", dir);
	fd = (n > 0 && (size_t)n < sizeof path) ? open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644)
	                                        : -1;
	if (fd >= 0) {
		ok(write(fd, "print(1)\n", 9) == 9, "script written");
		close(fd);
	}
	is_int(cd_gate_code_sha256(py, dir, got), 0, "python3.11 script has code");
	sha_of("print(1)\n", 9, want);
	is_str(got, want, "the code of a script run is the file, found from the cwd");
	is_int(cd_gate_code_sha256(plain, dir, got), -ENOENT, "ls is not an interpreter");
	is_int(cd_gate_code_sha256(bare, dir, got), -ENOENT, "an interpreter without code");
	unlink(path);
}

struct count {
	int decision, intent, result;
	char last_decision[32];
};

static int count_fn(const struct cd_audit_entry *e, void *ctx)
{
	struct count *c = ctx;
	const char *kind = e->str[CD_AF_KIND].p;
	size_t kl = e->str[CD_AF_KIND].len;

	if (kl == 8 && memcmp(kind, "decision", 8) == 0) {
		c->decision++;
		if (e->str[CD_AF_DECISION].p &&
		    e->str[CD_AF_DECISION].len < sizeof c->last_decision) {
			memcpy(c->last_decision, e->str[CD_AF_DECISION].p,
			       e->str[CD_AF_DECISION].len);
			c->last_decision[e->str[CD_AF_DECISION].len] = '\0';
		}
	} else if (kl == 10 && memcmp(kind, "run.intent", 10) == 0) {
		c->intent++;
	} else if (kl == 10 && memcmp(kind, "run.result", 10) == 0) {
		c->result++;
	}
	return 0;
}

static void count_records(struct cd_audit *a, struct count *c)
{
	struct cd_audit_filter f;

	memset(c, 0, sizeof *c);
	memset(&f, 0, sizeof f);
	cd_audit_query(a, &f, count_fn, c, NULL);
}

static void test_decide(const char *dir)
{
	char db[512];
	char *allowed[] = { "make", "test", "-j2", NULL };
	char *denied[] = { "make", "deploy", NULL };
	struct cd_policy *pol = NULL;
	struct cd_audit *a = NULL;
	struct cd_gate g;
	struct cd_run_request rq;
	struct cd_decision d;
	struct cd_err err = { 0, "" };
	struct count c;
	struct cd_plan plan;
	struct cd_result res;
	int n = snprintf(db, sizeof db, "%s/audit.db", dir);

	if (n < 0 || (size_t)n >= sizeof db)
		return;
	is_int(cd_policy_load_buf("test.yaml", policy_yaml, sizeof policy_yaml - 1, &pol, &err), 0,
	       "the policy loads (%s)", err.msg);
	is_int(cd_audit_open(db, NULL, &a, &err), 0, "the log opens (%s)", err.msg);
	if (!pol || !a)
		goto out;
	memset(&g, 0, sizeof g);
	g.audit = a;
	g.policy = pol;
	g.policy_path = "test.yaml";
	g.now = 1893456000; /* 2030-01-01 */
	memset(&rq, 0, sizeof rq);
	rq.run_id = "00112233445566778899aabbccddeeff";
	rq.agent = "coder";
	rq.tool = "shell";
	rq.cwd = dir;

	rq.argv = denied;
	is_int(cd_gate_decide_run(&g, &rq, &d, &err), 0, "deciding a denied argv succeeds");
	is_int(d.verdict, CD_VERDICT_DENY, "make deploy is denied");
	count_records(a, &c);
	is_int(c.decision, 1, "a deny is recorded at once");
	is_str(c.last_decision, "deny", "as a deny");
	is_int(c.intent, 0, "a denied run has no intent record");
	is_int(c.result, 0, "nor a result record");

	rq.argv = allowed;
	is_int(cd_gate_decide_run(&g, &rq, &d, &err), 0, "deciding an allowed argv succeeds");
	is_int(d.verdict, CD_VERDICT_ALLOW, "make test -j2 is allowed by the argv prefix");
	ok(d.nids == 1 && strcmp(d.ids[0], "g-make-test") == 0, "the deciding grant is named");
	count_records(a, &c);
	is_int(c.decision, 1, "an allow is not recorded before the intent");
	is_int(c.intent, 0, "deciding writes no intent");

	/* The allow goes to the log with the intent, then the result. */
	memset(&plan, 0, sizeof plan);
	plan.profile = "default";
	is_int(cd_gate_run_intent(&g, &rq, &plan, &d, &err), 0, "the intent is recorded (%s)",
	       err.msg);
	count_records(a, &c);
	is_int(c.decision, 2, "the allow is recorded with the intent");
	is_str(c.last_decision, "allow", "as an allow");
	is_int(c.intent, 1, "one run.intent record");
	is_int(c.result, 0, "no result before the run ends");
	memset(&res, 0, sizeof res);
	res.exit_code = 3;
	memset(res.argv_sha256, 'a', 64);
	memset(res.stdin_sha256, 'b', 64);
	memset(res.stdout_sha256, 'c', 64);
	memset(res.stderr_sha256, 'd', 64);
	is_int(cd_gate_run_result(&g, &rq, &plan, &res, NULL, &err), 0,
	       "the result is recorded (%s)", err.msg);
	count_records(a, &c);
	is_int(c.intent, 1, "still one intent");
	is_int(c.result, 1, "one run.result record");
	is_int(c.decision, 2, "the result adds no decision");

	g.now = 1924992000; /* 2031-01-01, after expiry */
	is_int(cd_gate_decide_run(&g, &rq, &d, &err), 0, "deciding after expiry succeeds");
	is_int(d.verdict, CD_VERDICT_DENY, "an expired grant is absent");
	rq.agent = "mallory";
	g.now = 1893456000;
	cd_gate_decide_run(&g, &rq, &d, &err);
	is_int(d.verdict, CD_VERDICT_DENY, "another agent is denied");
	count_records(a, &c);
	is_int(c.decision, 4, "both denies are recorded");
	is_int(c.intent, 1, "denies add no intent");
	is_int(c.result, 1, "nor a result");
out:
	cd_audit_close(a);
	cd_policy_free(pol);
	unlink(db);
}

int main(void)
{
	char tmpl[] = "/tmp/cordon-test-gate.XXXXXX";
	char *dir;

	tap_start(30);
	if (sodium_init() < 0)
		return 1;
	dir = mkdtemp(tmpl);
	if (!dir) {
		tap_skip("no temp dir");
		return tap_done();
	}
	test_code_sha(dir);
	test_decide(dir);
	{
		char p[600];
		int n = snprintf(p, sizeof p, "%s/audit.db-wal", dir);
		if (n > 0 && (size_t)n < sizeof p)
			unlink(p);
		n = snprintf(p, sizeof p, "%s/audit.db-shm", dir);
		if (n > 0 && (size_t)n < sizeof p)
			unlink(p);
	}
	rmdir(dir);
	return tap_done();
}
