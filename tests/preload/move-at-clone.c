/* move-at-clone.so — an LD_PRELOAD attacker for tests: just before the
 * first clone3 through syscall(2) (cordon's clone of the sandbox: after
 * the walk of the bound trees, before the child mounts them), renames
 * $MOVE_FROM to $MOVE_TO.  The deterministic form of a directory moved
 * into a bound tree between the walk and the mounts, which only the
 * child's check after its mounts can see.  Appends "moved" or "failed:
 * ERRNO" to $MOVE_LOG (when set), so a test can tell it happened.
 * With $MOUNT_AT instead: just before the first open_tree (a root
 * caller's supervisor cloning a bound tree), a tmpfs holding a .netrc
 * ("mount-secret") is mounted there, and "mounted" logged: a host mount
 * made below a tree between the walk and the clone.
 * With $ATTR_AT instead: just before that clone3 or an open_tree (the
 * first that may: a root caller's clone3 runs as the run's own id), the
 * directory's noatime flag is flipped (chattr +A or -A: its ctime moves,
 * and no inotify watch hears of it), and "flagged" logged. */
#include <dlfcn.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <unistd.h>
#include <sys/syscall.h>

/* Read at load: cordon may clear its environment before the clone. */
static const char *g_from, *g_to, *g_log, *g_mount, *g_attr;

__attribute__((constructor)) static void init(void)
{
	g_from = getenv("MOVE_FROM");
	g_to = getenv("MOVE_TO");
	g_log = getenv("MOVE_LOG");
	g_mount = getenv("MOUNT_AT");
	g_attr = getenv("ATTR_AT");
}

long syscall(long n, ...)
{
	static long (*real)(long, ...);
	static int done;
	long a[6];
	va_list ap;
	int i;

	if (!real)
		real = (long (*)(long, ...))dlsym(RTLD_NEXT, "syscall");
	va_start(ap, n);
	for (i = 0; i < 6; i++)
		a[i] = va_arg(ap, long);
	va_end(ap);
	if (n == SYS_open_tree && !done && g_mount) {
		char p[4096];
		FILE *f;
		int r;

		done = 1;
		r = mount("cordon-test", g_mount, "tmpfs", 0, "size=64k");
		snprintf(p, sizeof p, "%s/.netrc", g_mount);
		if (r == 0 && (f = fopen(p, "w"))) {
			fputs("mount-secret\n", f);
			fclose(f);
		}
		if (g_log && (f = fopen(g_log, "a"))) {
			fputs(r == 0 ? "mounted\n" : "failed\n", f);
			fclose(f);
		}
	}
	if ((n == SYS_clone3 || n == SYS_open_tree) && !done && g_attr) {
		int fd = open(g_attr, O_RDONLY | O_DIRECTORY), fl = 0, e = errno;
		FILE *f;

		if (fd >= 0 && ioctl(fd, FS_IOC_GETFLAGS, &fl) == 0) {
			fl ^= FS_NOATIME_FL;
			done = ioctl(fd, FS_IOC_SETFLAGS, &fl) == 0;
		}
		if (fd >= 0)
			close(fd);
		if (done && g_log && (f = fopen(g_log, "a"))) {
			fputs("flagged\n", f);
			fclose(f);
		}
		errno = e;
	}
	if (n == SYS_clone3 && !done && g_from && g_to) {
		const char *log = g_log;
		int r = rename(g_from, g_to), e = errno;
		FILE *f;

		done = 1;
		if (log && (f = fopen(log, "a"))) {
			if (r == 0)
				fprintf(f, "moved\n");
			else
				fprintf(f, "failed: %d\n", e);
			fclose(f);
		}
		errno = e;
	}
	return real(n, a[0], a[1], a[2], a[3], a[4], a[5]);
}
