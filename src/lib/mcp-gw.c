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
#include "mcp.h"

#include "bounds.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

static int64_t cd_mcpgw_now_ms(struct cd_mcp_gw *gw)
{
	return gw->cfg.ops && gw->cfg.ops->now_ms ? gw->cfg.ops->now_ms(gw->cfg.ctx) : 0;
}

/* The time a decision is made at: now, not when the session started. */
static int64_t cd_mcpgw_wall_s(struct cd_mcp_gw *gw)
{
	return gw->cfg.ops && gw->cfg.ops->wall_s ? gw->cfg.ops->wall_s(gw->cfg.ctx) : gw->cfg.now;
}

/* Every temporary grant the decision rests on (its own, and those behind a
 * delegating parent) must still be in force in the state database: each
 * use is counted there.  Returns 1 when one was revoked or has ended and
 * the session has taken it out of the policy (decide again: a written
 * grant may still allow the call), else 0 with the decision as it stands
 * (turned into a deny when a grant could not be checked). */
static int cd_mcpgw_check_temp_uses(struct cd_mcp_gw *gw, struct cd_decision *dec, int64_t now,
                                    int retry, const char **ret_dropped)
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

static int cd_mcpgw_record(struct cd_mcp_gw *gw, const struct cd_mcp_event *ev)
{
	if (!gw->cfg.ops || !gw->cfg.ops->record)
		return 0;
	return gw->cfg.ops->record(gw->cfg.ctx, ev);
}

static void cd_mcpgw_protocol_event(struct cd_mcp_gw *gw, const char *dir, const char *method,
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

static int cd_mcpgw_out(struct cd_buf *b, const char *p, size_t n)
{
	int r = cd_buf_append(b, p, n);
	return r == -CD_E_LIMIT ? -ENOBUFS : r;
}

static int cd_mcpgw_out_line(struct cd_buf *b, const char *p, size_t n)
{
	int r = cd_mcpgw_out(b, p, n);
	return r ? r : cd_mcpgw_out(b, "\n", 1);
}

static int cd_mcpgw_out_owned(struct cd_buf *b, char *s, size_t n)
{
	int r;

	if (!s)
		return -ENOMEM;
	r = cd_mcpgw_out(b, s, n);
	free(s);
	return r;
}

static int cd_mcpgw_reply_error(struct cd_buf *b, const json_t *id, int code, const char *msg)
{
	size_t n = 0;
	char *s = cd_jsonrpc_error_line(id, code, msg, &n); /* sets n: not in the call */

	return cd_mcpgw_out_owned(b, s, n);
}

/* A tool result the model can read: {content:[{type:text,text}],isError}. */
static int cd_mcpgw_reply_tool_error(struct cd_buf *b, const json_t *id, const char *text)
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
static int cd_mcpgw_batch_maybe_flush(struct cd_mcp_gw *gw, struct batch *b)
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
static void cd_mcpgw_reply_begin(struct cd_mcp_gw *gw, unsigned bid)
{
	struct batch *b = batch_find(gw, bid);

	gw->cur_batch = b ? bid : 0;
	gw->reply = b ? &b->buf : &gw->to_client;
	gw->reply_mark = gw->reply->len;
}

/* The answer to one request (id) of the current batch is made, or not
 * yet; `counted`: the request is one the batch waits for.  Returns r, or
 * the error of answering the batch. */
static int cd_mcpgw_reply_end(struct cd_mcp_gw *gw, const json_t *id, int r, int counted)
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
static int cd_mcpgw_batch_forget(struct cd_mcp_gw *gw, unsigned bid)
{
	struct batch *b = batch_find(gw, bid);

	if (!b)
		return 0;
	if (b->outstanding)
		b->outstanding--;
	return cd_mcpgw_batch_maybe_flush(gw, b);
}

/* ---- tables of requests in flight ------------------------------------ */

static struct pending *cd_mcpgw_table_find(struct table *t, const char *key)
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

static void cd_mcpgw_table_remove(struct table *t, struct pending *p)
{
	size_t i = (size_t)(p - t->v);

	pending_release(p);
	t->v[i] = t->v[t->n - 1];
	t->n--;
}

static struct pending *cd_mcpgw_table_add(struct table *t, const char *key, enum pending_kind kind)
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

static void cd_mcpgw_tools_release(struct tools *t)
{
	size_t i;

	for (i = 0; i < t->n; i++)
		free(t->v[i].name);
	free(t->v);
	memset(t, 0, sizeof *t);
}

static struct tool *cd_mcpgw_tools_find(struct tools *t, const char *name)
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
static int cd_mcpgw_tool_seen(struct cd_mcp_gw *gw, struct tools *into, json_t *def)
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

/* ---- the gateway's own tools/list ------------------------------------ */

static int send_own_list(struct cd_mcp_gw *gw, json_t *cursor)
{
	char id[48];
	json_t *msg;
	size_t n = 0;
	int k = snprintf(id, sizeof id, "%s-%" PRIu64, gw->id_prefix, gw->next_id++);

	if (k < 0 || (size_t)k >= sizeof id)
		return -EINVAL;
	msg = json_pack("{s:s,s:s,s:s,s:{}}", "jsonrpc", "2.0", "id", id, "method", "tools/list",
	                "params");
	if (!msg)
		return -ENOMEM;
	if (cursor)
		json_object_set(json_object_get(msg, "params"), "cursor", cursor);
	k = snprintf(gw->own_key, sizeof gw->own_key, "s:%s", id);
	if (k < 0 || (size_t)k >= sizeof gw->own_key) {
		json_decref(msg);
		return -EINVAL;
	}
	{
		char *s = cd_jsonrpc_dump_line(msg, &n);
		json_decref(msg);
		return cd_mcpgw_out_owned(&gw->to_server, s, n);
	}
}

static int start_listing(struct cd_mcp_gw *gw)
{
	if (gw->listing)
		return 0;
	cd_mcpgw_tools_release(&gw->building);
	gw->listing = 1;
	gw->pages = 0;
	gw->listing_generation = gw->generation;
	return send_own_list(gw, NULL);
}

static int decide_call(struct cd_mcp_gw *gw, json_t *msg, const char *line, size_t len);

static int release_held(struct cd_mcp_gw *gw, const char *fail)
{
	size_t i, n = gw->nheld;
	int r = 0;

	gw->nheld = 0;
	for (i = 0; i < n; i++) {
		json_t *m = gw->held[i];
		if (r == 0) {
			cd_mcpgw_reply_begin(gw, gw->held_batch[i]);
			if (fail) {
				gw->stats.denied++;
				r = cd_mcpgw_reply_error(gw->reply, json_object_get(m, "id"),
				                         CD_JSONRPC_INTERNAL_ERROR, fail);
			} else {
				r = decide_call(gw, m, NULL, 0);
			}
			r = cd_mcpgw_reply_end(gw, json_object_get(m, "id"), r, 1);
		}
		json_decref(m);
	}
	return r;
}

static int cd_mcpgw_own_list_response(struct cd_mcp_gw *gw, struct cd_jsonrpc_msg *m)
{
	json_t *list, *cursor;
	size_t i;
	int r;

	gw->own_key[0] = '\0';
	list = m->result ? json_object_get(m->result, "tools") : NULL;
	if (!json_is_array(list)) {
		gw->listing = 0;
		cd_mcpgw_tools_release(&gw->building);
		return release_held(gw, "cordon: the server did not list its tools; call refused");
	}
	for (i = 0; i < json_array_size(list); i++)
		if ((r = cd_mcpgw_tool_seen(gw, &gw->building, json_array_get(list, i))) < 0)
			return r;
	cursor = json_object_get(m->result, "nextCursor");
	if (json_is_string(cursor) && ++gw->pages < CD_MCP_PAGES_MAX)
		return send_own_list(gw, cursor);
	if (cursor && !json_is_null(cursor)) {
		gw->listing = 0;
		cd_mcpgw_tools_release(&gw->building);
		return release_held(gw, "cordon: the server's tool list did not end; call refused");
	}
	gw->listing = 0;
	cd_mcpgw_tools_release(&gw->tools);
	gw->tools = gw->building;
	memset(&gw->building, 0, sizeof gw->building);
	/* A list_changed during the listing: list again before deciding. */
	if (gw->listing_generation != gw->generation)
		return start_listing(gw);
	gw->tools_fresh = 1;
	return release_held(gw, NULL);
}

/* ---- tools/call ------------------------------------------------------- */

static int deny_call(struct cd_mcp_gw *gw, json_t *id, const char *text)
{
	gw->stats.denied++;
	return cd_mcpgw_reply_tool_error(gw->reply, id, text);
}

static void join_ids(const struct cd_decision *d, char *outs, size_t cap)
{
	size_t i, used = 0;

	outs[0] = '\0';
	for (i = 0; i < d->nids; i++) {
		int n = snprintf(outs + used, cap - used, "%s%s", i ? "," : "", d->ids[i]);
		if (n < 0 || (size_t)n >= cap - used)
			break;
		used += (size_t)n;
	}
}

/* Queue a call that needs a person; 0 held (text says so), else a
 * refusal in text. */
static int hold_call(struct cd_mcp_gw *gw, json_t *id, const char *raw, size_t rawlen, json_t *msg,
                     json_t *args, const char *full, const char *policy_tool, const char *action,
                     const char *ids, const char *args_sha, const struct cd_decision *dec,
                     char *text, size_t tn)
{
	struct held_approval *h;
	struct cd_buf canon;
	int r;

	if (!gw->cfg.ops || !gw->cfg.ops->approval_request || !gw->cfg.ops->approval_poll) {
		snprintf(text, tn, "needs approval: %s (grant %s); no approval queue here", full,
		         dec->nids ? dec->ids[0] : "?");
		return -EPERM;
	}
	if (gw->nappr >= CD_MCP_APPROVALS_MAX) {
		snprintf(text, tn, "needs approval: %s; too many calls already wait for one", full);
		return -EPERM;
	}
	h = &gw->appr[gw->nappr];
	memset(h, 0, sizeof *h);
	cd_buf_init(&canon, CD_JSONRPC_LINE_MAX);
	r = args ? cd_mcp_canonical(args, &canon) : cd_buf_append(&canon, "{}", 2);
	if (r == 0)
		r = cd_buf_append(&canon, "", 1) == 0 ? 0 : -ENOMEM;
	if (r < 0 || !canon.data) {
		cd_buf_release(&canon);
		snprintf(text, tn, "needs approval: %s; its arguments cannot be bound", full);
		return -EPERM;
	}
	r = gw->cfg.ops->approval_request(gw->cfg.ctx, full, action, canon.data, ids, dec,
	                                  h->approval_id);
	cd_buf_release(&canon);
	if (r < 0) {
		snprintf(text, tn, "needs approval: %s; the request could not be queued", full);
		return -EPERM;
	}
	h->id = json_incref(id);
	h->tool = strdup(full);
	h->policy_tool = strdup(policy_tool);
	h->grant_ids = strdup(ids);
	h->action = action;
	h->batch = gw->cur_batch;
	cd_mcp_minimize_from(&h->mz, dec);
	snprintf(h->args_sha256, sizeof h->args_sha256, "%s", args_sha);
	if (raw) {
		h->raw = malloc(rawlen ? rawlen : 1);
		if (h->raw)
			memcpy(h->raw, raw, rawlen);
		h->rawlen = rawlen;
	} else {
		h->raw = cd_jsonrpc_dump_line(msg, &h->rawlen);
	}
	if (!h->tool || !h->policy_tool || !h->grant_ids || !h->raw) {
		json_decref(h->id);
		free(h->tool);
		free(h->policy_tool);
		free(h->grant_ids);
		free(h->raw);
		return -ENOMEM;
	}
	gw->nappr++;
	snprintf(text, tn, "held for approval %s (cordon approvals approve %s)", h->approval_id,
	         h->approval_id);
	return 0;
}

static void cd_mcpgw_held_release(struct held_approval *h)
{
	json_decref(h->id);
	free(h->raw);
	free(h->tool);
	free(h->policy_tool);
	free(h->grant_ids);
}

size_t cd_mcp_gw_held_approvals(const struct cd_mcp_gw *gw)
{
	return gw->nappr;
}

int cd_mcp_gw_poll_approvals(struct cd_mcp_gw *gw)
{
	size_t i = 0;
	int r = 0;

	while (i < gw->nappr) {
		struct held_approval *h = &gw->appr[i];
		struct cd_mcp_event ev;
		char why[256] = "", text[400];
		int v = gw->cfg.ops->approval_poll(gw->cfg.ctx, h->approval_id, why, sizeof why);
		if (v == -1) {
			i++;
			continue;
		}
		cd_mcpgw_reply_begin(gw, h->batch);
		memset(&ev, 0, sizeof ev);
		ev.kind = CD_MCP_EV_CALL;
		ev.direction = "client";
		ev.method = "tools/call";
		ev.tool = h->tool;
		ev.policy_tool = h->policy_tool;
		ev.action = h->action;
		ev.grant_ids = h->grant_ids;
		ev.args_sha256 = h->args_sha256[0] ? h->args_sha256 : NULL;
		ev.log_mask = &h->mz.mask;
		if (v == 1) {
			struct pending *p;
			char key[CD_JSONRPC_IDKEY_MAX];
			snprintf(text, sizeof text, "approved (%s)", h->approval_id);
			ev.verdict = "allow";
			ev.reason = text;
			/* The intent is durable before the server sees the call. */
			if (cd_mcpgw_record(gw, &ev) < 0) {
				r = deny_call(gw, h->id,
				              "denied: the audit log could not record the "
				              "call (no log, no call)");
			} else if (cd_jsonrpc_idkey(h->id, key) < 0 ||
			           !(p = cd_mcpgw_table_add(&gw->client_req, key, P_CALL))) {
				r = deny_call(gw, h->id, "denied: too many requests in flight");
			} else {
				p->start_ms = cd_mcpgw_now_ms(gw);
				p->tool = h->tool;
				p->policy_tool = h->policy_tool;
				p->grant_ids = h->grant_ids;
				p->action = h->action;
				p->mz = h->mz;
				p->batch = h->batch;
				h->tool = h->policy_tool = h->grant_ids = NULL;
				gw->stats.allowed++;
				r = cd_mcpgw_out_line(&gw->to_server, h->raw, h->rawlen);
			}
		} else {
			snprintf(text, sizeof text, "not approved: %s (%s)", why, h->approval_id);
			ev.verdict = "deny";
			ev.reason = text;
			cd_mcpgw_record(gw, &ev);
			r = deny_call(gw, h->id, text);
		}
		r = cd_mcpgw_reply_end(gw, h->id, r, 1);
		cd_mcpgw_held_release(h);
		gw->appr[i] = gw->appr[--gw->nappr];
		if (r < 0)
			return r;
	}
	return 0;
}

static int decide_call(struct cd_mcp_gw *gw, json_t *msg, const char *raw, size_t rawlen)
{
	json_t *id = json_object_get(msg, "id"), *params = json_object_get(msg, "params");
	const char *name = json_string_value(json_object_get(params, "name"));
	json_t *args = json_object_get(params, "arguments");
	struct cd_mcp_request mr;
	struct cd_decision dec;
	struct cd_mcp_event ev;
	struct cd_err err = { 0, "" };
	struct tool *t = cd_mcpgw_tools_find(&gw->tools, name);
	char full[300], text[600], ids[1024] = "", key[CD_JSONRPC_IDKEY_MAX], args_sha[65] = "";
	struct pending *p;
	struct cd_buf canon;
	size_t n = 0;
	int64_t now;
	const char *dropped = NULL;
	char *line;
	int r, tries;

	gw->stats.calls++;
	r = snprintf(full, sizeof full, "%s/%s", gw->cfg.server, name);
	if (r < 0 || (size_t)r >= sizeof full)
		return deny_call(gw, id, "denied by policy: tool name too long");
	memset(&ev, 0, sizeof ev);
	ev.kind = CD_MCP_EV_CALL;
	ev.direction = "client";
	ev.method = "tools/call";
	ev.tool = full;
	ev.args = args;
	cd_buf_init(&canon, CD_JSONRPC_LINE_MAX);
	if (args && cd_mcp_canonical(args, &canon) == 0) {
		cd_mcp_sha256_hex(canon.data, canon.len, args_sha);
		ev.args_sha256 = args_sha;
		ev.args_bytes = canon.len;
	}
	cd_buf_release(&canon);
	if (!t) {
		ev.verdict = "deny";
		ev.reason = "the server does not offer this tool";
		cd_mcpgw_record(gw, &ev);
		gw->stats.denied++;
		r = snprintf(text, sizeof text, "Unknown tool: %s", name);
		return cd_mcpgw_reply_error(gw->reply, id, CD_JSONRPC_INVALID_PARAMS,
		                            r > 0 ? text : "Unknown tool");
	}
	memset(&dec, 0, sizeof dec);
	if (t->pin != CD_MCP_PIN_APPROVED) {
		r = snprintf(text, sizeof text,
		             "denied by policy: the definition of tool '%s' is %s and not approved "
		             "(sha256 %.12s; an operator runs 'cordon mcp pins diff/approve')",
		             full, t->pin == CD_MCP_PIN_NEW ? "new" : "changed", t->sha256);
		ev.verdict = "deny";
		ev.reason = text;
		cd_mcpgw_record(gw, &ev);
		return deny_call(gw, id, r > 0 ? text : "denied by policy: tool not approved");
	}
	now = cd_mcpgw_wall_s(gw);
	r = cd_mcp_map_call(gw->cfg.policy, gw->cfg.agent, gw->cfg.task, gw->cfg.server, name, args,
	                    now, gw->cfg.ops ? gw->cfg.ops->resolve : NULL, gw->cfg.ctx, &mr, &err);
	if (r == -ENOMEM) {
		cd_mcp_request_release(&mr);
		return r;
	}
	if (r < 0) {
		cd_mcp_request_release(&mr);
		r = snprintf(text, sizeof text, "denied by policy: %s", err.msg);
		ev.verdict = "deny";
		ev.reason = text;
		cd_mcpgw_record(gw, &ev);
		return deny_call(gw, id, r > 0 ? text : "denied by policy");
	}
	for (tries = 0;; tries++) {
		cd_policy_decide(gw->cfg.policy, &mr.req, &dec, &err);
		if (!cd_mcpgw_check_temp_uses(gw, &dec, now, tries < 8, &dropped))
			break;
	}
	if (dropped && dec.verdict == CD_VERDICT_DENY) {
		/* Say why a grant that was there is not any more. */
		char was[sizeof dec.reason];
		size_t k, wn;
		memcpy(was, dec.reason, sizeof was);
		snprintf(dec.reason, sizeof dec.reason,
		         "temporary grant '%.64s' was revoked or has ended; ", dropped);
		k = strlen(dec.reason);
		wn = strnlen(was, sizeof dec.reason - k - 1);
		memcpy(dec.reason + k, was, wn);
		dec.reason[k + wn] = '\0';
	}
	join_ids(&dec, ids, sizeof ids);
	ev.policy_tool = mr.req.tool;
	ev.action = cd_action_name(mr.req.action);
	ev.dec = &dec;
	ev.verdict = cd_verdict_name(dec.verdict);
	ev.grant_ids = ids;
	ev.attrs = mr.stored;
	if (dec.verdict == CD_VERDICT_NEEDS_APPROVAL && dec.approval &&
	    !strncmp(dec.approval, "policy:", 7)) {
		/* An approver rule decides now, like a grant. */
		char why[256];
		if (cd_policy_approver_check(gw->cfg.policy, dec.approval + 7, &mr.req, NULL, why,
		                             sizeof why) == 1) {
			dec.verdict = CD_VERDICT_ALLOW;
			snprintf(dec.reason, sizeof dec.reason, "approved by %s: %.128s",
			         dec.approval, why);
			ev.verdict = "allow";
		} else {
			r = snprintf(text, sizeof text, "not approved by %s: %s", dec.approval,
			             why);
			ev.verdict = "deny";
			ev.reason = text;
			cd_mcpgw_record(gw, &ev);
			cd_mcp_request_release(&mr);
			return deny_call(gw, id, r > 0 ? text : "not approved");
		}
	}
	if (dec.verdict != CD_VERDICT_DENY &&
	    (dec.minimize_overflow || (cd_mask_rules_active(&dec.mask) && !gw->cfg.masker))) {
		/* The result could not be minimized as the grants require: the
		 * call never reaches the server. */
		ev.verdict = "deny";
		ev.reason = dec.minimize_overflow
		                    ? "denied: too many grants scope fields to apply them all"
		                    : "denied: the grant masks results and masking is unavailable";
		cd_mcpgw_record(gw, &ev);
		cd_mcp_request_release(&mr);
		return deny_call(gw, id, ev.reason);
	}
	if (dec.verdict == CD_VERDICT_NEEDS_APPROVAL) {
		r = hold_call(gw, id, raw, rawlen, msg, args, full, mr.req.tool,
		              cd_action_name(mr.req.action), ids, args_sha, &dec, text,
		              sizeof text);
		ev.reason = text;
		cd_mcpgw_record(gw, &ev);
		cd_mcp_request_release(&mr);
		if (r == 0)
			return 0; /* the answer comes from cd_mcp_gw_poll_approvals */
		return r == -ENOMEM ? r : deny_call(gw, id, text);
	}
	if (dec.verdict != CD_VERDICT_ALLOW) {
		r = snprintf(text, sizeof text, "denied by policy: %s", dec.reason);
		ev.reason = dec.reason;
		cd_mcpgw_record(gw, &ev);
		cd_mcp_request_release(&mr);
		return deny_call(gw, id, r > 0 ? text : "denied by policy");
	}
	ev.reason = dec.reason;
	/* The intent is durable before the server sees the call. */
	if (cd_mcpgw_record(gw, &ev) < 0) {
		cd_mcp_request_release(&mr);
		return deny_call(
		        gw, id,
		        "denied: the audit log could not record the call (no log, no call)");
	}
	if (cd_jsonrpc_idkey(id, key) < 0 ||
	    !(p = cd_mcpgw_table_add(&gw->client_req, key, P_CALL))) {
		cd_mcp_request_release(&mr);
		return deny_call(gw, id, "denied: too many requests in flight");
	}
	p->start_ms = cd_mcpgw_now_ms(gw);
	p->tool = strdup(full);
	p->policy_tool = strdup(mr.req.tool);
	p->grant_ids = strdup(ids);
	p->action = cd_action_name(mr.req.action);
	p->batch = gw->cur_batch;
	cd_mcp_minimize_from(&p->mz, &dec);
	cd_mcp_request_release(&mr);
	gw->stats.allowed++;
	if (raw)
		return cd_mcpgw_out_line(&gw->to_server, raw, rawlen);
	line = cd_jsonrpc_dump_line(msg, &n);
	if (!line)
		return -ENOMEM;
	r = cd_mcpgw_out(&gw->to_server, line, n);
	free(line);
	return r;
}

static int cd_mcpgw_client_call(struct cd_mcp_gw *gw, struct cd_jsonrpc_msg *m, const char *line,
                                size_t len)
{
	json_t *name = json_object_get(m->params, "name");
	json_t *args = json_object_get(m->params, "arguments");

	if (!json_is_object(m->params) || !json_is_string(name) ||
	    !cd_mcp_tool_name_valid(json_string_value(name), json_string_length(name)) ||
	    (args && !json_is_object(args))) {
		gw->stats.malformed++;
		cd_mcpgw_protocol_event(gw, "client", "tools/call", "malformed tools/call params");
		return cd_mcpgw_reply_error(
		        gw->reply, m->id, CD_JSONRPC_INVALID_PARAMS,
		        "tools/call needs params {name: a tool name, arguments?: an "
		        "object}");
	}
	if (gw->tools_fresh)
		return decide_call(gw, m->root, line, len);
	if (gw->nheld >= CD_MCP_HELD_MAX) {
		gw->stats.denied++;
		return cd_mcpgw_reply_error(gw->reply, m->id, CD_JSONRPC_INTERNAL_ERROR,
		                            "cordon: too many calls waiting for the tool list");
	}
	gw->held_batch[gw->nheld] = gw->cur_batch;
	gw->held[gw->nheld++] = json_incref(m->root);
	return start_listing(gw);
}

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
