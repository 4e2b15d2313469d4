/* fuzz-gitcfg.c — a repository's git configuration on arbitrary bytes.
 * The input, split at its first NUL, is the repository's .git/config and
 * a file inc.cfg at the working tree's top (which an include, a relative
 * core.hooksPath or a command word can name).  Every path reported is
 * absolute and normalized, with a known kind; the reader answers 0 or
 * -E2BIG (includes past their bound) and never crashes, hangs or leaks. */
#include "sandbox/gitcfg.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

const char *cd_fuzz_name = "gitcfg";

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char dir[] = "/tmp/cordon-fuzz-gitcfg.XXXXXX";
static char top[48], gd[64], hooks[80], cfg[80], inc[64];

static void cleanup(void)
{
	unlink(cfg);
	unlink(inc);
	rmdir(hooks);
	rmdir(gd);
	rmdir(top);
	rmdir(dir);
}

static void setup(void)
{
	if (!mkdtemp(dir))
		abort();
	snprintf(top, sizeof top, "%s/t", dir);
	snprintf(gd, sizeof gd, "%s/.git", top);
	snprintf(hooks, sizeof hooks, "%s/hooks", gd);
	snprintf(cfg, sizeof cfg, "%s/config", gd);
	snprintf(inc, sizeof inc, "%s/inc.cfg", top);
	if (mkdir(top, 0700) < 0 || mkdir(gd, 0700) < 0 || mkdir(hooks, 0700) < 0)
		abort();
	atexit(cleanup);
}

static void put(const char *path, const uint8_t *d, size_t n)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);

	if (fd < 0 || (n && write(fd, d, n) != (ssize_t)n))
		abort();
	close(fd);
}

static int check(void *arg, const char *path, enum cd_git_named kind)
{
	size_t n = strlen(path);

	if (path[0] != '/' || strstr(path, "//") || strstr(path, "/./") || strstr(path, "/../") ||
	    (n > 1 && path[n - 1] == '/') || (n >= 2 && !strcmp(path + n - 2, "/.")) ||
	    (n >= 3 && !strcmp(path + n - 3, "/..")) ||
	    (kind != CD_GIT_NAMED_DIR && kind != CD_GIT_NAMED_CONFIG && kind != CD_GIT_NAMED_RUN &&
	     kind != CD_GIT_NAMED_WAY))
		abort();
	(*(size_t *)arg)++;
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int ready;
	const uint8_t *z = size ? memchr(data, 0, size) : NULL;
	size_t a = z ? (size_t)(z - data) : size, seen = 0;
	int r;

	if (!ready) {
		setup();
		ready = 1;
	}
	put(cfg, data, a);
	put(inc, z ? z + 1 : data + size, z ? size - a - 1 : 0);
	r = cd_git_named_paths(gd, NULL, NULL, check, &seen);
	if (r != 0 && r != -E2BIG && r != -EFBIG)
		abort();
	return 0;
}
