/* store-sqlite-proposals.c — proposals in the SQLite state database
 * (store.h, migrations 4 and 6 of store-sqlite-state.c; proposal.h says
 * what a proposal is).
 *
 * Trust boundary: the database belongs to the operator but may have been
 * edited or damaged; every row read back is checked (op names, hash
 * lengths) and a bad row refuses the whole proposal.  The path's shape,
 * the flag and the order are proposal-store.c's to check after a load. */
#include "store-sqlite.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

int cd_sqlite_proposal_save(struct cd_store *store, const struct cd_proposal *p, struct cd_err *err)
{
	struct cd_sqlite *s = cd_sqlite_of(store);
	static const char ins_p[] =
	        "INSERT INTO proposals (id, run_id, agent, task, tree, upper, created, status,"
	        " layer_size, layer_inodes, layer_used, layer_used_inodes, layer_full, mac)"
	        " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14)";
	static const char ins_f[] =
	        "INSERT INTO proposal_files (proposal, path, op, base_sha256, new_sha256,"
	        " base_mode, new_mode, flagged, note, diff) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7,"
	        " ?8, ?9, ?10)";
	sqlite3 *db = s->db;
	sqlite3_stmt *st = NULL;
	size_t i;
	int r;

	if ((r = cd_sqlite_begin(store, err)) < 0)
		return r;
	if (sqlite3_prepare_v2(db, ins_p, -1, &st, NULL) != SQLITE_OK)
		goto fail;
	sqlite3_bind_text(st, 1, p->id, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(st, 2, p->run_id, -1, SQLITE_TRANSIENT);
	cd_sqlite_bind_opt(st, 3, p->agent);
	cd_sqlite_bind_opt(st, 4, p->task);
	sqlite3_bind_text(st, 5, p->tree, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(st, 6, p->upper, -1, SQLITE_TRANSIENT);
	sqlite3_bind_int64(st, 7, p->created);
	sqlite3_bind_text(st, 8, p->status, -1, SQLITE_TRANSIENT);
	sqlite3_bind_int64(st, 9, (int64_t)p->layer.size);
	sqlite3_bind_int64(st, 10, (int64_t)p->layer.inodes);
	sqlite3_bind_int64(st, 11, (int64_t)p->layer.used);
	sqlite3_bind_int64(st, 12, (int64_t)p->layer.used_inodes);
	sqlite3_bind_int(st, 13, (p->layer.bytes_full ? 1 : 0) | (p->layer.inodes_full ? 2 : 0));
	cd_sqlite_bind_opt(st, 14, p->mac[0] ? p->mac : NULL);
	if (sqlite3_step(st) != SQLITE_DONE)
		goto fail;
	sqlite3_finalize(st);
	if (sqlite3_prepare_v2(db, ins_f, -1, &st, NULL) != SQLITE_OK)
		goto fail;
	for (i = 0; i < p->nfiles; i++) {
		const struct cd_prop_file *f = &p->files[i];

		sqlite3_reset(st);
		sqlite3_bind_text(st, 1, p->id, -1, SQLITE_STATIC);
		sqlite3_bind_blob(st, 2, f->path, (int)f->path_len, SQLITE_STATIC);
		sqlite3_bind_text(st, 3, cd_prop_op_name(f->op), -1, SQLITE_STATIC);
		sqlite3_bind_text(st, 4, f->base_sha256, -1, SQLITE_STATIC);
		sqlite3_bind_text(st, 5, f->new_sha256, -1, SQLITE_STATIC);
		sqlite3_bind_int(st, 6, (int)f->base_mode);
		sqlite3_bind_int(st, 7, (int)f->new_mode);
		sqlite3_bind_int(st, 8, f->flagged);
		cd_sqlite_bind_opt(st, 9, f->note);
		if (f->diff)
			sqlite3_bind_blob(st, 10, f->diff, (int)f->diff_len, SQLITE_STATIC);
		else
			sqlite3_bind_null(st, 10);
		if (sqlite3_step(st) != SQLITE_DONE)
			goto fail;
	}
	sqlite3_finalize(st);
	return cd_sqlite_commit(store, err);
fail:
	r = cd_sqlite_err(s, err, "saving a proposal");
	sqlite3_finalize(st);
	cd_sqlite_rollback(store);
	return r;
}

static char *col_dup(sqlite3_stmt *st, int i)
{
	const unsigned char *t = sqlite3_column_text(st, i);
	return t ? strdup((const char *)t) : NULL;
}

static int hex64_or_empty(const unsigned char *t)
{
	size_t i, n = t ? strlen((const char *)t) : 0;

	if (!t || (n != 0 && n != 64))
		return 0;
	for (i = 0; i < n; i++) {
		if (!((t[i] >= '0' && t[i] <= '9') || (t[i] >= 'a' && t[i] <= 'f')))
			return 0;
	}
	return 1;
}

/* The header columns, in this order: id run_id agent task tree upper
 * created status decided_at decided_by branch commit_id layer_size
 * layer_inodes layer_used layer_used_inodes layer_full. */
#define HEAD_COLS                                                                                  \
	"id, run_id, agent, task, tree, upper, created, status, decided_at, decided_by,"           \
	" branch, commit_id, layer_size, layer_inodes, layer_used, layer_used_inodes,"             \
	" layer_full, mac"
#define HEAD_NCOLS 18

static uint64_t col_u64(sqlite3_stmt *st, int i)
{
	int64_t v = sqlite3_column_int64(st, i);
	return v > 0 ? (uint64_t)v : 0;
}

static int read_head(sqlite3_stmt *st, struct cd_proposal *p)
{
	const unsigned char *id = sqlite3_column_text(st, 0), *run = sqlite3_column_text(st, 1),
	                    *status = sqlite3_column_text(st, 7);

	if (!id || !run || !status || strlen((const char *)id) >= sizeof p->id ||
	    strlen((const char *)run) >= sizeof p->run_id ||
	    strlen((const char *)status) >= sizeof p->status)
		return -CD_E_CORRUPT;
	memcpy(p->id, id, strlen((const char *)id) + 1);
	memcpy(p->run_id, run, strlen((const char *)run) + 1);
	memcpy(p->status, status, strlen((const char *)status) + 1);
	p->agent = col_dup(st, 2);
	p->task = col_dup(st, 3);
	p->tree = col_dup(st, 4);
	p->upper = col_dup(st, 5);
	p->created = sqlite3_column_int64(st, 6);
	p->decided_at = sqlite3_column_int64(st, 8);
	p->decided_by = col_dup(st, 9);
	p->branch = col_dup(st, 10);
	p->commit = col_dup(st, 11);
	p->layer.size = col_u64(st, 12);
	p->layer.inodes = col_u64(st, 13);
	p->layer.used = col_u64(st, 14);
	p->layer.used_inodes = col_u64(st, 15);
	p->layer.bytes_full = (sqlite3_column_int(st, 16) & 1) != 0;
	p->layer.inodes_full = (sqlite3_column_int(st, 16) & 2) != 0;
	if (sqlite3_column_text(st, 17) && strlen((const char *)sqlite3_column_text(st, 17)) == 64)
		memcpy(p->mac, sqlite3_column_text(st, 17), 65);
	if (!p->tree || !p->upper)
		return -CD_E_CORRUPT;
	return 0;
}

static int read_file(sqlite3_stmt *st, struct cd_prop_file *f)
{
	const void *path = sqlite3_column_blob(st, 0);
	int plen = sqlite3_column_bytes(st, 0), dlen;
	const unsigned char *op = sqlite3_column_text(st, 1), *bs = sqlite3_column_text(st, 2),
	                    *ns = sqlite3_column_text(st, 3);
	const void *diff;

	memset(f, 0, sizeof *f);
	if (!path || !op || !hex64_or_empty(bs) || !hex64_or_empty(ns))
		return -CD_E_CORRUPT;
	if (!strcmp((const char *)op, "added"))
		f->op = CD_PROP_ADDED;
	else if (!strcmp((const char *)op, "modified"))
		f->op = CD_PROP_MODIFIED;
	else if (!strcmp((const char *)op, "deleted"))
		f->op = CD_PROP_DELETED;
	else if (!strcmp((const char *)op, "refused"))
		f->op = CD_PROP_REFUSED;
	else if (!strcmp((const char *)op, "mkdir"))
		f->op = CD_PROP_MKDIR;
	else if (!strcmp((const char *)op, "rmdir"))
		f->op = CD_PROP_RMDIR;
	else
		return -CD_E_CORRUPT;
	memcpy(f->base_sha256, bs, strlen((const char *)bs) + 1);
	memcpy(f->new_sha256, ns, strlen((const char *)ns) + 1);
	if ((f->op == CD_PROP_ADDED && (f->base_sha256[0] || !f->new_sha256[0])) ||
	    (f->op == CD_PROP_MODIFIED && (!f->base_sha256[0] || !f->new_sha256[0])) ||
	    (f->op == CD_PROP_DELETED && (!f->base_sha256[0] || f->new_sha256[0])) ||
	    ((f->op == CD_PROP_MKDIR || f->op == CD_PROP_RMDIR) &&
	     (f->base_sha256[0] || f->new_sha256[0])))
		return -CD_E_CORRUPT;
	f->base_mode = (unsigned)sqlite3_column_int(st, 4) & 07777;
	f->new_mode = (unsigned)sqlite3_column_int(st, 5) & 07777;
	/* As stored; proposal-store.c adds what the path says (a
	 * hand-edited row cannot unflag a hook). */
	f->flagged = sqlite3_column_int(st, 6) != 0;
	f->note = col_dup(st, 7);
	f->applied = sqlite3_column_int(st, 9) != 0;
	f->path = malloc((size_t)plen + 1);
	if (!f->path)
		return -ENOMEM;
	memcpy(f->path, path, (size_t)plen);
	f->path[plen] = '\0';
	f->path_len = (size_t)plen;
	diff = sqlite3_column_blob(st, 8);
	dlen = sqlite3_column_bytes(st, 8);
	if (diff && dlen > 0) {
		f->diff = malloc((size_t)dlen + 1);
		if (!f->diff)
			return -ENOMEM;
		memcpy(f->diff, diff, (size_t)dlen);
		f->diff[dlen] = '\0';
		f->diff_len = (size_t)dlen;
	}
	return 0;
}

int cd_sqlite_proposal_load(struct cd_store *store, const char *id, struct cd_proposal **ret,
                            struct cd_err *err)
{
	struct cd_sqlite *s = cd_sqlite_of(store);
	sqlite3 *db = s->db;
	sqlite3_stmt *st = NULL;
	struct cd_proposal *p = calloc(1, sizeof *p);
	size_t cap = 0;
	int rc, r;

	if (!p)
		return cd_err_set(err, -ENOMEM, "out of memory");
	if (sqlite3_prepare_v2(db, "SELECT " HEAD_COLS " FROM proposals WHERE id = ?1", -1, &st,
	                       NULL) != SQLITE_OK) {
		r = cd_sqlite_err(s, err, "reading a proposal");
		goto fail;
	}
	sqlite3_bind_text(st, 1, id, -1, SQLITE_STATIC);
	rc = sqlite3_step(st);
	if (rc == SQLITE_DONE) {
		r = cd_err_set(err, -ENOENT, "no proposal '%s'", id);
		goto fail;
	}
	if (rc != SQLITE_ROW) {
		r = cd_sqlite_err(s, err, "reading a proposal");
		goto fail;
	}
	if ((r = read_head(st, p)) < 0) {
		cd_err_set(err, r, "proposal '%s': damaged row", id);
		goto fail;
	}
	sqlite3_finalize(st);
	if (sqlite3_prepare_v2(db,
	                       "SELECT path, op, base_sha256, new_sha256, base_mode, new_mode,"
	                       " flagged, note, diff, applied FROM proposal_files"
	                       " WHERE proposal = ?1 ORDER BY path",
	                       -1, &st, NULL) != SQLITE_OK) {
		r = cd_sqlite_err(s, err, "reading a proposal");
		goto fail;
	}
	sqlite3_bind_text(st, 1, id, -1, SQLITE_STATIC);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		if (p->nfiles == cap) {
			size_t nc = cap ? cap * 2 : 64;
			struct cd_prop_file *v;
			if (nc > CD_PROP_MAX_FILES) {
				r = cd_err_set(err, -CD_E_LIMIT, "proposal '%s': too many files",
				               id);
				goto fail;
			}
			v = realloc(p->files, nc * sizeof *v);
			if (!v) {
				r = cd_err_set(err, -ENOMEM, "out of memory");
				goto fail;
			}
			p->files = v;
			cap = nc;
		}
		r = read_file(st, &p->files[p->nfiles]);
		p->nfiles++;
		if (r < 0) {
			cd_err_set(err, r, "proposal '%s': damaged file row", id);
			goto fail;
		}
	}
	if (rc != SQLITE_DONE) {
		r = cd_sqlite_err(s, err, "reading a proposal");
		goto fail;
	}
	sqlite3_finalize(st);
	*ret = p;
	return 0;
fail:
	sqlite3_finalize(st);
	cd_proposal_free(p);
	return r;
}

int cd_sqlite_proposal_list(struct cd_store *store, struct cd_proposal **ret, size_t *ret_n,
                            struct cd_err *err)
{
	struct cd_sqlite *s = cd_sqlite_of(store);
	sqlite3_stmt *st = NULL;
	struct cd_proposal *v = NULL;
	size_t n = 0, cap = 0;
	int rc, r;

	if (sqlite3_prepare_v2(s->db,
	                       "SELECT " HEAD_COLS ", (SELECT count(*) FROM proposal_files f"
	                       " WHERE f.proposal = p.id) FROM proposals p"
	                       " ORDER BY created DESC, p.rowid DESC",
	                       -1, &st, NULL) != SQLITE_OK)
		return cd_sqlite_err(s, err, "listing proposals");
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		if (n == cap) {
			size_t nc = cap ? cap * 2 : 16;
			struct cd_proposal *nv = realloc(v, nc * sizeof *nv);
			if (!nv) {
				r = cd_err_set(err, -ENOMEM, "out of memory");
				goto fail;
			}
			v = nv;
			cap = nc;
		}
		memset(&v[n], 0, sizeof v[n]);
		r = read_head(st, &v[n]);
		v[n].nfiles = (size_t)sqlite3_column_int64(st, HEAD_NCOLS);
		n++;
		if (r < 0) {
			r = cd_err_set(err, r, "proposals: a damaged row");
			goto fail;
		}
	}
	if (rc != SQLITE_DONE) {
		r = cd_sqlite_err(s, err, "listing proposals");
		goto fail;
	}
	sqlite3_finalize(st);
	*ret = v;
	*ret_n = n;
	return 0;
fail:
	sqlite3_finalize(st);
	cd_proposal_list_free(v, n);
	return r;
}

int cd_sqlite_proposal_finish(struct cd_store *store, const struct cd_proposal *p,
                              const char *status, const char *by, int64_t now, struct cd_err *err)
{
	struct cd_sqlite *s = cd_sqlite_of(store);
	sqlite3 *db = s->db;
	sqlite3_stmt *st = NULL;
	size_t i;
	int r;

	if ((r = cd_sqlite_begin(store, err)) < 0)
		return r;
	if (sqlite3_prepare_v2(db,
	                       "UPDATE proposals SET status = ?2, decided_at = ?3, decided_by = ?4,"
	                       " branch = ?5, commit_id = ?6, mac = ?7 WHERE id = ?1"
	                       " AND status IN ('pending', 'partial')",
	                       -1, &st, NULL) != SQLITE_OK)
		goto fail;
	sqlite3_bind_text(st, 1, p->id, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, status, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 3, now);
	cd_sqlite_bind_opt(st, 4, by);
	cd_sqlite_bind_opt(st, 5, p->branch);
	cd_sqlite_bind_opt(st, 6, p->commit);
	cd_sqlite_bind_opt(st, 7, p->mac[0] ? p->mac : NULL);
	if (sqlite3_step(st) != SQLITE_DONE)
		goto fail;
	if (sqlite3_changes(db) == 0) {
		sqlite3_finalize(st);
		cd_sqlite_rollback(store);
		return cd_err_set(err, -EALREADY, "proposal %s is no longer pending", p->id);
	}
	sqlite3_finalize(st);
	if (sqlite3_prepare_v2(db,
	                       "UPDATE proposal_files SET applied = 1 WHERE proposal = ?1"
	                       " AND path = ?2",
	                       -1, &st, NULL) != SQLITE_OK)
		goto fail;
	for (i = 0; i < p->nfiles; i++) {
		if (!p->files[i].applied)
			continue;
		sqlite3_reset(st);
		sqlite3_bind_text(st, 1, p->id, -1, SQLITE_STATIC);
		sqlite3_bind_blob(st, 2, p->files[i].path, (int)p->files[i].path_len,
		                  SQLITE_STATIC);
		if (sqlite3_step(st) != SQLITE_DONE)
			goto fail;
	}
	sqlite3_finalize(st);
	return cd_sqlite_commit(store, err);
fail:
	r = cd_sqlite_err(s, err, "updating a proposal");
	sqlite3_finalize(st);
	cd_sqlite_rollback(store);
	return r;
}
