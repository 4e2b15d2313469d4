/* path.c — see path.h. */
#include "path.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

int cd_path_normalize(const char *in, char *out, size_t outlen)
{
	size_t o = 0, i = 0, n;

	if (!in || in[0] != '/' || outlen < 2)
		return -EINVAL;
	n = strlen(in);
	out[o++] = '/';
	while (i < n) {
		size_t start, len;

		while (i < n && in[i] == '/')
			i++;
		start = i;
		while (i < n && in[i] != '/')
			i++;
		len = i - start;
		if (len == 0 || (len == 1 && in[start] == '.'))
			continue;
		if (len == 2 && in[start] == '.' && in[start + 1] == '.') {
			if (o == 1)
				return -EPERM;
			/* back up to the previous separator */
			o--;
			while (o > 0 && out[o - 1] != '/')
				o--;
			if (o > 1)
				o--; /* drop the separator too, unless it is the root */
			continue;
		}
		if (o > 1) {
			if (o + 1 >= outlen)
				return -ENAMETOOLONG;
			out[o++] = '/';
		}
		if (o + len >= outlen)
			return -ENAMETOOLONG;
		memcpy(out + o, in + start, len);
		o += len;
	}
	out[o] = '\0';
	return 0;
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
