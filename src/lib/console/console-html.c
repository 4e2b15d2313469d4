/* console-html.c — the console's HTML: the escaper every piece of
 * agent-controlled text goes through, the page frame, the held-calls list
 * (one line of HTML, so that it travels as one Server-Sent Event), and the
 * static script and style (served as files: the Content-Security-Policy
 * allows no inline script).
 *
 * Trust boundary: the rows of the approval queue carry the agent's tool
 * names, arguments and task; everything taken from a row is escaped here,
 * ids included. */
#include "console-int.h"

#include "gate/approval.h"

#include <jansson.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

/* A code point shown as a visible \uNNNN: C1 controls, bidirectional
 * marks, embeddings, overrides and isolates, zero-width characters, line
 * and paragraph separators, the BOM and interlinear annotations. */
static int hidden_cp(uint32_t cp)
{
	return (cp >= 0x80 && cp <= 0x9f) || cp == 0x061c || (cp >= 0x200b && cp <= 0x200f) ||
	       (cp >= 0x2028 && cp <= 0x202e) || (cp >= 0x2060 && cp <= 0x2069) || cp == 0xfeff ||
	       (cp >= 0xfff9 && cp <= 0xfffb);
}

static uint32_t utf8_cp(const unsigned char *p, size_t k)
{
	if (k == 1)
		return p[0];
	if (k == 2)
		return ((uint32_t)(p[0] & 0x1f) << 6) | (p[1] & 0x3f);
	if (k == 3)
		return ((uint32_t)(p[0] & 0x0f) << 12) | ((uint32_t)(p[1] & 0x3f) << 6) |
		       (p[2] & 0x3f);
	return ((uint32_t)(p[0] & 0x07) << 18) | ((uint32_t)(p[1] & 0x3f) << 12) |
	       ((uint32_t)(p[2] & 0x3f) << 6) | (p[3] & 0x3f);
}

int cd_console_html_escape(struct cd_buf *b, const char *s, size_t n)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t i = 0, k;
	int r = 0;

	while (i < n && r == 0) {
		unsigned c = p[i];
		if (c < 0x80) {
			if (c == '&')
				r = cd_buf_puts(b, "&amp;");
			else if (c == '<')
				r = cd_buf_puts(b, "&lt;");
			else if (c == '>')
				r = cd_buf_puts(b, "&gt;");
			else if (c == '"')
				r = cd_buf_puts(b, "&quot;");
			else if (c == '\'')
				r = cd_buf_puts(b, "&#39;");
			else if (c < 0x20 || c == 0x7f)
				r = cd_buf_printf(b, "<span class=\"esc\">\\x%02x</span>", c);
			else
				r = cd_buf_putc(b, (char)c);
			i++;
			continue;
		}
		k = cd_utf8_seq(p + i, n - i);
		if (!k) {
			r = cd_buf_printf(b, "<span class=\"esc\">\\x%02x</span>", c);
			i++;
			continue;
		}
		if (hidden_cp(utf8_cp(p + i, k)))
			r = cd_buf_printf(b, "<span class=\"esc\">\\u%04X</span>",
			                  (unsigned)utf8_cp(p + i, k));
		else
			r = cd_buf_append(b, p + i, k);
		i += k;
	}
	return r;
}

static int esc(struct cd_buf *b, const char *s)
{
	return s ? cd_console_html_escape(b, s, strlen(s)) : cd_buf_puts(b, "-");
}

static void utc(int64_t t, char *out, size_t n)
{
	time_t tt = (time_t)t;
	struct tm tm;

	if (!gmtime_r(&tt, &tm) || !strftime(out, n, "%Y-%m-%dT%H:%M:%SZ", &tm))
		snprintf(out, n, "@%lld", (long long)t);
}

int console_page_start(struct cd_buf *b, const char *title, const char *person, const char *csrf)
{
	int r = cd_buf_puts(b, "<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\">"
	                       "<meta name=\"viewport\" content=\"width=device-width\">"
	                       "<link rel=\"stylesheet\" href=\"/static/console.css\">"
	                       "<script src=\"/static/console.js\" defer></script><title>");
	r = r ?: esc(b, title);
	r = r ?: cd_buf_puts(b, " — cordon</title></head><body><header><b>cordon</b> ");
	if (person && !r) {
		r = cd_buf_puts(b,
		                "<nav><a href=\"/\">Held calls</a> <a href=\"/log\">Audit log</a> "
		                "<a href=\"/verify\">Chain</a> <a "
		                "href=\"/proposals\">Proposals</a> <a "
		                "href=\"/grants\">Grants</a> <a href=\"/pins\">MCP tools</a></nav>"
		                "<span class=\"who\">");
		r = r ?: esc(b, person);
		r = r
		            ?: cd_buf_puts(b, "</span><form method=\"post\" action=\"/logout\">"
		                              "<input type=\"hidden\" name=\"csrf\" value=\"");
		r = r ?: esc(b, csrf);
		r = r ?: cd_buf_puts(b, "\"><button>Log out</button></form>");
	}
	r = r ?: cd_buf_puts(b, "</header><main><h1>");
	r = r ?: esc(b, title);
	return r ?: cd_buf_puts(b, "</h1>");
}

int console_page_end(struct cd_buf *b)
{
	return cd_buf_puts(b, "</main></body></html>\n");
}

/* A field: label, escaped value. */
static int field(struct cd_buf *b, const char *label, const char *v, const char *cls)
{
	int r = cd_buf_printf(b, "<dt>%s</dt><dd class=\"%s\">", label, cls);
	r = r ?: esc(b, v);
	return r ?: cd_buf_puts(b, "</dd>");
}

/* What the approver sees of the arguments: as the audit log shows them
 * (masked when the grant masks), else as the call gives them. */
static int args_shown(struct cd_buf *b, const struct cd_approval *a)
{
	json_t *l;
	char *s;
	int r;

	if (!a->log_args)
		return field(b, "arguments", a->args_json, "args");
	l = json_loads(a->log_args, 0, NULL);
	s = l && json_object_get(l, "args")
	            ? json_dumps(json_object_get(l, "args"), JSON_COMPACT | JSON_ENCODE_ANY)
	            : NULL;
	json_decref(l);
	r = field(b, "arguments (masked)", s ? s : "[withheld by cordon]", "args");
	free(s);
	return r;
}

struct held_ctx {
	struct cd_console *c;
	struct cd_buf *b;
	const char *csrf;
	size_t n;
	int r;
};

static int decide_form(struct cd_buf *b, const struct cd_approval *a, const char *csrf)
{
	int r = cd_buf_puts(b, "<form class=\"decide\" method=\"post\" action=\"/calls/");
	r = r ?: esc(b, a->id);
	r = r ?: cd_buf_puts(b, "\"><input type=\"hidden\" name=\"csrf\" value=\"");
	r = r ?: esc(b, csrf);
	r = r
	            ?: cd_buf_puts(b,
	                           "\"><input type=\"text\" name=\"comment\" maxlength=\"500\" "
	                           "placeholder=\"comment (optional)\" aria-label=\"comment\">"
	                           "<button name=\"decision\" value=\"approve\" class=\"approve\">"
	                           "Approve</button>"
	                           "<button name=\"decision\" value=\"deny\" class=\"deny\">"
	                           "Deny</button></form>");
	return r;
}

static int held_one(const struct cd_approval *a, void *ctx)
{
	struct held_ctx *h = ctx;
	struct cd_buf *b = h->b;
	char created[32], deadline[32];
	int r;

	utc(a->created, created, sizeof created);
	utc(a->deadline, deadline, sizeof deadline);
	r = cd_buf_puts(b, "<article class=\"call\" data-id=\"");
	r = r ?: esc(b, a->id);
	r = r ?: cd_buf_puts(b, "\"><h2>");
	r = r ?: esc(b, a->tool);
	r = r ?: cd_buf_puts(b, " <small>");
	r = r ?: esc(b, a->id);
	r = r ?: cd_buf_puts(b, "</small></h2><dl>");
	r = r ?: field(b, "agent", a->agent, "agent");
	r = r ?: field(b, "task", a->task, "task");
	r = r ?: field(b, "tool", a->tool, "tool");
	r = r ?: field(b, "action", a->action, "action");
	r = r ?: args_shown(b, a);
	r = r ?: field(b, "grant", a->grant_ids, "grant");
	r = r ?: field(b, "approval", a->approval, "approval");
	r = r ?: field(b, "binding SHA-256", a->args_sha256, "sha");
	r = r ?: field(b, "requested", created, "created");
	r = r
	            ?: cd_buf_printf(
	                       b,
	                       "<dt>deadline</dt><dd class=\"deadline\" data-deadline=\"%lld\">%s"
	                       "</dd></dl>",
	                       (long long)a->deadline, deadline);
	if (!r && strncmp(a->approval, "policy:", 7) == 0) {
		r = cd_buf_puts(b, "<p class=\"rule\">being decided by approver rule <b>");
		r = r ?: esc(b, a->approval + 7);
		r = r ?: cd_buf_puts(b, "</b>, which requires: ");
		r = r ?: console_rule_requires(h->c, b, a->approval + 7);
		r = r ?: cd_buf_puts(b, "</p>");
	} else if (!r)
		r = decide_form(b, a, h->csrf);
	r = r ?: cd_buf_puts(b, "</article>");
	h->n++;
	h->r = r;
	return r;
}

int console_render_held(struct cd_console *c, struct cd_buf *b, const char *csrf)
{
	struct cd_err err = { 0, "" };
	struct held_ctx h = { c, b, csrf, 0, 0 };
	int r;

	r = cd_approval_list(c->conf.state, "pending", 0, held_one, &h, &err);
	if (r < 0 || h.r < 0) {
		cd_buf_puts(b, "<p class=\"error\">cannot read the approval queue: ");
		esc(b, err.msg);
		return cd_buf_puts(b, "</p>");
	}
	if (!h.n)
		r = cd_buf_puts(b, "<p class=\"empty\">No call is waiting for approval.</p>");
	return r ?: console_render_rules(c, b);
}

const char console_js[] =
        "'use strict';\n"
        "/* cordon console: live held calls over Server-Sent Events, deadlines\n"
        " * counting down.  The server escapes every piece of agent text. */\n"
        "function tick() {\n"
        "  const now = Date.now() / 1000;\n"
        "  for (const d of document.querySelectorAll('[data-deadline]')) {\n"
        "    const left = Math.max(0, Math.round(Number(d.dataset.deadline) - now));\n"
        "    d.dataset.left = String(left);\n"
        "    d.title = left + ' s left';\n"
        "    const s = d.querySelector('.left') || d.appendChild(document.createElement('span'));\n"
        "    s.className = 'left';\n"
        "    s.textContent = ' (' + left + ' s left)';\n"
        "  }\n"
        "}\n"
        "document.addEventListener('DOMContentLoaded', () => {\n"
        "  const held = document.getElementById('held');\n"
        "  tick();\n"
        "  setInterval(tick, 1000);\n"
        "  if (!held) return;\n"
        "  const es = new EventSource('/events');\n"
        "  es.addEventListener('held', (e) => {\n"
        "    const typing = held.contains(document.activeElement) &&\n"
        "      document.activeElement.value;\n"
        "    if (typing) return;\n"
        "    held.innerHTML = e.data;\n"
        "    document.body.dataset.updates = String(Number(document.body.dataset.updates || 0) + "
        "1);\n"
        "    tick();\n"
        "  });\n"
        "  es.addEventListener('error', () => { document.body.dataset.live = 'lost'; });\n"
        "  es.addEventListener('open', () => { document.body.dataset.live = 'yes'; });\n"
        "});\n";

const char console_css[] =
        "body{font:15px/1.4 system-ui,sans-serif;margin:0;color:#222;background:#fafafa}\n"
        "header{display:flex;gap:1em;align-items:center;padding:.5em 1em;background:#223;"
        "color:#fff}\n"
        "header a{color:#fff}header form{margin-left:auto}.who{margin-left:auto}\n"
        "main{padding:1em;max-width:70em}\n"
        ".call{background:#fff;border:1px solid #ccd;border-radius:4px;padding:.5em 1em;"
        "margin:0 0 1em}\n"
        "dl{display:grid;grid-template-columns:10em 1fr;gap:.2em 1em}dt{color:#666}\n"
        "dd{margin:0;font-family:monospace;white-space:pre-wrap;word-break:break-all}\n"
        ".esc{background:#fdd;color:#900;border-radius:2px}\n"
        ".approve{background:#2a6;color:#fff}.deny{background:#b33;color:#fff}\n"
        "button{padding:.3em 1em;border:0;border-radius:3px;margin-left:.5em;cursor:pointer}\n"
        "input[type=text]{width:20em}.error{color:#b00}.ok{color:#060}\n"
        "table.log{border-collapse:collapse;font-size:13px}"
        "table.log td,table.log th{border:1px solid #ccd;padding:.1em .4em;vertical-align:top}\n"
        "table.log td{font-family:monospace;white-space:pre-wrap;word-break:break-all}\n"
        ".diff .add{background:#dfd}.diff .del{background:#fdd}.diff .hunk{color:#66a}\n"
        ".file{background:#fff;border:1px solid #ccd;margin:0 0 1em;padding:0 1em}"
        ".flagged{border:2px solid #c60}.flag{color:#a40;font-weight:bold}\n"
        "tr.denied{background:#fee}.filter input[type=text]{width:9em}.none{color:#999}\n";
