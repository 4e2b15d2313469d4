/* console-proposals.c — the proposals of `cordon run --propose` in the
 * console: the list (newest first, with their counts and status) and one
 * proposal's files with their unified diffs, the flagged paths (files that
 * would run later on the host) highlighted, refused entries with why.
 * Apply, Commit to branch and Reject buttons decide through the functions
 * of `cordon proposals apply|commit|reject` (cd_proposal_may_decide,
 * cd_proposal_apply_by, cd_proposal_reject_by: the same checks, records
 * and bookkeeping); from the console flagged files are never applied nor
 * committed (the CLI's --accept-flagged names them one by one).  A branch
 * name is checked by git (check-ref-format) and must be new.
 *
 * Trust boundary: the paths, diffs, agent and task of a proposal were
 * written by the sandboxed command: every byte is escaped
 * (cd_console_html_escape); the id in the query is checked for shape and
 * percent-encoded in links. */
#include "console-int.h"

#include "proposal/proposal.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

/* Proposal ids: what cd_proposal_scan makes ("p-" and hex), bounded. */
static int id_ok(const char *id)
{
	size_t i, n = id ? strlen(id) : 0;

	if (!n || n >= sizeof((struct cd_proposal *)0)->id)
		return 0;
	for (i = 0; i < n; i++)
		if (!((id[i] >= '0' && id[i] <= '9') || (id[i] >= 'a' && id[i] <= 'z') ||
		      id[i] == '-'))
			return 0;
	return 1;
}

static int esc0(struct cd_buf *b, const char *s)
{
	return s ? cd_console_html_escape(b, s, strlen(s))
	         : cd_buf_puts(b, "<span class=\"none\">-</span>");
}

static void utc(int64_t t, char *out, size_t n)
{
	if (cd_audit_time_format(t * 1000000000LL, out, n) < 0)
		snprintf(out, n, "@%lld", (long long)t);
}

static int render_list(struct cd_console *c, struct cd_buf *b)
{
	struct cd_err err = { 0, "" };
	struct cd_proposal *ps = NULL;
	size_t i, n = 0;
	char t[64];
	int r;

	if (cd_proposal_list(c->conf.state, &ps, &n, &err) < 0) {
		r = cd_buf_puts(b, "<p class=\"error\">cannot read the proposals: ");
		r = r ?: esc0(b, err.msg);
		return r ?: cd_buf_puts(b, "</p>");
	}
	if (!n)
		return cd_buf_puts(b, "<p class=\"empty\">No proposal.</p>");
	r = cd_buf_puts(b, "<table class=\"log\"><thead><tr><th>id</th><th>status</th>"
	                   "<th>created</th><th>agent</th><th>task</th><th>files</th>"
	                   "<th>tree</th></tr></thead><tbody>");
	for (i = 0; i < n && !r; i++) {
		const struct cd_proposal *p = &ps[i];
		utc(p->created, t, sizeof t);
		/* The id's shape is checked before it goes into a link. */
		if (id_ok(p->id))
			r = cd_buf_printf(b,
			                  "<tr class=\"%s\"><td><a class=\"prop\" "
			                  "href=\"/proposal?id=%s\">%s</a></td><td>",
			                  !strcmp(p->status, "pending") ? "pending" : "ended",
			                  p->id, p->id);
		else
			r = cd_buf_puts(b, "<tr><td>(malformed id)</td><td>");
		r = r ?: esc0(b, p->status);
		r = r ?: cd_buf_printf(b, "</td><td>%s</td><td>", t);
		r = r ?: esc0(b, p->agent);
		r = r ?: cd_buf_puts(b, "</td><td>");
		r = r ?: esc0(b, p->task);
		r = r ?: cd_buf_printf(b, "</td><td>%zu</td><td>", p->nfiles);
		r = r ?: esc0(b, p->tree);
		r = r ?: cd_buf_puts(b, "</td></tr>");
	}
	cd_proposal_list_free(ps, n);
	return r ?: cd_buf_puts(b, "</tbody></table>");
}

int console_h_proposals(void *ctx, const struct cd_http_req *rq, struct cd_http_resp *rs)
{
	struct cd_console *c = ctx;
	struct console_session s;
	int r;

	pthread_mutex_lock(&c->mu);
	if (!console_auth(c, rq, rs, &s))
		goto out;
	rs->ctype = "text/html; charset=utf-8";
	r = console_page_start(&rs->body, "Proposals", s.person, s.csrf);
	r = r ?: render_list(c, &rs->body);
	r = r ?: console_page_end(&rs->body);
	if (r < 0)
		console_message(rs, 500, "Proposals", "the page could not be rendered", &s);
out:
	pthread_mutex_unlock(&c->mu);
	return 0;
}

/* A unified diff, a line at a time, each escaped and classed. */
static int render_diff(struct cd_buf *b, const char *d, size_t n)
{
	size_t at = 0, len;
	const char *nl, *cls;
	int r = cd_buf_puts(b, "<pre class=\"diff\">");

	while (at < n && !r) {
		nl = memchr(d + at, '\n', n - at);
		len = nl ? (size_t)(nl - (d + at)) : n - at;
		cls = d[at] == '+' ? "add" : d[at] == '-' ? "del" : d[at] == '@' ? "hunk" : "ctx";
		r = cd_buf_printf(b, "<span class=\"%s\">", cls);
		r = r ?: cd_console_html_escape(b, d + at, len);
		r = r ?: cd_buf_puts(b, "</span>\n");
		at += len + 1;
	}
	return r ?: cd_buf_puts(b, "</pre>");
}

static int render_file(struct cd_buf *b, const struct cd_prop_file *f)
{
	int r = cd_buf_printf(b, "<section class=\"file%s\"><h2><span class=\"op\">%s</span> ",
	                      f->flagged ? " flagged" : "", cd_prop_op_name(f->op));

	r = r ?: cd_console_html_escape(b, f->path, f->path_len);
	r = r ?: cd_buf_puts(b, "</h2>");
	if (!r && f->flagged)
		r = cd_buf_puts(b, "<p class=\"flag\">Flagged: this path would run later on the "
		                   "host; it is applied only when the approver names it "
		                   "(cordon proposals apply --accept-flagged PATH).</p>");
	if (!r && f->note) {
		r = cd_buf_puts(b, "<p class=\"error\">refused: ");
		r = r ?: esc0(b, f->note);
		r = r ?: cd_buf_puts(b, "</p>");
	}
	if (!r && (f->base_sha256[0] || f->new_sha256[0]))
		r = cd_buf_printf(b, "<p class=\"sha\">base %s (%o) → new %s (%o)</p>",
		                  f->base_sha256[0] ? f->base_sha256 : "-", f->base_mode,
		                  f->new_sha256[0] ? f->new_sha256 : "-", f->new_mode);
	if (!r && f->diff)
		r = render_diff(b, f->diff, f->diff_len);
	else if (!r && (f->op == CD_PROP_ADDED || f->op == CD_PROP_MODIFIED))
		r = cd_buf_puts(b, "<p class=\"none\">no diff (binary or large)</p>");
	return r ?: cd_buf_puts(b, "</section>");
}

/* One form a decision (Enter in the branch field commits, never applies). */
static int form_start(struct cd_buf *b, const struct cd_proposal *p, const char *csrf)
{
	int r = cd_buf_printf(b,
	                      "<form class=\"decide\" method=\"post\" action=\"/proposals/%s\">"
	                      "<input type=\"hidden\" name=\"csrf\" value=\"",
	                      p->id);

	r = r ?: cd_console_html_escape(b, csrf, strlen(csrf));
	return r ?: cd_buf_puts(b, "\">");
}

static int buttons(struct cd_buf *b, const struct cd_proposal *p, const char *csrf)
{
	int r = 0;

	if (strcmp(p->status, "pending") && strcmp(p->status, "partial"))
		return 0;
	r = form_start(b, p, csrf);
	r = r
	            ?: cd_buf_puts(b, "<button class=\"approve\" name=\"decision\" value=\"apply\">"
	                              "Apply</button><button class=\"deny\" name=\"decision\" "
	                              "value=\"reject\">Reject</button></form>");
	r = r ?: form_start(b, p, csrf);
	r = r
	            ?: cd_buf_printf(
	                       b,
	                       "<input type=\"hidden\" name=\"decision\" value=\"commit\">"
	                       "<label>branch <input name=\"branch\" maxlength=\"200\" "
	                       "value=\"cordon/%s\"></label><button class=\"commit\">Commit to "
	                       "branch</button></form>",
	                       p->id);
	r = r
	            ?: cd_buf_puts(
	                       b,
	                       "<p class=\"note\">Apply applies every change but the flagged "
	                       "and refused ones, each base re-checked; Commit to branch commits "
	                       "the same changes on a new branch of the tree's git repository, "
	                       "on top of HEAD, the work tree untouched; flagged files only with "
	                       "<code>cordon proposals apply|commit --accept-flagged "
	                       "PATH</code>.</p>");
	return r;
}

static int render_one(struct cd_buf *b, const struct cd_proposal *p, const char *csrf)
{
	size_t i, counts[CD_PROP_NOPS], flagged;
	char t[64];
	int r;

	cd_proposal_counts(p, counts, &flagged);
	utc(p->created, t, sizeof t);
	r = cd_buf_printf(b, "<dl><dt>id</dt><dd class=\"pid\">%s</dd><dt>status</dt><dd>", p->id);
	r = r ?: esc0(b, p->status);
	r = r ?: cd_buf_printf(b, "</dd><dt>created</dt><dd>%s</dd><dt>run</dt><dd>", t);
	r = r ?: esc0(b, p->run_id);
	r = r ?: cd_buf_puts(b, "</dd><dt>agent</dt><dd>");
	r = r ?: esc0(b, p->agent);
	r = r ?: cd_buf_puts(b, "</dd><dt>task</dt><dd>");
	r = r ?: esc0(b, p->task);
	r = r ?: cd_buf_puts(b, "</dd><dt>tree</dt><dd>");
	r = r ?: esc0(b, p->tree);
	r = r
	            ?: cd_buf_printf(
	                       b,
	                       "</dd><dt>changes</dt><dd>%zu added, %zu modified, %zu deleted, "
	                       "%zu refused, <span class=\"nflagged\">%zu flagged</span></dd>",
	                       counts[CD_PROP_ADDED], counts[CD_PROP_MODIFIED],
	                       counts[CD_PROP_DELETED], counts[CD_PROP_REFUSED], flagged);
	if (!r && p->decided_by) {
		utc(p->decided_at, t, sizeof t);
		r = cd_buf_puts(b, "<dt>decided by</dt><dd>");
		r = r ?: esc0(b, p->decided_by);
		r = r ?: cd_buf_printf(b, " at %s</dd>", t);
	}
	r = r ?: cd_buf_puts(b, "</dl>");
	r = r ?: buttons(b, p, csrf);
	for (i = 0; i < p->nfiles && !r; i++)
		r = render_file(b, &p->files[i]);
	return r;
}

int console_h_proposal(void *ctx, const struct cd_http_req *rq, struct cd_http_resp *rs)
{
	struct cd_console *c = ctx;
	struct console_session s;
	struct cd_err err = { 0, "" };
	struct cd_proposal *p = NULL;
	const char *id = cd_http_query(rq, "id");
	int r;

	pthread_mutex_lock(&c->mu);
	if (!console_auth(c, rq, rs, &s))
		goto out;
	if (!id_ok(id)) {
		console_message(rs, 400, "Proposal", "give a proposal id: /proposal?id=ID", &s);
		goto out;
	}
	r = cd_proposal_load(c->conf.state, c->conf.proposal_key, id, &p, &err);
	if (r < 0) {
		console_message(rs, r == -ENOENT ? 404 : 500, "Proposal",
		                r == -ENOENT ? "no such proposal" : err.msg, &s);
		goto out;
	}
	rs->ctype = "text/html; charset=utf-8";
	r = console_page_start(&rs->body, "Proposal", s.person, s.csrf);
	r = r ?: render_one(&rs->body, p, s.csrf);
	r = r ?: console_page_end(&rs->body);
	if (r < 0)
		console_message(rs, 500, "Proposal", "the page could not be rendered", &s);
	cd_proposal_free(p);
out:
	pthread_mutex_unlock(&c->mu);
	return 0;
}

/* May person decide p?  The rule held calls, grants and pins follow, with
 * the policy read again now: an approver of it, never an agent, never the
 * proposing agent or one it descends from (cd_policy_approver_person).
 * The console's operator (whom its start-up link named: the user whose
 * state this is, who may apply it with `cordon proposals` anyway) need
 * not be listed in approvers.people, but is held to the rest.  1, or 0
 * with rs filled. */
static int may_decide(struct cd_console *c, const struct cd_proposal *p, const char *person,
                      struct cd_http_resp *rs, const struct console_session *s)
{
	struct cd_policy *pol = NULL;
	struct cd_err err = { 0, "" };
	char why[256], msg[CD_ERR_MSG_MAX + 64];
	const char *agent = p->agent ? p->agent : "";
	size_t n;
	int ok;

	if (cd_proposal_may_decide(p, person, &err) < 0) {
		console_message(rs, 403, "Refused", err.msg, s);
		return 0;
	}
	if (!c->conf.policy) {
		console_message(rs, 403, "Refused",
		                "deciding proposals from the console needs --policy (its "
		                "approvers.people)",
		                s);
		return 0;
	}
	if (cd_policy_load_file(c->conf.policy, &pol, &err) < 0) {
		snprintf(msg, sizeof msg, "cannot check the approver: policy: %s", err.msg);
		console_message(rs, 500, "Failed", msg, s);
		return 0;
	}
	ok = cd_policy_approver_person(pol, person, agent, why, sizeof why);
	n = strlen(person);
	if (!ok && c->operator_name[0] && !strcmp(person, c->operator_name))
		ok = !cd_policy_is_agent(pol, person) && strcmp(agent, person) != 0 &&
		     !(!strncmp(agent, person, n) && agent[n] == '/');
	cd_policy_free(pol);
	if (!ok) {
		snprintf(msg, sizeof msg, "refused: %s", why);
		console_message(rs, 403, "Refused", msg, s);
	}
	return ok;
}

/* POST /proposals/ID, decision=apply|reject|commit (branch=NAME):
 * apply is 0 for reject, 1 for apply, 2 for a commit on branch. */
static int decide(struct cd_console *c, struct cd_proposal *p, const char *person, int apply,
                  const char *branch, struct cd_http_resp *rs, const struct console_session *s)
{
	struct cd_err err = { 0, "" };
	const char *status = NULL;
	char commit[65], msg[CD_ERR_MSG_MAX + 64];
	size_t i, sel = 0;
	int r;

	if (!may_decide(c, p, person, rs, s))
		return 0;
	if (!apply) {
		r = cd_proposal_reject_by(c->conf.state, c->conf.audit, p, person, &err);
	} else {
		if (cd_proposal_select(p, NULL, 0, NULL, 0, &err) < 0) {
			console_message(rs, 409, "Not applied", err.msg, s);
			return 0;
		}
		for (i = 0; i < p->nfiles; i++)
			sel += p->files[i].selected;
		if (!sel) {
			console_message(rs, 409, "Not applied",
			                "nothing to apply: flagged files are applied only with "
			                "cordon proposals apply --accept-flagged PATH",
			                s);
			return 0;
		}
		r = cd_proposal_apply_by(c->conf.state, c->conf.audit, p, person,
		                         apply == 2 ? branch : NULL, commit, &status, &err);
	}
	if (r < 0) {
		snprintf(msg, sizeof msg, "proposal %s: %s", p->id, err.msg);
		console_message(rs, apply && !status ? 409 : 500,
		                apply == 2 ? "Not committed"
		                : apply    ? "Not applied"
		                           : "Failed",
		                msg, s);
		return 0;
	}
	snprintf(msg, sizeof msg, "/proposal?id=%s", p->id);
	cd_http_resp_header(rs, "Location", msg);
	cd_http_resp_text(rs, 303, apply == 2 ? "committed\n" : apply ? "applied\n" : "rejected\n");
	return 0;
}

int console_h_proposal_decide(void *ctx, const struct cd_http_req *rq, struct cd_http_resp *rs)
{
	struct cd_console *c = ctx;
	struct console_session s;
	struct cd_err err = { 0, "" };
	struct cd_proposal *p = NULL;
	const char *id = rq->path + strlen("/proposals/");
	char decision[16], branch[256] = "";
	int r, mode;

	pthread_mutex_lock(&c->mu);
	if (!console_check_post(c, rq, rs, &s))
		goto out;
	if (!id_ok(id) ||
	    cd_http_form_get(rq->body, rq->body_len, "decision", decision, sizeof decision) < 0 ||
	    (strcmp(decision, "apply") && strcmp(decision, "reject") &&
	     strcmp(decision, "commit"))) {
		console_message(rs, 400, "Refused",
		                "a decision is apply, commit or reject, on a proposal id", &s);
		goto out;
	}
	mode = !strcmp(decision, "commit") ? 2 : !strcmp(decision, "apply");
	if (mode == 2 &&
	    cd_http_form_get(rq->body, rq->body_len, "branch", branch, sizeof branch) < 0) {
		console_message(rs, 400, "Refused",
		                "a commit needs a branch name (at most 200 bytes)", &s);
		goto out;
	}
	r = cd_proposal_load(c->conf.state, c->conf.proposal_key, id, &p, &err);
	if (r < 0) {
		console_message(rs, r == -ENOENT ? 404 : 500, "Proposal",
		                r == -ENOENT ? "no such proposal" : err.msg, &s);
		goto out;
	}
	decide(c, p, s.person, mode, branch, rs, &s);
	cd_proposal_free(p);
out:
	pthread_mutex_unlock(&c->mu);
	return 0;
}
