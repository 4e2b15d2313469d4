/* console-pins.c — the MCP tool definitions waiting for a person: every
 * pending pin (server, tool, the SHA-256 and the canonical text of the
 * definition a server showed, and the approved one it would supersede),
 * with an Approve button that approves as `cordon mcp pins approve` does
 * (cd_mcp_pin_approve_recorded: the pin approved, an "mcp.pin" record
 * naming the person).  An approval needs the session, its CSRF token and
 * the console's Origin, and the person must be one of the policy's
 * approvers.people and no agent of it.
 *
 * Trust boundary: tool names and definitions come from MCP servers
 * (hostile text): every field is escaped; the posted server, tool and
 * SHA-256 are bound as parameters by the store, and the SHA-256 must be a
 * full digest, so a button approves exactly the definition it showed. */
#include "console-int.h"

#include "gate/approval-sign.h"
#include "mcp/mcp-pins.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#define DEF_MAX 4096 /* bytes of a definition shown */

static int esc(struct cd_buf *b, const char *s)
{
	return s ? cd_console_html_escape(b, s, strlen(s)) : cd_buf_puts(b, "-");
}

struct pins_ctx {
	struct cd_buf *b;
	const char *csrf;
	size_t n;
	int r;
};

static int hidden(struct cd_buf *b, const char *name, const char *v)
{
	int r = cd_buf_printf(b, "<input type=\"hidden\" name=\"%s\" value=\"", name);
	r = r ?: esc(b, v);
	return r ?: cd_buf_puts(b, "\">");
}

static int pin_one(const struct cd_mcp_pin_row *row, void *ctx)
{
	struct pins_ctx *x = ctx;
	struct cd_buf *b = x->b;
	size_t dl = row->definition ? strlen(row->definition) : 0;
	int r;

	if (strcmp(row->state, "pending"))
		return 0;
	r = cd_buf_puts(b, "<article class=\"call pin\"><h2>");
	r = r ?: esc(b, row->server);
	r = r ?: cd_buf_puts(b, "/");
	r = r ?: esc(b, row->tool);
	r = r ?: cd_buf_puts(b, "</h2><dl><dt>SHA-256</dt><dd class=\"sha\">");
	r = r ?: esc(b, row->sha256);
	r = r ?: cd_buf_puts(b, "</dd><dt>definition</dt><dd class=\"args\">");
	r = r
	            ?: cd_console_html_escape(b, row->definition ? row->definition : "",
	                                      dl < DEF_MAX ? dl : DEF_MAX);
	if (!r && dl > DEF_MAX)
		r = cd_buf_printf(b, "<span class=\"esc\">… (%zu bytes more)</span>", dl - DEF_MAX);
	r = r
	            ?: cd_buf_puts(b, "</dd></dl><form class=\"decide\" method=\"post\" "
	                              "action=\"/pins\">");
	r = r ?: hidden(b, "csrf", x->csrf);
	r = r ?: hidden(b, "server", row->server);
	r = r ?: hidden(b, "tool", row->tool);
	r = r ?: hidden(b, "sha256", row->sha256);
	r = r
	            ?: cd_buf_puts(
	                       b,
	                       "<button class=\"approve\">Approve this definition</button></form>"
	                       "</article>");
	x->n++;
	x->r = r;
	return r < 0 ? r : 0;
}

int console_h_pins(void *ctx, const struct cd_http_req *rq, struct cd_http_resp *rs)
{
	struct cd_console *c = ctx;
	struct console_session s;
	struct cd_err err = { 0, "" };
	struct pins_ctx x = { &rs->body, NULL, 0, 0 };
	int r;

	pthread_mutex_lock(&c->mu);
	if (!console_auth(c, rq, rs, &s)) {
		pthread_mutex_unlock(&c->mu);
		return 0;
	}
	x.csrf = s.csrf;
	rs->ctype = "text/html; charset=utf-8";
	r = console_page_start(&rs->body, "MCP tool definitions", s.person, s.csrf);
	r = r
	            ?: cd_buf_puts(&rs->body,
	                           "<p class=\"legend\">Definitions MCP servers showed that "
	                           "no person has approved: a tool is callable only while "
	                           "the definition its server shows is the approved one "
	                           "(as <code>cordon mcp pins</code>).</p>");
	if (!r && cd_mcp_pins_list(c->conf.state, NULL, NULL, pin_one, &x, &err) < 0 && !x.r) {
		r = cd_buf_puts(&rs->body, "<p class=\"error\">cannot read the pins: ");
		r = r ?: esc(&rs->body, err.msg);
		r = r ?: cd_buf_puts(&rs->body, "</p>");
	}
	r = r ?: x.r;
	if (!r && !x.n)
		r = cd_buf_puts(&rs->body,
		                "<p class=\"empty\">No tool definition waits for approval.</p>");
	r = r ?: console_page_end(&rs->body);
	pthread_mutex_unlock(&c->mu);
	return r;
}

static int is_sha(const char *s)
{
	size_t i;

	for (i = 0; i < 64; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return 0;
	return s[64] == '\0';
}

/* May s approve pins?  1, or 0 with rs filled. */
static int may_approve(struct cd_console *c, const struct console_session *s,
                       struct cd_http_resp *rs)
{
	struct cd_policy *p = NULL;
	struct cd_err err = { 0, "" };
	char why[256], msg[CD_ERR_MSG_MAX + 64];
	int ok;

	if (!c->conf.audit) {
		console_message(rs, 503, "Refused",
		                "an approval is recorded: this console has no log", s);
		return 0;
	}
	if (!c->conf.policy || cd_policy_load_file(c->conf.policy, &p, &err) < 0) {
		console_message(rs, 403, "Refused",
		                c->conf.policy ? err.msg
		                               : "approving definitions from the console needs "
		                                 "--policy (its approvers.people)",
		                s);
		return 0;
	}
	ok = cd_policy_approver_person(p, s->person, "", why, sizeof why);
	cd_policy_free(p);
	if (!ok) {
		snprintf(msg, sizeof msg, "refused: %s", why);
		console_message(rs, 403, "Refused", msg, s);
	}
	return ok;
}

int console_h_pin_approve(void *ctx, const struct cd_http_req *rq, struct cd_http_resp *rs)
{
	struct cd_console *c = ctx;
	struct console_session s;
	struct cd_err err = { 0, "" };
	char server[256], tool[256], sha[66], got[65];
	int r;

	pthread_mutex_lock(&c->mu);
	if (!console_check_post(c, rq, rs, &s))
		goto out;
	if (cd_http_form_get(rq->body, rq->body_len, "server", server, sizeof server) < 0 ||
	    cd_http_form_get(rq->body, rq->body_len, "tool", tool, sizeof tool) < 0 ||
	    cd_http_form_get(rq->body, rq->body_len, "sha256", sha, sizeof sha) < 0 ||
	    !is_sha(sha)) {
		console_message(rs, 400, "Refused",
		                "an approval names a server, a tool and a SHA-256", &s);
		goto out;
	}
	if (!may_approve(c, &s, rs))
		goto out;
	r = cd_mcp_pin_approve_recorded(c->conf.state, c->conf.audit, server, tool, sha, s.person,
	                                (int64_t)time(NULL),
	                                c->conf.sign_key ? cd_approver_row_sign : NULL,
	                                (void *)c->conf.sign_key, got, &err);
	if (r == -ENOENT) {
		console_message(rs, 409, "Not approved", err.msg, &s);
	} else if (r < 0) {
		console_message(rs, 500, "Failed", err.msg[0] ? err.msg : "failed", &s);
	} else {
		cd_http_resp_header(rs, "Location", "/pins");
		cd_http_resp_text(rs, 303, "approved\n");
	}
out:
	pthread_mutex_unlock(&c->mu);
	return 0;
}
