/* test-scan-cache.c — the walk's per-directory cache (tree-cache.c) must
 * never change what the walk finds: on a tree holding every kind of entry
 * the walk acts on (sockets, credentials by name, by content and through
 * a symlink, .ssh, a nested repository, plain files), the plan built
 * without the cache, with it cold (written) and with it warm (replayed)
 * must be the same, mount for mount and stamp for stamp; after changes
 * between plans (a credential renamed in, a .json and a .pem rewritten in
 * place, a socket bound, a directory removed) the same again; and a cache
 * file edited, cut short or replaced by garbage gives the same plan as no
 * cache; one whose structure was changed and its checksum made again
 * (a unit's subtree cut short or renamed, its index out of order ...)
 * is ignored whole and written anew; the service's checked copy of a file
 * (tree-cache-held.c) is the file, sealed, and a forged version is not
 * held; with the watcher vouching, subtrees are stamped as runs of the
 * file's records, which made whole are the uncached stamps.  Run as root, so the default profile (a read-only tree) is what
 * is cached here; 9054 runs the writable case as nobody. */
#include "../tap.h"

#include "sandbox/plan.h"
#include "sandbox/tree-cache-int.h"
#include "sandbox/tree-watchd-int.h"

#include <dirent.h>
#include <ftw.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static char base[64], tree[128], cache[128];
static const char *g_watch_sock; /* the plans ask this watcher, when set */

static void put(const char *rel, const char *text)
{
	char p[512];
	FILE *f;

	snprintf(p, sizeof p, "%s/%.300s", tree, rel);
	if ((f = fopen(p, "w"))) {
		fputs(text, f);
		fclose(f);
	}
}

static void dir(const char *rel)
{
	char p[512];

	snprintf(p, sizeof p, "%s/%.300s", tree, rel);
	mkdir(p, 0755);
}

static void sock(const char *rel)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_STREAM, 0);

	snprintf(a.sun_path, sizeof a.sun_path, "%.40s/%.60s", tree, rel);
	if (fd >= 0) {
		bind(fd, (struct sockaddr *)&a, sizeof a);
		close(fd);
	}
}

static struct cd_plan *plan(int cached)
{
	char *argv[] = { "true", NULL };
	struct cd_plan_opts o;
	struct cd_plan *p = NULL;
	struct cd_err err = { 0, "" };

	memset(&o, 0, sizeof o);
	o.argv = argv;
	o.host_cwd = tree;
	o.host_uid = getuid();
	o.host_gid = getgid();
	o.allow_degraded = 1;
	o.scan_cache = cached ? cache : NULL;
	o.watch_sock = g_watch_sock;
	if (cd_plan_build(&o, &p, &err) < 0)
		diag("plan: %s", err.msg);
	return p;
}

/* The same mounts (by describe) and the same stamps? */
static int same(struct cd_plan *a, struct cd_plan *b)
{
	char *x = a ? cd_plan_describe(a) : NULL, *y = b ? cd_plan_describe(b) : NULL;
	int r = x && y && !strcmp(x, y) && a->ndirs == b->ndirs;
	size_t i;

	for (i = 0; r && i < a->ndirs; i++) {
		r = !strcmp(a->dirs[i].rel, b->dirs[i].rel) && a->dirs[i].dev == b->dirs[i].dev &&
		    a->dirs[i].ino == b->dirs[i].ino &&
		    a->dirs[i].ctime_ns == b->dirs[i].ctime_ns &&
		    a->dirs[i].gitdir == b->dirs[i].gitdir;
		if (!r)
			diag("stamp %zu: %s vs %s", i, a->dirs[i].rel, b->dirs[i].rel);
	}
	if (x && y && strcmp(x, y))
		diag("plans differ:\n%s\n---\n%s", x, y);
	free(x);
	free(y);
	return r;
}

static int covers(struct cd_plan *p, const char *rel)
{
	char want[512];
	size_t i;

	snprintf(want, sizeof want, "%s/%s", tree, rel);
	for (i = 0; p && i < p->nmounts; i++) {
		if (p->mounts[i].kind == CD_MNT_MASK && !strcmp(p->mounts[i].dest, want))
			return 1;
	}
	return 0;
}

/* The one cache file, or "" */
static void cache_file(char *out, size_t cap)
{
	struct dirent *e;
	DIR *d = opendir(cache);

	out[0] = '\0';
	while (d && (e = readdir(d))) {
		if (!strncmp(e->d_name, "t-", 2))
			snprintf(out, cap, "%s/%s", cache, e->d_name);
	}
	if (d)
		closedir(d);
}

static void nap(void)
{
	struct timespec ts = { 1, 300000000 }; /* past the 1 s guard */

	nanosleep(&ts, NULL);
}

static void make_tree(void)
{
	char p[512];
	int i;

	for (i = 0; i < 10; i++) {
		snprintf(p, sizeof p, "d%d", i);
		dir(p);
		snprintf(p, sizeof p, "d%d/sub", i);
		dir(p);
		snprintf(p, sizeof p, "d%d/sub/f.txt", i);
		put(p, "x\n");
	}
	sock("d1/agent.sock");
	put(".netrc", "machine x password y\n");
	put("d2/.env", "KEY=1\n");
	put("d3/key.json", "{\"type\": \"service_account\", \"private_key\": \"k\"}\n");
	put("d3/other.json", "{}\n");
	put("d4/id.pem", "-----BEGIN PRIVATE KEY-----\nx\n-----END PRIVATE KEY-----\n");
	put("d4/cert.pem", "-----BEGIN CERTIFICATE-----\nx\n-----END CERTIFICATE-----\n");
	dir("d5/.git");
	dir("d5/.git/objects");
	put("d5/.git/HEAD", "ref: refs/heads/main\n");
	put("d5/.git/config", "[core]\n");
	put("d7/token", "secret\n");
	snprintf(p, sizeof p, "%s/d6/.netrc", tree);
	if (symlink("../d7/token", p) < 0)
		diag("symlink: %s", strerror(errno));
	dir("d8/.ssh");
	put("d8/.ssh/id_work", "key\n");
	put("d8/.ssh/known_hosts", "h\n");
}

static void test_same(void)
{
	struct cd_plan *a, *b, *c;
	char f[512];
	struct stat st;

	a = plan(0);
	b = plan(1);
	cache_file(f, sizeof f);
	ok(f[0] && stat(f, &st) == 0 && (st.st_mode & 0777) == 0600 && st.st_uid == geteuid(),
	   "a cold walk writes the tree's cache file, 0600, the caller's");
	c = plan(1);
	ok(a && covers(a, "d1/agent.sock") && covers(a, ".netrc") && covers(a, "d3/key.json") &&
	           covers(a, "d4/id.pem") && covers(a, "d7/token") &&
	           covers(a, "d8/.ssh/id_work") && !covers(a, "d3/other.json") &&
	           !covers(a, "d4/cert.pem"),
	   "control: the walk without the cache covers the socket and each credential, not the "
	   "others");
	ok(same(a, b), "the cold walk's plan is the uncached one's");
	ok(same(a, c), "the warm walk's plan (replayed) is the uncached one's");
	cd_plan_free(a);
	cd_plan_free(b);
	cd_plan_free(c);
}

static void test_changes(void)
{
	struct cd_plan *a, *b;
	char from[512], to[512];

	/* right after the last walk, so within its second */
	put("d0/token", "KEY=2\n");
	snprintf(from, sizeof from, "%s/d0/token", tree);
	snprintf(to, sizeof to, "%s/d9/sub/.env", tree);
	rename(from, to);
	put("d3/other.json", "{\"type\": \"authorized_user\", \"refresh_token\": \"r\"}\n");
	put("d4/cert.pem", "-----BEGIN PRIVATE KEY-----\ny\n-----END PRIVATE KEY-----\n");
	sock("d2/sub/late.sock");
	snprintf(from, sizeof from, "%s/d6/sub/f.txt", tree);
	unlink(from);
	snprintf(from, sizeof from, "%s/d6/sub", tree);
	rmdir(from);
	a = plan(0);
	b = plan(1);
	ok(a && covers(a, "d9/sub/.env") && covers(a, "d3/other.json") &&
	           covers(a, "d4/cert.pem") && covers(a, "d2/sub/late.sock"),
	   "control: the uncached walk finds each change");
	ok(same(a, b), "after a rename in, rewrites in place, a socket, a removal: the cached plan "
	               "is the uncached one's");
	cd_plan_free(b);
	nap();
	b = plan(1); /* records the changed directories */
	cd_plan_free(b);
	b = plan(1);
	ok(same(a, b), "... and again once the changes are recorded");
	cd_plan_free(a);
	cd_plan_free(b);
}

static void tamper(const char *f, int how)
{
	struct stat st;
	unsigned char *v;
	int fd = open(f, O_RDWR);
	ssize_t n;

	if (fd < 0 || fstat(fd, &st) < 0 || !(v = malloc((size_t)st.st_size))) {
		diag("tamper: %s", strerror(errno));
		return;
	}
	n = read(fd, v, (size_t)st.st_size);
	if (how == 0 && n > 100)
		v[n - 60] ^= 0x01; /* one bit of the last record */
	if (how == 2 && n > 100)
		memset(v + 48, 0xff, (size_t)n - 48); /* the header kept, garbage after */
	if (lseek(fd, 0, SEEK_SET) == 0 && ftruncate(fd, how == 1 ? n / 2 : 0) == 0 &&
	    write(fd, v, how == 1 ? (size_t)n / 2 : (size_t)n) < 0)
		diag("tamper: %s", strerror(errno));
	free(v);
	close(fd);
}

static void test_tampered(void)
{
	static const char *const what[] = { "a bit flipped", "cut in half",
		                            "garbage after the header" };
	struct cd_plan *a = plan(0), *b;
	char f[512];
	int how;

	for (how = 0; how < 3; how++) {
		b = plan(1); /* rewritten whole if it was ignored */
		cd_plan_free(b);
		cache_file(f, sizeof f);
		tamper(f, how);
		b = plan(1);
		ok(same(a, b), "a cache file %s gives the uncached plan", what[how]);
		cd_plan_free(b);
	}
	cd_plan_free(a);
}

/* The cache file's bytes, or NULL. */
static unsigned char *slurp(const char *f, size_t *len)
{
	struct stat st;
	unsigned char *v;
	int fd = open(f, O_RDONLY);

	if (fd < 0 || fstat(fd, &st) < 0 || !(v = malloc((size_t)st.st_size + 1))) {
		if (fd >= 0)
			close(fd);
		return NULL;
	}
	*len = (size_t)read(fd, v, (size_t)st.st_size);
	close(fd);
	return v;
}

static uint32_t get32(const unsigned char *p)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return v;
}

static void put32(unsigned char *p, uint32_t v)
{
	memcpy(p, &v, 4);
}

/* Record k of the file v (its offset), or 0 when there is none. */
static size_t rec_at(const unsigned char *v, size_t len, uint32_t k)
{
	size_t at = (56 + get32(v + 20) + 7) & ~(size_t)7;

	while (k-- > 0 && at + REC_HDR <= len)
		at += (REC_HDR + get32(v + at + 32) + get32(v + at + 36) + 7) & ~(size_t)7;
	return at + REC_HDR <= len ? at : 0;
}

/* The record whose path is rel: its number, or -1. */
static long rec_named(const unsigned char *v, size_t len, const char *rel)
{
	uint32_t k, n = get32(v + 16);

	for (k = 0; k < n; k++) {
		size_t at = rec_at(v, len, k);

		if (at && get32(v + at + 32) == strlen(rel) &&
		    !memcmp(v + at + REC_HDR, rel, strlen(rel)))
			return k;
	}
	return -1;
}

/* One change to a file that still parses as bytes, its checksum made
 * again: what only the structure checks can catch.  0 when the file
 * lacks what the change needs. */
static int forge(unsigned char *v, size_t len, int how)
{
	uint32_t n = get32(v + 16);
	size_t body = (56 + get32(v + 20) + 7) & ~(size_t)7, at;
	long k;
	uint64_t sum;

	switch (how) {
	case 0: /* nothing: the control */
		break;
	case 1: /* a unit's subtree one record short */
		if ((k = rec_named(v, len, "d0")) < 0 || !(at = rec_at(v, len, (uint32_t)k)) ||
		    !(get32(v + at + 44) & REC_UNIT) || get32(v + at + 40) < 2)
			return 0;
		put32(v + at + 40, get32(v + at + 40) - 1);
		break;
	case 2: /* a unit's subdirectory under another name than its item's */
		if ((k = rec_named(v, len, "d0/sub")) < 0 || !(at = rec_at(v, len, (uint32_t)k)))
			return 0;
		v[at + REC_HDR + 5] = 'x';
		break;
	case 3: /* a unit claimed where an item is a directory visited by name (.git) */
		if ((k = rec_named(v, len, "d5")) < 0 || !(at = rec_at(v, len, (uint32_t)k)) ||
		    (get32(v + at + 44) & REC_UNIT))
			return 0;
		put32(v + at + 44, REC_UNIT);
		break;
	case 4: /* the index out of order */
		if (n < 2)
			return 0;
		at = len - (size_t)n * 4;
		sum = get32(v + at);
		put32(v + at, get32(v + at + 4));
		put32(v + at + 4, (uint32_t)sum);
		break;
	case 5: /* the index naming a record past the last */
		put32(v + len - 4, n);
		break;
	case 7: /* a unit's item renamed: its subdirectory's record named by none */
		if ((k = rec_named(v, len, "d0")) < 0 || !(at = rec_at(v, len, (uint32_t)k)) ||
		    get32(v + at + 28) != 1 || get32(v + at + 36) != 6 ||
		    memcmp(v + at + REC_HDR + 2 + 2, "sub", 4))
			return 0;
		v[at + REC_HDR + 2 + 2 + 2] = 'x';
		break;
	case 6: /* an empty subtree */
		if (!(at = rec_at(v, len, 0)))
			return 0;
		put32(v + at + 40, 0);
		break;
	}
	sum = cd_cache_hash(v + body, len - body);
	memcpy(v + 32, &sum, 8);
	return 1;
}

static void test_forged(void)
{
	static const char *const what[] = {
		"re-checksummed, unchanged (control)",
		"a unit's subtree one record short",
		"a unit's subdirectory renamed",
		"a unit claimed over a .git directory",
		"its index out of order",
		"its index past the last record",
		"an empty subtree",
		"a unit's item renamed",
	};
	struct cd_plan *a = plan(0), *b;
	unsigned char *v, *after;
	size_t len, alen;
	char f[512];
	int how, fd;

	for (how = 0; how < (int)(sizeof what / sizeof *what); how++) {
		nap(); /* every directory old enough to be recorded */
		b = plan(1);
		cd_plan_free(b);
		cache_file(f, sizeof f);
		if (!(v = slurp(f, &len)) || !forge(v, len, how)) {
			ok(0, "forge: the cache file has what '%s' changes", what[how]);
			free(v);
			continue;
		}
		if ((fd = open(f, O_WRONLY | O_TRUNC)) < 0 || write(fd, v, len) != (ssize_t)len)
			diag("forge: %s", strerror(errno));
		if (fd >= 0)
			close(fd);
		b = plan(1);
		after = slurp(f, &alen);
		if (how == 0)
			ok(same(a, b) && after && alen == len && !memcmp(after, v, len),
			   "a cache file %s is used as it is (not written again)", what[how]);
		else
			ok(same(a, b) && after && (alen != len || memcmp(after, v, len)),
			   "a cache file with %s (checksum made again) is ignored whole: the "
			   "uncached plan, the file written anew",
			   what[how]);
		cd_plan_free(b);
		free(after);
		free(v);
	}
	cd_plan_free(a);
}

/* A service that answers FILE with the memfd given (fd < 0: none; with
 * g_two, that descriptor twice in one message). */
static int g_two;

static int fake_service(int sv, int mfd)
{
	union {
		struct cmsghdr h;
		char b[CMSG_SPACE(sizeof(int))];
	} u;
	struct cd_watch_req q;
	struct cd_watch_rep rep = { .magic = CD_WATCH_MAGIC, .status = CD_WATCH_LIST };
	struct iovec iov = { &q, sizeof q };
	struct msghdr m = {
		.msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.b, .msg_controllen = sizeof u.b
	};
	struct cmsghdr *h;

	if (recvmsg(sv, &m, MSG_WAITALL) != (ssize_t)sizeof q)
		return -1;
	iov.iov_base = &rep;
	iov.iov_len = sizeof rep;
	memset(&u, 0, sizeof u);
	m.msg_controllen = mfd >= 0 ? sizeof u.b : 0;
	m.msg_control = mfd >= 0 ? u.b : NULL;
	if (mfd >= 0) {
		h = CMSG_FIRSTHDR(&m);
		h->cmsg_level = SOL_SOCKET;
		h->cmsg_type = SCM_RIGHTS;
		h->cmsg_len = CMSG_LEN(sizeof(int) * (g_two ? 2 : 1));
		memcpy(CMSG_DATA(h), &mfd, sizeof mfd);
		if (g_two)
			memcpy(CMSG_DATA(h) + sizeof mfd, &mfd, sizeof mfd);
	}
	return sendmsg(sv, &m, 0) == (ssize_t)sizeof rep ? 0 : -1;
}

/* How many descriptors process pid has open. */
static long count_fds(pid_t pid)
{
	char p[64];
	struct dirent *e;
	DIR *d;
	long n = 0;

	snprintf(p, sizeof p, "/proc/%d/fd", (int)pid);
	if (!(d = opendir(p)))
		return -1;
	while ((e = readdir(d)))
		n += e->d_name[0] != '.';
	closedir(d);
	return n - 1; /* the directory's own */
}

/* Requests that each carry two descriptors to the watcher at sock: 0
 * when each was sent. */
static int send_two(const char *sock, int times)
{
	union {
		struct cmsghdr h;
		char b[CMSG_SPACE(2 * sizeof(int))];
	} u;
	struct cd_watch_req q = { .magic = CD_WATCH_MAGIC, .op = CD_WATCH_FILE };
	struct iovec iov = { &q, sizeof q };
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1 };
	int i, fds[2], r = 0;

	for (i = 0; i < times && r == 0; i++) {
		int c = cd_watch_connect(sock);
		struct cmsghdr *h;
		char b;

		fds[0] = open("/dev/null", O_RDONLY);
		fds[1] = open("/dev/null", O_RDONLY);
		memset(&u, 0, sizeof u);
		m.msg_control = u.b;
		m.msg_controllen = sizeof u.b;
		h = CMSG_FIRSTHDR(&m);
		h->cmsg_level = SOL_SOCKET;
		h->cmsg_type = SCM_RIGHTS;
		h->cmsg_len = CMSG_LEN(sizeof fds);
		memcpy(CMSG_DATA(h), fds, sizeof fds);
		if (c < 0 || sendmsg(c, &m, 0) != (ssize_t)sizeof q)
			r = -1;
		else if (read(c, &b, 1) > 0)
			r = -1; /* answered: it should have dropped us */
		close(fds[0]);
		close(fds[1]);
		if (c >= 0)
			close(c);
	}
	return r;
}

/* What a run gets from a fake service handing out mfd. */
static int from_service(int mfd, size_t *size)
{
	int sv[2], r, file = open("/dev/null", O_RDONLY);

	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) < 0)
		return -1;
	/* the request fits the socket's buffer: answered after it is sent */
	if (fork() == 0)
		_exit(fake_service(sv[1], mfd) < 0);
	close(sv[1]);
	r = cd_watch_cache_file(sv[0], file, size);
	close(sv[0]);
	close(file);
	while (wait(NULL) > 0)
		;
	return r;
}

/* The service's checked copies (tree-cache-held.c): a file is checked
 * once per version, its copy sealed and laid out as the run reads it;
 * a new version is checked again (a forged one refused); a run takes
 * only a sealed copy, and only one that lays out as a copy. */
static void test_held(void)
{
	const int seals = F_SEAL_WRITE | F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL;
	struct cd_plan *b;
	unsigned char *v, *m;
	uint32_t *at, nrec = 0;
	size_t len, size = 0, flen = 0, at_off = 0;
	struct stat s1, s2;
	long n;
	char f[512];
	int fd, h1, h2, h3, bad;

	nap();
	b = plan(1);
	cd_plan_free(b);
	cache_file(f, sizeof f);
	v = slurp(f, &len);
	at = malloc((len / 52 + 1) * sizeof *at);
	fd = open(f, O_RDONLY);
	h1 = cd_cache_held_fd(fd);
	ok(h1 >= 0 && (fcntl(h1, F_GET_SEALS) & seals) == seals,
	   "held: a checked file's copy is a sealed memfd");
	m = MAP_FAILED;
	if (h1 >= 0 && fstat(h1, &s1) == 0)
		m = mmap(NULL, (size_t)s1.st_size, PROT_READ, MAP_SHARED, h1, 0);
	n = v && at ? cd_cache_check(v, len, at) : -1;
	ok(m != MAP_FAILED && n > 0 &&
	           cd_cache_held_layout(m, (size_t)s1.st_size, &flen, &nrec, &at_off) &&
	           flen == len && !memcmp(m, v, len) && nrec == (uint32_t)n &&
	           !memcmp(m + at_off, at, (size_t)n * sizeof *at),
	   "held: the copy is the file, then its records' offsets as the file's own check makes "
	   "them");
	if (m != MAP_FAILED) {
		ok(!cd_cache_held_layout(m, (size_t)s1.st_size - 8, &flen, &nrec, &at_off),
		   "held: a copy cut short does not lay out as one");
		munmap(m, (size_t)s1.st_size);
	}
	h2 = cd_cache_held_fd(fd);
	ok(h2 >= 0 && fstat(h2, &s2) == 0 && s2.st_ino == s1.st_ino,
	   "held: the same version again is the copy held, not checked again");
	close(fd);
	/* a new version of the file (written in place), forged: refused */
	if (v && forge(v, len, 1) && (fd = open(f, O_RDWR)) >= 0) {
		bad = pwrite(fd, v, len, 0) != (ssize_t)len;
		h3 = bad ? -1 : cd_cache_held_fd(fd);
		ok(!bad && h3 < 0, "held: a new version that fails the checks is not held");
		if (h3 >= 0)
			close(h3);
		close(fd);
	} else {
		ok(0, "held: forge a new version");
	}
	/* the run's side: sealed copies only */
	{
		int plain = memfd_create("x", MFD_CLOEXEC), r;

		r = ftruncate(plain, 4096) == 0 ? from_service(plain, &size) : -1;
		ok(r < 0, "held: a run refuses an unsealed memfd from the service");
		if (r >= 0)
			close(r);
		{
			/* a plain file cannot be sealed: F_GET_SEALS fails on it */
			char pf[160];
			int plainf;

			snprintf(pf, sizeof pf, "%s/plain-copy", base);
			plainf = open(pf, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
			r = plainf >= 0 && ftruncate(plainf, 4096) == 0
			            ? from_service(plainf, &size)
			            : 0;
			ok(r < 0,
			   "held: a run refuses a plain file from the service (no seals to read)");
			if (r >= 0)
				close(r);
			if (plainf >= 0)
				close(plainf);
		}
		r = h1 >= 0 ? from_service(h1, &size) : -1;
		ok(r >= 0 && size == (size_t)s1.st_size,
		   "held: control: a run takes the sealed copy");
		if (r >= 0)
			close(r);
		r = from_service(-1, &size);
		ok(r == -1, "held: no copy in the answer: the run reads the file itself");
		g_two = 1;
		n = count_fds(getpid());
		r = h1 >= 0 ? from_service(h1, &size) : 0;
		ok(r < 0 && count_fds(getpid()) == n,
		   "held: an answer with two descriptors is refused, and both are closed");
		g_two = 0;
		close(plain);
	}
	if (h1 >= 0)
		close(h1);
	if (h2 >= 0)
		close(h2);
	free(at);
	free(v);
}

static int by_tree_rel(const void *a, const void *b)
{
	return cd_tree_stamp_cmp(a, b);
}

/* Stamp runs (plan.h): with the watcher vouching for the tree, a
 * subtree replayed whole is stamped as a run of the cache file's
 * records, not directory by directory; made whole, the runs and the
 * stamps are the uncached walk's stamps, each with its path, inode and
 * ctime. */
static void test_runs(void)
{
	char svc[128], sock[192];
	struct cd_plan *a, *b = NULL;
	volatile uint64_t active = 0;
	struct stat st;
	size_t total = 0;
	int i, sane;
	pid_t pid;

	snprintf(svc, sizeof svc, "%s/svc", base);
	snprintf(sock, sizeof sock, "%s/%s", svc, CD_WATCH_SOCK_NAME);
	mkdir(svc, 0700);
	if ((pid = fork()) == 0) {
		cd_watchd_serve(svc, &active);
		_exit(1);
	}
	for (i = 0; i < 500 && stat(sock, &st) < 0; i++)
		usleep(10000);
	g_watch_sock = sock;
	a = plan(0);
	/* the watcher's pass, a file checked after its answer, then the replay */
	for (i = 0; i < 3; i++) {
		cd_plan_free(b);
		b = plan(1);
	}
	ok(b && b->watch_instance && b->nruns > 0 && b->nrun_dirs > 0,
	   "runs: control: the watcher answered, and subtrees were stamped as runs (%zu of them, "
	   "%zu directories)",
	   b ? b->nruns : 0, b ? b->nrun_dirs : 0);
	if (b) {
		struct cd_watch_id in_run = { 0, 0 }, top = { 0, 0 }, none = { 1, 1 };
		char p[512];

		snprintf(p, sizeof p, "%s/d0/sub", tree);
		if (stat(p, &st) == 0)
			in_run = (struct cd_watch_id){ st.st_dev, st.st_ino };
		if (stat(tree, &st) == 0)
			top = (struct cd_watch_id){ st.st_dev, st.st_ino };
		ok(cd_plan_stamps_hit(b, &in_run, 1) && !cd_plan_stamps_hit(b, &top, 1) &&
		           !cd_plan_stamps_hit(b, &none, 1),
		   "runs: a directory listed is found in a run when it is in one, not the top (its "
		   "own stamp) nor a stranger");
		total = b->ndirs + b->nrun_dirs;
	}
	ok(a && b && total == a->ndirs && b->ndirs < a->ndirs,
	   "runs: the stamps made and the runs' directories are the tree's directories, once each");
	sane = a && b && cd_plan_stamps_whole(b) == 0 && b->nruns == 0 && b->ndirs == total;
	if (sane) {
		qsort(a->dirs, a->ndirs, sizeof *a->dirs, by_tree_rel);
		qsort(b->dirs, b->ndirs, sizeof *b->dirs, by_tree_rel);
	}
	ok(sane && same(a, b),
	   "runs: made whole, they are the uncached walk's stamps (path, inode, ctime, git dir)");
	{
		long before = count_fds(pid);
		int sent = send_two(sock, 30);

		usleep(100000);
		ok(sent == 0 && before > 0 && count_fds(pid) <= before,
		   "the watcher drops a request carrying two descriptors and closes both (%ld "
		   "descriptors before 30 of them, %ld after)",
		   before, count_fds(pid));
	}
	cd_plan_free(a);
	cd_plan_free(b);
	g_watch_sock = NULL;
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
}

static int rm_one(const char *path, const struct stat *st, int type, struct FTW *f)
{
	(void)st;
	(void)f;
	return type == FTW_DP ? rmdir(path) : unlink(path);
}

int main(void)
{
	char cmd[160];

	tap_start(120);
	snprintf(base, sizeof base, "/tmp/cordon-test-scan-cache.XXXXXX");
	if (!mkdtemp(base))
		return 1;
	snprintf(tree, sizeof tree, "%s/tree", base);
	snprintf(cache, sizeof cache, "%s/state/scan", base);
	mkdir(tree, 0755);
	snprintf(cmd, sizeof cmd, "%s/state", base);
	mkdir(cmd, 0700);
	make_tree();
	nap();
	test_same();
	test_changes();
	test_tampered();
	test_forged();
	test_held();
	test_runs();
	if (nftw(base, rm_one, 16, FTW_DEPTH | FTW_PHYS) != 0)
		diag("could not remove %s", base);
	return tap_done();
}
