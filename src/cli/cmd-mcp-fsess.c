/* cmd-mcp-fsess.c — a session of the HTTP front: its process, the thread
 * reading its lines, answers matched to waiting requests, and events kept
 * for the streams (see cmd-mcp-fsess.h). */
#include "cmd-mcp-fsess.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

int64_t fsess_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void fsess_cv_wait(struct fsess *s, unsigned wait_ms)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	ts.tv_nsec += (long)(wait_ms % 1000) * 1000000;
	ts.tv_sec += wait_ms / 1000 + ts.tv_nsec / 1000000000;
	ts.tv_nsec %= 1000000000;
	pthread_cond_timedwait(&s->cv, &s->mu, &ts);
}

struct fsess *fsess_new(const char *agent, const char *token)
{
	struct fsess *s = calloc(1, sizeof *s);
	pthread_condattr_t ca;

	if (!s)
		return NULL;
	snprintf(s->agent, sizeof s->agent, "%s", agent);
	snprintf(s->token, sizeof s->token, "%s", token ? token : "");
	s->to = s->from = -1;
	s->refs = 1;
	s->next_ev = 1;
	pthread_mutex_init(&s->wmu, NULL);
	pthread_mutex_init(&s->mu, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&s->cv, &ca);
	pthread_condattr_destroy(&ca);
	return s;
}

void fsess_get(struct fsess *s)
{
	pthread_mutex_lock(&s->mu);
	s->refs++;
	pthread_mutex_unlock(&s->mu);
}

void fsess_put(struct fsess *s)
{
	struct fwait *w;
	size_t i;
	int last;

	if (!s)
		return;
	pthread_mutex_lock(&s->mu);
	last = --s->refs == 0;
	pthread_mutex_unlock(&s->mu);
	if (!last)
		return;
	fsess_stop(s);
	while ((w = s->waits)) {
		s->waits = w->next;
		json_decref(w->ans);
		json_decref(w->ids);
		free(w->key);
		free(w);
	}
	for (i = 0; i < FSESS_EVENTS; i++)
		free(s->ev[i].data);
	json_decref(s->init);
	pthread_cond_destroy(&s->cv);
	pthread_mutex_destroy(&s->mu);
	pthread_mutex_destroy(&s->wmu);
	free(s->rbuf);
	free(s);
}

/* ---- events ------------------------------------------------------------ */

int fsess_sse(struct cd_buf *out, uint64_t id, const char *data)
{
	if (cd_buf_printf(out, "id: %llu\nevent: message\ndata: ", (unsigned long long)id) < 0 ||
	    cd_buf_puts(out, data) < 0 || cd_buf_puts(out, "\n\n") < 0)
		return -ENOMEM;
	return 0;
}

/* Keep a message as the next event for session `to` (under s->mu;
 * takes `data`).  An event pushed out before a session took it is lost
 * to it (a resumption says so by the gap in the ids). */
static void push_event(struct fsess *s, char *data, uint64_t to)
{
	struct fev *e = &s->ev[s->next_ev % FSESS_EVENTS];

	free(e->data);
	e->id = s->next_ev++;
	e->data = data;
	e->to = to;
	pthread_cond_broadcast(&s->cv);
}

static uint64_t oldest(const struct fsess *s)
{
	return s->next_ev > FSESS_EVENTS ? s->next_ev - FSESS_EVENTS : 1;
}

static int for_view(const struct fev *e, const struct fview *v)
{
	return e->to == 0 || e->to == v->n || e->to == FEV_ANY;
}

static int undelivered(const struct fsess *s, const struct fview *v)
{
	uint64_t n;

	for (n = v->seen + 1 > oldest(s) ? v->seen + 1 : oldest(s); n < s->next_ev; n++)
		if (for_view(&s->ev[n % FSESS_EVENTS], v))
			return 1;
	return 0;
}

int fsess_take_events(struct fsess *s, struct fview *v, struct cd_buf *out, int from_get)
{
	uint64_t n;
	int k = 0;

	if (from_get && v->posts)
		return 0; /* a POST stream carries them (they are its call's) */
	for (n = v->seen + 1 > oldest(s) ? v->seen + 1 : oldest(s); n < s->next_ev; n++) {
		struct fev *e = &s->ev[n % FSESS_EVENTS];
		if (for_view(e, v)) {
			if (fsess_sse(out, e->id, e->data) < 0)
				return k;
			if (e->to == FEV_ANY)
				e->to = v->n; /* taken: its answer comes from this client */
			k++;
		}
		v->seen = n;
	}
	return k;
}

int fsess_replay(struct fsess *s, struct fview *v, uint64_t last, struct cd_buf *out)
{
	uint64_t n = last + 1;
	int k = 0;

	if (n < oldest(s))
		n = oldest(s);
	for (; n < s->next_ev; n++) {
		struct fev *e = &s->ev[n % FSESS_EVENTS];
		if (e->id != n || (e->to != 0 && e->to != v->n) ||
		    fsess_sse(out, e->id, e->data) < 0)
			continue;
		k++;
	}
	if (s->next_ev - 1 > v->seen)
		v->seen = s->next_ev - 1;
	return k;
}

/* ---- waiting for answers ----------------------------------------------- */

struct fwait *fsess_wait_add(struct fsess *s, struct fview *v, json_t *id, const char *batch_key)
{
	struct fwait *w = calloc(1, sizeof *w);

	if (!w)
		return NULL;
	w->key = id ? json_dumps(id, JSON_COMPACT | JSON_ENCODE_ANY) : strdup(batch_key);
	if (!w->key) {
		free(w);
		return NULL;
	}
	pthread_mutex_lock(&s->mu);
	if (!id) { /* one batch at a time per key: their answers share it */
		struct fwait *o;
		for (o = s->waits; o; o = o->next)
			if (!strcmp(o->key, w->key) && !o->orphan) {
				pthread_mutex_unlock(&s->mu);
				free(w->key);
				free(w);
				errno = EBUSY;
				return NULL;
			}
	}
	w->next = s->waits;
	w->v = v;
	s->waits = w;
	v->posts++;
	pthread_mutex_unlock(&s->mu);
	return w;
}

int fsess_wait(struct fsess *s, struct fwait *w, int64_t deadline_ms, int events)
{
	int r;

	pthread_mutex_lock(&s->mu);
	for (;;) {
		struct timespec ts;
		int64_t d;

		/* A closed session gets nothing more, not even an answer
		 * already here. */
		if (w->v && w->v->closed) {
			r = -1;
			break;
		}
		/* Events first: the server's messages before the answer
		 * (read before it) go out before it, on a stream. */
		if (events && undelivered(s, w->v)) {
			r = 2;
			break;
		}
		if (w->ans) {
			r = 1;
			break;
		}
		if (s->dead) {
			r = -1;
			break;
		}
		if (fsess_now_ms() >= deadline_ms) {
			r = 0;
			break;
		}
		clock_gettime(CLOCK_MONOTONIC, &ts);
		d = deadline_ms - fsess_now_ms();
		if (d > 1000)
			d = 1000;
		ts.tv_sec += d / 1000;
		ts.tv_nsec += (d % 1000) * 1000000;
		if (ts.tv_nsec >= 1000000000) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000;
		}
		pthread_cond_timedwait(&s->cv, &s->mu, &ts);
	}
	pthread_mutex_unlock(&s->mu);
	return r;
}

void fsess_wait_done(struct fsess *s, struct fwait *w, int orphan)
{
	struct fwait **p;

	pthread_mutex_lock(&s->mu);
	w->v->posts--;
	w->v = NULL; /* an orphan outlives its session's view */
	if (orphan && !w->ans && !s->dead) {
		w->orphan = orphan; /* the reader turns its answer into an event, or drops it */
		pthread_cond_broadcast(&s->cv);
		pthread_mutex_unlock(&s->mu);
		return;
	}
	for (p = &s->waits; *p; p = &(*p)->next)
		if (*p == w) {
			*p = w->next;
			break;
		}
	pthread_cond_broadcast(&s->cv);
	pthread_mutex_unlock(&s->mu);
	json_decref(w->ans);
	json_decref(w->ids);
	free(w->key);
	free(w);
}

/* ---- the reader -------------------------------------------------------- */

/* N of a string "cordon-sN:..." (a shared instance's session N's id or
 * token), with *rest after the ':'; else 0. */
static unsigned long long prefix_session(const char *t, const char **rest)
{
	unsigned long long n;
	char *e;

	if (!t || strncmp(t, "cordon-s", 8) || !isdigit((unsigned char)t[8]))
		return 0;
	errno = 0;
	n = strtoull(t + 8, &e, 10);
	if (*e != ':' || errno)
		return 0;
	*rest = e + 1;
	return n;
}

/* N of an id "cordon-sN:..." (a shared instance's session), else 0. */
static unsigned long long id_session(json_t *el)
{
	const char *rest;

	return prefix_session(json_string_value(json_object_get(el, "id")), &rest);
}

/* The session a shared instance's event is for (fev.to): progress and
 * cancellation name a request by the token or id its session's prefix
 * marks (restored in *line); a server's request goes to the first session
 * taking it; other notifications to every session.  Under s->mu. */
static uint64_t event_to(struct fsess *s, json_t *m, char **line)
{
	const char *meth = json_string_value(json_object_get(m, "method"));
	json_t *params = json_object_get(m, "params"), *orig;
	const char *key = NULL, *rest;
	unsigned long long n;
	char *t;

	if (!s->shared)
		return 0;
	if (json_object_get(m, "id"))
		return FEV_ANY;
	if (meth && !strcmp(meth, "notifications/progress"))
		key = "progressToken";
	else if (meth && !strcmp(meth, "notifications/cancelled"))
		key = "requestId";
	if (!key || !(n = prefix_session(json_string_value(json_object_get(params, key)), &rest)))
		return 0;
	/* Not the session's own value back: nobody's. */
	if (!(orig = json_loads(rest, JSON_DECODE_ANY, NULL)) ||
	    json_object_set_new(params, key, orig) < 0 || !(t = json_dumps(m, JSON_COMPACT)))
		return FEV_ANY - 1;
	free(*line);
	*line = t;
	return n;
}

/* A shared instance's array: "[batch]:sN" when the ids of its elements
 * (those not null) all carry session N's prefix, the batch key when none
 * has an id, else a key no wait has (an answer no session owns). */
static char *array_key(json_t *m)
{
	unsigned long long n = 0, k;
	char key[64];
	json_t *el;
	size_t i;

	json_array_foreach(m, i, el)
	{
		json_t *id = json_object_get(el, "id");
		if (!id || json_is_null(id))
			continue;
		k = id_session(el);
		if (!k || (n && k != n))
			return strdup("[batch]:none");
		n = k;
	}
	if (!n)
		return strdup(FSESS_BATCH_KEY);
	snprintf(key, sizeof key, FSESS_BATCH_KEY ":s%llu", n);
	return strdup(key);
}

/* An answer's key: its id (compact JSON), or the batch key for an array or
 * an error with id null.  NULL: not an answer (an event). */
static char *answer_key(struct fsess *s, json_t *m)
{
	json_t *id;

	if (json_is_array(m))
		return s->shared ? array_key(m) : strdup(FSESS_BATCH_KEY);
	if (!json_is_object(m) || json_object_get(m, "method"))
		return NULL;
	id = json_object_get(m, "id");
	if (!id || json_is_null(id))
		return strdup(FSESS_BATCH_KEY);
	return json_dumps(id, JSON_COMPACT | JSON_ENCODE_ANY);
}

/* The wait an answer of key is for: the first of that key; on a shared
 * instance, a batch answer no session's prefix names (an error with id
 * null) goes to its one batch waiting, or (several) to none. */
static struct fwait **wait_of(struct fsess *s, const char *key)
{
	struct fwait **p, **found = NULL;

	for (p = &s->waits; *p; p = &(*p)->next) {
		if ((*p)->ans)
			continue;
		if (!strcmp((*p)->key, key))
			return p;
		if (s->shared && !strcmp(key, FSESS_BATCH_KEY) &&
		    !strncmp((*p)->key, FSESS_BATCH_KEY ":s", sizeof FSESS_BATCH_KEY + 1)) {
			if (found)
				return NULL;
			found = p;
		}
	}
	return found;
}

static void on_line(struct fsess *s, char *line)
{
	json_t *m = json_loads(line, JSON_DECODE_ANY, NULL);
	char *key = m ? answer_key(s, m) : NULL;
	struct fwait **p, *w = NULL;

	pthread_mutex_lock(&s->mu);
	if (!key) {
		if (json_is_object(m)) {
			uint64_t to = event_to(s, m, &line);
			push_event(s, line, to);
			line = NULL;
		}
		goto out;
	}
	if (!(p = wait_of(s, key)))
		goto out; /* an answer nobody waits for (timed out): dropped */
	w = *p;
	if (w->orphan) {
		*p = w->next;
		if (w->orphan == 1) {
			push_event(s, line, 0);
			line = NULL;
		}
		json_decref(w->ids);
		free(w->key);
		free(w);
		goto out;
	}
	w->ans = m;
	m = NULL;
	pthread_cond_broadcast(&s->cv);
out:
	pthread_mutex_unlock(&s->mu);
	json_decref(m);
	free(key);
	free(line);
}

static void *reader(void *arg)
{
	struct fsess *s = arg;
	struct pollfd pf = { .fd = s->from, .events = POLLIN };

	for (;;) {
		char *nl = s->rbuf ? memchr(s->rbuf, '\n', s->rlen) : NULL;
		ssize_t n;
		char *nb;

		if (nl) {
			size_t len = (size_t)(nl - s->rbuf);
			char *line = strndup(s->rbuf, len);
			memmove(s->rbuf, nl + 1, s->rlen - len - 1);
			s->rlen -= len + 1;
			if (!line)
				break;
			on_line(s, line);
			continue;
		}
		if (s->rlen >= FSESS_LINE_MAX)
			break;
		if (poll(&pf, 1, 500) == 0) {
			if (atomic_load(&s->stopping))
				break;
			continue;
		}
		if (!(nb = realloc(s->rbuf, s->rlen + 65536)))
			break;
		s->rbuf = nb;
		n = read(s->from, s->rbuf + s->rlen, 65536);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		s->rlen += (size_t)n;
	}
	pthread_mutex_lock(&s->mu);
	s->dead = 1;
	pthread_cond_broadcast(&s->cv);
	pthread_mutex_unlock(&s->mu);
	return NULL;
}

/* ---- the process ------------------------------------------------------- */

int fsess_start(struct fsess *s, const char *const *argv)
{
	int in[2], out[2], r;

	if (pipe2(in, O_CLOEXEC) < 0)
		return -errno;
	if (pipe2(out, O_CLOEXEC) < 0) {
		close(in[0]);
		close(in[1]);
		return -errno;
	}
	s->pid = fork();
	if (s->pid == 0) {
		sigset_t none;
		sigemptyset(&none);
		pthread_sigmask(SIG_SETMASK, &none, NULL);
		if (dup2(in[0], 0) < 0 || dup2(out[1], 1) < 0)
			_exit(125);
		execv("/proc/self/exe", (char **)argv);
		_exit(127);
	}
	close(in[0]);
	close(out[1]);
	if (s->pid < 0) {
		close(in[1]);
		close(out[0]);
		s->pid = 0;
		return -errno;
	}
	s->to = in[1];
	s->from = out[0];
	if ((r = pthread_create(&s->reader, NULL, reader, s)) != 0) {
		fsess_stop(s);
		return -r;
	}
	s->has_reader = 1;
	return 0;
}

void fsess_stop(struct fsess *s)
{
	int i, st;

	pthread_mutex_lock(&s->wmu);
	if (s->to >= 0)
		close(s->to);
	s->to = -1;
	pthread_mutex_unlock(&s->wmu);
	for (i = 0; s->pid > 0 && i < 60; i++) {
		if (waitpid(s->pid, &st, WNOHANG) == s->pid) {
			s->pid = 0;
			break;
		}
		if (i == 40)
			kill(s->pid, SIGTERM);
		usleep(50 * 1000);
	}
	if (s->pid > 0) {
		kill(s->pid, SIGKILL);
		waitpid(s->pid, &st, 0);
	}
	s->pid = 0;
	if (s->has_reader) {
		/* The process is gone: its stdout is at EOF, or (held by a
		 * child of it) the reader sees `stopping` within its poll. */
		atomic_store(&s->stopping, 1);
		pthread_join(s->reader, NULL);
		s->has_reader = 0;
	}
	if (s->from >= 0)
		close(s->from);
	s->from = -1;
	pthread_mutex_lock(&s->mu);
	s->dead = 1;
	pthread_cond_broadcast(&s->cv);
	pthread_mutex_unlock(&s->mu);
}

static int write_all(int fd, const char *p, size_t n)
{
	while (n) {
		ssize_t w = write(fd, p, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

int fsess_send(struct fsess *s, json_t *msg)
{
	char *t = json_dumps(msg, JSON_COMPACT | JSON_ENCODE_ANY);
	int r = -EPIPE;

	if (!t)
		return -ENOMEM;
	pthread_mutex_lock(&s->wmu);
	if (s->to >= 0 && write_all(s->to, t, strlen(t)) == 0 && write_all(s->to, "\n", 1) == 0)
		r = 0;
	pthread_mutex_unlock(&s->wmu);
	free(t);
	return r;
}
