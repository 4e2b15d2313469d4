/* match.h — the typed matchers of the grant matrix: path globs on
 * canonical paths, argv prefixes token by token, port ranges and
 * named-argument constraints.  Hosts are in match-host.h.
 *
 * Trust boundary: patterns come from a policy file and are validated once,
 * at load, by the *_valid() functions; values come from agents and are
 * hostile: they are canonicalized (paths) or compared byte for byte, never
 * interpreted.  Nothing here allocates or touches the filesystem. */
#ifndef CD_MATCH_H
#define CD_MATCH_H

#include <stddef.h>
#include <stdint.h>

/* Canonicalize an absolute path lexically: "//" collapsed, "." dropped,
 * ".." applied, a trailing "/" dropped ("/" stays "/").  `in` is a
 * (pointer, length) view.  Returns the length of the result (written with
 * its NUL to `out`); -EINVAL for an empty or relative path or one holding
 * a NUL byte, -EPERM when ".." climbs above "/" (an escape is refused, never
 * clamped), -ENAMETOOLONG when the result does not fit `outlen`.  Symlinks
 * are not resolved: a caller that has a filesystem resolves them first. */
int cd_path_canon(const char *in, size_t len, char *out, size_t outlen);

/* Check a path glob as written in a policy: absolute and already canonical
 * (no "//", ".", ".." segments, no trailing "/"), each segment either "**"
 * or made of literal bytes, '*' (any bytes but '/') and '?' (one byte but
 * '/'); "[", "]", "\\" and "**" inside a segment are refused.  0 when
 * valid, -EINVAL otherwise (with a short reason in *ret_why when not NULL). */
int cd_glob_valid(const char *glob, const char **ret_why);

/* Check a profile's cover_files glob (len bytes at g), which the tree
 * walk matches with fnmatch(FNM_PATHNAME) against a file's name, or,
 * holding a '/', against its host path's last components: 1-255 bytes,
 * no "**" (fnmatch reads it as '*'), no "{a,b}" (no braces in fnmatch),
 * no empty component (a leading or trailing '/', "//") and no "." or
 * ".." one, each of which would load and match nothing.  0 when valid,
 * -EINVAL otherwise (with a short reason in *ret_why when not NULL). */
int cd_cover_glob_valid(const char *g, size_t len, const char **ret_why);

/* 1 when the canonical path matches the glob, else 0.  "**" matches zero or
 * more whole segments, so the glob /repo followed by a "**" segment matches
 * "/repo" and "/repo/a/b" but not "/repox" or "/".  Bytes compare exactly: case and Unicode look-alikes are
 * different paths.  Runs in O(len(glob) * len(path)) at worst. */
int cd_glob_match(const char *glob, const char *path);

/* 1 when argv starts with the tokens of `prefix`, each token equal byte for
 * byte ("git status" matches "git status -s" but not "git statusx" nor
 * "git push"), else 0.  An empty prefix never matches. */
int cd_argv_prefix_match(const char *const *prefix, size_t nprefix, const char *const *argv,
                         size_t argc);

/* An inclusive port range. */
struct cd_port_range {
	uint16_t lo, hi;
};

/* Parse "443" or "8000-8080" (1..65535, lo <= hi) from (s, len).  0 or
 * -EINVAL. */
int cd_port_range_parse(const char *s, size_t len, struct cd_port_range *ret);

/* 1 when port (0..65535) falls in one of the ranges, else 0. */
int cd_port_match(const struct cd_port_range *ranges, size_t n, long port);

/* A constraint on one named argument. */
enum cd_arg_op {
	CD_ARG_EQ,     /* the value equals one string */
	CD_ARG_PREFIX, /* the value starts with a string (byte for byte) */
	CD_ARG_ENUM,   /* the value equals one of several strings */
};

struct cd_arg_rule {
	char *name;
	enum cd_arg_op op;
	char **values; /* 1 for EQ and PREFIX, >= 1 for ENUM */
	size_t nvalues;
};

/* 1 when `value` satisfies the rule, else 0. */
int cd_arg_rule_match(const struct cd_arg_rule *rule, const char *value);

#endif
