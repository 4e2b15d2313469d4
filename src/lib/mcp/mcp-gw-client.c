/* mcp-gw-client.c — lines from the MCP client through the gateway
 * (mcp-gw.c): initialize, requests, notifications, responses to the
 * server's requests, and batches split into their elements.
 *
 * Trust: the client is hostile: every frame is checked (jsonrpc.c), ids in
 * flight are tracked so a duplicate or a response to nothing is refused. */
#include "mcp-gw-int.h"

#include <errno.h>
#include <string.h>

/* ---- from the client -------------------------------------------------- */

/* initialize: the client's capabilities as the server will see them.  Roots
 * are stripped (a client's roots would replace the directories the server
 * was started with: THREATS 33/34, MCP-NOTES pitfall 1), and so is
 * sampling, which only the server could use. */
static int client_initialize(struct cd_mcp_gw *gw, struct cd_jsonrpc_msg *m, const char *line,
                             size_t len)
{
	json_t *caps = json_object_get(m->params, "capabilities");
	json_t *ver = json_object_get(m->params, "protocolVersion");
	size_t n = 0;

	if (!json_is_object(m->params) || !json_is_string(ver) || (caps && !json_is_object(caps)))
		return cd_mcpgw_reply_error(
		        gw->reply, m->id, CD_JSONRPC_INVALID_PARAMS,
		        "initialize needs params {protocolVersion, capabilities}");
	if (gw->initialized)
		return cd_mcpgw_reply_error(gw->reply, m->id, CD_JSONRPC_INVALID_REQUEST,
		                            "initialize was already sent in this session");
	if (caps && (json_object_get(caps, "roots") || json_object_get(caps, "sampling"))) {
		char *s;
		int r;
		json_object_del(caps, "roots");
		json_object_del(caps, "sampling");
		s = cd_jsonrpc_dump_line(m->root, &n);
		if (!s)
			return -ENOMEM;
		r = cd_mcpgw_out(&gw->to_server, s, n);
		free(s);
		if (r < 0)
			return r;
	} else if ((n = 0, cd_mcpgw_out_line(&gw->to_server, line, len)) < 0) {
		return -ENOBUFS;
	}
	gw->initialized = 1;
	return cd_mcpgw_table_add(&gw->client_req, m->idkey, P_INIT) ? 0 : -ENOMEM;
}

/* A request of the client's with this id is still waiting: for the
 * server, for the gateway's own listing, or for a person. */
static int id_in_flight(struct cd_mcp_gw *gw, const char *key)
{
	char k[CD_JSONRPC_IDKEY_MAX];
	size_t i;

	if (cd_mcpgw_table_find(&gw->client_req, key) || (gw->listing && !strcmp(key, gw->own_key)))
		return 1;
	for (i = 0; i < gw->nheld; i++)
		if (cd_jsonrpc_idkey(json_object_get(gw->held[i], "id"), k) == 0 && !strcmp(k, key))
			return 1;
	for (i = 0; i < gw->nappr; i++)
		if (cd_jsonrpc_idkey(gw->appr[i].id, k) == 0 && !strcmp(k, key))
			return 1;
	return 0;
}

static int client_request(struct cd_mcp_gw *gw, struct cd_jsonrpc_msg *m, const char *line,
                          size_t len)
{
	struct pending *p;
	enum pending_kind kind = P_OTHER;

	if (id_in_flight(gw, m->idkey)) {
		gw->stats.malformed++;
		cd_mcpgw_protocol_event(gw, "client", m->method,
		                        "duplicate id of a request in flight");
		return cd_mcpgw_reply_error(
		        gw->reply, NULL, CD_JSONRPC_INVALID_REQUEST,
		        "duplicate id: a request with this id is still in flight");
	}
	if (!strcmp(m->method, "initialize"))
		return client_initialize(gw, m, line, len);
	if (!strcmp(m->method, "server/discover")) {
		/* The stateless era (2026-07-28) is recognized, not served: a
		 * dual-era client falls back to initialize on this error. */
		return cd_mcpgw_reply_error(gw->reply, m->id, CD_JSONRPC_METHOD_NOT_FOUND,
		                            "Method not found: server/discover (cordon mcp speaks "
		                            "2024-11-05 to 2025-11-25; use initialize)");
	}
	if (!gw->initialized && strcmp(m->method, "ping") != 0) {
		gw->stats.malformed++;
		return cd_mcpgw_reply_error(gw->reply, m->id, CD_JSONRPC_INVALID_REQUEST,
		                            "initialize first");
	}
	if (!strcmp(m->method, "tools/call"))
		return cd_mcpgw_client_call(gw, m, line, len);
	if (!strcmp(m->method, "tools/list"))
		kind = P_LIST;
	p = cd_mcpgw_table_add(&gw->client_req, m->idkey, kind);
	if (!p)
		return cd_mcpgw_reply_error(gw->reply, m->id, CD_JSONRPC_INTERNAL_ERROR,
		                            "cordon: too many requests in flight");
	p->batch = gw->cur_batch;
	if (kind == P_LIST) {
		json_t *cur = json_object_get(m->params, "cursor");
		p->generation = gw->generation;
		p->first_page = cur == NULL || json_is_null(cur);
	}
	return cd_mcpgw_out_line(&gw->to_server, line, len);
}

static int client_notification(struct cd_mcp_gw *gw, struct cd_jsonrpc_msg *m, const char *line,
                               size_t len)
{
	/* Only notifications go on as notifications: a "tools/call" (or any
	 * request method) without an id would reach a server that dispatches
	 * on the method alone undecided and unrecorded. */
	if (strncmp(m->method, "notifications/", 14) != 0) {
		gw->stats.malformed++;
		cd_mcpgw_protocol_event(gw, "client", m->method,
		                        "a request method sent as a notification (no id): dropped");
		return 0;
	}
	/* Roots were stripped from the capabilities: their changes too. */
	if (!strcmp(m->method, "notifications/roots/list_changed"))
		return 0;
	if (!strcmp(m->method, "notifications/cancelled")) {
		/* The server need not answer a cancelled request: a batch
		 * does not wait for it (a late answer goes out on its own,
		 * which the client ignores). */
		char key[CD_JSONRPC_IDKEY_MAX];
		struct pending *p;
		size_t i;
		unsigned bid = 0;
		int r;
		if (cd_jsonrpc_idkey(json_object_get(m->params, "requestId"), key) == 0) {
			char k[CD_JSONRPC_IDKEY_MAX];
			if ((p = cd_mcpgw_table_find(&gw->client_req, key)) && p->batch) {
				bid = p->batch;
				p->batch = 0;
			}
			for (i = 0; !bid && i < gw->nheld; i++)
				if (gw->held_batch[i] &&
				    cd_jsonrpc_idkey(json_object_get(gw->held[i], "id"), k) == 0 &&
				    !strcmp(k, key)) {
					bid = gw->held_batch[i];
					gw->held_batch[i] = 0;
				}
			for (i = 0; !bid && i < gw->nappr; i++)
				if (gw->appr[i].batch && cd_jsonrpc_idkey(gw->appr[i].id, k) == 0 &&
				    !strcmp(k, key)) {
					bid = gw->appr[i].batch;
					gw->appr[i].batch = 0;
				}
		}
		if (bid && (r = cd_mcpgw_batch_forget(gw, bid)) < 0)
			return r;
		/* A call held for a person is withdrawn: the server never
		 * saw its id. */
		if (cd_jsonrpc_idkey(json_object_get(m->params, "requestId"), key) == 0 &&
		    cd_mcpgw_held_cancel(gw, key))
			return 0;
	}
	return cd_mcpgw_out_line(&gw->to_server, line, len);
}

/* The client answers a request of the server's. */
static int client_response(struct cd_mcp_gw *gw, struct cd_jsonrpc_msg *m, const char *line,
                           size_t len)
{
	struct pending *p = cd_mcpgw_table_find(&gw->server_req, m->idkey);

	if (!p) {
		gw->stats.dropped++;
		cd_mcpgw_protocol_event(gw, "client", NULL,
		                        "a response to no request of the server's");
		return 0;
	}
	cd_mcpgw_table_remove(&gw->server_req, p);
	return cd_mcpgw_out_line(&gw->to_server, line, len);
}

/* A batch refused as a whole: one error object, not an array. */
static int batch_refused(struct cd_mcp_gw *gw, const char *why, const char *msg)
{
	gw->stats.malformed++;
	cd_mcpgw_protocol_event(gw, "client", NULL, why);
	return cd_mcpgw_reply_error(&gw->to_client, NULL, CD_JSONRPC_INVALID_REQUEST, msg);
}

/* One element of a client's batch, as a line of its own would be; `keys`
 * holds the ids of the batch's requests so far (*nkeys of them). */
static int client_element(struct cd_mcp_gw *gw, struct batch *b, json_t *el,
                          char (*keys)[CD_JSONRPC_IDKEY_MAX], size_t *nkeys)
{
	struct cd_jsonrpc_msg m;
	struct cd_err err = { 0, "" };
	char *line = NULL;
	size_t len = 0, i;
	int r = 0, counted = 0;

	cd_mcpgw_reply_begin(gw, b->id);
	if (cd_jsonrpc_classify(el, &m, &err) < 0) {
		gw->stats.malformed++;
		cd_mcpgw_protocol_event(gw, "client", NULL, err.msg);
		r = cd_mcpgw_reply_error(gw->reply, m.id, m.code, err.msg);
		goto done;
	}
	if (m.kind == CD_JSONRPC_REQUEST) {
		counted = 1;
		b->outstanding++;
		for (i = 0; i < *nkeys && strcmp(keys[i], m.idkey); i++)
			;
		if (i < *nkeys) {
			gw->stats.malformed++;
			cd_mcpgw_protocol_event(gw, "client", m.method,
			                        "duplicate id within a batch");
			r = cd_mcpgw_reply_error(
			        gw->reply, NULL, CD_JSONRPC_INVALID_REQUEST,
			        "duplicate id: another request of this batch has this id");
			goto done;
		}
		memcpy(keys[(*nkeys)++], m.idkey, sizeof m.idkey);
		if (!strcmp(m.method, "initialize")) {
			gw->stats.malformed++;
			cd_mcpgw_protocol_event(gw, "client", m.method,
			                        "initialize inside a batch");
			r = cd_mcpgw_reply_error(gw->reply, m.id, CD_JSONRPC_INVALID_REQUEST,
			                         "initialize must not be part of a JSON-RPC batch");
			goto done;
		}
	}
	/* Forwarded, when it is, as one line of its own. */
	line = cd_jsonrpc_dump_line(el, &len);
	if (!line) {
		r = -ENOMEM;
		goto done;
	}
	len--; /* without its newline */
	if (m.kind == CD_JSONRPC_REQUEST)
		r = client_request(gw, &m, line, len);
	else if (m.kind == CD_JSONRPC_NOTIFICATION)
		r = client_notification(gw, &m, line, len);
	else
		r = client_response(gw, &m, line, len);
done:
	free(line);
	r = cd_mcpgw_reply_end(gw, m.id, r, counted);
	cd_jsonrpc_msg_release(&m);
	return r;
}

/* A client's batch: only when the negotiated version has batches. */
static int client_batch(struct cd_mcp_gw *gw, json_t *arr)
{
	char(*keys)[CD_JSONRPC_IDKEY_MAX];
	char msg[200];
	size_t n = json_array_size(arr), i, nkeys = 0;
	struct batch *b = NULL;
	int r = 0;

	if (!gw->batching) {
		snprintf(msg, sizeof msg,
		         "batch arrays are not supported with protocol version %s: send one "
		         "message per line",
		         gw->version[0] ? gw->version : "(none negotiated)");
		return batch_refused(gw, "a batch array outside protocol version 2025-03-26", msg);
	}
	if (n == 0)
		return batch_refused(gw, "an empty batch", "an empty batch is not a request");
	if (n > CD_MCP_BATCH_MAX)
		return batch_refused(gw, "a batch of too many elements",
		                     "a batch holds at most 100 messages");
	for (i = 0; i < CD_MCP_BATCHES_MAX && !b; i++)
		if (!gw->batches[i].id)
			b = &gw->batches[i];
	if (!b)
		return batch_refused(gw, "too many batches in flight",
		                     "cordon: too many batches are still waiting for answers");
	keys = calloc(n, sizeof *keys);
	if (!keys)
		return -ENOMEM;
	if (++gw->next_batch == 0)
		gw->next_batch = 1;
	b->id = gw->next_batch;
	cd_buf_init(&b->buf, BATCH_BUF_CAP);
	b->outstanding = 0;
	b->splitting = 1;
	for (i = 0; i < n && r == 0; i++)
		r = client_element(gw, b, json_array_get(arr, i), keys, &nkeys);
	free(keys);
	if (r < 0)
		return r;
	b->splitting = 0;
	return cd_mcpgw_batch_maybe_flush(gw, b);
}

int cd_mcp_gw_from_client(struct cd_mcp_gw *gw, const char *line, size_t len)
{
	struct cd_jsonrpc_msg m;
	struct cd_err err = { 0, "" };
	int r;

	if (cd_jsonrpc_parse(line, len, &m, &err) < 0) {
		if (m.batch) {
			r = client_batch(gw, m.root);
			cd_jsonrpc_msg_release(&m);
			return r;
		}
		gw->stats.malformed++;
		cd_mcpgw_protocol_event(gw, "client", NULL, err.msg);
		r = cd_mcpgw_reply_error(&gw->to_client, m.id, m.code, err.msg);
		cd_jsonrpc_msg_release(&m);
		return r;
	}
	switch (m.kind) {
	case CD_JSONRPC_REQUEST:
		r = client_request(gw, &m, line, len);
		break;
	case CD_JSONRPC_NOTIFICATION:
		r = client_notification(gw, &m, line, len);
		break;
	default:
		r = client_response(gw, &m, line, len);
		break;
	}
	cd_jsonrpc_msg_release(&m);
	return r;
}

int cd_mcp_gw_client_too_long(struct cd_mcp_gw *gw)
{
	gw->stats.malformed++;
	cd_mcpgw_protocol_event(gw, "client", NULL, "line longer than the cap");
	return cd_mcpgw_reply_error(&gw->to_client, NULL, CD_JSONRPC_INVALID_REQUEST,
	                            "message too long: cordon mcp takes lines of at most 16 MiB");
}
