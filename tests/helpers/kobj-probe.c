/* kobj-probe — take kernel objects until refused, for
 * tests/integration/9026-kernel-objects.sh and 9027-memory-no-cgroup.sh.
 *
 *   kobj-probe inotify MAX HOLD_S   inotify_init1 up to MAX times
 *   kobj-probe watches MAX HOLD_S   one instance, watches on MAX fresh dirs
 *                                   (made under the cwd, which must be writable)
 *   kobj-probe mqueue MAX HOLD_S    create queues of 1 x 8192-byte message
 *                                   (made, even when the open is refused)
 *   kobj-probe memfd MB HOLD_S      memfd_create + write MB MiB (16 MiB each)
 *   kobj-probe sysv-shm MB HOLD_S   shmget/shmat/touch/shmdt 16 MiB segments
 *   kobj-probe file PATH MB         write MB MiB to PATH (a tmpfs file)
 *
 * Each prints "WHAT=COUNT ERRNONAME" (how many it got, and the errno that
 * stopped it, or "ok" when it got MAX), flushes, then keeps everything for
 * HOLD_S seconds so the host can try meanwhile.  Exit 0 unless the usage is
 * wrong (2).  libc only. */
#include <errno.h>
#include <fcntl.h>
#include <mqueue.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/mman.h>
#include <sys/shm.h>
#include <sys/stat.h>
#include <unistd.h>

#define CHUNK (16L << 20)

static void done(const char *what, long n, int err, long hold)
{
	const char *e = err ? strerrorname_np(err) : "ok";

	printf("%s=%ld %s\n", what, n, e ? e : "?");
	fflush(stdout);
	if (hold > 0)
		sleep((unsigned)hold);
}

static int fill_fd(int fd, long bytes)
{
	static char buf[1 << 16];
	long off = 0;

	memset(buf, 'x', sizeof buf);
	while (off < bytes) {
		ssize_t w = write(fd, buf, sizeof buf);
		if (w < 0)
			return errno;
		off += w;
	}
	return 0;
}

int main(int argc, char **argv)
{
	long max, hold, n = 0;
	int err = 0;

	if (argc != 4)
		goto usage;
	max = strtol(argv[2], NULL, 10);
	hold = strtol(argv[3], NULL, 10);
	if (strcmp(argv[1], "inotify") == 0) {
		for (; n < max; n++)
			if (inotify_init1(IN_CLOEXEC) < 0) {
				err = errno;
				break;
			}
	} else if (strcmp(argv[1], "watches") == 0) {
		int fd = inotify_init1(IN_CLOEXEC);
		char d[64];

		if (fd < 0)
			err = errno;
		for (; fd >= 0 && n < max; n++) {
			snprintf(d, sizeof d, "kobj-w%ld", n);
			if ((mkdir(d, 0700) < 0 && errno != EEXIST) ||
			    inotify_add_watch(fd, d, IN_CREATE) < 0) {
				err = errno;
				break;
			}
		}
	} else if (strcmp(argv[1], "mqueue") == 0) {
		struct mq_attr a = { .mq_maxmsg = 1, .mq_msgsize = 8192 };
		char name[64];

		/* In cordon's sandbox Landlock refuses to open the queue
		 * (EACCES, the mqueue filesystem is beneath no rule), but the
		 * kernel has made it, and charged it, before the open: it
		 * stays in the ipc namespace and counts. */
		for (; n < max; n++) {
			snprintf(name, sizeof name, "/kobj-%d-%ld", (int)getpid(), n);
			if (mq_open(name, O_CREAT | O_EXCL | O_RDWR, 0600, &a) >= 0)
				mq_unlink(name); /* the open descriptor keeps it */
			else if (errno != EACCES) {
				err = errno;
				break;
			}
		}
	} else if (strcmp(argv[1], "memfd") == 0) {
		for (; n < max; n += CHUNK >> 20) {
			int fd = memfd_create("kobj", MFD_CLOEXEC);
			if (fd < 0 || (err = fill_fd(fd, CHUNK)) != 0) {
				err = fd < 0 ? errno : err;
				break;
			}
		}
	} else if (strcmp(argv[1], "sysv-shm") == 0) {
		for (; n < max; n += CHUNK >> 20) {
			int id = shmget(IPC_PRIVATE, CHUNK, IPC_CREAT | 0600);
			char *p = id < 0 ? (char *)-1 : shmat(id, NULL, 0);
			if (p == (char *)-1) {
				err = errno;
				break;
			}
			memset(p, 'x', CHUNK);
			shmdt(p);
		}
	} else if (strcmp(argv[1], "file") == 0) {
		int fd = open(argv[2], O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
		long mb = strtol(argv[3], NULL, 10);

		if (fd < 0)
			err = errno;
		else
			err = fill_fd(fd, mb << 20);
		n = err ? 0 : mb;
		done("file", n, err, 0);
		return 0;
	} else {
		goto usage;
	}
	done(argv[1], n, err, hold);
	return 0;
usage:
	fprintf(stderr, "usage: kobj-probe inotify|watches|mqueue|memfd|sysv-shm MAX HOLD_S | "
	                "file PATH MB\n");
	return 2;
}
