/* console-rules.c — approver-rule (`approval: policy:NAME`) outcomes on
 * the held-calls page, live: for each call an approver rule decided in the
 * last hour (or is deciding), the rule's name, what it requires (from the
 * policy, cd_policy_approver_describe), what it decided and why (the
 * reason the gate stored with the decision: "operand '/etc/x' is outside
 * the rule's paths").  The watcher (console-held.c) counts these rows in
 * its fingerprint, so a rule's decision reaches every open page at once.
 *
 * Trust boundary: the rows are the agents' calls (hostile text) and the
 * gate's reasons quote their arguments: every field is escaped.  The
 * policy is re-read only when its file changes. */
#include "console-int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#define RULES_SHOWN 20

static int esc(struct cd_buf *b, const char *s)
{
	return s ? cd_console_html_escape(b, s, strlen(s)) : cd_buf_puts(b, "-");
}

/* The policy the rules come from, re-loaded when its file changed
 * (c->mu held).  NULL when there is none or it does not load. */
static const struct cd_policy *rules_policy(struct cd_console *c)
{
	struct stat st;
	struct cd_err err = { 0, "" };
	struct cd_policy *p = NULL;

	if (!c->conf.policy || stat(c->conf.policy, &st) < 0)
		return NULL;
	if (c->rules_policy && st.st_mtim.tv_sec == c->rules_mtime.tv_sec &&
	    st.st_mtim.tv_nsec == c->rules_mtime.tv_nsec && st.st_ino == c->rules_ino &&
	    st.st_size == c->rules_size)
		return c->rules_policy;
	if (cd_policy_load_file(c->conf.policy, &p, &err) < 0)
		return NULL;
	cd_policy_free(c->rules_policy);
	c->rules_policy = p;
	c->rules_mtime = st.st_mtim;
	c->rules_ino = st.st_ino;
	c->rules_size = st.st_size;
	return p;
}

int console_rule_requires(struct cd_console *c, struct cd_buf *b, const char *rule)
{
	const struct cd_policy *p = rules_policy(c);
	struct cd_buf d;
	int r;

	r = cd_buf_puts(b, "<span class=\"requires\">");
	cd_buf_init(&d, 8192);
	if (!p)
		r = r ?: cd_buf_puts(b, "(the console has no policy to read the rule from)");
	else if (cd_policy_approver_describe(p, rule, &d) == -ENOENT)
		r = r ?: cd_buf_puts(b, "(no such rule in the policy)");
	else
		r = r ?: esc(b, d.data ? d.data : "");
	cd_buf_release(&d);
	return r ?: cd_buf_puts(b, "</span>");
}

/* The last RULES_SHOWN rule decisions, newest last. */
struct rule_rows {
	struct cd_approval a[RULES_SHOWN];
	char *strs[RULES_SHOWN][8];
	size_t n, next;
};

static char *dup(const char *s)
{
	return s ? strdup(s) : NULL;
}

static int rule_one(const struct cd_approval *a, void *ctx)
{
	struct rule_rows *rr = ctx;
	struct cd_approval *x;
	char **s;
	size_t i;

	if (strncmp(a->approval, "policy:", 7) != 0)
		return 0;
	x = &rr->a[rr->next];
	s = rr->strs[rr->next];
	for (i = 0; i < 8; i++)
		free(s[i]);
	*x = *a;
	x->status = s[0] = dup(a->status);
	x->agent = s[1] = dup(a->agent);
	x->tool = s[2] = dup(a->tool);
	x->approval = s[3] = dup(a->approval);
	x->comment = s[4] = dup(a->comment);
	x->args_json = s[5] = dup(a->args_json);
	x->log_args = s[6] = dup(a->log_args);
	x->decided_by = s[7] = dup(a->decided_by);
	rr->next = (rr->next + 1) % RULES_SHOWN;
	if (rr->n < RULES_SHOWN)
		rr->n++;
	return 0;
}

static const char *outcome(const struct cd_approval *a)
{
	if (!strcmp(a->status, "approved") || !strcmp(a->status, "used"))
		return "approved";
	if (!strcmp(a->status, "denied"))
		return "denied";
	if (!strcmp(a->status, "pending"))
		return "deciding";
	return a->status;
}

static int rule_row(struct cd_console *c, struct cd_buf *b, const struct cd_approval *a)
{
	const char *o = outcome(a);
	int r;

	r = cd_buf_printf(b, "<tr class=\"rule-outcome %s\" data-id=\"", o);
	r = r ?: esc(b, a->id);
	r = r ?: cd_buf_puts(b, "\"><td class=\"rule\">");
	r = r ?: esc(b, a->approval + 7);
	r = r ?: cd_buf_puts(b, "</td><td>");
	r = r ?: console_rule_requires(c, b, a->approval + 7);
	r = r ?: cd_buf_printf(b, "</td><td class=\"outcome\">%s</td><td class=\"why\">", o);
	r = r ?: esc(b, a->comment);
	r = r ?: cd_buf_puts(b, "</td><td>");
	r = r ?: esc(b, a->agent);
	r = r ?: cd_buf_puts(b, "</td><td>");
	r = r ?: esc(b, a->tool);
	r = r ?: cd_buf_puts(b, "</td><td class=\"args\">");
	/* Masked arguments when the grant masks (never the raw ones then). */
	r = r ?: esc(b, a->log_args ? "[masked: see the audit log]" : a->args_json);
	return r ?: cd_buf_puts(b, "</td></tr>");
}

int console_render_rules(struct cd_console *c, struct cd_buf *b)
{
	struct cd_err err = { 0, "" };
	struct rule_rows *rr = calloc(1, sizeof *rr);
	size_t i, k;
	int r = 0;

	if (!rr)
		return -ENOMEM;
	if (cd_approval_list(c->conf.state, NULL, (int64_t)time(NULL) - 3600, rule_one, rr, &err) <
	    0) {
		r = cd_buf_puts(b,
		                "<p class=\"error\">cannot read the approver rules' decisions: ");
		r = r ?: esc(b, err.msg);
		r = r ?: cd_buf_puts(b, "</p>");
	} else if (rr->n) {
		r = cd_buf_puts(b,
		                "<h2>Approver rules, the last hour</h2><table class=\"log "
		                "rules\"><tr><th>rule</th><th>requires</th><th>decided</th>"
		                "<th>why</th><th>agent</th><th>tool</th><th>arguments</th></tr>");
		/* Newest first. */
		for (i = 0; i < rr->n && !r; i++) {
			k = (rr->next + RULES_SHOWN - 1 - i) % RULES_SHOWN;
			r = rule_row(c, b, &rr->a[k]);
		}
		r = r ?: cd_buf_puts(b, "</table>");
	}
	for (i = 0; i < RULES_SHOWN; i++)
		for (k = 0; k < 8; k++)
			free(rr->strs[i][k]);
	free(rr);
	return r;
}
