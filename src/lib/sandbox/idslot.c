/* idslot.c — one host id per concurrent root run (see idslot.h).
 *
 * Trust boundary: runs in the supervisor with host root's privileges.  The
 * lock directory is reached one component at a time with O_NOFOLLOW, each
 * step checked on the opened descriptor (no window between check and use);
 * anything unexpected refuses the run.
 */
#include "idslot.h"

#include "util/num.h"

#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <fcntl.h>
#include <linux/limits.h>
#include <stdio.h>
#include <string.h>
#include <grp.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define IDSLOT_DEPTH_MAX 16 /* components of the lock directory's path */

static void release_keeper(struct cd_idslot *s)
{
	if (s->keeper_fd >= 0)
		close(s->keeper_fd);
	if (s->keeper > 0)
		while (waitpid(s->keeper, NULL, 0) < 0 && errno == EINTR)
			;
	s->keeper_fd = -1;
	s->keeper = 0;
}

/* May the directory just opened as `fd` lead to the locks?  Intermediate
 * ones: root's or ours, not writable by group or others unless sticky (no
 * one can then move our entry).  The last: ours, nothing for anyone else. */
static int dir_safe(int fd, const char *dir, const char *name, int last, struct cd_err *err)
{
	struct stat st;
	uid_t me = geteuid();

	if (fstat(fd, &st) < 0)
		return cd_err_sys(err, -errno, "'%s': stat '%s'", dir, name);
	if (!S_ISDIR(st.st_mode))
		return cd_err_set(err, -EPERM, "'%s': '%s' is not a directory", dir, name);
	if (last && (st.st_uid != me || (st.st_mode & 077)))
		return cd_err_set(err, -EPERM,
		                  "'%s' is unsafe for the locks of root's sandbox ids "
		                  "(owner %u, mode %04o): it must be uid %u's with no access "
		                  "for group or others",
		                  dir, (unsigned)st.st_uid, (unsigned)(st.st_mode & 07777),
		                  (unsigned)me);
	if (!last && ((st.st_uid != 0 && st.st_uid != me) ||
	              ((st.st_mode & 022) && !(st.st_mode & S_ISVTX))))
		return cd_err_set(err, -EPERM,
		                  "'%s': '%s' is unsafe on the way to the locks of root's "
		                  "sandbox ids (owner %u, mode %04o): others could replace "
		                  "what is under it",
		                  dir, name, (unsigned)st.st_uid, (unsigned)(st.st_mode & 07777));
	return 0;
}

/* One step down from `at` to `name`, made 0700 when missing. */
static int step(int at, const char *dir, const char *name, int last, struct cd_err *err)
{
	struct stat st;
	int fd, r;

	if (mkdirat(at, name, 0700) < 0 && errno != EEXIST)
		return cd_err_sys(err, -errno, "'%s': create '%s'", dir, name);
	fd = openat(at, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		r = -errno;
		if ((r == -ELOOP || r == -ENOTDIR) &&
		    fstatat(at, name, &st, AT_SYMLINK_NOFOLLOW) == 0)
			return cd_err_set(err, -EPERM, "'%s': '%s' is %s, refused", dir, name,
			                  S_ISLNK(st.st_mode) ? "a symlink" : "not a directory");
		return cd_err_sys(err, r, "'%s': open '%s'", dir, name);
	}
	if ((r = dir_safe(fd, dir, name, last, err)) < 0) {
		close(fd);
		return r;
	}
	return fd;
}

/* The lock directory, opened: see idslot.h. */
static int open_dir(const char *dir, struct cd_err *err)
{
	char name[NAME_MAX + 1];
	const char *p = dir, *end;
	int at, fd, depth = 0;
	size_t len;

	if (dir[0] != '/')
		return cd_err_set(err, -EINVAL, "'%s': the lock directory must be absolute", dir);
	at = open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (at < 0)
		return cd_err_sys(err, -errno, "open '/'");
	for (;;) {
		while (*p == '/')
			p++;
		if (!*p)
			break;
		end = strchrnul(p, '/');
		len = (size_t)(end - p);
		if (len > NAME_MAX || ++depth > IDSLOT_DEPTH_MAX || (len == 1 && p[0] == '.') ||
		    (len == 2 && p[0] == '.' && p[1] == '.')) {
			close(at);
			return cd_err_set(err, -EINVAL, "'%s': not a plain path", dir);
		}
		memcpy(name, p, len);
		name[len] = '\0';
		p = end;
		while (*p == '/')
			p++;
		fd = step(at, dir, name, *p == '\0', err);
		close(at);
		if (fd < 0)
			return fd;
		at = fd;
	}
	if (depth == 0) {
		close(at);
		return cd_err_set(err, -EINVAL, "'%s': the lock directory cannot be '/'", dir);
	}
	return at;
}

/* Try slot `uid`: 1 with *ret_fd locked, 0 when another run holds it. */
static int try_lock(int dirfd, const char *dir, uid_t uid, int *ret_fd, struct cd_err *err)
{
	char name[16];
	struct stat st;
	int fd, n = snprintf(name, sizeof name, "%u", (unsigned)uid);

	if (n < 0 || (size_t)n >= sizeof name)
		return cd_err_set(err, -EINVAL, "format the lock name of id %u", (unsigned)uid);
	fd = openat(dirfd, name,
	            O_RDONLY | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC, 0600);
	if (fd < 0 && (errno == ELOOP || errno == EISDIR))
		return cd_err_set(err, -EPERM, "'%s': the lock '%s' is %s, refused", dir, name,
		                  errno == ELOOP ? "a symlink" : "a directory");
	if (fd < 0)
		return cd_err_sys(err, -errno, "'%s': open the lock '%s'", dir, name);
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_uid != geteuid()) {
		close(fd);
		return cd_err_set(err, -EPERM,
		                  "'%s': the lock '%s' is not a regular file of uid %u", dir, name,
		                  (unsigned)geteuid());
	}
	while (flock(fd, LOCK_EX | LOCK_NB) < 0) {
		int e = errno;

		if (e == EINTR)
			continue;
		close(fd);
		if (e == EWOULDBLOCK)
			return 0;
		return cd_err_sys(err, -e, "'%s': lock '%s'", dir, name);
	}
	*ret_fd = fd;
	return 1;
}

/* The keeper (idslot.h), in the child: become uid/gid, fork once under
 * RLIMIT_NPROC `limit`, tell the parent ('k' alone, 'b' busy, 'e' failed), then
 * wait for EOF on fd 0. */
static void keeper_main(pid_t parent, uid_t uid, gid_t gid, rlim_t limit)
{
	struct rlimit rl = { limit, limit };
	char c = 'e';
	pid_t probe;

	if (close_range(2, ~0U, 0) < 0 || prctl(PR_SET_KEEPCAPS, 0) < 0 || setgroups(0, NULL) < 0 ||
	    setresgid(gid, gid, gid) < 0 || setrlimit(RLIMIT_NPROC, &rl) < 0 ||
	    setresuid(uid, uid, uid) < 0)
		_exit(1);
	/* after the id change: a credential change clears the signal */
	if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid() != parent)
		_exit(1);
	/* vfork: the kernel counts it against RLIMIT_NPROC as it would a
	 * fork, without copying cordon's page tables into a process that only
	 * exits (this VM makes every copied page and its later write fault
	 * cost tens of microseconds) */
	probe = vfork();
	if (probe == 0)
		_exit(0);
	if (probe > 0 && waitpid(probe, NULL, 0) == probe)
		c = 'k';
	else if (probe < 0 && errno == EAGAIN)
		c = 'b';
	if (write(1, &c, 1) != 1)
		_exit(1);
	close(1);
	while (read(0, &c, 1) < 0 && errno == EINTR)
		;
	_exit(0);
}

#define ZOMBIES_MAX 64

/* Has this /proc/PID/status text a Uid line with `uid` in any of its
 * fields (real, effective, saved, filesystem)? */
static int status_has_uid(const char *text, uid_t uid)
{
	const char *f = strstr(text, "\nUid:");
	char *end;
	int i;

	if (!f)
		return 0;
	f += 5;
	for (i = 0; i < 4; i++) {
		unsigned long u = strtoul(f, &end, 10);

		if (end == f)
			break;
		if (u == uid)
			return 1;
		f = end;
	}
	return 0;
}

/* How many threads this /proc/PID/status text says the process has (1
 * when the line is missing). */
static long status_threads(const char *text)
{
	const char *f = strstr(text, "\nThreads:");

	return f ? strtol(f + 9, NULL, 10) : 1;
}

/* Reads /proc/`pid`/`sub`status into buf (NUL-terminated): its length,
 * or -1. */
static ssize_t read_status(const char *pid, const char *sub, char *buf, size_t size)
{
	char p[96];
	ssize_t len;
	int fd;

	if (snprintf(p, sizeof p, "/proc/%s/%sstatus", pid, sub) >= (int)sizeof p ||
	    (fd = open(p, O_RDONLY | O_CLOEXEC)) < 0)
		return -1;
	len = read(fd, buf, size - 1);
	close(fd);
	if (len <= 0)
		return -1;
	buf[len] = '\0';
	return len;
}

/* Is process `pid` in a user namespace other than ours?  Only there can a
 * task of the id hide from the keeper's count (see uid_procs); an error
 * reading it says yes, which costs a look at its threads. */
static int foreign_userns(const char *pid)
{
	static struct stat own;
	static int have;
	char p[64];
	struct stat st;

	if (!have && stat("/proc/self/ns/user", &own) == 0)
		have = 1;
	if (!have || snprintf(p, sizeof p, "/proc/%s/ns/user", pid) >= (int)sizeof p ||
	    stat(p, &st) < 0)
		return 1;
	return st.st_ino != own.st_ino || st.st_dev != own.st_dev;
}

/* Has a thread of process `pid` other than its leader `uid` among its
 * ids, alive?  Credentials are per thread: one that changed its own with
 * a raw setresuid (no C library broadcast) is not seen in the leader's
 * status. */
static int thread_has_uid(const char *pid, uid_t uid)
{
	char dir[64], sub[96], text[4096];
	struct dirent *e;
	DIR *d;
	int found = 0;

	if (snprintf(dir, sizeof dir, "/proc/%s/task", pid) >= (int)sizeof dir ||
	    !(d = opendir(dir)))
		return 0;
	while (!found && (e = readdir(d))) {
		if (e->d_name[0] < '1' || e->d_name[0] > '9' || strcmp(e->d_name, pid) == 0 ||
		    snprintf(sub, sizeof sub, "task/%s/", e->d_name) >= (int)sizeof sub ||
		    read_status(pid, sub, text, sizeof text) < 0)
			continue;
		found = status_has_uid(text, uid) && !strstr(text, "\nState:\tZ");
	}
	closedir(d);
	return found;
}

/* The processes of `uid` this pid namespace shows, but `except` (our
 * keeper): the zombies (a killed run's keeper and sandbox init, which a
 * pid 1 that does not reap keeps for ever) with their pids in v, sorted
 * by /proc's order, and in *live how many others.  The keeper's count
 * (RLIMIT_NPROC) misses a process of the id in a user namespace another
 * user owns (the kernel charges that namespace's owner), and /proc shows
 * every process of the pid namespaces below ours, under our own view of
 * its ids.  A process with more than one thread in another user
 * namespace has each thread's ids read too (in ours, the keeper's count
 * sees every task of the id), and a zombie leader whose threads live
 * counts as live.  The number of zombies, or -1. */
static int uid_procs(uid_t uid, pid_t except, pid_t *v, int *live)
{
	char text[4096];
	struct dirent *e;
	DIR *d = opendir("/proc");
	int n = 0;

	*live = 0;
	if (!d)
		return -1;
	while ((e = readdir(d))) {
		int mine, zombie, threads;

		if (e->d_name[0] < '1' || e->d_name[0] > '9' ||
		    strtol(e->d_name, NULL, 10) == except ||
		    read_status(e->d_name, "", text, sizeof text) < 0)
			continue;
		mine = status_has_uid(text, uid);
		zombie = strstr(text, "\nState:\tZ") != NULL;
		threads = status_threads(text) > 1;
		if (threads && ((mine && zombie) ||
		                (foreign_userns(e->d_name) && thread_has_uid(e->d_name, uid)))) {
			++*live;
			continue;
		}
		if (!mine)
			continue;
		if (!zombie) {
			++*live;
			continue;
		}
		if (n == ZOMBIES_MAX) {
			n = -1;
			break;
		}
		v[n++] = (pid_t)strtol(e->d_name, NULL, 10);
	}
	closedir(d);
	return n;
}

/* Start one keeper of `uid` allowing `others` other processes of it,
 * without waiting for its answer: 0 with the keeper in *s and its answer
 * pending on s->keeper_rep (keeper_answer reads it), or -errno. */
static int keeper_start(struct cd_idslot *s, uid_t uid, gid_t gid, int others, struct cd_err *err)
{
	int ctl[2], rep[2], r;
	pid_t parent = getpid(), pid;

	if (pipe2(ctl, O_CLOEXEC) < 0)
		return cd_err_sys(err, -errno, "pipe for the keeper of id %u", (unsigned)uid);
	if (pipe2(rep, O_CLOEXEC) < 0) {
		r = -errno;
		close(ctl[0]);
		close(ctl[1]);
		return cd_err_sys(err, r, "pipe for the keeper of id %u", (unsigned)uid);
	}
	pid = fork();
	if (pid == 0) {
		if (dup2(ctl[0], 0) < 0 || dup2(rep[1], 1) < 0)
			_exit(1);
		keeper_main(parent, uid, gid, (rlim_t)others + 2);
	}
	r = pid < 0 ? -errno : 0;
	close(ctl[0]);
	close(rep[1]);
	if (pid < 0) {
		close(ctl[1]);
		close(rep[0]);
		return cd_err_sys(err, r,
		                  "cannot check that host id %u is used nowhere else (its keeper "
		                  "failed); refused",
		                  (unsigned)uid);
	}
	s->keeper = pid;
	s->keeper_fd = ctl[1];
	s->keeper_rep = rep[0];
	return 0;
}

/* The started keeper's answer: 1 with the keeper kept in *s, 0 when more
 * processes of `uid` exist (the keeper ended), or -errno. */
static int keeper_answer(struct cd_idslot *s, uid_t uid, struct cd_err *err)
{
	char c = 'e';

	while (read(s->keeper_rep, &c, 1) < 0 && errno == EINTR)
		;
	close(s->keeper_rep);
	s->keeper_rep = -1;
	if (c == 'k')
		return 1;
	release_keeper(s);
	if (c == 'b')
		return 0;
	return cd_err_sys(err, -ECHILD,
	                  "cannot check that host id %u is used nowhere else (its keeper "
	                  "failed); refused",
	                  (unsigned)uid);
}

/* One keeper, waited for: keeper_answer's values. */
static int keeper(struct cd_idslot *s, uid_t uid, gid_t gid, int others, struct cd_err *err)
{
	int r = keeper_start(s, uid, gid, others, err);

	return r < 0 ? r : keeper_answer(s, uid, err);
}

/* Is `uid` used by no live process of the user namespace (idslot.h)?  1
 * with the keeper in *s, 0 when busy.  `first` is the answer of a keeper
 * allowing no other process (1, 0 or -errno).  Zombies this pid
 * namespace shows are allowed for (a killed run's, our /run's lock being
 * free): counted before the check, and still the same zombies after it,
 * so that none was reaped while the kernel counted (a live process
 * elsewhere would then have taken its place in the count).  With the
 * keeper up, /proc must show no live process of the id either
 * (uid_procs): one that comes after sees the keeper. */
static int keep_rest(struct cd_idslot *s, int first, uid_t uid, gid_t gid, struct cd_err *err)
{
	pid_t z1[ZOMBIES_MAX], z2[ZOMBIES_MAX];
	int r = first, n1, n2, i, j, live;

	if (r < 0)
		return r;
	if (r > 0) {
		if (uid_procs(uid, s->keeper, z1, &live) >= 0 && live == 0)
			return 1;
		release_keeper(s);
		return 0;
	}
	if ((n1 = uid_procs(uid, 0, z1, &live)) <= 0)
		return 0;
	if ((r = keeper(s, uid, gid, n1, err)) <= 0)
		return r;
	n2 = uid_procs(uid, s->keeper, z2, &live);
	for (i = 0; n2 >= 0 && live == 0 && i < n1; i++) {
		for (j = 0; j < n2 && z2[j] != z1[i]; j++)
			;
		if (j == n2)
			break;
	}
	if (n2 >= 0 && live == 0 && i == n1)
		return 1;
	release_keeper(s);
	return 0;
}

/* cd_idslot_take; with `async` (root only) the first keeper's answer is
 * left pending for cd_idslot_confirm. */
static int take(const char *dir, const struct cd_idmap_range *range, uint32_t first, uint32_t count,
                struct cd_idslot *ret, int async, struct cd_err *err)
{
	uint32_t i;
	int dirfd, fd = -1, r = 0;

	if (count == 0 && first < range->count)
		count = range->count - first;
	if (first >= range->count || count == 0 || count > range->count - first)
		return cd_err_set(err, -EINVAL,
		                  "the slot window %u:%u is outside the %u ids root's "
		                  "sandboxes use",
		                  (unsigned)first, (unsigned)count, (unsigned)range->count);
	if ((dirfd = open_dir(dir, err)) < 0)
		return dirfd;
	ret->keeper = 0;
	ret->keeper_fd = -1;
	ret->keeper_rep = -1;
	for (i = first; i - first < count; i++) {
		uid_t uid = (uid_t)(range->uid + i);
		gid_t gid = (gid_t)(range->gid + i);

		r = try_lock(dirfd, dir, uid, &fd, err);
		/* root: also unused beyond this /run (idslot.h) */
		if (r > 0 && geteuid() == 0 && async) {
			int k = keeper_start(ret, uid, gid, 0, err);

			r = k < 0 ? k : 1;
		} else if (r > 0 && geteuid() == 0) {
			r = keep_rest(ret, keeper(ret, uid, gid, 0, err), uid, gid, err);
		}
		if (r <= 0 && fd >= 0) {
			close(fd);
			fd = -1;
		}
		if (r != 0)
			break;
	}
	close(dirfd);
	if (r < 0)
		return r;
	if (r == 0)
		return cd_err_set(err, -EBUSY,
		                  "every host id for root's sandboxes is in use (%u concurrent "
		                  "root runs, uids %u-%u, locks in '%s'); wait for one to end",
		                  (unsigned)count, (unsigned)(range->uid + first),
		                  (unsigned)(range->uid + first + count - 1), dir);
	ret->fd = fd;
	ret->index = i;
	ret->uid = (uid_t)(range->uid + i);
	ret->gid = (gid_t)(range->gid + i);
	return 0;
}

int cd_idslot_take(const char *dir, const struct cd_idmap_range *range, uint32_t first,
                   uint32_t count, struct cd_idslot *ret, struct cd_err *err)
{
	return take(dir, range, first, count, ret, 0, err);
}

int cd_idslot_take_async(const char *dir, const struct cd_idmap_range *range, uint32_t first,
                         uint32_t count, struct cd_idslot *ret, struct cd_err *err)
{
	return take(dir, range, first, count, ret, 1, err);
}

int cd_idslot_confirm(const char *dir, const struct cd_idmap_range *range, uint32_t first,
                      uint32_t count, struct cd_idslot *s, struct cd_err *err)
{
	int r;

	if (s->fd < 0)
		return cd_err_set(err, -EINVAL, "no host id slot was taken");
	if (s->keeper_rep < 0)
		return 0;
	r = keep_rest(s, keeper_answer(s, s->uid, err), s->uid, s->gid, err);
	if (r > 0)
		return 0;
	/* Busy beyond this /run, or the check failed: this slot is not ours. */
	close(s->fd);
	s->fd = -1;
	if (r < 0)
		return r;
	if ((r = take(dir, range, first, count, s, 0, err)) < 0)
		return r;
	return 1;
}

void cd_idslot_end_keeper(struct cd_idslot *s)
{
	if (s->fd >= 0 && s->keeper_rep < 0 && s->keeper_fd >= 0) {
		close(s->keeper_fd);
		s->keeper_fd = -1;
	}
}

void cd_idslot_release(struct cd_idslot *s)
{
	if (s->fd < 0)
		return;
	if (s->keeper_rep >= 0) {
		close(s->keeper_rep);
		s->keeper_rep = -1;
	}
	release_keeper(s);
	close(s->fd);
	s->fd = -1;
}

int cd_idslot_parse_window(const char *s, uint32_t *ret_first, uint32_t *ret_count)
{
	const char *colon = strchr(s, ':');
	uint64_t first = 0, count;

	if (colon && cd_parse_u64(s, (size_t)(colon - s), UINT32_MAX, &first) < 0)
		return -EINVAL;
	if (colon)
		s = colon + 1;
	if (cd_parse_u64(s, strlen(s), UINT32_MAX, &count) < 0 || count == 0)
		return -EINVAL;
	*ret_first = (uint32_t)first;
	*ret_count = (uint32_t)count;
	return 0;
}
