/* mcp-gw.c — the MCP gateway as a state machine (mcp.h).
 *
 * One client, one server.  Frames are checked (jsonrpc.c) before anything
 * is forwarded; what the gateway does not need to change is forwarded as
 * the exact bytes received.  Ids: the client's and the server's own ids
 * pass unchanged (each side numbers its own requests), and every request
 * in flight is tracked per direction, so a response to nothing or a
 * duplicate id is refused; requests the gateway originates (tools/list
 * pages, to pin and decide) carry ids of its own ("cordon-…"), which a
 * peer cannot know, and their responses never reach the client.
 *
 * Decisions: every tools/call is mapped through the policy's inventory and
 * decided with cd_policy_decide; a tool must also be pinned (its current
 * definition approved).  The definitions come from the server's tools/list,
 * which the gateway runs itself when it has no fresh list (at the first
 * call, and after notifications/tools/list_changed), holding the calls.
 *
 * Batches (MCP 2025-03-26 only: JSON-RPC arrays): a client's array is split
 * and each element handled exactly as a line of its own; every answer to
 * one of its requests (the server's, or the gateway's own) is collected in
 * the batch's slot, tagged through the request's entry in flight, and the
 * client gets them in one array line when the last is known.  A server's
 * array is split and forwarded element by element.  Arrays never reach
 * the other side as arrays.
 *
 * Trust: both peers are hostile; every reply the gateway makes is a
 * well-formed JSON-RPC message; nothing from a peer reaches a diagnostic
 * unescaped (the driver escapes), and nothing crashes on any input. */
#include "mcp-gw-int.h"

#include "util/bounds.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *cd_mcp_pin_name(enum cd_mcp_pin p)
{
	switch (p) {
	case CD_MCP_PIN_APPROVED:
		return "approved";
	case CD_MCP_PIN_NEW:
		return "new";
	case CD_MCP_PIN_CHANGED:
		return "changed";
	}
	return "?";
}

/* ---- small helpers --------------------------------------------------- */

int64_t cd_mcpgw_now_ms(struct cd_mcp_gw *gw)
{
	return gw->cfg.ops && gw->cfg.ops->now_ms ? gw->cfg.ops->now_ms(gw->cfg.ctx) : 0;
}

/* The time a decision is made at: now, not when the session started. */
int64_t cd_mcpgw_wall_s(struct cd_mcp_gw *gw)
{
	return gw->cfg.ops && gw->cfg.ops->wall_s ? gw->cfg.ops->wall_s(gw->cfg.ctx) : gw->cfg.now;
}

/* Every temporary grant the decision rests on (its own, and those behind a
 * delegating parent) must still be in force in the state database: each
 * use is counted there.  Returns 1 when one was revoked or has ended and
 * the session has taken it out of the policy (decide again: a written
 * grant may still allow the call), else 0 with the decision as it stands
 * (turned into a deny when a grant could not be checked). */
int cd_mcpgw_check_temp_uses(struct cd_mcp_gw *gw, struct cd_decision *dec, int64_t now, int retry,
                             const char **ret_dropped)
{
	size_t i;
	int r;

	if (dec->verdict == CD_VERDICT_DENY || !gw->cfg.ops || !gw->cfg.ops->temp_use)
		return 0;
	if (dec->temp_overflow) {
		dec->verdict = CD_VERDICT_DENY;
		snprintf(dec->reason, sizeof dec->reason,
		         "too many temporary grants behind the call to check them all");
		return 0;
	}
	for (i = 0; i < dec->ntemp_ids; i++) {
		r = gw->cfg.ops->temp_use(gw->cfg.ctx, dec->temp_ids[i], now);
		if (r == 0)
			continue;
		if (r == -CD_E_DENIED && retry) {
			*ret_dropped = dec->temp_ids[i];
			return 1;
		}
		dec->verdict = CD_VERDICT_DENY;
		snprintf(dec->reason, sizeof dec->reason,
		         r == -CD_E_DENIED
		                 ? "temporary grant '%.64s' was revoked or has ended"
		                 : "the use of temporary grant '%.64s' could not be checked",
		         dec->temp_ids[i]);
		return 0;
	}
	return 0;
}

int cd_mcpgw_record(struct cd_mcp_gw *gw, const struct cd_mcp_event *ev)
{
	if (!gw->cfg.ops || !gw->cfg.ops->record)
		return 0;
	return gw->cfg.ops->record(gw->cfg.ctx, ev);
}

void cd_mcpgw_protocol_event(struct cd_mcp_gw *gw, const char *dir, const char *method,
                             const char *reason)
{
	struct cd_mcp_event ev;

	memset(&ev, 0, sizeof ev);
	ev.kind = CD_MCP_EV_PROTOCOL;
	ev.direction = dir;
	ev.method = method;
	ev.verdict = "deny";
	ev.reason = reason;
	(void)cd_mcpgw_record(gw, &ev); /* the frame is refused either way */
}

int cd_mcpgw_out(struct cd_buf *b, const char *p, size_t n)
{
	int r = cd_buf_append(b, p, n);
	return r == -CD_E_LIMIT ? -ENOBUFS : r;
}

int cd_mcpgw_out_line(struct cd_buf *b, const char *p, size_t n)
{
	int r = cd_mcpgw_out(b, p, n);
	return r ? r : cd_mcpgw_out(b, "\n", 1);
}

int cd_mcpgw_out_owned(struct cd_buf *b, char *s, size_t n)
{
	int r;

	if (!s)
		return -ENOMEM;
	r = cd_mcpgw_out(b, s, n);
	free(s);
	return r;
}

int cd_mcpgw_reply_error(struct cd_buf *b, const json_t *id, int code, const char *msg)
{
	size_t n = 0;
	char *s = cd_jsonrpc_error_line(id, code, msg, &n); /* sets n: not in the call */

	return cd_mcpgw_out_owned(b, s, n);
}

/* A tool result the model can read: {content:[{type:text,text}],isError}. */
int cd_mcpgw_reply_tool_error(struct cd_buf *b, const json_t *id, const char *text)
{
	json_t *res = json_pack("{s:[{s:s,s:s}],s:b}", "content", "type", "text", "text", text,
	                        "isError", 1);
	size_t n = 0;
	char *s;

	if (!res)
		return -ENOMEM;
	s = cd_jsonrpc_result_line(id, res, &n);
	json_decref(res);
	return cd_mcpgw_out_owned(b, s, n);
}

/* ---- batches ----------------------------------------------------------- */

static struct batch *batch_find(struct cd_mcp_gw *gw, unsigned id)
{
	size_t i;

	for (i = 0; id && i < CD_MCP_BATCHES_MAX; i++)
		if (gw->batches[i].id == id)
			return &gw->batches[i];
	return NULL;
}

static void batch_release(struct batch *b)
{
	cd_buf_release(&b->buf);
	memset(b, 0, sizeof *b);
}

/* The batch is answered once all its requests are: one array line (none
 * when it held only notifications and responses). */
int cd_mcpgw_batch_maybe_flush(struct cd_mcp_gw *gw, struct batch *b)
{
	size_t i = 0;
	int r = 0, first = 1;

	if (b->splitting || b->outstanding)
		return 0;
	if (b->buf.len)
		r = cd_mcpgw_out(&gw->to_client, "[", 1);
	while (r == 0 && i < b->buf.len) {
		const char *nl = memchr(b->buf.data + i, '\n', b->buf.len - i);
		size_t n = nl ? (size_t)(nl - b->buf.data) - i : b->buf.len - i;
		if (!first)
			r = cd_mcpgw_out(&gw->to_client, ",", 1);
		if (r == 0)
			r = cd_mcpgw_out(&gw->to_client, b->buf.data + i, n);
		first = 0;
		i += n + 1;
	}
	if (r == 0 && b->buf.len)
		r = cd_mcpgw_out(&gw->to_client, "]\n", 2);
	batch_release(b);
	return r;
}

/* Answers made from here on go to batch bid's slot (0 or a batch that is
 * no more: to the client directly). */
void cd_mcpgw_reply_begin(struct cd_mcp_gw *gw, unsigned bid)
{
	struct batch *b = batch_find(gw, bid);

	gw->cur_batch = b ? bid : 0;
	gw->reply = b ? &b->buf : &gw->to_client;
	gw->reply_mark = gw->reply->len;
}

/* The answer to one request (id) of the current batch is made, or not
 * yet; `counted`: the request is one the batch waits for.  Returns r, or
 * the error of answering the batch. */
int cd_mcpgw_reply_end(struct cd_mcp_gw *gw, const json_t *id, int r, int counted)
{
	struct batch *b = batch_find(gw, gw->cur_batch);

	gw->cur_batch = 0;
	gw->reply = &gw->to_client;
	if (!b)
		return r;
	if (r == 0 && b->buf.len > BATCH_ANSWER_MAX) {
		b->buf.len = gw->reply_mark;
		if (b->buf.data)
			b->buf.data[b->buf.len] = '\0';
		r = cd_mcpgw_reply_error(
		        &b->buf, id, CD_JSONRPC_INTERNAL_ERROR,
		        "cordon: the batch's answer would pass 16 MiB; send this request "
		        "on its own");
	}
	if (r < 0)
		return r;
	if (counted && b->buf.len > gw->reply_mark && b->outstanding)
		b->outstanding--;
	return cd_mcpgw_batch_maybe_flush(gw, b);
}

/* A request of batch bid will not be answered any more (cancelled by the
 * client): the batch stops waiting for it. */
int cd_mcpgw_batch_forget(struct cd_mcp_gw *gw, unsigned bid)
{
	struct batch *b = batch_find(gw, bid);

	if (!b)
		return 0;
	if (b->outstanding)
		b->outstanding--;
	return cd_mcpgw_batch_maybe_flush(gw, b);
}

/* ---- tables of requests in flight ------------------------------------ */

struct pending *cd_mcpgw_table_find(struct table *t, const char *key)
{
	size_t i;

	for (i = 0; i < t->n; i++)
		if (strcmp(t->v[i].key, key) == 0)
			return &t->v[i];
	return NULL;
}

static void pending_release(struct pending *p)
{
	free(p->tool);
	free(p->policy_tool);
	free(p->grant_ids);
	free(p->method);
}

void cd_mcpgw_table_remove(struct table *t, struct pending *p)
{
	size_t i = (size_t)(p - t->v);

	pending_release(p);
	t->v[i] = t->v[t->n - 1];
	t->n--;
}

struct pending *cd_mcpgw_table_add(struct table *t, const char *key, enum pending_kind kind)
{
	struct pending *p;

	if (t->n >= CD_MCP_INFLIGHT_MAX)
		return NULL;
	if (t->n == t->alloc) {
		size_t na = t->alloc ? 2 * t->alloc : 16;
		struct pending *v = realloc(t->v, na * sizeof *v);
		if (!v)
			return NULL;
		t->v = v;
		t->alloc = na;
	}
	p = &t->v[t->n++];
	memset(p, 0, sizeof *p);
	memcpy(p->key, key, sizeof p->key);
	p->kind = kind;
	return p;
}

static void table_release(struct table *t)
{
	size_t i;

	for (i = 0; i < t->n; i++)
		pending_release(&t->v[i]);
	free(t->v);
	memset(t, 0, sizeof *t);
}

/* ---- tools ------------------------------------------------------------- */

void cd_mcpgw_tools_release(struct tools *t)
{
	size_t i;

	for (i = 0; i < t->n; i++)
		free(t->v[i].name);
	free(t->v);
	memset(t, 0, sizeof *t);
}

struct tool *cd_mcpgw_tools_find(struct tools *t, const char *name)
{
	size_t i;

	for (i = 0; i < t->n; i++)
		if (strcmp(t->v[i].name, name) == 0)
			return &t->v[i];
	return NULL;
}

/* Pin one tool definition and note whether the agent may see it.  Returns
 * 1 when visible, 0 when hidden, negative on a fatal error.  A definition
 * that cannot be pinned (bad name, duplicate) is hidden. */
int cd_mcpgw_tool_seen(struct cd_mcp_gw *gw, struct tools *into, json_t *def)
{
	json_t *name = json_object_get(def, "name");
	struct cd_buf canon;
	struct tool *t;
	enum cd_mcp_pin pin = CD_MCP_PIN_NEW;
	char sha[65];
	int r;

	if (!json_is_string(name) ||
	    !cd_mcp_tool_name_valid(json_string_value(name), json_string_length(name)))
		return 0;
	if (cd_mcpgw_tools_find(into, json_string_value(name)) || into->n >= CD_MCP_TOOLS_MAX)
		return 0; /* a second definition of one name is never shown */
	cd_buf_init(&canon, CD_JSONRPC_LINE_MAX);
	r = cd_mcp_tool_pin_form(def, &canon, sha);
	if (r < 0) {
		cd_buf_release(&canon);
		return r == -ENOMEM ? r : 0;
	}
	if (!gw->cfg.ops || !gw->cfg.ops->pin ||
	    gw->cfg.ops->pin(gw->cfg.ctx, json_string_value(name), sha, canon.data, &pin) < 0)
		pin = CD_MCP_PIN_NEW;
	cd_buf_release(&canon);
	if (into->n == into->alloc) {
		size_t na = into->alloc ? 2 * into->alloc : 32;
		struct tool *v = realloc(into->v, na * sizeof *v);
		if (!v)
			return -ENOMEM;
		into->v = v;
		into->alloc = na;
	}
	t = &into->v[into->n];
	t->name = strdup(json_string_value(name));
	if (!t->name)
		return -ENOMEM;
	memcpy(t->sha256, sha, sizeof sha);
	t->pin = pin;
	t->granted = cd_mcp_tool_granted(gw->cfg.policy, gw->cfg.agent, gw->cfg.task,
	                                 gw->cfg.server, t->name, cd_mcpgw_wall_s(gw));
	into->n++;
	return t->pin == CD_MCP_PIN_APPROVED && t->granted;
}

/* ---- life cycle -------------------------------------------------------- */

int cd_mcp_gw_new(const struct cd_mcp_gw_config *cfg, struct cd_mcp_gw **ret)
{
	struct cd_mcp_gw *gw;
	unsigned char rnd[8];
	size_t i;
	FILE *f;

	if (!cfg || !cfg->policy || !cfg->agent || !cfg->server || !ret)
		return -EINVAL;
	gw = calloc(1, sizeof *gw);
	if (!gw)
		return -ENOMEM;
	gw->cfg = *cfg;
	cd_buf_init(&gw->to_client, OUT_CAP);
	cd_buf_init(&gw->to_server, OUT_CAP);
	gw->reply = &gw->to_client;
	/* Ids of the gateway's own: unguessable, so no peer can answer them. */
	f = fopen("/dev/urandom", "rbe");
	if (!f || fread(rnd, 1, sizeof rnd, f) != sizeof rnd) {
		if (f)
			fclose(f);
		free(gw);
		return -EIO;
	}
	fclose(f);
	memcpy(gw->id_prefix, "cordon-", 7);
	for (i = 0; i < sizeof rnd; i++) {
		gw->id_prefix[7 + 2 * i] = "0123456789abcdef"[rnd[i] >> 4];
		gw->id_prefix[8 + 2 * i] = "0123456789abcdef"[rnd[i] & 15];
	}
	gw->id_prefix[7 + 2 * sizeof rnd] = '\0';
	*ret = gw;
	return 0;
}

void cd_mcp_gw_free(struct cd_mcp_gw *gw)
{
	size_t i;

	if (!gw)
		return;
	for (i = 0; i < gw->nheld; i++)
		json_decref(gw->held[i]);
	for (i = 0; i < gw->nappr; i++)
		cd_mcpgw_held_release(&gw->appr[i]);
	for (i = 0; i < CD_MCP_BATCHES_MAX; i++)
		batch_release(&gw->batches[i]);
	table_release(&gw->client_req);
	table_release(&gw->server_req);
	cd_mcpgw_tools_release(&gw->tools);
	cd_mcpgw_tools_release(&gw->building);
	cd_buf_release(&gw->to_client);
	cd_buf_release(&gw->to_server);
	free(gw);
}

struct cd_buf *cd_mcp_gw_to_client(struct cd_mcp_gw *gw)
{
	return &gw->to_client;
}

struct cd_buf *cd_mcp_gw_to_server(struct cd_mcp_gw *gw)
{
	return &gw->to_server;
}

void cd_mcp_gw_consumed(struct cd_buf *b, size_t n)
{
	if (n >= b->len) {
		cd_buf_reset(b);
		return;
	}
	memmove(b->data, b->data + n, b->len - n);
	b->len -= n;
	b->data[b->len] = '\0';
}

void cd_mcp_gw_stats(const struct cd_mcp_gw *gw, struct cd_mcp_gw_stats *ret)
{
	*ret = gw->stats;
}

int cd_mcp_gw_set_policy(struct cd_mcp_gw *gw, const struct cd_policy *p, int64_t now)
{
	static const char note[] =
	        "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/tools/list_changed\"}";
	size_t i;

	gw->cfg.policy = p;
	gw->cfg.now = now;
	for (i = 0; i < gw->tools.n; i++)
		gw->tools.v[i].granted = cd_mcp_tool_granted(
		        p, gw->cfg.agent, gw->cfg.task, gw->cfg.server, gw->tools.v[i].name, now);
	gw->generation++;
	gw->tools_fresh = 0;
	return gw->initialized ? cd_mcpgw_out_line(&gw->to_client, note, sizeof note - 1) : 0;
}
