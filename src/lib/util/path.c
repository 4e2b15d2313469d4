/* path.c — see path.h. */
#include "path.h"

#include "bounds.h"
#include "match.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int cd_path_normalize(const char *in, char *out, size_t outlen)
{
	/* One lexical canonicalizer for the sandbox and the policy matchers. */
	int r = in ? cd_path_canon(in, strlen(in), out, outlen) : -EINVAL;

	return r < 0 ? r : 0;
}

int cd_path_dotdot_dirs(const char *in, int (*fn)(void *arg, const char *dir), void *arg)
{
	char pre[CD_PATH_MAX], norm[CD_PATH_MAX];
	size_t i, n = strlen(in);
	int r;

	if (n >= sizeof pre)
		return 0;
	for (i = 0; i + 2 <= n; i++) {
		/* a ".." component starting at i, after a '/' */
		if (!i || in[i - 1] != '/' || in[i] != '.' || in[i + 1] != '.' ||
		    (in[i + 2] != '\0' && in[i + 2] != '/'))
			continue;
		memcpy(pre, in, i);
		pre[i] = '\0';
		if (cd_path_normalize(pre[0] ? pre : "/", norm, sizeof norm) == 0 &&
		    (r = fn(arg, norm)) != 0)
			return r;
	}
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

#define LINK_HOPS 40 /* symlinks followed in one path, as the kernel's limit */

/* See path.h. */
int cd_path_resolve_links(const char *path, char *out, size_t outlen)
{
	return cd_path_resolve_links_each(path, out, outlen, NULL, NULL);
}

/* See path.h. */
int cd_path_resolve_links_each(const char *path, char *out, size_t outlen,
                               void (*each)(void *arg, const char *link), void *arg)
{
	char done[CD_PATH_MAX], rest[CD_PATH_MAX], target[CD_PATH_MAX], tmp[CD_PATH_MAX];
	const char *r;
	unsigned hops = 0;
	struct stat st;
	size_t dl = 0, cl;
	ssize_t tl;
	int n;

	if (cd_path_normalize(path, rest, sizeof rest) < 0)
		return -1;
	for (r = rest + 1; *r;) {
		cl = strcspn(r, "/");
		if (dl + 1 + cl >= sizeof done)
			return -1;
		done[dl] = '/';
		memcpy(done + dl + 1, r, cl);
		done[dl + 1 + cl] = '\0';
		if (lstat(done, &st) < 0) {
			/* not there yet: the rest as it is */
			done[dl] = '\0';
			n = snprintf(tmp, sizeof tmp, "%s/%s", done, r);
			return n > 0 && (size_t)n < sizeof tmp &&
			                       cd_path_normalize(tmp, out, outlen) == 0
			               ? 0
			               : -1;
		}
		if (S_ISLNK(st.st_mode)) {
			if (each)
				each(arg, done);
			if (++hops > LINK_HOPS ||
			    (tl = readlink(done, target, sizeof target - 1)) <= 0)
				return -1;
			target[tl] = '\0';
			done[dl] = '\0';
			r += cl;
			n = snprintf(tmp, sizeof tmp, "%s%s%s%s", target[0] == '/' ? "" : done,
			             target[0] == '/' ? "" : "/", target, r);
			if (n <= 0 || (size_t)n >= sizeof tmp ||
			    cd_path_normalize(tmp, rest, sizeof rest) < 0)
				return -1;
			dl = 0; /* again from the root, through the target */
			r = rest + 1;
			continue;
		}
		dl += 1 + cl;
		r += cl;
		if (*r == '/')
			r++;
	}
	if (!dl)
		memcpy(done, "/", 2);
	return (size_t)snprintf(out, outlen, "%s", done) < outlen ? 0 : -1;
}

int cd_path_search_join(const char *e, size_t n, const char *base, const char *home, char *out,
                        size_t outlen)
{
	int k;

	if (!n)
		return -1;
	if (e[0] == '~' && (n == 1 || e[1] == '/'))
		k = home && home[0] == '/'
		            ? snprintf(out, outlen, "%s%.*s", home, (int)n - 1, e + 1)
		            : -1;
	else if (e[0] == '/')
		k = snprintf(out, outlen, "%.*s", (int)n, e);
	else
		k = snprintf(out, outlen, "%s/%.*s", base, (int)n, e);
	return k <= 0 || (size_t)k >= outlen ? -1 : 0;
}

int cd_path_search_entry(const char *e, size_t n, const char *base, const char *home, char *out,
                         size_t outlen)
{
	char tmp[CD_PATH_MAX];

	if (cd_path_search_join(e, n, base, home, tmp, sizeof tmp) < 0)
		return -1;
	return cd_path_normalize(tmp, out, outlen) < 0 ? -1 : 0;
}

int cd_path_search_relative(const char *e, size_t n)
{
	return !n || (e[0] != '/' && !(e[0] == '~' && (n == 1 || e[1] == '/')));
}
