/* test-audit-store.c — open, append, read back, fail closed, concurrency. */
#include "../tap.h"

#include "audit/audit.h"
#include "util/err.h"

#include <errno.h>
#include <fcntl.h>
#include <sqlite3.h>
#include <sys/stat.h>
#include <sys/wait.h>

static char dir[] = "/tmp/cordon-test-store.XXXXXX";
static char db[512];

struct collect {
	int n;
	uint64_t last;
	int fields_ok;
};

static int count(const struct cd_audit_entry *e, void *ctx)
{
	struct collect *c = ctx;
	c->n++;
	c->last = e->seq;
	return 0;
}

static int check_fields(const struct cd_audit_entry *e, void *ctx)
{
	struct collect *c = ctx;
	const struct cd_audit_str *t = &e->str[CD_AF_TARGET];

	c->n++;
	c->fields_ok = e->seq == 1 && t->p && t->len == 8 &&
	               memcmp(t->p, "a\x1b[2Jb\n\"", 8) == 0 && e->has_exit && e->exit_code == -3 &&
	               e->has_duration && e->duration_ms == 99 && e->str[CD_AF_TASK].p == NULL &&
	               e->str[CD_AF_REASON].p && e->str[CD_AF_REASON].len == 0 &&
	               e->str[CD_AF_HOST].p && e->time_ns > 1600000000000000000LL;
	return 0;
}

static void test_roundtrip(void)
{
	struct cd_audit *a = NULL;
	struct cd_record r;
	struct cd_audit_filter f;
	struct collect c = { 0, 0, 0 };
	struct cd_err err;
	struct stat st;
	uint64_t seq = 0;
	char sub[600];

	snprintf(sub, sizeof sub, "%s/x/y/audit.db", dir);
	is_int(cd_audit_open(sub, NULL, &a, &err), 0, "open creates the log and its directories");
	snprintf(sub, sizeof sub, "%s/x", dir);
	ok(stat(sub, &st) == 0 && (st.st_mode & 0777) == 0700, "new directories are 0700");
	snprintf(sub, sizeof sub, "%s/x/y/audit.db", dir);
	ok(stat(sub, &st) == 0 && (st.st_mode & 0777) == 0600, "the database is 0600");
	ok(a && strlen(cd_audit_log_id(a)) == 32, "a log id");
	memset(&r, 0, sizeof r);
	r.kind = "run.result";
	r.agent = "bot";
	r.target = "a\x1b[2Jb\n\"";
	r.reason = "";
	r.has_exit = 1;
	r.exit_code = -3;
	r.has_duration = 1;
	r.duration_ms = 99;
	r.details_json = "{\"argv\":[\"ls\",\"-l\"]}";
	is_int(cd_audit_append(a, &r, &seq, &err), 0, "append");
	is_int(seq, 1, "first seq is 1");
	is_int(cd_audit_query(a, NULL, check_fields, &c, &err), 0, "query");
	ok(c.n == 1 && c.fields_ok, "fields read back as written (control bytes are data)");
	r.agent = "other";
	r.kind = "decision";
	cd_audit_append(a, &r, &seq, &err);
	cd_audit_append(a, &r, &seq, &err);
	is_int(seq, 3, "seq increases");
	memset(&f, 0, sizeof f);
	f.agent = "other";
	c.n = 0;
	cd_audit_query(a, &f, count, &c, &err);
	is_int(c.n, 2, "filter by agent");
	f.agent = NULL;
	f.kind = "run.result";
	c.n = 0;
	cd_audit_query(a, &f, count, &c, &err);
	is_int(c.n, 1, "filter by kind");
	memset(&f, 0, sizeof f);
	f.last = 2;
	c.n = 0;
	cd_audit_query(a, &f, count, &c, &err);
	ok(c.n == 2 && c.last == 3, "last N, in order");
	memset(&f, 0, sizeof f);
	f.before_seq = 3;
	f.last = 1;
	c.n = 0;
	cd_audit_query(a, &f, count, &c, &err);
	ok(c.n == 1 && c.last == 2, "the last match before a cursor");
	is_int(cd_audit_index(a, &err), 0, "the readers' indexes are made");
	is_int(cd_audit_index(a, &err), 0, "... once (a second call changes nothing)");
	f.agent = "other";
	f.before_seq = 3;
	f.last = 5;
	c.n = 0;
	cd_audit_query(a, &f, count, &c, &err);
	ok(c.n == 1 && c.last == 2, "a filter and a cursor, through the index");
	memset(&f, 0, sizeof f);
	f.since_ns = 1;
	f.until_ns = 2;
	c.n = 0;
	cd_audit_query(a, &f, count, &c, &err);
	is_int(c.n, 0, "time range");
	cd_audit_close(a);

	/* Reopen: same log id, the chain continues. */
	is_int(cd_audit_open(sub, NULL, &a, &err), 0, "reopen");
	r.kind = "decision";
	cd_audit_append(a, &r, &seq, &err);
	is_int(seq, 4, "seq continues after reopen");
	cd_audit_close(a);
}

static void test_refused(void)
{
	struct cd_audit *a = NULL;
	struct cd_record r;
	struct cd_err err;
	char big[CD_AUDIT_FIELD_MAX + 2];
	uint64_t seq;

	if (cd_audit_open(db, NULL, &a, &err) < 0) {
		ok(0, "open: %s", err.msg);
		return;
	}
	memset(&r, 0, sizeof r);
	ok(cd_audit_append(a, &r, &seq, &err) < 0, "a record without a kind is refused");
	r.kind = "checkpoint";
	ok(cd_audit_append(a, &r, &seq, &err) < 0, "kind 'checkpoint' is reserved");
	r.kind = "decision";
	r.argv_sha256 = "abc";
	ok(cd_audit_append(a, &r, &seq, &err) < 0, "a malformed sha256 is refused");
	r.argv_sha256 = NULL;
	r.details_json = "[1,2]";
	ok(cd_audit_append(a, &r, &seq, &err) < 0, "details that are not an object are refused");
	r.details_json = "{\"a\":1,\"a\":2}";
	ok(cd_audit_append(a, &r, &seq, &err) < 0, "details with duplicate keys are refused");
	r.details_json = NULL;
	memset(big, 'x', sizeof big - 1);
	big[sizeof big - 1] = '\0';
	r.target = big;
	is_int(cd_audit_append(a, &r, &seq, &err), -CD_E_LIMIT, "an oversized field is refused");
	r.target = NULL;
	is_int(cd_audit_checkpoint(a, &seq, &err), -ENOKEY, "no checkpoint without a key");
	cd_audit_close(a);
}

static void test_fail_closed(void)
{
	struct cd_audit_opts o;
	struct cd_audit *a = NULL, *b = NULL;
	struct cd_record r;
	struct cd_err err;
	char p[600];
	sqlite3 *s = NULL;
	uint64_t seq;
	int fd;

	/* A path under a regular file. */
	snprintf(p, sizeof p, "%s/file", dir);
	fd = open(p, O_WRONLY | O_CREAT, 0600);
	close(fd);
	snprintf(p, sizeof p, "%s/file/audit.db", dir);
	ok(cd_audit_open(p, NULL, &a, &err) < 0, "an impossible path fails");

	/* Garbage in place of a database. */
	snprintf(p, sizeof p, "%s/garbage.db", dir);
	fd = open(p, O_WRONLY | O_CREAT, 0600);
	static const char junk[] = "this is not a database, it is a long string of text ......\n";
	if (write(fd, junk, sizeof junk - 1) < 0)
		diag("write failed");
	close(fd);
	ok(cd_audit_open(p, NULL, &a, &err) < 0, "a corrupt file fails: %s", err.msg);

	/* Somebody else's SQLite database. */
	snprintf(p, sizeof p, "%s/foreign.db", dir);
	if (sqlite3_open(p, &s) == SQLITE_OK)
		sqlite3_exec(s, "CREATE TABLE records(x); CREATE TABLE meta(key, value);", NULL,
		             NULL, NULL);
	sqlite3_close(s);
	ok(cd_audit_open(p, NULL, &a, &err) < 0, "a database of another schema fails: %s", err.msg);

	/* Read-only open of a missing log does not create it. */
	memset(&o, 0, sizeof o);
	o.read_only = 1;
	snprintf(p, sizeof p, "%s/missing.db", dir);
	ok(cd_audit_open(p, &o, &a, &err) < 0 && access(p, F_OK) < 0,
	   "read-only open of a missing log fails and creates nothing");

	/* Locked by another writer: the append gives up, with an error. */
	memset(&o, 0, sizeof o);
	o.busy_ms = 200;
	if (cd_audit_open(db, &o, &a, &err) < 0 || cd_audit_open(db, &o, &b, &err) < 0) {
		ok(0, "open twice: %s", err.msg);
		return;
	}
	s = NULL;
	sqlite3_open(db, &s);
	is_int(sqlite3_exec(s, "BEGIN IMMEDIATE", NULL, NULL, NULL), SQLITE_OK, "lock the log");
	memset(&r, 0, sizeof r);
	r.kind = "decision";
	is_int(cd_audit_append(a, &r, &seq, &err), -EBUSY, "a locked log refuses the append");
	sqlite3_exec(s, "ROLLBACK", NULL, NULL, NULL);
	sqlite3_close(s);
	is_int(cd_audit_append(b, &r, &seq, &err), 0, "and accepts it once unlocked");
	cd_audit_close(a);
	cd_audit_close(b);
}

static void test_concurrent(void)
{
	struct cd_audit *a = NULL;
	struct cd_audit_report rep;
	struct collect c = { 0, 0, 0 };
	struct cd_err err;
	char p[600];
	int i, status, good = 0;

	snprintf(p, sizeof p, "%s/conc.db", dir);
	for (i = 0; i < 4; i++) {
		if (fork() == 0) {
			struct cd_audit *w = NULL;
			struct cd_record r;
			uint64_t seq;
			int k;

			memset(&r, 0, sizeof r);
			r.kind = "decision";
			if (cd_audit_open(p, NULL, &w, &err) < 0)
				_exit(1);
			for (k = 0; k < 100; k++)
				if (cd_audit_append(w, &r, &seq, &err) < 0)
					_exit(2);
			cd_audit_close(w);
			_exit(0);
		}
	}
	for (i = 0; i < 4; i++)
		if (wait(&status) > 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0)
			good++;
	is_int(good, 4, "4 concurrent writers succeed");
	if (cd_audit_open(p, NULL, &a, &err) < 0) {
		ok(0, "open: %s", err.msg);
		return;
	}
	cd_audit_query(a, NULL, count, &c, &err);
	ok(c.n == 400 && c.last == 400, "400 records, seq 1..400");
	is_int(cd_audit_verify(a, NULL, &rep, &err), 0, "verify runs");
	is_int(rep.problem, CD_AUDIT_INTACT, "the chain is linear and intact");
	cd_audit_close(a);
}

static int count_kind(const struct cd_audit_entry *e, void *ctx)
{
	if (e->str[CD_AF_KIND].p && e->str[CD_AF_KIND].len == 10 &&
	    memcmp(e->str[CD_AF_KIND].p, "checkpoint", 10) == 0)
		(*(int *)ctx)++;
	return 0;
}

/* Lazy appends: committed, in the chain, synced on demand, and never a
 * checkpoint (a signed head must not outlive the records it covers). */
static void test_lazy(void)
{
	struct cd_audit *a = NULL;
	struct cd_audit_opts o;
	struct cd_record r;
	struct cd_err err;
	char path[600], key[600], pub[600];
	uint64_t size = 0;
	int cps = 0, i;

	snprintf(path, sizeof path, "%s/lazy.db", dir);
	snprintf(key, sizeof key, "%s/lazy.key", dir);
	snprintf(pub, sizeof pub, "%s/lazy.pub", dir);
	is_int(cd_audit_keygen(key, pub, &err), 0, "a signing key");
	memset(&o, 0, sizeof o);
	o.key_path = key;
	o.checkpoint_every = 1;
	is_int(cd_audit_open(path, &o, &a, &err), 0, "open with a checkpoint after every record");
	if (!a)
		return;
	memset(&r, 0, sizeof r);
	r.kind = "mcp.result";
	for (i = 0; i < 3; i++)
		is_int(cd_audit_append_lazy(a, &r, &err), 0, "lazy append %d", i);
	cd_audit_query(a, NULL, count_kind, &cps, &err);
	is_int(cps, 0, "lazy appends write no checkpoint even when one is due");
	is_int(cd_audit_sync(a, &err), 0, "sync");
	r.kind = "mcp.call";
	is_int(cd_audit_append(a, &r, NULL, &err), 0, "a durable append after them");
	cd_audit_query(a, NULL, count_kind, &cps, &err);
	is_int(cps, 1, "... writes the checkpoint, covering the lazy ones too");
	is_int(cd_audit_size(a, &size, &err), 0, "size");
	is_int((int)size, 5, "three lazy, one durable, one checkpoint, in order");
	cd_audit_close(a);
}

/* The WAL is extended with zeros to its checkpoint size, never shrunk,
 * and the log stays whole: appends before and after read back in order. */
static void test_presize(void)
{
	struct cd_audit *a = NULL, *b = NULL;
	struct cd_audit_opts ro;
	struct cd_record r;
	struct cd_err err;
	struct collect c = { 0, 0, 0 };
	struct stat st;
	char path[600], wal[640];
	off_t big;
	int i;

	snprintf(path, sizeof path, "%s/presize.db", dir);
	snprintf(wal, sizeof wal, "%s-wal", path);
	if (cd_audit_open(path, NULL, &a, &err) < 0) {
		ok(0, "open: %s", err.msg);
		return;
	}
	memset(&r, 0, sizeof r);
	r.kind = "mcp.call";
	is_int(cd_audit_append(a, &r, NULL, &err), 0, "an append before");
	is_int(cd_audit_presize_wal(a, &err), 0, "presize the WAL");
	if (stat(wal, &st) < 0)
		st.st_size = 0;
	big = (off_t)st.st_size;
	ok(big >= 32 + 1000 * (24 + 4096), "the WAL holds 1000 frames' worth (%lld bytes)",
	   (long long)big);
	for (i = 0; i < 3; i++)
		is_int(cd_audit_append(a, &r, NULL, &err), 0, "append %d after", i);
	ok(stat(wal, &st) == 0 && st.st_size == big, "appends overwrite it in place");
	ok(truncate(wal, big + 8192) == 0, "a WAL larger than that");
	is_int(cd_audit_presize_wal(a, &err), 0, "presize again");
	ok(stat(wal, &st) == 0 && st.st_size == big + 8192, "is never shrunk");
	is_int(cd_audit_append(a, &r, NULL, &err), 0, "and an append works");
	memset(&ro, 0, sizeof ro);
	ro.read_only = 1;
	is_int(cd_audit_open(path, &ro, &b, &err), 0, "a reader opens it");
	if (b) {
		cd_audit_query(b, NULL, count, &c, &err);
		ok(c.n == 5 && c.last == 5, "and reads every record, in order (%d)", c.n);
		ok(cd_audit_presize_wal(b, &err) == -EROFS, "a read-only log is not extended");
		cd_audit_close(b);
	}
	cd_audit_close(a);
	is_int(cd_audit_open(path, NULL, &a, &err), 0, "reopened after the last close");
	c.n = 0;
	if (a)
		cd_audit_query(a, NULL, count, &c, &err);
	is_int(c.n, 5, "nothing was lost or replayed twice");
	cd_audit_close(a);
}

int main(void)
{
	tap_start(60);
	if (!mkdtemp(dir)) {
		ok(0, "mkdtemp");
		return tap_done();
	}
	snprintf(db, sizeof db, "%s/audit.db", dir);
	test_roundtrip();
	test_refused();
	test_fail_closed();
	test_concurrent();
	test_lazy();
	test_presize();
	{
		char cmd[600];
		snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
		if (system(cmd) != 0)
			diag("cleanup failed");
	}
	return tap_done();
}
