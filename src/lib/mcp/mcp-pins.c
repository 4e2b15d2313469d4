/* mcp-pins.c — pinned tool definitions (mcp-pins.h): what a definition's
 * state means for a call; the store keeps the rows (store.h,
 * store-sqlite-pins.c). */
#include "mcp-pins.h"

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
