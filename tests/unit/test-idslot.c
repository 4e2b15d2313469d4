/* test-idslot.c — one host id per concurrent root run: the lowest free
 * slot is taken and held by an flock, freed when its holder closes it or
 * dies (SIGKILL included), refused when none is free or when the lock
 * directory or a lock file could be someone else's; test windows only
 * narrow the range. */
#include "../tap.h"

#include "sandbox/idslot.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static char top[] = "/tmp/test-idslot.XXXXXX";
static char dir[256]; /* top/run/cordon/ids, as CD_IDSLOT_DIR */
static const struct cd_idmap_range range = { 5000000, 6000000, 4 };

static char *path(const char *rel)
{
	static char buf[4][320];
	static int next;
	char *p = buf[next++ % 4];

	snprintf(p, sizeof buf[0], "%s/%s", top, rel);
	return p;
}

static int take(uint32_t first, uint32_t count, struct cd_idslot *s, struct cd_err *e)
{
	memset(e, 0, sizeof *e);
	s->fd = -1;
	return cd_idslot_take(dir, &range, first, count, s, e);
}

static int take_async(uint32_t first, uint32_t count, struct cd_idslot *s, struct cd_err *e)
{
	memset(e, 0, sizeof *e);
	s->fd = -1;
	return cd_idslot_take_async(dir, &range, first, count, s, e);
}

static int confirm(uint32_t first, uint32_t count, struct cd_idslot *s, struct cd_err *e)
{
	memset(e, 0, sizeof *e);
	return cd_idslot_confirm(dir, &range, first, count, s, e);
}

static unsigned mode_of(const char *p)
{
	struct stat st;

	return lstat(p, &st) == 0 ? (unsigned)(st.st_mode & 07777) : 0xffff;
}

static void test_take(void)
{
	struct cd_idslot s[5], x;
	struct cd_err e;
	int i;

	is_int(take(0, 0, &s[0], &e), 0, "the first run takes a slot (%s)", e.msg);
	ok(s[0].index == 0 && s[0].uid == 5000000 && s[0].gid == 6000000,
	   "... the lowest: slot 0, uid 5000000, gid 6000000");
	ok(mode_of(path("run")) == 0700 && mode_of(path("run/cordon")) == 0700 &&
	           mode_of(dir) == 0700,
	   "the missing directories were made 0700");
	ok(mode_of(path("run/cordon/ids/5000000")) == 0600, "the lock file is 0600");
	for (i = 1; i < 4; i++) {
		is_int(take(0, 0, &s[i], &e), 0, "concurrent run %d takes a slot", i);
		ok(s[i].index == (uint32_t)i && s[i].uid == (uid_t)(5000000 + i) &&
		           s[i].gid == (gid_t)(6000000 + i),
		   "... slot %d, an id of its own", i);
	}
	is_int(take(0, 0, &s[4], &e), -EBUSY, "a fifth concurrent run: no slot is free");
	ok(strstr(e.msg, "every host id for root's sandboxes is in use") &&
	           strstr(e.msg, "5000000-5000003"),
	   "... saying so, with the ids (%s)", e.msg);
	ok(s[4].fd == -1, "... and holding nothing");

	cd_idslot_release(&s[1]);
	is_int(take(0, 0, &x, &e), 0, "once run 1 ends, a new run takes a slot");
	is_int((long)x.index, 1, "... its slot, the lowest free");
	cd_idslot_release(&x);

	/* Windows narrow the range, never widen it. */
	is_int(take(2, 1, &x, &e), -EBUSY, "window 2:1 with slot 2 held: refused");
	is_int(take(1, 3, &x, &e), 0, "window 1:3 with slot 1 free: taken");
	is_int((long)x.index, 1, "... slot 1");
	cd_idslot_release(&x);
	is_int(take(4, 1, &x, &e), -EINVAL, "window 4:1 lies past the 4 slots: refused");
	ok(strstr(e.msg, "outside") != NULL, "... saying so (%s)", e.msg);
	is_int(take(0, 5, &x, &e), -EINVAL, "window 0:5 is wider than the range: refused");
	is_int(take(3, 2, &x, &e), -EINVAL, "window 3:2 ends past the range: refused");
	is_int(take(4294967295u, 2, &x, &e), -EINVAL, "a window that wraps around: refused");

	for (i = 0; i < 4; i++)
		cd_idslot_release(&s[i]);
	cd_idslot_release(&s[1]); /* twice is harmless */
	is_int(take(0, 0, &x, &e), 0, "all runs over: a run takes a slot");
	is_int((long)x.index, 0, "... slot 0 again");
	cd_idslot_release(&x);
}

/* A holder killed with SIGKILL frees its slot: the kernel drops the lock. */
static void test_killed(void)
{
	struct cd_idslot s;
	struct cd_err e;
	int p[2], st;
	char c = 0;
	pid_t pid;

	if (pipe(p) < 0) {
		ok(0, "pipe");
		return;
	}
	pid = fork();
	if (pid == 0) {
		close(p[0]);
		if (take(0, 1, &s, &e) == 0 && write(p[1], "t", 1) == 1)
			pause();
		_exit(1);
	}
	close(p[1]);
	ok(read(p[0], &c, 1) == 1 && c == 't', "a child takes slot 0");
	close(p[0]);
	is_int(take(0, 1, &s, &e), -EBUSY, "... which is then busy for everyone else");
	kill(pid, SIGKILL);
	waitpid(pid, &st, 0);
	/* its keeper (root) dies of the parent-death signal and is reaped by
	 * init: until then the id still has a process */
	for (st = 0; st < 200 && take(0, 1, &s, &e) == -EBUSY; st++)
		usleep(10000);
	is_int(s.fd >= 0 ? 0 : -EBUSY, 0, "after kill -9 of the holder, slot 0 is free (%s)",
	       e.msg);
	cd_idslot_release(&s);
}

/* Root: a slot whose lock is free but whose id has a process (a run in
 * another mount namespace, with a /run of its own) is busy. */
static void test_elsewhere(void)
{
	struct cd_idslot s;
	struct cd_err e;
	int p[2], st;
	char c = 0;
	pid_t pid;

	if (geteuid() != 0) {
		tap_skip("an id in use elsewhere: making a process of another id needs root");
		return;
	}
	if (pipe(p) < 0) {
		ok(0, "pipe");
		return;
	}
	pid = fork();
	if (pid == 0) {
		close(p[0]);
		if (setresgid(6000002, 6000002, 6000002) == 0 &&
		    setresuid(5000002, 5000002, 5000002) == 0 && write(p[1], "u", 1) == 1)
			pause();
		_exit(1);
	}
	close(p[1]);
	ok(read(p[0], &c, 1) == 1 && c == 'u', "a process of uid 5000002 runs, holding no lock");
	close(p[0]);
	is_int(take(2, 1, &s, &e), -EBUSY, "... so slot 2 is busy (another /run's run)");
	is_int(take(1, 2, &s, &e), 0, "a window holding slots 1 and 2 gives ...");
	is_int((long)s.index, 1, "... slot 1");
	cd_idslot_release(&s);
	is_int(take(2, 2, &s, &e), 0, "window 2:2 skips the used id ...");
	is_int((long)s.index, 3, "... to slot 3");
	cd_idslot_release(&s);
	/* Taken early (the keeper's answer read later): the same verdicts. */
	is_int(take_async(2, 2, &s, &e), 0, "async: window 2:2 takes slot 2's lock at once ...");
	ok(s.index == 2 && s.keeper_rep >= 0, "... its id not yet checked (slot %u)",
	   (unsigned)s.index);
	is_int(confirm(2, 2, &s, &e), 1, "... the check finds the id used: another slot (%s)",
	       e.msg);
	ok(s.index == 3 && s.uid == 5000003 && s.fd >= 0 && s.keeper > 0 && s.keeper_rep < 0,
	   "... slot 3, locked and kept (slot %u)", (unsigned)s.index);
	cd_idslot_release(&s);
	is_int(take_async(2, 1, &s, &e), 0, "async: window 2:1 takes slot 2's lock ...");
	is_int(confirm(2, 1, &s, &e), -EBUSY, "... and is refused once the check answers");
	ok(s.fd < 0 && strstr(e.msg, "every host id") != NULL, "... holding nothing (%s)", e.msg);
	cd_idslot_release(&s);
	is_int(take_async(1, 1, &s, &e), 0, "async: a free id ...");
	is_int(confirm(1, 1, &s, &e), 0, "... is confirmed as it is (%s)", e.msg);
	ok(s.index == 1 && s.keeper > 0, "... slot 1, kept");
	is_int(confirm(1, 1, &s, &e), 0, "... and confirming again changes nothing");
	cd_idslot_release(&s);
	kill(pid, SIGKILL);
	/* not reaped: a zombie, as a killed run's are under a pid 1 that does
	 * not reap */
	waitid(P_PID, (id_t)pid, NULL, WEXITED | WNOWAIT);
	is_int(take(2, 1, &s, &e), 0, "a zombie of the id does not hold slot 2 (%s)", e.msg);
	cd_idslot_release(&s);
	take_async(2, 1, &s, &e);
	is_int(confirm(2, 1, &s, &e), 0, "... nor when taken early (%s)", e.msg);
	cd_idslot_release(&s);
	waitpid(pid, &st, 0);
	is_int(take(2, 1, &s, &e), 0, "once that process is reaped, slot 2 is free (%s)", e.msg);
	cd_idslot_release(&s);
}

/* The directory and the lock files must be nobody else's. */
static void test_unsafe(void)
{
	struct cd_idslot s;
	struct cd_err e;

	chmod(dir, 0750);
	is_int(take(0, 0, &s, &e), -EPERM, "the lock directory open to its group: refused");
	ok(strstr(e.msg, "unsafe") && strstr(e.msg, "0750"), "... saying why (%s)", e.msg);
	chmod(dir, 0700);

	chmod(path("run/cordon"), 0777);
	is_int(take(0, 0, &s, &e), -EPERM, "a world-writable directory on the way: refused");
	ok(strstr(e.msg, "'cordon' is unsafe") != NULL, "... naming it (%s)", e.msg);
	chmod(path("run/cordon"), 01777);
	is_int(take(0, 0, &s, &e), 0, "a sticky one is fine (no one can move our entry)");
	cd_idslot_release(&s);
	chmod(path("run/cordon"), 0700);

	rename(dir, path("run/cordon/real"));
	if (symlink("real", dir) < 0)
		ok(0, "symlink");
	is_int(take(0, 0, &s, &e), -EPERM, "the lock directory as a symlink: refused");
	ok(strstr(e.msg, "'ids' is a symlink") != NULL, "... saying so (%s)", e.msg);
	unlink(dir);
	rename(path("run/cordon/real"), dir);

	unlink(path("run/cordon/ids/5000000"));
	if (symlink("/etc/passwd", path("run/cordon/ids/5000000")) < 0)
		ok(0, "symlink");
	is_int(take(0, 0, &s, &e), -EPERM, "a lock file that is a symlink: refused");
	ok(strstr(e.msg, "is a symlink") != NULL, "... saying so (%s)", e.msg);
	unlink(path("run/cordon/ids/5000000"));
	if (mkfifo(path("run/cordon/ids/5000000"), 0600) < 0)
		ok(0, "mkfifo");
	is_int(take(0, 0, &s, &e), -EPERM, "a lock file that is a FIFO: refused (not blocked on)");
	unlink(path("run/cordon/ids/5000000"));
	if (geteuid() == 0) {
		int fd = open(path("run/cordon/ids/5000000"), O_CREAT | O_WRONLY | O_CLOEXEC, 0600);

		if (fd < 0 || fchown(fd, 1234, 1234) < 0)
			ok(0, "make a lock of uid 1234");
		if (fd >= 0)
			close(fd);
		is_int(take(0, 0, &s, &e), -EPERM, "a lock file of another user: refused");
		unlink(path("run/cordon/ids/5000000"));
		if (chown(dir, 1234, 1234) < 0)
			ok(0, "chown the lock directory");
		is_int(take(0, 0, &s, &e), -EPERM, "a lock directory of another user: refused");
		ok(strstr(e.msg, "owner 1234") != NULL, "... naming the owner (%s)", e.msg);
		if (chown(dir, 0, 0) < 0)
			ok(0, "chown the lock directory back");
	} else {
		tap_skip("ownership cases need root (chown)");
		tap_skip("ownership cases need root (chown)");
		tap_skip("ownership cases need root (chown)");
	}
	is_int(take(0, 0, &s, &e), 0, "control: put right, the directory is used again (%s)",
	       e.msg);
	cd_idslot_release(&s);

	memset(&e, 0, sizeof e);
	is_int(cd_idslot_take("run/ids", &range, 0, 0, &s, &e), -EINVAL,
	       "a relative lock directory: refused");
	snprintf(dir + strlen(dir), 8, "/../x");
	is_int(take(0, 0, &s, &e), -EINVAL, "a lock directory with '..': refused");
	dir[strlen(dir) - 5] = '\0';
}

static void test_window(void)
{
	static const struct {
		const char *s;
		int rc;
		uint32_t first, count;
	} cases[] = {
		{ "2", 0, 0, 2 },         { "1000:2", 0, 1000, 2 },
		{ "0:1", 0, 0, 1 },       { "0", -EINVAL, 0, 0 },
		{ "5:0", -EINVAL, 0, 0 }, { "", -EINVAL, 0, 0 },
		{ ":3", -EINVAL, 0, 0 },  { "3:", -EINVAL, 0, 0 },
		{ "-1", -EINVAL, 0, 0 },  { "1:2:3", -EINVAL, 0, 0 },
		{ " 2", -EINVAL, 0, 0 },  { "4294967296", -EINVAL, 0, 0 },
	};
	size_t i;

	for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		uint32_t f = 77, c = 77;
		int r = cd_idslot_parse_window(cases[i].s, &f, &c);

		is_int(r, cases[i].rc, "window '%s'", cases[i].s);
		if (r == 0)
			ok(f == cases[i].first && c == cases[i].count, "... is %u:%u", (unsigned)f,
			   (unsigned)c);
	}
}

static void cleanup(void)
{
	char name[32];
	int i;

	for (i = 0; i < 4; i++) {
		snprintf(name, sizeof name, "run/cordon/ids/%d", 5000000 + i);
		unlink(path(name));
	}
	rmdir(dir);
	rmdir(path("run/cordon"));
	rmdir(path("run"));
	if (rmdir(top) < 0)
		diag("could not remove %s: %s", top, strerror(errno));
}

int main(void)
{
	tap_start(42);
	if (!mkdtemp(top)) {
		ok(0, "mkdtemp");
		return tap_done();
	}
	snprintf(dir, sizeof dir, "%s/run/cordon/ids", top);
	test_take();
	test_killed();
	test_elsewhere();
	test_unsafe();
	test_window();
	cleanup();
	return tap_done();
}
