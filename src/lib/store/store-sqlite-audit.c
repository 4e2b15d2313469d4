/* store-sqlite-audit.c — the audit log's SQLite backend (store.h): the
 * file, its schema and log id, the write lock, the chain head, inserting,
 * reading back, and the WAL.
 *
 * One table of records with structured columns; `seq` is assigned by the
 * writer inside a BEGIN IMMEDIATE transaction, so concurrent writers (many
 * cordon processes) serialise on SQLite's write lock and the chain stays
 * linear.  WAL with synchronous=FULL makes a commit durable before the
 * commit returns.  A seq is never reused: the next seq is one past the
 * largest ever assigned (sqlite_sequence), so a truncated tail leaves a
 * visible gap.
 *
 * Trust boundary: record fields are untrusted data, bound as parameters
 * (never spliced into SQL).  The database may have been edited by hand;
 * every row is decoded defensively (row_read). */
#include "store-sqlite.h"

#include "util/buf.h"
#include "util/fs.h"
#include "util/num.h"
#include "util/util.h"

#include <errno.h>
#include <fcntl.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* The columns, in the order row_read expects them. */
#define COLUMNS                                                                                    \
	"seq, time_ns, exit_code, duration_ms, host, kind, run_id, agent, task, tool, action, "    \
	"target, decision, grant_ids, reason, argv_sha256, code_sha256, stdin_sha256, "            \
	"stdout_sha256, stderr_sha256, details, prev_hash, hash"

struct sqlite_audit {
	struct cd_store base; /* first */
	sqlite3 *db;
	char *path;
	char log_id[CD_AUDIT_LOG_ID_LEN + 1];
	unsigned busy_ms;
	int64_t busy_since;  /* when the current wait for a lock began */
	unsigned busy_limit; /* ms one wait may last: busy_ms, BUSY_SLICE_MS in begin() */
	int read_only;
	int lazy; /* the open transaction commits without the WAL fsync */
	sqlite3_stmt *ins, *last, *next_seq, *meta_get, *meta_set;
};

static const char schema[] =
        "CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);"
        "CREATE TABLE IF NOT EXISTS records ("
        " seq INTEGER PRIMARY KEY AUTOINCREMENT,"
        " time_ns INTEGER NOT NULL,"
        " exit_code INTEGER, duration_ms INTEGER,"
        " host TEXT, kind TEXT NOT NULL, run_id TEXT, agent TEXT, task TEXT, tool TEXT,"
        " action TEXT, target TEXT, decision TEXT, grant_ids TEXT, reason TEXT,"
        " argv_sha256 TEXT, code_sha256 TEXT, stdin_sha256 TEXT, stdout_sha256 TEXT,"
        " stderr_sha256 TEXT, details TEXT,"
        " prev_hash BLOB NOT NULL, hash BLOB NOT NULL);";

static struct sqlite_audit *of(struct cd_store *st)
{
	return (struct sqlite_audit *)st;
}

static int db_err(struct sqlite_audit *a, struct cd_err *err, const char *what)
{
	int rc = sqlite3_extended_errcode(a->db);
	int code;

	switch (rc & 0xff) {
	case SQLITE_BUSY:
	case SQLITE_LOCKED:
		code = -EBUSY;
		break;
	case SQLITE_READONLY:
	case SQLITE_PERM:
	case SQLITE_CANTOPEN:
		code = -EACCES;
		break;
	case SQLITE_FULL:
		code = -ENOSPC;
		break;
	case SQLITE_NOMEM:
		code = -ENOMEM;
		break;
	case SQLITE_CORRUPT:
	case SQLITE_NOTADB:
	case SQLITE_SCHEMA:
	case SQLITE_ERROR:
		code = -CD_E_CORRUPT;
		break;
	default:
		code = -EIO;
	}
	return cd_err_set(err, code, "audit log '%s': %s: %s", a->path, what,
	                  sqlite3_errmsg(a->db));
}

static int exec(struct sqlite_audit *a, const char *sql, struct cd_err *err)
{
	if (sqlite3_exec(a->db, sql, NULL, NULL, NULL) != SQLITE_OK)
		return db_err(a, err, sql);
	return 0;
}

static int meta_get(struct sqlite_audit *a, const char *key, char *out, size_t outlen)
{
	int rc, r = -ENOENT;

	sqlite3_reset(a->meta_get);
	sqlite3_bind_text(a->meta_get, 1, key, -1, SQLITE_STATIC);
	rc = sqlite3_step(a->meta_get);
	if (rc == SQLITE_ROW) {
		const unsigned char *v = sqlite3_column_text(a->meta_get, 0);
		int n = sqlite3_column_bytes(a->meta_get, 0);
		if (v && n >= 0 && (size_t)n < outlen) {
			memcpy(out, v, (size_t)n);
			out[n] = '\0';
			r = 0;
		} else {
			r = -CD_E_CORRUPT;
		}
	} else if (rc != SQLITE_DONE) {
		r = -EIO;
	}
	sqlite3_reset(a->meta_get);
	return r;
}

static int meta_set(struct sqlite_audit *a, const char *key, const char *value)
{
	int rc;

	sqlite3_reset(a->meta_set);
	sqlite3_bind_text(a->meta_set, 1, key, -1, SQLITE_STATIC);
	sqlite3_bind_text(a->meta_set, 2, value, -1, SQLITE_TRANSIENT);
	rc = sqlite3_step(a->meta_set);
	sqlite3_reset(a->meta_set);
	return rc == SQLITE_DONE ? 0 : -EIO;
}

static int64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static int prepare(struct sqlite_audit *a, const char *sql, sqlite3_stmt **st, struct cd_err *err)
{
	if (sqlite3_prepare_v3(a->db, sql, -1, SQLITE_PREPARE_PERSISTENT, st, NULL) != SQLITE_OK)
		return db_err(a, err, "not a cordon audit log (schema)");
	return 0;
}

/* Read the log id of an existing log: 0, or -ENOENT when the schema or
 * the id is not there yet (a->meta_get is then NULL). */
static int read_log_id(struct sqlite_audit *a)
{
	if (sqlite3_prepare_v3(a->db, "SELECT value FROM meta WHERE key = ?1", -1,
	                       SQLITE_PREPARE_PERSISTENT, &a->meta_get, NULL) == SQLITE_OK &&
	    meta_get(a, "log_id", a->log_id, sizeof a->log_id) == 0)
		return 0;
	sqlite3_finalize(a->meta_get);
	a->meta_get = NULL;
	a->log_id[0] = '\0';
	return -ENOENT;
}

/* Waiting for other writers.  SQLite's own busy timeout sleeps 1, 2, 5,
 * ... then 100 ms between tries: a writer that has waited a second looks
 * ten times a second at a lock that other writers, committing back to
 * back, free for microseconds, and lost 500 records in 8-writer runs.
 * Here a waiter tries again every 0.2-1.2 ms (random, so waiters do not
 * move in step) for up to busy_ms, or BUSY_SLICE_MS in begin(), which then
 * decides whether to go on waiting. */
#define BUSY_SLICE_MS 100

static int busy_wait(void *p, int tries)
{
	struct sqlite_audit *a = p;
	int64_t now = now_ns();

	if (tries == 0)
		a->busy_since = now;
	if (now - a->busy_since > (int64_t)a->busy_limit * 1000000)
		return 0;
	usleep(200 + randombytes_uniform(1000));
	return 1;
}

/* How many commits other connections have made (PRAGMA data_version
 * changes with each); -1 when it cannot be read. */
static int64_t data_version(struct sqlite_audit *a)
{
	sqlite3_stmt *st = NULL;
	int64_t v = -1;

	if (sqlite3_prepare_v2(a->db, "PRAGMA data_version", -1, &st, NULL) == SQLITE_OK &&
	    sqlite3_step(st) == SQLITE_ROW)
		v = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return v;
}

/* BEGIN IMMEDIATE, waiting for the write lock as long as other writers
 * are committing (a queue: each commit restarts the busy_ms allowance,
 * up to 6 x busy_ms in all), and failing after busy_ms without any commit
 * (a holder that is stuck or stopped).  The caller then refuses: a record
 * is never dropped silently. */
static int begin(struct sqlite_audit *a, struct cd_err *err)
{
	int64_t now = now_ns(), ms = 1000000;
	int64_t idle_until = now + (int64_t)a->busy_ms * ms;
	int64_t hard = now + 6 * (int64_t)a->busy_ms * ms;
	int64_t seen = data_version(a), v;
	int rc;

	for (;;) {
		a->busy_limit = BUSY_SLICE_MS;
		rc = sqlite3_exec(a->db, "BEGIN IMMEDIATE", NULL, NULL, NULL);
		a->busy_limit = a->busy_ms;
		if (rc == SQLITE_OK)
			return 0;
		if ((rc & 0xff) != SQLITE_BUSY && (rc & 0xff) != SQLITE_LOCKED)
			return db_err(a, err, "cannot lock for writing");
		now = now_ns();
		v = data_version(a);
		if (v != seen) {
			seen = v;
			idle_until = now + (int64_t)a->busy_ms * ms;
		}
		if (now > hard)
			return cd_err_set(err, -EBUSY,
			                  "audit log '%s': cannot lock for writing: other writers "
			                  "held it for %u s",
			                  a->path, 6 * a->busy_ms / 1000);
		if (now > idle_until)
			return cd_err_set(
			        err, -EBUSY,
			        "audit log '%s': cannot lock for writing: locked for %u s "
			        "with no commit (a stuck or stopped writer?)",
			        a->path, a->busy_ms / 1000);
		usleep(200 + randombytes_uniform(1000));
	}
}

/* Create the schema and the log id, or read them (same transaction, so two
 * processes creating the log at once agree on one id).  A log that already
 * has its id (every open but the first) is read without a write
 * transaction. */
static int init_schema(struct sqlite_audit *a, struct cd_err *err)
{
	unsigned char raw[CD_AUDIT_LOG_ID_LEN / 2];
	char id[CD_AUDIT_LOG_ID_LEN + 1], t[32];
	int r, n, tx = 0;

	if (!a->read_only && read_log_id(a) < 0) {
		tx = 1;
		r = begin(a, err);
		if (r < 0)
			return r;
		r = exec(a, schema, err);
		if (r < 0)
			goto fail;
	}
	if (!a->meta_get) {
		r = prepare(a, "SELECT value FROM meta WHERE key = ?1", &a->meta_get, err);
		if (r < 0)
			goto fail;
	}
	if (!a->read_only) {
		r = prepare(a, "INSERT OR REPLACE INTO meta(key, value) VALUES (?1, ?2)",
		            &a->meta_set, err);
		if (r < 0)
			goto fail;
	}
	r = a->log_id[0] ? 0 : meta_get(a, "log_id", a->log_id, sizeof a->log_id);
	if (r == -ENOENT && tx) {
		randombytes_buf(raw, sizeof raw);
		cd_hex(raw, sizeof raw, id);
		n = snprintf(t, sizeof t, "%lld", (long long)now_ns());
		if (n < 0 || (size_t)n >= sizeof t || meta_set(a, "log_id", id) < 0 ||
		    meta_set(a, "cp_size", "0") < 0 || meta_set(a, "cp_time", t) < 0 ||
		    meta_set(a, "version", "1") < 0) {
			r = db_err(a, err, "cannot initialise");
			goto fail;
		}
		memcpy(a->log_id, id, sizeof id);
		r = 0;
	}
	if (r < 0 || strlen(a->log_id) != CD_AUDIT_LOG_ID_LEN ||
	    cd_unhex(a->log_id, CD_AUDIT_LOG_ID_LEN, raw, sizeof raw) < 0) {
		r = cd_err_set(err, -CD_E_CORRUPT, "audit log '%s': no valid log id", a->path);
		goto fail;
	}
	if (tx) {
		r = exec(a, "COMMIT", err);
		if (r < 0)
			goto fail;
	}
	return 0;
fail:
	if (tx)
		sqlite3_exec(a->db, "ROLLBACK", NULL, NULL, NULL);
	return r;
}

/* A writer leaves the WAL as it is when it closes: no checkpoint at close
 * (it cost each run two more fsyncs, the WAL's and the database's) and no
 * deletion of the WAL (the next run would create it again, and sync its
 * header and the directory: two more).  Every commit is already durable in
 * the WAL (synchronous=FULL), the next opener reads it, and the WAL's size
 * stays bounded by wal_autocheckpoint, which checkpoints at a commit. */
static void keep_wal(struct sqlite_audit *a)
{
	int one = 1;

	sqlite3_db_config(a->db, SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, 1, NULL);
	sqlite3_file_control(a->db, "main", SQLITE_FCNTL_PERSIST_WAL, &one);
}

static int open_db(struct sqlite_audit *a, const char *db_path, struct cd_err *err)
{
	int flags = SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_EXRESCODE;
	int r;

	if (a->read_only) {
		flags |= SQLITE_OPEN_READONLY;
	} else {
		flags |= SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE;
		/* Create the file ourselves so that it (and the -wal and -shm
		 * files SQLite derives from it) is 0600. */
		if ((r = cd_mkdir_parents(db_path, err)) < 0 ||
		    (r = cd_create_private(db_path, "audit log", err)) < 0)
			return r;
	}
	if (sqlite3_open_v2(db_path, &a->db, flags, NULL) != SQLITE_OK) {
		r = a->db ? db_err(a, err, "cannot open")
		          : cd_err_set(err, -ENOMEM, "audit log: out of memory");
		return r;
	}
	sqlite3_extended_result_codes(a->db, 1);
	sqlite3_busy_handler(a->db, busy_wait, a);
	/* The file may be hostile: no triggers or views of its own run with
	 * our privileges, and no schema writes through this connection. */
	sqlite3_db_config(a->db, SQLITE_DBCONFIG_DEFENSIVE, 1, NULL);
	sqlite3_db_config(a->db, SQLITE_DBCONFIG_TRUSTED_SCHEMA, 0, NULL);
	sqlite3_db_config(a->db, SQLITE_DBCONFIG_ENABLE_TRIGGER, 0, NULL);
	sqlite3_db_config(a->db, SQLITE_DBCONFIG_ENABLE_VIEW, 0, NULL);
	if (!a->read_only) {
		if (!cd_sqlite_wal(a->db, a->busy_ms))
			return db_err(a, err, "cannot switch to WAL mode");
		if (exec(a, "PRAGMA synchronous=FULL", err) < 0)
			return err ? err->code : -EIO;
		keep_wal(a);
	}
	return 0;
}

static int audit_head(struct cd_store *st, const unsigned char genesis[32],
                      struct cd_store_audit_head *h, struct cd_err *err)
{
	struct sqlite_audit *a = of(st);
	int rc;
	uint64_t used = 0;

	sqlite3_reset(a->last);
	rc = sqlite3_step(a->last);
	if (rc == SQLITE_ROW) {
		const void *p = sqlite3_column_blob(a->last, 1);
		int n = sqlite3_column_bytes(a->last, 1);
		sqlite3_int64 s = sqlite3_column_int64(a->last, 0);
		if (!p || n != CD_AUDIT_HASH_LEN || s <= 0) {
			sqlite3_reset(a->last);
			return cd_err_set(
			        err, -CD_E_CORRUPT,
			        "audit log '%s': the last record is malformed (run 'cordon log "
			        "verify')",
			        a->path);
		}
		h->seq = (uint64_t)s;
		memcpy(h->hash, p, CD_AUDIT_HASH_LEN);
	} else if (rc == SQLITE_DONE) {
		h->seq = 0;
		memcpy(h->hash, genesis, CD_AUDIT_HASH_LEN);
	} else {
		sqlite3_reset(a->last);
		return db_err(a, err, "cannot read the head");
	}
	sqlite3_reset(a->last);
	sqlite3_reset(a->next_seq);
	rc = sqlite3_step(a->next_seq);
	if (rc == SQLITE_ROW && sqlite3_column_int64(a->next_seq, 0) > 0)
		used = (uint64_t)sqlite3_column_int64(a->next_seq, 0);
	else if (rc != SQLITE_ROW && rc != SQLITE_DONE) {
		sqlite3_reset(a->next_seq);
		return db_err(a, err, "cannot read the sequence");
	}
	sqlite3_reset(a->next_seq);
	h->next = (used > h->seq ? used : h->seq) + 1;
	if (h->next > INT64_MAX)
		return cd_err_set(err, -ERANGE, "audit log '%s': sequence exhausted", a->path);
	return 0;
}

static int audit_insert(struct cd_store *store, const struct cd_audit_entry *e, struct cd_err *err)
{
	struct sqlite_audit *a = of(store);
	sqlite3_stmt *st = a->ins;
	int i, rc;

	sqlite3_reset(st);
	sqlite3_clear_bindings(st);
	sqlite3_bind_int64(st, 1, (sqlite3_int64)e->seq);
	sqlite3_bind_int64(st, 2, e->time_ns);
	if (e->has_exit)
		sqlite3_bind_int64(st, 3, e->exit_code);
	if (e->has_duration)
		sqlite3_bind_int64(st, 4, (sqlite3_int64)e->duration_ms);
	for (i = 0; i < CD_AF_NSTR; i++)
		if (e->str[i].p)
			sqlite3_bind_text(st, 5 + i, e->str[i].p, (int)e->str[i].len,
			                  SQLITE_STATIC);
	sqlite3_bind_blob(st, 5 + CD_AF_NSTR, e->prev, CD_AUDIT_HASH_LEN, SQLITE_STATIC);
	sqlite3_bind_blob(st, 6 + CD_AF_NSTR, e->hash, CD_AUDIT_HASH_LEN, SQLITE_STATIC);
	rc = sqlite3_step(st);
	sqlite3_reset(st);
	if (rc != SQLITE_DONE)
		return db_err(a, err, "cannot append");
	return 0;
}

/* ---- the WAL ------------------------------------------------------ */

static int audit_sync(struct cd_store *store, struct cd_err *err)
{
	struct sqlite_audit *a = of(store);
	char wal[4200];
	int fd, n = snprintf(wal, sizeof wal, "%s-wal", a->path);

	if (n < 0 || (size_t)n >= sizeof wal)
		return cd_err_set(err, -ENAMETOOLONG, "audit log path too long");
	fd = open(wal, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY);
	if (fd < 0)
		return errno == ENOENT ? 0 : cd_err_sys(err, -errno, "audit log '%s'", wal);
	if (fsync(fd) < 0) {
		n = -errno;
		close(fd);
		return cd_err_sys(err, n, "audit log: cannot sync '%s'", wal);
	}
	close(fd);
	return 0;
}

/* Written (not merely allocated) bytes past the WAL's end: a commit that
 * overwrites them changes no file size, so its fdatasync writes the data
 * and not the inode too (on ext4: one device write instead of two).  Done
 * under the WAL write lock (BEGIN IMMEDIATE, nothing inserted), so no
 * other writer appends frames meanwhile; only bytes past the current end
 * are written, and zeros end SQLite's WAL recovery like any stale frame. */
static int64_t pragma_int(struct sqlite_audit *a, const char *sql)
{
	sqlite3_stmt *st = NULL;
	int64_t v = -1;

	if (sqlite3_prepare_v2(a->db, sql, -1, &st, NULL) == SQLITE_OK &&
	    sqlite3_step(st) == SQLITE_ROW)
		v = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return v;
}

static int audit_presize(struct cd_store *store, struct cd_err *err)
{
	struct sqlite_audit *a = of(store);
	static const char zeros[64 * 1024];
	char wal[4200];
	struct stat st;
	uint64_t off, bytes;
	int64_t page = pragma_int(a, "PRAGMA page_size"),
	        frames = pragma_int(a, "PRAGMA wal_autocheckpoint");
	int fd = -1, r, n = snprintf(wal, sizeof wal, "%s-wal", a->path);

	if (n < 0 || (size_t)n >= sizeof wal)
		return cd_err_set(err, -ENAMETOOLONG, "audit log path too long");
	if (page < 512 || page > 65536 || frames <= 0)
		return 0; /* no automatic checkpoints: no size the WAL returns to */
	/* The WAL header, and the frames (header + page) SQLite lets it hold
	 * before a checkpoint lets writers start again from its beginning,
	 * with room for the commit that crosses the line. */
	bytes = 32 + (uint64_t)(frames + 8) * (uint64_t)(24 + page);
	r = begin(a, err);
	if (r < 0)
		return r;
	fd = open(wal, O_WRONLY | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY);
	if (fd < 0 || fstat(fd, &st) < 0) {
		r = errno == ENOENT ? 0 : cd_err_sys(err, -errno, "audit log '%s'", wal);
		goto out;
	}
	for (off = (uint64_t)st.st_size; r == 0 && off < bytes;) {
		size_t k = bytes - off < sizeof zeros ? (size_t)(bytes - off) : sizeof zeros;
		ssize_t w = pwrite(fd, zeros, k, (off_t)off);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			r = cd_err_sys(err, w < 0 ? -errno : -EIO, "audit log: cannot extend '%s'",
			               wal);
		else
			off += (uint64_t)w;
	}
	if (r == 0 && off > (uint64_t)st.st_size && fdatasync(fd) < 0)
		r = cd_err_sys(err, -errno, "audit log: cannot sync '%s'", wal);
out:
	if (fd >= 0)
		close(fd);
	sqlite3_exec(a->db, "ROLLBACK", NULL, NULL, NULL);
	return r;
}

/* ---- reading ------------------------------------------------------ */

/* Fill `e` from the current row of `st` (selected with COLUMNS starting at
 * column 0).  Never fails: a malformed row reads as a record whose hash
 * will not match (hashes_ok = 0 when a hash column is not 32 bytes).
 * Views are valid until the next step. */
static void row_read(sqlite3_stmt *st, struct cd_audit_entry *e)
{
	const void *p;
	int i;

	memset(e, 0, sizeof *e);
	e->seq = (uint64_t)sqlite3_column_int64(st, 0);
	e->time_ns = sqlite3_column_int64(st, 1);
	if (sqlite3_column_type(st, 2) != SQLITE_NULL) {
		e->has_exit = 1;
		e->exit_code = sqlite3_column_int64(st, 2);
	}
	if (sqlite3_column_type(st, 3) != SQLITE_NULL) {
		e->has_duration = 1;
		e->duration_ms = (uint64_t)sqlite3_column_int64(st, 3);
	}
	/* column_text is NULL for SQL NULL (and for out-of-memory, which
	 * then reads as a record that does not verify: never as valid). */
	for (i = 0; i < CD_AF_NSTR; i++) {
		e->str[i].p = (const char *)sqlite3_column_text(st, 4 + i);
		e->str[i].len = e->str[i].p ? (size_t)sqlite3_column_bytes(st, 4 + i) : 0;
	}
	e->hashes_ok = 1;
	p = sqlite3_column_blob(st, 4 + CD_AF_NSTR);
	if (p && sqlite3_column_bytes(st, 4 + CD_AF_NSTR) == CD_AUDIT_HASH_LEN)
		memcpy(e->prev, p, CD_AUDIT_HASH_LEN);
	else
		e->hashes_ok = 0;
	p = sqlite3_column_blob(st, 5 + CD_AF_NSTR);
	if (p && sqlite3_column_bytes(st, 5 + CD_AF_NSTR) == CD_AUDIT_HASH_LEN)
		memcpy(e->hash, p, CD_AUDIT_HASH_LEN);
	else
		e->hashes_ok = 0;
}

static int audit_size(struct cd_store *store, uint64_t *ret, struct cd_err *err)
{
	struct sqlite_audit *a = of(store);
	sqlite3_stmt *st = NULL;
	int rc;

	if (sqlite3_prepare_v2(a->db, "SELECT max(seq) FROM records", -1, &st, NULL) != SQLITE_OK)
		return db_err(a, err, "cannot read");
	rc = sqlite3_step(st);
	if (rc != SQLITE_ROW) {
		sqlite3_finalize(st);
		return db_err(a, err, "cannot read");
	}
	*ret = (uint64_t)sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return 0;
}

static int audit_query(struct cd_store *store, const struct cd_audit_filter *f,
                       cd_store_entry_fn fn, void *ctx, struct cd_err *err)
{
	struct sqlite_audit *a = of(store);
	static const struct {
		const char *col;
		size_t off;
	} eq[] = {
		{ "agent", offsetof(struct cd_audit_filter, agent) },
		{ "task", offsetof(struct cd_audit_filter, task) },
		{ "tool", offsetof(struct cd_audit_filter, tool) },
		{ "kind", offsetof(struct cd_audit_filter, kind) },
		{ "decision", offsetof(struct cd_audit_filter, decision) },
		{ "run_id", offsetof(struct cd_audit_filter, run_id) },
	};
	static const struct cd_audit_filter none;
	struct cd_buf sql;
	struct cd_audit_entry e;
	sqlite3_stmt *st = NULL;
	int r = 0, rc, bind = 1;
	size_t i;

	if (!f)
		f = &none;
	cd_buf_init(&sql, 4096);
	r = cd_buf_puts(&sql, "SELECT " COLUMNS " FROM records WHERE seq > ?1");
	for (i = 0; r == 0 && i < CD_ARRAY_SIZE(eq); i++)
		if (*(const char *const *)((const char *)f + eq[i].off))
			r = cd_buf_printf(&sql, " AND %s = ?%d", eq[i].col, ++bind);
	if (r == 0 && f->before_seq)
		r = cd_buf_printf(&sql, " AND seq < ?%d", ++bind);
	if (r == 0 && f->since_ns)
		r = cd_buf_printf(&sql, " AND time_ns >= ?%d", ++bind);
	if (r == 0 && f->until_ns)
		r = cd_buf_printf(&sql, " AND time_ns <= ?%d", ++bind);
	if (r == 0 && f->last)
		r = cd_buf_printf(&sql, " ORDER BY seq DESC LIMIT ?%d", ++bind);
	if (r == 0)
		r = cd_buf_puts(&sql, f->last ? "" : " ORDER BY seq");
	if (r == 0 && f->last) {
		struct cd_buf outer;
		cd_buf_init(&outer, 8192);
		r = cd_buf_printf(&outer, "SELECT * FROM (%s) ORDER BY seq", sql.data);
		cd_buf_release(&sql);
		sql = outer;
	}
	if (r < 0) {
		cd_buf_release(&sql);
		return cd_err_set(err, r, "query too long");
	}
	if (sqlite3_prepare_v2(a->db, sql.data, -1, &st, NULL) != SQLITE_OK) {
		cd_buf_release(&sql);
		return db_err(a, err, "cannot read");
	}
	cd_buf_release(&sql);
	bind = 1;
	sqlite3_bind_int64(st, bind,
	                   (sqlite3_int64)(f->after_seq > INT64_MAX ? INT64_MAX : f->after_seq));
	for (i = 0; i < CD_ARRAY_SIZE(eq); i++) {
		const char *v = *(const char *const *)((const char *)f + eq[i].off);
		if (v)
			sqlite3_bind_text(st, ++bind, v, -1, SQLITE_STATIC);
	}
	if (f->before_seq)
		sqlite3_bind_int64(
		        st, ++bind,
		        (sqlite3_int64)(f->before_seq > INT64_MAX ? INT64_MAX : f->before_seq));
	if (f->since_ns)
		sqlite3_bind_int64(st, ++bind, f->since_ns);
	if (f->until_ns)
		sqlite3_bind_int64(st, ++bind, f->until_ns);
	if (f->last)
		sqlite3_bind_int64(st, ++bind,
		                   (sqlite3_int64)(f->last > INT64_MAX ? INT64_MAX : f->last));
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		row_read(st, &e);
		r = fn(&e, ctx);
		if (r != 0)
			break;
	}
	if (r == 0 && rc != SQLITE_DONE)
		r = db_err(a, err, "cannot read");
	sqlite3_finalize(st);
	return r;
}

/* ---- the ops ------------------------------------------------------ */

static void audit_close(struct cd_store *st)
{
	struct sqlite_audit *a = of(st);

	if (!a)
		return;
	sqlite3_finalize(a->ins);
	sqlite3_finalize(a->last);
	sqlite3_finalize(a->next_seq);
	sqlite3_finalize(a->meta_get);
	sqlite3_finalize(a->meta_set);
	sqlite3_close_v2(a->db);
	free(a->path);
	free(a);
}

static const char *audit_log_id(struct cd_store *st)
{
	return of(st)->log_id;
}

/* A lazy commit skips the WAL fsync; the next durable one covers it (the
 * WAL is one file, written in order). */
static int restore_sync(struct sqlite_audit *a, struct cd_err *err)
{
	int lazy = a->lazy;

	a->lazy = 0;
	if (lazy && sqlite3_exec(a->db, "PRAGMA synchronous=FULL", NULL, NULL, NULL) != SQLITE_OK)
		return db_err(a, err, "cannot set synchronous");
	return 0;
}

static int audit_begin(struct cd_store *st, int lazy, struct cd_err *err)
{
	struct sqlite_audit *a = of(st);
	int r;

	if (lazy && sqlite3_exec(a->db, "PRAGMA synchronous=NORMAL", NULL, NULL, NULL) != SQLITE_OK)
		return db_err(a, err, "cannot set synchronous");
	a->lazy = lazy;
	r = begin(a, err);
	if (r < 0)
		restore_sync(a, NULL);
	return r;
}

/* An index on a column holds the rowid (seq) after it: "col = ? AND seq
 * < ? ORDER BY seq DESC" walks it backwards from the cursor. */
static int audit_index(struct cd_store *store, struct cd_err *err)
{
	struct sqlite_audit *a = of(store);
	int r;

	if (a->read_only)
		return cd_err_set(err, -EROFS, "audit log '%s' is open read-only", a->path);
	if ((r = begin(a, err)) < 0)
		return r;
	r = exec(a,
	         "CREATE INDEX IF NOT EXISTS records_agent ON records(agent);"
	         "CREATE INDEX IF NOT EXISTS records_run ON records(run_id);"
	         "CREATE INDEX IF NOT EXISTS records_kind ON records(kind);"
	         "CREATE INDEX IF NOT EXISTS records_decision ON records(decision);",
	         err);
	r = r ?: exec(a, "COMMIT", err);
	if (r < 0)
		sqlite3_exec(a->db, "ROLLBACK", NULL, NULL, NULL);
	return r;
}

static void audit_rollback(struct cd_store *st)
{
	struct sqlite_audit *a = of(st);

	sqlite3_exec(a->db, "ROLLBACK", NULL, NULL, NULL);
	restore_sync(a, NULL);
}

static int audit_commit(struct cd_store *st, struct cd_err *err)
{
	struct sqlite_audit *a = of(st);

	if (sqlite3_exec(a->db, "COMMIT", NULL, NULL, NULL) != SQLITE_OK) {
		int r = db_err(a, err, "cannot commit");
		audit_rollback(st);
		return r;
	}
	return restore_sync(a, err);
}

static int audit_meta_get(struct cd_store *st, const char *key, char *out, size_t outlen)
{
	return meta_get(of(st), key, out, outlen);
}

static int audit_meta_set(struct cd_store *st, const char *key, const char *value, const char *what,
                          struct cd_err *err)
{
	struct sqlite_audit *a = of(st);

	if (meta_set(a, key, value) < 0)
		return db_err(a, err, what);
	return 0;
}

/* Every row in seq order, whatever its seq (a row with a bad one is what
 * verify looks for). */
static int audit_scan(struct cd_store *store, cd_store_entry_fn fn, void *ctx, struct cd_err *err)
{
	struct sqlite_audit *a = of(store);
	sqlite3_stmt *st = NULL;
	struct cd_audit_entry e;
	int rc, r = 0;

	if (sqlite3_prepare_v2(a->db, "SELECT " COLUMNS " FROM records ORDER BY seq", -1, &st,
	                       NULL) != SQLITE_OK)
		return cd_err_set(err, -CD_E_CORRUPT, "audit log: cannot read: %s",
		                  sqlite3_errmsg(a->db));
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		row_read(st, &e);
		if ((r = fn(&e, ctx)) != 0)
			break;
	}
	if (r == 0 && rc != SQLITE_ROW && rc != SQLITE_DONE)
		r = cd_err_set(err, -CD_E_CORRUPT, "audit log: cannot read: %s",
		               sqlite3_errmsg(a->db));
	sqlite3_finalize(st);
	return r;
}

static int audit_read_begin(struct cd_store *st, struct cd_err *err)
{
	struct sqlite_audit *a = of(st);

	if (sqlite3_exec(a->db, "BEGIN", NULL, NULL, NULL) != SQLITE_OK)
		return cd_err_set(err, -EIO, "audit log: %s", sqlite3_errmsg(a->db));
	return 0;
}

static void audit_read_end(struct cd_store *st)
{
	sqlite3_exec(of(st)->db, "COMMIT", NULL, NULL, NULL);
}

/* Some other row (seq != not_seq) whose prev_hash column is `h`. */
static int audit_follows(struct cd_store *store, const unsigned char h[32], uint64_t not_seq)
{
	struct sqlite_audit *a = of(store);
	sqlite3_stmt *st = NULL;
	int found = 0;

	if (sqlite3_prepare_v2(a->db,
	                       "SELECT seq FROM records WHERE prev_hash = ?1 AND seq <> ?2 LIMIT 1",
	                       -1, &st, NULL) != SQLITE_OK)
		return 0;
	sqlite3_bind_blob(st, 1, h, CD_AUDIT_HASH_LEN, SQLITE_STATIC);
	sqlite3_bind_int64(st, 2, (sqlite3_int64)not_seq);
	found = sqlite3_step(st) == SQLITE_ROW;
	sqlite3_finalize(st);
	return found;
}

/* The largest seq ever assigned (0 when unknown). */
static int64_t audit_seq_used(struct cd_store *store)
{
	struct sqlite_audit *a = of(store);
	sqlite3_stmt *st = NULL;
	int64_t v = 0;

	if (sqlite3_prepare_v2(a->db, "SELECT seq FROM sqlite_sequence WHERE name = 'records'", -1,
	                       &st, NULL) != SQLITE_OK)
		return 0;
	if (sqlite3_step(st) == SQLITE_ROW)
		v = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return v;
}

static int audit_hash_at(struct cd_store *store, uint64_t seq, unsigned char out[32])
{
	struct sqlite_audit *a = of(store);
	sqlite3_stmt *st = NULL;
	int found = 0;

	if (sqlite3_prepare_v2(a->db, "SELECT hash FROM records WHERE seq = ?1", -1, &st, NULL) !=
	    SQLITE_OK)
		return 0;
	sqlite3_bind_int64(st, 1, (sqlite3_int64)seq);
	if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_bytes(st, 0) == CD_AUDIT_HASH_LEN) {
		memcpy(out, sqlite3_column_blob(st, 0), CD_AUDIT_HASH_LEN);
		found = 1;
	}
	sqlite3_finalize(st);
	return found;
}

static int audit_wait_change(struct cd_store *st, unsigned timeout_ms)
{
	struct sqlite_audit *a = of(st);
	int64_t seen = data_version(a);
	unsigned slept = 0, k;

	if (seen < 0)
		return 1;
	while (slept < timeout_ms) {
		k = timeout_ms - slept < 50 ? timeout_ms - slept : 50;
		usleep(k * 1000);
		slept += k;
		if (data_version(a) != seen)
			return 1;
	}
	return 0;
}

static const struct cd_store_ops sqlite_audit_ops = {
	.name = "sqlite",
	.close = audit_close,
	.wait_change = audit_wait_change,
	.audit_log_id = audit_log_id,
	.audit_begin = audit_begin,
	.audit_commit = audit_commit,
	.audit_rollback = audit_rollback,
	.audit_head = audit_head,
	.audit_insert = audit_insert,
	.audit_meta_get = audit_meta_get,
	.audit_meta_set = audit_meta_set,
	.audit_size = audit_size,
	.audit_query = audit_query,
	.audit_scan = audit_scan,
	.audit_read_begin = audit_read_begin,
	.audit_read_end = audit_read_end,
	.audit_follows = audit_follows,
	.audit_seq_used = audit_seq_used,
	.audit_hash_at = audit_hash_at,
	.audit_sync = audit_sync,
	.audit_presize = audit_presize,
	.audit_index = audit_index,
};

int cd_sqlite_audit_open(const char *path, int read_only, unsigned busy_ms, struct cd_store **ret,
                         struct cd_err *err)
{
	struct sqlite_audit *a = calloc(1, sizeof *a);
	int r;

	if (!a)
		return cd_err_set(err, -ENOMEM, "out of memory");
	a->base.ops = &sqlite_audit_ops;
	a->read_only = read_only;
	a->busy_ms = busy_ms;
	a->busy_limit = busy_ms;
	if (!(a->path = strdup(path))) {
		r = cd_err_set(err, -ENOMEM, "out of memory");
		goto fail;
	}
	r = open_db(a, path, err);
	if (r < 0)
		goto fail;
	r = init_schema(a, err);
	if (r < 0)
		goto fail;
	if (!a->read_only) {
		r = prepare(
		        a,
		        "INSERT INTO records(" COLUMNS ") VALUES (?1, ?2, ?3, ?4, ?5, ?6,"
		        " ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19, ?20, ?21,"
		        " ?22, ?23)",
		        &a->ins, err);
		if (r == 0)
			r = prepare(a, "SELECT seq, hash FROM records ORDER BY seq DESC LIMIT 1",
			            &a->last, err);
		if (r == 0)
			r = prepare(a, "SELECT seq FROM sqlite_sequence WHERE name = 'records'",
			            &a->next_seq, err);
		if (r < 0)
			goto fail;
	}
	*ret = &a->base;
	return 0;
fail:
	audit_close(&a->base);
	return r;
}
