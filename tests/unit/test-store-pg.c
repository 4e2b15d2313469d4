/* test-store-pg.c — the PostgreSQL backend (store-pg-*.c) against a real
 * server (tests/helpers/pg-run.sh starts one when CORDON_TEST_PG_URI is
 * not set): it fills every operation; eight connections racing to use one
 * approval: exactly one wins; a grant revoked on one connection is refused
 * at the next use on another, its uses counted; a waiter learns of another
 * connection's change within a second (LISTEN/NOTIFY) and times out
 * without one; two audit writers (hosts) keep a chain each, a seq is
 * never used twice in a chain, and a writer refuses a record of another
 * chain. */
#include "../tap.h"

#include "store/store.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static const char *uri;

static struct cd_store *open_state(void)
{
	struct cd_store *st = NULL;
	struct cd_err err = { 0, "" };

	if (cd_store_state_open(uri, &st, &err) < 0) {
		diag("open: %s", err.msg);
		return NULL;
	}
	return st;
}

static int64_t now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void add_approval(struct cd_store *st, const char *id)
{
	struct cd_approval a;
	struct cd_err err = { 0, "" };

	memset(&a, 0, sizeof a);
	snprintf(a.id, sizeof a.id, "%s", id);
	a.agent = "coder";
	a.tool = "shell";
	a.action = "execute";
	a.args_json = "{\"argv\":[\"rm\",\"x\"]}";
	memset(a.args_sha256, 'a', 64);
	a.approval = "human";
	a.created = time(NULL);
	a.deadline = a.created + 600;
	ok(st->ops->approval_add(st, &a, &err) == 0, "approval %s queued %s", id, err.msg);
}

static int status_is(const struct cd_approval *a, void *ctx)
{
	return strcmp(a->status, ctx) == 0 ? 0 : 1;
}

static void race(struct cd_store *st)
{
	struct cd_store_approval_move m = { .id = "ap-race", .from = "pending", .to = "approved" };
	struct cd_err err = { 0, "" };
	int fds[2], i, st_code, wins = 0;
	pid_t pid[8];
	char c;

	add_approval(st, "ap-race");
	m.now = time(NULL);
	m.by = "alice";
	ok(st->ops->approval_move(st, &m, &err) == 0, "approved %s", err.msg);
	if (pipe(fds) < 0)
		return;
	for (i = 0; i < 8; i++) {
		pid[i] = fork();
		if (pid[i] == 0) {
			struct cd_store *mine = open_state();
			struct cd_store_approval_move u = { .id = "ap-race",
				                            .from = "approved",
				                            .to = "used",
				                            .check = status_is,
				                            .ctx = "approved" };
			close(fds[1]);
			if (!mine || read(fds[0], &c, 1) < 0)
				_exit(2);
			u.now = time(NULL);
			_exit(mine->ops->approval_move(mine, &u, NULL) == 0 ? 0 : 1);
		}
	}
	close(fds[0]);
	usleep(500000); /* every child connected */
	close(fds[1]);  /* go */
	for (i = 0; i < 8; i++)
		if (waitpid(pid[i], &st_code, 0) == pid[i] && WIFEXITED(st_code) &&
		    WEXITSTATUS(st_code) == 0)
			wins++;
	is_int(wins, 1, "eight connections race to use one approval: exactly one wins");
	ok(st->ops->approval_get(st, "ap-race", status_is, "used", &err) == 0,
	   "the approval is used");
}

static int count_uses(const struct cd_temp_grant *g, void *ctx)
{
	if (strcmp(g->id, "bg-pgtest") == 0)
		*(int64_t *)ctx = g->uses;
	return 0;
}

static void grants(struct cd_store *a, struct cd_store *b)
{
	struct cd_temp_grant g;
	struct cd_err err = { 0, "" };
	int64_t uses = -1;

	memset(&g, 0, sizeof g);
	snprintf(g.id, sizeof g.id, "bg-pgtest");
	g.kind = CD_TEMP_BREAK_GLASS;
	g.agent = "coder";
	g.tool = "shell";
	g.grant_json = "{}";
	g.ticket = "INC-1";
	g.by = "bob";
	g.created = time(NULL);
	g.expires = g.created + 600;
	ok(a->ops->grant_add(a, &g, &err) == 0, "grant added %s", err.msg);
	ok(b->ops->grant_use(b, "bg-pgtest", time(NULL), 1, &err) == 0,
	   "in force on another connection");
	ok(a->ops->grant_end(a, "bg-pgtest", "revoked", "bob", time(NULL), NULL, NULL, &err) == 0,
	   "revoked on the first %s", err.msg);
	is_int(b->ops->grant_use(b, "bg-pgtest", time(NULL), 1, &err), -CD_E_DENIED,
	       "refused at the next use on the other");
	b->ops->grant_list(b, 1, time(NULL), count_uses, &uses, &err);
	is_int(uses, 1, "one use counted");
}

static void waiting(struct cd_store *st)
{
	int64_t t0;
	pid_t pid;
	int code = -1, i;

	/* The earlier tests' changes (grants() used the grant from the other
	 * connection) are notified to this one asynchronously: under load one
	 * can arrive after the wait below has started.  Let them all in. */
	for (i = 0; i < 20 && st->ops->wait_change(st, 200) == 1; i++)
		;
	t0 = now_ms();
	is_int(st->ops->wait_change(st, 300), 0, "no change: the wait times out");
	ok(now_ms() - t0 >= 250, "... after its timeout");
	pid = fork();
	if (pid == 0) {
		struct cd_store *w = open_state();
		int64_t t;
		if (!w)
			_exit(2);
		t = now_ms();
		_exit(w->ops->wait_change(w, 10000) == 1 && now_ms() - t < 3000 ? 0 : 1);
	}
	usleep(700000);
	add_approval(st, "ap-wake");
	waitpid(pid, &code, 0);
	ok(WIFEXITED(code) && WEXITSTATUS(code) == 0,
	   "a waiter on another connection wakes at the change (LISTEN/NOTIFY)");
}

static int insert(struct cd_store *st, const char *host, uint64_t seq)
{
	struct cd_audit_entry e;
	struct cd_err err = { 0, "" };
	int r;

	memset(&e, 0, sizeof e);
	e.seq = seq;
	e.time_ns = 1;
	e.str[CD_AF_HOST].p = host;
	e.str[CD_AF_HOST].len = strlen(host);
	e.str[CD_AF_KIND].p = "test";
	e.str[CD_AF_KIND].len = 4;
	if ((r = st->ops->audit_begin(st, 0, &err)) < 0)
		return r;
	r = st->ops->audit_insert(st, &e, &err);
	if (r == 0)
		return st->ops->audit_commit(st, &err);
	st->ops->audit_rollback(st);
	return r;
}

static int count_chain(const char *host, void *ctx)
{
	(void)host;
	(*(int *)ctx)++;
	return 0;
}

/* Appends "host:seq " of each record to the buffer in ctx. */
static int list_rows(const struct cd_audit_entry *e, void *ctx)
{
	char *out = ctx;
	size_t n = strlen(out);

	snprintf(out + n, 256 - n, "%.*s:%llu ", (int)e->str[CD_AF_HOST].len, e->str[CD_AF_HOST].p,
	         (unsigned long long)e->seq);
	return 0;
}

/* The keyset cursor: records before (time, host, seq) in the query's
 * order, whatever their chain (a seq alone compares across chains). */
static void keyset(struct cd_store *st)
{
	struct cd_audit_filter f;
	struct cd_err err = { 0, "" };
	char out[256] = "";

	memset(&f, 0, sizeof f);
	f.before_seq = 1;
	f.before_time_ns = 1;
	f.before_host = "h2";
	is_int(st->ops->audit_query(st, &f, list_rows, out, &err), 0, "a keyset query %s", err.msg);
	is_str(out, "h1:1 h1:2 ", "... gives the records before (1, h2, 1): h1's two");
	out[0] = '\0';
	f.before_host = NULL;
	st->ops->audit_query(st, &f, list_rows, out, &err);
	is_str(out, "", "... where seq < 1 alone gives none");
	out[0] = '\0';
	f.before_seq = 2;
	f.before_host = "h1";
	f.last = 1;
	st->ops->audit_query(st, &f, list_rows, out, &err);
	is_str(out, "h1:1 ", "before (1, h1, 2), the last one: h1:1");
}

static void audit(void)
{
	struct cd_store *h1 = NULL, *h2 = NULL;
	struct cd_store_audit_head h;
	struct cd_err err = { 0, "" };
	unsigned char g[32] = { 0 };
	int n = 0;

	ok(cd_store_audit_open(uri, 0, "h1", 2000, &h1, &err) == 0, "audit writer h1 %s", err.msg);
	ok(cd_store_audit_open(uri, 0, "h2", 2000, &h2, &err) == 0, "audit writer h2 %s", err.msg);
	if (!h1 || !h2)
		return;
	is_str(h1->ops->audit_log_id(h1), h2->ops->audit_log_id(h2), "one log id for both");
	is_int(insert(h1, "h1", 1), 0, "h1 appends seq 1");
	is_int(insert(h1, "h1", 2), 0, "h1 appends seq 2");
	ok(insert(h1, "h1", 2) < 0, "seq 2 of h1 cannot be stored twice (UNIQUE (host, seq))");
	is_int(insert(h1, "h2", 3), -EINVAL, "h1 refuses a record of h2's chain");
	h2->ops->audit_begin(h2, 0, &err);
	ok(h2->ops->audit_head(h2, g, &h, &err) == 0 && h.seq == 0 && h.next == 1,
	   "h2's chain is its own: empty, next seq 1");
	h2->ops->audit_rollback(h2);
	is_int(insert(h2, "h2", 1), 0, "h2 appends its seq 1");
	h1->ops->audit_read_begin(h1, &err);
	h1->ops->audit_chains(h1, count_chain, &n, &err);
	h1->ops->audit_read_end(h1);
	is_int(n, 2, "two chains listed");
	keyset(h1);
	h1->ops->close(h1);
	h2->ops->close(h2);
}

#define HAS(o, f) ok((o)->f != NULL, "postgresql: " #f)

static void filled(const struct cd_store_ops *o)
{
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
	HAS(o, console_login_add);
	HAS(o, console_login_take);
	HAS(o, console_session_add);
	HAS(o, console_session_get);
	HAS(o, console_session_end);
	HAS(o, agent_token_add);
	HAS(o, agent_token_find);
	HAS(o, agent_token_list);
	HAS(o, agent_token_revoke);
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
	HAS(o, audit_chains);
	HAS(o, audit_chain);
}

/* A login link logs in once, from whichever connection takes it first; an
 * expired one logs no one in. */
static void logins(struct cd_store *a, struct cd_store *b)
{
	struct cd_err err = { 0 };
	char who[64], mac[80];
	int64_t now = time(NULL), exp = 0;

	is_int(a->ops->console_login_add(a, "ab12", "alice", "m1", now, now + 600, &err), 0,
	       "a login link is stored %s", err.msg);
	is_int(b->ops->console_login_take(b, "ab12", now, who, sizeof who, mac, sizeof mac, &exp,
	                                  &err),
	       0, "another connection takes it %s", err.msg);
	is_str(who, "alice", "... for the person it was made for");
	is_str(mac, "m1", "... with its MAC");
	is_int(exp, now + 600, "... and its expiry");
	is_int(a->ops->console_login_take(a, "ab12", now, who, sizeof who, mac, sizeof mac, &exp,
	                                  &err),
	       -ENOENT, "a second take finds nothing");
	is_int(a->ops->console_login_add(a, "cd34", "bob", NULL, now - 700, now - 100, &err), 0,
	       "an expired link is stored");
	is_int(b->ops->console_login_take(b, "cd34", now, who, sizeof who, mac, sizeof mac, &exp,
	                                  &err),
	       -ENOENT, "an expired link logs no one in");
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

static int tok_cb(const struct cd_agent_token *t, void *ctx)
{
	snprintf(ctx, 64, "%s", t->agent);
	return 0;
}

/* A token is found by its hash while in force: not once revoked or
 * expired, on any connection. */
static void tokens(struct cd_store *a, struct cd_store *b)
{
	struct cd_err err = { 0 };
	char who[64] = "";
	int64_t now = time(NULL);
	struct cd_agent_token t = {
		.id = "tk-1", .hash = "h1", .agent = "alice", .created = now, .expires = 0
	};
	struct cd_agent_token x = { .id = "tk-2",
		                    .hash = "h2",
		                    .agent = "bob",
		                    .created = now,
		                    .expires = now - 1,
		                    .policy = "/p.yaml" };

	is_int(a->ops->agent_token_add(a, &t, &err), 0, "a token is stored %s", err.msg);
	is_int(a->ops->agent_token_add(a, &x, &err), 0, "an expired token is stored %s", err.msg);
	is_int(b->ops->agent_token_find(b, "h1", now, tok_cb, who, &err), 0,
	       "another connection finds it %s", err.msg);
	is_str(who, "alice", "... with its agent");
	is_int(b->ops->agent_token_find(b, "h2", now, tok_cb, who, &err), -ENOENT,
	       "an expired token is not found");
	is_int(a->ops->agent_token_revoke(a, "tk-1", now, &err), 0, "it is revoked %s", err.msg);
	is_int(b->ops->agent_token_find(b, "h1", now, tok_cb, who, &err), -ENOENT,
	       "a revoked token is not found");
	is_int(a->ops->agent_token_revoke(a, "tk-1", now, &err), -ENOENT, "revoked once");
}

int main(int argc, char **argv)
{
	struct cd_store *a, *b;
	const char *src = getenv("CORDON_SRC");
	char helper[4096];

	(void)argc;
	uri = getenv("CORDON_TEST_PG_URI");
	if (!uri && src && geteuid() == 0 &&
	    snprintf(helper, sizeof helper, "%s/tests/helpers/pg-run.sh", src) <
	            (int)sizeof helper) {
		execl("/bin/sh", "sh", helper, argv[0], (char *)NULL);
		perror("pg-run.sh");
		return 1;
	}
	tap_start(120);
	if (!uri) {
		tap_skip("no PostgreSQL: needs root and CORDON_SRC (tests/helpers/pg-run.sh)");
		return tap_done();
	}
	a = open_state();
	b = open_state();
	ok(a && b, "two connections to the store");
	if (!a || !b)
		return tap_done();
	is_str(a->ops->name, "postgresql", "the URI chose the PostgreSQL backend");
	filled(a->ops);
	race(a);
	grants(a, b);
	waiting(a);
	logins(a, b);
	sessions(a, b);
	tokens(a, b);
	audit();
	a->ops->close(a);
	b->ops->close(b);
	return tap_done();
}
