/* mcp-pins.c — pinned tool definitions (mcp-pins.h): what a definition's
 * state means for a call; the store keeps the rows (store.h,
 * store-sqlite-pins.c). */
#include "mcp-pins.h"

#include <stdio.h>
#include <string.h>

int cd_mcp_pin_check(struct cd_state *s, const char *server, const char *tool, const char *sha256,
                     const char *definition, int64_t now, enum cd_mcp_pin *ret, int *ret_new,
                     int *ret_shadowed, struct cd_err *err)
{
	struct cd_store *st = cd_state_store(s);
	int r, approved = 0, other = 0;

	r = st->ops->pin_see(st, server, tool, sha256, definition, now, &approved, &other, ret_new,
	                     ret_shadowed, err);
	if (r < 0)
		return r;
	*ret = approved ? CD_MCP_PIN_APPROVED : other ? CD_MCP_PIN_CHANGED : CD_MCP_PIN_NEW;
	return 0;
}

int cd_mcp_pins_list(struct cd_state *s, const char *server, const char *tool, cd_mcp_pin_fn fn,
                     void *ctx, struct cd_err *err)
{
	struct cd_store *st = cd_state_store(s);

	return st->ops->pin_list(st, server, tool, fn, ctx, err);
}

int cd_mcp_pin_approve(struct cd_state *s, const char *server, const char *tool, const char *sha256,
                       const char *by, int64_t now, char ret_sha256[65], struct cd_err *err)
{
	struct cd_store *st = cd_state_store(s);

	return st->ops->pin_approve(st, server, tool, sha256, by, now, ret_sha256, err);
}

int cd_mcp_pin_approve_recorded(struct cd_state *s, struct cd_audit *a, const char *server,
                                const char *tool, const char *sha256, const char *by, int64_t now,
                                char ret_sha256[65], struct cd_err *err)
{
	struct cd_record rec;
	struct cd_err e2 = { 0, "" };
	char full[300];
	int n, r;

	if ((r = cd_mcp_pin_approve(s, server, tool, sha256, by, now, ret_sha256, err)) < 0)
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
