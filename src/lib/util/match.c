/* match.c — see match.h: paths, globs, argv, ports, named arguments.
 *
 * Trust boundary: paths, argv and argument values come from agents.  Paths
 * are reduced to one canonical spelling before any comparison; everything
 * compares byte for byte, so case and Unicode look-alikes never match a
 * different name. */
#include "match.h"

#include "num.h"

#include <errno.h>
#include <string.h>

int cd_path_canon(const char *in, size_t len, char *out, size_t outlen)
{
	size_t i = 0, o = 0;

	if (!in || !out || outlen < 2 || len == 0 || in[0] != '/')
		return -EINVAL;
	if (memchr(in, '\0', len))
		return -EINVAL;
	out[o++] = '/';
	while (i < len) {
		size_t start, seg;
		while (i < len && in[i] == '/')
			i++;
		start = i;
		while (i < len && in[i] != '/')
			i++;
		seg = i - start;
		if (seg == 0 || (seg == 1 && in[start] == '.'))
			continue;
		if (seg == 2 && in[start] == '.' && in[start + 1] == '.') {
			if (o == 1)
				return -EPERM;
			/* Drop the last segment of the output. */
			while (o > 1 && out[o - 1] != '/')
				o--;
			if (o > 1)
				o--;
			continue;
		}
		if (o > 1) {
			if (o + 1 > outlen - 1)
				return -ENAMETOOLONG;
			out[o++] = '/';
		}
		if (seg > outlen - 1 - o)
			return -ENAMETOOLONG;
		memcpy(out + o, in + start, seg);
		o += seg;
	}
	out[o] = '\0';
	return (int)o;
}

int cd_cover_glob_valid(const char *g, size_t len, const char **ret_why)
{
	const char *why = NULL, *p = g, *end = g + len;

	if (!len || len > 255 || memchr(g, '\0', len))
		why = "not a glob of 1-255 bytes";
	else if (memmem(g, len, "**", 2))
		why = "'**' is not supported";
	else if (memchr(g, '{', len) || memchr(g, '}', len))
		why = "'{a,b}' is not supported (write one glob for each)";
	while (!why && p <= end) {
		const char *seg = p, *slash = memchr(p, '/', (size_t)(end - p));
		size_t n = (size_t)((slash ? slash : end) - seg);

		if (!n)
			why = "an absolute path, a leading or trailing '/' or '//' matches "
			      "nothing (a glob is matched against a file's name, or with a "
			      "'/' against its path's last components)";
		else if ((n == 1 && seg[0] == '.') || (n == 2 && !memcmp(seg, "..", 2)))
			why = "a '.' or '..' component matches nothing (write 'conf/x', not "
			      "'./conf/x')";
		p = seg + n + 1;
	}
	if (!why)
		return 0;
	if (ret_why)
		*ret_why = why;
	return -EINVAL;
}

int cd_glob_valid(const char *glob, const char **ret_why)
{
	const char *why = NULL, *p;

	if (!glob || glob[0] != '/') {
		why = "a path glob is absolute";
		goto bad;
	}
	if (glob[1] == '\0')
		return 0;
	for (p = glob; *p;) {
		const char *seg = ++p; /* after the '/' */
		size_t n;
		while (*p && *p != '/')
			p++;
		n = (size_t)(p - seg);
		if (n == 0) {
			why = *p ? "empty segment ('//')" : "trailing '/'";
			goto bad;
		}
		if ((n == 1 && seg[0] == '.') || (n == 2 && seg[0] == '.' && seg[1] == '.')) {
			why = "'.' and '..' segments are not allowed";
			goto bad;
		}
		if (n == 2 && seg[0] == '*' && seg[1] == '*')
			continue;
		if (memmem(seg, n, "**", 2)) {
			why = "'**' must be a whole segment";
			goto bad;
		}
		if (memchr(seg, '[', n) || memchr(seg, ']', n) || memchr(seg, '\\', n) ||
		    memchr(seg, '{', n) || memchr(seg, '}', n)) {
			why = "only '*', '?' and '**' are wildcards ('[', ']', '{', '}', '\\' "
			      "refused)";
			goto bad;
		}
	}
	return 0;
bad:
	if (ret_why)
		*ret_why = why;
	return -EINVAL;
}

/* Match one segment (no '/') against a segment pattern with '*' and '?':
 * the classic greedy star with one backtrack point, linear per attempt. */
static int seg_match(const char *pat, size_t plen, const char *s, size_t slen)
{
	size_t p = 0, i = 0, star_p = (size_t)-1, star_i = 0;

	while (i < slen) {
		if (p < plen && (pat[p] == '?' || pat[p] == s[i])) {
			p++;
			i++;
		} else if (p < plen && pat[p] == '*') {
			star_p = p++;
			star_i = i;
		} else if (star_p != (size_t)-1) {
			p = star_p + 1;
			i = ++star_i;
		} else {
			return 0;
		}
	}
	while (p < plen && pat[p] == '*')
		p++;
	return p == plen;
}

/* Split the next segment off *s (which points at '/' or NUL). */
static int next_seg(const char **s, const char **ret_seg, size_t *ret_len)
{
	const char *p = *s;
	if (*p != '/')
		return 0;
	p++;
	*ret_seg = p;
	while (*p && *p != '/')
		p++;
	*ret_len = (size_t)(p - *ret_seg);
	*s = p;
	return 1;
}

static int is_dstar(const char *seg, size_t n)
{
	return n == 2 && seg[0] == '*' && seg[1] == '*';
}

int cd_glob_match(const char *glob, const char *path)
{
	/* The same greedy-with-backtrack scheme as seg_match, one level up:
	 * "**" plays the star over whole segments. */
	const char *g = glob, *s = path, *star_g = NULL, *star_s = NULL;
	const char *gseg, *sseg;
	size_t glen, slen;

	if (!glob || !path || glob[0] != '/' || path[0] != '/')
		return 0;
	/* "/" as a glob or a path has no segments. */
	if (glob[1] == '\0')
		g = glob + 1;
	if (path[1] == '\0')
		s = path + 1;
	for (;;) {
		const char *s_save = s;
		int have_s = next_seg(&s, &sseg, &slen);
		int have_g;

		if (!have_s) {
			/* Path consumed: the rest of the glob must be "**". */
			while (next_seg(&g, &gseg, &glen))
				if (!is_dstar(gseg, glen))
					return 0;
			return 1;
		}
		have_g = next_seg(&g, &gseg, &glen);
		if (have_g && is_dstar(gseg, glen)) {
			star_g = g;
			star_s = s_save;
			s = s_save;
			continue;
		}
		if (have_g && seg_match(gseg, glen, sseg, slen))
			continue;
		if (!star_g)
			return 0;
		/* Let the last "**" swallow one more segment. */
		g = star_g;
		s = star_s;
		if (!next_seg(&s, &sseg, &slen))
			return 0;
		star_s = s;
	}
}

int cd_argv_prefix_match(const char *const *prefix, size_t nprefix, const char *const *argv,
                         size_t argc)
{
	size_t i;

	if (!prefix || nprefix == 0 || !argv || argc < nprefix)
		return 0;
	for (i = 0; i < nprefix; i++)
		if (!argv[i] || !prefix[i] || strcmp(argv[i], prefix[i]) != 0)
			return 0;
	return 1;
}

int cd_port_range_parse(const char *s, size_t len, struct cd_port_range *ret)
{
	const char *dash;
	uint64_t lo, hi;

	if (!s || !ret)
		return -EINVAL;
	dash = memchr(s, '-', len);
	if (dash) {
		if (cd_parse_u64(s, (size_t)(dash - s), 65535, &lo) < 0 ||
		    cd_parse_u64(dash + 1, len - (size_t)(dash - s) - 1, 65535, &hi) < 0)
			return -EINVAL;
	} else {
		if (cd_parse_u64(s, len, 65535, &lo) < 0)
			return -EINVAL;
		hi = lo;
	}
	if (lo == 0 || lo > hi)
		return -EINVAL;
	ret->lo = (uint16_t)lo;
	ret->hi = (uint16_t)hi;
	return 0;
}

int cd_port_match(const struct cd_port_range *ranges, size_t n, long port)
{
	size_t i;

	if (!ranges || port < 0 || port > 65535)
		return 0;
	for (i = 0; i < n; i++)
		if (port >= ranges[i].lo && port <= ranges[i].hi)
			return 1;
	return 0;
}

int cd_arg_rule_match(const struct cd_arg_rule *rule, const char *value)
{
	size_t i, n;

	if (!rule || !value || rule->nvalues == 0)
		return 0;
	switch (rule->op) {
	case CD_ARG_EQ:
		return strcmp(value, rule->values[0]) == 0;
	case CD_ARG_PREFIX:
		n = strlen(rule->values[0]);
		return strncmp(value, rule->values[0], n) == 0;
	case CD_ARG_ENUM:
		for (i = 0; i < rule->nvalues; i++)
			if (strcmp(value, rule->values[i]) == 0)
				return 1;
		return 0;
	}
	return 0;
}
