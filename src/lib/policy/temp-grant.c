/* temp-grant.c — break-glass and delegated grants in the state database
 * (temp-grant.h), kept by the store (store.h, store-sqlite-grants.c).
 *
 * Trust boundary: rows may have been edited by hand.  A row is used only
 * through cd_policy_add_temp, which checks it as strictly as a written
 * grant; a NULL or malformed column makes the row unusable (skipped, a
 * deny), never a wider grant.  A row must also carry a signature the
 * policy takes (row-sign.h): any writer of a shared store can write one. */
#include "temp-grant.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

int cd_temp_add(struct cd_state *s, struct cd_temp_grant *g, struct cd_err *err)
{
	struct cd_store *st = cd_state_store(s);

	if (!g->agent || !g->tool || !g->grant_json || !g->by ||
	    (g->kind != CD_TEMP_BREAK_GLASS && g->kind != CD_TEMP_DELEGATED))
		return cd_err_set(err, -EINVAL, "temporary grant: missing fields");
	if (!g->id[0])
		cd_state_random_id(g->kind == CD_TEMP_BREAK_GLASS ? "bg-" : "dg-", g->id,
		                   sizeof g->id);
	return st->ops->grant_add(st, g, err);
}

int cd_temp_list(struct cd_state *s, int all, int64_t now, cd_temp_fn fn, void *ctx,
                 struct cd_err *err)
{
	struct cd_store *st = cd_state_store(s);

	return st->ops->grant_list(st, all, now, fn, ctx, err);
}

int cd_temp_end(struct cd_state *s, const char *id, const char *how, const char *by, int64_t now,
                cd_temp_fn fn, void *ctx, struct cd_err *err)
{
	struct cd_store *st = cd_state_store(s);

	if (!id || !how)
		return cd_err_set(err, -EINVAL, "no grant id");
	return st->ops->grant_end(st, id, how, by, now, fn, ctx, err);
}

int cd_temp_sweep(struct cd_state *s, int64_t now, cd_temp_fn fn, void *ctx, size_t *ret_n,
                  struct cd_err *err)
{
	struct cd_store *st = cd_state_store(s);

	return st->ops->grant_sweep(st, now, fn, ctx, ret_n, err);
}

int cd_temp_used(struct cd_state *s, const char *id, int64_t now, struct cd_err *err)
{
	struct cd_store *st = cd_state_store(s);

	return st->ops->grant_used(st, id, now, err);
}

static int in_force(struct cd_state *s, const char *id, int64_t now, int count, struct cd_err *err)
{
	struct cd_store *st = cd_state_store(s);

	return st->ops->grant_use(st, id, now, count, err);
}

int cd_temp_use_active(struct cd_state *s, const char *id, int64_t now, struct cd_err *err)
{
	return in_force(s, id, now, 1, err);
}

int cd_temp_in_force(struct cd_state *s, const char *id, int64_t now, struct cd_err *err)
{
	return in_force(s, id, now, 0, err);
}

void cd_temp_digest(const struct cd_temp_grant *g, unsigned char m[CD_ROW_DIGEST_LEN])
{
	char num[2][24];
	struct cd_row_field f[12] = {
		{ "id", g->id },
		{ "kind", cd_temp_kind_name(g->kind) },
		{ "agent", g->agent },
		{ "task", g->task },
		{ "tool", g->tool },
		{ "parent", g->parent },
		{ "grant_json", g->grant_json },
		{ "ticket", g->ticket },
		{ "by", g->by },
		{ "policy_sha256", g->policy_sha256 },
		{ "created", num[0] },
		{ "expires", num[1] },
	};

	snprintf(num[0], sizeof num[0], "%lld", (long long)g->created);
	snprintf(num[1], sizeof num[1], "%lld", (long long)g->expires);
	cd_row_digest("cordon temporary grant v1", f, 12, m);
}

int cd_temp_shared(struct cd_state *s)
{
	return !cd_state_own(s, NULL, 0);
}

/* Why a local SQLite store counts as shared ("" for PostgreSQL or own). */
static void local_why(struct cd_state *s, char *out, size_t n)
{
	out[0] = '\0';
	if (!strcmp(cd_state_store(s)->ops->name, "sqlite"))
		(void)cd_state_own(s, out, n);
}

struct apply_ctx {
	struct cd_policy *p;
	int shared;
	char local[200]; /* why an SQLite store counts as shared, or "" */
	cd_temp_warn_fn warn;
	void *ctx;
	size_t n, seen;
};

static int apply_one(const struct cd_temp_grant *g, void *ctx)
{
	struct apply_ctx *a = ctx;
	struct cd_err e = { 0 };
	unsigned char m[CD_ROW_DIGEST_LEN];
	char why[256], msg[640], signer[80] = "";

	if (++a->seen > CD_TEMP_MAX_ACTIVE) {
		if (a->warn)
			a->warn(g->id,
			        "more active temporary grants than cordon takes into account",
			        a->ctx);
		return 1;
	}
	cd_temp_digest(g, m);
	if (!cd_row_verify(a->p, a->shared, g->by, m, g->signature, signer, sizeof signer, why,
	                   sizeof why)) {
		if (a->warn) {
			snprintf(msg, sizeof msg,
			         "not made by '%.64s' as it says: %.255s%s%.200s%s", g->by, why,
			         a->local[0] ? " (the state database: " : "", a->local,
			         a->local[0] ? ")" : "");
			a->warn(g->id, msg, a->ctx);
		}
		return 0;
	}
	/* A console's key signs for whoever logged in to it: the person the
	 * row names must still be one who may approve for this agent (session
	 * 9's second review, B4: a console-signed grant "by" a removed
	 * approver, or by the agent itself, was honoured).  An approver's own
	 * key is already tied to a listed person by the policy's loader. */
	if (!strncmp(signer, "console key", 11) &&
	    !cd_policy_approver_person(a->p, g->by, g->agent, why, sizeof why)) {
		if (a->warn) {
			snprintf(msg, sizeof msg, "'%.64s' may not grant it: %.255s", g->by, why);
			a->warn(g->id, msg, a->ctx);
		}
		return 0;
	}
	if (cd_policy_add_temp(a->p, g->kind, g->id, g->parent, g->grant_json, g->created, &e) <
	    0) {
		if (a->warn)
			a->warn(g->id, e.msg, a->ctx);
		return 0;
	}
	a->n++;
	return 0;
}

int cd_temp_apply(struct cd_state *s, struct cd_policy *p, int64_t now, cd_temp_warn_fn warn,
                  void *ctx, size_t *ret_n, struct cd_err *err)
{
	struct apply_ctx a = { p, cd_temp_shared(s), "", warn, ctx, 0, 0 };
	int r;

	local_why(s, a.local, sizeof a.local);
	r = cd_temp_list(s, 0, now, apply_one, &a, err);
	if (ret_n)
		*ret_n = a.n;
	return r < 0 ? r : 0;
}
