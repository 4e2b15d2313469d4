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

static const char mask_yaml[] =
        "version: 1\n"
        "agents: [{id: a, owner: o}]\n"
        "tools:\n"
        "  - {id: fs, kind: mcp, operations: {read: read}, args: {path: path}}\n"
        "grants:\n"
        "  - {id: g-crm, agent: a, tool: fs, actions: [read], scope: {paths: [/crm/**]},"
        " mask: {email: pseudonymize, card: redact}, owner: o, justification: j,"
        " review_by: 2099-01-01, expires: 2099-01-01}\n"
        "  - {id: g-rec, agent: a, tool: fs, actions: [read], scope: {paths: [/rec/**]},"
        " fields: [customer.email, id], mask: [card], owner: o, justification: j,"
        " review_by: 2099-01-01, expires: 2099-01-01}\n";

/* A gateway past initialize and its first listing. */
static struct cd_mcp_gw *mask_gw(struct cd_policy *p, struct cd_masker *m)
{
	struct cd_mcp_gw_config cfg;
	struct cd_mcp_gw *gw;
	char o[4096], resp[512], idbuf[64];
	const char *q;
	size_t n;

	memset(&cfg, 0, sizeof cfg);
	cfg.policy = p;
	cfg.agent = "a";
	cfg.server = "fs";
	cfg.ops = &ops;
	cfg.now = 1700000000;
	cfg.masker = m;
	if (cd_mcp_gw_new(&cfg, &gw) < 0)
		return NULL;
	C(gw, "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\",\"params\":{"
	      "\"protocolVersion\":\"2025-11-25\",\"capabilities\":{}}}");
	take(cd_mcp_gw_to_server(gw), o, sizeof o);
	S(gw, "{\"jsonrpc\":\"2.0\",\"id\":0,\"result\":{\"protocolVersion\":\"2025-11-25\"}}");
	take(cd_mcp_gw_to_client(gw), o, sizeof o);
	C(gw, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":"
	      "\"read\",\"arguments\":{\"path\":\"/crm/a\"}}}");
	take(cd_mcp_gw_to_server(gw), o, sizeof o);
	q = strstr(o, "\"id\":\"");
	if (!q)
		return gw;
	q += 6;
	n = (size_t)(strchr(q, '"') - q);
	memcpy(idbuf, q, n);
	idbuf[n] = '\0';
	snprintf(resp, sizeof resp,
	         "{\"jsonrpc\":\"2.0\",\"id\":\"%s\",\"result\":{\"tools\":[{\"name\":"
	         "\"read\",\"inputSchema\":{}}]}}",
	         idbuf);
	S(gw, resp);
	take(cd_mcp_gw_to_server(gw), o, sizeof o); /* call 1 forwarded */
	S(gw, "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"content\":[]}}");
	take(cd_mcp_gw_to_client(gw), o, sizeof o);
	return gw;
}

/* Call `path` with id `id`, answer with `result`, return what the client
 * gets. */
static void call(struct cd_mcp_gw *gw, int id, const char *path, const char *result, char *o,
                 size_t on)
{
	char line[4096];

	snprintf(line, sizeof line,
	         "{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":\"tools/call\",\"params\":{"
	         "\"name\":\"read\",\"arguments\":{\"path\":\"%s\"}}}",
	         id, path);
	C(gw, line);
	take(cd_mcp_gw_to_server(gw), o, on);
	snprintf(line, sizeof line, "{\"jsonrpc\":\"2.0\",\"id\":%d,\"result\":%s}", id, result);
	S(gw, line);
	take(cd_mcp_gw_to_client(gw), o, on);
}

static void test_minimize(void)
{
	static const unsigned char key[CD_MASK_KEY_BYTES] = { 7 };
	struct cd_policy *p = NULL;
	struct cd_masker *m = NULL;
	struct cd_err err = { 0, "" };
	struct cd_mcp_gw *gw;
	char o[4096], first[64] = "";
	const char *q;

	ok(cd_policy_load_buf("m", mask_yaml, sizeof mask_yaml - 1, &p, &err) == 0, "policy %s",
	   err.msg);
	ok(cd_policy_masks(p) == 1, "the policy masks");
	ok(cd_masker_new(key, &m, &err) == 0, "masker");
	gw = mask_gw(p, m);
	call(gw, 10, "/crm/a",
	     "{\"content\":[{\"type\":\"text\",\"text\":\"alice@example.com 4111 1111 1111 "
	     "1111\"}],\"structuredContent\":{\"who\":\"alice@example.com\"}}",
	     o, sizeof o);
	ok(!strstr(o, "alice@") && !strstr(o, "4111") && strstr(o, "<card>"),
	   "text and structuredContent masked: %s", o);
	q = strstr(o, "<email:");
	if (q)
		memcpy(first, q, 16);
	call(gw, 11, "/crm/b",
	     "{\"content\":[{\"type\":\"text\",\"text\":\"again ALICE@example.com\"}]}", o,
	     sizeof o);
	ok(first[0] && strstr(o, first), "the same address, the same pseudonym %s", first);
	call(gw, 12, "/crm/a",
	     "{\"content\":[{\"type\":\"image\",\"data\":\"aGk=\",\"mimeType\":\"image/"
	     "png\"}]}",
	     o, sizeof o);
	ok(!strstr(o, "aGk=") && strstr(o, "binary content withheld"), "binary content withheld");
	call(gw, 13, "/crm/a", "{\"content\":{\"type\":\"text\"}}", o, sizeof o);
	ok(strstr(o, "result withheld by cordon") && strstr(o, "\"isError\":true"),
	   "a result that cannot be masked is withheld: %s", o);
	call(gw, 14, "/rec/1",
	     "{\"content\":[{\"type\":\"text\",\"text\":\"{\\\"id\\\":1,\\\"customer\\\":"
	     "{\\\"email\\\":\\\"c@example.com\\\",\\\"card\\\":\\\"4111111111111111\\\"},"
	     "\\\"notes\\\":\\\"x\\\"}\"}],\"structuredContent\":{\"id\":1,\"notes\":\"x\"}}",
	     o, sizeof o);
	ok(strstr(o, "c@example.com") && !strstr(o, "4111") && !strstr(o, "notes"),
	   "fields scoped in JSON text and structuredContent: %s", o);
	call(gw, 15, "/rec/1", "{\"content\":[{\"type\":\"text\",\"text\":\"plain\"}]}", o,
	     sizeof o);
	ok(strstr(o, "result withheld by cordon") && strstr(o, "not JSON"),
	   "fields on a text result that is not JSON: withheld");
	cd_mcp_gw_free(gw);

	gw = mask_gw(p, NULL);
	call(gw, 20, "/crm/a", "{\"content\":[]}", o, sizeof o);
	ok(strstr(o, "masking is unavailable"), "no masker: a masked grant's call is denied");
	cd_mcp_gw_free(gw);
	cd_masker_free(m);
	cd_policy_free(p);
}

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
	test_minimize();
	return tap_done();
}
