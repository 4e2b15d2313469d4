/* gate-mcp.h — the gate's records for MCP traffic (DESIGN.md: the audit
 * log is written by one module, through the gate).
 *
 * Kinds: "mcp.call" (a tools/call decided: tool, action, attributes as
 * mapped through the inventory, decision, grant ids; for an allow this is
 * the intent, durable before the server sees the call), "mcp.result" (the
 * result's SHA-256, isError, duration), "mcp.server-request" (roots,
 * sampling, elicitation from the server), "mcp.protocol" (a refused
 * frame) and "mcp.pin" (a new or changed tool definition).  Every field
 * is untrusted data, stored as given. */
#ifndef CD_GATE_MCP_H
#define CD_GATE_MCP_H

#include "gate.h"
#include "mcp/mcp.h"

/* Record one gateway event for `session_id` (the id of the server's run).
 * 0, or negative when the record could not be made durable (for an allowed
 * call: the call must not reach the server). */
int cd_gate_mcp_event(const struct cd_gate *g, const char *session_id, const char *agent,
                      const char *task, const struct cd_mcp_event *ev, struct cd_err *err);

/* A pin event: `state` is "new" or "changed"; shadowed: how many other
 * servers offer a tool of this name. */
int cd_gate_mcp_pin(const struct cd_gate *g, const char *session_id, const char *agent,
                    const char *server, const char *tool, const char *sha256, const char *state,
                    int shadowed, struct cd_err *err);

#endif
