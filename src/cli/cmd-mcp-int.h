/* cmd-mcp-int.h — the gateway session of `cordon mcp`, shared by
 * cmd-mcp.c (options, the launched server, the stdio relay) and
 * cmd-mcp-remote.c (a remote server named by the tool's url:). */
#ifndef CD_CMD_MCP_INT_H
#define CD_CMD_MCP_INT_H

#include "audit/audit.h"
#include "gate/gate.h"
#include "mask/mask.h"
#include "mcp/mcp.h"
#include "policy/policy.h"
#include "store/state.h"

#include <sys/types.h>

struct mcp_remote;

struct session {
	const char *policy_path, *agent, *task, *server, *audit_opt, *state_opt, *cwd_opt;
	char server_buf[256]; /* the server's name when --server was not given */
	char **cmd;
	/* A remote server (the tool's url:): cmd-mcp-remote.c. */
	struct mcp_remote *remote;
	const char *secret_opt; /* --secret NAME:FILE */
	struct cd_policy *policy;
	struct cd_audit *audit;
	struct cd_state *state;
	struct cd_gate gate;
	struct cd_mcp_gw *gw;
	struct cd_masker *masker;
	char run_id[40];
	pid_t child;
	int to_srv, from_srv, err_srv; /* our ends of the server's stdio */
	/* The server's stdout is ours directly (cordon run --direct-stdio):
	 * its profile's output_limit is enforced here (0: none). */
	uint64_t out_limit, out_bytes;
	int over_limit;
	struct cd_jsonrpc_reader rd_client, rd_server;
	int fatal;
	int64_t approval_timeout_s;
	/* Our own hash of each held call, to check the approval against. */
	struct {
		char id[40], sha256[65];
	} held[CD_MCP_APPROVALS_MAX];
};

/* cmd-mcp.c */
int mcp_flush(int fd, struct cd_buf *b);
int mcp_on_client_line(void *ctx, const char *line, size_t len, int status);
int mcp_reload_policy(struct session *s);

/* cmd-mcp-held.c: the gateway's approval_request, approval_poll and
 * approval_withdraw operations (mcp.h's struct cd_mcp_gw_ops; ctx is the session). */
int mcp_approval_request(void *ctx, const char *tool, const char *action, const char *args_json,
                         const char *grant_ids, const struct cd_decision *dec, char ret_id[40]);
int mcp_approval_poll(void *ctx, const char *id, char *why, size_t wn);
int mcp_approval_withdraw(void *ctx, const char *id, const char *why);

/* cmd-mcp-remote.c */
/* When the policy's server has a url: vet its address as the egress proxy
 * does (recorded), read its secret and connect: 1; 0 when the server is
 * launched; -1 when it may not be reached (said on stderr). */
int mcp_remote_open(struct session *s);
/* The session's relay with a remote server: as the stdio relay's
 * returns (0 the client ended, 1 a signal, -1 failed). */
int mcp_remote_relay(struct session *s, int sfd);
/* DELETE the session (when the server gave one) and free. */
void mcp_remote_close(struct session *s);

#endif
