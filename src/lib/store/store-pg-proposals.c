/* store-pg-proposals.c — proposals' metadata in PostgreSQL (store.h,
 * migration 2 of store-pg-conn.c): the header and one row per file, so
 * that any host lists and decides them.  The new content stays on the
 * local disk of the host that ran (the column upper names it there).
 *
 * Paths and diffs are any bytes: they travel as hex text and are stored
 * as bytea (decode/encode in the statement).
 *
 * Trust boundary: as store-sqlite-proposals.c: every row read back is
 * checked, and a bad row refuses the whole proposal. */
#include "store-pg.h"

#include "util/num.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static int fail_code(struct cd_err *err)
{
	return err && err->code ? err->code : -EIO;
}

/* n bytes as a new hex string, or NULL (out of memory). */
static char *hex_dup(const char *p, size_t n)
{
	char *h = malloc(2 * n + 1);

	if (h) {
		cd_hex((const unsigned char *)p, n, h);
		h[2 * n] = '\0';
	}
	return h;
}

/* The hex text v back into a new buffer of *ret_n bytes (NUL-ended). */
static char *unhex_dup(const char *v, size_t *ret_n)
{
	size_t n = strlen(v);
	char *b;

	if (n % 2)
		return NULL;
	b = malloc(n / 2 + 1);
	if (!b)
		return NULL;
	if (n && cd_unhex(v, n, (unsigned char *)b, n / 2) < 0) {
		free(b);
		return NULL;
	}
	b[n / 2] = '\0';
	*ret_n = n / 2;
	return b;
}

static int save_file(struct cd_pg *pg, const char *id, const struct cd_prop_file *f,
                     struct cd_err *err)
{
	struct cd_pg_params p = { .n = 0 };
	char *path = hex_dup(f->path, f->path_len);
	char *diff = f->diff ? hex_dup(f->diff, f->diff_len) : NULL;
	int r = 0;

	if (!path || (f->diff && !diff)) {
		r = cd_err_set(err, -ENOMEM, "out of memory");
		goto out;
	}
	cd_pg_p_str(&p, id);
	cd_pg_p_str(&p, path);
	cd_pg_p_str(&p, cd_prop_op_name(f->op));
	cd_pg_p_str(&p, f->base_sha256);
	cd_pg_p_str(&p, f->new_sha256);
	cd_pg_p_int(&p, f->base_mode);
	cd_pg_p_int(&p, f->new_mode);
	cd_pg_p_int(&p, f->flagged);
	cd_pg_p_str(&p, f->note);
	cd_pg_p_str(&p, diff);
	if (cd_pg_cmd(pg,
	              "INSERT INTO proposal_files (proposal, path, op, base_sha256, new_sha256,"
	              " base_mode, new_mode, flagged, note, diff) VALUES ($1, decode($2, 'hex'),"
	              " $3, $4, $5, $6, $7, $8, $9, decode($10, 'hex'))",
	              &p, "saving a proposal", err) < 0)
		r = fail_code(err);
out:
	free(path);
	free(diff);
	return r;
}

int cd_pg_proposal_save(struct cd_store *st, const struct cd_proposal *p, struct cd_err *err)
{
	struct cd_pg *pg = cd_pg_of(st);
	struct cd_pg_params q = { .n = 0 };
	size_t i;
	int r;

	if ((r = cd_pg_begin(st, err)) < 0)
		return r;
	cd_pg_p_str(&q, p->id);
	cd_pg_p_str(&q, p->run_id);
	cd_pg_p_str(&q, p->agent);
	cd_pg_p_str(&q, p->task);
	cd_pg_p_str(&q, p->tree);
	cd_pg_p_str(&q, p->upper);
	cd_pg_p_int(&q, p->created);
	cd_pg_p_str(&q, p->status);
	cd_pg_p_int(&q, (int64_t)p->layer.size);
	cd_pg_p_int(&q, (int64_t)p->layer.inodes);
	cd_pg_p_int(&q, (int64_t)p->layer.used);
	cd_pg_p_int(&q, (int64_t)p->layer.used_inodes);
	cd_pg_p_int(&q, (p->layer.bytes_full ? 1 : 0) | (p->layer.inodes_full ? 2 : 0));
	cd_pg_p_str(&q, p->mac[0] ? p->mac : NULL);
	if (cd_pg_cmd(
	            pg,
	            "INSERT INTO proposals (id, run_id, agent, task, tree, upper, created, status,"
	            " layer_size, layer_inodes, layer_used, layer_used_inodes, layer_full, mac)"
	            " VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)",
	            &q, "saving a proposal", err) < 0) {
		r = fail_code(err);
		goto fail;
	}
	for (i = 0; i < p->nfiles; i++)
		if ((r = save_file(pg, p->id, &p->files[i], err)) < 0)
			goto fail;
	return cd_pg_commit(st, err);
fail:
	cd_pg_rollback(st);
	return r;
}

static char *col_dup(const PGresult *res, int i, int c)
{
	const char *v = cd_pg_col(res, i, c);
	return v ? strdup(v) : NULL;
}

static int hex64_or_empty(const char *t)
{
	size_t i, n = t ? strlen(t) : 0;

	if (!t || (n != 0 && n != 64))
		return 0;
	for (i = 0; i < n; i++)
		if (!((t[i] >= '0' && t[i] <= '9') || (t[i] >= 'a' && t[i] <= 'f')))
			return 0;
	return 1;
}

#define HEAD_COLS                                                                                  \
	"id, run_id, agent, task, tree, upper, created, status, decided_at, decided_by,"           \
	" branch, commit_id, layer_size, layer_inodes, layer_used, layer_used_inodes,"             \
	" layer_full, mac"
#define HEAD_NCOLS 18

static uint64_t col_u64(const PGresult *res, int i, int c)
{
	int64_t v = cd_pg_int(res, i, c);
	return v > 0 ? (uint64_t)v : 0;
}

static int read_head(const PGresult *res, int i, struct cd_proposal *p)
{
	const char *id = cd_pg_col(res, i, 0), *run = cd_pg_col(res, i, 1),
	           *status = cd_pg_col(res, i, 7);

	if (!id || !run || !status || strlen(id) >= sizeof p->id ||
	    strlen(run) >= sizeof p->run_id || strlen(status) >= sizeof p->status)
		return -CD_E_CORRUPT;
	memcpy(p->id, id, strlen(id) + 1);
	memcpy(p->run_id, run, strlen(run) + 1);
	memcpy(p->status, status, strlen(status) + 1);
	p->agent = col_dup(res, i, 2);
	p->task = col_dup(res, i, 3);
	p->tree = col_dup(res, i, 4);
	p->upper = col_dup(res, i, 5);
	p->created = cd_pg_int(res, i, 6);
	p->decided_at = cd_pg_int(res, i, 8);
	p->decided_by = col_dup(res, i, 9);
	p->branch = col_dup(res, i, 10);
	p->commit = col_dup(res, i, 11);
	p->layer.size = col_u64(res, i, 12);
	p->layer.inodes = col_u64(res, i, 13);
	p->layer.used = col_u64(res, i, 14);
	p->layer.used_inodes = col_u64(res, i, 15);
	p->layer.bytes_full = (cd_pg_int(res, i, 16) & 1) != 0;
	p->layer.inodes_full = (cd_pg_int(res, i, 16) & 2) != 0;
	if (cd_pg_col(res, i, 17) && strlen(cd_pg_col(res, i, 17)) == 64)
		memcpy(p->mac, cd_pg_col(res, i, 17), 65);
	if (!p->tree || !p->upper)
		return -CD_E_CORRUPT;
	return 0;
}

static const char *const op_names[] = { NULL,      "added", "modified", "deleted",
	                                "refused", "mkdir", "rmdir" };

static int read_file(const PGresult *res, int i, struct cd_prop_file *f)
{
	const char *path = cd_pg_col(res, i, 0), *op = cd_pg_col(res, i, 1),
	           *bs = cd_pg_col(res, i, 2), *ns = cd_pg_col(res, i, 3),
	           *diff = cd_pg_col(res, i, 8);
	int k;

	memset(f, 0, sizeof *f);
	if (!path || !op || !hex64_or_empty(bs) || !hex64_or_empty(ns))
		return -CD_E_CORRUPT;
	for (k = CD_PROP_ADDED; k <= CD_PROP_RMDIR; k++)
		if (!strcmp(op, op_names[k]))
			f->op = (enum cd_prop_op)k;
	if (!f->op)
		return -CD_E_CORRUPT;
	memcpy(f->base_sha256, bs, strlen(bs) + 1);
	memcpy(f->new_sha256, ns, strlen(ns) + 1);
	if ((f->op == CD_PROP_ADDED && (f->base_sha256[0] || !f->new_sha256[0])) ||
	    (f->op == CD_PROP_MODIFIED && (!f->base_sha256[0] || !f->new_sha256[0])) ||
	    (f->op == CD_PROP_DELETED && (!f->base_sha256[0] || f->new_sha256[0])) ||
	    ((f->op == CD_PROP_MKDIR || f->op == CD_PROP_RMDIR) &&
	     (f->base_sha256[0] || f->new_sha256[0])))
		return -CD_E_CORRUPT;
	f->base_mode = (unsigned)cd_pg_int(res, i, 4) & 07777;
	f->new_mode = (unsigned)cd_pg_int(res, i, 5) & 07777;
	f->flagged = cd_pg_int(res, i, 6) != 0;
	f->note = col_dup(res, i, 7);
	f->applied = cd_pg_int(res, i, 9) != 0;
	if (!(f->path = unhex_dup(path, &f->path_len)))
		return -CD_E_CORRUPT;
	if (diff && *diff && !(f->diff = unhex_dup(diff, &f->diff_len)))
		return -CD_E_CORRUPT;
	return 0;
}

int cd_pg_proposal_load(struct cd_store *st, const char *id, struct cd_proposal **ret,
                        struct cd_err *err)
{
	struct cd_pg *pg = cd_pg_of(st);
	struct cd_pg_params q = { .n = 0 };
	struct cd_proposal *p = calloc(1, sizeof *p);
	PGresult *res = NULL;
	int i, r;

	if (!p)
		return cd_err_set(err, -ENOMEM, "out of memory");
	cd_pg_p_str(&q, id);
	if (!(res = cd_pg_query(pg, "SELECT " HEAD_COLS " FROM proposals WHERE id = $1", &q,
	                        "reading a proposal", err))) {
		r = fail_code(err);
		goto fail;
	}
	if (cd_pq.ntuples(res) != 1) {
		r = cd_err_set(err, -ENOENT, "no proposal '%s'", id);
		goto fail;
	}
	if ((r = read_head(res, 0, p)) < 0) {
		cd_err_set(err, r, "proposal '%s': damaged row", id);
		goto fail;
	}
	cd_pq.clear(res);
	if (!(res = cd_pg_query(
	              pg,
	              "SELECT encode(path, 'hex'), op, base_sha256, new_sha256, base_mode,"
	              " new_mode, flagged, note, encode(diff, 'hex'), applied"
	              " FROM proposal_files WHERE proposal = $1 ORDER BY path",
	              &q, "reading a proposal", err))) {
		r = fail_code(err);
		goto fail;
	}
	if (cd_pq.ntuples(res) > CD_PROP_MAX_FILES) {
		r = cd_err_set(err, -CD_E_LIMIT, "proposal '%s': too many files", id);
		goto fail;
	}
	p->files = calloc((size_t)cd_pq.ntuples(res) + 1, sizeof *p->files);
	if (!p->files) {
		r = cd_err_set(err, -ENOMEM, "out of memory");
		goto fail;
	}
	for (i = 0; i < cd_pq.ntuples(res); i++) {
		r = read_file(res, i, &p->files[p->nfiles]);
		p->nfiles++;
		if (r < 0) {
			cd_err_set(err, r, "proposal '%s': damaged file row", id);
			goto fail;
		}
	}
	cd_pq.clear(res);
	*ret = p;
	return 0;
fail:
	cd_pq.clear(res);
	cd_proposal_free(p);
	return r;
}

int cd_pg_proposal_list(struct cd_store *st, struct cd_proposal **ret, size_t *ret_n,
                        struct cd_err *err)
{
	struct cd_proposal *v;
	PGresult *res;
	size_t n = 0;
	int i, r = 0;

	res = cd_pg_query(
	        cd_pg_of(st),
	        "SELECT " HEAD_COLS ", (SELECT count(*) FROM proposal_files f"
	        " WHERE f.proposal = p.id) FROM proposals p ORDER BY created DESC, seq DESC",
	        NULL, "listing proposals", err);
	if (!res)
		return fail_code(err);
	v = calloc((size_t)cd_pq.ntuples(res) + 1, sizeof *v);
	if (!v) {
		cd_pq.clear(res);
		return cd_err_set(err, -ENOMEM, "out of memory");
	}
	for (i = 0; r == 0 && i < cd_pq.ntuples(res); i++) {
		r = read_head(res, i, &v[n]);
		v[n].nfiles = (size_t)cd_pg_int(res, i, HEAD_NCOLS);
		n++;
	}
	cd_pq.clear(res);
	if (r < 0) {
		cd_proposal_list_free(v, n);
		return cd_err_set(err, r, "proposals: a damaged row");
	}
	*ret = v;
	*ret_n = n;
	return 0;
}

int cd_pg_proposal_finish(struct cd_store *st, const struct cd_proposal *p, const char *status,
                          const char *by, int64_t now, struct cd_err *err)
{
	struct cd_pg *pg = cd_pg_of(st);
	struct cd_pg_params q = { .n = 0 };
	int64_t n;
	size_t i;
	int r;

	if ((r = cd_pg_begin(st, err)) < 0)
		return r;
	cd_pg_p_str(&q, p->id);
	cd_pg_p_str(&q, status);
	cd_pg_p_int(&q, now);
	cd_pg_p_str(&q, by);
	cd_pg_p_str(&q, p->branch);
	cd_pg_p_str(&q, p->commit);
	cd_pg_p_str(&q, p->mac[0] ? p->mac : NULL);
	n = cd_pg_cmd(pg,
	              "UPDATE proposals SET status = $2, decided_at = $3, decided_by = $4,"
	              " branch = $5, commit_id = $6, mac = $7 WHERE id = $1"
	              " AND status IN ('pending', 'partial')",
	              &q, "updating a proposal", err);
	if (n == 0) {
		cd_pg_rollback(st);
		return cd_err_set(err, -EALREADY, "proposal %s is no longer pending", p->id);
	}
	for (i = 0; n > 0 && i < p->nfiles; i++) {
		char *path;
		if (!p->files[i].applied)
			continue;
		if (!(path = hex_dup(p->files[i].path, p->files[i].path_len))) {
			n = cd_err_set(err, -ENOMEM, "out of memory");
			break;
		}
		q.n = 1;
		cd_pg_p_str(&q, path);
		n = cd_pg_cmd(pg,
		              "UPDATE proposal_files SET applied = 1 WHERE proposal = $1"
		              " AND path = decode($2, 'hex')",
		              &q, "updating a proposal", err);
		free(path);
	}
	if (n < 0) {
		cd_pg_rollback(st);
		return fail_code(err);
	}
	return cd_pg_commit(st, err);
}
