/* console-grants.c — the grants page: the policy's agents × tools matrix
 * (cd_policy_matrix, as `cordon policy matrix`), the grants due for
 * re-certification, expiring or unused (cd_policy_review, as `cordon
 * policy review`), and the live break-glass and delegated grants, each
 * with a Revoke button that ends it as `cordon grant revoke` does
 * (cd_temp_revoke: the row ended and a "grant.revoked" record, naming the
 * person).  A revoke needs the session, its CSRF token and the console's
 * Origin, and the person must be one of the policy's approvers.people and
 * no agent of the grant's line (cd_policy_approver_person, the rule
 * approvals follow): an agent never ends or keeps its own grants.
 *
 * Trust boundary: the policy was loaded strictly (ids are tame), but the
 * rows of temporary grants may hold anything (tickets, names, the grant
 * text): every field is escaped.  The id in a revoke's path is checked
 * for shape before it reaches the store. */
#include "console-int.h"

#include "policy/policy-matrix.h"
#include "policy/policy-review.h"
#include "policy/temp-grant.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#define REVIEW_SOON   (30 * 86400) /* as `cordon policy review` */
#define REVIEW_UNUSED (90 * 86400)
#define REASON_MAX    501

static int esc(struct cd_buf *b, const char *s)
{
	return s ? cd_console_html_escape(b, s, strlen(s)) : cd_buf_puts(b, "-");
}

static void utc(int64_t t, char *out, size_t n)
{
	time_t tt = (time_t)t;
	struct tm tm;

	if (t == CD_MATRIX_NEVER || t <= 0)
		snprintf(out, n, "-");
	else if (!gmtime_r(&tt, &tm) || !strftime(out, n, "%Y-%m-%dT%H:%M:%SZ", &tm))
		snprintf(out, n, "@%lld", (long long)t);
}

/* ---- the matrix ---------------------------------------------------- */

static int matrix_html(struct cd_buf *b, const struct cd_policy *p, int64_t now)
{
	struct cd_matrix *m = NULL;
	size_t i, j;
	int r;

	if ((r = cd_policy_matrix(p, NULL, now, &m)) < 0)
		return cd_buf_printf(b, "<p class=\"error\">cannot build the matrix: %s</p>",
		                     cd_strerror(r));
	r = cd_buf_puts(b, "<h2>Agents × tools</h2><p class=\"legend\">Per action class "
	                   "(r c u d x n): lower case given, upper case only with approval, "
	                   "! forbidden, - not given.</p><table class=\"log matrix\"><tr><th>"
	                   "agent</th>");
	for (j = 0; j < m->ntools && !r; j++) {
		r = cd_buf_puts(b, "<th>");
		r = r ?: esc(b, m->tools[j].id);
		r = r ?: cd_buf_puts(b, "</th>");
	}
	r = r ?: cd_buf_puts(b, "</tr>");
	for (i = 0; i < m->nagents && !r; i++) {
		r = cd_buf_puts(b, "<tr><th>");
		r = r ?: esc(b, m->agents[i]);
		r = r ?: cd_buf_puts(b, "</th>");
		for (j = 0; j < m->ntools && !r; j++) {
			const struct cd_matrix_cell *cell = cd_matrix_cell(m, i, j);
			char mask[7], exp[32];
			cd_matrix_cell_mask(cell, mask);
			utc(cell->expires, exp, sizeof exp);
			r = cd_buf_printf(b, "<td class=\"cell\" title=\"grants %zu, expires %s\">",
			                  cell->ngrants, exp);
			r = r ?: esc(b, mask);
			r = r ?: cd_buf_puts(b, "</td>");
		}
		r = r ?: cd_buf_puts(b, "</tr>");
	}
	cd_matrix_free(m);
	return r ?: cd_buf_puts(b, "</table>");
}

/* ---- re-certification ------------------------------------------------ */

struct review_ctx {
	struct cd_buf *b;
	size_t shown;
	int r;
};

static void review_one(const struct cd_review_item *it, void *ctx)
{
	struct review_ctx *v = ctx;
	struct cd_buf *b = v->b;
	char rb[32], ex[32], lu[32];
	unsigned f;
	int r;

	if (v->r || !it->flags)
		return;
	utc(it->review_by, rb, sizeof rb);
	utc(it->expires, ex, sizeof ex);
	utc(it->last_used, lu, sizeof lu);
	r = cd_buf_puts(b, "<tr class=\"review\"><td>");
	r = r ?: esc(b, it->id);
	r = r ?: cd_buf_puts(b, "</td><td>");
	r = r ?: esc(b, it->agent);
	r = r ?: cd_buf_puts(b, "</td><td>");
	r = r ?: esc(b, it->tool);
	r = r ?: cd_buf_puts(b, "</td><td>");
	r = r ?: esc(b, it->owner);
	r = r
	            ?: cd_buf_printf(b, "</td><td>%s</td><td>%s</td><td>%s (%llu uses)</td><td>",
	                             rb, ex, lu, (unsigned long long)it->uses);
	for (f = 1; f <= CD_REVIEW_UNUSED && !r; f <<= 1)
		if (it->flags & f)
			r = cd_buf_printf(b, "<span class=\"flag\">%s</span> ",
			                  cd_review_flag_name(f));
	r = r ?: cd_buf_puts(b, "</td></tr>");
	v->shown++;
	v->r = r;
}

static int review_html(struct cd_console *c, struct cd_buf *b, const struct cd_policy *p,
                       int64_t now)
{
	struct cd_review_opts o = { now, REVIEW_SOON, REVIEW_UNUSED, NULL };
	struct review_ctx v = { b, 0, 0 };
	struct cd_err err = { 0, "" };
	struct cd_audit_opts ao;
	struct cd_audit *log = NULL;
	size_t attention = 0;
	int r, rr;

	/* The uses come from the log, read through a read-only connection
	 * of this request's own (the console's lock is not held: a long log
	 * takes seconds and the console goes on serving). */
	memset(&ao, 0, sizeof ao);
	ao.read_only = 1;
	if (c->conf.audit_path && cd_audit_open(c->conf.audit_path, &ao, &log, &err) < 0) {
		r = cd_buf_puts(b, "<p class=\"error\">cannot read the audit log: ");
		r = r ?: esc(b, err.msg);
		return r ?: cd_buf_puts(b, "</p>");
	}
	o.log = log;

	r = cd_buf_puts(b, "<h2>Re-certification</h2><p class=\"legend\">Grants past their "
	                   "review date, expired, expiring within 30 days, never used or unused "
	                   "for 90 days (as <code>cordon policy review</code>).</p>"
	                   "<table class=\"log review\"><tr><th>grant</th><th>agent</th>"
	                   "<th>tool</th><th>owner</th><th>review by</th><th>expires</th>"
	                   "<th>last used</th><th>needs</th></tr>");
	rr = r ? 0 : cd_policy_review(p, &o, review_one, &v, &attention, &err);
	cd_audit_close(log);
	if (r)
		return r;
	if (rr < 0) {
		r = cd_buf_puts(b, "</table><p class=\"error\">cannot review: ");
		r = r ?: esc(b, err.msg);
		return r ?: cd_buf_puts(b, "</p>");
	}
	if (v.r)
		return v.r;
	r = cd_buf_puts(b, "</table>");
	if (!v.shown)
		r = r ?: cd_buf_puts(b, "<p class=\"empty\">No grant needs attention.</p>");
	return r;
}

/* ---- live temporary grants ------------------------------------------- */

struct temp_ctx {
	struct cd_buf *b;
	const char *csrf;
	int64_t now;
	size_t n;
	int r;
};

static int temp_one(const struct cd_temp_grant *g, void *ctx)
{
	struct temp_ctx *t = ctx;
	struct cd_buf *b = t->b;
	char cr[32], ex[32];
	int r;

	utc(g->created, cr, sizeof cr);
	utc(g->expires, ex, sizeof ex);
	r = cd_buf_puts(b, "<tr class=\"temp\" data-id=\"");
	r = r ?: esc(b, g->id);
	r = r ?: cd_buf_puts(b, "\"><td>");
	r = r ?: esc(b, g->id);
	r = r ?: cd_buf_printf(b, "</td><td>%s</td><td>", cd_temp_kind_name(g->kind));
	r = r ?: esc(b, g->agent);
	r = r ?: cd_buf_puts(b, "</td><td>");
	r = r ?: esc(b, g->tool);
	r = r ?: cd_buf_puts(b, g->parent ? "</td><td>from " : "</td><td>ticket ");
	r = r ?: esc(b, g->parent ? g->parent : g->ticket);
	r = r ?: cd_buf_puts(b, "</td><td>");
	r = r ?: esc(b, g->by);
	r = r
	            ?: cd_buf_printf(
	                       b, "</td><td>%s</td><td data-deadline=\"%lld\">%s</td><td>%lld</td>",
	                       cr, (long long)g->expires, ex, (long long)g->uses);
	r = r ?: cd_buf_puts(b, "<td class=\"args\">");
	r = r ?: esc(b, g->grant_json);
	r = r
	            ?: cd_buf_puts(
	                       b,
	                       "</td><td><form class=\"revoke\" method=\"post\" action=\"/grants/");
	r = r ?: esc(b, g->id);
	r = r ?: cd_buf_puts(b, "\"><input type=\"hidden\" name=\"csrf\" value=\"");
	r = r ?: esc(b, t->csrf);
	r = r
	            ?: cd_buf_puts(b, "\"><input type=\"text\" name=\"reason\" maxlength=\"500\" "
	                              "placeholder=\"reason (optional)\" aria-label=\"reason\">"
	                              "<button class=\"deny\">Revoke</button></form></td></tr>");
	t->n++;
	t->r = r;
	return r;
}

static int temp_html(struct cd_console *c, struct cd_buf *b, const char *csrf, int64_t now)
{
	struct temp_ctx t = { b, csrf, now, 0, 0 };
	struct cd_err err = { 0, "" };
	int r;

	/* What is past its time is ended (and recorded) first, as every
	 * command that reads the grants does. */
	if (c->conf.audit)
		(void)cd_temp_sweep_logged(c->conf.state, c->conf.audit, now, NULL, &err);
	r = cd_buf_puts(b, "<h2>Break-glass and delegated grants</h2><table class=\"log temps\">"
	                   "<tr><th>id</th><th>kind</th><th>agent</th><th>tool</th>"
	                   "<th>from/ticket</th><th>by</th><th>created</th><th>expires</th>"
	                   "<th>uses</th><th>grant</th><th></th></tr>");
	if (r)
		return r;
	err.msg[0] = '\0';
	if (cd_temp_list(c->conf.state, 0, now, temp_one, &t, &err) < 0 && !t.r) {
		r = cd_buf_puts(b, "</table><p class=\"error\">cannot read the grants: ");
		r = r ?: esc(b, err.msg);
		return r ?: cd_buf_puts(b, "</p>");
	}
	if (t.r)
		return t.r;
	r = cd_buf_puts(b, "</table>");
	if (!t.n)
		r = r
		            ?: cd_buf_puts(
		                       b, "<p class=\"empty\">No break-glass or delegated grant is "
		                          "active.</p>");
	return r;
}

static int load_policy(struct cd_console *c, struct cd_policy **p, struct cd_err *err)
{
	*p = NULL;
	if (!c->conf.policy)
		return cd_err_set(err, -ENOENT,
		                  "this console was started without --policy: no grant matrix, and "
		                  "no revoke (the approvers are the policy's)");
	return cd_policy_load_file(c->conf.policy, p, err);
}

int console_h_grants(void *ctx, const struct cd_http_req *rq, struct cd_http_resp *rs)
{
	struct cd_console *c = ctx;
	struct console_session s;
	struct cd_policy *p = NULL;
	struct cd_err err = { 0, "" };
	int64_t now = (int64_t)time(NULL);
	int r;

	pthread_mutex_lock(&c->mu);
	if (!console_auth(c, rq, rs, &s)) {
		pthread_mutex_unlock(&c->mu);
		return 0;
	}
	pthread_mutex_unlock(&c->mu);
	/* The policy and the log's uses without the lock (their own files
	 * and connection); the temporary grants through the shared state
	 * connection, under it. */
	rs->ctype = "text/html; charset=utf-8";
	r = console_page_start(&rs->body, "Grants", s.person, s.csrf);
	if (load_policy(c, &p, &err) < 0) {
		r = r ?: cd_buf_puts(&rs->body, "<p class=\"error\">");
		r = r ?: esc(&rs->body, err.msg);
		r = r ?: cd_buf_puts(&rs->body, "</p>");
	} else {
		r = r ?: matrix_html(&rs->body, p, now);
		r = r ?: review_html(c, &rs->body, p, now);
	}
	pthread_mutex_lock(&c->mu);
	r = r ?: temp_html(c, &rs->body, s.csrf, now);
	r = r ?: console_grant_form(&rs->body, s.csrf);
	r = r ?: console_page_end(&rs->body);
	pthread_mutex_unlock(&c->mu);
	cd_policy_free(p);
	return r;
}

/* "/grants/ID" with ID "bg-" or "dg-" and hex digits: the id into out. */
static int grant_id(const char *path, char *out, size_t outlen)
{
	const char *id = path + strlen("/grants/");
	size_t i, n = strlen(id);

	if (n < 4 || n >= outlen || (strncmp(id, "bg-", 3) && strncmp(id, "dg-", 3)))
		return -EINVAL;
	for (i = 3; i < n; i++)
		if (!((id[i] >= '0' && id[i] <= '9') || (id[i] >= 'a' && id[i] <= 'f')))
			return -EINVAL;
	memcpy(out, id, n + 1);
	return 0;
}

struct find_ctx {
	const char *id;
	char agent[256];
	int found;
};

static int find_one(const struct cd_temp_grant *g, void *ctx)
{
	struct find_ctx *f = ctx;

	if (strcmp(g->id, f->id))
		return 0;
	snprintf(f->agent, sizeof f->agent, "%s", g->agent);
	f->found = 1;
	return 1;
}

/* May s revoke grant id?  1, or 0 with rs filled. */
static int may_revoke(struct cd_console *c, const struct console_session *s, const char *id,
                      struct cd_http_resp *rs)
{
	struct find_ctx f = { id, "", 0 };
	struct cd_policy *p = NULL;
	struct cd_err err = { 0, "" };
	char why[256], msg[CD_ERR_MSG_MAX + 64];
	int ok;

	if (!c->conf.audit) {
		console_message(rs, 503, "Refused", "a revoke is recorded: this console has no log",
		                s);
		return 0;
	}
	if (load_policy(c, &p, &err) < 0) {
		console_message(rs, 403, "Refused", err.msg, s);
		return 0;
	}
	if (cd_temp_list(c->conf.state, 0, (int64_t)time(NULL), find_one, &f, &err) < 0 &&
	    !f.found) {
		cd_policy_free(p);
		console_message(rs, 500, "Failed", err.msg, s);
		return 0;
	}
	if (!f.found) {
		cd_policy_free(p);
		console_message(rs, 409, "Not revoked", "no active grant has that id", s);
		return 0;
	}
	ok = cd_policy_approver_person(p, s->person, f.agent, why, sizeof why);
	cd_policy_free(p);
	if (!ok) {
		snprintf(msg, sizeof msg, "refused: %s", why);
		console_message(rs, 403, "Refused", msg, s);
	}
	return ok;
}

int console_h_grant_revoke(void *ctx, const struct cd_http_req *rq, struct cd_http_resp *rs)
{
	struct cd_console *c = ctx;
	struct console_session s;
	struct cd_err err = { 0, "" };
	char id[CD_TEMP_ID_MAX], reason[REASON_MAX];
	int r;

	pthread_mutex_lock(&c->mu);
	if (!console_check_post(c, rq, rs, &s))
		goto out;
	if (grant_id(rq->path, id, sizeof id) < 0) {
		console_message(rs, 400, "Refused", "not a temporary grant's id", &s);
		goto out;
	}
	r = cd_http_form_get(rq->body, rq->body_len, "reason", reason, sizeof reason);
	if (r == -ENOENT)
		reason[0] = '\0';
	else if (r < 0) {
		console_message(rs, 400, "Refused", "the reason is malformed or too long", &s);
		goto out;
	}
	if (!may_revoke(c, &s, id, rs))
		goto out;
	r = cd_temp_revoke(c->conf.state, c->conf.audit, id, s.person,
	                   reason[0] ? reason : "revoked in the console", (int64_t)time(NULL), NULL,
	                   NULL, &err);
	if (r == -ENOENT) {
		console_message(rs, 409, "Not revoked", err.msg, &s);
	} else if (r < 0) {
		console_message(rs, 500, "Failed", err.msg[0] ? err.msg : "failed", &s);
	} else {
		cd_http_resp_header(rs, "Location", "/grants");
		cd_http_resp_text(rs, 303, "revoked\n");
	}
out:
	pthread_mutex_unlock(&c->mu);
	return 0;
}
