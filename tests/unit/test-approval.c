/* test-approval.c — the approval queue: single use, bound to the hash,
 * deadlines, stale decisions, expiry, sampling without repeats, and rows
 * edited behind cordon's back. */
#include "../tap.h"

#include "gate/approval.h"
#include "store/state.h"

#include <errno.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Edit the database behind cordon's back, through a connection of its
 * own (the library's connection is not the test's to use). */
static int edit(const char *path, const char *sql)
{
	sqlite3 *db = NULL;
	int rc = sqlite3_open(path, &db);

	if (rc == SQLITE_OK)
		rc = sqlite3_exec(db, sql, NULL, NULL, NULL);
	sqlite3_close(db);
	return rc;
}

static int count_cb(const struct cd_approval *a, void *ctx)
{
	(void)a;
	(*(int *)ctx)++;
	return 0;
}

static int status_cb(const struct cd_approval *a, void *ctx)
{
	snprintf(ctx, 32, "%s", a->status);
	return 0;
}

static void queue(struct cd_state *s, struct cd_approval *a, const char *args, int64_t now,
                  int64_t deadline)
{
	struct cd_err err = { 0, "" };

	memset(a, 0, sizeof *a);
	a->agent = "coder";
	a->tool = "shell";
	a->action = "execute";
	a->args_json = args;
	a->approval = "human";
	a->created = now;
	a->deadline = deadline;
	ok(cd_approval_request(s, a, &err) == 0, "queue %s (%s)", args, err.msg);
}

int main(void)
{
	char dir[] = "/tmp/cordon-approval.XXXXXX", path[256], st[32], other[65];
	struct cd_state *s = NULL;
	struct cd_err err = { 0, "" };
	struct cd_approval a, b, c, e;
	int n = 0;
	size_t got = 0;

	tap_start(30);
	if (!mkdtemp(dir))
		return 1;
	snprintf(path, sizeof path, "%s/sub/state.db", dir);
	ok(cd_state_open(path, &s, &err) == 0, "state database opens (%s)", err.msg);
	if (!s)
		return tap_done();

	queue(s, &a, "{\"argv\":[\"rm\",\"x\"]}", 100, 200);
	ok(strncmp(a.id, "ap-", 3) == 0 && strlen(a.id) == 19, "ids look like ap-<16 hex>");
	cd_approval_hash("shell", "execute", "{\"argv\":[\"rm\",\"x\"]}", other);
	is_str(a.args_sha256, other, "the hash covers tool, action and arguments");
	cd_approval_hash("shell", "execute", "{\"argv\":[\"rm\",\"y\"]}", other);
	ok(strcmp(a.args_sha256, other) != 0, "one argument more or less changes the hash");
	cd_approval_hash("shell", "delete", "{\"argv\":[\"rm\",\"x\"]}", other);
	ok(strcmp(a.args_sha256, other) != 0, "so does the action");

	ok(cd_approval_consume(s, a.id, a.args_sha256, 110, NULL, NULL, &err) == -EPERM,
	   "a pending request cannot be used");
	ok(cd_approval_decide(s, a.id, 1, "alice", NULL, NULL, 250, NULL, NULL, &err) == -ESTALE,
	   "nor approved past its deadline");
	ok(cd_approval_decide(s, a.id, 1, "alice", "ok", NULL, 120, NULL, NULL, &err) == 0,
	   "approve (%s)", err.msg);
	ok(cd_approval_decide(s, a.id, 0, "bob", NULL, NULL, 121, NULL, NULL, &err) == -ESTALE,
	   "a decided request cannot be decided again");
	ok(cd_approval_consume(s, a.id, other, 130, NULL, NULL, &err) == -EPERM,
	   "an approval is not used for another call's hash");
	ok(cd_approval_consume(s, a.id, a.args_sha256, 230, NULL, NULL, &err) == -EPERM,
	   "nor after its deadline");
	ok(cd_approval_consume(s, a.id, a.args_sha256, 130, NULL, NULL, &err) == 0,
	   "the requester uses it (%s)", err.msg);
	ok(cd_approval_consume(s, a.id, a.args_sha256, 131, NULL, NULL, &err) == -EPERM, "once");
	ok(cd_approval_get(s, a.id, status_cb, st, &err) == 0 && !strcmp(st, "used"),
	   "its status is used");
	ok(cd_approval_get(s, "ap-nope", status_cb, st, &err) == -ENOENT, "unknown ids: ENOENT");

	/* A row whose arguments were edited after approval is refused. */
	queue(s, &b, "{\"argv\":[\"rm\",\"b\"]}", 100, 300);
	ok(cd_approval_decide(s, b.id, 1, "alice", NULL, NULL, 120, NULL, NULL, &err) == 0,
	   "approve b");
	ok(edit(path, "UPDATE approvals SET args_json = '{\"argv\":[\"rm\",\"-rf\",\"/\"]}'"
	              " WHERE args_json LIKE '%\"b\"%'") == SQLITE_OK,
	   "edit the row behind cordon's back");
	ok(cd_approval_consume(s, b.id, b.args_sha256, 130, NULL, NULL, &err) == -EPERM,
	   "the edited row does not match its own hash: refused");

	/* A refusing callback leaves the row unchanged. */
	queue(s, &c, "{\"argv\":[\"rm\",\"c\"]}", 100, 300);
	ok(cd_approval_decide(s, c.id, 1, "coder", NULL, NULL, 120, (cd_approval_fn)count_cb, &n,
	                      &err) == 0,
	   "a callback returning 0 lets the decision through");
	queue(s, &c, "{\"argv\":[\"rm\",\"d\"]}", 100, 300);

	/* Withdrawal (the call was cancelled): pending or approved, never
	 * approvable or usable after; a used one stays used. */
	queue(s, &e, "{\"argv\":[\"rm\",\"e\"]}", 100, 300);
	n = 0;
	ok(cd_approval_withdraw(s, e.id, "cordon", "cancelled", 120, (cd_approval_fn)count_cb, &n,
	                        &err) == 0 &&
	           n == 1,
	   "withdraw a pending request (%s)", err.msg);
	ok(cd_approval_get(s, e.id, status_cb, st, &err) == 0 && !strcmp(st, "withdrawn"),
	   "withdrawn is its status");
	ok(cd_approval_decide(s, e.id, 1, "alice", NULL, NULL, 121, NULL, NULL, &err) == -ESTALE,
	   "a withdrawn request cannot be approved");
	queue(s, &e, "{\"argv\":[\"rm\",\"f\"]}", 100, 300);
	ok(cd_approval_decide(s, e.id, 1, "alice", NULL, NULL, 120, NULL, NULL, &err) == 0 &&
	           cd_approval_withdraw(s, e.id, "cordon", "cancelled", 121, NULL, NULL, &err) == 0,
	   "an approved, unused one is withdrawn too (%s)", err.msg);
	ok(cd_approval_consume(s, e.id, e.args_sha256, 122, NULL, NULL, &err) == -EPERM,
	   "... and cannot be used");
	ok(cd_approval_withdraw(s, a.id, "cordon", "cancelled", 123, NULL, NULL, &err) == -ESTALE,
	   "a used one is not withdrawn");

	/* Expiry: pending and unused approvals past their deadline. */
	n = 0;
	ok(cd_approval_expire(s, 400, count_cb, &n, &got, &err) == 0, "expire (%s)", err.msg);
	is_int((int)got, 3, "three were past their deadline (b approved unused, c approved, d)");
	ok(cd_approval_get(s, c.id, status_cb, st, &err) == 0 && !strcmp(st, "expired"),
	   "expired is their status");

	/* Sampling picks each approval at most once. */
	n = 0;
	ok(cd_approval_sample(s, 10, 0, "carol", 500, count_cb, &n, &got, &err) == 0, "sample (%s)",
	   err.msg);
	is_int((int)got, 1, "one approved-and-used call to sample");
	ok(cd_approval_sample(s, 10, 0, "carol", 501, NULL, NULL, &got, &err) == 0 && got == 0,
	   "and never twice");

	cd_state_close(s);
	/* A database from a newer cordon is refused. */
	{
		sqlite3 *db;
		if (sqlite3_open(path, &db) == SQLITE_OK) {
			sqlite3_exec(db, "PRAGMA user_version=999", NULL, NULL, NULL);
			sqlite3_close(db);
		}
		ok(cd_state_open(path, &s, &err) == -CD_E_CORRUPT, "a newer schema is refused (%s)",
		   err.msg);
	}
	snprintf(path, sizeof path, "rm -rf '%s'", dir);
	if (system(path) != 0)
		diag("cleanup failed");
	return tap_done();
}
