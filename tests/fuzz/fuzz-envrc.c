/* fuzz-envrc.c — a direnv .envrc on arbitrary bytes (the agent writes it
 * in a writable tree; the walk and --propose read it).  Every path
 * reported is absolute and normalized, with a known kind; the reader
 * answers 0 and never crashes, hangs or leaks. */
#include "sandbox/envrc.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

const char *cd_fuzz_name = "envrc";

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int check(void *arg, const char *path, enum cd_envrc_named kind)
{
	size_t n = strlen(path);

	if (path[0] != '/' || strstr(path, "//") || strstr(path, "/./") || strstr(path, "/../") ||
	    (n > 1 && path[n - 1] == '/') || (n >= 2 && !strcmp(path + n - 2, "/.")) ||
	    (n >= 3 && !strcmp(path + n - 3, "/..")) ||
	    (kind != CD_ENVRC_RUN && kind != CD_ENVRC_DIR && kind != CD_ENVRC_WAY))
		abort();
	(*(size_t *)arg)++;
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	size_t seen = 0;

	if (cd_envrc_named_paths((const char *)data, size, "/t/sub", check, &seen) != 0)
		abort();
	return 0;
}
