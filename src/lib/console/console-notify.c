/* console-notify.c — the console's webhooks (--notify-webhook): a JSON
 * message (a Slack-compatible "text", the structured event, a link to the
 * console) is posted to every configured URL when a call is held, and
 * when a break-glass grant is made or used.
 *
 * Off the decision path: the watcher only queues a message (a bounded
 * queue; the oldest is dropped, and recorded, when it is full); a thread
 * of its own sends it with libcurl (http/client.h: loaded on first use,
 * the address resolved once per message and pinned, no redirects, a
 * timeout), tries three times, and records a failure in the audit log
 * (console.webhook).  Nothing a webhook answers approves or blocks
 * anything.
 *
 * What is sent: ids, names, the binding SHA-256 and the deadline — never
 * the call's arguments (they may hold secrets; the approver reads them on
 * the page after logging in).  Each message is signed: the header
 * X-Cordon-Signature is "t=UNIX,v1=HEX", HEX the HMAC-SHA256 of
 * "UNIX.BODY" under the console's webhook key, so a receiver can tell a
 * message of this console from a forged one and refuse an old one.
 *
 * Trust boundary: the task is agent-controlled text; in the Slack text,
 * & < > are escaped (no links or mentions can be injected), and JSON
 * strings are jansson's.  The webhook's URL may hold a secret in its path
 * (Slack's do): it is never logged; records name only scheme://host:port. */
#include "console-int.h"

#include "http/client.h"

#include <errno.h>
#include <jansson.h>
#include <netdb.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define TRIES      3
#define TIMEOUT_MS 5000
#define MAX_ANSWER (64u << 10)

struct console_note {
	struct console_note *next;
	char *body;
};

/* ---- building messages (c->mu held) -------------------------------- */

/* Slack's escaping for text: & < > only. */
static int slack_text(struct cd_buf *b, const char *s)
{
	int r = 0;

	for (; s && *s && !r; s++) {
		if (*s == '&')
			r = cd_buf_puts(b, "&amp;");
		else if (*s == '<')
			r = cd_buf_puts(b, "&lt;");
		else if (*s == '>')
			r = cd_buf_puts(b, "&gt;");
		else if ((unsigned char)*s < 0x20 || *s == 0x7f)
			r = cd_buf_putc(b, '?');
		else
			r = cd_buf_putc(b, *s);
	}
	return r;
}

static void enqueue(struct cd_console *c, json_t *msg)
{
	struct console_note *n, **tail;
	size_t k = 0;
	char *s = json_dumps(msg, JSON_COMPACT | JSON_SORT_KEYS);

	json_decref(msg);
	if (!s || !(n = calloc(1, sizeof *n))) {
		free(s);
		console_record(c, "console.webhook", NULL,
		               "a notification was lost: out of memory");
		return;
	}
	n->body = s;
	for (tail = &c->notes; *tail; tail = &(*tail)->next)
		k++;
	*tail = n;
	if (k >= CD_CONSOLE_NOTES_MAX) {
		struct console_note *old = c->notes;
		c->notes = old->next;
		free(old->body);
		free(old);
		console_record(c, "console.webhook", NULL,
		               "a notification was dropped: the webhooks are too slow");
	}
	pthread_cond_broadcast(&c->ncv);
}

static json_t *jstr(const char *s)
{
	return s ? json_string(s) : json_null();
}

void console_notify_held(struct cd_console *c, const struct cd_approval *a)
{
	struct cd_buf t;
	json_t *m, *call;
	char link[512];

	if (!c->conf.nwebhooks)
		return;
	snprintf(link, sizeof link, "%s/#%s", c->origin, a->id);
	cd_buf_init(&t, 4096);
	if (cd_buf_puts(&t, "cordon: a call waits for approval: ") || slack_text(&t, a->agent) ||
	    cd_buf_puts(&t, " wants ") || slack_text(&t, a->tool) || cd_buf_putc(&t, ' ') ||
	    slack_text(&t, a->action) || cd_buf_puts(&t, " (task ") ||
	    slack_text(&t, a->task ? a->task : "-") ||
	    cd_buf_printf(&t, ") <%s|%s>", link, a->id)) {
		cd_buf_release(&t);
		return;
	}
	call = json_pack("{s:s,s:o,s:o,s:o,s:o,s:s,s:o,s:o,s:I,s:I}", "id", a->id, "agent",
	                 jstr(a->agent), "task", jstr(a->task), "tool", jstr(a->tool), "action",
	                 jstr(a->action), "args_sha256", a->args_sha256, "grant",
	                 jstr(a->grant_ids), "approval", jstr(a->approval), "created",
	                 (json_int_t)a->created, "deadline", (json_int_t)a->deadline);
	m = call ? json_pack("{s:s,s:s,s:o,s:s}", "event", "call.held", "text", t.data, "call",
	                     call, "url", link)
	         : NULL;
	cd_buf_release(&t);
	if (m)
		enqueue(c, m);
}

void console_notify_grant(struct cd_console *c, const struct cd_temp_grant *g, int used)
{
	struct cd_buf t;
	json_t *m, *grant;
	char link[512];

	if (!c->conf.nwebhooks)
		return;
	snprintf(link, sizeof link, "%s/grants", c->origin);
	cd_buf_init(&t, 4096);
	if (cd_buf_printf(&t, "cordon: break-glass grant %s %s: ", g->id, used ? "used" : "made") ||
	    slack_text(&t, g->agent) || cd_buf_puts(&t, " on ") || slack_text(&t, g->tool) ||
	    cd_buf_puts(&t, ", ticket ") || slack_text(&t, g->ticket ? g->ticket : "-") ||
	    cd_buf_puts(&t, ", by ") || slack_text(&t, g->by) ||
	    cd_buf_printf(&t, " <%s|grants>", link)) {
		cd_buf_release(&t);
		return;
	}
	grant = json_pack("{s:s,s:o,s:o,s:o,s:o,s:I,s:I,s:I}", "id", g->id, "agent", jstr(g->agent),
	                  "tool", jstr(g->tool), "ticket", jstr(g->ticket), "by", jstr(g->by),
	                  "created", (json_int_t)g->created, "expires", (json_int_t)g->expires,
	                  "uses", (json_int_t)g->uses);
	m = grant ? json_pack("{s:s,s:s,s:o,s:s}", "event",
	                      used ? "break-glass.used" : "break-glass.made", "text", t.data,
	                      "grant", grant, "url", link)
	          : NULL;
	cd_buf_release(&t);
	if (m)
		enqueue(c, m);
}

/* ---- sending (the notifier thread, c->mu not held) ------------------ */

struct post {
	int done, rc, status;
	char why[CD_ERR_MSG_MAX];
};

static void on_done(void *ctx, int rc, int status, const char *why)
{
	struct post *p = ctx;

	p->done = 1;
	p->rc = rc;
	p->status = status;
	snprintf(p->why, sizeof p->why, "%s", why ? why : "");
}

static int stopping(struct cd_console *c)
{
	return __atomic_load_n(&c->stopping, __ATOMIC_ACQUIRE);
}

/* The URL's host resolved now, pinned for this message's tries. */
static int resolve(const struct cd_tool_url *u, struct sockaddr_storage *pin, char *why, size_t wn)
{
	struct addrinfo hints, *ai = NULL;
	char host[CD_HOST_MAX], port[8];
	size_t n = strlen(u->host);
	int r;

	if (u->host[0] == '[' && n > 2)
		snprintf(host, sizeof host, "%.*s", (int)(n - 2), u->host + 1);
	else
		snprintf(host, sizeof host, "%s", u->host);
	snprintf(port, sizeof port, "%u", (unsigned)u->port);
	memset(&hints, 0, sizeof hints);
	hints.ai_socktype = SOCK_STREAM;
	hints.ai_flags = AI_NUMERICSERV;
	if ((r = getaddrinfo(host, port, &hints, &ai)) != 0 || !ai) {
		snprintf(why, wn, "cannot resolve the host: %s", gai_strerror(r));
		return -EHOSTUNREACH;
	}
	memset(pin, 0, sizeof *pin);
	memcpy(pin, ai->ai_addr, ai->ai_addrlen);
	freeaddrinfo(ai);
	return 0;
}

/* One POST: 0 on a 2xx, else negative with why. */
static int post_once(struct cd_console *c, const struct cd_tool_url *u,
                     const struct sockaddr_storage *pin, const char *body, char *why, size_t wn)
{
	struct cd_http_client_cfg cc;
	struct cd_http_call_cfg q;
	struct cd_http_client *h = NULL;
	struct cd_err err = { 0, "" };
	struct post p = { 0, 0, 0, "" };
	unsigned char mac[crypto_auth_hmacsha256_BYTES];
	crypto_auth_hmacsha256_state st;
	char ts[24], hex[2 * sizeof mac + 1], sig[160];
	const char *hdr[3] = { "Content-Type: application/json", sig, "User-Agent: cordon-serve" };

	snprintf(ts, sizeof ts, "%lld", (long long)time(NULL));
	crypto_auth_hmacsha256_init(&st, c->conf.webhook_key, CD_CONSOLE_WEBHOOK_KEY_LEN);
	crypto_auth_hmacsha256_update(&st, (const unsigned char *)ts, strlen(ts));
	crypto_auth_hmacsha256_update(&st, (const unsigned char *)".", 1);
	crypto_auth_hmacsha256_update(&st, (const unsigned char *)body, strlen(body));
	crypto_auth_hmacsha256_final(&st, mac);
	sodium_bin2hex(hex, sizeof hex, mac, sizeof mac);
	snprintf(sig, sizeof sig, "X-Cordon-Signature: t=%s,v1=%s", ts, hex);
	memset(&cc, 0, sizeof cc);
	cc.host = u->host;
	cc.port = u->port;
	cc.pin = pin;
	cc.connect_timeout_ms = TIMEOUT_MS;
	if (cd_http_client_new(&cc, &h, &err) < 0) {
		snprintf(why, wn, "%s", err.msg);
		return -EIO;
	}
	memset(&q, 0, sizeof q);
	q.method = "POST";
	q.url = u->url;
	q.headers = hdr;
	q.nheaders = 3;
	q.body = body;
	q.body_len = strlen(body);
	q.timeout_ms = TIMEOUT_MS;
	q.max_body = MAX_ANSWER;
	q.on_done = on_done;
	q.ctx = &p;
	if (cd_http_start(h, &q, NULL, &err) < 0) {
		cd_http_client_free(h);
		snprintf(why, wn, "%s", err.msg);
		return -EIO;
	}
	while (!p.done && !stopping(c))
		if (cd_http_client_run(h, NULL, 0, 200) < 0)
			break;
	cd_http_client_free(h);
	if (!p.done) {
		snprintf(why, wn, "%s", stopping(c) ? "the console stopped" : "the client failed");
		return -EIO;
	}
	if (p.rc < 0) {
		snprintf(why, wn, "%s", p.why[0] ? p.why : "failed");
		return p.rc;
	}
	if (p.status < 200 || p.status > 299) {
		snprintf(why, wn, "answered HTTP %d", p.status);
		return -EPROTO;
	}
	return 0;
}

/* Wait ms, or less when the console stops (c->mu not held). */
static void pause_ms(struct cd_console *c, unsigned ms)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += ms / 1000;
	ts.tv_nsec += (long)(ms % 1000) * 1000000L;
	ts.tv_sec += ts.tv_nsec / 1000000000L;
	ts.tv_nsec %= 1000000000L;
	pthread_mutex_lock(&c->mu);
	if (!c->stopping)
		pthread_cond_timedwait(&c->ncv, &c->mu, &ts);
	pthread_mutex_unlock(&c->mu);
}

static void send_one(struct cd_console *c, const struct cd_tool_url *u, const char *body)
{
	struct sockaddr_storage pin;
	char why[CD_ERR_MSG_MAX], where[CD_HOST_MAX + 32], msg[CD_ERR_MSG_MAX + 400];
	int t, r;

	snprintf(where, sizeof where, "%s://%s:%u", u->https ? "https" : "http", u->host,
	         (unsigned)u->port);
	r = resolve(u, &pin, why, sizeof why);
	for (t = 0; r == 0 && t < TRIES && !stopping(c); t++) {
		if (t)
			pause_ms(c, 1000u << (2 * (t - 1))); /* 1 s, 4 s */
		if ((r = post_once(c, u, &pin, body, why, sizeof why)) == 0)
			return;
		if (t + 1 < TRIES)
			r = 0;
	}
	snprintf(msg, sizeof msg, "webhook %s failed (%d tries): %s", where, t ? t : 0, why);
	pthread_mutex_lock(&c->mu);
	console_record(c, "console.webhook", NULL, msg);
	pthread_mutex_unlock(&c->mu);
}

void *console_notifier(void *arg)
{
	struct cd_console *c = arg;
	struct console_note *n;
	size_t i;

	pthread_mutex_lock(&c->mu);
	while (!c->stopping) {
		if (!(n = c->notes)) {
			pthread_cond_wait(&c->ncv, &c->mu);
			continue;
		}
		c->notes = n->next;
		pthread_mutex_unlock(&c->mu);
		for (i = 0; i < c->nurls; i++)
			send_one(c, &c->urls[i], n->body);
		free(n->body);
		free(n);
		pthread_mutex_lock(&c->mu);
	}
	while ((n = c->notes)) {
		c->notes = n->next;
		free(n->body);
		free(n);
	}
	pthread_mutex_unlock(&c->mu);
	return NULL;
}
