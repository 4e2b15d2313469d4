/* tree-watch.c — the client side of the tree watcher (tree-watch.h):
 * the walk asks before it reads a tree, the child asks after its mounts.
 * Whatever goes wrong here only makes the caller check every directory. */
#include "tree-watch.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

int cd_watch_connect(const char *sock)
{
	struct sockaddr_un sa;
	struct timeval tv = { 2, 0 };
	struct ucred uc;
	socklen_t ul = sizeof uc;
	int fd;

	if (!sock || strlen(sock) >= sizeof sa.sun_path)
		return -1;
	memset(&sa, 0, sizeof sa);
	sa.sun_family = AF_UNIX;
	memcpy(sa.sun_path, sock, strlen(sock) + 1);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	/* the timeouts first: a full backlog would block connect() itself;
	 * our own uid's watcher only: another's could hide a change */
	if (setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv) < 0 ||
	    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv) < 0 ||
	    connect(fd, (struct sockaddr *)&sa, sizeof sa) < 0 ||
	    getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &uc, &ul) < 0 || uc.uid != geteuid()) {
		close(fd);
		return -1;
	}
	return fd;
}

static int put(int fd, const void *p, size_t n)
{
	const char *c = p;

	while (n) {
		ssize_t k = send(fd, c, n, MSG_NOSIGNAL);

		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return -1;
		c += k;
		n -= (size_t)k;
	}
	return 0;
}

static int get(int fd, void *p, size_t n)
{
	char *c = p;

	while (n) {
		ssize_t k = read(fd, c, n);

		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return -1;
		c += k;
		n -= (size_t)k;
	}
	return 0;
}

/* Sorted and distinct, as the wire promises: else not to be trusted. */
static int ids_sorted(const struct cd_watch_id *v, size_t n)
{
	size_t i;

	for (i = 1; i < n; i++) {
		if (v[i - 1].dev > v[i].dev ||
		    (v[i - 1].dev == v[i].dev && v[i - 1].ino >= v[i].ino))
			return 0;
	}
	return 1;
}

/* Our mount namespace's inode; when it cannot be read, a value no
 * watcher answers (it says 0 when it cannot read its own). */
static uint64_t own_mntns(void)
{
	struct stat st;

	return stat("/proc/self/ns/mnt", &st) == 0 ? (uint64_t)st.st_ino : UINT64_MAX;
}

/* The answer's header, checked: the ids follow. */
static int rep_get(int fd, uint64_t instance, uint64_t since, struct cd_watch_rep *rep)
{
	if (get(fd, rep, sizeof *rep) < 0 || rep->magic != CD_WATCH_MAGIC ||
	    rep->status > CD_WATCH_FULL || rep->ndirty > CD_WATCH_DIRTY_MAX ||
	    (rep->status == CD_WATCH_FULL && (rep->ndirty || rep->attrs)) || rep->attrs > 1 ||
	    !rep->instance || !rep->gen)
		return -1;
	/* a list answers the question asked: the same watcher, not older */
	if (rep->status == CD_WATCH_LIST && (rep->instance != instance || rep->gen < since))
		return -1;
	return 0;
}

int cd_watch_ask(int fd, const char *path, uint64_t dev, uint64_t ino, uint64_t instance,
                 uint64_t since, struct cd_watch_rep *rep, struct cd_watch_id **ids)
{
	struct cd_watch_req q;
	size_t pl = strlen(path);

	*ids = NULL;
	if (fd < 0 || pl > 4096)
		return -1;
	memset(&q, 0, sizeof q);
	q.magic = CD_WATCH_MAGIC;
	q.op = CD_WATCH_ASK;
	q.instance = instance;
	q.since = since;
	q.dev = dev;
	q.ino = ino;
	q.pathlen = (uint32_t)pl;
	if (put(fd, &q, sizeof q) < 0 || put(fd, path, pl) < 0 ||
	    rep_get(fd, instance, since, rep) < 0 || rep->mntns != own_mntns())
		return -1;
	if (!rep->ndirty)
		return 0;
	if (!(*ids = malloc(rep->ndirty * sizeof **ids)))
		return -1;
	if (get(fd, *ids, rep->ndirty * sizeof **ids) < 0 || !ids_sorted(*ids, rep->ndirty)) {
		free(*ids);
		*ids = NULL;
		return -1;
	}
	return 0;
}

long cd_watch_since(int fd, uint64_t instance, uint64_t since, const uint32_t *trees,
                    uint32_t ntrees, struct cd_watch_id *ids, size_t cap)
{
	struct cd_watch_req q;
	struct cd_watch_rep rep;

	if (fd < 0 || !instance || !since || !ntrees || ntrees > CD_WATCH_TREES_MAX)
		return -1;
	memset(&q, 0, sizeof q);
	q.magic = CD_WATCH_MAGIC;
	q.op = CD_WATCH_SINCE;
	q.instance = instance;
	q.since = since;
	q.ntrees = ntrees;
	if (put(fd, &q, sizeof q) < 0 || put(fd, trees, ntrees * sizeof *trees) < 0 ||
	    rep_get(fd, instance, since, &rep) < 0 || rep.status != CD_WATCH_LIST ||
	    rep.ndirty > cap || get(fd, ids, rep.ndirty * sizeof *ids) < 0 ||
	    !ids_sorted(ids, rep.ndirty))
		return -1;
	return (long)rep.ndirty;
}

union fdbuf {
	struct cmsghdr h;
	char b[CMSG_SPACE(sizeof(int))];
};

int cd_watch_send_fd(int sock, const void *p, size_t n, int pass)
{
	union fdbuf u;
	struct iovec iov = { (void *)(uintptr_t)p, n };
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1 };
	struct cmsghdr *h;

	if (pass >= 0) {
		memset(&u, 0, sizeof u);
		m.msg_control = u.b;
		m.msg_controllen = sizeof u.b;
		h = CMSG_FIRSTHDR(&m);
		h->cmsg_level = SOL_SOCKET;
		h->cmsg_type = SCM_RIGHTS;
		h->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(h), &pass, sizeof pass);
	}
	return sendmsg(sock, &m, MSG_NOSIGNAL) == (ssize_t)n ? 0 : -1;
}

ssize_t cd_watch_recv_fd(int sock, void *p, size_t n, int *got, int *bad)
{
	union fdbuf u;
	struct iovec iov = { p, n };
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1 };
	struct cmsghdr *h;
	ssize_t k;

	*got = -1;
	*bad = 0;
	memset(&u, 0, sizeof u);
	m.msg_control = u.b;
	m.msg_controllen = sizeof u.b;
	do
		k = recvmsg(sock, &m, MSG_WAITALL | MSG_CMSG_CLOEXEC);
	while (k < 0 && errno == EINTR);
	/* every descriptor that came is taken (the room for one holds two):
	 * one kept, any more closed */
	for (h = k >= 0 ? CMSG_FIRSTHDR(&m) : NULL; h; h = CMSG_NXTHDR(&m, h)) {
		size_t i, nfd;

		if (h->cmsg_level != SOL_SOCKET || h->cmsg_type != SCM_RIGHTS ||
		    h->cmsg_len < CMSG_LEN(0)) {
			*bad = 1;
			continue;
		}
		nfd = (h->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		for (i = 0; i < nfd; i++) {
			int fd;

			memcpy(&fd, CMSG_DATA(h) + i * sizeof(int), sizeof fd);
			if (*got < 0 && nfd == 1)
				*got = fd;
			else {
				close(fd);
				*bad = 1;
			}
		}
	}
	*bad |= k >= 0 && (m.msg_flags & MSG_CTRUNC);
	return k;
}

int cd_watch_cache_file(int fd, int filefd, size_t *size)
{
	const int seals = F_SEAL_WRITE | F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL;
	struct cd_watch_req q;
	struct cd_watch_rep rep;
	struct stat st;
	ssize_t k;
	int mfd, extra, sealed;

	if (fd < 0)
		return -1;
	memset(&q, 0, sizeof q);
	q.magic = CD_WATCH_MAGIC;
	q.op = CD_WATCH_FILE;
	if (cd_watch_send_fd(fd, &q, sizeof q, filefd) < 0)
		return -2;
	k = cd_watch_recv_fd(fd, &rep, sizeof rep, &mfd, &extra);
	if (k != (ssize_t)sizeof rep) {
		if (mfd >= 0)
			close(mfd);
		return -2;
	}
	/* the memfd must stay as the service checked it: sealed whole */
	if (extra || rep.magic != CD_WATCH_MAGIC || rep.status != CD_WATCH_LIST || mfd < 0 ||
	    fstat(mfd, &st) < 0 || !S_ISREG(st.st_mode) || (sealed = fcntl(mfd, F_GET_SEALS)) < 0 ||
	    (sealed & seals) != seals || st.st_size <= 0) {
		if (mfd >= 0)
			close(mfd);
		return -1;
	}
	*size = (size_t)st.st_size;
	return mfd;
}

int cd_watch_has(const struct cd_watch_id *ids, size_t n, uint64_t dev, uint64_t ino)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (ids[mid].dev == dev && ids[mid].ino == ino)
			return 1;
		if (ids[mid].dev < dev || (ids[mid].dev == dev && ids[mid].ino < ino))
			lo = mid + 1;
		else
			hi = mid;
	}
	return 0;
}
