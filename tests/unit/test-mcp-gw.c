/* test-mcp-gw.c — the JSON-RPC framing and the gateway state machine,
 * driven without processes: lines in from a fake client and server, the
 * lines out checked. */
#include "../tap.h"
#include "mcp/mcp.h"

#include <stdio.h>
#include <stdlib.h>
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
static int nrec, ncall_allow, ncall_deny, ncall_held, nresult, nprotocol;
static char last_protocol[200];
static int rec(void *ctx, const struct cd_mcp_event *ev)
{
	nrec++;
	if (ev->kind == CD_MCP_EV_CALL && !strcmp(ev->verdict, "allow"))
		ncall_allow++;
	else if (ev->kind == CD_MCP_EV_CALL && !strcmp(ev->verdict, "deny"))
		ncall_deny++;
	else if (ev->kind == CD_MCP_EV_CALL)
		ncall_held++;
	else if (ev->kind == CD_MCP_EV_RESULT)
		nresult++;
	else if (ev->kind == CD_MCP_EV_PROTOCOL) {
		nprotocol++;
		snprintf(last_protocol, sizeof last_protocol, "%s", ev->reason ? ev->reason : "");
	}
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
/* A gateway past `initialize` (protocol `version`) and its first
 * tools/call, of `path`, which made it list the server's `tools` (a JSON
 * array); the call is answered and drained. */
static struct cd_mcp_gw *ready_gw(struct cd_policy *p, const struct cd_mcp_gw_ops *gops,
                                  struct cd_masker *m, const char *version, const char *path,
                                  const char *tools)
{
	struct cd_mcp_gw_config cfg;
	struct cd_mcp_gw *gw;
	char o[4096], line[1024], idbuf[64];
	const char *q;
	size_t n;

	memset(&cfg, 0, sizeof cfg);
	cfg.policy = p;
	cfg.agent = "a";
	cfg.server = "fs";
	cfg.ops = gops;
	cfg.now = 1700000000;
	cfg.masker = m;
	if (cd_mcp_gw_new(&cfg, &gw) < 0)
		return NULL;
	snprintf(line, sizeof line,
	         "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\",\"params\":{"
	         "\"protocolVersion\":\"%s\",\"capabilities\":{}}}",
	         version);
	C(gw, line);
	take(cd_mcp_gw_to_server(gw), o, sizeof o);
	snprintf(line, sizeof line,
	         "{\"jsonrpc\":\"2.0\",\"id\":0,\"result\":{\"protocolVersion\":\"%s\"}}", version);
	S(gw, line);
	take(cd_mcp_gw_to_client(gw), o, sizeof o);
	snprintf(line, sizeof line,
	         "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":"
	         "\"read\",\"arguments\":{\"path\":\"%s\"}}}",
	         path);
	C(gw, line);
	take(cd_mcp_gw_to_server(gw), o, sizeof o);
	q = strstr(o, "\"id\":\"");
	if (!q)
		return gw;
	q += 6;
	n = (size_t)(strchr(q, '"') - q);
	memcpy(idbuf, q, n);
	idbuf[n] = '\0';
	snprintf(line, sizeof line, "{\"jsonrpc\":\"2.0\",\"id\":\"%s\",\"result\":{\"tools\":%s}}",
	         idbuf, tools);
	S(gw, line);
	take(cd_mcp_gw_to_server(gw), o, sizeof o); /* call 1 forwarded */
	S(gw, "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"content\":[]}}");
	take(cd_mcp_gw_to_client(gw), o, sizeof o);
	return gw;
}

static struct cd_mcp_gw *mask_gw(struct cd_policy *p, struct cd_masker *m)
{
	return ready_gw(p, &ops, m, "2025-11-25", "/crm/a",
	                "[{\"name\":\"read\",\"inputSchema\":{}}]");
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

/* ---- batches (MCP 2025-03-26) ----------------------------------------- */

static const char batch_yaml[] =
        "version: 1\n"
        "agents: [{id: a, owner: o}]\n"
        "tools:\n"
        "  - {id: fs, kind: mcp, operations: {read: read, write: update}, args: {path: path}}\n"
        "grants:\n"
        "  - {id: g-read, agent: a, tool: fs, actions: [read], scope: {paths: [/d/**]}, owner: o,"
        " justification: j, review_by: 2099-01-01, expires: 2099-01-01}\n"
        "  - {id: g-held, agent: a, tool: fs, actions: [update], scope: {paths: [/h/**]},"
        " approval: human, owner: o, justification: j, review_by: 2099-01-01,"
        " expires: 2099-01-01}\n";

static int appr_state = -1; /* what approval_poll answers */
static int appr_req(void *ctx, const char *tool, const char *action, const char *args,
                    const char *ids, const struct cd_decision *dec, char ret_id[40])
{
	snprintf(ret_id, 40, "ap-1");
	return 0;
}
static int appr_poll(void *ctx, const char *id, char *why, size_t wn)
{
	snprintf(why, wn, "denied by tester");
	return appr_state;
}
static int nwithdrawn;
static int appr_withdraw(void *ctx, const char *id, const char *why)
{
	nwithdrawn += !strcmp(id, "ap-1");
	return 0;
}
static const struct cd_mcp_gw_ops batch_ops = { .record = rec,
	                                        .pin = pin,
	                                        .approval_request = appr_req,
	                                        .approval_poll = appr_poll,
	                                        .approval_withdraw = appr_withdraw };

/* A gateway past initialize (the server settles on `version`) and its
 * first listing. */
static struct cd_mcp_gw *batch_gw(struct cd_policy *p, const char *version)
{
	return ready_gw(p, &batch_ops, NULL, version, "/d/a",
	                "[{\"name\":\"read\",\"inputSchema\":{}},"
	                "{\"name\":\"write\",\"inputSchema\":{}}]");
}

static size_t count_str(const char *h, const char *n)
{
	size_t k = 0;

	while ((h = strstr(h, n)) != NULL) {
		k++;
		h += strlen(n);
	}
	return k;
}

/* The client's answer is one line holding a JSON array of n objects. */
static int is_array_of(const char *o, size_t n)
{
	json_t *v;
	int good;

	if (o[0] != '[' || count_str(o, "\n") != 1)
		return 0;
	v = json_loads(o, 0, NULL);
	good = json_is_array(v) && json_array_size(v) == n;
	json_decref(v);
	return good;
}

#define RD(id, path)                                                                               \
	"{\"jsonrpc\":\"2.0\",\"id\":" #id ",\"method\":\"tools/call\",\"params\":{\"name\":"      \
	"\"read\",\"arguments\":{\"path\":\"" path "\"}}}"
#define WR(id, path)                                                                               \
	"{\"jsonrpc\":\"2.0\",\"id\":" #id ",\"method\":\"tools/call\",\"params\":{\"name\":"      \
	"\"write\",\"arguments\":{\"path\":\"" path "\"}}}"
#define PING(id) "{\"jsonrpc\":\"2.0\",\"id\":" #id ",\"method\":\"ping\"}"
#define NOTE     "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{}}"

static void test_batch(void)
{
	struct cd_policy *p = NULL;
	struct cd_err err = { 0, "" };
	struct cd_mcp_gw *gw;
	char o[8192], big[16384];
	size_t i, k;
	int a0, d0, r0, p0;

	approved_all = 1;
	ok(cd_policy_load_buf("b", batch_yaml, sizeof batch_yaml - 1, &p, &err) == 0, "policy %s",
	   err.msg);

	/* Versions without batches: one -32600 error object, nothing sent. */
	for (i = 0; i < 3; i++) {
		static const char *const v[] = { "2025-06-18", "2025-11-25", "2024-11-05" };
		gw = batch_gw(p, v[i]);
		p0 = nprotocol;
		C(gw, "[" RD(10, "/d/x") "," PING(11) "]");
		take(cd_mcp_gw_to_client(gw), o, sizeof o);
		ok(!strncmp(o, "{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32600", 49) &&
		           strstr(o, v[i]),
		   "%s: a batch is one -32600 error object naming the version: %s", v[i], o);
		take(cd_mcp_gw_to_server(gw), o, sizeof o);
		is_str(o, "", "%s: ... and nothing reaches the server", v[i]);
		ok(nprotocol == p0 + 1, "%s: ... and it is a protocol record", v[i]);
		S(gw, "[{\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{}}]");
		take(cd_mcp_gw_to_client(gw), o, sizeof o);
		is_str(o, "", "%s: a server's batch is refused (not forwarded)", v[i]);
		if (i == 0) {
			/* A request method with no id is no notification: never
			 * forwarded undecided. */
			p0 = nprotocol;
			C(gw, "{\"jsonrpc\":\"2.0\",\"method\":\"tools/call\",\"params\":{\"name\":"
			      "\"write\",\"arguments\":{\"path\":\"/d/x\"}}}");
			take(cd_mcp_gw_to_server(gw), o, sizeof o);
			is_str(o, "", "a tools/call without an id does not reach the server");
			ok(nprotocol == p0 + 1, "... and it is a protocol record");
			C(gw, NOTE);
			take(cd_mcp_gw_to_server(gw), o, sizeof o);
			ok(strstr(o, "notifications/progress") != NULL,
			   "a notification still goes on");
		}
		cd_mcp_gw_free(gw);
	}

	gw = batch_gw(p, "2025-03-26");
	/* Mixed: an allowed and a denied call, a notification, a ping. */
	a0 = ncall_allow;
	d0 = ncall_deny;
	r0 = nresult;
	C(gw, "[" RD(10, "/d/x") "," WR(11, "/d/x") "," NOTE "," PING(12) "]");
	take(cd_mcp_gw_to_server(gw), o, sizeof o);
	ok(count_str(o, "\n") == 3 && strstr(o, "\"id\":10") && strstr(o, "\"id\":12") &&
	           strstr(o, "notifications/progress") && !strstr(o, "\"id\":11") && o[0] == '{' &&
	           !strstr(o, "\n["),
	   "2025-03-26: the allowed call, the notification and the ping go to the server one "
	   "per line, the denied call does not: %s",
	   o);
	ok(ncall_allow == a0 + 1 && ncall_deny == d0 + 1,
	   "... each call decided and recorded as a single one would be");
	take(cd_mcp_gw_to_client(gw), o, sizeof o);
	is_str(o, "", "... no answer before all the batch's requests are answered");
	S(gw, "{\"jsonrpc\":\"2.0\",\"id\":12,\"result\":{}}");
	take(cd_mcp_gw_to_client(gw), o, sizeof o);
	is_str(o, "", "... still none with one answer missing");
	S(gw, "{\"jsonrpc\":\"2.0\",\"id\":10,\"result\":{\"content\":[]}}");
	take(cd_mcp_gw_to_client(gw), o, sizeof o);
	ok(is_array_of(o, 3) && strstr(o, "\"id\":10") && strstr(o, "\"id\":12") &&
	           strstr(o, "\"id\":11") && strstr(o, "denied by policy"),
	   "... then one array line with the three answers (the denial among them): %s", o);
	ok(nresult == r0 + 1, "... and the forwarded call's result is recorded");

	/* Only notifications: forwarded, never answered. */
	C(gw, "[" NOTE "," NOTE "]");
	take(cd_mcp_gw_to_server(gw), o, sizeof o);
	ok(count_str(o, "\n") == 2 && o[0] == '{', "a batch of notifications is forwarded");
	take(cd_mcp_gw_to_client(gw), o, sizeof o);
	is_str(o, "", "... and gets no answer at all");

	/* Empty, too long. */
	C(gw, "[]");
	take(cd_mcp_gw_to_client(gw), o, sizeof o);
	ok(!strncmp(o, "{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32600", 49),
	   "an empty batch: one -32600 error object, not an array: %s", o);
	k = (size_t)snprintf(big, sizeof big, "[");
	for (i = 0; i < 101; i++)
		k += (size_t)snprintf(big + k, sizeof big - k, "%s" NOTE, i ? "," : "");
	snprintf(big + k, sizeof big - k, "]");
	C(gw, big);
	take(cd_mcp_gw_to_client(gw), o, sizeof o);
	ok(!strncmp(o, "{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32600", 49) &&
	           strstr(o, "at most 100"),
	   "101 elements: the whole batch refused with one error object: %s", o);
	take(cd_mcp_gw_to_server(gw), o, sizeof o);
	is_str(o, "", "... and none of it forwarded");

	/* initialize inside a batch; a malformed element. */
	C(gw, "[{\"jsonrpc\":\"2.0\",\"id\":20,\"method\":\"initialize\",\"params\":{"
	      "\"protocolVersion\":\"2025-03-26\",\"capabilities\":{}}},1,{\"jsonrpc\":\"2.0\","
	      "\"id\":21,\"methd\":\"ping\"}]");
	take(cd_mcp_gw_to_client(gw), o, sizeof o);
	ok(is_array_of(o, 3) && strstr(o, "\"id\":20,\"error\":{\"code\":-32600") &&
	           strstr(o, "initialize must not") && count_str(o, "\"code\":-32600") == 3,
	   "initialize in a batch and malformed elements each get their own error: %s", o);
	take(cd_mcp_gw_to_server(gw), o, sizeof o);
	is_str(o, "", "... and none reaches the server");

	/* Duplicate ids: within the batch, and with a request in flight. */
	C(gw, PING(30));
	take(cd_mcp_gw_to_server(gw), o, sizeof o);
	p0 = nprotocol;
	C(gw, "[" PING(31) "," PING(31) "," PING(30) "]");
	take(cd_mcp_gw_to_server(gw), o, sizeof o);
	ok(count_str(o, "\n") == 1 && strstr(o, "\"id\":31"),
	   "duplicate ids: only the first is forwarded: %s", o);
	ok(nprotocol == p0 + 2, "... the others are protocol records (%s)", last_protocol);
	S(gw, "{\"jsonrpc\":\"2.0\",\"id\":31,\"result\":{}}");
	take(cd_mcp_gw_to_client(gw), o, sizeof o);
	ok(is_array_of(o, 3) && count_str(o, "duplicate id") == 2 && strstr(o, "\"id\":31,"),
	   "... and refused each in the batch's answer: %s", o);
	S(gw, "{\"jsonrpc\":\"2.0\",\"id\":30,\"result\":{}}");
	take(cd_mcp_gw_to_client(gw), o, sizeof o);
	ok(o[0] == '{' && strstr(o, "\"id\":30"), "the single request's answer stays single");

	/* A held call inside a batch: the batch's answer waits for it. */
	C(gw, "[" WR(40, "/h/x") "," PING(41) "]");
	take(cd_mcp_gw_to_server(gw), o, sizeof o);
	ok(strstr(o, "\"id\":41") && !strstr(o, "\"id\":40"), "a call needing approval is held");
	ok(cd_mcp_gw_held_approvals(gw) == 1, "... in the approval queue");
	S(gw, "{\"jsonrpc\":\"2.0\",\"id\":41,\"result\":{}}");
	take(cd_mcp_gw_to_client(gw), o, sizeof o);
	is_str(o, "", "... and the batch's answer waits for the person");
	C(gw, PING(40));
	take(cd_mcp_gw_to_client(gw), o, sizeof o);
	ok(strstr(o, "duplicate id") != NULL, "the held call's id is in flight (THREATS 33)");
	appr_state = -1;
	cd_mcp_gw_poll_approvals(gw);
	take(cd_mcp_gw_to_client(gw), o, sizeof o);
	is_str(o, "", "... still pending");
	appr_state = 0;
	d0 = ncall_deny;
	cd_mcp_gw_poll_approvals(gw);
	take(cd_mcp_gw_to_client(gw), o, sizeof o);
	ok(is_array_of(o, 2) && strstr(o, "not approved: denied by tester") &&
	           strstr(o, "\"id\":41"),
	   "... answered in the array once denied: %s", o);
	ok(ncall_deny == d0 + 1, "... and the refusal recorded");
	appr_state = 1;
	C(gw, "[" WR(42, "/h/y") "]");
	cd_mcp_gw_poll_approvals(gw);
	take(cd_mcp_gw_to_server(gw), o, sizeof o);
	ok(strstr(o, "\"id\":42") != NULL, "an approved call in a batch goes to the server");
	S(gw, "{\"jsonrpc\":\"2.0\",\"id\":42,\"result\":{\"content\":[]}}");
	take(cd_mcp_gw_to_client(gw), o, sizeof o);
	ok(is_array_of(o, 1) && strstr(o, "\"id\":42"), "... and its result is the batch's answer");
	appr_state = -1;

	/* A cancelled request is not waited for. */
	C(gw, "[" PING(50) "," PING(51) "]");
	S(gw, "{\"jsonrpc\":\"2.0\",\"id\":51,\"result\":{}}");
	C(gw, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\",\"params\":{"
	      "\"requestId\":50}}");
	take(cd_mcp_gw_to_client(gw), o, sizeof o);
	ok(is_array_of(o, 1) && strstr(o, "\"id\":51"), "a cancelled request is left out: %s", o);
	take(cd_mcp_gw_to_server(gw), o, sizeof o);

	/* A held call cancelled (a closed session of the HTTP front): its
	 * approval withdrawn, the call forgotten, nothing to the server even
	 * once approved. */
	C(gw, WR(60, "/h/z"));
	take(cd_mcp_gw_to_client(gw), o, sizeof o);
	ok(cd_mcp_gw_held_approvals(gw) == 1, "a held call");
	d0 = ncall_deny;
	C(gw, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\",\"params\":{"
	      "\"requestId\":60}}");
	ok(cd_mcp_gw_held_approvals(gw) == 0 && nwithdrawn == 1,
	   "cancelled: out of the queue, its approval withdrawn");
	ok(ncall_deny == d0 + 1, "... recorded as denied");
	appr_state = 1;
	cd_mcp_gw_poll_approvals(gw);
	appr_state = -1;
	take(cd_mcp_gw_to_server(gw), o, sizeof o);
	is_str(o, "", "... nothing reaches the server (not the call, not the cancellation)");
	take(cd_mcp_gw_to_client(gw), o, sizeof o);
	is_str(o, "", "... nor an answer to the client");

	/* Bounded: batches in flight. */
	for (i = 0; i < CD_MCP_BATCHES_MAX; i++) {
		snprintf(big, sizeof big, "[{\"jsonrpc\":\"2.0\",\"id\":%zu,\"method\":\"ping\"}]",
		         100 + i);
		C(gw, big);
	}
	C(gw, "[" PING(200) "]");
	take(cd_mcp_gw_to_client(gw), o, sizeof o);
	ok(o[0] == '{' && strstr(o, "too many batches"),
	   "a batch past the number in flight is refused: %s", o);
	take(cd_mcp_gw_to_server(gw), o, sizeof o);
	ok(count_str(o, "\n") == CD_MCP_BATCHES_MAX && !strstr(o, "\"id\":200"),
	   "... and not forwarded");
	for (i = 0; i < CD_MCP_BATCHES_MAX; i++) {
		snprintf(big, sizeof big, "{\"jsonrpc\":\"2.0\",\"id\":%zu,\"result\":{}}",
		         100 + i);
		S(gw, big);
	}
	take(cd_mcp_gw_to_client(gw), o, sizeof o);
	ok(count_str(o, "\n[{") == CD_MCP_BATCHES_MAX - 1 && o[0] == '[',
	   "... until those are answered, each with its array: %s", o);

	/* The answer is bounded: an answer past 16 MiB becomes an error. */
	C(gw, "[" PING(70) "," PING(71) "]");
	take(cd_mcp_gw_to_server(gw), o, sizeof o);
	{
		size_t n = 9 << 20;
		char *line = malloc(n + 64);
		struct cd_buf *tc = cd_mcp_gw_to_client(gw);
		for (k = 0; k < 2; k++) {
			int h = snprintf(line, 64,
			                 "{\"jsonrpc\":\"2.0\",\"id\":%zu,\"result\":{\"x\":\"",
			                 70 + k);
			memset(line + h, 'a', n);
			memcpy(line + h + n, "\"}}", 4);
			S(gw, line);
		}
		free(line);
		ok(tc->len > n && tc->len < 2 * n && tc->data[0] == '[' &&
		           strstr(tc->data + n, "\"id\":71,\"error\"") &&
		           strstr(tc->data + n, "would pass 16 MiB"),
		   "an answer that would take the batch past 16 MiB is replaced by an error (%zu "
		   "bytes)",
		   tc->len);
		cd_mcp_gw_consumed(tc, tc->len);
	}

	/* The server's batch: split, matched and forwarded one by one. */
	C(gw, PING(60));
	take(cd_mcp_gw_to_server(gw), o, sizeof o);
	S(gw,
	  "[{\"jsonrpc\":\"2.0\",\"id\":60,\"result\":{}},{\"jsonrpc\":\"2.0\",\"method\":"
	  "\"notifications/message\",\"params\":{}},{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":"
	  "\"sampling/createMessage\",\"params\":{}},{\"jsonrpc\":\"2.0\",\"id\":8,\"method\":"
	  "\"elicitation/create\",\"params\":{}},{\"jsonrpc\":\"2.0\",\"id\":999,\"result\":{}},"
	  "2]");
	take(cd_mcp_gw_to_client(gw), o, sizeof o);
	ok(count_str(o, "\n") == 3 && o[0] == '{' && !strstr(o, "\n[") && strstr(o, "\"id\":60") &&
	           strstr(o, "notifications/message") && strstr(o, "elicitation/create") &&
	           !strstr(o, "sampling") && !strstr(o, "999"),
	   "a server batch: the response, the notification and elicitation forwarded one per "
	   "line; sampling and a stray response not: %s",
	   o);
	take(cd_mcp_gw_to_server(gw), o, sizeof o);
	ok(count_str(o, "\n") == 1 && strstr(o, "denied by policy: sampling"),
	   "... sampling refused to the server as today: %s", o);
	C(gw, "[{\"jsonrpc\":\"2.0\",\"id\":8,\"result\":{\"action\":\"decline\"}}]");
	take(cd_mcp_gw_to_server(gw), o, sizeof o);
	ok(strstr(o, "decline") && o[0] == '{',
	   "the client's answer in a batch goes back as a line");
	take(cd_mcp_gw_to_client(gw), o, sizeof o);
	is_str(o, "", "... and a batch of only responses gets no answer");
	cd_mcp_gw_free(gw);
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

	/* Parsing memory is bounded before jansson runs: a line of "{}," or a
	 * batch past its cap is refused from the text. */
	{
		size_t k, cap = 3 * 1000002 + 64;
		char *big = malloc(cap);
		struct cd_err e = { 0, "" };
		if (big) {
			size_t at = (size_t)snprintf(big, cap, "{\"a\":[");
			for (k = 0; k < 1000001; k++) {
				memcpy(big + at, "{},", 3);
				at += 3;
			}
			memcpy(big + at, "{}]}", 4);
			at += 4;
			is_int(cd_jsonrpc_precheck(big, at, 64, &e), -CD_E_LIMIT,
			       "a message of over a million values is refused before parsing");
			at = 1;
			big[0] = '[';
			for (k = 0; k < 101; k++) {
				memcpy(big + at, "{},", 3);
				at += 3;
			}
			big[at - 1] = ']';
			is_int(cd_jsonrpc_precheck(big, at, 64, &e), -CD_E_LIMIT,
			       "a batch of 101 elements is refused before parsing");
			is_int(cd_jsonrpc_precheck("[{},{}]", 7, 64, &e), 0,
			       "a small batch passes");
			free(big);
		}
	}

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
	test_batch();
	return tap_done();
}
