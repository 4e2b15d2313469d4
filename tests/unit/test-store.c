/* test-store.c — the store interface (store.h): the SQLite backend fills
 * every operation of the state database and of the audit log (a backend
 * with a hole would crash the caller that reaches it), and "wait for a
 * change" wakes for another process's commit and times out without one;
 * a tool definition seen twice in one second is new once. */
#include "../tap.h"

#include "audit/audit-int.h"
#include "store/state.h"
#include "store/store.h"
#include "policy/temp-grant.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define HAS(ops, f) ok((ops)->f != NULL, "%s: " #f, (ops)->name)

static void state_ops(const struct cd_store_ops *o)
{
	HAS(o, close);
	HAS(o, begin);
	HAS(o, commit);
	HAS(o, rollback);
	HAS(o, wait_change);
	HAS(o, grant_add);
	HAS(o, grant_list);
	HAS(o, grant_end);
	HAS(o, grant_sweep);
	HAS(o, grant_use);
	HAS(o, grant_used);
	HAS(o, approval_add);
	HAS(o, approval_get);
	HAS(o, approval_list);
	HAS(o, approval_move);
	HAS(o, approval_expire);
	HAS(o, approval_sample);
	HAS(o, pin_see);
	HAS(o, pin_list);
	HAS(o, pin_approve);
	HAS(o, proposal_save);
	HAS(o, proposal_load);
	HAS(o, proposal_list);
	HAS(o, proposal_finish);
	HAS(o, console_login_add);
	HAS(o, console_login_take);
	HAS(o, console_session_add);
	HAS(o, console_session_get);
	HAS(o, console_session_end);
	HAS(o, agent_token_add);
	HAS(o, agent_token_find);
	HAS(o, agent_token_list);
	HAS(o, agent_token_revoke);
}

static void audit_ops(const struct cd_store_ops *o)
{
	HAS(o, close);
	HAS(o, wait_change);
	HAS(o, audit_log_id);
	HAS(o, audit_begin);
	HAS(o, audit_head);
	HAS(o, audit_insert);
	HAS(o, audit_commit);
	HAS(o, audit_rollback);
	HAS(o, audit_meta_get);
	HAS(o, audit_meta_set);
	HAS(o, audit_size);
	HAS(o, audit_query);
	HAS(o, audit_read_begin);
	HAS(o, audit_read_end);
	HAS(o, audit_scan);
	HAS(o, audit_follows);
	HAS(o, audit_seq_used);
	HAS(o, audit_hash_at);
	HAS(o, audit_sync);
	HAS(o, audit_presize);
}

/* In a child, after a moment: a grant added through a connection of its
 * own (another process's commit). */
static pid_t add_grant_later(const char *path)
{
	pid_t pid = fork();

	if (pid == 0) {
		struct cd_state *s = NULL;
		struct cd_temp_grant g;
		struct cd_err err;

		usleep(100 * 1000);
		memset(&g, 0, sizeof g);
		g.kind = CD_TEMP_BREAK_GLASS;
		g.agent = "a";
		g.tool = "t";
		g.grant_json = "{}";
		g.by = "test";
		g.created = 1;
		g.expires = 2;
		_exit(cd_state_open(path, &s, &err) == 0 && cd_temp_add(s, &g, &err) == 0 ? 0 : 1);
	}
	return pid;
}

static pid_t append_later(const char *path)
{
	pid_t pid = fork();

	if (pid == 0) {
		struct cd_audit *a = NULL;
		struct cd_record r;
		struct cd_err err;

		usleep(100 * 1000);
		memset(&r, 0, sizeof r);
		r.kind = "test";
		_exit(cd_audit_open(path, NULL, &a, &err) == 0 &&
		                      cd_audit_append(a, &r, NULL, &err) == 0
		              ? 0
		              : 1);
	}
	return pid;
}

static int reaped_ok(pid_t pid)
{
	int status = 0;

	return pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status) &&
	       WEXITSTATUS(status) == 0;
}

/* A console session: stored hashed with its MAC, read back until it
 * expires, gone once ended (and expired rows with any end). */
static void sessions(struct cd_store *a, struct cd_store *b)
{
	struct cd_err err = { 0, "" };
	char who[64], mac[80];
	int64_t now = time(NULL), exp = 0;

	is_int(a->ops->console_session_add(a, "s1", "alice", "m1", now, now + 600, &err), 0,
	       "a session is stored %s", err.msg);
	is_int(b->ops->console_session_get(b, "s1", now, who, sizeof who, mac, sizeof mac, &exp,
	                                   &err),
	       0, "another connection reads it %s", err.msg);
	is_str(who, "alice", "... its person");
	is_str(mac, "m1", "... its MAC");
	ok(exp == now + 600, "... its expiry");
	is_int(b->ops->console_session_get(b, "s1", now + 600, who, sizeof who, mac, sizeof mac,
	                                   &exp, &err),
	       -ENOENT, "... not once expired");
	is_int(a->ops->console_session_add(a, "s2", "bob", "m2", now - 700, now - 100, &err), 0,
	       "an expired session is stored");
	is_int(b->ops->console_session_end(b, "s1", now, &err), 0, "a session is ended %s",
	       err.msg);
	is_int(a->ops->console_session_get(a, "s1", now, who, sizeof who, mac, sizeof mac, &exp,
	                                   &err),
	       -ENOENT, "... and is gone");
	is_int(a->ops->console_session_add(a, "s2", "bob", "m2", now, now + 60, &err), 0,
	       "... the expired row went with it (its hash is free again)");
}

/* A definition seen twice within one second (the inventory, then a
 * session): new the first time only, so its "pending" is recorded once. */
static void pins_seen_twice(struct cd_store *st)
{
	struct cd_err err = { 0, "" };
	int approved = 0, other = 0, isnew = 0, shadowed = 0;
	int64_t now = time(NULL);
	const char *sha = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";

	is_int(st->ops->pin_see(st, "files", "read", sha, "{}", now, &approved, &other, &isnew,
	                        &shadowed, &err),
	       0, "a tool definition is seen %s", err.msg);
	ok(isnew == 1 && !approved, "... new, pending");
	is_int(st->ops->pin_see(st, "files", "read", sha, "{}", now, &approved, &other, &isnew,
	                        &shadowed, &err),
	       0, "... seen again in the same second %s", err.msg);
	ok(isnew == 0, "... not new again (its pending record is made once)");
	is_int(st->ops->pin_see(st, "files", "read", sha, "{}", now + 5, &approved, &other, &isnew,
	                        &shadowed, &err),
	       0, "... and later %s", err.msg);
	ok(isnew == 0, "... still not new");
}

int main(void)
{
	char dir[] = "/tmp/cordon-store.XXXXXX", path[256], log[256];
	struct cd_state *s = NULL;
	struct cd_audit *a = NULL;
	struct cd_err err = { 0, "" };
	pid_t pid;

	if (!mkdtemp(dir))
		return 1;
	snprintf(path, sizeof path, "%s/state.db", dir);
	snprintf(log, sizeof log, "%s/audit.db", dir);
	ok(cd_state_open(path, &s, &err) == 0, "state database opens (%s)", err.msg);
	ok(cd_audit_open(log, NULL, &a, &err) == 0, "audit log opens (%s)", err.msg);
	if (!s || !a)
		return tap_done();
	state_ops(cd_state_store(s)->ops);
	sessions(cd_state_store(s), cd_state_store(s));
	pins_seen_twice(cd_state_store(s));
	audit_ops(cd_audit_store_(a)->ops);

	is_int(cd_state_wait(s, 120), 0, "state: no change, the wait times out");
	pid = add_grant_later(path);
	is_int(cd_state_wait(s, 20000), 1, "state: another process's commit ends the wait");
	ok(reaped_ok(pid), "... which was the grant it added");

	is_int(cd_audit_wait(a, 120), 0, "audit log: no append, the wait times out");
	pid = append_later(log);
	is_int(cd_audit_wait(a, 20000), 1, "audit log: another process's append ends the wait");
	ok(reaped_ok(pid), "... which was the record it appended");

	cd_audit_close(a);
	cd_state_close(s);
	snprintf(path, sizeof path, "rm -rf '%s'", dir);
	if (system(path) != 0)
		diag("cleanup failed");
	return tap_done();
}
