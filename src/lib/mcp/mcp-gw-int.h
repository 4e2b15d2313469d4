/* mcp-gw-int.h — the MCP gateway's state, shared by its files: mcp-gw.c
 * (helpers, batches, requests in flight, tools, life cycle),
 * mcp-gw-call.c (tools/call), mcp-gw-client.c and mcp-gw-server.c (lines
 * from each peer).  Not part of the library's interface: front ends use
 * mcp.h.  The cd_mcpgw_ functions act on one gateway; none of them is
 * safe to call from two threads at once. */
#ifndef CD_MCP_GW_INT_H
#define CD_MCP_GW_INT_H

#include "mcp.h"

#define OUT_CAP (4 * CD_JSONRPC_LINE_MAX)

/* cordon's own JSON-RPC error code for a request refused by policy (outside
 * the reserved range, as MCP allows applications). */
#define CD_MCP_E_DENIED (-31001)

enum pending_kind {
	P_INIT,
	P_LIST,  /* the client's tools/list */
	P_CALL,  /* an allowed tools/call */
	P_OTHER, /* anything else of the client's */
	P_SERVER /* a request of the server's, to the client */
};

struct pending {
	char key[CD_JSONRPC_IDKEY_MAX];
	enum pending_kind kind;
	int64_t start_ms;
	unsigned generation; /* P_LIST: the tools generation when sent */
	int first_page;      /* P_LIST: sent without a cursor */
	char *tool;          /* P_CALL: "SERVER/TOOL" */
	char *policy_tool, *grant_ids, *method;
	const char *action;
	struct cd_mcp_minimize mz; /* P_CALL: what the grants require of the result */
	unsigned batch;            /* the client's batch it belongs to (0: none) */
};

struct table {
	struct pending *v;
	size_t n, alloc;
};

struct tool {
	char *name;
	char sha256[65];
	enum cd_mcp_pin pin;
	int granted;
};

struct tools {
	struct tool *v;
	size_t n, alloc;
};

/* A tools/call waiting for a person. */
struct held_approval {
	char approval_id[40];
	json_t *id; /* the client's request id */
	char *raw;  /* the call as the client sent it */
	size_t rawlen;
	char *tool, *policy_tool, *grant_ids;
	const char *action;
	char args_sha256[65];
	struct cd_mcp_minimize mz;
	unsigned batch;
};

/* A client batch whose answer is not complete yet. */
struct batch {
	unsigned id;        /* 0: a free slot */
	struct cd_buf buf;  /* the answers so far, one line each */
	size_t outstanding; /* its requests not answered yet */
	int splitting;      /* still being split: not answered before the end */
};

/* The answer to a batch is one line of at most this; an answer that would
 * pass it is replaced by a short error.  The buffer's cap leaves room for
 * one more answer of any size the client's own buffer takes (OUT_CAP), so
 * that it fails only where a single answer would: a full output buffer
 * stays fatal, never turned into an error reply. */
#define BATCH_ANSWER_MAX CD_JSONRPC_LINE_MAX
#define BATCH_BUF_CAP    (BATCH_ANSWER_MAX + OUT_CAP + CD_MCP_BATCH_MAX * 1024)

struct cd_mcp_gw {
	struct cd_mcp_gw_config cfg;
	struct held_approval appr[CD_MCP_APPROVALS_MAX];
	size_t nappr;
	struct cd_buf to_client, to_server;
	struct table client_req; /* client -> server, awaiting the server */
	struct table server_req; /* server -> client, awaiting the client */
	int initialized;
	struct tools tools;    /* the last complete list */
	int tools_fresh;       /* `tools` is the server's current list */
	unsigned generation;   /* bumped by notifications/tools/list_changed */
	struct tools building; /* the gateway's own listing in progress */
	int listing;
	unsigned listing_generation, pages;
	char own_key[CD_JSONRPC_IDKEY_MAX]; /* the listing request in flight */
	json_t *held[CD_MCP_HELD_MAX];      /* tools/call waiting for the listing */
	unsigned held_batch[CD_MCP_HELD_MAX];
	size_t nheld;
	int batching; /* the negotiated version (2025-03-26) has batches */
	char version[16];
	struct batch batches[CD_MCP_BATCHES_MAX];
	unsigned next_batch;
	/* Where the answer being made goes: to_client, or the buffer of the
	 * batch cur_batch (its length at reply_begin: reply_mark). */
	struct cd_buf *reply;
	unsigned cur_batch;
	size_t reply_mark;
	char id_prefix[24];
	uint64_t next_id;
	struct cd_mcp_gw_stats stats;
};

/* mcp-gw.c */
int64_t cd_mcpgw_now_ms(struct cd_mcp_gw *gw);
int64_t cd_mcpgw_wall_s(struct cd_mcp_gw *gw);
int cd_mcpgw_check_temp_uses(struct cd_mcp_gw *gw, struct cd_decision *dec, int64_t now, int retry,
                             const char **ret_dropped);
int cd_mcpgw_record(struct cd_mcp_gw *gw, const struct cd_mcp_event *ev);
void cd_mcpgw_protocol_event(struct cd_mcp_gw *gw, const char *dir, const char *method,
                             const char *reason);
int cd_mcpgw_out(struct cd_buf *b, const char *p, size_t n);
int cd_mcpgw_out_line(struct cd_buf *b, const char *p, size_t n);
int cd_mcpgw_out_owned(struct cd_buf *b, char *s, size_t n);
int cd_mcpgw_reply_error(struct cd_buf *b, const json_t *id, int code, const char *msg);
int cd_mcpgw_reply_tool_error(struct cd_buf *b, const json_t *id, const char *text);
int cd_mcpgw_batch_maybe_flush(struct cd_mcp_gw *gw, struct batch *b);
void cd_mcpgw_reply_begin(struct cd_mcp_gw *gw, unsigned bid);
int cd_mcpgw_reply_end(struct cd_mcp_gw *gw, const json_t *id, int r, int counted);
int cd_mcpgw_batch_forget(struct cd_mcp_gw *gw, unsigned bid);
struct pending *cd_mcpgw_table_find(struct table *t, const char *key);
void cd_mcpgw_table_remove(struct table *t, struct pending *p);
struct pending *cd_mcpgw_table_add(struct table *t, const char *key, enum pending_kind kind);
void cd_mcpgw_tools_release(struct tools *t);
struct tool *cd_mcpgw_tools_find(struct tools *t, const char *name);
int cd_mcpgw_tool_seen(struct cd_mcp_gw *gw, struct tools *into, json_t *def);

/* mcp-gw-call.c */
int cd_mcpgw_own_list_response(struct cd_mcp_gw *gw, struct cd_jsonrpc_msg *m);
void cd_mcpgw_held_release(struct held_approval *h);
/* notifications/cancelled for a call held for approval (key: its id):
 * recorded as denied, its approval withdrawn, no answer.  1 when there
 * was one (the server never saw the id), 0 none. */
int cd_mcpgw_held_cancel(struct cd_mcp_gw *gw, const char *key);
int cd_mcpgw_client_call(struct cd_mcp_gw *gw, struct cd_jsonrpc_msg *m, const char *line,
                         size_t len);

#endif
