/* path.c — see path.h. */
#include "path.h"

#include "match.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

int cd_path_normalize(const char *in, char *out, size_t outlen)
{
	/* One lexical canonicalizer for the sandbox and the policy matchers. */
	int r = in ? cd_path_canon(in, strlen(in), out, outlen) : -EINVAL;

	return r < 0 ? r : 0;
}

int cd_path_is_under(const char *path, const char *dir)
{
	size_t dl = strlen(dir);

	if (strcmp(dir, "/") == 0)
		return path[0] == '/';
	if (strncmp(path, dir, dl) != 0)
		return 0;
	return path[dl] == '\0' || path[dl] == '/';
}

size_t cd_path_depth(const char *path)
{
	size_t d = 0;
	const char *p;

	for (p = path; *p; p++) {
		if (*p == '/' && p[1] != '\0')
			d++;
	}
	return d;
}

int cd_path_canonical(const char *in, char *out, size_t outlen)
{
	char *r = realpath(in, NULL);
	size_t len;

	if (!r)
		return -errno;
	len = strlen(r);
	if (len + 1 > outlen) {
		free(r);
		return -ENAMETOOLONG;
	}
	memcpy(out, r, len + 1);
	free(r);
	return 0;
}
