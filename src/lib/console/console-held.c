/* console-held.c — the held-calls page: the list, its live updates over
 * Server-Sent Events, and the Approve/Deny decisions, made by
 * cd_gate_approval_decide exactly as `cordon approvals approve|deny` makes
 * them (the approver checked against the policy inside the request's
 * transaction, the audit record in it).  A watcher thread looks at the
 * queue four times a second (any process's held calls: runs, MCP
 * sessions), expires what is past its deadline, and tells the event
 * streams when the list of held calls changed.
 *
 * Trust boundary: console.h; the request id in the path is checked for
 * shape before it reaches the store. */
#include "console-int.h"

#include "gate/gate-approval.h"

#include <errno.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define COMMENT_MAX 501

int console_h_index(void *ctx, const struct cd_http_req *rq, struct cd_http_resp *rs)
{
	struct cd_console *c = ctx;
	struct console_session s;
	int r;

	pthread_mutex_lock(&c->mu);
	if (!console_auth(c, rq, rs, &s)) {
		pthread_mutex_unlock(&c->mu);
		return 0;
	}
	rs->ctype = "text/html; charset=utf-8";
	r = console_page_start(&rs->body, "Held calls", s.person, s.csrf);
	r = r ?: cd_buf_puts(&rs->body, "<div id=\"held\">");
	r = r ?: console_render_held(c, &rs->body, s.csrf);
	r = r ?: cd_buf_puts(&rs->body, "</div>");
	r = r ?: console_page_end(&rs->body);
	pthread_mutex_unlock(&c->mu);
	return r;
}

/* ---- the event stream --------------------------------------------- */

struct stream {
	struct cd_console *c;
	unsigned char key[32]; /* the session's */
	uint64_t gen;
	int first;
	int64_t checked; /* when the session's row was last looked at */
};

static int session_alive(struct cd_console *c, const unsigned char key[32])
{
	size_t i;

	for (i = 0; i < CD_CONSOLE_MAX_SESSIONS; i++)
		if (c->sessions[i].used && c->sessions[i].expires > (int64_t)time(NULL) &&
		    !sodium_memcmp(c->sessions[i].key, key, 32))
			return (int)i;
	return -1;
}

/* The stream's session still stored?  Looked at every 5 s (a stream wakes
 * twice a second); c->mu held. */
static int still_stored(struct stream *st, int i)
{
	int64_t now = (int64_t)time(NULL);

	if (now - st->checked < 5)
		return 1;
	st->checked = now;
	return console_session_stored(st->c, (size_t)i);
}

static int stream_next(void *ctx, struct cd_buf *out, unsigned wait_ms)
{
	struct stream *st = ctx;
	struct cd_console *c = st->c;
	struct timespec ts;
	int i, r = 0;

	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_nsec += (long)(wait_ms % 1000) * 1000000L;
	ts.tv_sec += wait_ms / 1000 + ts.tv_nsec / 1000000000L;
	ts.tv_nsec %= 1000000000L;
	pthread_mutex_lock(&c->mu);
	while (!c->stopping && !st->first && c->gen == st->gen)
		if (pthread_cond_timedwait(&c->cv, &c->mu, &ts) != 0)
			break;
	/* A session that ended (logged out, expired) ends its streams. */
	/* ... or through another console over the same store. */
	if (c->stopping || (i = session_alive(c, st->key)) < 0 || !still_stored(st, i)) {
		r = -1;
	} else if (st->first || c->gen != st->gen) {
		st->first = 0;
		st->gen = c->gen;
		r = cd_buf_puts(out, "event: held\ndata: ");
		r = r ?: console_render_held(c, out, c->sessions[i].csrf);
		r = r ?: cd_buf_puts(out, "\n\n");
		r = r < 0 ? -1 : 1;
	}
	pthread_mutex_unlock(&c->mu);
	return r;
}

int console_h_events(void *ctx, const struct cd_http_req *rq, struct cd_http_resp *rs)
{
	struct cd_console *c = ctx;
	struct console_session s;
	struct stream *st;

	pthread_mutex_lock(&c->mu);
	if (!console_auth(c, rq, rs, &s)) {
		pthread_mutex_unlock(&c->mu);
		return 0;
	}
	pthread_mutex_unlock(&c->mu);
	if (!(st = calloc(1, sizeof *st)))
		return -ENOMEM;
	st->c = c;
	memcpy(st->key, s.key, sizeof st->key);
	st->first = 1;
	rs->sse.next = stream_next;
	rs->sse.done = free;
	rs->sse.ctx = st;
	return 0;
}

/* ---- decisions ---------------------------------------------------- */

/* "/calls/ID" with ID "ap-" and hex digits: the id into out. */
static int call_id(const char *path, char *out, size_t outlen)
{
	const char *id = path + strlen("/calls/");
	size_t i, n = strlen(id);

	if (n < 4 || n >= outlen || strncmp(id, "ap-", 3))
		return -EINVAL;
	for (i = 3; i < n; i++)
		if (!((id[i] >= '0' && id[i] <= '9') || (id[i] >= 'a' && id[i] <= 'f')))
			return -EINVAL;
	memcpy(out, id, n + 1);
	return 0;
}

int console_h_decide(void *ctx, const struct cd_http_req *rq, struct cd_http_resp *rs)
{
	struct cd_console *c = ctx;
	struct console_session s;
	struct cd_err err = { 0, "" };
	char id[CD_APPROVAL_ID_MAX], decision[16], comment[COMMENT_MAX], refusal[CD_ERR_MSG_MAX];
	char msg[CD_ERR_MSG_MAX + 64];
	int approve, r;

	pthread_mutex_lock(&c->mu);
	if (!console_check_post(c, rq, rs, &s))
		goto out;
	if (call_id(rq->path, id, sizeof id) < 0 ||
	    cd_http_form_get(rq->body, rq->body_len, "decision", decision, sizeof decision) < 0 ||
	    (strcmp(decision, "approve") && strcmp(decision, "deny"))) {
		console_message(rs, 400, "Refused", "a decision is approve or deny, on a call id",
		                &s);
		goto out;
	}
	r = cd_http_form_get(rq->body, rq->body_len, "comment", comment, sizeof comment);
	if (r == -ENOENT)
		comment[0] = '\0';
	else if (r < 0) {
		console_message(rs, 400, "Refused", "the comment is malformed or too long", &s);
		goto out;
	}
	approve = !strcmp(decision, "approve");
	r = cd_gate_approval_decide_signed(c->conf.audit, c->conf.state, id, approve, s.person,
	                                   comment[0] ? comment : NULL, c->conf.policy,
	                                   c->conf.sign_key, (int64_t)time(NULL), refusal,
	                                   sizeof refusal, &err);
	if (refusal[0]) {
		snprintf(msg, sizeof msg, "refused: %s", refusal);
		console_message(rs, 403, "Refused", msg, &s);
	} else if (r == -ENOENT || r == -ESTALE) {
		console_message(rs, 409, "Not decided", err.msg, &s);
	} else if (r < 0) {
		console_message(rs, 500, "Failed", err.msg[0] ? err.msg : "failed", &s);
	} else {
		/* Back to the list, which no longer holds the call. */
		cd_http_resp_header(rs, "Location", "/");
		cd_http_resp_text(rs, 303, approve ? "approved\n" : "denied\n");
	}
out:
	pthread_mutex_unlock(&c->mu);
	return 0;
}

/* ---- the watcher -------------------------------------------------- */

struct fp_ctx {
	crypto_hash_sha256_state h;
	struct cd_console *c;
};

/* A held call the webhooks have not been told of yet is queued for them
 * (the last CONSOLE_SEEN_HELD ids are remembered). */
static void held_seen(struct cd_console *c, const struct cd_approval *a)
{
	size_t i;

	if (!c->conf.nwebhooks)
		return;
	for (i = 0; i < CONSOLE_SEEN_HELD; i++)
		if (!strcmp(c->seen_held[i], a->id))
			return;
	snprintf(c->seen_held[c->seen_held_next], CD_APPROVAL_ID_MAX, "%s", a->id);
	c->seen_held_next = (c->seen_held_next + 1) % CONSOLE_SEEN_HELD;
	console_notify_held(c, a);
}

static int fp_one(const struct cd_approval *a, void *ctx)
{
	struct fp_ctx *f = ctx;

	crypto_hash_sha256_update(&f->h, (const unsigned char *)a->id, strlen(a->id) + 1);
	crypto_hash_sha256_update(&f->h, (const unsigned char *)a->status, strlen(a->status) + 1);
	held_seen(f->c, a);
	return 0;
}

/* An approver rule's decision changes the page too (console-rules.c). */
static int fp_rule(const struct cd_approval *a, void *ctx)
{
	if (strncmp(a->approval, "policy:", 7) == 0) {
		crypto_hash_sha256_update(ctx, (const unsigned char *)a->id, strlen(a->id) + 1);
		crypto_hash_sha256_update(ctx, (const unsigned char *)a->status,
		                          strlen(a->status) + 1);
	}
	return 0;
}

/* A break-glass grant made or used since the last look is queued for the
 * webhooks; those active when the console starts are only remembered. */
static int bg_one(const struct cd_temp_grant *g, void *ctx)
{
	struct cd_console *c = ctx;
	struct console_seen_bg *free_slot = NULL;
	size_t i;

	if (g->kind != CD_TEMP_BREAK_GLASS)
		return 0;
	for (i = 0; i < CONSOLE_SEEN_BG; i++) {
		struct console_seen_bg *x = &c->seen_bg[i];
		if (!strcmp(x->id, g->id)) {
			if (g->uses > x->uses)
				console_notify_grant(c, g, 1);
			x->uses = g->uses;
			return 0;
		}
		if (!x->id[0] && !free_slot)
			free_slot = x;
	}
	if (!free_slot) /* the oldest goes: a long-lived console forgets */
		free_slot = &c->seen_bg[g->created % CONSOLE_SEEN_BG];
	snprintf(free_slot->id, sizeof free_slot->id, "%s", g->id);
	free_slot->uses = g->uses;
	/* made and used between two looks: both are told (the making is
	 * the event people watch for) */
	if (c->bg_seeded) {
		console_notify_grant(c, g, 0);
		if (g->uses > 0)
			console_notify_grant(c, g, 1);
	}
	return 0;
}

/* Expire what is past its deadline (every EXPIRE_EVERY-th look: a
 * write transaction), then bump gen when the pending list changed (c->mu
 * held). */
#define WATCH_MS     250
#define EXPIRE_EVERY 8

static void refresh(struct cd_console *c, unsigned n)
{
	struct cd_err err = { 0, "" };
	struct fp_ctx f;
	unsigned char fp[32];

	if (n % EXPIRE_EVERY == 0)
		(void)cd_gate_approvals_expire(c->conf.audit, c->conf.state, (int64_t)time(NULL),
		                               &err);
	if (c->conf.nwebhooks && n % 4 == 0 &&
	    cd_temp_list(c->conf.state, 0, (int64_t)time(NULL), bg_one, c, &err) == 0)
		c->bg_seeded = 1;
	crypto_hash_sha256_init(&f.h);
	f.c = c;
	if (cd_approval_list(c->conf.state, "pending", 0, fp_one, &f, &err) < 0 ||
	    cd_approval_list(c->conf.state, NULL, (int64_t)time(NULL) - 3600, fp_rule, &f.h, &err) <
	            0)
		return;
	crypto_hash_sha256_final(&f.h, fp);
	if (memcmp(fp, c->held_fp, sizeof fp)) {
		memcpy(c->held_fp, fp, sizeof fp);
		c->gen++;
		pthread_cond_broadcast(&c->cv);
	}
}

/* Looks at the queue every WATCH_MS: SQLite tells no process of another's
 * commit, and the one connection is the handlers' too, so the watcher
 * takes the lock only to look. */
void *console_watch(void *arg)
{
	struct cd_console *c = arg;
	struct timespec ts;
	unsigned n = 0;

	pthread_mutex_lock(&c->mu);
	while (!c->stopping) {
		refresh(c, n++);
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_nsec += WATCH_MS * 1000000L;
		ts.tv_sec += ts.tv_nsec / 1000000000L;
		ts.tv_nsec %= 1000000000L;
		/* Woken early by stop (or by a decision made here). */
		pthread_cond_timedwait(&c->cv, &c->mu, &ts);
	}
	pthread_mutex_unlock(&c->mu);
	return NULL;
}
