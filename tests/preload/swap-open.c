/* swap-open.so — an LD_PRELOAD attacker for tests: every open of a file
 * for reading by a name whose last component is $SWAP_NAME (open, openat
 * and their fortified forms; not O_PATH) sees the other file: $SWAP_A and
 * $SWAP_B are exchanged (renameat2 RENAME_EXCHANGE) just before the call
 * and exchanged back just after it.  What a process judges by opening a
 * name again is then not what the name shows before or after: the
 * deterministic form of an exchange race (session 8's G1: a key judged
 * by a certificate's content).  Each exchange pair appends a line to
 * $SWAP_LOG (when set), so a test can tell whether it happened. */
#include <dlfcn.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifndef RENAME_EXCHANGE
#define RENAME_EXCHANGE (1 << 1)
#endif

static int matches(const char *path, int flags)
{
	const char *name = getenv("SWAP_NAME"), *slash;

	if (!name || !path || (flags & O_PATH))
		return 0;
	slash = strrchr(path, '/');
	return strcmp(slash ? slash + 1 : path, name) == 0;
}

static void exchange(const char *why)
{
	const char *a = getenv("SWAP_A"), *b = getenv("SWAP_B"), *log = getenv("SWAP_LOG");
	int fd;

	if (!a || !b || renameat2(AT_FDCWD, a, AT_FDCWD, b, RENAME_EXCHANGE) != 0)
		return;
	if (log && (fd = open(log, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0666)) >= 0) {
		if (write(fd, why, strlen(why)) < 0)
			(void)0;
		close(fd);
	}
}

typedef int (*openat_fn)(int, const char *, int, ...);

static int swapped(const char *sym, int dfd, const char *path, int flags, mode_t mode)
{
	openat_fn real = (openat_fn)dlsym(RTLD_NEXT, "openat");
	int r, m = matches(path, flags);

	(void)sym;
	if (m)
		exchange("swapped\n");
	r = real(dfd, path, flags, mode);
	if (m)
		exchange("back\n");
	return r;
}

static mode_t mode_of(int flags, va_list ap)
{
	return (flags & (O_CREAT | __O_TMPFILE)) ? (mode_t)va_arg(ap, int) : 0;
}

int openat(int dfd, const char *path, int flags, ...)
{
	va_list ap;
	mode_t mode;

	va_start(ap, flags);
	mode = mode_of(flags, ap);
	va_end(ap);
	return swapped("openat", dfd, path, flags, mode);
}

int openat64(int dfd, const char *path, int flags, ...)
{
	va_list ap;
	mode_t mode;

	va_start(ap, flags);
	mode = mode_of(flags, ap);
	va_end(ap);
	return swapped("openat64", dfd, path, flags, mode);
}

int open(const char *path, int flags, ...)
{
	va_list ap;
	mode_t mode;

	va_start(ap, flags);
	mode = mode_of(flags, ap);
	va_end(ap);
	return swapped("open", AT_FDCWD, path, flags, mode);
}

int open64(const char *path, int flags, ...)
{
	va_list ap;
	mode_t mode;

	va_start(ap, flags);
	mode = mode_of(flags, ap);
	va_end(ap);
	return swapped("open64", AT_FDCWD, path, flags, mode);
}

int __openat_2(int dfd, const char *path, int flags);
int __openat_2(int dfd, const char *path, int flags)
{
	return swapped("__openat_2", dfd, path, flags, 0);
}

int __open_2(const char *path, int flags);
int __open_2(const char *path, int flags)
{
	return swapped("__open_2", AT_FDCWD, path, flags, 0);
}
