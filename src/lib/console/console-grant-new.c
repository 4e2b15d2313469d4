/* console-grant-new.c — making a break-glass or delegated grant in the
 * console: the form on the grants page and its POST /grants, the human
 * step of the break-glass and delegation runbooks.  The grant is made by
 * cd_temp_make (temp-grant-make.c), the function `cordon grant
 * break-glass` and `cordon delegate` call: the same ticket requirement,
 * the policy's max_ttl, the loader's check of a break-glass grant, the
 * delegation's coverage check against what the parent holds, and the same
 * "grant.break-glass" / "grant.delegated" record, naming the person
 * logged in (never a name the form gives).  The watcher tells the webhooks
 * of a new break-glass grant as of one made on the command line.
 *
 * Who may: the session's person must be one of the policy's
 * approvers.people and no agent of the grant's line
 * (cd_policy_approver_person, the rule approvals and revokes follow): an
 * agent never grants itself.  Origin, session and CSRF token are checked
 * first (console_check_post).
 *
 * Trust boundary: every form field is the browser's text; its length is
 * capped by the form reader, its content checked by cd_temp_make (the
 * values reach the grant mapping only as escaped YAML scalars). */
#include "console-int.h"

#include "gate/approval-sign.h"
#include "policy/temp-grant.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define FIELD_MAX 512
#define SCOPE_MAX 4096

int console_grant_form(struct cd_buf *b, const char *csrf)
{
	int r = cd_buf_puts(
	        b, "<h2>New break-glass or delegated grant</h2><p class=\"legend\">As "
	           "<code>cordon grant break-glass</code> and <code>cordon delegate</code>: "
	           "checked against the policy, recorded in your name.  A break-glass grant "
	           "names a ticket and lives at most the policy's break_glass max_ttl; a "
	           "delegation gives AGENT/NAME part of what AGENT holds.</p>"
	           "<form class=\"grant-new\" method=\"post\" action=\"/grants\">"
	           "<input type=\"hidden\" name=\"csrf\" value=\"");

	r = r ?: cd_console_html_escape(b, csrf, strlen(csrf));
	r = r
	            ?: cd_buf_puts(
	                       b,
	                       "\"><label>kind <select name=\"kind\"><option value=\"break-glass\">"
	                       "break-glass</option><option "
	                       "value=\"delegated\">delegated</option></select>"
	                       "</label> <label>agent (delegated: the parent) <input "
	                       "name=\"agent\" "
	                       "required maxlength=\"255\"></label> <label>sub-agent (delegated) "
	                       "<input "
	                       "name=\"to\" maxlength=\"255\" placeholder=\"AGENT/NAME\"></label> "
	                       "<label>tool "
	                       "<input name=\"tool\" required maxlength=\"255\"></label> "
	                       "<label>actions "
	                       "<input name=\"actions\" required maxlength=\"255\" "
	                       "placeholder=\"read,execute\">"
	                       "</label> <label>ticket (break-glass) <input name=\"ticket\" "
	                       "maxlength=\"255\"></label> <label>time to live <input name=\"ttl\" "
	                       "required "
	                       "maxlength=\"16\" placeholder=\"30m\"></label> <label>task <input "
	                       "name=\"task\" "
	                       "maxlength=\"255\"></label><br><label>scope, one a line (path=GLOB, "
	                       "host=H, "
	                       "port=N, argv=TOKENS, field=NAME, arg:NAME=V) <textarea "
	                       "name=\"scope\" "
	                       "rows=\"3\" cols=\"40\" maxlength=\"4000\"></textarea></label> "
	                       "<label>mask "
	                       "<input name=\"mask\" maxlength=\"255\" "
	                       "placeholder=\"email=pseudonymize\">"
	                       "</label> <label>fields <input name=\"fields\" "
	                       "maxlength=\"255\"></label> "
	                       "<label><input type=\"checkbox\" name=\"require_task\" value=\"1\"> "
	                       "require a "
	                       "task</label> <label><input type=\"checkbox\" name=\"approval\" "
	                       "value=\"human\"> each use needs approval</label><br><label>reason "
	                       "<input "
	                       "name=\"reason\" maxlength=\"400\"></label> <button "
	                       "id=\"grant-new\">Make "
	                       "the grant</button></form>");
	return r;
}

/* Field `name` into out: 1 present, 0 absent or empty, -1 malformed or
 * too long. */
static int field(const struct cd_http_req *rq, const char *name, char *out, size_t n)
{
	int r = cd_http_form_get(rq->body, rq->body_len, name, out, n);

	if (r == -ENOENT) {
		out[0] = '\0';
		return 0;
	}
	return r < 0 ? -1 : out[0] != '\0';
}

struct form {
	char kind[16], agent[256], to[256], tool[256], actions[256], ticket[256], ttl[17];
	char task[256], mask[256], fields[256], approval[8], require_task[4], reason[FIELD_MAX];
	char scope_text[SCOPE_MAX];
	const char *scope[CD_TEMP_MAX_SCOPE];
};

/* The form into q (its strings point into f): 0, or -1 with why. */
static int read_form(const struct cd_http_req *rq, struct form *f, struct cd_temp_req *q, char *why,
                     size_t wn)
{
	struct {
		const char *name;
		char *out;
		size_t n;
	} const fs[] = {
		{ "kind", f->kind, sizeof f->kind },
		{ "agent", f->agent, sizeof f->agent },
		{ "to", f->to, sizeof f->to },
		{ "tool", f->tool, sizeof f->tool },
		{ "actions", f->actions, sizeof f->actions },
		{ "ticket", f->ticket, sizeof f->ticket },
		{ "ttl", f->ttl, sizeof f->ttl },
		{ "task", f->task, sizeof f->task },
		{ "mask", f->mask, sizeof f->mask },
		{ "fields", f->fields, sizeof f->fields },
		{ "approval", f->approval, sizeof f->approval },
		{ "require_task", f->require_task, sizeof f->require_task },
		{ "reason", f->reason, sizeof f->reason },
		{ "scope", f->scope_text, sizeof f->scope_text },
	};
	struct cd_err err = { 0, "" };
	char *save = NULL, *line;
	size_t i;

	for (i = 0; i < sizeof fs / sizeof fs[0]; i++)
		if (field(rq, fs[i].name, fs[i].out, fs[i].n) < 0) {
			snprintf(why, wn, "the field '%s' is malformed or too long", fs[i].name);
			return -1;
		}
	memset(q, 0, sizeof *q);
	if (!strcmp(f->kind, "break-glass"))
		q->kind = CD_TEMP_BREAK_GLASS;
	else if (!strcmp(f->kind, "delegated"))
		q->kind = CD_TEMP_DELEGATED;
	else {
		snprintf(why, wn, "the kind is break-glass or delegated");
		return -1;
	}
	for (line = strtok_r(f->scope_text, "\r\n", &save); line;
	     line = strtok_r(NULL, "\r\n", &save)) {
		if (!*line)
			continue;
		if (q->nscope == CD_TEMP_MAX_SCOPE) {
			snprintf(why, wn, "more than %d scope lines", CD_TEMP_MAX_SCOPE);
			return -1;
		}
		f->scope[q->nscope++] = line;
	}
	q->scope = f->scope;
	q->agent = f->agent;
	q->to = f->to[0] ? f->to : NULL;
	q->tool = f->tool;
	q->actions = f->actions;
	q->ticket = f->ticket[0] ? f->ticket : NULL;
	q->task = f->task[0] ? f->task : NULL;
	q->mask = f->mask[0] ? f->mask : NULL;
	q->fields = f->fields[0] ? f->fields : NULL;
	q->approval = f->approval[0] ? f->approval : NULL;
	q->require_task = f->require_task[0] != '\0';
	q->reason = f->reason[0] ? f->reason : NULL;
	if (cd_temp_parse_ttl(f->ttl, &q->ttl_s, &err) < 0) {
		snprintf(why, wn, "%s", err.msg);
		return -1;
	}
	return 0;
}

/* The policy in force with the active temporary grants (a delegation may
 * rest on one delegated to its parent), and whether s->person may make a
 * grant for q's agent.  0, or the HTTP status to refuse with (why set). */
static int policy_for(struct cd_console *c, const struct console_session *s,
                      const struct cd_temp_req *q, struct cd_policy **p, char *why, size_t wn)
{
	struct cd_err err = { 0, "" };
	const char *agent = q->kind == CD_TEMP_DELEGATED ? q->to : q->agent;
	char no[256];
	int64_t now = (int64_t)time(NULL);

	*p = NULL;
	if (!c->conf.audit) {
		snprintf(why, wn, "a grant is recorded: this console has no log");
		return 503;
	}
	if (!c->conf.policy) {
		snprintf(why, wn,
		         "this console was started without --policy: grants are checked "
		         "against the policy, and its approvers make them");
		return 403;
	}
	if (cd_policy_load_file(c->conf.policy, p, &err) < 0 ||
	    cd_temp_sweep_logged(c->conf.state, c->conf.audit, now, NULL, &err) < 0 ||
	    cd_temp_apply(c->conf.state, *p, now, NULL, NULL, NULL, &err) < 0) {
		snprintf(why, wn, "%s", err.msg);
		return 500;
	}
	if (!agent || !*agent) {
		snprintf(why, wn, "the grant names no agent");
		return 400;
	}
	if (!cd_policy_approver_person(*p, s->person, agent, no, sizeof no)) {
		snprintf(why, wn, "refused: %s", no);
		return 403;
	}
	return 0;
}

int console_h_grant_new(void *ctx, const struct cd_http_req *rq, struct cd_http_resp *rs)
{
	struct cd_console *c = ctx;
	struct console_session s;
	struct cd_policy *p = NULL;
	struct cd_temp_req q;
	struct cd_temp_grant g;
	struct cd_err err = { 0, "" };
	struct form *f = NULL;
	char why[CD_ERR_MSG_MAX + 64], loc[128];
	int st, r;

	pthread_mutex_lock(&c->mu);
	if (!console_check_post(c, rq, rs, &s))
		goto out;
	if (!(f = calloc(1, sizeof *f))) {
		cd_http_resp_text(rs, 503, "out of memory\n");
		goto out;
	}
	if (read_form(rq, f, &q, why, sizeof why) < 0) {
		console_message(rs, 400, "Refused", why, &s);
		goto out;
	}
	q.by = s.person;
	/* Signed with the console's key (--sign-key), which the policy trusts
	 * to have authenticated s.person (approvers.consoles): without one the
	 * grant is unsigned, and only a local SQLite store honours that. */
	q.sign = c->conf.sign_key ? cd_approver_row_sign : NULL;
	q.sign_ctx = (void *)c->conf.sign_key;
	if ((st = policy_for(c, &s, &q, &p, why, sizeof why)) != 0) {
		console_message(rs, st, st == 500 ? "Failed" : "Refused", why, &s);
		goto out;
	}
	r = cd_temp_make(c->conf.state, c->conf.audit, p, &q, (int64_t)time(NULL), &g, &err);
	if (r < 0) {
		console_message(rs,
		                r == -EINVAL        ? 400
		                : r == -CD_E_DENIED ? 403
		                                    : 500,
		                r == -EINVAL || r == -CD_E_DENIED ? "Refused" : "Failed",
		                err.msg[0] ? err.msg : "failed", &s);
		goto out;
	}
	snprintf(loc, sizeof loc, "/grants#%s", g.id);
	cd_http_resp_header(rs, "Location", loc);
	cd_http_resp_header(rs, "X-Cordon-Grant", g.id);
	cd_http_resp_text(rs, 303, "made\n");
	/* Tell the watcher now: the webhooks hear of it at once. */
	pthread_cond_broadcast(&c->cv);
out:
	pthread_mutex_unlock(&c->mu);
	cd_policy_free(p);
	free(f);
	return 0;
}
