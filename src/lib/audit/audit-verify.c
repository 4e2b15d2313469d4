/* audit-verify.c — recompute the chain and check every checkpoint.
 *
 * The walk reads every record in seq order inside one read transaction,
 * recomputes its chain hash from the previous verified head, and stops at
 * the first record that does not match, naming what is wrong:
 *   missing      a gap in seq (records deleted)
 *   modified     the record chains from its predecessor but its fields no
 *                longer match its hash (or a predecessor was rewritten)
 *   reordered    the record is intact but belongs at another seq
 *   inserted     the record does not chain from its predecessor at all
 * Checkpoint records in the log must sign the head they follow; lines of an
 * external checkpoint file must match the chain at their size and, when the
 * log is shorter, reveal truncation or rollback.  A last line of the file
 * without its newline is a torn write from a crash, reported as such.
 * A run.intent with no run.result is reported as interrupted.
 *
 * Trust boundary: everything read here (database rows, the checkpoint file)
 * may be hostile; nothing in it is trusted until its hash or signature is. */
#include "audit-int.h"
#include "util/buf.h"
#include "util/err.h"
#include "util/util.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdarg.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define CP_FILE_MAX (64 * 1024 * 1024)
#define BUCKETS     4096
#define PROBE       16 /* how far a moved record is looked for */

const char *cd_audit_problem_name(enum cd_audit_problem p)
{
	switch (p) {
	case CD_AUDIT_INTACT:
		return "intact";
	case CD_AUDIT_MODIFIED:
		return "modified";
	case CD_AUDIT_MISSING:
		return "missing";
	case CD_AUDIT_REORDERED:
		return "reordered";
	case CD_AUDIT_INSERTED:
		return "inserted";
	case CD_AUDIT_TRUNCATED:
		return "truncated";
	case CD_AUDIT_ROLLED_BACK:
		return "rolled back";
	case CD_AUDIT_BAD_SIGNATURE:
		return "bad signature";
	case CD_AUDIT_BAD_CHECKPOINT:
		return "bad checkpoint";
	case CD_AUDIT_FOREIGN:
		return "foreign checkpoint";
	case CD_AUDIT_CUT:
		return "cut";
	}
	return "unknown";
}

__attribute__((format(printf, 4, 5))) static void
fail(struct cd_audit_report *rep, enum cd_audit_problem p, uint64_t seq, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (rep->problem != CD_AUDIT_INTACT && rep->bad_seq <= seq)
		return; /* keep the first */
	rep->problem = p;
	rep->bad_seq = seq;
	va_start(ap, fmt);
	n = vsnprintf(rep->what, sizeof rep->what, fmt, ap);
	va_end(ap);
	if (n < 0)
		rep->what[0] = '\0';
}

/* ---- open intents: run_id -> seq ----------------------------------- */

struct intent {
	struct intent *next;
	uint64_t seq;
	size_t len;
	char id[];
};

struct intents {
	struct intent *b[BUCKETS];
	uint64_t n;
};

static size_t bucket(const char *p, size_t n)
{
	uint64_t h = 1469598103934665603ull;
	size_t i;
	for (i = 0; i < n; i++)
		h = (h ^ (unsigned char)p[i]) * 1099511628211ull;
	return (size_t)(h % BUCKETS);
}

static int intent_add(struct intents *s, const struct cd_audit_str *id, uint64_t seq)
{
	struct intent *it;
	size_t b = bucket(id->p, id->len), sz;

	if (cd_size_add(sizeof *it, id->len, &sz) < 0)
		return -ENOMEM;
	it = malloc(sz);
	if (!it)
		return -ENOMEM;
	it->seq = seq;
	it->len = id->len;
	memcpy(it->id, id->p, id->len);
	it->next = s->b[b];
	s->b[b] = it;
	s->n++;
	return 0;
}

static void intent_done(struct intents *s, const struct cd_audit_str *id)
{
	struct intent **pp = &s->b[bucket(id->p, id->len)];

	for (; *pp; pp = &(*pp)->next) {
		if ((*pp)->len == id->len && memcmp((*pp)->id, id->p, id->len) == 0) {
			struct intent *it = *pp;
			*pp = it->next;
			free(it);
			s->n--;
			return;
		}
	}
}

static int by_seq(const void *x, const void *y)
{
	const struct intent *a = *(const struct intent *const *)x;
	const struct intent *b = *(const struct intent *const *)y;
	return a->seq < b->seq ? -1 : a->seq > b->seq;
}

/* Report the open intents (oldest first) and free them all. */
static int intents_finish(struct intents *s, struct cd_audit_report *rep)
{
	struct intent **all = NULL, *it, *next;
	size_t i, n = 0;
	int r = 0;

	rep->interrupted = s->n;
	if (s->n)
		all = calloc((size_t)s->n, sizeof *all);
	if (s->n && !all)
		r = -ENOMEM;
	for (i = 0; i < BUCKETS; i++) {
		for (it = s->b[i]; it; it = next) {
			next = it->next;
			if (all)
				all[n++] = it;
			else
				free(it);
		}
		s->b[i] = NULL;
	}
	if (all) {
		qsort(all, n, sizeof *all, by_seq);
		for (i = 0; i < n; i++) {
			if (i < CD_AUDIT_REPORT_INTERRUPTED) {
				size_t l = all[i]->len < sizeof rep->interrupted_runs[i].run_id - 1
				                   ? all[i]->len
				                   : sizeof rep->interrupted_runs[i].run_id - 1;
				rep->interrupted_runs[i].seq = all[i]->seq;
				memcpy(rep->interrupted_runs[i].run_id, all[i]->id, l);
				rep->interrupted_runs[i].run_id[l] = '\0';
			}
			free(all[i]);
		}
		free(all);
	}
	s->n = 0;
	return r;
}

/* ---- the checkpoint file ------------------------------------------ */

struct cpfile {
	struct cd_audit_checkpoint *cp;
	size_t n;
	size_t bad_line; /* first malformed line, 1-based; 0: none */
};

static int read_cpfile(const char *path, struct cpfile *f, struct cd_audit_report *rep,
                       struct cd_err *err)
{
	struct cd_buf b;
	char chunk[65536];
	size_t off = 0, line = 0;
	int fd, r = 0;

	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	if (fd < 0)
		return cd_err_sys(err, -errno, "checkpoint file '%s'", path);
	cd_buf_init(&b, CP_FILE_MAX);
	for (;;) {
		ssize_t n = read(fd, chunk, sizeof chunk);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			r = cd_err_sys(err, -errno, "checkpoint file '%s'", path);
			break;
		}
		if (n == 0)
			break;
		r = cd_buf_append(&b, chunk, (size_t)n);
		if (r < 0) {
			cd_err_set(err, r, "checkpoint file '%s' is too large", path);
			break;
		}
	}
	close(fd);
	while (r == 0 && off < b.len) {
		const char *nl = memchr(b.data + off, '\n', b.len - off);
		struct cd_audit_checkpoint *grown;
		size_t len;

		line++;
		if (!nl) {
			/* A crash between write() and its end: not tampering. */
			rep->torn_file_line = 1;
			break;
		}
		len = (size_t)(nl - (b.data + off));
		grown = realloc(f->cp, (f->n + 1) * sizeof *f->cp);
		if (!grown) {
			r = cd_err_set(err, -ENOMEM, "out of memory");
			break;
		}
		f->cp = grown;
		if (cd_audit_checkpoint_parse(b.data + off, len, &f->cp[f->n]) < 0) {
			if (!f->bad_line)
				f->bad_line = line;
		} else {
			f->n++;
		}
		off += len + 1;
	}
	cd_buf_release(&b);
	rep->file_checkpoints = f->n;
	return r;
}

/* ---- the walk ----------------------------------------------------- */

struct walk {
	struct cd_audit *a;
	struct cd_store *store;
	const struct cd_audit_verify_opts *o;
	struct cd_audit_report *rep;
	struct intents open;
	unsigned char head[CD_AUDIT_HASH_LEN]; /* last verified chain hash */
	uint64_t expect;
	struct cd_err *err;
	/* The chain being walked: its log id (the log's, or the local log's
	 * it was shipped from), that id's genesis, its last checkpoint. */
	char log_id[CD_AUDIT_LOG_ID_LEN + 1];
	unsigned char genesis[CD_AUDIT_HASH_LEN];
	uint64_t last_cp;
};

static int str_is(const struct cd_audit_str *s, const char *lit)
{
	size_t n = strlen(lit);
	return s->p && s->len == n && memcmp(s->p, lit, n) == 0;
}

/* Does the row's stored hash match its own stored prev_hash with seq s? */
static int self_consistent(const struct cd_audit_entry *e, uint64_t s)
{
	struct cd_audit_entry c = *e;
	unsigned char h[CD_AUDIT_HASH_LEN];

	if (!e->hashes_ok)
		return 0;
	c.seq = s;
	return cd_audit_chain(e->prev, &c, h) == 0 && sodium_memcmp(h, e->hash, sizeof h) == 0;
}

static void diagnose(struct walk *w, const struct cd_audit_entry *e)
{
	uint64_t n = e->seq, s;

	if (!e->hashes_ok) {
		fail(w->rep, CD_AUDIT_MODIFIED, n, "its hash columns are malformed");
		return;
	}
	if (sodium_memcmp(e->prev, w->head, CD_AUDIT_HASH_LEN) == 0) {
		fail(w->rep, CD_AUDIT_MODIFIED, n, "its fields do not match its hash");
		return;
	}
	for (s = n + 1; s <= n + PROBE; s++) {
		if (!self_consistent(e, s))
			continue;
		if (w->store->ops->audit_follows(w->store, w->head, n))
			fail(w->rep, CD_AUDIT_REORDERED, n,
			     "it holds the record written as seq %llu; the record that belongs "
			     "here "
			     "was moved",
			     (unsigned long long)s);
		else
			fail(w->rep, CD_AUDIT_MISSING, n,
			     "it holds the record written as seq %llu: records before it were "
			     "deleted "
			     "and the rest renumbered",
			     (unsigned long long)s);
		return;
	}
	for (s = n > PROBE ? n - PROBE : 1; s < n; s++) {
		if (self_consistent(e, s)) {
			fail(w->rep, CD_AUDIT_INSERTED, n,
			     "it holds the record written as seq %llu: records were inserted "
			     "before it",
			     (unsigned long long)s);
			return;
		}
	}
	if (self_consistent(e, n) && n > 1) {
		fail(w->rep, CD_AUDIT_MODIFIED, n - 1,
		     "it was rewritten: seq %llu still commits to its original hash",
		     (unsigned long long)n);
		return;
	}
	fail(w->rep, CD_AUDIT_INSERTED, n,
	     "it does not chain from seq %llu: a forged or inserted record",
	     (unsigned long long)(n - 1));
}

/* A checkpoint record must sign exactly the head it follows. */
static void check_log_checkpoint(struct walk *w, const struct cd_audit_entry *e)
{
	const struct cd_audit_str *d = &e->str[CD_AF_DETAILS];
	struct cd_audit_checkpoint cp;
	const char *line = NULL;
	json_t *j = NULL, *v;

	w->rep->checkpoints++;
	if (d->p)
		j = json_loadb(d->p, d->len, JSON_REJECT_DUPLICATES, NULL);
	v = j ? json_object_get(j, "checkpoint") : NULL;
	if (v && json_is_string(v))
		line = json_string_value(v);
	if (!line || cd_audit_checkpoint_parse(line, json_string_length(v), &cp) < 0) {
		json_decref(j);
		fail(w->rep, CD_AUDIT_BAD_CHECKPOINT, e->seq, "checkpoint record is malformed");
		return;
	}
	json_decref(j);
	if (strcmp(cp.log_id, w->log_id) != 0) {
		fail(w->rep, CD_AUDIT_FOREIGN, e->seq, "checkpoint of another log (%s)", cp.log_id);
		return;
	}
	if (cp.size != e->seq - 1 || sodium_memcmp(cp.head, w->head, sizeof cp.head) != 0) {
		fail(w->rep, CD_AUDIT_BAD_CHECKPOINT, e->seq,
		     "checkpoint signs a head that is not the chain's at seq %llu: records before "
		     "it "
		     "were rewritten",
		     (unsigned long long)cp.size);
		return;
	}
	if (w->o->pubkey) {
		if (cd_audit_checkpoint_check(&cp, w->o->pubkey) < 0) {
			fail(w->rep, CD_AUDIT_BAD_SIGNATURE, e->seq,
			     "checkpoint signature does not verify with the public key");
			return;
		}
		w->rep->signatures++;
	}
}

/* One row of the walk: 1 stops it (a problem found), <0 an error. */
static int walk_row(const struct cd_audit_entry *e, void *ctx)
{
	struct walk *w = ctx;
	unsigned char h[CD_AUDIT_HASH_LEN];
	int r;

	w->rep->records++;
	if (e->seq != w->expect) {
		if (e->seq > w->expect)
			fail(w->rep, CD_AUDIT_MISSING, w->expect,
			     "records %llu to %llu are missing", (unsigned long long)w->expect,
			     (unsigned long long)e->seq - 1);
		else
			fail(w->rep, CD_AUDIT_INSERTED, e->seq, "a record with a bad seq");
		return 1;
	}
	/* Hashes are public: plain memcmp. */
	if (!e->hashes_ok || cd_audit_chain(w->head, e, h) < 0 ||
	    memcmp(h, e->hash, sizeof h) != 0 || memcmp(e->prev, w->head, sizeof h) != 0) {
		diagnose(w, e);
		return 1;
	}
	if (str_is(&e->str[CD_AF_KIND], "checkpoint")) {
		check_log_checkpoint(w, e);
		if (w->rep->problem != CD_AUDIT_INTACT)
			return 1;
		w->last_cp = e->seq;
	} else if (e->str[CD_AF_RUN_ID].p && str_is(&e->str[CD_AF_KIND], "run.intent")) {
		r = intent_add(&w->open, &e->str[CD_AF_RUN_ID], e->seq);
		if (r < 0)
			return cd_err_set(w->err, r, "out of memory");
	} else if (e->str[CD_AF_RUN_ID].p && str_is(&e->str[CD_AF_KIND], "run.result")) {
		intent_done(&w->open, &e->str[CD_AF_RUN_ID]);
	}
	memcpy(w->head, h, sizeof h);
	w->rep->last_seq = e->seq;
	w->expect++;
	return 0;
}

static int walk_rows(struct walk *w, struct cd_err *err)
{
	int r;

	w->err = err;
	r = w->store->ops->audit_scan(w->store, walk_row, w, err);
	return r > 0 ? 0 : r;
}

static int hash_at(struct walk *w, uint64_t seq, unsigned char out[CD_AUDIT_HASH_LEN])
{
	if (seq == 0) {
		memcpy(out, w->genesis, CD_AUDIT_HASH_LEN);
		return 1;
	}
	return w->store->ops->audit_hash_at(w->store, seq, out);
}

/* The end of the log against what the verifier holds. */
static void check_tail(struct walk *w, const struct cpfile *f)
{
	struct cd_audit_report *rep = w->rep;
	uint64_t last = rep->last_seq;
	int64_t counter = w->store->ops->audit_seq_used(w->store);
	int truncated = counter > 0 && (uint64_t)counter > last;
	size_t i;

	if (f->bad_line)
		fail(rep, CD_AUDIT_BAD_CHECKPOINT, last + 1,
		     "line %zu of the checkpoint file is malformed", f->bad_line);
	for (i = 0; i < f->n; i++) {
		const struct cd_audit_checkpoint *cp = &f->cp[i];
		unsigned char h[CD_AUDIT_HASH_LEN];

		if (strcmp(cp->log_id, w->log_id) != 0) {
			fail(rep, CD_AUDIT_FOREIGN, cp->size,
			     "the checkpoint file holds a checkpoint of another log (%s)",
			     cp->log_id);
			continue;
		}
		if (w->o->pubkey) {
			if (cd_audit_checkpoint_check(cp, w->o->pubkey) < 0) {
				fail(rep, CD_AUDIT_BAD_SIGNATURE, cp->size,
				     "line %zu of the checkpoint file has a bad signature", i + 1);
				continue;
			}
			rep->signatures++;
		}
		if (cp->size > rep->file_covered)
			rep->file_covered = cp->size;
		if (cp->size > last) {
			fail(rep, truncated ? CD_AUDIT_TRUNCATED : CD_AUDIT_ROLLED_BACK, last + 1,
			     "the log ends at seq %llu but a signed checkpoint covers %llu "
			     "records%s",
			     (unsigned long long)last, (unsigned long long)cp->size,
			     truncated ? "" : " (an older copy was restored)");
			continue;
		}
		if (!hash_at(w, cp->size, h) || sodium_memcmp(h, cp->head, sizeof h) != 0)
			fail(rep, CD_AUDIT_BAD_CHECKPOINT, cp->size,
			     "the chain at seq %llu differs from the signed checkpoint: the log "
			     "was "
			     "rewritten",
			     (unsigned long long)cp->size);
	}
	if (truncated)
		fail(rep, CD_AUDIT_TRUNCATED, last + 1,
		     "records %llu to %lld were deleted from the end", (unsigned long long)last + 1,
		     (long long)counter);
}

/* The start of a chain: its log id is the log's, or the one of the local
 * log it was shipped from (`cordon log ship`, meta chain_log_id); a
 * malformed one is refused. */
static int chain_start(struct walk *w)
{
	struct cd_store *st = w->store;
	unsigned char raw[CD_AUDIT_LOG_ID_LEN / 2];
	char v[CD_AUDIT_LOG_ID_LEN + 8];
	int r = st->ops->audit_meta_get(st, "chain_log_id", v, sizeof v);

	memcpy(w->log_id, cd_audit_log_id(w->a), sizeof w->log_id);
	if (r == 0 && (strlen(v) != CD_AUDIT_LOG_ID_LEN ||
	               cd_audit_unhex(v, CD_AUDIT_LOG_ID_LEN, raw, sizeof raw) < 0))
		r = -CD_E_CORRUPT;
	if (r == 0)
		memcpy(w->log_id, v, sizeof w->log_id);
	else if (r != -ENOENT)
		fail(w->rep, CD_AUDIT_BAD_CHECKPOINT, 1, "the chain's log id is malformed");
	cd_audit_genesis(w->log_id, w->genesis);
	memcpy(w->head, w->genesis, CD_AUDIT_HASH_LEN);
	w->expect = 1;
	w->last_cp = 0;
	w->rep->last_seq = 0;
	return r == 0 || r == -ENOENT ? 0 : 1;
}

/* The chain's end against its last signed checkpoint, which the writer
 * keeps beside the chain (meta cp_line, written in the checkpoint's
 * transaction): a chain that ends before that checkpoint's record was
 * cut (its tail deleted, the checkpoint with it).  Then the records after
 * the last checkpoint, which nothing signed covers, are listed. */
static void check_high_water(struct walk *w, const char *chain)
{
	struct cd_audit_report *rep = w->rep;
	struct cd_audit_checkpoint cp;
	char line[CD_AUDIT_CP_LINE_MAX];
	unsigned char h[CD_AUDIT_HASH_LEN];
	uint64_t last = rep->last_seq;

	if (w->store->ops->audit_meta_get(w->store, "cp_line", line, sizeof line) == 0) {
		if (cd_audit_checkpoint_parse(line, strlen(line), &cp) < 0 ||
		    strcmp(cp.log_id, w->log_id) != 0) {
			fail(rep, CD_AUDIT_BAD_CHECKPOINT, last + 1,
			     "the chain's recorded last checkpoint is malformed or of another log");
			return;
		}
		if (w->o->pubkey && cd_audit_checkpoint_check(&cp, w->o->pubkey) < 0) {
			fail(rep, CD_AUDIT_BAD_SIGNATURE, cp.size + 1,
			     "the chain's recorded last checkpoint has a bad signature");
			return;
		}
		if (cp.size >= last) {
			fail(rep, CD_AUDIT_CUT, last + 1,
			     "the chain ends at seq %llu but its last signed checkpoint covers "
			     "%llu "
			     "records and was written as seq %llu: records were deleted from the "
			     "end",
			     (unsigned long long)last, (unsigned long long)cp.size,
			     (unsigned long long)cp.size + 1);
			return;
		}
		if (!hash_at(w, cp.size, h) || sodium_memcmp(h, cp.head, sizeof h) != 0) {
			fail(rep, CD_AUDIT_BAD_CHECKPOINT, cp.size,
			     "the chain at seq %llu differs from its recorded signed checkpoint",
			     (unsigned long long)cp.size);
			return;
		}
	}
	if (last > w->last_cp) {
		uint64_t i = rep->unanchored_chains++;
		if (i < CD_AUDIT_REPORT_CHAINS) {
			snprintf(rep->unanchored[i].chain, sizeof rep->unanchored[i].chain, "%s",
			         chain);
			rep->unanchored[i].last_checkpoint = w->last_cp;
			rep->unanchored[i].last_seq = last;
		}
	}
}

/* The names of a store's chains, collected before walking them. */
struct chain_names {
	char (*v)[256];
	size_t n, cap;
};

static int chain_add(const char *host, void *ctx)
{
	struct chain_names *c = ctx;

	if (strlen(host) >= sizeof c->v[0])
		return -ENAMETOOLONG;
	if (c->n == c->cap) {
		size_t nc = c->cap ? 2 * c->cap : 16;
		char(*nv)[256] = realloc(c->v, nc * sizeof *nv);
		if (!nv)
			return -ENOMEM;
		c->v = nv;
		c->cap = nc;
	}
	memcpy(c->v[c->n++], host, strlen(host) + 1);
	return 0;
}

/* One walk per chain (a store with one chain per host), in one snapshot,
 * stopping at the first broken chain, which the report names.  The
 * checkpoint file is this host's: it is checked against this host's
 * chain only. */
static int walk_chains(struct walk *w, const struct cpfile *f, struct cd_err *err)
{
	static const struct cpfile none = { NULL, 0, 0 };
	struct cd_audit_report *rep = w->rep;
	struct chain_names c = { NULL, 0, 0 };
	uint64_t last = 0;
	size_t i;
	int r;

	r = w->store->ops->audit_chains(w->store, chain_add, &c, err);
	if (r < 0 && !(err && err->code))
		r = cd_err_set(err, r, "audit log: cannot list its chains");
	for (i = 0; r == 0 && i < c.n; i++) {
		w->store->ops->audit_chain(w->store, c.v[i]);
		rep->chains++;
		if (chain_start(w) == 0)
			r = walk_rows(w, err);
		if (r == 0 && rep->problem == CD_AUDIT_INTACT)
			check_tail(w, strcmp(c.v[i], cd_audit_host_(w->a)) == 0 ? f : &none);
		if (r == 0 && rep->problem == CD_AUDIT_INTACT)
			check_high_water(w, c.v[i]);
		if (rep->last_seq > last)
			last = rep->last_seq;
		if (r == 0 && rep->problem != CD_AUDIT_INTACT) {
			memcpy(rep->chain, c.v[i], strlen(c.v[i]) + 1);
			break;
		}
	}
	if (rep->problem == CD_AUDIT_INTACT)
		rep->last_seq = last;
	free(c.v);
	return r;
}

int cd_audit_verify(struct cd_audit *a, const struct cd_audit_verify_opts *o,
                    struct cd_audit_report *ret, struct cd_err *err)
{
	static const struct cd_audit_verify_opts none;
	struct cpfile f = { NULL, 0, 0 };
	struct walk *w;
	int r = 0;

	if (!o)
		o = &none;
	w = calloc(1, sizeof *w);
	if (!w)
		return cd_err_set(err, -ENOMEM, "out of memory");
	w->a = a;
	w->store = cd_audit_store_(a);
	w->o = o;
	w->rep = ret;
	w->expect = 1;
	memset(ret, 0, sizeof *ret);
	/* The file first: every line in it was written after its records
	 * were committed, so the snapshot taken next holds them all. */
	if (o->checkpoint_path)
		r = read_cpfile(o->checkpoint_path, &f, ret, err);
	if (r == 0)
		r = w->store->ops->audit_read_begin(w->store, err);
	if (r == 0) {
		if (w->store->ops->audit_chains)
			r = walk_chains(w, &f, err);
		else if (chain_start(w) == 0) {
			r = walk_rows(w, err);
			if (r == 0 && ret->problem == CD_AUDIT_INTACT)
				check_tail(w, &f);
			if (r == 0 && ret->problem == CD_AUDIT_INTACT)
				check_high_water(w, "");
		}
		w->store->ops->audit_read_end(w->store);
	}
	if (intents_finish(&w->open, ret) < 0 && r == 0)
		r = cd_err_set(err, -ENOMEM, "out of memory");
	free(f.cp);
	free(w);
	return r;
}
