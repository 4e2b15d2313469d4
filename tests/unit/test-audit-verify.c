/* test-audit-verify.c — verify names each kind of tampering, and passes
 * untouched logs. */
#include "../tap.h"

#include "audit/audit.h"
#include "util/err.h"

#include <errno.h>
#include <stdarg.h>
#include <fcntl.h>
#include <sqlite3.h>
#include <sys/stat.h>

static char dir[] = "/tmp/cordon-test-verify.XXXXXX";
static char sk[512], pk[512], db[512], cpf[512];
static unsigned char pub[32];

static void sh(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void sh(const char *fmt, ...)
{
	char cmd[2048];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(cmd, sizeof cmd, fmt, ap);
	va_end(ap);
	if (system(cmd) != 0)
		diag("command failed: %s", cmd);
}

/* A fresh log of 20 intent/result pairs with a checkpoint every 10. */
static int make_log(void)
{
	struct cd_audit_opts o;
	struct cd_audit *a = NULL;
	struct cd_record r;
	struct cd_err err;
	char run[32];
	int i;

	sh("rm -f '%s'* '%s'", db, cpf);
	memset(&o, 0, sizeof o);
	o.key_path = sk;
	o.checkpoint_every = 10;
	o.checkpoint_out = cpf;
	if (cd_audit_open(db, &o, &a, &err) < 0) {
		diag("open: %s", err.msg);
		return -1;
	}
	memset(&r, 0, sizeof r);
	r.agent = "bot";
	for (i = 0; i < 20; i++) {
		snprintf(run, sizeof run, "run-%d", i);
		r.run_id = run;
		r.kind = "run.intent";
		r.has_exit = 0;
		if (cd_audit_append(a, &r, NULL, &err) < 0)
			break;
		r.kind = "run.result";
		r.has_exit = 1;
		if (cd_audit_append(a, &r, NULL, &err) < 0)
			break;
	}
	cd_audit_close(a);
	return i == 20 ? 0 : -1; /* 40 records + 4 checkpoints = 44 */
}

static int tamper(const char *sql)
{
	sqlite3 *s = NULL;
	int rc;

	if (sqlite3_open(db, &s) != SQLITE_OK)
		return -1;
	rc = sqlite3_exec(s, sql, NULL, NULL, NULL);
	if (rc != SQLITE_OK)
		diag("sql: %s", sqlite3_errmsg(s));
	sqlite3_close(s);
	return rc == SQLITE_OK ? 0 : -1;
}

static int verify(struct cd_audit_report *rep, int with_file)
{
	struct cd_audit_verify_opts vo = { pub, with_file ? cpf : NULL };
	struct cd_audit_opts o;
	struct cd_audit *a = NULL;
	struct cd_err err;
	int r;

	memset(&o, 0, sizeof o);
	o.read_only = 1;
	if (cd_audit_open(db, &o, &a, &err) < 0) {
		diag("open: %s", err.msg);
		return -1;
	}
	r = cd_audit_verify(a, &vo, rep, &err);
	cd_audit_close(a);
	if (r < 0)
		diag("verify: %s", err.msg);
	return r;
}

static void expect(const char *name, const char *sql, enum cd_audit_problem p, uint64_t seq)
{
	struct cd_audit_report rep;

	if (make_log() < 0 || (sql && tamper(sql) < 0)) {
		ok(0, "%s: setup", name);
		return;
	}
	if (verify(&rep, 1) < 0) {
		ok(0, "%s: verify ran", name);
		return;
	}
	if (!ok(rep.problem == p && (p == CD_AUDIT_INTACT || rep.bad_seq == seq), "%s", name))
		diag("got %s at seq %llu (%s), want %s at %llu", cd_audit_problem_name(rep.problem),
		     (unsigned long long)rep.bad_seq, rep.what, cd_audit_problem_name(p),
		     (unsigned long long)seq);
}

static void test_tampering(void)
{
	struct cd_audit_report rep;

	expect("untouched log is intact", NULL, CD_AUDIT_INTACT, 0);
	expect("modified field", "UPDATE records SET agent='eve' WHERE seq=5", CD_AUDIT_MODIFIED,
	       5);
	expect("modified exit code", "UPDATE records SET exit_code=1 WHERE seq=6",
	       CD_AUDIT_MODIFIED, 6);
	expect("NULL made empty", "UPDATE records SET task='' WHERE seq=7", CD_AUDIT_MODIFIED, 7);
	expect("deleted row", "DELETE FROM records WHERE seq=5", CD_AUDIT_MISSING, 5);
	expect("deleted and renumbered",
	       "DELETE FROM records WHERE seq=5; UPDATE records SET seq=-seq WHERE seq>5;"
	       "UPDATE records SET seq=-seq-1 WHERE seq<0",
	       CD_AUDIT_MISSING, 5);
	expect("swapped rows",
	       "UPDATE records SET seq=-1 WHERE seq=5; UPDATE records SET seq=5 WHERE seq=6;"
	       "UPDATE records SET seq=6 WHERE seq=-1",
	       CD_AUDIT_REORDERED, 5);
	expect("forged row inserted",
	       "UPDATE records SET seq=-seq WHERE seq>=5; UPDATE records SET seq=1-seq WHERE seq<0;"
	       "INSERT INTO records(seq,time_ns,kind,prev_hash,hash) "
	       "VALUES(5,1,'run.result',randomblob(32),randomblob(32))",
	       CD_AUDIT_INSERTED, 5);
	expect("forged row appended",
	       "INSERT INTO records(seq,time_ns,kind,prev_hash,hash) "
	       "VALUES(45,1,'run.result',randomblob(32),randomblob(32))",
	       CD_AUDIT_INSERTED, 45);
	expect("tail truncated", "DELETE FROM records WHERE seq>30", CD_AUDIT_TRUNCATED, 31);
	expect("tail truncated, counter reset",
	       "DELETE FROM records WHERE seq>30; UPDATE sqlite_sequence SET seq=30",
	       CD_AUDIT_ROLLED_BACK, 31);
	expect("hash column malformed", "UPDATE records SET hash=x'00' WHERE seq=9",
	       CD_AUDIT_MODIFIED, 9);
	expect("checkpoint record forged",
	       "UPDATE records SET details='{\"checkpoint\":\"x\"}' WHERE seq=11",
	       CD_AUDIT_MODIFIED, 11);

	/* Rollback: restore an older copy after a later checkpoint. */
	if (make_log() == 0) {
		/* The log keeps its WAL at close: an older copy is both files. */
		sh("cp '%s' '%s.old' && cp '%s-wal' '%s.old-wal'", db, db, db, db);
		tamper("INSERT INTO meta VALUES('x','y')"); /* untouched records */
		{
			struct cd_audit_opts o;
			struct cd_audit *a = NULL;
			struct cd_record r;
			struct cd_err err;
			int i;

			memset(&o, 0, sizeof o);
			o.key_path = sk;
			o.checkpoint_out = cpf;
			memset(&r, 0, sizeof r);
			r.kind = "decision";
			if (cd_audit_open(db, &o, &a, &err) == 0) {
				for (i = 0; i < 5; i++)
					cd_audit_append(a, &r, NULL, &err);
				cd_audit_checkpoint(a, NULL, &err);
				cd_audit_close(a);
			}
		}
		verify(&rep, 1);
		is_int(rep.problem, CD_AUDIT_INTACT, "the grown log verifies");
		sh("cp '%s.old' '%s' && cp '%s.old-wal' '%s-wal'", db, db, db, db);
		sh("rm -f '%s-shm'", db);
		verify(&rep, 1);
		ok(rep.problem == CD_AUDIT_ROLLED_BACK && rep.bad_seq == 45,
		   "an older copy is rolled back (seq %llu: %s)", (unsigned long long)rep.bad_seq,
		   rep.what);
		verify(&rep, 0);
		is_int(rep.problem, CD_AUDIT_INTACT,
		       "(and undetectable without the checkpoint file)");
	}

	/* Rewriting the whole chain after an edit: the signed checkpoints catch it. */
	if (make_log() == 0) {
		struct cd_audit_opts o;
		struct cd_audit *a = NULL;
		struct cd_err err;
		sqlite3 *s = NULL;
		sqlite3_stmt *st = NULL, *up = NULL;
		unsigned char prev[32];

		memset(&o, 0, sizeof o);
		o.read_only = 1;
		tamper("UPDATE records SET agent='eve' WHERE seq=3");
		if (cd_audit_open(db, &o, &a, &err) == 0 && sqlite3_open(db, &s) == SQLITE_OK) {
			cd_audit_genesis(cd_audit_log_id(a), prev);
			sqlite3_prepare_v2(
			        s,
			        "SELECT seq, time_ns, exit_code, duration_ms, host, kind, "
			        "run_id, agent, task, tool, action, target, decision, "
			        "grant_ids, reason, argv_sha256, code_sha256, stdin_sha256, "
			        "stdout_sha256, stderr_sha256, details FROM records ORDER BY seq",
			        -1, &st, NULL);
			sqlite3_prepare_v2(s,
			                   "UPDATE records SET prev_hash=?1, hash=?2 WHERE seq=?3",
			                   -1, &up, NULL);
			sqlite3_exec(s, "BEGIN", NULL, NULL, NULL);
			while (sqlite3_step(st) == SQLITE_ROW) {
				struct cd_audit_entry e;
				unsigned char h[32];
				int i;

				memset(&e, 0, sizeof e);
				e.seq = (uint64_t)sqlite3_column_int64(st, 0);
				e.time_ns = sqlite3_column_int64(st, 1);
				e.has_exit = sqlite3_column_type(st, 2) != SQLITE_NULL;
				e.exit_code = sqlite3_column_int64(st, 2);
				e.has_duration = sqlite3_column_type(st, 3) != SQLITE_NULL;
				e.duration_ms = (uint64_t)sqlite3_column_int64(st, 3);
				for (i = 0; i < CD_AF_NSTR; i++) {
					if (sqlite3_column_type(st, 4 + i) == SQLITE_NULL)
						continue;
					e.str[i].p = (const char *)sqlite3_column_text(st, 4 + i);
					e.str[i].len = (size_t)sqlite3_column_bytes(st, 4 + i);
				}
				cd_audit_chain(prev, &e, h);
				sqlite3_reset(up);
				sqlite3_bind_blob(up, 1, prev, 32, SQLITE_TRANSIENT);
				sqlite3_bind_blob(up, 2, h, 32, SQLITE_TRANSIENT);
				sqlite3_bind_int64(up, 3, (sqlite3_int64)e.seq);
				sqlite3_step(up);
				memcpy(prev, h, 32);
			}
			sqlite3_exec(s, "COMMIT", NULL, NULL, NULL);
			sqlite3_finalize(st);
			sqlite3_finalize(up);
			sqlite3_close(s);
		}
		cd_audit_close(a);
		verify(&rep, 0);
		ok(rep.problem == CD_AUDIT_BAD_CHECKPOINT && rep.bad_seq == 11,
		   "a recomputed chain fails at the first signed checkpoint (seq %llu: %s)",
		   (unsigned long long)rep.bad_seq, rep.what);
		tamper("DELETE FROM records WHERE kind='checkpoint'");
		verify(&rep, 1);
		ok(rep.problem != CD_AUDIT_INTACT,
		   "and without checkpoints in the log, the file catches "
		   "it (%s)",
		   cd_audit_problem_name(rep.problem));
	}
}

static void append_file(const char *s)
{
	int fd = open(cpf, O_WRONLY | O_APPEND);
	if (fd >= 0) {
		if (write(fd, s, strlen(s)) < 0)
			diag("write");
		close(fd);
	}
}

static void test_file(void)
{
	struct cd_audit_report rep;
	struct cd_audit_key *k = NULL;
	struct cd_err err;
	char line[CD_AUDIT_CP_LINE_MAX + 2];

	if (make_log() < 0)
		return;
	append_file("cordon-checkpoint v1 0123");
	verify(&rep, 1);
	ok(rep.problem == CD_AUDIT_INTACT && rep.torn_file_line,
	   "a torn last line is not tampering");
	append_file("\n");
	verify(&rep, 1);
	is_int(rep.problem, CD_AUDIT_BAD_CHECKPOINT, "a malformed complete line is");

	/* A line signed by another key. */
	make_log();
	{
		char ksk[600], kpk[600];
		struct cd_audit_checkpoint cp;
		snprintf(ksk, sizeof ksk, "%s/other.key", dir);
		snprintf(kpk, sizeof kpk, "%s/other.pub", dir);
		cd_audit_keygen(ksk, kpk, &err);
		if (cd_audit_key_load(ksk, &k, &err) == 0) {
			FILE *f = fopen(cpf, "r");
			if (f && fgets(line, sizeof line, f)) {
				line[strcspn(line, "\n")] = '\0';
				cd_audit_checkpoint_parse(line, strlen(line), &cp);
				cd_audit_checkpoint_sign(k, &cp);
				cd_audit_checkpoint_format(&cp, line, sizeof line - 1);
				strcat(line, "\n");
				append_file(line);
			}
			if (f)
				fclose(f);
			cd_audit_key_free(k);
		}
	}
	verify(&rep, 1);
	is_int(rep.problem, CD_AUDIT_BAD_SIGNATURE, "a checkpoint signed by another key");

	/* A checkpoint of another log. */
	make_log();
	{
		FILE *f = fopen(cpf, "r");
		if (f && fgets(line, sizeof line, f)) {
			memcpy(line + 21, "ffffffffffffffffffffffffffffffff", 32);
			append_file(line);
		}
		if (f)
			fclose(f);
	}
	verify(&rep, 1);
	ok(rep.problem == CD_AUDIT_FOREIGN || rep.problem == CD_AUDIT_BAD_SIGNATURE,
	   "a checkpoint of another log (%s)", cd_audit_problem_name(rep.problem));
}

static void test_interrupted(void)
{
	struct cd_audit_report rep;
	struct cd_audit *a = NULL;
	struct cd_record r;
	struct cd_err err;

	if (make_log() < 0 || cd_audit_open(db, NULL, &a, &err) < 0)
		return;
	memset(&r, 0, sizeof r);
	r.kind = "run.intent";
	r.run_id = "crashed-run";
	cd_audit_append(a, &r, NULL, &err);
	cd_audit_close(a);
	verify(&rep, 1);
	is_int(rep.problem, CD_AUDIT_INTACT, "an intent without a result is not tampering");
	is_int(rep.interrupted, 1, "it is reported as interrupted");
	is_str(rep.interrupted_runs[0].run_id, "crashed-run", "with its run id");
	is_int(rep.interrupted_runs[0].seq, 45, "and its seq");
	ok(rep.signatures >= 8, "signatures were checked (%llu)",
	   (unsigned long long)rep.signatures);
}

int main(void)
{
	struct cd_err err;

	tap_start(120);
	if (!mkdtemp(dir)) {
		ok(0, "mkdtemp");
		return tap_done();
	}
	snprintf(sk, sizeof sk, "%s/audit.key", dir);
	snprintf(pk, sizeof pk, "%s/audit.pub", dir);
	snprintf(db, sizeof db, "%s/audit.db", dir);
	snprintf(cpf, sizeof cpf, "%s/audit.db.checkpoints", dir);
	if (cd_audit_keygen(sk, pk, &err) < 0 || cd_audit_pubkey_load(pk, pub, &err) < 0) {
		ok(0, "keys: %s", err.msg);
		return tap_done();
	}
	test_tampering();
	test_file();
	test_interrupted();
	sh("rm -rf '%s'%s", dir, "");
	return tap_done();
}
