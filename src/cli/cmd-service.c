/* cmd-service.c — `cordon service` (not listed in --help): the per-user
 * service of the warm path (cli-warm.h).  Started detached by the first
 * `cordon run` that finds none; one per user (a lock in its 0700
 * directory); exits after CORDON_SERVICE_IDLE seconds (default 120)
 * without a client.  It holds each audit log a client names open and
 * group-commits: every append request read in one turn of the loop goes
 * into one transaction, one fsync, then each client gets its answer —
 * only after that commit is durable.
 *
 * Trust boundary: a client of another uid is closed before a byte is
 * read (SO_PEERCRED).  No sandbox reaches the socket: its directory is
 * one of cordon's private paths, masked in every sandbox (a rootless
 * sandbox has our uid, so SO_PEERCRED alone would not keep it out).  A
 * client of our own uid can do nothing here it
 * could not do itself (append to an existing log with the user's rights:
 * the service creates no file, see own_file);
 * its requests are still length-capped, parsed strictly and each record
 * checked before it joins a group, so one bad request never fails
 * another client's records.  The service runs no sandbox and holds no
 * descriptor a sandbox could inherit. */
#include "cli.h"
#include "cli-warm.h"

#include "sandbox/tree-watch.h"
#include "util/bounds.h"
#include "util/util.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#define MAX_CLIENTS 256
#define MAX_LOGS    16
#define MAX_BATCH   256 /* requests in one group commit */

struct client {
	int fd;
	char *buf; /* one frame being read */
	size_t len, cap;
	int log; /* index into logs[], or -1 before open */
};

struct log {
	struct cd_audit *a;
	char key[3 * CD_PATH_MAX]; /* path, key, checkpoint file */
	dev_t dev;
	ino_t ino;
};

struct svc {
	int lfd, ep;
	struct client cl[MAX_CLIENTS];
	struct log logs[MAX_LOGS];
};

static void client_drop(struct svc *s, struct client *c)
{
	if (c->fd < 0)
		return;
	epoll_ctl(s->ep, EPOLL_CTL_DEL, c->fd, NULL);
	close(c->fd);
	free(c->buf);
	memset(c, 0, sizeof *c);
	c->fd = -1;
	c->log = -1;
}

static void reply(struct client *c, json_t *msg)
{
	if (!msg || cli_warm_send(c->fd, msg) < 0)
		shutdown(c->fd, SHUT_RDWR); /* the client goes cold */
	json_decref(msg);
}

static void reply_err(struct client *c, const char *why)
{
	reply(c, json_pack("{s:b, s:s}", "ok", 0, "error", why));
}

/* The service creates nothing: each path a client names (the log, its
 * key, its checkpoint file) must already be a regular file of ours, not
 * a symbolic link.  A new log's first run goes cold and creates it. */
static int own_file(const char *what, const char *path, struct stat *st, struct cd_err *err)
{
	if (lstat(path, st) < 0)
		return cd_err_sys(err, -errno, "%s '%s'", what, path);
	if (!S_ISREG(st->st_mode))
		return cd_err_set(err, -EPERM, "%s '%s': not a regular file", what, path);
	if (st->st_uid != geteuid())
		return cd_err_set(err, -EPERM, "%s '%s': not the user's own", what, path);
	return 0;
}

/* The log a client names, opened once and kept; reopened when its path
 * no longer names the file we hold (moved, removed, replaced). */
static int log_get(struct svc *s, json_t *req, struct cd_err *err)
{
	const char *db = json_string_value(json_object_get(req, "audit"));
	const char *key = json_string_value(json_object_get(req, "key"));
	const char *cp = json_string_value(json_object_get(req, "cp"));
	json_t *every = json_object_get(req, "every"), *secs = json_object_get(req, "secs");
	char id[sizeof s->logs[0].key];
	struct cd_audit_opts o;
	struct stat st, pre;
	int i, n, free_i = -1;

	if (!db || *db != '/' || !json_is_integer(every) || !json_is_integer(secs) ||
	    json_integer_value(every) < 0 || json_integer_value(secs) < 0)
		return cd_err_set(err, -CD_E_PARSE, "malformed open request");
	n = snprintf(id, sizeof id, "%s\n%s\n%s", db, key ? key : "", cp ? cp : "");
	if (n < 0 || (size_t)n >= sizeof id)
		return cd_err_set(err, -ENAMETOOLONG, "paths too long");
	for (i = 0; i < MAX_LOGS; i++) {
		if (!s->logs[i].a) {
			if (free_i < 0)
				free_i = i;
			continue;
		}
		if (strcmp(s->logs[i].key, id) != 0)
			continue;
		if (stat(db, &st) == 0 && st.st_dev == s->logs[i].dev &&
		    st.st_ino == s->logs[i].ino)
			return i;
		cd_audit_close(s->logs[i].a); /* the path names another file now */
		s->logs[i].a = NULL;
		free_i = i;
		break;
	}
	if (free_i < 0)
		return cd_err_set(err, -EMFILE, "too many logs");
	if ((key && (*key != '/' || (n = own_file("signing key", key, &st, err)) < 0)) ||
	    (cp && (*cp != '/' || (n = own_file("checkpoint file", cp, &st, err)) < 0)) ||
	    (n = own_file("audit log", db, &pre, err)) < 0)
		return n < 0 ? n : cd_err_set(err, -CD_E_PARSE, "malformed open request");
	memset(&o, 0, sizeof o);
	o.key_path = key;
	o.checkpoint_out = cp;
	o.checkpoint_every = (uint64_t)json_integer_value(every);
	o.checkpoint_secs = (uint64_t)json_integer_value(secs);
	if ((n = cd_audit_open(db, &o, &s->logs[free_i].a, err)) < 0)
		return n;
	/* Still the file checked above (not swapped meanwhile). */
	if (lstat(db, &st) < 0 || st.st_dev != pre.st_dev || st.st_ino != pre.st_ino) {
		cd_audit_close(s->logs[free_i].a);
		s->logs[free_i].a = NULL;
		return cd_err_set(err, -EPERM, "audit log '%s' changed while it was opened", db);
	}
	s->logs[free_i].dev = st.st_dev;
	s->logs[free_i].ino = st.st_ino;
	memcpy(s->logs[free_i].key, id, (size_t)n + 1 > sizeof id ? sizeof id : strlen(id) + 1);
	return free_i;
}

/* A pending append: its client, its records (pointing into req). */
struct pend {
	struct client *c;
	json_t *req;
	size_t first, n; /* its records' place in the group */
};

static int handle_open(struct svc *s, struct client *c, json_t *req)
{
	struct cd_err err = { 0, "" };
	int i = log_get(s, req, &err);

	if (i < 0) {
		reply_err(c, err.msg);
		return 0;
	}
	c->log = i;
	reply(c, json_pack("{s:b, s:s}", "ok", 1, "log_id", cd_audit_log_id(s->logs[i].a)));
	return 0;
}

/* An append that carries its log ({open: {audit, key, cp, every, secs}},
 * the client's first): the log opened (or found) as an open request
 * does.  1 go on, 0 answered (refused). */
static int open_with(struct svc *s, struct client *c, json_t *req)
{
	json_t *o = json_object_get(req, "open");
	struct cd_err err = { 0, "" };
	int i;

	if (!o)
		return 1;
	if (!json_is_object(o) || json_object_get(o, "op")) {
		reply_err(c, "malformed open request");
		return 0;
	}
	i = log_get(s, o, &err);
	if (i < 0) {
		reply_err(c, err.msg);
		return 0;
	}
	c->log = i;
	return 1;
}

/* Commit every pending append of one log in one transaction, then answer
 * each: the seq of its last record.  A lazy request rides in the durable
 * group (durable is more than it asked for). */
static void commit_group(struct svc *s, int li, struct pend *p, size_t np)
{
	struct cd_record *recs = NULL;
	size_t total = 0, i, k;
	uint64_t last = 0;
	struct cd_err err = { 0, "" };
	int r = 0;

	for (i = 0; i < np; i++)
		total += json_array_size(json_object_get(p[i].req, "recs"));
	if (!total || !(recs = calloc(total, sizeof *recs)))
		r = -ENOMEM;
	for (i = 0, k = 0; r == 0 && i < np; i++) {
		json_t *a = json_object_get(p[i].req, "recs");
		size_t j;
		p[i].first = k;
		p[i].n = json_array_size(a);
		for (j = 0; j < p[i].n; j++)
			cli_warm_record_from(json_array_get(a, j), &recs[k++]);
	}
	if (r == 0 && !s->logs[li].a)
		r = cd_err_set(&err, -ESTALE, "the log was closed meanwhile");
	if (r == 0)
		r = cd_audit_append_many(s->logs[li].a, recs, total, &last, &err);
	for (i = 0; i < np; i++) {
		if (r < 0)
			reply_err(p[i].c, err.msg[0] ? err.msg : "cannot append");
		else
			reply(p[i].c,
			      json_pack("{s:b, s:I}", "ok", 1, "last",
			                (json_int_t)(last - (total - p[i].first - p[i].n))));
	}
	free(recs);
}

/* An append request, checked record by record before it may join a
 * group: 1 queued, 0 answered (refused). */
static int check_append(struct client *c, json_t *req)
{
	json_t *a = json_object_get(req, "recs"), *lazy = json_object_get(req, "lazy");
	struct cd_err err = { 0, "" };
	size_t j;

	if (c->log < 0) {
		reply_err(c, "append before open");
		return 0;
	}
	if (!json_is_array(a) || !json_array_size(a) || json_array_size(a) > 64 ||
	    !json_is_boolean(lazy)) {
		reply_err(c, "malformed append request");
		return 0;
	}
	for (j = 0; j < json_array_size(a); j++) {
		struct cd_record r;
		if (cli_warm_record_from(json_array_get(a, j), &r) < 0) {
			reply_err(c, "malformed record");
			return 0;
		}
		if (cd_audit_record_check(&r, &err) < 0) {
			reply_err(c, err.msg);
			return 0;
		}
	}
	return 1;
}

/* Read what a client sent; complete frames are parsed into *ret (one at
 * a time: a client waits for each answer).  0 nothing yet, 1 a request,
 * -1 drop the client. */
static int client_read(struct client *c, json_t **ret)
{
	size_t need;
	ssize_t n;

	for (;;) {
		need = 4;
		if (c->len >= 4)
			need += (size_t)(unsigned char)c->buf[0] |
			        (size_t)(unsigned char)c->buf[1] << 8 |
			        (size_t)(unsigned char)c->buf[2] << 16 |
			        (size_t)(unsigned char)c->buf[3] << 24;
		if (need > 4 + CLI_WARM_FRAME_MAX)
			return -1;
		if (c->len >= need && need > 4)
			break;
		if (need > c->cap) {
			size_t cap = need < 4096 ? 4096 : need;
			char *b = realloc(c->buf, cap);
			if (!b)
				return -1;
			c->buf = b;
			c->cap = cap;
		}
		n = read(c->fd, c->buf + c->len, need - c->len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN)
			return 0;
		if (n <= 0)
			return -1;
		c->len += (size_t)n;
	}
	*ret = json_loadb(c->buf + 4, need - 4, JSON_REJECT_DUPLICATES, NULL);
	c->len = 0;
	return json_is_object(*ret) ? 1 : -1;
}

static void accept_one(struct svc *s)
{
	struct epoll_event ev;
	int fd = accept4(s->lfd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK), i;

	if (fd < 0)
		return;
	/* Only our own uid is ever heard. */
	if (cli_warm_peer_uid(fd) != (long)geteuid()) {
		close(fd);
		return;
	}
	for (i = 0; i < MAX_CLIENTS && s->cl[i].fd >= 0; i++)
		;
	memset(&ev, 0, sizeof ev);
	ev.events = EPOLLIN;
	ev.data.u32 = (uint32_t)i;
	if (i == MAX_CLIENTS || epoll_ctl(s->ep, EPOLL_CTL_ADD, fd, &ev) < 0) {
		close(fd); /* that client goes cold */
		return;
	}
	s->cl[i].fd = fd;
	s->cl[i].log = -1;
}

/* One turn: read every ready client, answer opens, then commit the
 * appends log by log, one transaction each. */
static void turn(struct svc *s, struct epoll_event *ev, int nev)
{
	static struct pend p[MAX_BATCH];
	size_t np = 0, i, k;
	int e, li;

	for (e = 0; e < nev; e++) {
		struct client *c;
		json_t *req = NULL;
		const char *op;
		int r;
		if (ev[e].data.u32 == UINT32_MAX) {
			accept_one(s);
			continue;
		}
		c = &s->cl[ev[e].data.u32];
		if (c->fd < 0 || np == MAX_BATCH)
			continue; /* a full batch: the rest is read next turn */
		r = client_read(c, &req);
		if (r < 0) {
			client_drop(s, c);
			continue;
		}
		op = r ? json_string_value(json_object_get(req, "op")) : NULL;
		if (r && op && strcmp(op, "open") == 0)
			handle_open(s, c, req);
		else if (r && op && strcmp(op, "append") == 0) {
			/* one answer per request: a refusal is the answer */
			if (open_with(s, c, req) && check_append(c, req)) {
				p[np].c = c;
				p[np++].req = req;
				continue;
			}
		} else if (r)
			reply_err(c, "unknown request");
		json_decref(req);
	}
	for (li = 0; li < MAX_LOGS; li++) {
		struct pend g[MAX_BATCH];
		size_t ng = 0;
		for (i = 0; i < np; i++)
			if (p[i].c->log == li)
				g[ng++] = p[i];
		if (ng)
			commit_group(s, li, g, ng);
	}
	for (k = 0; k < np; k++)
		json_decref(p[k].req);
}

static int listen_on(struct svc *s, const char *dir)
{
	struct sockaddr_un sa;
	struct epoll_event ev;
	char lock[CD_PATH_MAX + 16];
	int lk, n;

	n = snprintf(lock, sizeof lock, "%s/service.lock", dir);
	if (n < 0 || (size_t)n >= sizeof lock)
		return -ENAMETOOLONG;
	lk = open(lock, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY, 0600);
	if (lk < 0)
		return -errno;
	if (flock(lk, LOCK_EX | LOCK_NB) < 0) {
		close(lk);
		return -EEXIST; /* another service of ours runs: it serves */
	}
	/* lk stays open (and locked) until we exit; it names our pid */
	n = snprintf(lock, sizeof lock, "%ld\n", (long)getpid());
	if (n > 0 && ftruncate(lk, 0) == 0)
		(void)cd_write_all(lk, lock, (size_t)n);
	memset(&sa, 0, sizeof sa);
	sa.sun_family = AF_UNIX;
	if (cli_warm_sock(sa.sun_path, sizeof sa.sun_path) < 0)
		return -ENAMETOOLONG;
	unlink(sa.sun_path); /* a stale one, from a service that died */
	s->lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (s->lfd < 0 || bind(s->lfd, (struct sockaddr *)&sa, sizeof sa) < 0 ||
	    chmod(sa.sun_path, 0600) < 0 || listen(s->lfd, 128) < 0)
		return -errno;
	s->ep = epoll_create1(EPOLL_CLOEXEC);
	memset(&ev, 0, sizeof ev);
	ev.events = EPOLLIN;
	ev.data.u32 = UINT32_MAX;
	if (s->ep < 0 || epoll_ctl(s->ep, EPOLL_CTL_ADD, s->lfd, &ev) < 0)
		return -errno;
	return 0;
}

/* The tree watcher (tree-watch.h): a thread of its own, so that a run's
 * questions never wait behind a group commit's fsync.  Its last request
 * keeps the service from its idle exit. */
static volatile uint64_t g_watch_active;
static char g_watch_dir[CD_PATH_MAX];

static void *watch_main(void *arg)
{
	(void)arg;
	(void)cd_watchd_serve(g_watch_dir, &g_watch_active);
	return NULL; /* not served: every run looks at each directory itself */
}

static int watch_busy(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return g_watch_active && (uint64_t)ts.tv_sec < g_watch_active + 2;
}

int cmd_service(int argc, char **argv)
{
	static struct svc s;
	struct epoll_event ev[64];
	char dir[CD_PATH_MAX];
	const char *idle_env = getenv("CORDON_SERVICE_IDLE");
	uint64_t idle = 120, waited = 0;
	struct sockaddr_un sa;
	int i, r;

	(void)argv;
	if (argc > 1) {
		cli_errorf("usage: cordon service (started by cordon run; takes no options)");
		return CD_EXIT_USAGE;
	}
	if (idle_env && cd_parse_u64(idle_env, strlen(idle_env), 86400, &idle) < 0)
		idle = 120;
	umask(077);
	if (chdir("/") < 0)
		return CD_EXIT_CORDON;
	signal(SIGPIPE, SIG_IGN);
	signal(SIGHUP, SIG_IGN);
	for (i = 0; i < MAX_CLIENTS; i++) {
		s.cl[i].fd = -1;
		s.cl[i].log = -1;
	}
	if ((r = cli_warm_dir(dir, sizeof dir)) < 0 || (r = cli_warm_dir_check(dir, 1)) < 0 ||
	    (r = listen_on(&s, dir)) < 0) {
		if (r == -EEXIST)
			return CD_EXIT_OK;
		cli_errorf("cannot listen: %s", cd_strerror(r));
		return CD_EXIT_CORDON;
	}
	{
		pthread_t th;
		pthread_attr_t at;

		memcpy(g_watch_dir, dir, sizeof g_watch_dir);
		if (pthread_attr_init(&at) == 0) {
			pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
			(void)pthread_create(&th, &at, watch_main, NULL);
			pthread_attr_destroy(&at);
		}
	}
	for (;;) {
		int n = epoll_wait(s.ep, ev, 64, 1000), busy = 0;
		if (n < 0 && errno != EINTR)
			break;
		if (n > 0)
			turn(&s, ev, n);
		for (i = 0; i < MAX_CLIENTS; i++)
			busy |= s.cl[i].fd >= 0;
		busy |= watch_busy();
		waited = busy || n > 0 ? 0 : waited + 1;
		if (idle > 0 && waited >= idle)
			break;
	}
	/* Gone before the lock is released: a new service binds afresh. */
	if (cli_warm_sock(sa.sun_path, sizeof sa.sun_path) == 0)
		unlink(sa.sun_path);
	close(s.lfd);
	for (i = 0; i < MAX_LOGS; i++)
		cd_audit_close(s.logs[i].a);
	return CD_EXIT_OK;
}
