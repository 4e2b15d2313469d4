/* temp-grant-log.c — the audit records of temporary grants (temp-grant.h):
 * one record per creation, revocation and expiry, with the grant as
 * stored.  Shared by `cordon grant` and the console's grants page, so a
 * revoke from either says the same thing in the log.
 *
 * Trust boundary: rows may hold anything; the audit log escapes and
 * chains what it is given. */
#include "temp-grant.h"

#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int cd_temp_record(struct cd_audit *audit, const char *kind, const struct cd_temp_grant *g,
                   const char *by, const char *reason, struct cd_err *err)
{
	struct cd_record rec;
	json_t *d = json_object();
	char *details;
	int r;

	if (!d)
		return cd_err_set(err, -ENOMEM, "out of memory");
	json_object_set_new(d, "id", json_string(g->id));
	json_object_set_new(d, "kind", json_string(cd_temp_kind_name(g->kind)));
	json_object_set_new(d, "grant", json_string(g->grant_json));
	json_object_set_new(d, "created", json_integer(g->created));
	json_object_set_new(d, "expires", json_integer(g->expires));
	json_object_set_new(d, "created_by", json_string(g->by));
	if (by)
		json_object_set_new(d, "by", json_string(by));
	if (g->ticket)
		json_object_set_new(d, "ticket", json_string(g->ticket));
	if (g->parent)
		json_object_set_new(d, "parent", json_string(g->parent));
	if (g->policy_sha256)
		json_object_set_new(d, "policy_sha256", json_string(g->policy_sha256));
	details = json_dumps(d, JSON_COMPACT | JSON_SORT_KEYS);
	json_decref(d);
	if (!details)
		return cd_err_set(err, -ENOMEM, "out of memory");
	memset(&rec, 0, sizeof rec);
	rec.kind = kind;
	rec.agent = g->agent;
	rec.task = g->task;
	rec.tool = g->tool;
	rec.grant_ids = g->id;
	rec.reason = reason;
	rec.details_json = details;
	r = cd_audit_append(audit, &rec, NULL, err);
	free(details);
	return r;
}

struct end_ctx {
	struct cd_audit *audit;
	const char *kind, *by, *reason;
	struct cd_err *err;
	cd_temp_fn fn;
	void *ctx;
};

static int log_end(const struct cd_temp_grant *g, void *ctx)
{
	struct end_ctx *e = ctx;
	char why[256] = "";

	if (!e->reason)
		snprintf(why, sizeof why, "%s grant %s reached its end", cd_temp_kind_name(g->kind),
		         g->id);
	if (cd_temp_record(e->audit, e->kind, g, e->by, e->reason ? e->reason : why, e->err) < 0)
		return -EIO;
	return e->fn ? e->fn(g, e->ctx) : 0;
}

int cd_temp_revoke(struct cd_state *s, struct cd_audit *audit, const char *id, const char *by,
                   const char *reason, int64_t now, cd_temp_fn fn, void *ctx, struct cd_err *err)
{
	struct end_ctx e = {
		audit, "grant.revoked", by, reason ? reason : "revoked", err, fn, ctx
	};

	return cd_temp_end(s, id, "revoked", by, now, log_end, &e, err);
}

int cd_temp_sweep_logged(struct cd_state *s, struct cd_audit *audit, int64_t now, size_t *ret_n,
                         struct cd_err *err)
{
	struct end_ctx e = { audit, "grant.expired", "cordon", NULL, err, NULL, NULL };

	return cd_temp_sweep(s, now, log_end, &e, ret_n, err);
}
