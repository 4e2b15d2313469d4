/* test-scan-cache.c — the walk's per-directory cache (tree-cache.c) must
 * never change what the walk finds: on a tree holding every kind of entry
 * the walk acts on (sockets, credentials by name, by content and through
 * a symlink, .ssh, a nested repository, plain files), the plan built
 * without the cache, with it cold (written) and with it warm (replayed)
 * must be the same, mount for mount and stamp for stamp; after changes
 * between plans (a credential renamed in, a .json and a .pem rewritten in
 * place, a socket bound, a directory removed) the same again; and a cache
 * file edited, cut short or replaced by garbage gives the same plan as no
 * cache.  Run as root, so the default profile (a read-only tree) is what
 * is cached here; 9054 runs the writable case as nobody. */
#include "../tap.h"

#include "sandbox/plan.h"

#include <dirent.h>
#include <ftw.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

static char base[64], tree[128], cache[128];

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
	if (nftw(base, rm_one, 16, FTW_DEPTH | FTW_PHYS) != 0)
		diag("could not remove %s", base);
	return tap_done();
}
