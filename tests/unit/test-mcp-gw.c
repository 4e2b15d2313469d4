/* test-mcp-gw.c — the JSON-RPC framing and the gateway state machine,
 * driven without processes: lines in from a fake client and server, the
 * lines out checked. */
#include "../tap.h"
#include "mcp.h"

#include <string.h>

static const char policy_yaml[] =
        "version: 1\n"
        "agents: [{id: a, owner: o}]\n"
        "tools:\n"
        "  - {id: fs, kind: mcp, operations: {read: read, write: update}, args: {path: path}}\n"
        "grants:\n"
        "  - {id: g-read, agent: a, tool: fs, actions: [read], scope: {paths: [/d/**]}, owner: o,"
        " justification: j, review_by: 2099-01-01, expires: 2099-01-01}\n";

static int approved_all;
static int pin(void *ctx, const char *tool, const char *sha, const char *canon, enum cd_mcp_pin *r)
{
	*r = approved_all ? CD_MCP_PIN_APPROVED : CD_MCP_PIN_NEW;
	return 0;
}
static int nrec;
static int rec(void *ctx, const struct cd_mcp_event *ev)
{
	nrec++;
	return 0;
}
static const struct cd_mcp_gw_ops ops = { .record = rec, .pin = pin };

static int lines_seen;
static int count_line(void *ctx, const char *l, size_t n, int st)
{
	lines_seen += st == 0 ? 1 : 100;
	return 0;
}

static void take(struct cd_buf *b, char *out, size_t cap)
{
	size_t n = b->len < cap - 1 ? b->len : cap - 1;
	memcpy(out, b->data ? b->data : "", n);
	out[n] = '\0';
	cd_mcp_gw_consumed(b, b->len);
}

#define C(gw, s) cd_mcp_gw_from_client(gw, s, strlen(s))
#define S(gw, s) cd_mcp_gw_from_server(gw, s, strlen(s))

int main(void)
{
	struct cd_jsonrpc_reader rd;
	struct cd_policy *p;
	struct cd_err err = { 0, "" };
	struct cd_mcp_gw_config cfg;
	struct cd_mcp_gw *gw;
	struct cd_buf canon;
	char o[4096], sha1[65], sha2[65];
	json_t *a, *b;

	tap_start(30);
	/* framing */
	cd_jsonrpc_reader_init(&rd, 16);
	cd_jsonrpc_feed(&rd, "{}\n{\"a\":", 8, count_line, NULL);
	cd_jsonrpc_feed(&rd, "1}\r\n\n", 5, count_line, NULL);
	is_int(lines_seen, 2, "two lines across reads, CR and blank lines dropped");
	lines_seen = 0;
	cd_jsonrpc_feed(&rd, "0123456789012345678901234567890", 31, count_line, NULL);
	cd_jsonrpc_feed(&rd, "0123456789\n{}\n", 15, count_line, NULL);
	is_int(lines_seen, 101, "an over-long line is reported once and dropped to its newline");
	cd_jsonrpc_reader_release(&rd);

	/* canonical form: key order and number spelling do not matter */
	a = json_loads("{\"b\":1.0,\"a\":[1e2,\"x\"]}", 0, NULL);
	b = json_loads("{ \"a\" : [100, \"x\"], \"b\" : 1 }", 0, NULL);
	cd_buf_init(&canon, 1 << 20);
	cd_mcp_tool_pin_form(a, &canon, sha1);
	is_str(canon.data, "{\"a\":[100,\"x\"],\"b\":1}", "canonical JSON");
	cd_buf_reset(&canon);
	cd_mcp_tool_pin_form(b, &canon, sha2);
	is_str(sha1, sha2, "same definition, same pin");
	cd_buf_release(&canon);
	json_decref(a);
	json_decref(b);

	ok(cd_policy_load_buf("t", policy_yaml, sizeof policy_yaml - 1, &p, &err) == 0, "policy %s",
	   err.msg);
	memset(&cfg, 0, sizeof cfg);
	cfg.policy = p;
	cfg.agent = "a";
	cfg.server = "fs";
	cfg.ops = &ops;
	cfg.now = 1700000000;
	ok(cd_mcp_gw_new(&cfg, &gw) == 0, "gateway");

	C(gw, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\"}");
	take(cd_mcp_gw_to_client(gw), o, sizeof o);
	ok(strstr(o, "initialize first") != NULL, "requests before initialize are refused");
	C(gw,
	  "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\",\"params\":{\"protocolVersion\":"
	  "\"2025-11-25\",\"capabilities\":{\"roots\":{},\"elicitation\":{}}}}");
	take(cd_mcp_gw_to_server(gw), o, sizeof o);
	ok(strstr(o, "roots") == NULL && strstr(o, "elicitation") != NULL,
	   "roots stripped from the client's capabilities, elicitation kept");
	S(gw, "{\"jsonrpc\":\"2.0\",\"id\":0,\"result\":{\"protocolVersion\":\"2025-11-25\"}}");
	take(cd_mcp_gw_to_client(gw), o, sizeof o);
	ok(strstr(o, "\"result\"") != NULL, "initialize answered");

	/* a tools/call before any list: held while the gateway lists */
	approved_all = 1;
	C(gw,
	  "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":{\"name\":\"write\","
	  "\"arguments\":{\"path\":\"/d/x\"}}}");
	take(cd_mcp_gw_to_server(gw), o, sizeof o);
	ok(strstr(o, "\"tools/list\"") && strstr(o, "cordon-"),
	   "the gateway lists with its own id");
	{
		char idbuf[64], resp[512];
		const char *q = strstr(o, "\"id\":\"") + 6;
		size_t n = (size_t)(strchr(q, '"') - q);
		memcpy(idbuf, q, n);
		idbuf[n] = '\0';
		snprintf(resp, sizeof resp,
		         "{\"jsonrpc\":\"2.0\",\"id\":\"%s\",\"result\":{\"tools\":[{\"name\":"
		         "\"read\","
		         "\"inputSchema\":{}},{\"name\":\"write\",\"inputSchema\":{}},{\"name\":"
		         "\"shell\",\"inputSchema\":{}}]}}",
		         idbuf);
		S(gw, resp);
	}
	take(cd_mcp_gw_to_client(gw), o, sizeof o);
	ok(strstr(o, "\"id\":2") && strstr(o, "\"isError\":true") && strstr(o, "denied by policy"),
	   "a write without a grant is an isError result");
	take(cd_mcp_gw_to_server(gw), o, sizeof o);
	is_str(o, "", "... never sent to the server");

	C(gw,
	  "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/call\",\"params\":{\"name\":\"read\","
	  "\"arguments\":{\"path\":\"/d/x\"}}}");
	take(cd_mcp_gw_to_server(gw), o, sizeof o);
	ok(strstr(o, "\"id\":3") != NULL, "an allowed read is forwarded as received");
	C(gw, "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"ping\"}");
	take(cd_mcp_gw_to_client(gw), o, sizeof o);
	ok(strstr(o, "duplicate id") != NULL, "a duplicate id in flight is refused");
	S(gw, "{\"jsonrpc\":\"2.0\",\"id\":3,\"result\":{\"content\":[]}}");
	take(cd_mcp_gw_to_client(gw), o, sizeof o);
	ok(strstr(o, "\"id\":3") != NULL, "its result is forwarded");
	S(gw, "{\"jsonrpc\":\"2.0\",\"id\":3,\"result\":{}}");
	take(cd_mcp_gw_to_client(gw), o, sizeof o);
	is_str(o, "", "a second response to it (to nothing) is dropped");

	C(gw,
	  "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"tools/call\",\"params\":{\"name\":\"read\","
	  "\"arguments\":{\"path\":\"/d/x\",\"extra\":\"/etc/shadow\"}}}");
	take(cd_mcp_gw_to_client(gw), o, sizeof o);
	ok(strstr(o, "not typed") != NULL, "an argument the inventory does not type is refused");
	C(gw, "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"tools/"
	      "call\",\"params\":{\"name\":\"shell\"}}");
	take(cd_mcp_gw_to_client(gw), o, sizeof o);
	ok(strstr(o, "isError") && strstr(o, "inventory"), "an offered tool outside the policy");

	S(gw, "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"sampling/createMessage\",\"params\":{}}");
	take(cd_mcp_gw_to_server(gw), o, sizeof o);
	ok(strstr(o, "denied by policy: sampling") != NULL, "sampling from the server is refused");
	take(cd_mcp_gw_to_client(gw), o, sizeof o);
	is_str(o, "", "... and never reaches the client");
	S(gw, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"roots/list\"}");
	take(cd_mcp_gw_to_server(gw), o, sizeof o);
	ok(strstr(o, "\"error\"") != NULL, "roots/list is answered by the gateway");
	S(gw, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"elicitation/create\",\"params\":{}}");
	take(cd_mcp_gw_to_client(gw), o, sizeof o);
	ok(strstr(o, "elicitation/create") != NULL, "elicitation passes to the client");
	C(gw, "{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{\"action\":\"decline\"}}");
	take(cd_mcp_gw_to_server(gw), o, sizeof o);
	ok(strstr(o, "decline") != NULL, "... and its answer back to the server");

	/* list_changed: the next call lists again */
	S(gw, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/tools/list_changed\"}");
	take(cd_mcp_gw_to_client(gw), o, sizeof o);
	ok(strstr(o, "list_changed") != NULL, "list_changed is forwarded");
	C(gw,
	  "{\"jsonrpc\":\"2.0\",\"id\":6,\"method\":\"tools/call\",\"params\":{\"name\":\"read\","
	  "\"arguments\":{\"path\":\"/d/x\"}}}");
	take(cd_mcp_gw_to_server(gw), o, sizeof o);
	ok(strstr(o, "\"tools/list\"") != NULL, "... and the next call waits for a fresh list");
	ok(nrec > 5, "events were recorded (%d)", nrec);
	cd_mcp_gw_free(gw);
	cd_policy_free(p);
	return tap_done();
}
