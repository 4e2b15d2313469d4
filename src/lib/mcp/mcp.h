/* mcp.h — the MCP gateway's library half: canonical tool definitions
 * (mcp-canon.c), tool calls mapped onto policy requests through the
 * policy's tool inventory (mcp-map.c), and the gateway itself as a pure
 * state machine (mcp-gw.c): lines in from the client and from the server,
 * lines out to each, decisions and records through callbacks.  No
 * processes, no fds, no clock of its own: `cordon mcp` (src/cli/cmd-mcp.c)
 * drives it, unit tests and the fuzz target drive it directly.
 *
 * Trust boundary: the client (the agent) and the tool server are both
 * hostile.  Tool metadata from the server (names, descriptions, schemas,
 * annotations) is data: it is pinned and shown, never used to decide; the
 * action class and the typed attributes of a call come from the policy's
 * inventory only. */
#ifndef CD_MCP_H
#define CD_MCP_H

#include "util/buf.h"
#include "jsonrpc.h"
#include "mask/mask.h"
#include "policy/policy.h"

#include <jansson.h>
#include <stdint.h>

/* ---- canonical JSON and pins (mcp-canon.c) --------------------------- */

/* Append the canonical form of v (RFC 8785 style) to out.  0, -CD_E_LIMIT
 * (the buffer's cap or nesting), -CD_E_PARSE (a non-finite number). */
int cd_mcp_canonical(json_t *v, struct cd_buf *out);
void cd_mcp_sha256_hex(const void *p, size_t n, char out[65]);
/* What is pinned of one tool: its definition without `_meta`, in
 * canonical form, and the SHA-256 of that. */
int cd_mcp_tool_pin_form(json_t *tool, struct cd_buf *canonical, char sha256[65]);
/* 1 when s (n bytes) is a tool name the gateway pins and shows: 1-128 of
 * [A-Za-z0-9_.-]; 0 otherwise (such a tool is hidden). */
int cd_mcp_tool_name_valid(const char *s, size_t n);

/* ---- calls onto policy requests (mcp-map.c) -------------------------- */

/* The policy tool that stands for tool `tool` of server `server`: a tool
 * with id "SERVER/TOOL", else one with id "SERVER"; it must be of kind mcp
 * and list `tool` under `operations`.  0 and the policy's id and action,
 * or -ENOENT with the reason in err. */
int cd_mcp_inventory(const struct cd_policy *p, const char *server, const char *tool,
                     const char **ret_id, enum cd_action *ret_action, struct cd_err *err);

/* Resolves a path argument on the host (symlinks), for decisions on what
 * the server would really touch.  Writes the resolved absolute path, or
 * returns negative when it cannot (the lexical path is then decided
 * alone).  May be NULL. */
typedef int (*cd_mcp_resolve_fn)(void *ctx, const char *path, char *out, size_t outlen);

/* One call as a policy request; owns its strings. */
struct cd_mcp_request {
	struct cd_request req; /* points into the fields below */
	char *paths[CD_REQ_MAX_PATHS];
	size_t npaths;
	char *host;
	struct cd_req_arg args[CD_REQ_MAX_ARGS];
	char *argbuf[CD_REQ_MAX_ARGS * 2];
	size_t nargs;
	char *fields[CD_REQ_MAX_ARGS];
	size_t nfields;
	json_t *stored; /* the attributes as recorded: {paths, host, port, args, fields} */
};

/* Map `arguments` (an object, or NULL) of a call of `tool` on `server`
 * onto a request: each argument must be typed in the inventory's `args`
 * (path: a string or a list of strings, also resolved through `resolve`
 * when given; host: a host or an http(s) URL, which also sets the port;
 * port: 0-65535; record: field names; value: compared as text).  An
 * argument the inventory does not type is a refusal: it could carry
 * anything past the policy.  0 or -CD_E_DENIED/-CD_E_LIMIT/-ENOMEM with a
 * one-line reason in err; release with cd_mcp_request_release either way. */
int cd_mcp_map_call(const struct cd_policy *p, const char *agent, const char *task,
                    const char *server, const char *tool, json_t *arguments, int64_t now,
                    cd_mcp_resolve_fn resolve, void *rctx, struct cd_mcp_request *ret,
                    struct cd_err *err);
void cd_mcp_request_release(struct cd_mcp_request *r);

/* 1 when the agent (with task, may be NULL) holds an unexpired grant of
 * the tool's action class on its policy tool and no unscoped forbid rule
 * removes it; 0 otherwise.  Scopes are decided per call. */
/* The operations the policy's inventory declares for `server` (its tool
 * NAME, and tools NAME/TOOL of kind mcp): fn(tool, action) for each, in
 * file order; returns how many. */
/* The one MCP server the policy's inventory names (its `kind: mcp`
 * tools are all SERVER or SERVER/TOOL) into out: 0, -ENOENT (none),
 * -EEXIST (several: the operator names one), -ENAMETOOLONG. */
int cd_mcp_policy_server(const struct cd_policy *p, char *out, size_t outlen);

size_t cd_mcp_policy_operations(const struct cd_policy *p, const char *server,
                                void (*fn)(const char *tool, enum cd_action a, void *ctx),
                                void *ctx);

/* The SHA-256 the policy pins for `tool` of `server` (pins: in the tool
 * inventory), or NULL when the file pins nothing for it. */
const char *cd_mcp_policy_pin(const struct cd_policy *p, const char *server, const char *tool);

/* The remote server `server` is (its tool's url: and secret:): 1 with
 * *ret_url (checked by the loader) and *ret_secret (a name, or NULL),
 * pointing into the policy; 0 when the server is launched (no url:). */
int cd_mcp_policy_remote(const struct cd_policy *p, const char *server, const char **ret_url,
                         const char **ret_secret);

/* Whether the launched server `server` may be shared by the sessions of
 * one agent behind `cordon mcp --listen` (its tool's shared: true). */
int cd_mcp_policy_shared(const struct cd_policy *p, const char *server);

int cd_mcp_tool_granted(const struct cd_policy *p, const char *agent, const char *task,
                        const char *server, const char *tool, int64_t now);

/* ---- data minimization of results (mcp-mask.c) ---------------------- */

/* What the deciding grants require of a call's result (copied from the
 * decision; the field lists point into the policy). */
struct cd_mcp_minimize {
	struct cd_mask_rules mask;
	const char *const *field_lists[CD_DECISION_MAX_FIELD_LISTS];
	size_t field_counts[CD_DECISION_MAX_FIELD_LISTS];
	size_t nfield_lists;
};

void cd_mcp_minimize_from(struct cd_mcp_minimize *mz, const struct cd_decision *d);
/* 1 when the result must be masked or scoped. */
int cd_mcp_minimize_active(const struct cd_mcp_minimize *mz);

/* Minimize a tools/call result in place: fields: first (structuredContent,
 * and each text block, which must then be JSON), then every string masked
 * (text blocks, structuredContent, resources, keys, _meta).  Binary blocks
 * (image, audio, blob resources) cannot be scanned and are replaced by a
 * notice.  `error` non-zero: v is a JSON-RPC error object, whose strings
 * are masked.  m may be NULL only when nothing is to be masked.  Adds the
 * spans masked to *ret_count.  0, or negative with a one-line reason in
 * *ret_why: the caller withholds the result. */
int cd_mcp_minimize(struct cd_masker *m, const struct cd_mcp_minimize *mz, json_t *v, int error,
                    size_t *ret_count, const char **ret_why);

/* ---- the gateway (mcp-gw.c) ----------------------------------------- */

enum cd_mcp_pin {
	CD_MCP_PIN_APPROVED,
	CD_MCP_PIN_NEW,     /* never approved */
	CD_MCP_PIN_CHANGED, /* another definition was approved */
};
const char *cd_mcp_pin_name(enum cd_mcp_pin p);

enum cd_mcp_event_kind {
	CD_MCP_EV_CALL,    /* a tools/call decided: dec, tool, attrs */
	CD_MCP_EV_RESULT,  /* its result: result_sha256, is_error, duration */
	CD_MCP_EV_SERVER,  /* a request from the server: method, decision */
	CD_MCP_EV_PROTOCOL /* a malformed or refused frame: reason */
};

struct cd_mcp_event {
	enum cd_mcp_event_kind kind;
	const char *direction; /* "client" or "server": where the frame came from */
	const char *method;
	const char *tool;        /* "SERVER/TOOL" */
	const char *policy_tool; /* the inventory's id */
	const char *action;
	const struct cd_decision *dec; /* CALL: the decision (NULL when not decided) */
	const char *verdict;           /* "allow", "deny", "needs-approval", "error" */
	const char *reason;
	const char *grant_ids; /* comma-separated */
	json_t *attrs;         /* CALL: the mapped attributes (borrowed) */
	json_t *args;          /* CALL: the arguments as the client sent them (borrowed) */
	size_t args_bytes;     /* CALL: their canonical size (0: could not be had) */
	/* The rules that minimize the record (RESULT: the call's grants');
	 * NULL: those of `dec`, or the policy's strictest when not allowed
	 * (cd_gate_log_rules). */
	const struct cd_mask_rules *log_mask;
	const char *args_sha256;
	const char *result_sha256;
	int is_error;
	uint64_t duration_ms;
	const char *request_id; /* the peer's id key */
};

struct cd_mcp_gw_ops {
	/* Record an event.  For CD_MCP_EV_CALL with verdict allow this is the
	 * intent: a negative return refuses the call (no log, no call).  A
	 * CD_MCP_EV_RESULT comes after its response is queued for the client
	 * (to_client), which the driver may write out first. */
	int (*record)(void *ctx, const struct cd_mcp_event *ev);
	/* The pin state of a tool definition; the store records a new or
	 * changed definition as pending.  Negative: treated as not approved. */
	int (*pin)(void *ctx, const char *tool, const char *sha256, const char *canonical,
	           enum cd_mcp_pin *ret);
	cd_mcp_resolve_fn resolve; /* may be NULL */
	int64_t (*now_ms)(void *ctx);
	/* Wall-clock seconds, for each decision (grants expire during a
	 * long session).  NULL: the config's `now`. */
	int64_t (*wall_s)(void *ctx);
	/* A temporary grant (break-glass or delegated) is about to be used:
	 * count the use; return -CD_E_DENIED when it was revoked or has ended
	 * since the session loaded it, after taking it out of the policy
	 * (cd_policy_temp_drop: the call is decided again without it), any
	 * other negative when it cannot be checked (the call is denied).
	 * NULL: temporary grants are taken as loaded. */
	int (*temp_use)(void *ctx, const char *grant_id, int64_t now);
	/* Approvals (may be NULL: a call that needs a person is refused).
	 * approval_request queues a held call — tool "SERVER/TOOL", the
	 * policy's action, the canonical JSON of its arguments, the deciding
	 * grant ids — and writes its id; negative refuses the call.
	 * approval_poll returns 1 when it was approved and has now been used
	 * (its hash re-checked), 0 when denied or expired (why says so), -1
	 * while pending. */
	int (*approval_request)(void *ctx, const char *tool, const char *action,
	                        const char *args_json, const char *grant_ids,
	                        const struct cd_decision *dec, char ret_id[40]);
	int (*approval_poll)(void *ctx, const char *id, char *why, size_t wn);
	/* The client cancelled a held call (notifications/cancelled, also
	 * what the HTTP front sends when a session's token is revoked): its
	 * approval is withdrawn, no longer approvable, with a record.  The
	 * gateway forgets the call whatever this returns (it never runs).
	 * NULL: only forgotten. */
	int (*approval_withdraw)(void *ctx, const char *id, const char *why);
};

struct cd_mcp_gw_config {
	const struct cd_policy *policy; /* required */
	const char *agent;              /* required */
	const char *task;               /* may be NULL */
	const char *server;             /* required: the NAME in "NAME/tool" */
	const struct cd_mcp_gw_ops *ops;
	void *ctx;
	int64_t now; /* seconds since the epoch, for grant expiry */
	/* Masks results for grants with mask: (borrowed; may be NULL: then a
	 * call whose grant masks is denied before it reaches the server). */
	struct cd_masker *masker;
};

struct cd_mcp_gw;

/* A new gateway; the config's strings are borrowed for its lifetime. */
int cd_mcp_gw_new(const struct cd_mcp_gw_config *cfg, struct cd_mcp_gw **ret);
void cd_mcp_gw_free(struct cd_mcp_gw *gw);

/* One line (no newline) from the client / the server.  Whatever is to be
 * sent is appended to the output buffers.  0, or a negative error only
 * when the session cannot go on (out of memory, an output buffer past its
 * cap); a malformed frame is never an error here. */
int cd_mcp_gw_from_client(struct cd_mcp_gw *gw, const char *line, size_t len);
int cd_mcp_gw_from_server(struct cd_mcp_gw *gw, const char *line, size_t len);
/* A line from the client longer than its cap (dropped by the reader). */
int cd_mcp_gw_client_too_long(struct cd_mcp_gw *gw);
int cd_mcp_gw_server_too_long(struct cd_mcp_gw *gw);

/* The bytes waiting for the client and for the server; the driver writes
 * from data and then calls cd_mcp_gw_consumed. */
struct cd_buf *cd_mcp_gw_to_client(struct cd_mcp_gw *gw);
struct cd_buf *cd_mcp_gw_to_server(struct cd_mcp_gw *gw);
void cd_mcp_gw_consumed(struct cd_buf *b, size_t n);

/* Decide with another policy from now on (a reload): the tool list is
 * stale (re-listed, and grants recomputed, before the next call) and the
 * client is told so (notifications/tools/list_changed).  The caller keeps
 * the old policy alive until this returns.  0 or -ENOMEM. */
int cd_mcp_gw_set_policy(struct cd_mcp_gw *gw, const struct cd_policy *p, int64_t now);

/* Calls held for approval; the driver calls cd_mcp_gw_poll_approvals
 * every so often while there are any: approved calls go to the server,
 * the others get their refusal. */
#define CD_MCP_APPROVALS_MAX 32
size_t cd_mcp_gw_held_approvals(const struct cd_mcp_gw *gw);
int cd_mcp_gw_poll_approvals(struct cd_mcp_gw *gw);

/* Counters for tests and the session's closing record. */
struct cd_mcp_gw_stats {
	uint64_t calls, allowed, denied, malformed, dropped, hidden;
};
void cd_mcp_gw_stats(const struct cd_mcp_gw *gw, struct cd_mcp_gw_stats *ret);

#endif
