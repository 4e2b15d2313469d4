/* cmd-mcp-held.c — `cordon mcp`'s held calls: a call whose grant needs
 * approval is queued in the state database with its record, and polled
 * until an approver answers (checked against the run's own policy and,
 * when the approver has a key, the decision's signature) or it expires.
 * Split from cmd-mcp.c, whose job is the gateway's loop. */
#include "cli.h"
#include "cmd-mcp-int.h"
#include "gate/gate-approval.h"
#include "policy/policy.h"
#include "util/util.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

/* Queue a held call in the state database, with its record, in one step
 * (approval.h); the client's other messages keep flowing meanwhile. */
int mcp_approval_request(void *ctx, const char *tool, const char *action, const char *args_json,
                         const char *grant_ids, const struct cd_decision *dec, char ret_id[40])
{
	struct session *s = ctx;
	struct cd_approval a;
	struct cd_err err = { 0, "" };
	char requester[128], *log_args;
	size_t i;
	int r;

	for (i = 0; i < CD_MCP_APPROVALS_MAX && s->held[i].id[0]; i++)
		;
	if (i == CD_MCP_APPROVALS_MAX)
		return -1;
	snprintf(requester, sizeof requester, "{\"front_end\":\"mcp\",\"pid\":%ld,\"uid\":%ld}",
	         (long)getpid(), (long)getuid());
	memset(&a, 0, sizeof a);
	a.agent = s->agent;
	a.task = s->task;
	a.tool = tool;
	a.action = action;
	a.args_json = args_json;
	a.grant_ids = grant_ids && *grant_ids ? grant_ids : NULL;
	a.approval = dec->approval ? dec->approval : "human";
	a.profile = dec->profile;
	a.policy = s->policy_path;
	a.policy_sha256 = cd_policy_sha256(s->policy);
	a.requester = requester;
	a.run_id = s->run_id;
	a.created = (int64_t)time(NULL);
	a.deadline = a.created + s->approval_timeout_s;
	log_args = cd_gate_approval_log_args(&s->gate, dec, tool, action, args_json, &r);
	if (r < 0) {
		cli_errorf("approval: the call's arguments could not be masked for the log");
		return -1;
	}
	a.log_args = log_args;
	if (cd_state_begin(s->state, &err) < 0 || cd_approval_request(s->state, &a, &err) < 0 ||
	    cd_gate_approval_record(s->audit, "approval.request", &a, NULL, dec->reason, &err) <
	            0 ||
	    cd_state_commit(s->state, &err) < 0) {
		cd_state_rollback(s->state);
		cli_errorf("approval: %s", err.msg);
		free(log_args);
		return -1;
	}
	free(log_args);
	memcpy(s->held[i].id, a.id, sizeof s->held[i].id);
	memcpy(s->held[i].sha256, a.args_sha256, sizeof s->held[i].sha256);
	memcpy(ret_id, a.id, 40);
	cli_errorf("held for approval %s (tool %s): 'cordon approvals approve %s'", a.id, tool,
	           a.id);
	return 0;
}

struct poll_ctx {
	int status; /* 1 approved, 0 denied, 2 expired or used, -1 pending, 3 refused */
	int64_t deadline;
	char by[128], comment[320];
	const struct session *s;
};

static int poll_cb(const struct cd_approval *a, void *ctx)
{
	struct poll_ctx *c = ctx;

	c->status = !strcmp(a->status, "approved")  ? 1
	            : !strcmp(a->status, "denied")  ? 0
	            : !strcmp(a->status, "pending") ? -1
	                                            : 2;
	c->deadline = a->deadline;
	snprintf(c->by, sizeof c->by, "%s", a->decided_by ? a->decided_by : "");
	snprintf(c->comment, sizeof c->comment, "%s", a->comment ? a->comment : "");
	if (c->status == 1 &&
	    !cd_gate_approval_answer_ok(c->s->audit, c->s->policy, c->s->state, a, c->s->agent,
	                                c->comment, sizeof c->comment))
		c->status = 3;
	return 0;
}

static int used_cb(const struct cd_approval *a, void *ctx)
{
	struct session *s = ctx;
	struct cd_err err = { 0, "" };

	return cd_gate_approval_record(s->audit, "approval.used", a, NULL,
	                               "the approved call goes to the server", &err) < 0
	               ? -EIO
	               : 0;
}

int mcp_approval_poll(void *ctx, const char *id, char *why, size_t wn)
{
	struct session *s = ctx;
	struct cd_err err = { 0, "" };
	struct poll_ctx c = { .status = -1, .s = s };
	int64_t now = (int64_t)time(NULL);
	size_t i;
	int v;

	for (i = 0; i < CD_MCP_APPROVALS_MAX && strcmp(s->held[i].id, id); i++)
		;
	if (i == CD_MCP_APPROVALS_MAX) {
		snprintf(why, wn, "unknown approval");
		return 0;
	}
	if (cd_approval_get(s->state, id, poll_cb, &c, &err) < 0) {
		snprintf(why, wn, "%s", err.msg);
		v = 0;
	} else if (c.status == -1 && now < c.deadline) {
		return -1;
	} else if (c.status == -1) {
		cd_gate_approvals_expire(s->audit, s->state, now, &err);
		snprintf(why, wn, "no answer before the deadline");
		v = 0;
	} else if (c.status == 1) {
		/* Used once, here, after the stored call is checked against ours. */
		v = cd_approval_consume(s->state, id, s->held[i].sha256, now, used_cb, s, &err) ==
		    0;
		if (!v)
			snprintf(why, wn, "%s", err.msg);
	} else {
		const char *w[] = { "denied", "", "expired", "refused: approved" };
		snprintf(why, wn, "%s by %s%s%.250s", w[c.status], c.by[0] ? c.by : "?",
		         c.comment[0] ? ": " : "", c.comment);
		v = 0;
	}
	s->held[i].id[0] = '\0';
	return v;
}

struct withdraw_ctx {
	struct session *s;
	const char *why;
};

static int withdrawn_cb(const struct cd_approval *a, void *ctx)
{
	struct withdraw_ctx *c = ctx;
	struct cd_err err = { 0, "" };

	return cd_gate_approval_record(c->s->audit, "approval.withdrawn", a, NULL, c->why, &err) < 0
	               ? -EIO
	               : 0;
}

int mcp_approval_withdraw(void *ctx, const char *id, const char *why)
{
	struct session *s = ctx;
	struct withdraw_ctx c = { s, why };
	struct cd_err err = { 0, "" };
	size_t i;
	int r;

	for (i = 0; i < CD_MCP_APPROVALS_MAX && strcmp(s->held[i].id, id); i++)
		;
	if (i == CD_MCP_APPROVALS_MAX)
		return -ENOENT;
	s->held[i].id[0] = '\0'; /* never polled, never used, whatever follows */
	r = cd_approval_withdraw(s->state, id, "cordon", why, (int64_t)time(NULL), withdrawn_cb, &c,
	                         &err);
	if (r < 0)
		cli_warnf("approval %s: not withdrawn: %s", id, err.msg);
	return r;
}
