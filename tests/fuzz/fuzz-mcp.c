/* fuzz-mcp.c — the JSON-RPC framing and the gateway's message handling on
 * arbitrary bytes: the input is cut into lines by the capped reader; a
 * line starting with 'S' comes from the server, any other from the client.
 * Invariants: nothing crashes or leaks, and every byte the gateway sends to
 * either side is a sequence of complete lines that each parse as one
 * JSON-RPC message (nothing unchecked is forwarded), except the client's
 * answers to its batches: an array line, of such messages only. */
#include "mcp/mcp.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *cd_fuzz_name = "mcp";

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char policy_yaml[] =
        "version: 1\n"
        "agents: [{id: a, owner: o}]\n"
        "tools:\n"
        "  - {id: fs, kind: mcp, operations: {read: read, write: update, get: read},"
        " args: {path: path, url: host, n: value, port: port, f: record}}\n"
        "grants:\n"
        "  - {id: g, agent: a, tool: fs, actions: [read], scope: {paths: [/d/**], hosts: "
        "[a.test], ports: [443], fields: [x]}, owner: o, justification: j, review_by: "
        "2099-01-01, expires: 2099-01-01}\n";

static struct cd_policy *policy;

static int pin(void *ctx, const char *tool, const char *sha, const char *canon, enum cd_mcp_pin *r)
{
	*r = tool[0] == 'w' ? CD_MCP_PIN_CHANGED : CD_MCP_PIN_APPROVED;
	return 0;
}
static const struct cd_mcp_gw_ops ops = { .pin = pin };

static int on_line(void *ctx, const char *line, size_t len, int status)
{
	struct cd_mcp_gw *gw = ctx;

	if (status < 0)
		return cd_mcp_gw_client_too_long(gw) < 0 ? -1 : 0;
	if (line[0] == 'S')
		return cd_mcp_gw_from_server(gw, line + 1, len - 1) < 0 ? -1 : 0;
	return cd_mcp_gw_from_client(gw, line, len) < 0 ? -1 : 0;
}

#define NULL_ERR "{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{"

/* A batch's answer: a non-empty array of responses, each as checked. */
static void check_array(const char *p, size_t n)
{
	json_t *a = json_loadb(p, n, JSON_REJECT_DUPLICATES, NULL);
	size_t i;

	if (!json_is_array(a) || json_array_size(a) == 0 || json_array_size(a) > CD_MCP_BATCH_MAX)
		abort();
	for (i = 0; i < json_array_size(a); i++) {
		json_t *e = json_array_get(a, i);
		struct cd_jsonrpc_msg m;
		struct cd_err err = { 0, "" };

		if (cd_jsonrpc_classify(e, &m, &err) < 0
		            ? !json_is_null(json_object_get(e, "id"))
		            : (m.kind != CD_JSONRPC_RESULT && m.kind != CD_JSONRPC_ERROR))
			abort(); /* not an answer */
		cd_jsonrpc_msg_release(&m);
	}
	json_decref(a);
}

static void check_out(struct cd_buf *b, int client)
{
	size_t i = 0;

	while (i < b->len) {
		const char *nl = memchr(b->data + i, '\n', b->len - i);
		struct cd_jsonrpc_msg m;
		struct cd_err err = { 0, "" };

		if (!nl)
			abort(); /* an incomplete line */
		if (client && b->data[i] == '[') {
			check_array(b->data + i, (size_t)(nl - b->data - i));
			i = (size_t)(nl - b->data) + 1;
			continue;
		}
		/* An error about a frame whose id could not be read names id
		 * null (JSON-RPC 2.0, 5.1): the one shape the strict parser
		 * refuses on purpose. */
		if (cd_jsonrpc_parse(b->data + i, (size_t)(nl - b->data - i), &m, &err) < 0 &&
		    strncmp(b->data + i, NULL_ERR, sizeof NULL_ERR - 1) != 0) {
			fprintf(stderr, "unchecked: %.*s\n", (int)(nl - b->data - i), b->data + i);
			abort(); /* something unchecked forwarded */
		}
		cd_jsonrpc_msg_release(&m);
		i = (size_t)(nl - b->data) + 1;
	}
	cd_mcp_gw_consumed(b, b->len);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct cd_mcp_gw_config cfg;
	struct cd_jsonrpc_reader rd;
	struct cd_mcp_gw *gw;
	struct cd_err err = { 0, "" };

	if (!policy &&
	    cd_policy_load_buf("fuzz", policy_yaml, sizeof policy_yaml - 1, &policy, &err) < 0)
		abort();
	memset(&cfg, 0, sizeof cfg);
	cfg.policy = policy;
	cfg.agent = "a";
	cfg.server = "fs";
	cfg.ops = &ops;
	cfg.now = 1700000000;
	if (cd_mcp_gw_new(&cfg, &gw) < 0)
		return 0;
	cd_jsonrpc_reader_init(&rd, 4096);
	cd_jsonrpc_feed(&rd, (const char *)data, size, on_line, gw);
	check_out(cd_mcp_gw_to_client(gw), 1);
	check_out(cd_mcp_gw_to_server(gw), 0);
	cd_jsonrpc_reader_release(&rd);
	cd_mcp_gw_free(gw);
	return 0;
}
