/* mcp-gw-server.c — lines from the MCP server through the gateway
 * (mcp-gw.c): results (initialize, tools/list pages, tools/call results
 * minimized as the grants require), the server's own requests and
 * notifications; a server's batch is split and forwarded element by element.
 *
 * Trust: the server is hostile: its answers are matched to requests in
 * flight, and a tool it lists is pinned before it can be called. */
#include "mcp-gw-int.h"

#include <errno.h>
#include <string.h>

/* ---- from the server -------------------------------------------------- */

static const char *const versions[] = { "2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25" };

static int server_init_result(struct cd_mcp_gw *gw, struct cd_jsonrpc_msg *m, const char *line,
                              size_t len)
{
	json_t *v = m->result ? json_object_get(m->result, "protocolVersion") : NULL;
	size_t i;

	if (m->kind == CD_JSONRPC_ERROR)
		return cd_mcpgw_out_line(gw->reply, line, len);
	for (i = 0; json_is_string(v) && i < sizeof versions / sizeof versions[0]; i++)
		if (!strcmp(json_string_value(v), versions[i])) {
			/* Batches only where the negotiated version has them. */
			snprintf(gw->version, sizeof gw->version, "%s", versions[i]);
			gw->batching = !strcmp(versions[i], "2025-03-26");
			return cd_mcpgw_out_line(gw->reply, line, len);
		}
	cd_mcpgw_protocol_event(gw, "server", "initialize", "unsupported protocol version");
	return cd_mcpgw_reply_error(
	        gw->reply, m->id, CD_JSONRPC_INTERNAL_ERROR,
	        "cordon: the server answered with a protocol version cordon mcp does "
	        "not speak (2024-11-05 to 2025-11-25)");
}

/* The client's tools/list: only the tools it is granted and whose pinned
 * definition is approved; the cursor is kept. */
static int server_list_result(struct cd_mcp_gw *gw, struct pending *p, struct cd_jsonrpc_msg *m)
{
	json_t *list = m->result ? json_object_get(m->result, "tools") : NULL, *keep, *cur;
	struct tools seen;
	size_t i, n = 0;
	int r = 0, complete;
	char *s;

	if (m->kind == CD_JSONRPC_ERROR || !json_is_array(list)) {
		s = cd_jsonrpc_dump_line(m->root, &n);
		return cd_mcpgw_out_owned(gw->reply, s, n);
	}
	memset(&seen, 0, sizeof seen);
	keep = json_array();
	if (!keep)
		return -ENOMEM;
	for (i = 0; i < json_array_size(list); i++) {
		json_t *def = json_array_get(list, i);
		r = cd_mcpgw_tool_seen(gw, &seen, def);
		if (r < 0)
			break;
		if (r == 1)
			json_array_append(keep, def);
		else
			gw->stats.hidden++;
	}
	if (r < 0) {
		json_decref(keep);
		cd_mcpgw_tools_release(&seen);
		return r;
	}
	cur = json_object_get(m->result, "nextCursor");
	complete = p->first_page && (!cur || json_is_null(cur)) && p->generation == gw->generation;
	if (complete && !gw->listing) {
		cd_mcpgw_tools_release(&gw->tools);
		gw->tools = seen;
		gw->tools_fresh = 1;
	} else {
		cd_mcpgw_tools_release(&seen);
	}
	json_object_set_new(m->result, "tools", keep);
	s = cd_jsonrpc_dump_line(m->root, &n);
	return cd_mcpgw_out_owned(gw->reply, s, n);
}

/* The result as the grants let the agent see it, forwarded; or, when it
 * cannot be minimized, withheld with a tool error.  1 when withheld. */
static int forward_minimized(struct cd_mcp_gw *gw, struct pending *p, struct cd_jsonrpc_msg *m,
                             size_t *count, const char **why, int *r)
{
	json_t *v = m->kind == CD_JSONRPC_ERROR ? m->error : m->result;
	char *out_s;
	size_t n = 0;
	char text[300];

	if (cd_mcp_minimize(gw->cfg.masker, &p->mz, v, m->kind == CD_JSONRPC_ERROR, count, why) ==
	            0 &&
	    (out_s = cd_jsonrpc_dump_line(m->root, &n)) != NULL) {
		*r = cd_mcpgw_out_owned(gw->reply, out_s, n);
		return 0;
	}
	if (!*why || !strcmp(*why, "masking failed"))
		*why = "the result could not be masked";
	snprintf(text, sizeof text, "result withheld by cordon: %s", *why);
	*r = cd_mcpgw_reply_tool_error(gw->reply, m->id, text);
	return 1;
}

static int server_call_result(struct cd_mcp_gw *gw, struct pending *p, struct cd_jsonrpc_msg *m,
                              const char *line, size_t len)
{
	struct cd_mcp_event ev;
	char sha[65], note[200] = "";
	int64_t end = cd_mcpgw_now_ms(gw);
	size_t masked = 0;
	const char *why = NULL;
	int withheld = 0, r = 0;

	if (cd_mcp_minimize_active(&p->mz))
		withheld = forward_minimized(gw, p, m, &masked, &why, &r);
	else
		r = cd_mcpgw_out_line(gw->reply, line, len);

	/* Recorded after it was forwarded: the result adds no latency (the
	 * driver writes what is queued for the client before the record). */
	cd_mcp_sha256_hex(line, len, sha);
	memset(&ev, 0, sizeof ev);
	ev.kind = CD_MCP_EV_RESULT;
	ev.direction = "server";
	ev.method = "tools/call";
	ev.tool = p->tool;
	ev.policy_tool = p->policy_tool;
	ev.action = p->action;
	ev.grant_ids = p->grant_ids;
	ev.result_sha256 = sha;
	ev.log_mask = &p->mz.mask;
	ev.verdict = "allow";
	ev.is_error = m->kind == CD_JSONRPC_ERROR ||
	              (m->result && json_is_true(json_object_get(m->result, "isError")));
	ev.reason =
	        m->kind == CD_JSONRPC_ERROR ? "the server answered with a JSON-RPC error" : NULL;
	if (withheld) {
		snprintf(note, sizeof note, "withheld: %s", why);
		ev.reason = note;
		ev.is_error = 1;
	} else if (cd_mcp_minimize_active(&p->mz)) {
		snprintf(note, sizeof note, "minimized: %zu value%s masked%s", masked,
		         masked == 1 ? "" : "s", p->mz.nfield_lists ? ", fields scoped" : "");
		if (!ev.reason)
			ev.reason = note;
	}
	ev.duration_ms = end > p->start_ms ? (uint64_t)(end - p->start_ms) : 0;
	cd_mcpgw_record(gw, &ev);
	return r;
}

static int server_response(struct cd_mcp_gw *gw, struct cd_jsonrpc_msg *m, const char *line,
                           size_t len)
{
	struct pending *p;
	int r;

	if (gw->listing && gw->own_key[0] && !strcmp(m->idkey, gw->own_key))
		return cd_mcpgw_own_list_response(gw, m);
	p = cd_mcpgw_table_find(&gw->client_req, m->idkey);
	if (!p) {
		gw->stats.dropped++;
		cd_mcpgw_protocol_event(gw, "server", NULL,
		                        "a response to no request of the client's");
		return 0;
	}
	cd_mcpgw_reply_begin(gw, p->batch);
	switch (p->kind) {
	case P_INIT:
		r = server_init_result(gw, m, line, len);
		break;
	case P_LIST:
		r = server_list_result(gw, p, m);
		break;
	case P_CALL:
		r = server_call_result(gw, p, m, line, len);
		break;
	default:
		r = cd_mcpgw_out_line(gw->reply, line, len);
		break;
	}
	cd_mcpgw_table_remove(&gw->client_req, p);
	return cd_mcpgw_reply_end(gw, m->id, r, 1);
}

static int server_request(struct cd_mcp_gw *gw, struct cd_jsonrpc_msg *m, const char *line,
                          size_t len)
{
	struct cd_mcp_event ev;

	memset(&ev, 0, sizeof ev);
	ev.kind = CD_MCP_EV_SERVER;
	ev.direction = "server";
	ev.method = m->method;
	if (cd_mcpgw_table_find(&gw->server_req, m->idkey)) {
		gw->stats.malformed++;
		return cd_mcpgw_reply_error(
		        &gw->to_server, NULL, CD_JSONRPC_INVALID_REQUEST,
		        "duplicate id: a request with this id is still in flight");
	}
	if (!strcmp(m->method, "roots/list")) {
		/* Never the client's roots: the server keeps the directories
		 * its granted command line names. */
		ev.verdict = "deny";
		ev.reason = "roots are answered by cordon: none are offered";
		cd_mcpgw_record(gw, &ev);
		return cd_mcpgw_reply_error(
		        &gw->to_server, m->id, CD_JSONRPC_METHOD_NOT_FOUND,
		        "Method not found: roots are not offered through cordon mcp");
	}
	if (!strcmp(m->method, "sampling/createMessage")) {
		ev.verdict = "deny";
		ev.reason = "sampling is not granted to tool servers";
		cd_mcpgw_record(gw, &ev);
		return cd_mcpgw_reply_error(
		        &gw->to_server, m->id, CD_MCP_E_DENIED,
		        "denied by policy: sampling is not granted to this server");
	}
	if (!strcmp(m->method, "elicitation/create")) {
		ev.verdict = "allow";
		ev.reason = "elicitation passes to the client";
		cd_mcpgw_record(gw, &ev);
	}
	if (!cd_mcpgw_table_add(&gw->server_req, m->idkey, P_SERVER))
		return cd_mcpgw_reply_error(&gw->to_server, m->id, CD_JSONRPC_INTERNAL_ERROR,
		                            "cordon: too many requests in flight");
	return cd_mcpgw_out_line(&gw->to_client, line, len);
}

static int server_notification(struct cd_mcp_gw *gw, struct cd_jsonrpc_msg *m, const char *line,
                               size_t len)
{
	if (!strcmp(m->method, "notifications/tools/list_changed")) {
		gw->generation++;
		gw->tools_fresh = 0;
	} else if (!strcmp(m->method, "notifications/cancelled")) {
		/* The server gave up one of its requests: forget it. */
		char key[CD_JSONRPC_IDKEY_MAX];
		json_t *rid = json_object_get(m->params, "requestId");
		struct pending *p;
		if (cd_jsonrpc_idkey(rid, key) == 0 &&
		    (p = cd_mcpgw_table_find(&gw->server_req, key)))
			cd_mcpgw_table_remove(&gw->server_req, p);
	}
	return cd_mcpgw_out_line(&gw->to_client, line, len);
}

static int server_message(struct cd_mcp_gw *gw, struct cd_jsonrpc_msg *m, const char *line,
                          size_t len)
{
	switch (m->kind) {
	case CD_JSONRPC_REQUEST:
		return server_request(gw, m, line, len);
	case CD_JSONRPC_NOTIFICATION:
		return server_notification(gw, m, line, len);
	default:
		return server_response(gw, m, line, len);
	}
}

/* A server's batch (2025-03-26 only): each element as a line of its own,
 * forwarded to the client one by one; never answered as a batch (the
 * gateway's answers to its requests go one per line too). */
static int server_batch(struct cd_mcp_gw *gw, json_t *arr)
{
	size_t n = json_array_size(arr), i;
	int r = 0;

	if (!gw->batching || n == 0 || n > CD_MCP_BATCH_MAX) {
		gw->stats.malformed++;
		cd_mcpgw_protocol_event(
		        gw, "server", NULL,
		        !gw->batching ? "a batch array outside protocol version 2025-03-26"
		        : n == 0      ? "an empty batch"
		                      : "a batch of too many elements");
		return 0;
	}
	for (i = 0; i < n && r == 0; i++) {
		struct cd_jsonrpc_msg m;
		struct cd_err err = { 0, "" };
		char *line;
		size_t len = 0;

		if (cd_jsonrpc_classify(json_array_get(arr, i), &m, &err) < 0) {
			gw->stats.malformed++;
			cd_mcpgw_protocol_event(gw, "server", NULL, err.msg);
		} else if ((line = cd_jsonrpc_dump_line(m.root, &len)) == NULL) {
			r = -ENOMEM;
		} else {
			r = server_message(gw, &m, line, len - 1);
			free(line);
		}
		cd_jsonrpc_msg_release(&m);
	}
	return r;
}

int cd_mcp_gw_from_server(struct cd_mcp_gw *gw, const char *line, size_t len)
{
	struct cd_jsonrpc_msg m;
	struct cd_err err = { 0, "" };
	int r;

	if (cd_jsonrpc_parse(line, len, &m, &err) < 0) {
		if (m.batch) {
			r = server_batch(gw, m.root);
			cd_jsonrpc_msg_release(&m);
			return r;
		}
		/* Never forwarded, never answered: servers drop garbage too. */
		gw->stats.malformed++;
		cd_mcpgw_protocol_event(gw, "server", NULL, err.msg);
		cd_jsonrpc_msg_release(&m);
		return 0;
	}
	r = server_message(gw, &m, line, len);
	cd_jsonrpc_msg_release(&m);
	return r;
}

int cd_mcp_gw_server_too_long(struct cd_mcp_gw *gw)
{
	gw->stats.malformed++;
	cd_mcpgw_protocol_event(gw, "server", NULL, "line longer than the cap");
	return 0;
}
