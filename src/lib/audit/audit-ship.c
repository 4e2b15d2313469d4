/* audit-ship.c — `cordon log ship`: copy a local log's chain into a
 * shared store (audit.h, cd_audit_ship).
 *
 * The local log (SQLite, one chain) is walked in seq order inside one
 * read transaction and verified as it goes: seq without gaps, every hash
 * recomputed from its fields and its predecessor, every checkpoint record
 * signing the head it follows (and its signature, given a public key).
 * Records go into the shared store's chain of the same host name as
 * written: seq, time, fields, prev and hash unchanged, so the shared copy
 * verifies against the local log's genesis (the chain's log id, meta
 * chain_log_id, set with its first records) and its signed checkpoints.
 *
 * Idempotent: the shared chain's head (seq R, hash H) is read under the
 * chain's write lock; the local record R must have hash H (then, the
 * chain being hashed, every record before it matches too), and only
 * records after R are sent.  A different hash is refused, naming the
 * first seq that differs (a binary search over both chains).  Resumable:
 * records go in batches, each one durable transaction with the chain's
 * meta (its log id, its last checkpoint line); a ship killed mid-way
 * leaves whole batches, and the next run starts after them.  A local
 * chain that breaks stops the ship at the break: the records before it
 * are committed, nothing after it is sent.
 *
 * Who may write: the shared store's row-level security lets a host's role
 * append only to its own chain; a local log of another host's name is
 * refused by the store, not here.
 *
 * Trust boundary: the local database is untrusted until each record's
 * hash checks; the shared store's head is compared, never trusted. */
#include "audit-int.h"
#include "util/err.h"

#include <errno.h>
#include <jansson.h>
#include <sodium.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SHIP_ROWS 500 /* records per INSERT */

struct ship {
	struct cd_audit *from, *to;
	struct cd_store *lst, *rst;
	const struct cd_audit_ship_opts *o;
	struct cd_audit_ship_report *rep;
	struct cd_err *err;
	unsigned char head[CD_AUDIT_HASH_LEN]; /* the local chain, verified */
	uint64_t expect;
	struct cd_store_audit_head remote; /* the shared chain's head in the open batch */
	int in_tx, diverged;
	uint64_t in_batch;
	char cp_line[CD_AUDIT_CP_LINE_MAX]; /* the batch's last checkpoint ("": none) */
	/* Records verified, not sent yet: copies (the scan's rows are views),
	 * sent SHIP_ROWS in one statement. */
	struct cd_audit_entry pend[SHIP_ROWS];
	char *blob[SHIP_ROWS];
	size_t npend;
};

/* A copy of e whose strings live in one allocation (*blob). */
static int copy_entry(const struct cd_audit_entry *e, struct cd_audit_entry *out, char **blob)
{
	size_t n = 0, off = 0;
	int i;

	for (i = 0; i < CD_AF_NSTR; i++)
		n += e->str[i].p ? e->str[i].len : 0;
	if (!(*blob = malloc(n + 1)))
		return -ENOMEM;
	*out = *e;
	for (i = 0; i < CD_AF_NSTR; i++) {
		if (!e->str[i].p)
			continue;
		memcpy(*blob + off, e->str[i].p, e->str[i].len);
		out->str[i].p = *blob + off;
		off += e->str[i].len;
	}
	return 0;
}

/* Send the pending records (inside the batch's transaction). */
static int flush_rows(struct ship *s)
{
	const struct cd_store_ops *ops = s->rst->ops;
	size_t i;
	int r = 0;

	if (s->npend && ops->audit_insert_many)
		r = ops->audit_insert_many(s->rst, s->pend, s->npend, s->err);
	for (i = 0; i < s->npend; i++) {
		if (r == 0 && !ops->audit_insert_many)
			r = ops->audit_insert(s->rst, &s->pend[i], s->err);
		free(s->blob[i]);
	}
	s->npend = 0;
	return r;
}

static int refuse(struct ship *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int refuse(struct ship *s, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(s->err->msg, sizeof s->err->msg, fmt, ap);
	va_end(ap);
	if (n < 0)
		s->err->msg[0] = '\0';
	s->err->code = -CD_E_DENIED;
	return -CD_E_DENIED;
}

static int fail_code(struct ship *s)
{
	return s->err->code ? s->err->code : -EIO;
}

/* A batch: the chain's lock, its head as this ship left it. */
static int batch_begin(struct ship *s)
{
	struct cd_store_audit_head h;
	int r;

	if ((r = s->rst->ops->audit_begin(s->rst, 0, s->err)) < 0)
		return r;
	r = s->rst->ops->audit_head(s->rst, cd_audit_genesis_(s->from), &h, s->err);
	if (r == 0 && (h.seq != s->remote.seq || memcmp(h.hash, s->remote.hash, sizeof h.hash)))
		r = refuse(s,
		           "chain '%s' in the shared store moved while shipping (another writer?)",
		           s->rep->host);
	if (r < 0) {
		s->rst->ops->audit_rollback(s->rst);
		return r;
	}
	s->in_tx = 1;
	s->in_batch = 0;
	s->cp_line[0] = '\0';
	return 0;
}

static int batch_commit(struct ship *s)
{
	int r = 0;

	if (!s->in_tx)
		return 0;
	s->in_tx = 0;
	r = flush_rows(s);
	if (r == 0 && s->cp_line[0])
		r = s->rst->ops->audit_meta_set(s->rst, "cp_line", s->cp_line,
		                                "cannot record the chain's checkpoint", s->err);
	if (r < 0) {
		s->rst->ops->audit_rollback(s->rst);
		return r;
	}
	if ((r = s->rst->ops->audit_commit(s->rst, s->err)) < 0)
		return r;
	s->rep->shipped += s->in_batch;
	return 0;
}

/* The shared store, opened for the chain of the local log's host: its
 * head, and whose log the chain is. */
static int open_remote(struct ship *s)
{
	struct cd_audit_opts ao;
	char v[CD_AUDIT_LOG_ID_LEN + 8];
	const char *id = cd_audit_log_id(s->from);
	int r;

	memset(&ao, 0, sizeof ao);
	ao.host = s->rep->host;
	ao.busy_ms = s->o->busy_ms;
	if ((r = cd_audit_open(s->o->to, &ao, &s->to, s->err)) < 0)
		return r;
	s->rst = cd_audit_store_(s->to);
	if (!s->rst->ops->audit_chains)
		return refuse(s,
		              "'%s' keeps one chain: ship into a shared store "
		              "(a postgresql:// URI)",
		              s->o->to);
	if ((r = s->rst->ops->audit_begin(s->rst, 0, s->err)) < 0)
		return r;
	s->in_tx = 1;
	r = s->rst->ops->audit_head(s->rst, cd_audit_genesis_(s->from), &s->remote, s->err);
	if (r == 0) {
		int m = s->rst->ops->audit_meta_get(s->rst, "chain_log_id", v, sizeof v);
		if (m == 0 && strcmp(v, id) != 0)
			r = refuse(
			        s,
			        "chain '%s' in the shared store was shipped from another log (%s)",
			        s->rep->host, v);
		else if (m == -ENOENT && s->remote.seq > 0)
			r = refuse(s,
			           "chain '%s' in the shared store was written there, not shipped "
			           "from this log",
			           s->rep->host);
		else if (m == -ENOENT)
			r = s->rst->ops->audit_meta_set(s->rst, "chain_log_id", id,
			                                "cannot record the chain's log", s->err);
		else if (m < 0)
			r = refuse(s, "chain '%s' in the shared store: its log id is unreadable",
			           s->rep->host);
	}
	s->rep->remote_before = s->remote.seq;
	return r;
}

/* A checkpoint record of the local chain must sign the head it follows. */
static int check_checkpoint(struct ship *s, const struct cd_audit_entry *e, char *line_out)
{
	const struct cd_audit_str *d = &e->str[CD_AF_DETAILS];
	struct cd_audit_checkpoint cp;
	json_t *j = d->p ? json_loadb(d->p, d->len, JSON_REJECT_DUPLICATES, NULL) : NULL;
	json_t *v = j ? json_object_get(j, "checkpoint") : NULL;
	int ok = v && json_is_string(v) && json_string_length(v) < CD_AUDIT_CP_LINE_MAX &&
	         cd_audit_checkpoint_parse(json_string_value(v), json_string_length(v), &cp) == 0;

	if (ok)
		memcpy(line_out, json_string_value(v), json_string_length(v) + 1);
	json_decref(j);
	if (!ok || strcmp(cp.log_id, cd_audit_log_id(s->from)) != 0 || cp.size != e->seq - 1 ||
	    sodium_memcmp(cp.head, s->head, sizeof cp.head) != 0)
		return refuse(s,
		              "the local log breaks at seq %llu: a checkpoint that does not sign "
		              "its chain (run 'cordon log verify'); nothing from it on was shipped",
		              (unsigned long long)e->seq);
	if (s->o->pubkey && cd_audit_checkpoint_check(&cp, s->o->pubkey) < 0)
		return refuse(s,
		              "the local log breaks at seq %llu: a checkpoint signature does not "
		              "verify with the public key; nothing from it on was shipped",
		              (unsigned long long)e->seq);
	return 0;
}

static int is_kind(const struct cd_audit_entry *e, const char *k)
{
	const struct cd_audit_str *s = &e->str[CD_AF_KIND];
	return s->p && s->len == strlen(k) && memcmp(s->p, k, s->len) == 0;
}

/* One local record: verified, then skipped (already shipped) or sent.
 * Non-zero stops the walk. */
static int ship_row(const struct cd_audit_entry *e, void *ctx)
{
	struct ship *s = ctx;
	const struct cd_audit_str *host = &e->str[CD_AF_HOST];
	unsigned char h[CD_AUDIT_HASH_LEN];
	char line[CD_AUDIT_CP_LINE_MAX] = "";
	int r;

	if (e->seq != s->expect)
		return refuse(s,
		              "the local log breaks at seq %llu: %s (run 'cordon log verify'); "
		              "nothing from it on was shipped",
		              (unsigned long long)s->expect,
		              e->seq > s->expect ? "records are missing"
		                                 : "a record with a bad seq");
	if (!e->hashes_ok || cd_audit_chain(s->head, e, h) < 0 || memcmp(h, e->hash, sizeof h) ||
	    memcmp(e->prev, s->head, sizeof h))
		return refuse(s,
		              "the local log breaks at seq %llu: the record does not match its "
		              "hash (run 'cordon log verify'); nothing from it on was shipped",
		              (unsigned long long)e->seq);
	if (!host->p || host->len == 0 || host->len >= sizeof s->rep->host ||
	    memchr(host->p, 0, host->len))
		return refuse(s, "seq %llu: a record without a host name cannot be shipped",
		              (unsigned long long)e->seq);
	if (e->seq == 1) {
		memcpy(s->rep->host, host->p, host->len);
		s->rep->host[host->len] = '\0';
		if ((r = open_remote(s)) < 0)
			return r;
	} else if (host->len != strlen(s->rep->host) || memcmp(host->p, s->rep->host, host->len)) {
		return refuse(s,
		              "seq %llu was written by another host than seq 1 ('%s'): a log of "
		              "several hosts cannot be shipped into one host's chain",
		              (unsigned long long)e->seq, s->rep->host);
	}
	if (is_kind(e, "checkpoint") && (r = check_checkpoint(s, e, line)) < 0)
		return r;
	memcpy(s->head, h, sizeof h);
	s->expect++;
	s->rep->local_last = e->seq;
	if (e->seq < s->remote.seq)
		return 0;
	if (e->seq == s->remote.seq) {
		if (memcmp(h, s->remote.hash, sizeof h) != 0) {
			s->diverged = 1;
			return 1;
		}
		return 0;
	}
	if (!s->in_tx && (r = batch_begin(s)) < 0)
		return r;
	if ((r = copy_entry(e, &s->pend[s->npend], &s->blob[s->npend])) < 0)
		return cd_err_set(s->err, r, "out of memory");
	if (++s->npend == SHIP_ROWS && (r = flush_rows(s)) < 0)
		return r;
	s->remote.seq = e->seq;
	memcpy(s->remote.hash, h, sizeof h);
	s->in_batch++;
	if (line[0])
		memcpy(s->cp_line, line, sizeof line);
	if (s->in_batch >= s->o->batch && (r = batch_commit(s)) < 0)
		return r;
	return 0;
}

/* The first seq at or below `hi` whose hash differs between the two
 * chains (each hash commits to every record before it). */
static uint64_t first_difference(struct ship *s, uint64_t hi)
{
	uint64_t lo = 1;

	s->rst->ops->audit_chain(s->rst, s->rep->host);
	while (lo < hi) {
		uint64_t mid = lo + (hi - lo) / 2;
		unsigned char a[CD_AUDIT_HASH_LEN], b[CD_AUDIT_HASH_LEN];
		if (s->lst->ops->audit_hash_at(s->lst, mid, a) == 1 &&
		    s->rst->ops->audit_hash_at(s->rst, mid, b) == 1 && memcmp(a, b, sizeof a) == 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* Pending copies never sent (a refusal or an error first). */
static void flush_discard(struct ship *s)
{
	size_t i;

	for (i = 0; i < s->npend; i++)
		free(s->blob[i]);
	s->npend = 0;
}

static int ship_run(struct ship *s, struct cd_audit *from, const struct cd_audit_ship_opts *o,
                    struct cd_audit_ship_report *rep, struct cd_err *err)
{
	int r;

	s->from = from;
	s->lst = cd_audit_store_(from);
	s->o = o;
	s->rep = rep;
	s->err = err;
	s->expect = 1;
	err->code = 0;
	if (!s->lst)
		return cd_err_set(err, -ENOTSUP, "ship: the local log cannot be read here");
	memcpy(s->head, cd_audit_genesis_(from), sizeof s->head);
	if ((r = s->lst->ops->audit_read_begin(s->lst, err)) < 0)
		return r;
	r = s->lst->ops->audit_scan(s->lst, ship_row, s, err);
	if (r > 0)
		r = 0;
	/* What was verified and sent before a refusal is kept. */
	if (s->in_tx && batch_commit(s) < 0 && r == 0)
		r = fail_code(s);
	if (r == 0 && s->diverged) {
		uint64_t d = first_difference(s, s->remote.seq);
		r = refuse(s,
		           "seq %llu of chain '%s' differs in the shared store from the local "
		           "log: refused, nothing shipped",
		           (unsigned long long)d, rep->host);
	} else if (r == 0 && s->to && rep->local_last < s->remote.seq) {
		r = refuse(s,
		           "the shared store holds %llu records of chain '%s', the local log "
		           "only %llu: an older copy, or another log; nothing shipped",
		           (unsigned long long)s->remote.seq, rep->host,
		           (unsigned long long)rep->local_last);
	}
	if (s->in_tx)
		s->rst->ops->audit_rollback(s->rst);
	s->lst->ops->audit_read_end(s->lst);
	cd_audit_close(s->to);
	return r;
}

int cd_audit_ship(struct cd_audit *from, const struct cd_audit_ship_opts *o,
                  struct cd_audit_ship_report *rep, struct cd_err *err)
{
	struct ship *sp;
	int r;

	memset(rep, 0, sizeof *rep);
	if (!o || !o->to || !o->batch)
		return cd_err_set(err, -EINVAL, "ship: no destination");
	if (!(sp = calloc(1, sizeof *sp)))
		return cd_err_set(err, -ENOMEM, "out of memory");
	r = ship_run(sp, from, o, rep, err);
	flush_discard(sp);
	free(sp);
	return r;
}
