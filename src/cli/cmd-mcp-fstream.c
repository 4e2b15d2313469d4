/* cmd-mcp-fstream.c — the HTTP front's sessions (struct fsession), the
 * ids of a shared instance's sessions, and the event streams: a POST's
 * answer with the messages before it, and the session's GET stream (see
 * cmd-mcp-fsess.h). */
#include "cmd-mcp-fsess.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static atomic_ulong session_count;

struct fsession *fsession_new(const char *agent, const char *token, const char *policy,
                              struct fsess *b)
{
	struct fsession *x = calloc(1, sizeof *x);

	if (!x)
		return NULL;
	snprintf(x->agent, sizeof x->agent, "%s", agent);
	snprintf(x->token, sizeof x->token, "%s", token ? token : "");
	snprintf(x->policy, sizeof x->policy, "%s", policy);
	x->b = b;
	x->n = atomic_fetch_add(&session_count, 1) + 1;
	/* A session joining a shared instance: its events from now on. */
	pthread_mutex_lock(&b->mu);
	x->v.n = x->n;
	x->v.seen = b->next_ev - 1;
	pthread_mutex_unlock(&b->mu);
	atomic_init(&x->used, fsess_now_ms());
	atomic_init(&x->streams, 0);
	atomic_init(&x->refs, 1);
	return x;
}

void fsession_get(struct fsession *x)
{
	atomic_fetch_add(&x->refs, 1);
}

void fsession_put(struct fsession *x)
{
	if (!x || atomic_fetch_sub(&x->refs, 1) != 1)
		return;
	fsess_put(x->b);
	free(x);
}

/* Tell a shared instance the requests of ids (rewritten) are cancelled:
 * its gateway withdraws a call held for approval, the server may stop. */
static void send_cancelled(struct fsess *b, json_t *ids)
{
	json_t *id, *c;
	size_t i;

	json_array_foreach(ids, i, id)
	{
		c = json_pack("{s:s,s:s,s:{s:O,s:s}}", "jsonrpc", "2.0", "method",
		              "notifications/cancelled", "params", "requestId", id, "reason",
		              "cordon: the session is closed");
		if (c)
			fsess_send(b, c);
		json_decref(c);
	}
}

void fsession_batch_ids(struct fsession *x, struct fwait *w, json_t *out)
{
	json_t *ids = json_array(), *el;
	size_t i;

	json_array_foreach(out, i, el)
	{
		if (ids && json_object_get(el, "method") && json_object_get(el, "id"))
			json_array_append(ids, json_object_get(el, "id"));
	}
	pthread_mutex_lock(&x->b->mu);
	json_decref(w->ids);
	w->ids = ids;
	pthread_mutex_unlock(&x->b->mu);
}

void fsession_close(struct fsession *x)
{
	struct fsess *b = x->b;
	json_t *ids = x->shared ? json_array() : NULL, *id;
	struct fwait *w;
	char pre[48], bkey[48];
	size_t n;

	/* Its requests still waiting (or orphaned) carry its prefix; its
	 * batch waits under its batch key with their ids. */
	n = (size_t)snprintf(pre, sizeof pre, "\"cordon-s%llu:", (unsigned long long)x->n);
	snprintf(bkey, sizeof bkey, FSESS_BATCH_KEY ":s%llu", (unsigned long long)x->n);
	pthread_mutex_lock(&b->mu);
	x->closed = 1;
	x->v.closed = 1;
	for (w = b->waits; ids && w; w = w->next)
		if (w->ans)
			continue;
		else if (!strcmp(w->key, bkey) && w->ids)
			json_array_extend(ids, w->ids);
		else if (!strncmp(w->key, pre, n) &&
		         (id = json_loads(w->key, JSON_DECODE_ANY, NULL)))
			json_array_append_new(ids, id);
	pthread_cond_broadcast(&b->cv);
	pthread_mutex_unlock(&b->mu);
	send_cancelled(b, ids);
	json_decref(ids);
	fsession_put(x);
}

/* ---- a shared instance's ids ------------------------------------------ */

static int rewrite(const struct fsession *x, json_t *o, const char *key)
{
	json_t *id = json_object_get(o, key);
	char *t;
	int r;

	if (!id)
		return 0;
	if (!(t = json_dumps(id, JSON_COMPACT | JSON_ENCODE_ANY)))
		return -ENOMEM;
	r = json_object_set_new(o, key,
	                        json_sprintf("cordon-s%llu:%s", (unsigned long long)x->n, t));
	free(t);
	return r < 0 ? -ENOMEM : 0;
}

/* A request's id, or notifications/cancelled's requestId; responses (to
 * the server's own requests) keep the server's ids. */
static int out_one(const struct fsession *x, json_t *m)
{
	const char *meth = json_string_value(json_object_get(m, "method"));

	if (!json_is_object(m) || !meth)
		return 0;
	if (!strcmp(meth, "notifications/cancelled"))
		return rewrite(x, json_object_get(m, "params"), "requestId");
	/* Its progress comes back to this session only (event_to). */
	if (rewrite(x, json_object_get(json_object_get(m, "params"), "_meta"), "progressToken") < 0)
		return -ENOMEM;
	return rewrite(x, m, "id");
}

json_t *fsession_out(const struct fsession *x, json_t *msg)
{
	json_t *c, *el;
	size_t i;

	if (!x->shared)
		return json_incref(msg);
	if (!(c = json_deep_copy(msg)))
		return NULL;
	if (json_is_array(c)) {
		json_array_foreach(c, i, el)
		{
			if (out_one(x, el) < 0)
				goto fail;
		}
	} else if (out_one(x, c) < 0) {
		goto fail;
	}
	return c;
fail:
	json_decref(c);
	return NULL;
}

static void in_one(const struct fsession *x, json_t *m)
{
	const char *s = json_string_value(json_object_get(m, "id"));
	char pre[48];
	size_t n;
	json_t *orig;

	if (!s)
		return;
	n = (size_t)snprintf(pre, sizeof pre, "cordon-s%llu:", (unsigned long long)x->n);
	if (strncmp(s, pre, n) || !(orig = json_loads(s + n, JSON_DECODE_ANY, NULL)))
		return;
	json_object_set_new(m, "id", orig);
}

void fsession_in(const struct fsession *x, json_t *ans)
{
	json_t *el;
	size_t i;

	if (!x->shared)
		return;
	if (json_is_array(ans)) {
		json_array_foreach(ans, i, el)
		{
			in_one(x, el);
		}
	} else {
		in_one(x, ans);
	}
}

/* ---- streams ------------------------------------------------------------ */

struct pstream {
	struct fsession *x;
	struct fwait *w;
	json_t *id; /* NULL: a batch */
	int64_t deadline;
	int finished;
};

static int pstream_end(struct pstream *p, struct cd_buf *out, const char *why)
{
	json_t *e = json_pack("{s:s,s:O?,s:{s:i,s:s}}", "jsonrpc", "2.0", "id", p->id, "error",
	                      "code", -32603, "message", why);
	char *t = e ? json_dumps(e, JSON_COMPACT) : NULL;
	int r = t && cd_buf_printf(out, "event: message\ndata: %s\n\n", t) == 0 ? 1 : -1;

	json_decref(e);
	free(t);
	p->finished = 1;
	return r;
}

static int pstream_next(void *ctx, struct cd_buf *out, unsigned wait_ms)
{
	struct pstream *p = ctx;
	struct fsess *b = p->x->b;
	char *t = NULL;
	int k, dead;

	if (p->finished)
		return -1;
	pthread_mutex_lock(&b->mu);
	if (p->x->closed) { /* nothing more for it, not even its answer */
		pthread_mutex_unlock(&b->mu);
		return pstream_end(p, out, "cordon: the session ended before the answer");
	}
	k = fsess_take_events(b, &p->x->v, out, 0);
	if (!k && p->w->ans) {
		fsession_in(p->x, p->w->ans);
		t = json_dumps(p->w->ans, JSON_COMPACT | JSON_ENCODE_ANY);
	}
	dead = b->dead || p->x->closed;
	if (!k && !t && !dead)
		fsess_cv_wait(b, wait_ms);
	pthread_mutex_unlock(&b->mu);
	if (k)
		return k;
	if (t) {
		k = cd_buf_printf(out, "event: message\ndata: %s\n\n", t) == 0 ? 1 : -1;
		free(t);
		p->finished = 1;
		return k;
	}
	if (dead)
		return pstream_end(p, out, "cordon: the session ended before the answer");
	if (fsess_now_ms() >= p->deadline)
		return pstream_end(p, out, "cordon: the session did not answer in time");
	return 0;
}

static void pstream_done(void *ctx)
{
	struct pstream *p = ctx;

	/* Gone before its answer: the answer becomes an event (GET), or
	 * on a shared instance (whose events every session sees) is
	 * dropped. */
	fsess_wait_done(p->x->b, p->w, p->finished ? 0 : p->x->shared ? 2 : 1);
	atomic_store(&p->x->used, fsess_now_ms());
	atomic_fetch_sub(&p->x->streams, 1);
	fsession_put(p->x);
	json_decref(p->id);
	free(p);
}

int fstream_post(struct fsession *x, struct fwait *w, json_t *id, int64_t deadline,
                 struct cd_http_resp *rs)
{
	struct pstream *p = calloc(1, sizeof *p);

	if (!p)
		return -ENOMEM;
	p->x = x;
	p->w = w;
	p->id = json_incref(id);
	p->deadline = deadline;
	atomic_fetch_add(&x->streams, 1);
	rs->status = 200;
	rs->sse.next = pstream_next;
	rs->sse.done = pstream_done;
	rs->sse.ctx = p;
	return 0;
}

struct gstream {
	struct fsession *x;
	uint64_t last;
	unsigned gen;
	int replay;
};

static int gstream_next(void *ctx, struct cd_buf *out, unsigned wait_ms)
{
	struct gstream *g = ctx;
	struct fsess *b = g->x->b;
	int k = 0, dead;

	pthread_mutex_lock(&b->mu);
	if (g->gen != g->x->get_gen || g->x->closed) { /* replaced, or DELETE */
		pthread_mutex_unlock(&b->mu);
		return -1;
	}
	if (g->replay) {
		k = fsess_replay(b, &g->x->v, g->last, out);
		g->replay = 0;
	}
	k += fsess_take_events(b, &g->x->v, out, 1);
	dead = b->dead;
	if (!k && !dead)
		fsess_cv_wait(b, wait_ms);
	pthread_mutex_unlock(&b->mu);
	return k ? k : dead ? -1 : 0;
}

static void gstream_done(void *ctx)
{
	struct gstream *g = ctx;

	atomic_store(&g->x->used, fsess_now_ms());
	atomic_fetch_sub(&g->x->streams, 1);
	fsession_put(g->x);
	free(g);
}

int fstream_get(struct fsession *x, uint64_t last, int replay, struct cd_http_resp *rs)
{
	struct gstream *g = calloc(1, sizeof *g);

	if (!g)
		return -ENOMEM;
	/* One GET stream per session: a new one (a client reconnecting,
	 * perhaps before the server noticed the old connection gone)
	 * replaces the one in force, which ends at its next turn. */
	pthread_mutex_lock(&x->b->mu);
	g->gen = ++x->get_gen;
	pthread_cond_broadcast(&x->b->cv);
	pthread_mutex_unlock(&x->b->mu);
	atomic_fetch_add(&x->streams, 1);
	g->x = x;
	g->last = last;
	g->replay = replay;
	rs->status = 200;
	rs->sse.next = gstream_next;
	rs->sse.done = gstream_done;
	rs->sse.ctx = g;
	return 0;
}
