/* mcp-pins.h — pinned tool definitions of MCP servers, in the state
 * database (state.h, table mcp_pins).
 *
 * Every definition a server shows is a row (server, tool, sha256 of the
 * canonical definition, the canonical text).  A row is 'pending' until an
 * operator approves it ('approved'); approving another definition of the
 * same tool makes the old one 'superseded'.  A tool may be called only
 * while the definition the server shows now is the approved one.
 *
 * Trust: tool names and definitions come from servers (hostile); they are
 * bound as parameters, never interpolated, and shown escaped by the CLI.
 * The operator approves through the CLI or the console; no sandboxed
 * process can reach the database, but every host's writer role can write
 * a shared store's rows: an approval counts only with its approver's
 * signature (row-sign.h) over (server, tool, definition SHA-256, state,
 * by, time), checked against the policy at every check. */
#ifndef CD_MCP_PINS_H
#define CD_MCP_PINS_H

#include "audit/audit.h"
#include "util/err.h"
#include "mcp.h"
#include "store/state.h"
#include "store/store-rows.h"
#include "policy/row-sign.h"

#include <stdint.h>

/* The state of definition `sha256` of (server, tool), recording it as
 * pending when it is not known yet (*ret_new = 1 then, else 0), and
 * *ret_shadowed = how many other servers have a pin of the same tool
 * name.  A row marked approved whose signature policy p does not take is
 * CD_MCP_PIN_CHANGED, with the reason in why (may be NULL; "" when none);
 * so is one signed with a console's key whose person may not approve for
 * `agent` (cd_policy_approver_person; NULL: no agent).  0 or -EIO (the caller treats an error as not approved). */
int cd_mcp_pin_check(struct cd_state *s, const struct cd_policy *p, const char *agent,
                     const char *server, const char *tool, const char *sha256,
                     const char *definition, int64_t now, enum cd_mcp_pin *ret, int *ret_new,
                     int *ret_shadowed, char *why, size_t wn, struct cd_err *err);

/* The digest an approval's signature covers. */
void cd_mcp_pin_digest(const char *server, const char *tool, const char *sha256, const char *by,
                       int64_t at, unsigned char m[CD_ROW_DIGEST_LEN]);

/* struct cd_mcp_pin_row, one pin: store-rows.h. */
typedef int (*cd_mcp_pin_fn)(const struct cd_mcp_pin_row *row, void *ctx);

/* Every row (of `server`, or all when NULL; of `tool` when not NULL),
 * ordered by server, tool, first_seen.  fn's negative return stops. */
int cd_mcp_pins_list(struct cd_state *s, const char *server, const char *tool, cd_mcp_pin_fn fn,
                     void *ctx, struct cd_err *err);

/* Approve definition `sha256` (a full hex digest, or NULL: the newest
 * pending one) of (server, tool), superseding the approved one.  `by` is
 * the operator; sign (may be NULL: unsigned, taken only from a local
 * SQLite store for a person without a pinned key) signs for them.  0,
 * -ENOENT (nothing to approve), -EIO. */
int cd_mcp_pin_approve(struct cd_state *s, const char *server, const char *tool, const char *sha256,
                       const char *by, int64_t now, cd_row_sign_fn sign, void *sctx,
                       char ret_sha256[65], struct cd_err *err);

/* cd_mcp_pin_approve, then its "mcp.pin" record (decision approved, the
 * person as agent, SERVER/TOOL, the definition's SHA-256 as reason): as
 * `cordon mcp pins approve` and the console record it.  A failed record
 * after the approval is an error saying so. */
int cd_mcp_pin_approve_recorded(struct cd_state *s, struct cd_audit *a, const char *server,
                                const char *tool, const char *sha256, const char *by, int64_t now,
                                cd_row_sign_fn sign, void *sctx, char ret_sha256[65],
                                struct cd_err *err);

#endif
