/* mcp-gw-call.c — a tools/call through the MCP gateway (mcp-gw.c): the
 * gateway's own tools/list that pins the server's tools, the decision
 * (inventory, policy, pins, temporary grants), the calls held for the
 * listing or for a person's approval.
 *
 * Trust: the client's arguments and the server's definitions are hostile;
 * a call is forwarded only when the policy allows it, its tool is pinned
 * and the audit log holds its record; every other answer is a JSON-RPC
 * error the gateway makes itself. */
#include "mcp-gw-int.h"

#include <errno.h>
#include <inttypes.h>
#include <string.h>

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

int cd_mcpgw_own_list_response(struct cd_mcp_gw *gw, struct cd_jsonrpc_msg *m)
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

void cd_mcpgw_held_release(struct held_approval *h)
{
	json_decref(h->id);
	free(h->raw);
	free(h->tool);
	free(h->policy_tool);
	free(h->grant_ids);
}

int cd_mcpgw_held_cancel(struct cd_mcp_gw *gw, const char *key)
{
	char k[CD_JSONRPC_IDKEY_MAX], text[160];
	struct held_approval *h;
	struct cd_mcp_event ev;
	size_t i;

	for (i = 0; i < gw->nappr; i++)
		if (cd_jsonrpc_idkey(gw->appr[i].id, k) == 0 && !strcmp(k, key))
			break;
	if (i == gw->nappr)
		return 0;
	h = &gw->appr[i];
	snprintf(text, sizeof text, "not approved: the client cancelled the call (%s withdrawn)",
	         h->approval_id);
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
	ev.verdict = "deny";
	ev.reason = text;
	cd_mcpgw_record(gw, &ev);
	if (gw->cfg.ops->approval_withdraw)
		gw->cfg.ops->approval_withdraw(gw->cfg.ctx, h->approval_id,
		                               "the client cancelled the call");
	cd_mcpgw_held_release(h);
	gw->appr[i] = gw->appr[--gw->nappr];
	return 1;
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

/* The record of a tools/call, before its decision: the tool and the hash of
 * its arguments in canonical form. */
static void call_event_init(struct cd_mcp_event *ev, const char *full, json_t *args,
                            char args_sha[65])
{
	struct cd_buf canon;

	memset(ev, 0, sizeof *ev);
	ev->kind = CD_MCP_EV_CALL;
	ev->direction = "client";
	ev->method = "tools/call";
	ev->tool = full;
	ev->args = args;
	cd_buf_init(&canon, CD_JSONRPC_LINE_MAX);
	if (args && cd_mcp_canonical(args, &canon) == 0) {
		cd_mcp_sha256_hex(canon.data, canon.len, args_sha);
		ev->args_sha256 = args_sha;
		ev->args_bytes = canon.len;
	}
	cd_buf_release(&canon);
}

/* Decide, taking a use of each temporary grant the decision rests on (again
 * when one was revoked meanwhile); a deny says which grant is gone. */
static void decide_with_temp(struct cd_mcp_gw *gw, const struct cd_request *req, int64_t now,
                             struct cd_decision *dec, struct cd_err *err)
{
	const char *dropped = NULL;
	int tries;

	for (tries = 0;; tries++) {
		cd_policy_decide(gw->cfg.policy, req, dec, err);
		if (!cd_mcpgw_check_temp_uses(gw, dec, now, tries < 8, &dropped))
			break;
	}
	if (dropped && dec->verdict == CD_VERDICT_DENY) {
		/* Say why a grant that was there is not any more. */
		char was[sizeof dec->reason];
		size_t k, wn;
		memcpy(was, dec->reason, sizeof was);
		snprintf(dec->reason, sizeof dec->reason,
		         "temporary grant '%.64s' was revoked or has ended; ", dropped);
		k = strlen(dec->reason);
		wn = strnlen(was, sizeof dec->reason - k - 1);
		memcpy(dec->reason + k, was, wn);
		dec->reason[k + wn] = '\0';
	}
}

/* An approver rule (approval: policy:NAME) decides now, like a grant: 1 when
 * it approves (dec becomes an allow), 0 when not, with the reason in text. */
static int approver_decides(struct cd_mcp_gw *gw, const struct cd_request *req,
                            struct cd_decision *dec, char *text, size_t tn)
{
	char why[256];
	int r;

	if (cd_policy_approver_check(gw->cfg.policy, dec->approval + 7, req, NULL, why,
	                             sizeof why) == 1) {
		dec->verdict = CD_VERDICT_ALLOW;
		snprintf(dec->reason, sizeof dec->reason, "approved by %s: %.128s", dec->approval,
		         why);
		return 1;
	}
	r = snprintf(text, tn, "not approved by %s: %s", dec->approval, why);
	if (r <= 0)
		snprintf(text, tn, "not approved");
	return 0;
}

/* An allowed call is in flight until its result comes: the result is matched
 * to it, minimized as its grants require, and recorded. */
static int track_call(struct cd_mcp_gw *gw, const json_t *id, const char *full,
                      const struct cd_request *req, const char *ids, const struct cd_decision *dec)
{
	char key[CD_JSONRPC_IDKEY_MAX];
	struct pending *p;

	if (cd_jsonrpc_idkey(id, key) < 0 ||
	    !(p = cd_mcpgw_table_add(&gw->client_req, key, P_CALL)))
		return -1;
	p->start_ms = cd_mcpgw_now_ms(gw);
	p->tool = strdup(full);
	p->policy_tool = strdup(req->tool);
	p->grant_ids = strdup(ids);
	p->action = cd_action_name(req->action);
	p->batch = gw->cur_batch;
	cd_mcp_minimize_from(&p->mz, dec);
	return 0;
}

/* The call goes to the server as the exact bytes the client sent (a batch
 * element: as its own line). */
static int send_call(struct cd_mcp_gw *gw, json_t *msg, const char *raw, size_t rawlen)
{
	size_t n = 0;
	char *line;
	int r;

	if (raw)
		return cd_mcpgw_out_line(&gw->to_server, raw, rawlen);
	line = cd_jsonrpc_dump_line(msg, &n);
	if (!line)
		return -ENOMEM;
	r = cd_mcpgw_out(&gw->to_server, line, n);
	free(line);
	return r;
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
	char full[300], text[600], ids[1024] = "", args_sha[65] = "";
	int64_t now;
	int r;

	gw->stats.calls++;
	r = snprintf(full, sizeof full, "%s/%s", gw->cfg.server, name);
	if (r < 0 || (size_t)r >= sizeof full)
		return deny_call(gw, id, "denied by policy: tool name too long");
	call_event_init(&ev, full, args, args_sha);
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
	decide_with_temp(gw, &mr.req, now, &dec, &err);
	join_ids(&dec, ids, sizeof ids);
	ev.policy_tool = mr.req.tool;
	ev.action = cd_action_name(mr.req.action);
	ev.dec = &dec;
	ev.verdict = cd_verdict_name(dec.verdict);
	ev.grant_ids = ids;
	ev.attrs = mr.stored;
	if (dec.verdict == CD_VERDICT_NEEDS_APPROVAL && dec.approval &&
	    !strncmp(dec.approval, "policy:", 7)) {
		if (approver_decides(gw, &mr.req, &dec, text, sizeof text)) {
			ev.verdict = "allow";
		} else {
			ev.verdict = "deny";
			ev.reason = text;
			cd_mcpgw_record(gw, &ev);
			cd_mcp_request_release(&mr);
			return deny_call(gw, id, text);
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
	if (track_call(gw, id, full, &mr.req, ids, &dec) < 0) {
		cd_mcp_request_release(&mr);
		return deny_call(gw, id, "denied: too many requests in flight");
	}
	cd_mcp_request_release(&mr);
	gw->stats.allowed++;
	return send_call(gw, msg, raw, rawlen);
}

int cd_mcpgw_client_call(struct cd_mcp_gw *gw, struct cd_jsonrpc_msg *m, const char *line,
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
