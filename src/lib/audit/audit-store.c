/* audit-store.c — the audit log: open, append, query (audit.h).  The
 * chain and the checkpoints are made here; the records are kept by the
 * store (store.h; SQLite: store-sqlite-audit.c), which appends each batch
 * in one transaction under its write lock, so concurrent writers (many
 * cordon processes) serialise and the chain stays linear.
 *
 * Trust boundary: record fields are untrusted data, checked for size and
 * shape here and stored as given.  The store may have been edited by
 * hand; it decodes every row defensively. */
#include "audit-int.h"
#include "util/buf.h"
#include "util/err.h"
#include "store/store.h"
#include "util/util.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define DEFAULT_BUSY_MS 10000

struct cd_audit {
	struct cd_store *store;
	char *path;
	char log_id[CD_AUDIT_LOG_ID_LEN + 1];
	unsigned char genesis[CD_AUDIT_HASH_LEN];
	char host[256];
	struct cd_audit_key *key;
	uint64_t cp_every, cp_secs;
	char *cp_out;
	int read_only;
	char warning[CD_ERR_MSG_MAX];
	/* Checkpoint lines committed in the current transaction, appended to
	 * the checkpoint file after COMMIT. */
	char pending[4][CD_AUDIT_CP_LINE_MAX];
	int npending;
	/* Set for a log another process appends to (cd_audit_open_remote):
	 * no store then. */
	struct cd_audit_remote remote;
};

struct cd_store *cd_audit_store_(struct cd_audit *a)
{
	return a->store;
}

const unsigned char *cd_audit_genesis_(const struct cd_audit *a)
{
	return a->genesis;
}

const char *cd_audit_host_(const struct cd_audit *a)
{
	return a->host;
}

const char *cd_audit_log_id(const struct cd_audit *a)
{
	return a->log_id;
}

const char *cd_audit_warning(const struct cd_audit *a)
{
	return a->warning[0] ? a->warning : NULL;
}

static int64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static int meta_get(struct cd_audit *a, const char *key, char *out, size_t outlen)
{
	return a->store->ops->audit_meta_get(a->store, key, out, outlen);
}

void cd_audit_close(struct cd_audit *a)
{
	if (!a)
		return;
	if (a->remote.close)
		a->remote.close(a->remote.ctx);
	if (a->store)
		a->store->ops->close(a->store);
	cd_audit_key_free(a->key);
	free(a->cp_out);
	free(a->path);
	free(a);
}

int cd_audit_open(const char *db_path, const struct cd_audit_opts *opts, struct cd_audit **ret,
                  struct cd_err *err)
{
	static const struct cd_audit_opts none;
	struct cd_audit *a;
	int r;

	if (!opts)
		opts = &none;
	if (!db_path || !*db_path)
		return cd_err_set(err, -EINVAL, "no audit log path");
	if (sodium_init() < 0)
		return cd_err_set(err, -ENOSYS, "libsodium failed to initialise");
	a = calloc(1, sizeof *a);
	if (!a)
		return cd_err_set(err, -ENOMEM, "out of memory");
	a->read_only = opts->read_only;
	a->cp_every = opts->checkpoint_every;
	a->cp_secs = opts->checkpoint_secs;
	a->path = strdup(db_path);
	if (!a->path || (opts->checkpoint_out && !(a->cp_out = strdup(opts->checkpoint_out)))) {
		r = cd_err_set(err, -ENOMEM, "out of memory");
		goto fail;
	}
	if (opts->host) {
		if (!*opts->host || strlen(opts->host) >= sizeof a->host) {
			r = cd_err_set(err, -EINVAL, "audit log: bad host name");
			goto fail;
		}
		memcpy(a->host, opts->host, strlen(opts->host) + 1);
	} else if (gethostname(a->host, sizeof a->host - 1) < 0) {
		memcpy(a->host, "unknown", sizeof "unknown");
	}
	if (opts->key_path) {
		r = cd_audit_key_load(opts->key_path, &a->key, err);
		if (r < 0)
			goto fail;
	}
	r = cd_store_audit_open(db_path, a->read_only, a->host,
	                        opts->busy_ms ? opts->busy_ms : DEFAULT_BUSY_MS, &a->store, err);
	if (r < 0)
		goto fail;
	memcpy(a->log_id, a->store->ops->audit_log_id(a->store), sizeof a->log_id);
	cd_audit_genesis(a->log_id, a->genesis);
	*ret = a;
	return 0;
fail:
	cd_audit_close(a);
	return r;
}

int cd_audit_open_remote(const char *db_path, const char *log_id, const struct cd_audit_remote *rm,
                         struct cd_audit **ret, struct cd_err *err)
{
	struct cd_audit *a;
	unsigned char id[CD_AUDIT_LOG_ID_LEN / 2];

	if (!db_path || !rm || !rm->append)
		return cd_err_set(err, -EINVAL, "no remote audit log");
	if (log_id && (strlen(log_id) != CD_AUDIT_LOG_ID_LEN ||
	               cd_audit_unhex(log_id, CD_AUDIT_LOG_ID_LEN, id, sizeof id) < 0))
		return cd_err_set(err, -CD_E_PARSE, "audit log: malformed log id");
	a = calloc(1, sizeof *a);
	if (!a || !(a->path = strdup(db_path))) {
		free(a);
		return cd_err_set(err, -ENOMEM, "out of memory");
	}
	if (log_id) {
		memcpy(a->log_id, log_id, CD_AUDIT_LOG_ID_LEN);
		cd_audit_genesis(a->log_id, a->genesis);
	}
	a->remote = *rm;
	*ret = a;
	return 0;
}

int cd_audit_is_remote(const struct cd_audit *a)
{
	return a && a->remote.append;
}

/* A remote log answers appends only. */
static int no_store(const struct cd_audit *a, struct cd_err *err)
{
	return a->store ? 0
	                : cd_err_set(err, -ENOTSUP, "audit log '%s': appends only here", a->path);
}

/* ---- validation --------------------------------------------------- */

static int is_hex64(const char *s)
{
	unsigned char tmp[32];
	return cd_audit_unhex(s, strlen(s), tmp, sizeof tmp) == 0;
}

int cd_audit_record_check(const struct cd_record *r, struct cd_err *err)
{
	const char *const hashes[] = { r->argv_sha256, r->code_sha256, r->stdin_sha256,
		                       r->stdout_sha256, r->stderr_sha256 };
	const char *const texts[] = { r->kind,   r->run_id, r->agent,    r->task,      r->tool,
		                      r->action, r->target, r->decision, r->grant_ids, r->reason };
	size_t i;

	if (!r->kind || !*r->kind)
		return cd_err_set(err, -EINVAL, "audit record without a kind");
	if (strcmp(r->kind, "checkpoint") == 0)
		return cd_err_set(err, -EINVAL, "record kind 'checkpoint' is reserved");
	for (i = 0; i < CD_ARRAY_SIZE(texts); i++)
		if (texts[i] && strnlen(texts[i], CD_AUDIT_FIELD_MAX + 1) > CD_AUDIT_FIELD_MAX)
			return cd_err_set(err, -CD_E_LIMIT, "audit record field too long");
	for (i = 0; i < CD_ARRAY_SIZE(hashes); i++)
		if (hashes[i] && !is_hex64(hashes[i]))
			return cd_err_set(err, -EINVAL,
			                  "audit record: a sha256 field is not 64 hex digits");
	if (r->has_duration && r->duration_ms > INT64_MAX)
		return cd_err_set(err, -ERANGE, "audit record: duration out of range");
	if (r->details_json) {
		size_t n = strnlen(r->details_json, CD_AUDIT_DETAILS_MAX + 1);
		json_error_t je;
		json_t *j;

		if (n > CD_AUDIT_DETAILS_MAX)
			return cd_err_set(err, -CD_E_LIMIT, "audit record details too long");
		j = json_loadb(r->details_json, n, JSON_REJECT_DUPLICATES, &je);
		if (!j || !json_is_object(j)) {
			json_decref(j);
			return cd_err_set(err, -CD_E_PARSE,
			                  "audit record details are not a JSON object");
		}
		json_decref(j);
	}
	return 0;
}

/* ---- appending ---------------------------------------------------- */

static void entry_from_record(struct cd_audit *a, const struct cd_record *r,
                              struct cd_audit_entry *e)
{
	const char *const s[CD_AF_NSTR] = {
		[CD_AF_HOST] = a->host,
		[CD_AF_KIND] = r->kind,
		[CD_AF_RUN_ID] = r->run_id,
		[CD_AF_AGENT] = r->agent,
		[CD_AF_TASK] = r->task,
		[CD_AF_TOOL] = r->tool,
		[CD_AF_ACTION] = r->action,
		[CD_AF_TARGET] = r->target,
		[CD_AF_DECISION] = r->decision,
		[CD_AF_GRANT_IDS] = r->grant_ids,
		[CD_AF_REASON] = r->reason,
		[CD_AF_ARGV_SHA256] = r->argv_sha256,
		[CD_AF_CODE_SHA256] = r->code_sha256,
		[CD_AF_STDIN_SHA256] = r->stdin_sha256,
		[CD_AF_STDOUT_SHA256] = r->stdout_sha256,
		[CD_AF_STDERR_SHA256] = r->stderr_sha256,
		[CD_AF_DETAILS] = r->details_json,
	};
	int i;

	memset(e, 0, sizeof *e);
	e->has_exit = r->has_exit ? 1 : 0;
	e->exit_code = r->has_exit ? r->exit_code : 0;
	e->has_duration = r->has_duration ? 1 : 0;
	e->duration_ms = r->has_duration ? r->duration_ms : 0;
	for (i = 0; i < CD_AF_NSTR; i++) {
		e->str[i].p = s[i];
		e->str[i].len = s[i] ? strlen(s[i]) : 0;
	}
}

/* Chain e after the head and store it; the head moves on. */
static int insert(struct cd_audit *a, struct cd_audit_entry *e, struct cd_store_audit_head *h,
                  struct cd_err *err)
{
	int r;

	e->seq = h->next;
	r = cd_audit_chain(h->hash, e, e->hash);
	if (r < 0)
		return cd_err_set(err, r, "audit record too large");
	memcpy(e->prev, h->hash, CD_AUDIT_HASH_LEN);
	r = a->store->ops->audit_insert(a->store, e, err);
	if (r < 0)
		return r;
	h->seq = e->seq;
	h->next = e->seq + 1;
	memcpy(h->hash, e->hash, CD_AUDIT_HASH_LEN);
	return 0;
}

/* Sign the head and store the checkpoint as the next record. */
static int write_checkpoint(struct cd_audit *a, struct cd_store_audit_head *h, int64_t t,
                            struct cd_err *err)
{
	struct cd_audit_checkpoint cp;
	struct cd_audit_entry e;
	char line[CD_AUDIT_CP_LINE_MAX], details[CD_AUDIT_CP_LINE_MAX + 32], v[32];
	int n, r;

	memset(&cp, 0, sizeof cp);
	memcpy(cp.log_id, a->log_id, sizeof cp.log_id);
	cp.size = h->seq;
	memcpy(cp.head, h->hash, sizeof cp.head);
	cp.time_ns = t;
	r = cd_audit_checkpoint_sign(a->key, &cp);
	if (r == 0)
		r = cd_audit_checkpoint_format(&cp, line, sizeof line);
	if (r < 0)
		return cd_err_set(err, r, "cannot sign a checkpoint");
	n = snprintf(details, sizeof details, "{\"checkpoint\":\"%s\"}", line);
	if (n < 0 || (size_t)n >= sizeof details)
		return cd_err_set(err, -EOVERFLOW, "checkpoint too long");
	memset(&e, 0, sizeof e);
	e.time_ns = t;
	e.str[CD_AF_HOST].p = a->host;
	e.str[CD_AF_HOST].len = strlen(a->host);
	e.str[CD_AF_KIND].p = "checkpoint";
	e.str[CD_AF_KIND].len = strlen("checkpoint");
	e.str[CD_AF_DETAILS].p = details;
	e.str[CD_AF_DETAILS].len = (size_t)n;
	r = insert(a, &e, h, err);
	if (r < 0)
		return r;
	n = snprintf(v, sizeof v, "%llu", (unsigned long long)cp.size);
	if (n < 0 || (size_t)n >= sizeof v)
		return cd_err_set(err, -EOVERFLOW, "cannot record the checkpoint");
	if ((r = a->store->ops->audit_meta_set(a->store, "cp_size", v,
	                                       "cannot record the checkpoint", err)) < 0)
		return r;
	n = snprintf(v, sizeof v, "%lld", (long long)t);
	if (n < 0 || (size_t)n >= sizeof v)
		return cd_err_set(err, -EOVERFLOW, "cannot record the checkpoint");
	if ((r = a->store->ops->audit_meta_set(a->store, "cp_time", v,
	                                       "cannot record the checkpoint", err)) < 0)
		return r;
	/* The signed high-water mark, beside the chain: verify finds a chain
	 * cut below it (the checkpoint record deleted with the tail). */
	if ((r = a->store->ops->audit_meta_set(a->store, "cp_line", line,
	                                       "cannot record the checkpoint", err)) < 0)
		return r;
	if (a->npending < (int)CD_ARRAY_SIZE(a->pending))
		memcpy(a->pending[a->npending++], line, sizeof line);
	return 0;
}

static int checkpoint_due(struct cd_audit *a, const struct cd_store_audit_head *h, int64_t t)
{
	char v[32];
	uint64_t size = 0, when = 0;
	size_t i;

	if (!a->key || (!a->cp_every && !a->cp_secs))
		return 0;
	if (meta_get(a, "cp_size", v, sizeof v) == 0)
		for (i = 0; v[i] >= '0' && v[i] <= '9' && i < 20; i++)
			size = size * 10 + (uint64_t)(v[i] - '0');
	if (meta_get(a, "cp_time", v, sizeof v) == 0)
		for (i = 0; v[i] >= '0' && v[i] <= '9' && i < 19; i++)
			when = when * 10 + (uint64_t)(v[i] - '0');
	if (a->cp_every && h->seq >= size + a->cp_every)
		return 1;
	if (a->cp_secs && (uint64_t)t >= when + a->cp_secs * 1000000000ull)
		return 1;
	return 0;
}

/* After COMMIT: append the checkpoint lines to the file that is meant to
 * be copied off the host.  The records are already durable, so a failure
 * here is a warning, not an error. */
static void flush_pending(struct cd_audit *a)
{
	int i, fd, r = 0;

	if (!a->npending || !a->cp_out) {
		a->npending = 0;
		return;
	}
	fd = open(a->cp_out, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY,
	          0644);
	if (fd < 0)
		r = -errno;
	for (i = 0; r == 0 && i < a->npending; i++) {
		char line[CD_AUDIT_CP_LINE_MAX + 1];
		size_t n = strlen(a->pending[i]);
		memcpy(line, a->pending[i], n);
		line[n] = '\n';
		r = cd_write_all(fd, line, n + 1);
	}
	if (r == 0 && fsync(fd) < 0)
		r = -errno;
	if (fd >= 0)
		close(fd);
	if (r < 0) {
		int n = snprintf(a->warning, sizeof a->warning,
		                 "checkpoint written to the log but not to '%s': %s", a->cp_out,
		                 cd_strerror(r));
		if (n < 0)
			a->warning[0] = '\0';
	}
	a->npending = 0;
}

static int append_tx(struct cd_audit *a, const struct cd_record *recs, size_t n, int force_cp,
                     int lazy, uint64_t *ret_last, struct cd_err *err)
{
	struct cd_store *st = a->store;
	struct cd_audit_entry e;
	struct cd_store_audit_head h;
	int64_t t;
	size_t i;
	int r;

	if (a->read_only)
		return cd_err_set(err, -EROFS, "audit log '%s' is open read-only", a->path);
	for (i = 0; i < n; i++) {
		r = cd_audit_record_check(&recs[i], err);
		if (r < 0)
			return r;
	}
	a->warning[0] = '\0';
	a->npending = 0;
	if (a->remote.append)
		return a->remote.append(a->remote.ctx, recs, n, lazy, ret_last, err);
	/* A lazy commit skips the WAL fsync; the next durable one covers it
	 * (the store's journal is written in order). */
	r = st->ops->audit_begin(st, lazy, err);
	if (r < 0)
		return r;
	r = st->ops->audit_head(st, a->genesis, &h, err);
	t = now_ns();
	for (i = 0; r == 0 && i < n; i++) {
		entry_from_record(a, &recs[i], &e);
		e.time_ns = t;
		r = insert(a, &e, &h, err);
		if (ret_last)
			*ret_last = h.seq;
	}
	/* Never a checkpoint in a lazy commit: a signed head could outlive
	 * the records it covers. */
	if (r == 0 && !lazy && (force_cp || checkpoint_due(a, &h, t))) {
		uint64_t covered = h.seq;
		r = write_checkpoint(a, &h, t, err);
		if (force_cp && ret_last)
			*ret_last = covered;
	}
	if (r < 0) {
		st->ops->audit_rollback(st);
		a->npending = 0;
		return r;
	}
	if ((r = st->ops->audit_commit(st, err)) < 0) {
		a->npending = 0;
		return r;
	}
	flush_pending(a);
	return 0;
}

int cd_audit_append(struct cd_audit *a, const struct cd_record *r, uint64_t *ret_seq,
                    struct cd_err *err)
{
	uint64_t seq = 0;
	int rc = append_tx(a, r, 1, 0, 0, &seq, err);

	if (rc == 0 && ret_seq)
		*ret_seq = seq;
	return rc;
}

int cd_audit_append_lazy(struct cd_audit *a, const struct cd_record *r, struct cd_err *err)
{
	uint64_t seq = 0;

	return append_tx(a, r, 1, 0, 1, &seq, err);
}

int cd_audit_sync(struct cd_audit *a, struct cd_err *err)
{
	if (no_store(a, err) < 0)
		return err ? err->code : -ENOTSUP;
	return a->store->ops->audit_sync(a->store, err);
}

int cd_audit_wait(struct cd_audit *a, unsigned timeout_ms)
{
	if (!a->store)
		return -ENOTSUP;
	return a->store->ops->wait_change(a->store, timeout_ms);
}

int cd_audit_index(struct cd_audit *a, struct cd_err *err)
{
	if (a->read_only)
		return cd_err_set(err, -EROFS, "audit log '%s' is open read-only", a->path);
	if (!a->store || !a->store->ops->audit_index)
		return 0;
	return a->store->ops->audit_index(a->store, err);
}

int cd_audit_presize_wal(struct cd_audit *a, struct cd_err *err)
{
	if (a->read_only)
		return cd_err_set(err, -EROFS, "audit log '%s' is open read-only", a->path);
	if (!a->store)
		return 0; /* the service's own log: nothing to do here */
	return a->store->ops->audit_presize(a->store, err);
}

int cd_audit_append_many(struct cd_audit *a, const struct cd_record *r, size_t n,
                         uint64_t *ret_last, struct cd_err *err)
{
	uint64_t seq = 0;
	int rc;

	if (n == 0)
		return cd_err_set(err, -EINVAL, "no records");
	rc = append_tx(a, r, n, 0, 0, &seq, err);
	if (rc == 0 && ret_last)
		*ret_last = seq;
	return rc;
}

int cd_audit_checkpoint(struct cd_audit *a, uint64_t *ret_size, struct cd_err *err)
{
	uint64_t size = 0;
	int rc;

	if (!a->key)
		return cd_err_set(err, -ENOKEY,
		                  "no signing key (create one with 'cordon log keygen')");
	rc = append_tx(a, NULL, 0, 1, 0, &size, err);
	if (rc == 0 && ret_size)
		*ret_size = size;
	return rc;
}

/* ---- reading ------------------------------------------------------ */

int cd_audit_size(struct cd_audit *a, uint64_t *ret, struct cd_err *err)
{
	if (no_store(a, err) < 0)
		return -ENOTSUP;
	return a->store->ops->audit_size(a->store, ret, err);
}

int cd_audit_query(struct cd_audit *a, const struct cd_audit_filter *f, cd_audit_entry_fn fn,
                   void *ctx, struct cd_err *err)
{
	if (no_store(a, err) < 0)
		return -ENOTSUP;
	return a->store->ops->audit_query(a->store, f, fn, ctx, err);
}

int cd_audit_heads(struct cd_audit *a, int (*fn)(const char *host, uint64_t seq, void *ctx),
                   void *ctx, struct cd_err *err)
{
	if (no_store(a, err) < 0)
		return -ENOTSUP;
	if (!a->store->ops->audit_heads)
		return -ENOTSUP;
	return a->store->ops->audit_heads(a->store, fn, ctx, err);
}
