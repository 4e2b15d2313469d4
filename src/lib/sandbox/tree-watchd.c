/* tree-watchd.c — the tree watcher (tree-watch.h): inotify watches on
 * every directory of each tree a walk asked about, and a log of the
 * directories that had an event, by generation.
 *
 * Generations: `cur` is the last one handed out.  Each answer first
 * reads the whole inotify queue (every event is logged at cur + 1),
 * then hands out cur + 1.  So an event logged at or below a generation
 * G came from a call that returned before G's answer was sent, and what
 * a caller reads after receiving G shows its effect; an event above G
 * may not have been seen.  A caller that checked a directory after G
 * needs to look at it again only if the log has it above G.
 *
 * A tree is watched whole by one pass (synchronously, when first asked
 * about: the first run of a tree waits for it) before its generation
 * `complete` is set; a list is answered only for a `since` at or after
 * it.  A directory made or moved in later is watched when its event is
 * read (its parent's event is logged first, so the caller reads the new
 * directory whole anyway).  A directory moved within or out of a tree
 * leaves the recorded paths stale: that tree is watched again by a new
 * pass on the next ask.  An overflowed queue, a failed watch, a tree
 * too large: FULL until a pass succeeds (a failed tree waits
 * RETRY_S before it is tried again, so a tree too large costs one pass a
 * minute, not one per run).  Unreadable directories (another user's
 * 0700, in a tree we can read) cannot be watched: each is reported as
 * changed in every answer, so the caller checks it each time.
 *
 * Trust: peers of another uid are closed unheard; a request is read in
 * full within 100 ms or dropped; nothing a request says is trusted
 * beyond naming a tree (its path, opened here without following a
 * symlink at its end, must have the dev/ino the client saw).
 *
 * Files' own state (tree-watch.h, `attrs`): tree-watch-attrs.c. */

#include "tree-watchd-int.h"
#include "tree-scan-int.h"

#include "util/util.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/inotify.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/time.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <linux/openat2.h>
#include <time.h>
#include <unistd.h>

static void log_add(struct wstate *s, uint64_t dev, uint64_t ino)
{
	struct logent *e = &s->log[s->logn++ % LOG_SIZE];

	if (e->gen > s->lost)
		s->lost = e->gen;
	e->gen = s->cur + 1;
	e->dev = dev;
	e->ino = ino;
}

static struct wdir *dir_find(struct wstate *s, int wd)
{
	size_t i;

	if (!s->cap)
		return NULL;
	for (i = (size_t)wd & (s->cap - 1); s->dirs[i].wd; i = (i + 1) & (s->cap - 1)) {
		if (s->dirs[i].wd == wd)
			return &s->dirs[i];
	}
	return NULL;
}

static int dir_grow(struct wstate *s)
{
	size_t cap = s->cap ? s->cap * 2 : 4096, i;
	struct wdir *v = calloc(cap, sizeof *v), *old = s->dirs;

	if (!v)
		return -1;
	for (i = 0; i < s->cap; i++) {
		size_t j;

		if (!old[i].wd)
			continue;
		for (j = (size_t)old[i].wd & (cap - 1); v[j].wd; j = (j + 1) & (cap - 1))
			;
		v[j] = old[i];
	}
	free(old);
	s->dirs = v;
	s->cap = cap;
	return 0;
}

/* Remove by re-inserting the run after it (linear probing). */
static void dir_remove(struct wstate *s, struct wdir *d)
{
	size_t i = (size_t)(d - s->dirs), j;

	free(d->rel);
	memset(d, 0, sizeof *d);
	s->ndirs--;
	for (j = (i + 1) & (s->cap - 1); s->dirs[j].wd; j = (j + 1) & (s->cap - 1)) {
		struct wdir e = s->dirs[j];
		size_t k;

		memset(&s->dirs[j], 0, sizeof e);
		for (k = (size_t)e.wd & (s->cap - 1); s->dirs[k].wd; k = (k + 1) & (s->cap - 1))
			;
		s->dirs[k] = e;
	}
}

/* A tree's recorded paths no longer hold, or a directory in it went
 * unwatched: every tree is watched again by a new pass on its next ask.
 * Every one, not that one alone: trees overlap (a run in p, another in
 * p/sub), each directory is recorded under one of them, and the other
 * must not vouch for what lies below it either. */
static void all_stale(struct wstate *s)
{
	size_t i;

	for (i = 1; i <= TREES_MAX; i++)
		s->trees[i].complete = 0;
}

/* Watch the directory open at fd (dev/ino in st) as rel of tree id:
 * 0, or -1 when it cannot be (the tree is then not watched whole). */
static int watch_one(struct wstate *s, uint32_t id, int fd, const struct stat *st, const char *rel)
{
	char proc[64];
	struct wdir *d;
	size_t i;
	int wd;

	snprintf(proc, sizeof proc, "/proc/self/fd/%d", fd);
	if ((wd = inotify_add_watch(s->in, proc, DIR_MASK)) < 0)
		return -1;
	if ((d = dir_find(s, wd))) {
		/* already watched (by another tree, or again): keep one record */
		if (d->dev != (uint64_t)st->st_dev || d->ino != (uint64_t)st->st_ino)
			return -1;
		if (d->tree == id) {
			char *r = strdup(rel);

			if (!r)
				return -1;
			free(d->rel);
			d->rel = r;
		}
		log_add(s, d->dev, d->ino);
		return 0;
	}
	if (s->ndirs >= DIRS_MAX || ((s->ndirs + 1) * 2 > s->cap && dir_grow(s) < 0)) {
		inotify_rm_watch(s->in, wd);
		return -1;
	}
	for (i = (size_t)wd & (s->cap - 1); s->dirs[i].wd; i = (i + 1) & (s->cap - 1))
		;
	d = &s->dirs[i];
	if (!(d->rel = strdup(rel))) {
		inotify_rm_watch(s->in, wd);
		return -1;
	}
	d->wd = wd;
	d->tree = id;
	d->dev = (uint64_t)st->st_dev;
	d->ino = (uint64_t)st->st_ino;
	s->ndirs++;
	log_add(s, d->dev, d->ino);
	return 0;
}

/* A filesystem whose every change the local kernel makes (and so
 * reports to inotify): ext4, xfs, btrfs, tmpfs.  Not NFS, FUSE, 9p or an
 * overlay, whose files can change where no event is raised here. */
static int local_fs(int fd)
{
	struct statfs sf;

	return fstatfs(fd, &sf) == 0 && (sf.f_type == 0xEF53 || sf.f_type == 0x58465342 ||
	                                 sf.f_type == 0x9123683E || sf.f_type == 0x01021994);
}

/* Watch the directory at fd (rel of tree id) and every directory below
 * it.  Consumes fd.  0 or -1. */
static int watch_below(struct wstate *s, uint32_t id, int fd, char *rel, size_t rl, unsigned depth)
{
	struct stat st;
	char *buf = NULL;
	long n;
	int r = -1;

	if (depth > DEPTH_MAX || fstat(fd, &st) < 0 || !local_fs(fd) ||
	    watch_one(s, id, fd, &st, rel) < 0 || !(buf = malloc(sizeof s->dents)))
		goto out;
	r = 0;
	while (r == 0 && (n = getdents64(fd, buf, sizeof s->dents)) > 0) {
		long off;

		for (off = 0; r == 0 && off < n;) {
			struct dirent64 *e = (void *)(buf + off);
			size_t nl = strlen(e->d_name);
			int cfd;

			off += e->d_reclen;
			if (e->d_type != DT_DIR && e->d_type != DT_UNKNOWN)
				continue;
			if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
				continue;
			if (rl + 1 + nl + 1 > PATH_MAX) {
				r = -1;
				break;
			}
			cfd = openat(fd, e->d_name,
			             O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			if (cfd < 0) {
				/* not a directory (DT_UNKNOWN), or gone: its parent's
				 * event says so; anything else (a directory we cannot
				 * read: nothing below it could be watched) fails the
				 * pass */
				r = errno == ENOTDIR || errno == ENOENT || errno == ELOOP ? 0 : -1;
				continue;
			}
			if (rl)
				rel[rl] = '/';
			memcpy(rel + (rl ? rl + 1 : 0), e->d_name, nl + 1);
			r = watch_below(s, id, cfd, rel, rl ? rl + 1 + nl : nl, depth + 1);
			rel[rl] = '\0';
		}
	}
	if (r == 0 && n < 0)
		r = -1;
out:
	free(buf);
	close(fd);
	return r;
}

static uint64_t now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec;
}

static void reset(struct wstate *s);

/* Tree t's top, opened by its path (O_PATH), if it is still the
 * directory first asked about; -1 if not.  Nothing of a tree is held
 * open between requests: an fd would keep its filesystem from being
 * unmounted (watches do not). */
int cd_watchd_top_open(const struct wtree *t)
{
	struct stat st;
	int fd = open(t->path, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

	if (fd >= 0 && (fstat(fd, &st) < 0 || (uint64_t)st.st_dev != t->dev ||
	                (uint64_t)st.st_ino != t->ino)) {
		close(fd);
		fd = -1;
	}
	return fd;
}

/* A pass over tree id from its top (topfd): complete at cur + 1 (the
 * generation the answer that follows hands out). */
static void tree_pass(struct wstate *s, uint32_t id, int topfd)
{
	struct wtree *t = &s->trees[id];
	char rel[PATH_MAX + 1] = "";
	int fd = openat(topfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	t->attrs = cd_watchd_attrs_mark(s, t, topfd);

	/* a mount below it: the pass would watch what is mounted, a caller
	 * in another mount namespace may walk what lies under it */
	if (fd >= 0 && !cd_tree_mounts_below(t->path) && watch_below(s, id, fd, rel, 0, 0) == 0) {
		t->complete = 1;
		t->complete_gen = t->attrs_gen = s->cur + 1;
		t->failed_at = 0;
		return;
	}
	/* what the pass watched would hold the user's inotify watches (a
	 * limit per user) for nothing: everything is let go */
	reset(s);
	t->complete = 0;
	t->failed_at = (time_t)now_s();
}

/* A directory made or moved into d: watched with what is below it. */
static void watch_new(struct wstate *s, struct wdir *d, const char *name)
{
	struct wtree *t = &s->trees[d->tree];
	char rel[PATH_MAX + 1];
	struct open_how how;
	struct stat st;
	size_t rl = strlen(d->rel), nl = strlen(name);
	int pfd, fd, top = t->path ? cd_watchd_top_open(t) : -1;

	if (top < 0) {
		all_stale(s);
		return;
	}
	memset(&how, 0, sizeof how);
	how.flags = O_RDONLY | O_DIRECTORY | O_CLOEXEC;
	how.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS;
	pfd = (int)syscall(SYS_openat2, top, *d->rel ? d->rel : ".", &how, sizeof how);
	close(top);
	if (pfd < 0 || fstat(pfd, &st) < 0 || (uint64_t)st.st_dev != d->dev ||
	    (uint64_t)st.st_ino != d->ino || rl + 1 + nl + 1 > sizeof rel) {
		if (pfd >= 0)
			close(pfd);
		all_stale(s); /* the recorded path is not d's any more */
		return;
	}
	fd = openat(pfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	close(pfd);
	if (fd < 0) {
		if (errno != ENOENT) /* gone again: its parent's event says so */
			all_stale(s);
		return;
	}
	memcpy(rel, d->rel, rl);
	if (rl)
		rel[rl] = '/';
	memcpy(rel + (rl ? rl + 1 : 0), name, nl + 1);
	if (watch_below(s, d->tree, fd, rel, rl ? rl + 1 + nl : nl, 0) < 0)
		all_stale(s);
}

/* Read the whole queue: each event logs its directory. */
static void drain(struct wstate *s)
{
	char buf[65536] __attribute__((aligned(__alignof__(struct inotify_event))));
	ssize_t n;

	while ((n = read(s->in, buf, sizeof buf)) > 0) {
		char *p;

		for (p = buf; p < buf + n;) {
			const struct inotify_event *e = (const void *)p;
			struct wdir *d;

			p += sizeof *e + e->len;
			if (e->mask & IN_Q_OVERFLOW) {
				reset(s);
				return;
			}
			if (!(d = dir_find(s, e->wd)))
				continue;
			log_add(s, d->dev, d->ino);
			if (e->mask & IN_IGNORED) {
				uint32_t id = d->tree;

				/* removed, or its filesystem unmounted */
				if (!*d->rel && s->trees[id].path)
					all_stale(s);
				dir_remove(s, d);
				continue;
			}
			if ((e->mask & IN_MOVE_SELF) && !*d->rel)
				all_stale(s); /* its top moved */
			if ((e->mask & IN_ISDIR) && (e->mask & IN_MOVED_FROM))
				all_stale(s); /* the paths below it changed */
			if ((e->mask & IN_ISDIR) && (e->mask & (IN_CREATE | IN_MOVED_TO)) && e->len)
				watch_new(s, d, e->name);
		}
	}
}

/* Forget every watch: a new inotify instance and a new instance id (so
 * no answer of the old one is taken for the new one's). */
static void reset(struct wstate *s)
{
	size_t i;
	int in = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);

	for (i = 0; i < s->cap; i++)
		free(s->dirs[i].rel);
	free(s->dirs);
	s->dirs = NULL;
	s->cap = s->ndirs = 0;
	for (i = 1; i <= TREES_MAX; i++) {
		s->trees[i].complete = 0;
		s->trees[i].attrs = 0;
		s->trees[i].failed_at = 0;
	}
	memset(s->log, 0, LOG_SIZE * sizeof *s->log);
	s->logn = 0;
	s->lost = s->cur;
	while (getrandom(&s->instance, sizeof s->instance, 0) != sizeof s->instance || !s->instance)
		;
	if (in >= 0 && s->in >= 0) {
		epoll_ctl(s->ep, EPOLL_CTL_DEL, s->in, NULL);
		close(s->in);
	}
	if (in >= 0) {
		struct epoll_event ev = { .events = EPOLLIN, .data.u32 = UINT32_MAX - 1 };

		s->in = in;
		epoll_ctl(s->ep, EPOLL_CTL_ADD, in, &ev);
	}
	/* a new fanotify group: the old one's marks go with it */
	cd_watchd_attrs_open(s, UINT32_MAX - 3);
}

/* Read the mount table to its end: the next change wakes us again. */
static void mounts_read(struct wstate *s)
{
	char buf[4096];

	if (lseek(s->mi, 0, SEEK_SET) == 0)
		while (read(s->mi, buf, sizeof buf) > 0)
			;
}

static int id_cmp(const void *a, const void *b)
{
	const struct cd_watch_id *x = a, *y = b;

	if (x->dev != y->dev)
		return x->dev < y->dev ? -1 : 1;
	return x->ino < y->ino ? -1 : x->ino > y->ino;
}

/* Is each tree of ids watched whole since `since`? */
static int trees_hold(struct wstate *s, const uint32_t *ids, uint32_t n, uint64_t since)
{
	uint32_t i;

	for (i = 0; i < n; i++) {
		const struct wtree *t = ids[i] && ids[i] <= TREES_MAX ? &s->trees[ids[i]] : NULL;

		if (!t || !t->path || !t->complete || t->complete_gen > since)
			return 0;
	}
	return 1;
}

/* Answer with cur + 1: the directories logged after `since` (and the
 * unwatchable ones of the trees), or FULL. */
static void answer(struct wstate *s, int fd, uint64_t instance, uint64_t since, const uint32_t *ids,
                   uint32_t n, uint32_t tree)
{
	static struct cd_watch_id v[CD_WATCH_DIRTY_MAX];
	struct cd_watch_rep rep;
	size_t k = 0, i, j, full;

	s->cur++;
	memset(&rep, 0, sizeof rep);
	rep.magic = CD_WATCH_MAGIC;
	rep.instance = s->instance;
	rep.gen = s->cur;
	rep.tree = tree;
	rep.mntns = s->mntns;
	full = instance != s->instance || !since || since > s->cur || since < s->lost ||
	       !trees_hold(s, ids, n, since);
	/* newest first, down to `since` */
	for (i = s->logn; !full && i > 0 && i + LOG_SIZE > s->logn; i--) {
		const struct logent *e = &s->log[(i - 1) % LOG_SIZE];

		if (e->gen <= since)
			break;
		if (k == CD_WATCH_DIRTY_MAX)
			full = 1;
		else {
			v[k].dev = e->dev;
			v[k++].ino = e->ino;
		}
	}
	if (!full) {
		qsort(v, k, sizeof *v, id_cmp);
		for (i = 0, j = 0; i < k; i++) {
			if (!j || id_cmp(&v[j - 1], &v[i]))
				v[j++] = v[i];
		}
		k = j;
		full = k > CD_WATCH_DIRTY_MAX;
	}
	for (i = 0; !full && i < n; i++)
		rep.attrs = (i == 0 || rep.attrs) && ids[i] && ids[i] <= TREES_MAX &&
		            s->trees[ids[i]].attrs && s->trees[ids[i]].attrs_gen <= since;
	rep.status = full ? CD_WATCH_FULL : CD_WATCH_LIST;
	rep.ndirty = full ? 0 : (uint32_t)k;
	if (send(fd, &rep, sizeof rep, MSG_NOSIGNAL) != (ssize_t)sizeof rep ||
	    (rep.ndirty && send(fd, v, k * sizeof *v, MSG_NOSIGNAL) != (ssize_t)(k * sizeof *v)))
		shutdown(fd, SHUT_RDWR);
}

/* The tree at path (its top dev/ino as the client saw it): its id, a
 * pass made when it is new, stale or moved; 0 when it cannot be watched. */
static uint32_t tree_for(struct wstate *s, const char *path, uint64_t dev, uint64_t ino)
{
	struct wtree *t = NULL;
	struct stat st;
	uint32_t id, free_id = 0;
	int fd;

	for (id = 1; id <= TREES_MAX; id++) {
		if (!s->trees[id].path) {
			free_id = free_id ? free_id : id;
			continue;
		}
		if (!strcmp(s->trees[id].path, path)) {
			t = &s->trees[id];
			break;
		}
	}
	if (t && t->dev == dev && t->ino == ino && t->complete)
		return id;
	if (t && t->dev == dev && t->ino == ino && t->failed_at &&
	    now_s() < (uint64_t)t->failed_at + RETRY_S)
		return 0;
	if (!t && !free_id)
		return 0; /* every slot taken: this tree is checked in full */
	fd = open(path, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) < 0 || (uint64_t)st.st_dev != dev ||
	    (uint64_t)st.st_ino != ino) {
		if (fd >= 0)
			close(fd);
		return 0;
	}
	if (!t) {
		id = free_id;
		t = &s->trees[id];
		memset(t, 0, sizeof *t);
		if (!(t->path = strdup(path))) {
			close(fd);
			return 0;
		}
	}
	t->dev = dev;
	t->ino = ino;
	tree_pass(s, id, fd);
	close(fd);
	return t->complete ? id : 0;
}

/* n bytes in one call: the socket's 100 ms receive timeout bounds the
 * whole of it (a peer sending a byte at a time is cut off, not waited
 * for byte by byte). */
static int get_full(int fd, void *p, size_t n)
{
	ssize_t k = recv(fd, p, n, MSG_WAITALL);

	return k == (ssize_t)n ? 0 : -1;
}

/* A request's header, and the descriptor it carries (FILE), else -1:
 * one at most. */
static int get_req(int fd, struct cd_watch_req *q, int *passed)
{
	int bad;
	ssize_t k = cd_watch_recv_fd(fd, q, sizeof *q, passed, &bad);

	if (k != (ssize_t)sizeof *q || bad || q->magic != CD_WATCH_MAGIC ||
	    (*passed >= 0) != (q->op == CD_WATCH_FILE)) {
		if (*passed >= 0)
			close(*passed);
		*passed = -1;
		return -1;
	}
	return 0;
}

/* FILE: the checked copy of the scan cache file passed (tree-cache-held.c). */
static void answer_file(struct wstate *s, int fd, int file)
{
	struct cd_watch_rep rep;
	int mfd = cd_cache_held_fd(file);

	close(file);
	memset(&rep, 0, sizeof rep);
	rep.magic = CD_WATCH_MAGIC;
	rep.instance = s->instance;
	rep.gen = s->cur;
	rep.mntns = s->mntns;
	rep.status = mfd >= 0 ? CD_WATCH_LIST : CD_WATCH_FULL;
	if (cd_watch_send_fd(fd, &rep, sizeof rep, mfd) < 0)
		shutdown(fd, SHUT_RDWR);
	if (mfd >= 0)
		close(mfd);
}

/* One request of a client: -1 to drop it. */
static int serve_one(struct wstate *s, int fd)
{
	static char path[PATH_MAX + 1];
	uint32_t ids[CD_WATCH_TREES_MAX], id;
	struct cd_watch_req q = { 0 };
	int passed;

	if (get_req(fd, &q, &passed) < 0)
		return -1;
	if (q.op == CD_WATCH_FILE) {
		if (q.ntrees || q.pathlen) {
			close(passed);
			return -1;
		}
		answer_file(s, fd, passed);
		return 0;
	}
	if (q.op == CD_WATCH_ASK) {
		if (q.pathlen == 0 || q.pathlen > PATH_MAX || q.ntrees ||
		    get_full(fd, path, q.pathlen) < 0)
			return -1;
		path[q.pathlen] = '\0';
		if (path[0] != '/' || memchr(path, '\0', q.pathlen))
			return -1;
		drain(s);
		cd_watchd_attrs_drain(s);
		id = tree_for(s, path, q.dev, q.ino);
		answer(s, fd, q.instance, q.since, &id, 1, id);
		return 0;
	}
	if (q.op == CD_WATCH_SINCE) {
		if (!q.ntrees || q.ntrees > CD_WATCH_TREES_MAX || q.pathlen ||
		    get_full(fd, ids, q.ntrees * sizeof *ids) < 0)
			return -1;
		drain(s);
		cd_watchd_attrs_drain(s);
		answer(s, fd, q.instance, q.since, ids, q.ntrees, 0);
		return 0;
	}
	return -1;
}

#define CLIENTS_MAX 256

int cd_watchd_serve(const char *dir, volatile uint64_t *active)
{
	static struct wstate s;
	static int cl[CLIENTS_MAX];
	struct sockaddr_un sa;
	struct epoll_event ev;
	struct timeval tv = { 0, 100000 };
	int i, n;

	memset(&sa, 0, sizeof sa);
	sa.sun_family = AF_UNIX;
	n = snprintf(sa.sun_path, sizeof sa.sun_path, "%s/%s", dir, CD_WATCH_SOCK_NAME);
	if (n < 0 || (size_t)n >= sizeof sa.sun_path)
		return -ENAMETOOLONG;
	if (!(s.log = calloc(LOG_SIZE, sizeof *s.log)))
		return -ENOMEM;
	s.in = -1;
	s.fan = -1;
	s.cur = 1;
	unlink(sa.sun_path); /* a stale one: the service holds its lock */
	s.lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	s.ep = epoll_create1(EPOLL_CLOEXEC);
	if (s.lfd < 0 || s.ep < 0 || bind(s.lfd, (struct sockaddr *)&sa, sizeof sa) < 0 ||
	    chmod(sa.sun_path, 0600) < 0 || listen(s.lfd, 64) < 0)
		return -errno;
	reset(&s);
	if (s.in < 0)
		return -errno;
	/* any change of our mount table forgets everything: a directory
	 * mounted over shows other inodes at its paths than the watched */
	if ((s.mi = open("/proc/self/mountinfo", O_RDONLY | O_CLOEXEC)) < 0)
		return -errno;
	{
		struct stat ns;

		s.mntns = stat("/proc/self/ns/mnt", &ns) == 0 ? (uint64_t)ns.st_ino : 0;
	}
	memset(&ev, 0, sizeof ev);
	ev.events = EPOLLPRI | EPOLLERR;
	ev.data.u32 = UINT32_MAX - 2;
	if (epoll_ctl(s.ep, EPOLL_CTL_ADD, s.mi, &ev) < 0)
		return -errno;
	mounts_read(&s);
	memset(&ev, 0, sizeof ev);
	ev.events = EPOLLIN;
	ev.data.u32 = UINT32_MAX;
	if (epoll_ctl(s.ep, EPOLL_CTL_ADD, s.lfd, &ev) < 0)
		return -errno;
	for (i = 0; i < CLIENTS_MAX; i++)
		cl[i] = -1;
	for (;;) {
		struct epoll_event evs[32];
		int k = epoll_wait(s.ep, evs, 32, -1), e;

		if (k < 0 && errno != EINTR)
			return -errno;
		for (e = 0; e < k; e++) {
			uint32_t u = evs[e].data.u32;

			if (u == UINT32_MAX - 2) {
				mounts_read(&s);
				reset(&s);
			} else if (u == UINT32_MAX - 1) {
				drain(&s); /* keep the queue short between requests */
			} else if (u == UINT32_MAX - 3) {
				cd_watchd_attrs_drain(&s);
			} else if (u == UINT32_MAX) {
				struct ucred uc;
				socklen_t ul = sizeof uc;
				int fd = accept4(s.lfd, NULL, NULL, SOCK_CLOEXEC);

				if (fd < 0)
					continue;
				for (i = 0; i < CLIENTS_MAX && cl[i] >= 0; i++)
					;
				memset(&ev, 0, sizeof ev);
				ev.events = EPOLLIN;
				ev.data.u32 = (uint32_t)i;
				if (i == CLIENTS_MAX ||
				    getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &uc, &ul) < 0 ||
				    uc.uid != geteuid() ||
				    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv) < 0 ||
				    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv) < 0 ||
				    epoll_ctl(s.ep, EPOLL_CTL_ADD, fd, &ev) < 0) {
					close(fd);
					continue;
				}
				cl[i] = fd;
			} else if (u < CLIENTS_MAX && cl[u] >= 0) {
				*active = now_s();
				if (serve_one(&s, cl[u]) < 0) {
					epoll_ctl(s.ep, EPOLL_CTL_DEL, cl[u], NULL);
					close(cl[u]);
					cl[u] = -1;
				}
			}
		}
	}
}
