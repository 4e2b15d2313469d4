/* proposal-record.c — a proposal's decisions, shared by `cordon proposals
 * apply|reject` and the console: who may decide (never the agent that
 * made it), the audit record of each step (the change set's SHA-256, the
 * files, who), applying or committing with its bookkeeping (a failure
 * recorded as proposal.refused; files that went in before it kept as
 * partial), rejecting, and removing the layer of a proposal that ended.
 *
 * Trust boundary: proposal.h; the paths in records are escaped. */
#include "proposal.h"

#include "audit/audit.h"
#include "util/buf.h"
#include "util/clock-time.h"

#include <errno.h>
#include <jansson.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static void time_utc(int64_t t, char *out, size_t n)
{
	if (!t)
		snprintf(out, n, "-");
	else
		cd_time_format(t, out, n);
}

/* Escaped text for a terminal or a JSON string: control bytes, invalid
 * UTF-8 and newlines in names never reach either raw. */
static char *esc(const char *p, size_t n)
{
	struct cd_buf b;

	cd_buf_init(&b, 4 * n + 16);
	if (cd_buf_escape(&b, p, n) < 0 || cd_buf_putc(&b, '\0') < 0) {
		cd_buf_release(&b);
		return NULL;
	}
	return cd_buf_take(&b);
}

static json_t *file_json(const struct cd_prop_file *f)
{
	char *ep = esc(f->path, f->path_len);
	json_t *o = json_object();

	if (!o || !ep) {
		free(ep);
		json_decref(o);
		return NULL;
	}
	json_object_set_new(o, "path", json_string(ep));
	json_object_set_new(o, "op", json_string(cd_prop_op_name(f->op)));
	if (f->base_sha256[0]) {
		json_object_set_new(o, "base_sha256", json_string(f->base_sha256));
		json_object_set_new(o, "base_mode", json_integer(f->base_mode));
	}
	if (f->new_sha256[0]) {
		json_object_set_new(o, "sha256", json_string(f->new_sha256));
		json_object_set_new(o, "mode", json_integer(f->new_mode));
	}
	if (f->op == CD_PROP_MKDIR)
		json_object_set_new(o, "mode", json_integer(f->new_mode));
	if (f->op == CD_PROP_RMDIR)
		json_object_set_new(o, "base_mode", json_integer(f->base_mode));
	json_object_set_new(o, "flagged", json_boolean(f->flagged));
	if (f->note)
		json_object_set_new(o, "note", json_string(f->note));
	if (f->applied)
		json_object_set_new(o, "applied", json_true());
	if (f->problem[0])
		json_object_set_new(o, "problem", json_string(f->problem));
	free(ep);
	return o;
}

json_t *cd_proposal_head_json(const struct cd_proposal *p)
{
	json_t *o = json_object();
	char t[32];
	char *tree = esc(p->tree, strlen(p->tree));

	if (!o || !tree) {
		free(tree);
		json_decref(o);
		return NULL;
	}
	json_object_set_new(o, "id", json_string(p->id));
	json_object_set_new(o, "run_id", json_string(p->run_id));
	json_object_set_new(o, "status", json_string(p->status));
	if (p->agent)
		json_object_set_new(o, "agent", json_string(p->agent));
	if (p->task)
		json_object_set_new(o, "task", json_string(p->task));
	json_object_set_new(o, "tree", json_string(tree));
	time_utc(p->created, t, sizeof t);
	json_object_set_new(o, "created", json_string(t));
	if (p->decided_by) {
		json_object_set_new(o, "decided_by", json_string(p->decided_by));
		time_utc(p->decided_at, t, sizeof t);
		json_object_set_new(o, "decided_at", json_string(t));
	}
	if (p->branch)
		json_object_set_new(o, "branch", json_string(p->branch));
	if (p->commit)
		json_object_set_new(o, "commit", json_string(p->commit));
	if (p->layer.size)
		json_object_set_new(
		        o, "layer",
		        json_pack("{s:I,s:I,s:I,s:I,s:b,s:b}", "size", (json_int_t)p->layer.size,
		                  "inodes", (json_int_t)p->layer.inodes, "used",
		                  (json_int_t)p->layer.used, "used_inodes",
		                  (json_int_t)p->layer.used_inodes, "bytes_full",
		                  p->layer.bytes_full, "inodes_full", p->layer.inodes_full));
	free(tree);
	return o;
}

/* SHA-256 over the whole change set (op, path, hashes, modes of every
 * file), so a record that lists only the first files still commits to all
 * of them. */
static void change_set_sha256(const struct cd_proposal *p, char out[65])
{
	crypto_hash_sha256_state st;
	unsigned char h[crypto_hash_sha256_BYTES];
	char modes[32];
	size_t i;

	crypto_hash_sha256_init(&st);
	for (i = 0; i < p->nfiles; i++) {
		const struct cd_prop_file *f = &p->files[i];
		const char *op = cd_prop_op_name(f->op);
		int n = snprintf(modes, sizeof modes, "%o %o", f->base_mode, f->new_mode);
		crypto_hash_sha256_update(&st, (const unsigned char *)op, strlen(op) + 1);
		crypto_hash_sha256_update(&st, (const unsigned char *)f->path, f->path_len + 1);
		crypto_hash_sha256_update(&st, (const unsigned char *)f->base_sha256, 65);
		crypto_hash_sha256_update(&st, (const unsigned char *)f->new_sha256, 65);
		crypto_hash_sha256_update(&st, (const unsigned char *)modes,
		                          n > 0 ? (size_t)n + 1 : 0);
	}
	crypto_hash_sha256_final(&st, h);
	sodium_bin2hex(out, 65, h, sizeof h);
}

/* Files listed in one audit record, at most (the details cap is 1 MiB). */
#define RECORD_MAX_FILES 2000

json_t *cd_proposal_json(const struct cd_proposal *p, int files_only_selected)
{
	json_t *o = cd_proposal_head_json(p), *files = json_array();
	size_t i, counts[CD_PROP_NOPS], flagged;

	if (!o || !files) {
		json_decref(o);
		json_decref(files);
		return NULL;
	}
	for (i = 0; i < p->nfiles; i++) {
		if (files_only_selected && !p->files[i].selected && !p->files[i].problem[0])
			continue;
		json_array_append_new(files, file_json(&p->files[i]));
	}
	json_object_set_new(o, "files", files);
	cd_proposal_counts(p, counts, &flagged);
	json_object_set_new(o, "counts",
	                    json_pack("{s:I,s:I,s:I,s:I,s:I,s:I,s:I}", "added",
	                              (json_int_t)counts[CD_PROP_ADDED], "modified",
	                              (json_int_t)counts[CD_PROP_MODIFIED], "deleted",
	                              (json_int_t)counts[CD_PROP_DELETED], "mkdir",
	                              (json_int_t)counts[CD_PROP_MKDIR], "rmdir",
	                              (json_int_t)counts[CD_PROP_RMDIR], "refused",
	                              (json_int_t)counts[CD_PROP_REFUSED], "flagged",
	                              (json_int_t)flagged));
	return o;
}

int cd_proposal_record(struct cd_audit *audit, const struct cd_proposal *p, const char *kind,
                       const char *by, const char *reason, struct cd_err *err)
{
	struct cd_record rec;
	json_t *d = cd_proposal_json(p, strcmp(kind, "proposal.created") != 0);
	char *details;
	int r;

	char css[65];
	json_t *files;

	if (!d)
		return cd_err_set(err, -ENOMEM, "audit log: out of memory");
	change_set_sha256(p, css);
	json_object_set_new(d, "change_set_sha256", json_string(css));
	files = json_object_get(d, "files");
	if (json_array_size(files) > RECORD_MAX_FILES) {
		while (json_array_size(files) > RECORD_MAX_FILES)
			json_array_remove(files, json_array_size(files) - 1);
		json_object_set_new(d, "files_truncated", json_true());
	}
	if (by)
		json_object_set_new(d, "by", json_string(by));
	details = json_dumps(d, JSON_COMPACT | JSON_SORT_KEYS | JSON_ENSURE_ASCII);
	json_decref(d);
	if (!details)
		return cd_err_set(err, -ENOMEM, "audit log: out of memory");
	memset(&rec, 0, sizeof rec);
	rec.kind = kind;
	rec.run_id = p->run_id;
	rec.agent = p->agent;
	rec.task = p->task;
	rec.tool = "proposal";
	rec.action = "update";
	rec.target = p->id;
	rec.decision = !strcmp(kind, "proposal.created")     ? "needs-approval"
	               : !strcmp(kind, "proposal.applied")   ? "allow"
	               : !strcmp(kind, "proposal.committed") ? "allow"
	                                                     : "deny";
	rec.reason = reason;
	rec.details_json = details;
	r = cd_audit_append(audit, &rec, NULL, err);
	free(details);
	if (r < 0) {
		char m[CD_ERR_MSG_MAX];
		snprintf(m, sizeof m, "%s", err->msg);
		cd_err_set(err, r, "audit log: %s", m);
	}
	return r;
}

/* The layer of a proposal that has ended: its directory (the parent of
 * upper) goes, with the work directory overlayfs left behind. */
int cd_proposal_remove_layer(const struct cd_proposal *p)
{
	char dir[4096];
	char *slash;

	if (strlen(p->upper) >= sizeof dir)
		return -ENAMETOOLONG;
	memcpy(dir, p->upper, strlen(p->upper) + 1);
	slash = strrchr(dir, '/');
	if (!slash || strcmp(slash, "/upper") != 0)
		return -EINVAL;
	*slash = '\0';
	return cd_prop_remove_tree(dir);
}

int cd_proposal_may_decide(const struct cd_proposal *p, const char *by, struct cd_err *err)
{
	if (p->agent && strcmp(by, p->agent) == 0)
		return cd_err_set(err, -EPERM,
		                  "'%s' made proposal %s: an agent never approves its own proposal",
		                  by, p->id);
	if (strcmp(p->status, "pending") != 0 && strcmp(p->status, "partial") != 0)
		return cd_err_set(err, -EALREADY, "proposal %s is %s, not pending", p->id,
		                  p->status);
	return 0;
}

int cd_proposal_apply_by(struct cd_state *s, struct cd_audit *a, struct cd_proposal *p,
                         const char *by, const char *branch, char commit[65],
                         const char **ret_status, struct cd_err *err)
{
	struct cd_err e2 = { 0, "" };
	size_t i, left = 0;
	int r;

	*ret_status = NULL;
	commit[0] = '\0';
	if (branch)
		r = cd_proposal_commit_branch(p, branch, by, commit, err);
	else
		r = cd_proposal_apply(p, err);
	if (r < 0) {
		(void)cd_proposal_record(a, p, "proposal.refused", by, err->msg, &e2);
		for (i = 0; i < p->nfiles; i++) {
			if (p->files[i].applied) {
				/* Some files went in before the failure: record them. */
				(void)cd_proposal_finish(s, p, "partial", by, (int64_t)time(NULL),
				                         &e2);
				break;
			}
		}
		return r;
	}
	for (i = 0; i < p->nfiles; i++)
		left += !p->files[i].applied && p->files[i].op != CD_PROP_REFUSED;
	*ret_status = branch ? "committed" : left ? "partial" : "applied";
	if (branch) {
		p->branch = strdup(branch);
		p->commit = strdup(commit);
		if (!p->branch || !p->commit)
			return cd_err_set(err, -ENOMEM, "out of memory");
	}
	if ((r = cd_proposal_record(a, p, branch ? "proposal.committed" : "proposal.applied", by,
	                            NULL, err)) < 0)
		return r;
	if ((r = cd_proposal_finish(s, p, *ret_status, by, (int64_t)time(NULL), err)) < 0)
		return r;
	if (!left && !branch && cd_proposal_remove_layer(p) < 0)
		return 1;
	return 0;
}

int cd_proposal_reject_by(struct cd_state *s, struct cd_audit *a, struct cd_proposal *p,
                          const char *by, struct cd_err *err)
{
	int r;

	if ((r = cd_proposal_record(a, p, "proposal.rejected", by, "rejected", err)) < 0)
		return r;
	if ((r = cd_proposal_finish(s, p, "rejected", by, (int64_t)time(NULL), err)) < 0)
		return r;
	return cd_proposal_remove_layer(p) < 0 ? 1 : 0;
}
