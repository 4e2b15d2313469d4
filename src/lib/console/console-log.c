/* console-log.c — the audit log in the console: the records newest first,
 * a page at a time (the cursor is a seq: "records before it"), filtered by
 * agent, run id, kind, decision, time range and free text; one run's page
 * (its intent and decision, result, egress attempts, MCP calls and
 * denials); and the chain's verification state, with a "verify now" button
 * that runs cd_audit_verify as `cordon log verify` does.
 *
 * Reads go through cd_audit_query (the store's audit_query operation):
 * the structured filters and the cursor are the store's (its indexes, made
 * by cd_audit_index when the console starts, keep a page O(page)), which
 * returns the newest matches before the cursor.  Free text is applied
 * here, to the record as `cordon log export` writes it, over chunks of
 * TEXT_CHUNK records read newest first until a page is full.
 *
 * Trust boundary: every field of every record can be agent-controlled
 * text, and so is every query argument: all of it is escaped for HTML
 * (cd_console_html_escape), and percent-encoded where it goes into a link. */
#include "console-int.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define PAGE        50
#define RUN_MAX     2000 /* records shown on a run's page */
#define FIELD_MAX   512  /* bytes of a field shown per record */
#define DETAILS_MAX 1024 /* bytes of the details shown per record */
/* An escaped byte takes at most 30 (a visible \xNN in a span): a row
 * fits ROW_CAP, a page of rows the server's 8 MiB answer. */
#define ROW_CAP    (128u << 10)
#define PAGE_CAP   (6u << 20)
#define QARG_MAX   512
#define TEXT_CHUNK 512
/* Records one page's free text reads at most: past it the page shows what
 * it found and a link that goes on from there (a rare word in a long log
 * is many short pages, never one long wait). */
#define TEXT_BUDGET 4096

/* ---- helpers ------------------------------------------------------ */

/* A console started without an audit log (a test's) shows none: 503. */
static int have_log(struct cd_console *c, struct cd_http_resp *rs, const struct console_session *s)
{
	if (c->conf.audit)
		return 1;
	console_message(rs, 503, "Audit log", "this console was started without an audit log", s);
	return 0;
}

static int esc_str(struct cd_buf *b, const struct cd_audit_str *s, size_t cap)
{
	int r;

	if (!s->p)
		return cd_buf_puts(b, "<span class=\"none\">-</span>");
	r = cd_console_html_escape(b, s->p, s->len < cap ? s->len : cap);
	if (!r && s->len > cap)
		r = cd_buf_printf(b, "<span class=\"esc\">… (%zu bytes more)</span>", s->len - cap);
	return r;
}

static int esc_c(struct cd_buf *b, const char *s)
{
	return cd_console_html_escape(b, s, strlen(s));
}

/* Percent-encode s for a query argument: only unreserved bytes pass, so
 * the result is also safe inside a quoted attribute. */
static int url_enc(struct cd_buf *b, const char *s, size_t n)
{
	size_t i;
	int r = 0;

	for (i = 0; i < n && !r; i++) {
		unsigned char c = (unsigned char)s[i];
		if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		    c == '-' || c == '_' || c == '.' || c == '~')
			r = cd_buf_putc(b, (char)c);
		else
			r = cd_buf_printf(b, "%%%02X", c);
	}
	return r;
}

static int str_is(const struct cd_audit_str *s, const char *v)
{
	return s->p && s->len == strlen(v) && !memcmp(s->p, v, s->len);
}

static int str_starts(const struct cd_audit_str *s, const char *v)
{
	return s->p && s->len >= strlen(v) && !memcmp(s->p, v, strlen(v));
}

/* A link to the run's page. */
static int run_link(struct cd_buf *b, const struct cd_audit_str *run)
{
	int r;

	if (!run->p)
		return cd_buf_puts(b, "<span class=\"none\">-</span>");
	r = cd_buf_puts(b, "<a class=\"run\" href=\"/run?id=");
	r = r ?: url_enc(b, run->p, run->len);
	r = r ?: cd_buf_puts(b, "\">");
	r = r ?: esc_str(b, run, FIELD_MAX);
	return r ?: cd_buf_puts(b, "</a>");
}

static const char *const head_row =
        "<table class=\"log\"><thead><tr><th>seq</th><th>time</th><th>kind</th><th>agent</th>"
        "<th>run</th><th>tool</th><th>action</th><th>target</th><th>decision</th>"
        "<th>reason</th><th>details</th></tr></thead><tbody>";

/* One record as a table row. */
static int render_row(struct cd_buf *b, const struct cd_audit_entry *e)
{
	static const enum cd_audit_field cols[] = { CD_AF_TOOL, CD_AF_ACTION, CD_AF_TARGET,
		                                    CD_AF_DECISION, CD_AF_REASON };
	char t[64];
	size_t i;
	int r;

	if (cd_audit_time_format(e->time_ns, t, sizeof t) < 0)
		snprintf(t, sizeof t, "?");
	r = cd_buf_printf(b, "<tr id=\"seq-%llu\"%s><td class=\"seq\">%llu</td><td>%s</td><td>",
	                  (unsigned long long)e->seq,
	                  e->str[CD_AF_DECISION].p && str_starts(&e->str[CD_AF_DECISION], "den")
	                          ? " class=\"denied\""
	                          : "",
	                  (unsigned long long)e->seq, t);
	r = r ?: esc_str(b, &e->str[CD_AF_KIND], FIELD_MAX);
	r = r ?: cd_buf_puts(b, "</td><td>");
	r = r ?: esc_str(b, &e->str[CD_AF_AGENT], FIELD_MAX);
	r = r ?: cd_buf_puts(b, "</td><td>");
	r = r ?: run_link(b, &e->str[CD_AF_RUN_ID]);
	for (i = 0; i < sizeof cols / sizeof cols[0] && !r; i++) {
		r = cd_buf_puts(b, "</td><td>");
		r = r ?: esc_str(b, &e->str[cols[i]], FIELD_MAX);
	}
	if (!r && e->has_exit)
		r = cd_buf_printf(b, " (exit %lld)", (long long)e->exit_code);
	r = r ?: cd_buf_puts(b, "</td><td class=\"details\">");
	r = r ?: esc_str(b, &e->str[CD_AF_DETAILS], DETAILS_MAX);
	return r ?: cd_buf_puts(b, "</td></tr>");
}

/* ---- the list ----------------------------------------------------- */

/* A page's cursor: the record it goes on from (older ones only), as the
 * store orders them: seq alone for one chain, (time, host, seq) for a
 * store of several (cd_audit_filter.before_host). */
struct log_key {
	uint64_t seq; /* 0: from the newest */
	int64_t time_ns;
	char host[QARG_MAX];
	int has_host;
};

struct log_q {
	char agent[QARG_MAX], run[QARG_MAX], kind[QARG_MAX], decision[QARG_MAX];
	char since[QARG_MAX], until[QARG_MAX], text[QARG_MAX];
	struct log_key before;
};

static void key_of(struct log_key *k, const struct cd_audit_entry *e)
{
	const struct cd_audit_str *h = &e->str[CD_AF_HOST];

	k->seq = e->seq;
	k->time_ns = e->time_ns;
	k->has_host = h->p && h->len < sizeof k->host;
	if (k->has_host) {
		memcpy(k->host, h->p, h->len);
		k->host[h->len] = '\0';
	}
}

struct log_scan {
	const struct log_q *q;
	struct cd_buf json; /* a record as JSON, for the free text */
	/* One chunk: a ring of its newest PAGE + 1 matches. */
	struct cd_buf rows[PAGE + 1];
	struct log_key keys[PAGE + 1];
	size_t n;           /* matches in the chunk */
	size_t read;        /* records in the chunk */
	struct log_key low; /* the chunk's oldest record */
	/* The page: matches newest first. */
	struct cd_buf out[PAGE + 1];
	struct log_key out_keys[PAGE + 1];
	size_t got;
	size_t scanned;       /* records read for this page */
	struct log_key go_on; /* the budget ran out: the cursor to go on from */
	int r;
};

static int log_one(const struct cd_audit_entry *e, void *ctx)
{
	struct log_scan *ls = ctx;
	struct cd_buf *row;

	if (!ls->read++)
		key_of(&ls->low, e);
	if (ls->q->text[0]) {
		cd_buf_reset(&ls->json);
		if ((ls->r = cd_audit_entry_json(e, &ls->json)) < 0)
			return 1;
		if (!memmem(ls->json.data, ls->json.len, ls->q->text, strlen(ls->q->text)))
			return 0;
	}
	row = &ls->rows[ls->n % (PAGE + 1)];
	cd_buf_reset(row);
	key_of(&ls->keys[ls->n % (PAGE + 1)], e);
	ls->n++;
	if ((ls->r = render_row(row, e)) < 0)
		return 1;
	return 0;
}

static int qarg(const struct cd_http_req *rq, const char *name, char *out)
{
	const char *v = cd_http_query(rq, name);

	out[0] = '\0';
	if (!v)
		return 0;
	if (strlen(v) >= QARG_MAX)
		return -1;
	memcpy(out, v, strlen(v) + 1);
	return 0;
}

/* The query arguments into q and f; a one-line reason into why. */
static int parse_q(const struct cd_http_req *rq, struct log_q *q, struct cd_audit_filter *f,
                   const char **why)
{
	const char *b = cd_http_query(rq, "before"), *bt = cd_http_query(rq, "bt");
	const char *bh = cd_http_query(rq, "bh");
	int64_t now = (int64_t)time(NULL) * 1000000000LL;
	char *end;

	memset(q, 0, sizeof *q);
	memset(f, 0, sizeof *f);
	*why = "a filter is too long";
	if (qarg(rq, "agent", q->agent) || qarg(rq, "run", q->run) || qarg(rq, "kind", q->kind) ||
	    qarg(rq, "decision", q->decision) || qarg(rq, "since", q->since) ||
	    qarg(rq, "until", q->until) || qarg(rq, "q", q->text))
		return -1;
	if (b && *b) {
		errno = 0;
		q->before.seq = strtoull(b, &end, 10);
		*why = "before is a record's seq";
		if (errno || *end || b[0] < '0' || b[0] > '9')
			return -1;
	}
	if (q->before.seq && bt && bh) {
		/* The rest of the cursor: the record's time and host. */
		long long t;
		*why = "bt and bh are a record's time (ns) and host";
		errno = 0;
		t = strtoll(bt, &end, 10);
		if (errno || *end || !*bt || strlen(bh) >= sizeof q->before.host)
			return -1;
		q->before.time_ns = t;
		memcpy(q->before.host, bh, strlen(bh) + 1);
		q->before.has_host = 1;
	}
	f->agent = q->agent[0] ? q->agent : NULL;
	f->run_id = q->run[0] ? q->run : NULL;
	f->kind = q->kind[0] ? q->kind : NULL;
	f->decision = q->decision[0] ? q->decision : NULL;
	*why = "since: a time (2026-01-02T03:04:05Z, 2026-01-02, @SECONDS) or a duration ago (10m)";
	if (q->since[0] && cd_audit_time_parse(q->since, now, &f->since_ns) < 0)
		return -1;
	*why = "until: a time (2026-01-02T03:04:05Z, 2026-01-02, @SECONDS) or a duration ago (10m)";
	if (q->until[0] && cd_audit_time_parse(q->until, now, &f->until_ns) < 0)
		return -1;
	return 0;
}

static int filter_input(struct cd_buf *b, const char *name, const char *label, const char *v)
{
	int r = cd_buf_printf(b, "<label>%s <input type=\"text\" name=\"%s\" value=\"", label,
	                      name);
	r = r ?: esc_c(b, v);
	return r ?: cd_buf_puts(b, "\"></label> ");
}

static int filter_form(struct cd_buf *b, const struct log_q *q)
{
	int r = cd_buf_puts(b, "<form class=\"filter\" method=\"get\" action=\"/log\">");
	r = r ?: filter_input(b, "agent", "agent", q->agent);
	r = r ?: filter_input(b, "run", "run id", q->run);
	r = r ?: filter_input(b, "kind", "kind", q->kind);
	r = r ?: filter_input(b, "decision", "decision", q->decision);
	r = r ?: filter_input(b, "since", "since", q->since);
	r = r ?: filter_input(b, "until", "until", q->until);
	r = r ?: filter_input(b, "q", "text", q->text);
	return r ?: cd_buf_puts(b, "<button>Filter</button> <a href=\"/log\">clear</a></form>");
}

/* The link to the next (older) page: the filters and the cursor. */
static int older_link(struct cd_buf *b, const struct log_q *q, const struct log_key *before)
{
	const char *names[] = { "agent", "run", "kind", "decision", "since", "until", "q" };
	const char *vals[] = {
		q->agent, q->run, q->kind, q->decision, q->since, q->until, q->text
	};
	size_t i;
	int r = cd_buf_printf(b, "<p><a id=\"older\" href=\"/log?before=%llu",
	                      (unsigned long long)before->seq);

	for (i = 0; i < sizeof names / sizeof names[0] && !r; i++)
		if (vals[i][0]) {
			r = cd_buf_printf(b, "&amp;%s=", names[i]);
			r = r ?: url_enc(b, vals[i], strlen(vals[i]));
		}
	if (!r && before->has_host) {
		/* The rest of the cursor, last: the record's time and host. */
		r = cd_buf_printf(b, "&amp;bt=%lld&amp;bh=", (long long)before->time_ns);
		r = r ?: url_enc(b, before->host, strlen(before->host));
	}
	return r ?: cd_buf_puts(b, "\">Older records</a></p>");
}

/* Read the page: chunks of records before the cursor, newest first,
 * until PAGE + 1 matches (one more tells there are older ones). */
static int scan_page(struct cd_console *c, struct log_scan *ls, const struct cd_audit_filter *f0,
                     struct cd_err *err)
{
	struct cd_audit_filter f = *f0;
	struct log_key cursor = ls->q->before;
	size_t i, k;
	int r;

	while (ls->got <= PAGE) {
		f.before_seq = cursor.seq;
		f.before_time_ns = cursor.time_ns;
		f.before_host = cursor.seq && cursor.has_host ? cursor.host : NULL;
		f.last = ls->q->text[0] ? TEXT_CHUNK : PAGE + 1 - ls->got;
		ls->n = ls->read = 0;
		r = cd_audit_query(c->conf.audit, &f, log_one, ls, err);
		if (r < 0 || ls->r < 0)
			return r < 0 ? r : ls->r;
		k = ls->n < PAGE + 1 - ls->got ? ls->n : PAGE + 1 - ls->got;
		for (i = 0; i < k; i++) {
			size_t at = (ls->n - 1 - i) % (PAGE + 1);
			struct cd_buf t = ls->out[ls->got];
			ls->out[ls->got] = ls->rows[at];
			ls->out_keys[ls->got++] = ls->keys[at];
			ls->rows[at] = t;
		}
		if (ls->read < f.last || (!ls->low.has_host && ls->low.seq <= 1))
			break; /* nothing older */
		cursor = ls->low;
		ls->scanned += ls->read;
		if (ls->got <= PAGE && ls->scanned >= TEXT_BUDGET) {
			ls->go_on = cursor;
			break;
		}
	}
	return 0;
}

static int render_log(struct cd_console *c, struct cd_buf *b, const struct log_q *q,
                      const struct cd_audit_filter *f)
{
	struct cd_err err = { 0, "" };
	struct log_scan *ls;
	size_t i, shown;
	int r;

	if (!(ls = calloc(1, sizeof *ls)))
		return -ENOMEM;
	ls->q = q;
	cd_buf_init(&ls->json, 4 * CD_AUDIT_DETAILS_MAX);
	for (i = 0; i <= PAGE; i++) {
		cd_buf_init(&ls->rows[i], ROW_CAP);
		cd_buf_init(&ls->out[i], ROW_CAP);
	}
	r = scan_page(c, ls, f, &err);
	if (r < 0) {
		r = cd_buf_puts(b, "<p class=\"error\">cannot read the audit log: ");
		r = r ?: esc_c(b, err.msg[0] ? err.msg : "the records could not be rendered");
		r = r ?: cd_buf_puts(b, "</p>");
	} else if (!ls->got && !ls->go_on.seq) {
		r = cd_buf_puts(b, "<p class=\"empty\">No record matches.</p>");
	} else if (!ls->got) {
		r = cd_buf_printf(b,
		                  "<p class=\"empty\">No match in the %zu records before seq %llu."
		                  "</p>",
		                  ls->scanned, (unsigned long long)ls->go_on.seq);
		r = r ?: older_link(b, q, &ls->go_on);
	} else {
		shown = ls->got < PAGE ? ls->got : PAGE;
		r = cd_buf_puts(b, head_row);
		for (i = 0; i < shown && !r; i++)
			r = cd_buf_append(b, ls->out[i].data, ls->out[i].len);
		r = r ?: cd_buf_puts(b, "</tbody></table>");
		if (!r && ls->got > PAGE)
			r = older_link(b, q, &ls->out_keys[PAGE - 1]);
		else if (!r && ls->go_on.seq)
			r = older_link(b, q, &ls->go_on);
	}
	for (i = 0; i <= PAGE; i++) {
		cd_buf_release(&ls->rows[i]);
		cd_buf_release(&ls->out[i]);
	}
	cd_buf_release(&ls->json);
	free(ls);
	return r;
}

int console_h_log(void *ctx, const struct cd_http_req *rq, struct cd_http_resp *rs)
{
	struct cd_console *c = ctx;
	struct console_session s;
	struct cd_audit_filter f;
	struct log_q *q;
	const char *why;
	int r;

	if (!(q = malloc(sizeof *q)))
		return -ENOMEM;
	pthread_mutex_lock(&c->mu);
	if (!console_auth(c, rq, rs, &s) || !have_log(c, rs, &s))
		goto out;
	if (parse_q(rq, q, &f, &why) < 0) {
		console_message(rs, 400, "Audit log", why, &s);
		goto out;
	}
	rs->ctype = "text/html; charset=utf-8";
	r = console_page_start(&rs->body, "Audit log", s.person, s.csrf);
	r = r ?: filter_form(&rs->body, q);
	r = r ?: render_log(c, &rs->body, q, &f);
	r = r ?: console_page_end(&rs->body);
	if (r < 0)
		console_message(rs, 500, "Audit log", "out of memory", &s);
out:
	pthread_mutex_unlock(&c->mu);
	free(q);
	return 0;
}

/* ---- one run ------------------------------------------------------ */

enum { SEC_INTENT, SEC_RESULT, SEC_EGRESS, SEC_MCP, SEC_DENIED, SEC_OTHER, SEC_N };

static const char *const sec_title[SEC_N] = {
	"Intent and decision", "Result", "Egress attempts", "MCP calls", "Denials", "Other records",
};

struct run_scan {
	struct cd_buf sec[SEC_N];
	size_t n[SEC_N], total, bytes;
	int r, cut;
};

static int run_one(const struct cd_audit_entry *e, void *ctx)
{
	struct run_scan *rs = ctx;
	const struct cd_audit_str *k = &e->str[CD_AF_KIND];
	int s;

	if (rs->total >= RUN_MAX || rs->bytes >= PAGE_CAP - 2 * ROW_CAP) {
		rs->cut = 1;
		return 1;
	}
	rs->total++;
	if (str_is(k, "run.intent") || str_starts(k, "approval.") || str_starts(k, "grant."))
		s = SEC_INTENT;
	else if (str_is(k, "run.result"))
		s = SEC_RESULT;
	else if (str_starts(k, "egress."))
		s = SEC_EGRESS;
	else if (str_starts(k, "mcp."))
		s = SEC_MCP;
	else
		s = SEC_OTHER;
	rs->n[s]++;
	rs->bytes -= rs->sec[s].len;
	if ((rs->r = render_row(&rs->sec[s], e)) < 0)
		return 1;
	rs->bytes += rs->sec[s].len;
	/* A denial is listed under its kind and again with the denials. */
	if (str_starts(&e->str[CD_AF_DECISION], "den")) {
		rs->n[SEC_DENIED]++;
		rs->bytes -= rs->sec[SEC_DENIED].len;
		rs->r = render_row(&rs->sec[SEC_DENIED], e);
		rs->bytes += rs->sec[SEC_DENIED].len;
	}
	return rs->r < 0;
}

static int render_run(struct cd_console *c, struct cd_buf *b, const char *id)
{
	struct cd_audit_filter f;
	struct cd_err err = { 0, "" };
	struct run_scan *rn;
	int i, r;

	if (!(rn = calloc(1, sizeof *rn)))
		return -ENOMEM;
	for (i = 0; i < SEC_N; i++)
		cd_buf_init(&rn->sec[i], PAGE_CAP);
	memset(&f, 0, sizeof f);
	f.run_id = id;
	r = cd_audit_query(c->conf.audit, &f, run_one, rn, &err);
	if ((r < 0 && r != 1) || rn->r < 0) {
		r = cd_buf_puts(b, "<p class=\"error\">cannot read the audit log: ");
		r = r ?: esc_c(b, err.msg[0] ? err.msg : "the records could not be rendered");
		r = r ?: cd_buf_puts(b, "</p>");
	} else if (!rn->total) {
		r = cd_buf_puts(b, "<p class=\"empty\">No record of this run.</p>");
	} else {
		r = rn->cut ? cd_buf_printf(b,
		                            "<p class=\"error\">more records than one page "
		                            "holds: the first %zu are shown</p>",
		                            rn->total)
		            : 0;
		for (i = 0; i < SEC_N && !r; i++) {
			r = cd_buf_printf(b, "<section id=\"sec-%d\"><h2>%s (%zu)</h2>", i,
			                  sec_title[i], rn->n[i]);
			if (!r && rn->n[i]) {
				r = cd_buf_puts(b, head_row);
				r = r ?: cd_buf_append(b, rn->sec[i].data, rn->sec[i].len);
				r = r ?: cd_buf_puts(b, "</tbody></table>");
			} else if (!r) {
				r = cd_buf_puts(b, "<p class=\"empty\">none</p>");
			}
			r = r ?: cd_buf_puts(b, "</section>");
		}
	}
	for (i = 0; i < SEC_N; i++)
		cd_buf_release(&rn->sec[i]);
	free(rn);
	return r;
}

int console_h_run(void *ctx, const struct cd_http_req *rq, struct cd_http_resp *rs)
{
	struct cd_console *c = ctx;
	struct console_session s;
	const char *id = cd_http_query(rq, "id");
	int r;

	pthread_mutex_lock(&c->mu);
	if (!console_auth(c, rq, rs, &s) || !have_log(c, rs, &s))
		goto out;
	if (!id || !*id || strlen(id) >= QARG_MAX) {
		console_message(rs, 400, "Run", "give a run id: /run?id=ID", &s);
		goto out;
	}
	rs->ctype = "text/html; charset=utf-8";
	r = console_page_start(&rs->body, "Run", s.person, s.csrf);
	r = r ?: cd_buf_puts(&rs->body, "<p>Run <code class=\"runid\">");
	r = r ?: esc_c(&rs->body, id);
	r = r ?: cd_buf_puts(&rs->body, "</code> · <a href=\"/log?run=");
	r = r ?: url_enc(&rs->body, id, strlen(id));
	r = r ?: cd_buf_puts(&rs->body, "\">in the log</a></p>");
	r = r ?: render_run(c, &rs->body, id);
	r = r ?: console_render_replay(c, &rs->body, id);
	r = r ?: console_page_end(&rs->body);
	if (r < 0)
		console_message(rs, 500, "Run", "out of memory", &s);
out:
	pthread_mutex_unlock(&c->mu);
	return 0;
}

/* ---- verification ------------------------------------------------- */

static int render_verify(struct cd_console *c, struct cd_buf *b, const char *csrf)
{
	const struct cd_audit_report *rep = &c->vrep;
	char t[64];
	int r = 0;

	if (c->verifying) {
		if (cd_audit_time_format(c->verifying_since * 1000000000LL, t, sizeof t) < 0)
			snprintf(t, sizeof t, "?");
		r = cd_buf_printf(b, "<p id=\"vrunning\">Verifying now (since %s, asked by ", t);
		r = r ?: esc_c(b, c->verifying_by);
		r = r ?: cd_buf_puts(b, "); reload for the outcome.</p>");
	}
	if (r) {
		return r;
	} else if (!c->verified) {
		r = cd_buf_puts(b, "<p id=\"vstate\" class=\"unknown\">Not verified since the "
		                   "console started.</p>");
	} else {
		if (cd_audit_time_format(c->verified_at * 1000000000LL, t, sizeof t) < 0)
			snprintf(t, sizeof t, "?");
		r = cd_buf_printf(b, "<p>Last verified at %s by ", t);
		r = r ?: esc_c(b, c->verified_by);
		r = r ?: cd_buf_puts(b, ".</p>");
		if (!r && c->verify_failed) {
			r = cd_buf_puts(b, "<p id=\"vstate\" class=\"error\">could not verify: ");
			r = r ?: esc_c(b, c->verify_msg);
			r = r ?: cd_buf_puts(b, "</p>");
		} else if (!r && rep->problem != CD_AUDIT_INTACT) {
			r = cd_buf_puts(b, "<p id=\"vstate\" class=\"error\">FAILED: ");
			/* The chain's name is the store's (a host name): escaped. */
			if (rep->chain[0]) {
				r = r ?: cd_buf_puts(b, "chain '");
				r = r ?: esc_c(b, rep->chain);
				r = r ?: cd_buf_puts(b, "': ");
			}
			r = r
			            ?: cd_buf_printf(b, "seq %llu: %s: ",
			                             (unsigned long long)rep->bad_seq,
			                             cd_audit_problem_name(rep->problem));
			r = r ?: esc_c(b, rep->what);
			r = r ?: cd_buf_puts(b, "</p>");
		} else if (!r) {
			r = cd_buf_printf(
			        b,
			        "<p id=\"vstate\" class=\"ok\">intact: %llu records (last "
			        "seq %llu), %llu checkpoints in the log, %llu in the "
			        "checkpoint file (covering %llu), %llu signatures "
			        "verified</p>",
			        (unsigned long long)rep->records, (unsigned long long)rep->last_seq,
			        (unsigned long long)rep->checkpoints,
			        (unsigned long long)rep->file_checkpoints,
			        (unsigned long long)rep->file_covered,
			        (unsigned long long)rep->signatures);
		}
		if (!r && !c->verify_failed && rep->interrupted)
			r = cd_buf_printf(b,
			                  "<p>%llu runs have an intent and no result "
			                  "(interrupted).</p>",
			                  (unsigned long long)rep->interrupted);
	}
	if (!r && !c->conf.audit_pubkey)
		r = cd_buf_puts(b, "<p class=\"note\">No public key: checkpoint signatures are "
		                   "not checked.</p>");
	if (!r && !c->conf.checkpoint_path)
		r = cd_buf_puts(b, "<p class=\"note\">No checkpoint file: truncation and "
		                   "rollback are detected only against one.</p>");
	r = r
	            ?: cd_buf_puts(b, "<form method=\"post\" action=\"/verify\"><input "
	                              "type=\"hidden\" name=\"csrf\" value=\"");
	r = r ?: esc_c(b, csrf);
	return r ?: cd_buf_puts(b, "\"><button id=\"verify\">Verify now</button></form>");
}

int console_h_verify_page(void *ctx, const struct cd_http_req *rq, struct cd_http_resp *rs)
{
	struct cd_console *c = ctx;
	struct console_session s;
	int r;

	pthread_mutex_lock(&c->mu);
	if (!console_auth(c, rq, rs, &s))
		goto out;
	rs->ctype = "text/html; charset=utf-8";
	r = console_page_start(&rs->body, "Audit chain", s.person, s.csrf);
	r = r ?: render_verify(c, &rs->body, s.csrf);
	r = r ?: console_page_end(&rs->body);
	if (r < 0)
		console_message(rs, 500, "Audit chain", "out of memory", &s);
out:
	pthread_mutex_unlock(&c->mu);
	return 0;
}

/* The verification, on a thread of its own and a read-only connection of
 * its own: the console goes on serving while it reads the whole chain. */
static void *verify_thread(void *arg)
{
	struct cd_console *c = arg;
	struct cd_audit_opts ao;
	struct cd_audit_verify_opts vo;
	struct cd_audit_report rep;
	struct cd_audit *a = NULL;
	struct cd_err err = { 0, "" };
	char line[400];
	int r;

	memset(&ao, 0, sizeof ao);
	ao.read_only = 1;
	memset(&vo, 0, sizeof vo);
	vo.pubkey = c->conf.audit_pubkey;
	vo.checkpoint_path = c->conf.checkpoint_path;
	memset(&rep, 0, sizeof rep);
	r = cd_audit_open(c->conf.audit_path, &ao, &a, &err);
	r = r ?: cd_audit_verify(a, &vo, &rep, &err);
	cd_audit_close(a);
	pthread_mutex_lock(&c->mu);
	c->vrep = rep;
	c->verified = 1;
	c->verified_at = (int64_t)time(NULL);
	c->verify_failed = r < 0;
	snprintf(c->verify_msg, sizeof c->verify_msg, "%s", r < 0 ? err.msg : "");
	if (r < 0)
		snprintf(line, sizeof line, "verify could not run: %s", err.msg);
	else if (rep.problem != CD_AUDIT_INTACT)
		snprintf(line, sizeof line, "verify FAILED at seq %llu: %s",
		         (unsigned long long)rep.bad_seq, cd_audit_problem_name(rep.problem));
	else
		snprintf(line, sizeof line, "verify: intact, %llu records",
		         (unsigned long long)rep.records);
	console_record(c, "console.verify", c->verifying_by, line);
	snprintf(c->verified_by, sizeof c->verified_by, "%s", c->verifying_by);
	c->verifying = 0;
	pthread_cond_broadcast(&c->cv);
	pthread_mutex_unlock(&c->mu);
	return NULL;
}

/* POST /verify: cd_audit_verify with the key and checkpoint file that
 * `cordon log verify` would use (cmd-serve.c finds them), on its own
 * thread; the answer waits up to VERIFY_WAIT_MS for it (a small log's
 * page shows the outcome at once, a large one's shows it running).  The
 * outcome is kept for the page and recorded in the log. */
#define VERIFY_WAIT_MS 1000

int console_h_verify(void *ctx, const struct cd_http_req *rq, struct cd_http_resp *rs)
{
	struct cd_console *c = ctx;
	struct console_session s;
	struct timespec ts;

	pthread_mutex_lock(&c->mu);
	if (!console_check_post(c, rq, rs, &s) || !have_log(c, rs, &s))
		goto out;
	if (!c->conf.audit_path) {
		console_message(rs, 503, "Audit chain", "this console does not know its log's path",
		                &s);
		goto out;
	}
	if (!c->verifying && !c->stopping) {
		if (c->verifier_started)
			pthread_join(c->verifier, NULL); /* done: it cleared verifying */
		c->verifier_started = 0;
		snprintf(c->verifying_by, sizeof c->verifying_by, "%s", s.person);
		c->verifying_since = (int64_t)time(NULL);
		if (pthread_create(&c->verifier, NULL, verify_thread, c) != 0) {
			console_message(rs, 503, "Audit chain", "cannot start the verification",
			                &s);
			goto out;
		}
		c->verifier_started = 1;
		c->verifying = 1;
	}
	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += VERIFY_WAIT_MS / 1000;
	while (c->verifying && !c->stopping)
		if (pthread_cond_timedwait(&c->cv, &c->mu, &ts) != 0)
			break;
	cd_http_resp_header(rs, "Location", "/verify");
	cd_http_resp_text(rs, 303, c->verifying ? "verifying\n" : "verified\n");
out:
	pthread_mutex_unlock(&c->mu);
	return 0;
}
