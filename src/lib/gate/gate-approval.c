/* gate-approval.c — see gate-approval.h. */
#include "gate-approval.h"

#include "approval-sign.h"
#include "mask/logmask.h"
#include "policy/temp-grant.h"

#include <errno.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

char *cd_gate_run_args_json(const struct cd_run_request *rq, const char *profile)
{
	json_t *o = json_object(), *argv = json_array();
	char *s;
	size_t i;

	if (!o || !argv) {
		json_decref(o);
		json_decref(argv);
		return NULL;
	}
	for (i = 0; rq->argv[i]; i++) {
		/* Bytes that are not UTF-8 still bind: jansson refuses them, so
		 * such an argument is stored hex-escaped, unambiguously. */
		json_t *v = json_string(rq->argv[i]);
		if (!v) {
			size_t n = strlen(rq->argv[i]), k;
			char *hex = malloc(2 * n + 5);
			if (!hex)
				break;
			memcpy(hex, "hex:", 4);
			for (k = 0; k < n; k++)
				snprintf(hex + 4 + 2 * k, 3, "%02x", (unsigned char)rq->argv[i][k]);
			v = json_string(hex);
			free(hex);
		}
		json_array_append_new(argv, v);
	}
	json_object_set_new(o, "argv", argv);
	json_object_set_new(o, "cwd", json_string(rq->cwd ? rq->cwd : ""));
	json_object_set_new(o, "profile", profile ? json_string(profile) : json_null());
	s = json_dumps(o, JSON_COMPACT | JSON_SORT_KEYS | JSON_ENSURE_ASCII);
	json_decref(o);
	return s;
}

char *cd_gate_approval_log_args(const struct cd_gate *g, const struct cd_decision *dec,
                                const char *tool, const char *action, const char *args_json,
                                int *ret_err)
{
	struct cd_mask_rules rules;
	struct cd_record rec;
	json_t *d, *keep = NULL, *args;
	char sha[65], *s = NULL;

	*ret_err = 0;
	cd_gate_log_rules(g, dec, &rules);
	if (!cd_mask_rules_active(&rules))
		return NULL;
	cd_approval_hash(tool, action, args_json, sha);
	args = json_loads(args_json, 0, NULL);
	/* The rules go along: the later records of this request mask their
	 * free text (reasons, comments) the same way. */
	d = json_pack("{s:o,s:s,s:o}", "args", args ? args : json_string("[withheld by cordon]"),
	              "args_sha256", sha, "mask", cd_logmask_rules_json(&rules));
	memset(&rec, 0, sizeof rec);
	if (!d || (*ret_err = cd_logmask_record(g->masker, &rules, &rec, d, &keep)) < 0 ||
	    !(s = json_dumps(d, JSON_COMPACT | JSON_SORT_KEYS)))
		*ret_err = *ret_err ? *ret_err : -ENOMEM;
	json_decref(keep);
	json_decref(d);
	return s;
}

/* Free text of a masked request's records (an approver rule's reason
 * names the operand; a person's comment may quote the call) under the
 * request's rules, every masked type redacted: no pseudonym is needed
 * there, so no key either, and records written by `cordon approvals`,
 * which holds no key, are masked alike. */
static int mask_free_text(const json_t *rules_json, const char *reason, const char *comment,
                          char **ret_reason, char **ret_comment)
{
	static const unsigned char nokey[CD_MASK_KEY_BYTES];
	struct cd_mask_rules rules;
	struct cd_masker *m = NULL;
	unsigned i;

	*ret_reason = *ret_comment = NULL;
	/* Unreadable rules: every type. */
	if (cd_logmask_rules_parse(rules_json, &rules) < 0 || !cd_mask_rules_active(&rules))
		memset(&rules, CD_MASK_REDACT, sizeof rules);
	for (i = 0; i < CD_SCAN_NTYPES; i++)
		if (rules.action[i] == CD_MASK_PSEUDONYMIZE)
			rules.action[i] = CD_MASK_REDACT;
	if (cd_masker_new(nokey, &m, NULL) < 0)
		m = NULL; /* cd_logmask_text withholds */
	if (reason)
		*ret_reason = cd_logmask_text(m, &rules, reason);
	if (comment)
		*ret_comment = cd_logmask_text(m, &rules, comment);
	cd_masker_free(m);
	return (reason && !*ret_reason) || (comment && !*ret_comment) ? -ENOMEM : 0;
}

int cd_gate_approval_record(struct cd_audit *audit, const char *kind, const struct cd_approval *a,
                            const char *by, const char *reason, struct cd_err *err)
{
	struct cd_record rec;
	json_t *d = json_object(), *args;
	char *details, *mreason = NULL, *mcomment = NULL;
	int r;

	if (!audit)
		return 0;
	if (!d)
		return cd_err_set(err, -ENOMEM, "out of memory");
	json_object_set_new(d, "approval_id", json_string(a->id));
	if (a->log_args) {
		/* Minimized when it was requested: the masked arguments and
		 * their commitments, never the raw ones. */
		json_t *l = json_loads(a->log_args, 0, NULL);
		json_object_set(d, "args", json_object_get(l, "args"));
		json_object_set(d, "commitments", json_object_get(l, "commitments"));
		if (!json_object_get(d, "args"))
			json_object_set_new(d, "args", json_string("[withheld by cordon]"));
		r = mask_free_text(json_object_get(l, "mask"), reason, a->comment, &mreason,
		                   &mcomment);
		json_decref(l);
		if (r < 0) {
			json_decref(d);
			free(mreason);
			free(mcomment);
			return cd_err_set(err, -ENOMEM, "out of memory");
		}
		if (mreason)
			reason = mreason;
	} else {
		json_object_set_new(d, "args_sha256", json_string(a->args_sha256));
		args = json_loads(a->args_json, 0, NULL);
		json_object_set_new(d, "args", args ? args : json_string(a->args_json));
	}
	json_object_set_new(d, "approval", json_string(a->approval));
	json_object_set_new(d, "deadline", json_integer(a->deadline));
	if (a->profile)
		json_object_set_new(d, "profile", json_string(a->profile));
	if (a->requester) {
		json_t *rq = json_loads(a->requester, 0, NULL);
		if (rq)
			json_object_set_new(d, "requester", rq);
	}
	if (by)
		json_object_set_new(d, "by", json_string(by));
	if (a->comment && strcmp(kind, "approval.request") != 0)
		json_object_set_new(d, "comment", json_string(mcomment ? mcomment : a->comment));
	free(mcomment);
	details = json_dumps(d, JSON_COMPACT | JSON_SORT_KEYS);
	json_decref(d);
	if (!details)
		return cd_err_set(err, -ENOMEM, "out of memory");
	memset(&rec, 0, sizeof rec);
	rec.kind = kind;
	rec.run_id = a->run_id;
	rec.agent = a->agent;
	rec.task = a->task;
	rec.tool = a->tool;
	rec.action = a->action;
	rec.grant_ids = a->grant_ids;
	rec.decision = !strcmp(kind, "approval.approved") || !strcmp(kind, "approval.used")
	                       ? "allow"
	               : !strcmp(kind, "approval.request") ? "needs-approval"
	                                                   : "deny";
	rec.reason = reason;
	rec.details_json = details;
	r = cd_audit_append(audit, &rec, NULL, err);
	free(details);
	free(mreason);
	return r < 0 ? cd_err_prefix(err, "audit log: ") : 0;
}

struct rec_ctx {
	struct cd_audit *audit;
	const char *kind, *by, *reason;
	struct cd_err *err;
	int status; /* for polling: 1 approved, 0 denied, 2 expired, -1 pending */
	char by_seen[128], comment[256];
	/* An approval read from the queue: is it signed as the policy wants
	 * (approval-sign.h)?  local: answered on this process's terminal. */
	const struct cd_policy *policy;
	int shared, sig_ok, local;
	char sig_why[256];
};

static int record_cb(const struct cd_approval *a, void *ctx)
{
	struct rec_ctx *c = ctx;
	char why[320];

	snprintf(why, sizeof why, "%s", c->reason ? c->reason : "");
	if (!c->reason && !strcmp(c->kind, "approval.expired"))
		snprintf(why, sizeof why, "no answer before the deadline: denied");
	return cd_gate_approval_record(c->audit, c->kind, a, c->by, why, c->err) < 0 ? -EIO : 0;
}

int cd_gate_approvals_expire(struct cd_audit *audit, struct cd_state *s, int64_t now,
                             struct cd_err *err)
{
	struct rec_ctx c = {
		.audit = audit, .kind = "approval.expired", .by = "timeout", .err = err
	};

	return cd_approval_expire(s, now, record_cb, &c, NULL, err);
}

static int status_cb(const struct cd_approval *a, void *ctx)
{
	struct rec_ctx *c = ctx;

	if (!strcmp(a->status, "approved"))
		c->status = 1;
	else if (!strcmp(a->status, "denied"))
		c->status = 0;
	else if (!strcmp(a->status, "pending"))
		c->status = -1;
	else
		c->status = 2; /* expired, used by someone else: not ours */
	snprintf(c->by_seen, sizeof c->by_seen, "%s", a->decided_by ? a->decided_by : "?");
	snprintf(c->comment, sizeof c->comment, "%s", a->comment ? a->comment : "");
	if (c->status == 1 && c->policy)
		c->sig_ok = cd_approval_verify(c->policy, c->shared, a, NULL, 0, c->sig_why,
		                               sizeof c->sig_why);
	return 0;
}

int cd_gate_store_shared(struct cd_state *s)
{
	return !cd_state_own(s, NULL, 0);
}

int cd_gate_approval_answer_ok(struct cd_audit *audit, const struct cd_policy *p,
                               struct cd_state *s, const struct cd_approval *a, const char *agent,
                               char *why, size_t wn)
{
	char w[256];
	int n;

	if (!cd_policy_approver_person(p, a->decided_by, agent, w, sizeof w))
		n = snprintf(why, wn, "it names '%.64s', who may not approve this call: %s",
		             a->decided_by ? a->decided_by : "", w);
	else if (!cd_approval_verify(p, cd_gate_store_shared(s), a, NULL, 0, w, sizeof w))
		n = snprintf(why, wn, "the decision is not %.64s's: %s", a->decided_by, w);
	else
		return 1;
	if (n < 0 && wn)
		why[0] = '\0';
	cd_gate_approval_record(audit, "approval.refused", a, NULL, why, NULL);
	return 0;
}

static void set_reason(struct cd_decision *dec, const char *fmt, ...)
        __attribute__((format(printf, 2, 3)));
static void set_reason(struct cd_decision *dec, const char *fmt, ...)
{
	va_list ap;
	size_t i;

	va_start(ap, fmt);
	if (vsnprintf(dec->reason, sizeof dec->reason, fmt, ap) < 0)
		dec->reason[0] = '\0';
	va_end(ap);
	for (i = 0; dec->reason[i]; i++)
		if ((unsigned char)dec->reason[i] < 0x20 || dec->reason[i] == 0x7f)
			dec->reason[i] = '?';
}

/* Decide the queued request a by `by`, with its record, then (approve)
 * consume it. */
static int settle(const struct cd_gate *g, struct cd_state *s, struct cd_approval *a, int approve,
                  const char *by, const char *why, struct cd_err *err)
{
	struct rec_ctx c = { .audit = g->audit,
		             .kind = approve ? "approval.approved" : "approval.denied",
		             .by = by,
		             .reason = why,
		             .err = err };

	a->comment = why;
	return cd_approval_decide(s, a->id, approve, by, why, NULL, g->now, record_cb, &c, err);
}

static int consume(const struct cd_gate *g, struct cd_state *s, const struct cd_approval *a,
                   const char *why, struct cd_err *err)
{
	struct rec_ctx c = {
		.audit = g->audit, .kind = "approval.used", .reason = why, .err = err
	};
	int64_t now = (int64_t)time(NULL);

	return cd_approval_consume(s, a->id, a->args_sha256, now > g->now ? now : g->now, record_cb,
	                           &c, err);
}

/* The grant ids of dec, comma-separated, as many as fit in out. */
static void join_ids(const struct cd_decision *dec, char *out, size_t outlen)
{
	size_t i, n = 0;

	for (i = 0; i < dec->nids; i++) {
		int k = snprintf(out + n, outlen - n, "%s%s", i ? "," : "", dec->ids[i]);
		if (k < 0 || (size_t)k >= outlen - n)
			break;
		n += (size_t)k;
	}
}

/* An approver rule decides now, like a grant: its verdict in
 * *ret_verdict (set before the request is settled), its reason in why. */
static int decide_by_rule(const struct cd_gate *g, const struct cd_run_request *rq, const char *cwd,
                          const struct cd_decision *dec, struct cd_state *st, struct cd_approval *a,
                          int *ret_verdict, char *why, size_t whylen, struct cd_err *err)
{
	struct cd_request req;
	const char *rule = dec->approval + 7;
	size_t argc = 0;

	while (rq->argv[argc])
		argc++;
	cd_request_init(&req);
	req.agent = rq->agent;
	req.task = rq->task;
	req.tool = rq->tool;
	req.action = CD_ACTION_EXECUTE;
	req.argv = (const char *const *)rq->argv;
	req.argc = argc;
	req.now = g->now;
	*ret_verdict = cd_policy_approver_check(g->policy, rule, &req, cwd, why, whylen);
	return settle(g, st, a, *ret_verdict, dec->approval, why, err);
}

/* A person answers: on the terminal (w->prompt), or through the queue
 * until the deadline; the answer as the queue holds it in *c. */
static int wait_answer(const struct cd_gate *g, const struct cd_approval_wait *w,
                       struct cd_approval *a, struct rec_ctx *c, char *by, size_t bylen,
                       struct cd_err *err)
{
	int r;

	if (w->queued)
		w->queued(a, w->ctx);
	if (w->prompt) {
		int v = w->prompt(a, w->ctx, by, bylen);
		if (v >= 0) {
			const char *how = v ? "approved on the terminal" : "denied on the terminal";
			r = settle(g, w->state, a, v, by, how, err);
			/* Someone may have answered through the queue
			 * meanwhile: then the queue's answer stands. */
			if (r < 0 && r != -ESTALE)
				return r;
			if (r == 0) {
				/* This process wrote it: its own answer, not
				 * the row read back (which others may change). */
				memset(c, 0, sizeof *c);
				c->status = v;
				c->local = 1;
				snprintf(c->by_seen, sizeof c->by_seen, "%s", by);
				snprintf(c->comment, sizeof c->comment, "%s", how);
				return 0;
			}
		}
	}
	for (;;) {
		memset(c, 0, sizeof *c);
		c->policy = g->policy;
		c->shared = cd_gate_store_shared(w->state);
		if ((r = cd_approval_get(w->state, a->id, status_cb, c, err)) < 0)
			return r;
		if (c->status >= 0)
			break;
		if ((int64_t)time(NULL) >= a->deadline) {
			if ((r = cd_gate_approvals_expire(g->audit, w->state, (int64_t)time(NULL),
			                                  err)) < 0)
				return r;
			continue;
		}
		/* Until the next poll, or sooner when another process
		 * changes the state database (an answer). */
		cd_state_wait(w->state, w->poll_ms ? w->poll_ms : 200);
	}
	return 0;
}

/* The wait may have outlasted a temporary grant the call rests on:
 * revoked or ended meanwhile, the approval is not used.  1 (dec is then a
 * denial, on the record) or 0. */
static int temp_lapsed(const struct cd_gate *g, struct cd_state *st, const struct cd_approval *a,
                       struct cd_decision *dec)
{
	size_t i;

	for (i = 0; i < dec->ntemp_ids; i++) {
		struct cd_err te = { 0, "" };
		if (cd_temp_in_force(st, dec->temp_ids[i], (int64_t)time(NULL), &te) == 0)
			continue;
		dec->verdict = CD_VERDICT_DENY;
		dec->profile = NULL;
		set_reason(dec, "temporary grant '%.64s' was revoked or has ended while %s waited",
		           dec->temp_ids[i], a->id);
		cd_gate_approval_record(g->audit, "approval.refused", a, NULL, dec->reason, NULL);
		return 1;
	}
	return 0;
}

/* A person's answer (approved), as this run checks it: 1 when refused
 * (dec is then a denial, on the record), else 0. */
static int answer_refused(const struct cd_gate *g, const char *agent, const struct cd_approval *a,
                          const struct rec_ctx *c, const char *by, struct cd_decision *dec)
{
	char why[256];

	if (!cd_policy_approver_person(g->policy, by, agent, why, sizeof why))
		/* The answer came through the shared state, which any writer
		 * of it can change: whoever it names must be an approver of
		 * this call under the policy this run decided by, never the
		 * agent itself, as the deciding front end checked. */
		set_reason(dec, "approval %s names '%.64s', who may not approve this call: %s",
		           a->id, by, why);
	else if (!c->local && !c->sig_ok)
		/* Nor does a name prove anything: the decision counts only
		 * when signed with that person's key (approval-sign.h). */
		set_reason(dec, "approval %s is not %.64s's decision: %s", a->id, by, c->sig_why);
	else
		return 0;
	dec->verdict = CD_VERDICT_DENY;
	dec->profile = NULL;
	cd_gate_approval_record(g->audit, "approval.refused", a, NULL, dec->reason, NULL);
	return 1;
}

int cd_gate_await_approval(const struct cd_gate *g, const struct cd_run_request *rq,
                           const char *cwd, struct cd_decision *dec,
                           const struct cd_approval_wait *w, char approval_id[CD_APPROVAL_ID_MAX],
                           struct cd_err *err)
{
	struct cd_approval a;
	struct rec_ctx c;
	char ids[1024] = "", why[256], by[128];
	char *args = NULL, *log_args = NULL;
	int r, verdict = -1;

	approval_id[0] = '\0';
	memset(&c, 0, sizeof c);
	if (dec->verdict != CD_VERDICT_NEEDS_APPROVAL || !dec->approval)
		return cd_err_set(err, -EINVAL, "nothing to approve");
	if (!w || !w->state || !g->policy)
		return cd_err_set(err, -EINVAL, "approvals need the state database and a policy");
	join_ids(dec, ids, sizeof ids);
	args = cd_gate_run_args_json(rq, dec->profile);
	if (!args)
		return cd_err_set(err, -ENOMEM, "out of memory");
	memset(&a, 0, sizeof a);
	a.agent = rq->agent;
	a.task = rq->task;
	a.tool = rq->tool;
	a.action = "execute";
	a.args_json = args;
	a.grant_ids = ids[0] ? ids : NULL;
	a.approval = dec->approval;
	a.profile = dec->profile;
	a.policy = g->policy_path;
	a.policy_sha256 = cd_policy_sha256(g->policy);
	a.requester = w->requester;
	a.run_id = rq->run_id;
	a.created = g->now;
	a.deadline = g->now + (w->timeout_s > 0 ? w->timeout_s : 1);
	log_args = cd_gate_approval_log_args(g, dec, a.tool, a.action, args, &r);
	if (r < 0) {
		r = cd_err_set(err, r, "the request's arguments could not be masked for the log");
		goto out;
	}
	a.log_args = log_args;
	/* The request and its record, in one step. */
	if ((r = cd_state_begin(w->state, err)) < 0)
		goto out;
	if ((r = cd_approval_request(w->state, &a, err)) < 0 ||
	    (r = cd_gate_approval_record(g->audit, "approval.request", &a, NULL, dec->reason,
	                                 err)) < 0 ||
	    (r = cd_state_commit(w->state, err)) < 0) {
		cd_state_rollback(w->state);
		goto out;
	}
	memcpy(approval_id, a.id, sizeof a.id);

	if (!strncmp(dec->approval, "policy:", 7)) {
		if ((r = decide_by_rule(g, rq, cwd, dec, w->state, &a, &verdict, why, sizeof why,
		                        err)) < 0)
			goto out;
		snprintf(by, sizeof by, "%s", dec->approval);
	} else {
		if ((r = wait_answer(g, w, &a, &c, by, sizeof by, err)) < 0)
			goto out;
		verdict = c.status == 1;
		snprintf(by, sizeof by, "%s", c.by_seen);
		if (c.status == 2)
			snprintf(why, sizeof why, "no answer before the deadline");
		else
			snprintf(why, sizeof why, "%s", c.comment);
	}
	if (verdict == 1 && strncmp(dec->approval, "policy:", 7) != 0 &&
	    answer_refused(g, rq->agent, &a, &c, by, dec)) {
		r = 0;
		goto out;
	}
	if (verdict == 1) {
		if (temp_lapsed(g, w->state, &a, dec)) {
			r = 0;
			goto out;
		}
		if ((r = consume(g, w->state, &a, "the approved call runs", err)) < 0) {
			dec->verdict = CD_VERDICT_DENY;
			dec->profile = NULL;
			set_reason(dec, "approval %s could not be used: %s", a.id,
			           err ? err->msg : "");
			/* The refusal is on the record too (best effort: the run is
			 * refused whether or not this lands). */
			cd_gate_approval_record(g->audit, "approval.refused", &a, NULL, dec->reason,
			                        NULL);
			r = 0;
			goto out;
		}
		dec->verdict = CD_VERDICT_ALLOW;
		set_reason(dec, "approved by %s (%s)", by, a.id);
	} else {
		dec->verdict = CD_VERDICT_DENY;
		dec->profile = NULL;
		set_reason(dec, "%s %s by %s%s%s", a.id,
		           c.status == 2 && strncmp(dec->approval, "policy:", 7) ? "expired"
		                                                                 : "denied",
		           by, why[0] ? ": " : "", why);
	}
	r = 0;
out:
	free(args);
	free(log_args);
	return r;
}
