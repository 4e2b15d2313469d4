/* console-replay.c — a `cordon shell` session's recording on its run's
 * page: what the pty printed, shown as escaped text, and a small player
 * (/static/replay.js, a file: the Content-Security-Policy allows no inline
 * script) that steps through the recorded chunks with their timing.
 *
 * The recording is found as `cordon log show --run ID --replay` finds it:
 * the file's name comes from the run id (checked for shape, never from the
 * record), sessions/RUN_ID.rec next to the audit log, and its SHA-256 from
 * the run's result record; a file that does not match is not shown.  The
 * page and the player read the asciicast rendering (cd_session_asciicast:
 * printed output only, never what was typed, valid JSON in ASCII).
 *
 * Trust boundary: every byte of a recording came from the sandbox.  On
 * the page each chunk goes through cd_console_html_escape (markup as text,
 * terminal escapes, C1 controls and bidirectional overrides as visible
 * \xNN and \uNNNN); the player puts text into the page only through
 * textContent, after the same controls are made visible.  A terminal
 * escape is never interpreted, by the server or by the browser. */
#include "console-int.h"

#include "audit/session.h"
#include "sandbox/sandbox.h"

#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <string.h>

/* The largest recording the console shows (the default --record-limit);
 * its asciicast fits a response (at most six bytes a byte). */
#define REPLAY_FILE_MAX (1u << 20)
#define REPLAY_CAST_MAX (7u << 20)
/* Bytes of output shown on the page itself (the player has it all). */
#define REPLAY_PAGE_MAX (128u << 10)

static int run_id_ok(const char *id)
{
	size_t i;

	for (i = 0; id && id[i]; i++)
		if (!((id[i] >= '0' && id[i] <= '9') || (id[i] >= 'a' && id[i] <= 'f')))
			return 0;
	return id && i == CD_RUN_ID_LEN;
}

struct rec_find {
	char sha[65];
	int64_t start_s, typed, printed;
	int found, truncated;
};

static int find_result(const struct cd_audit_entry *e, void *ctx)
{
	struct rec_find *f = ctx;
	const struct cd_audit_str *d = &e->str[CD_AF_DETAILS];
	json_t *j = d->p ? json_loadb(d->p, d->len, 0, NULL) : NULL;
	json_t *s = json_object_get(j, "session");
	const char *sha = json_string_value(json_object_get(s, "sha256"));

	if (sha && strlen(sha) == 64) {
		memcpy(f->sha, sha, 65);
		f->found = 1;
		f->typed = json_integer_value(json_object_get(s, "typed_bytes"));
		f->printed = json_integer_value(json_object_get(s, "printed_bytes"));
		f->truncated = json_is_true(json_object_get(s, "truncated"));
		f->start_s = e->time_ns / 1000000000 -
		             (e->has_duration ? (int64_t)(e->duration_ms / 1000) : 0);
	}
	json_decref(j);
	return 0;
}

/* The run's recording as asciicast into out: 1 when the run has none, 0,
 * or negative with err set. */
static int load_cast(struct cd_console *c, const char *id, struct rec_find *f, struct cd_buf *out,
                     struct cd_err *err)
{
	struct cd_audit_filter q;
	char path[4096];
	int r, n;

	memset(f, 0, sizeof *f);
	memset(&q, 0, sizeof q);
	q.run_id = id;
	q.kind = "run.result";
	r = cd_audit_query(c->conf.audit, &q, find_result, f, err);
	if (r < 0)
		return r;
	if (!f->found)
		return 1;
	if (!c->conf.sessions_dir)
		return cd_err_set(err, -ENOENT, "this console has no session directory");
	n = snprintf(path, sizeof path, "%s/%s.rec", c->conf.sessions_dir, id);
	if (n < 0 || (size_t)n >= sizeof path)
		return cd_err_set(err, -ENAMETOOLONG, "the session's path is too long");
	r = cd_session_asciicast(path, REPLAY_FILE_MAX, f->sha, f->start_s, out, err);
	if (r == -CD_E_LIMIT)
		return cd_err_set(err, r,
		                  "the recording is larger than the console shows (1 MiB): "
		                  "cordon log show --run %s --replay",
		                  id);
	return r;
}

/* One chunk of output, escaped, its line ends (\n, \r\n) kept as lines. */
static int esc_lines(struct cd_buf *b, const char *t, size_t n)
{
	size_t at = 0;
	int r = 0;

	while (at < n && !r) {
		const char *nl = memchr(t + at, '\n', n - at);
		size_t len = nl ? (size_t)(nl - (t + at)) : n - at, keep = len;

		if (nl && keep && t[at + keep - 1] == '\r')
			keep--;
		r = cd_console_html_escape(b, t + at, keep);
		if (!r && nl)
			r = cd_buf_putc(b, '\n');
		at += len + (nl ? 1 : 0);
	}
	return r;
}

/* The printed chunks of a cast, each escaped, up to REPLAY_PAGE_MAX bytes
 * of output; how many chunks there are into *ret_n. */
static int render_text(struct cd_buf *b, const struct cd_buf *cast, size_t *ret_n)
{
	size_t at = 0, shown = 0, n = 0;
	int r = 0, line = 0;

	while (at < cast->len && !r) {
		const char *nl = memchr(cast->data + at, '\n', cast->len - at);
		size_t len = nl ? (size_t)(nl - (cast->data + at)) : cast->len - at;
		json_t *ev = line++ ? json_loadb(cast->data + at, len, 0, NULL) : NULL;
		const char *t = json_string_value(json_array_get(ev, 2));
		const char *k = json_string_value(json_array_get(ev, 1));

		if (t && k && !strcmp(k, "o")) {
			size_t tl = json_string_length(json_array_get(ev, 2));
			n++;
			if (shown < REPLAY_PAGE_MAX)
				r = esc_lines(b, t, tl);
			shown += tl;
		}
		json_decref(ev);
		at += len + 1;
	}
	if (!r && shown > REPLAY_PAGE_MAX)
		r = cd_buf_puts(b, "\n[cut here: the player shows it all]");
	*ret_n = n;
	return r;
}

int console_render_replay(struct cd_console *c, struct cd_buf *b, const char *id)
{
	struct cd_err err = { 0, "" };
	struct rec_find f;
	struct cd_buf cast;
	size_t n = 0;
	int r;

	if (!run_id_ok(id))
		return 0;
	cd_buf_init(&cast, REPLAY_CAST_MAX);
	r = load_cast(c, id, &f, &cast, &err);
	if (r == 1) {
		cd_buf_release(&cast);
		return 0;
	}
	r = cd_buf_puts(b, "<section id=\"session\"><h2>Shell session</h2>");
	if (!r && err.msg[0]) {
		r = cd_buf_puts(b, "<p class=\"error\">cannot show the recording: ");
		r = r ?: cd_console_html_escape(b, err.msg, strlen(err.msg));
		r = r ?: cd_buf_puts(b, "</p>");
	} else if (!r) {
		r = cd_buf_printf(b,
		                  "<p>typed %lld bytes (not shown), printed %lld bytes%s; the "
		                  "recording matches its SHA-256 in the run's result record.</p>"
		                  "<div id=\"player\" data-src=\"/run/cast?id=%s\">"
		                  "<button type=\"button\" id=\"rplay\">Play</button> "
		                  "<button type=\"button\" id=\"rstep\">Step</button> "
		                  "<button type=\"button\" id=\"rreset\">Reset</button> "
		                  "<span id=\"rpos\"></span></div>"
		                  "<pre id=\"rscreen\" class=\"replay\">",
		                  (long long)f.typed, (long long)f.printed,
		                  f.truncated ? " (recording truncated at its cap)" : "", id);
		r = r ?: render_text(b, &cast, &n);
		r = r ?: cd_buf_puts(b, "</pre><script src=\"/static/replay.js\" defer></script>");
	}
	cd_buf_release(&cast);
	return r ?: cd_buf_puts(b, "</section>");
}

/* GET /run/cast?id=RUN: the recording as asciicast v2, for the player. */
int console_h_run_cast(void *ctx, const struct cd_http_req *rq, struct cd_http_resp *rs)
{
	struct cd_console *c = ctx;
	struct console_session s;
	struct cd_err err = { 0, "" };
	struct rec_find f;
	const char *id = cd_http_query(rq, "id");
	int r;

	pthread_mutex_lock(&c->mu);
	if (!console_auth(c, rq, rs, &s))
		goto out;
	if (!c->conf.audit) {
		console_message(rs, 503, "Session", "this console has no audit log", &s);
		goto out;
	}
	if (!run_id_ok(id)) {
		console_message(rs, 400, "Session", "give a run id: /run/cast?id=ID", &s);
		goto out;
	}
	r = load_cast(c, id, &f, &rs->body, &err);
	if (r != 0) {
		cd_buf_reset(&rs->body);
		console_message(rs, r == 1 ? 404 : 500, "Session",
		                r == 1 ? "this run has no session recording" : err.msg, &s);
		goto out;
	}
	rs->ctype = "text/plain; charset=utf-8";
	cd_http_resp_header(rs, "Cache-Control", "no-store");
out:
	pthread_mutex_unlock(&c->mu);
	return 0;
}

/* The player: fetches the cast, then shows its chunks one after another
 * with their recorded gaps (each at most 2 s), or one per Step. */
static const char replay_js[] =
        "'use strict';\n"
        "(function () {\n"
        "  const box = document.getElementById('player');\n"
        "  const scr = document.getElementById('rscreen');\n"
        "  const pos = document.getElementById('rpos');\n"
        "  if (!box || !scr || !pos) return;\n"
        "  const hidden = /[\\u0000-\\u0009\\u000b-\\u001f\\u007f-\\u009f\\u061c\\u200b-\\u200f"
        "\\u2028-\\u202e\\u2060-\\u2069\\ufeff\\ufff9-\\ufffb]/g;\n"
        "  function visible(t) {\n"
        "    return t.replace(/\\r\\n/g, '\\n').replace(hidden, function (ch) {\n"
        "      const n = ch.charCodeAt(0);\n"
        "      return n < 0x100 ? '\\\\x' + n.toString(16).padStart(2, '0')\n"
        "        : '\\\\u' + n.toString(16).toUpperCase().padStart(4, '0');\n"
        "    });\n"
        "  }\n"
        "  let ev = [], i = 0, timer = null, text = '';\n"
        "  function show() {\n"
        "    scr.textContent = text;\n"
        "    pos.textContent = i + ' / ' + ev.length + ' chunks' +\n"
        "      (i ? ', at ' + ev[i - 1][0].toFixed(3) + ' s' : '');\n"
        "    box.dataset.frame = String(i);\n"
        "    box.dataset.state = i >= ev.length ? 'ended' : (timer ? 'playing' : 'paused');\n"
        "  }\n"
        "  function step() {\n"
        "    if (i >= ev.length) return false;\n"
        "    text += visible(ev[i][2]);\n"
        "    i++;\n"
        "    return true;\n"
        "  }\n"
        "  function tick() {\n"
        "    timer = null;\n"
        "    if (!step()) { show(); return; }\n"
        "    if (i < ev.length) {\n"
        "      const gap = Math.min(2, Math.max(0, ev[i][0] - ev[i - 1][0]));\n"
        "      timer = setTimeout(tick, gap * 1000);\n"
        "    }\n"
        "    show();\n"
        "  }\n"
        "  function stop() { if (timer) clearTimeout(timer); timer = null; }\n"
        "  function reset() { stop(); i = 0; text = ''; show(); }\n"
        "  fetch(box.dataset.src, { credentials: 'same-origin' }).then(function (r) {\n"
        "    if (!r.ok) throw new Error('HTTP ' + r.status);\n"
        "    return r.text();\n"
        "  }).then(function (body) {\n"
        "    body.split('\\n').slice(1).forEach(function (l) {\n"
        "      if (!l) return;\n"
        "      const e = JSON.parse(l);\n"
        "      if (Array.isArray(e) && e[1] === 'o' && typeof e[2] === 'string' &&\n"
        "          typeof e[0] === 'number') ev.push(e);\n"
        "    });\n"
        "    box.dataset.chunks = String(ev.length);\n"
        "    document.getElementById('rplay').addEventListener('click', function () {\n"
        "      if (timer) { stop(); show(); return; }\n"
        "      if (i >= ev.length) reset();\n"
        "      else if (i === 0) text = '';\n"
        "      tick();\n"
        "    });\n"
        "    document.getElementById('rstep').addEventListener('click', function () {\n"
        "      stop(); if (i === 0) text = ''; step(); show();\n"
        "    });\n"
        "    document.getElementById('rreset').addEventListener('click', reset);\n"
        "    box.dataset.ready = 'yes';\n"
        "  }).catch(function (e) { pos.textContent = 'cannot load the recording: ' + e.message; "
        "});\n"
        "})();\n";

int console_h_replay_js(void *ctx, const struct cd_http_req *rq, struct cd_http_resp *rs)
{
	(void)ctx;
	(void)rq;
	rs->ctype = "text/javascript; charset=utf-8";
	return cd_buf_puts(&rs->body, replay_js);
}
