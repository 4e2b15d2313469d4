/* gate-mcp.c — records for MCP traffic (gate-mcp.h). */
#include "gate-mcp.h"

#include "mask/logmask.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static const char *kind_name(enum cd_mcp_event_kind k)
{
	switch (k) {
	case CD_MCP_EV_CALL:
		return "mcp.call";
	case CD_MCP_EV_RESULT:
		return "mcp.result";
	case CD_MCP_EV_SERVER:
		return "mcp.server-request";
	case CD_MCP_EV_PROTOCOL:
		return "mcp.protocol";
	}
	return "mcp.protocol";
}

/* Arguments larger than this are kept as their commitment or hash only. */
#define ARGS_KEPT_MAX (16 * 1024)

/* lazy: the record follows a durable intent (a result) or starts nothing
 * (a refusal): committed now, fsynced with the next intent or at the end
 * of the session (cd_audit_sync), off the call's critical path.  `mask`:
 * the rules that minimize it (NULL: none). */
static int append(const struct cd_gate *g, struct cd_record *rec, json_t *details,
                  const struct cd_mask_rules *mask, int lazy, struct cd_err *err)
{
	json_t *keep = NULL;
	char *d;
	int r;

	if (mask && (r = cd_logmask_record(g->masker, mask, rec, details, &keep)) < 0)
		return cd_err_set(err, r, "mcp record: could not be masked: %s", cd_strerror(r));
	d = json_dumps(details, JSON_COMPACT | JSON_SORT_KEYS);
	if (!d) {
		json_decref(keep);
		return cd_err_set(err, -ENOMEM, "mcp record: out of memory");
	}
	rec->details_json = d;
	r = lazy ? cd_audit_append_lazy(g->audit, rec, err)
	         : cd_audit_append(g->audit, rec, NULL, err);
	free(d);
	json_decref(keep);
	return r;
}

/* The call's arguments, kept when their canonical form (measured when it
 * was hashed) is small enough; a copy, as masking works on it in place. */
static void add_arguments(json_t *d, json_t *args, size_t bytes)
{
	if (bytes && bytes <= ARGS_KEPT_MAX)
		json_object_set_new(d, "arguments", json_deep_copy(args));
	else
		json_object_set_new(d, "arguments_omitted_bytes", json_integer((json_int_t)bytes));
}

int cd_gate_mcp_event(const struct cd_gate *g, const char *session_id, const char *agent,
                      const char *task, const struct cd_mcp_event *ev, struct cd_err *err)
{
	struct cd_record rec;
	struct cd_mask_rules rules;
	json_t *d;
	int r;

	if (!g || !g->audit)
		return cd_err_set(err, -EINVAL, "no audit log: no call");
	if (ev->log_mask)
		rules = *ev->log_mask;
	else
		cd_gate_log_rules(g, ev->dec, &rules);
	memset(&rec, 0, sizeof rec);
	rec.kind = kind_name(ev->kind);
	rec.run_id = session_id;
	rec.agent = agent;
	rec.task = task;
	rec.tool = ev->tool;
	rec.action = ev->action;
	rec.target = ev->method;
	rec.decision = ev->verdict;
	rec.grant_ids = ev->grant_ids && ev->grant_ids[0] ? ev->grant_ids : NULL;
	rec.reason = ev->reason;
	if (ev->kind == CD_MCP_EV_RESULT) {
		rec.has_duration = 1;
		rec.duration_ms = ev->duration_ms;
		rec.stdout_sha256 = ev->result_sha256;
	}
	d = json_object();
	if (!d)
		return cd_err_set(err, -ENOMEM, "mcp record: out of memory");
	if (ev->direction)
		json_object_set_new(d, "from", json_string(ev->direction));
	if (ev->policy_tool)
		json_object_set_new(d, "policy_tool", json_string(ev->policy_tool));
	if (ev->attrs)
		json_object_set_new(d, "attributes", json_deep_copy(ev->attrs));
	if (ev->args && ev->kind == CD_MCP_EV_CALL)
		add_arguments(d, ev->args, ev->args_bytes);
	if (ev->args_sha256)
		json_object_set_new(d, "arguments_sha256", json_string(ev->args_sha256));
	if (ev->result_sha256)
		json_object_set_new(d, "result_sha256", json_string(ev->result_sha256));
	if (ev->kind == CD_MCP_EV_RESULT)
		json_object_set_new(d, "is_error", json_boolean(ev->is_error));
	if (ev->dec && ev->dec->forbidden)
		json_object_set_new(d, "forbidden", json_true());
	if (g->policy)
		json_object_set_new(d, "policy_sha256", json_string(cd_policy_sha256(g->policy)));
	r = append(g, &rec, d, &rules,
	           ev->kind == CD_MCP_EV_RESULT || ev->kind == CD_MCP_EV_PROTOCOL ||
	                   (ev->kind == CD_MCP_EV_CALL &&
	                    (!ev->verdict || strcmp(ev->verdict, "allow") != 0)),
	           err);
	json_decref(d);
	return r;
}

int cd_gate_mcp_pin(const struct cd_gate *g, const char *session_id, const char *agent,
                    const char *server, const char *tool, const char *sha256, const char *state,
                    int shadowed, struct cd_err *err)
{
	struct cd_record rec;
	char full[300];
	json_t *d;
	int r, n = snprintf(full, sizeof full, "%s/%s", server, tool);

	if (!g || !g->audit)
		return cd_err_set(err, -EINVAL, "no audit log");
	if (n < 0 || (size_t)n >= sizeof full)
		return cd_err_set(err, -CD_E_LIMIT, "tool name too long");
	memset(&rec, 0, sizeof rec);
	rec.kind = "mcp.pin";
	rec.run_id = session_id;
	rec.agent = agent;
	rec.tool = full;
	rec.decision = "pending";
	rec.reason = !strcmp(state, "changed")
	                     ? "the tool's definition changed: blocked until re-approved"
	                     : "a new tool: blocked until approved";
	d = json_pack("{s:s,s:s,s:i}", "sha256", sha256, "state", state, "shadowed_by", shadowed);
	if (!d)
		return cd_err_set(err, -ENOMEM, "mcp record: out of memory");
	r = append(g, &rec, d, NULL, 0, err);
	json_decref(d);
	return r;
}
