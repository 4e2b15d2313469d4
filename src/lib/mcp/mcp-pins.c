/* mcp-pins.c — pinned tool definitions (mcp-pins.h): what a definition's
 * state means for a call; the store keeps the rows (store.h,
 * store-sqlite-pins.c). */
#include "mcp-pins.h"

#include "policy/policy.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

void cd_mcp_pin_digest(const char *server, const char *tool, const char *sha256, const char *by,
                       int64_t at, unsigned char m[CD_ROW_DIGEST_LEN])
{
	char num[24];
	struct cd_row_field f[6] = {
		{ "server", server },    { "tool", tool }, { "sha256", sha256 },
		{ "state", "approved" }, { "by", by },     { "approved_at", num },
	};

	snprintf(num, sizeof num, "%lld", (long long)at);
	cd_row_digest("cordon mcp tool definition approval v1", f, 6, m);
}

struct verify_ctx {
	const struct cd_policy *p;
	const char *agent, *sha256;
	int shared, ok, seen;
	char *why;
	size_t wn;
};

static int verify_row(const struct cd_mcp_pin_row *row, void *ctx)
{
	struct verify_ctx *v = ctx;
	unsigned char m[CD_ROW_DIGEST_LEN];
	char why[256], signer[64];

	if (strcmp(row->sha256, v->sha256) != 0 || strcmp(row->state, "approved") != 0)
		return 0;
	v->seen = 1;
	if (!row->approved_by) {
		snprintf(v->why, v->wn, "its approval names no one");
		return 0;
	}
	cd_mcp_pin_digest(row->server, row->tool, row->sha256, row->approved_by, row->approved_at,
	                  m);
	v->ok = cd_row_verify(v->p, v->shared, row->approved_by, m, row->signature, signer,
	                      sizeof signer, why, sizeof why);
	if (!v->ok) {
		snprintf(v->why, v->wn, "its approval is not %.64s's: %s", row->approved_by, why);
		return 0;
	}
	/* A console's key signs for whoever logged in to it: the person the
	 * approval names must still be one who may approve for this agent
	 * (as for grants, temp-grant.c; an approver's own key is tied to a
	 * listed person by the policy's loader). */
	if (!strncmp(signer, "console key", 11) &&
	    !cd_policy_approver_person(v->p, row->approved_by, v->agent, why, sizeof why)) {
		v->ok = 0;
		snprintf(v->why, v->wn, "'%.64s' may not approve it: %s", row->approved_by, why);
	}
	return 0;
}

int cd_mcp_pin_check(struct cd_state *s, const struct cd_policy *p, const char *agent,
                     const char *server, const char *tool, const char *sha256,
                     const char *definition, int64_t now, enum cd_mcp_pin *ret, int *ret_new,
                     int *ret_shadowed, char *why, size_t wn, struct cd_err *err)
{
	struct cd_store *st = cd_state_store(s);
	struct verify_ctx v = { p, agent ? agent : "", sha256, 0, 0, 0, why, wn };
	int r, approved = 0, other = 0;

	if (why && wn)
		why[0] = '\0';
	r = st->ops->pin_see(st, server, tool, sha256, definition, now, &approved, &other, ret_new,
	                     ret_shadowed, err);
	if (r < 0)
		return r;
	if (approved) {
		/* The state column proves nothing: any writer of a shared store
		 * sets it.  The approver's signature (row-sign.h) must hold. */
		v.shared = !cd_state_own(s, NULL, 0);
		if ((r = cd_mcp_pins_list(s, server, tool, verify_row, &v, err)) < 0)
			return r;
		if (!v.ok && !v.seen && why && wn)
			snprintf(why, wn, "its approval changed while it was checked");
		approved = v.ok;
		other = other || !approved;
	}
	*ret = approved ? CD_MCP_PIN_APPROVED : other ? CD_MCP_PIN_CHANGED : CD_MCP_PIN_NEW;
	return 0;
}

int cd_mcp_pins_list(struct cd_state *s, const char *server, const char *tool, cd_mcp_pin_fn fn,
                     void *ctx, struct cd_err *err)
{
	struct cd_store *st = cd_state_store(s);

	return st->ops->pin_list(st, server, tool, fn, ctx, err);
}

struct sign_ctx {
	const char *server, *tool, *by;
	int64_t now;
	cd_row_sign_fn sign;
	void *ctx;
};

static int sign_pin(const char *sha256, char *sig, size_t n, void *ctx)
{
	struct sign_ctx *x = ctx;
	unsigned char m[CD_ROW_DIGEST_LEN];
	char s[CD_ROW_SIG_MAX];

	cd_mcp_pin_digest(x->server, x->tool, sha256, x->by, x->now, m);
	if (x->sign(m, s, x->ctx) < 0 || strlen(s) >= n)
		return -EIO;
	memcpy(sig, s, strlen(s) + 1);
	return 0;
}

int cd_mcp_pin_approve(struct cd_state *s, const char *server, const char *tool, const char *sha256,
                       const char *by, int64_t now, cd_row_sign_fn sign, void *sctx,
                       char ret_sha256[65], struct cd_err *err)
{
	struct cd_store *st = cd_state_store(s);
	struct sign_ctx x = { server, tool, by, now, sign, sctx };

	return st->ops->pin_approve(st, server, tool, sha256, by, now, sign ? sign_pin : NULL, &x,
	                            ret_sha256, err);
}

int cd_mcp_pin_approve_recorded(struct cd_state *s, struct cd_audit *a, const char *server,
                                const char *tool, const char *sha256, const char *by, int64_t now,
                                cd_row_sign_fn sign, void *sctx, char ret_sha256[65],
                                struct cd_err *err)
{
	struct cd_record rec;
	struct cd_err e2 = { 0, "" };
	char full[300];
	int n, r;

	if ((r = cd_mcp_pin_approve(s, server, tool, sha256, by, now, sign, sctx, ret_sha256,
	                            err)) < 0)
		return r;
	n = snprintf(full, sizeof full, "%s/%s", server, tool);
	memset(&rec, 0, sizeof rec);
	rec.kind = "mcp.pin";
	rec.agent = by;
	rec.tool = n > 0 && (size_t)n < sizeof full ? full : tool;
	rec.decision = "approved";
	rec.reason = ret_sha256;
	if ((r = cd_audit_append(a, &rec, NULL, &e2)) < 0)
		return cd_err_set(err, r, "approved, but the audit record failed: %s", e2.msg);
	return 0;
}
