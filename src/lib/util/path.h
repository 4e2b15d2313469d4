/* path.h — lexical path handling shared by the plan builder and the
 * policy matchers.  Nothing here touches the filesystem except
 * cd_path_canonical() and cd_path_resolve_links(). */
#ifndef CD_PATH_H
#define CD_PATH_H

#include <stddef.h>

/* Normalize an absolute path lexically: collapse "//", drop "." and a
 * trailing "/", apply "..".  Returns -EINVAL for a relative or empty path
 * or one with a NUL, -EPERM when ".." would climb above "/" (an escape,
 * never silently clamped), -ENAMETOOLONG when it does not fit `outlen`. */
int cd_path_normalize(const char *in, char *out, size_t outlen);

/* Each directory a ".." of the absolute path `in` (as written, before
 * cd_path_normalize) is taken from, normalized, to fn: the kernel
 * resolves ".." where that directory really is (after its symlinks), so
 * whoever can replace it decides where the path leads.  0, or fn's
 * first nonzero answer. */
int cd_path_dotdot_dirs(const char *in, int (*fn)(void *arg, const char *dir), void *arg);

/* 1 when `path` is `dir` or below it (both normalized), else 0.  "/" is
 * above everything. */
int cd_path_is_under(const char *path, const char *dir);

/* Number of components: "/" is 0, "/a/b" is 2. */
size_t cd_path_depth(const char *path);

/* Resolve a host path (symlinks followed, must exist) into a canonical
 * absolute path; -errno on failure. */
int cd_path_canonical(const char *in, char *out, size_t outlen);

/* path (absolute) as the filesystem resolves it, into out: each symlink
 * on the way followed, a dangling one too (its target is where a file
 * made later lands), the part not there yet kept as it is.  -1 if it
 * cannot be told (more than 40 links, too long). */
int cd_path_resolve_links(const char *path, char *out, size_t outlen);

/* The same, calling each(arg, link) with the path of every symlink it
 * follows, before following it (a link inside a tree the sandbox writes
 * can be re-pointed: the caller may refuse it). */
int cd_path_resolve_links_each(const char *path, char *out, size_t outlen,
                               void (*each)(void *arg, const char *link), void *arg);

/* One entry of a search path ($PATH), n bytes at e, joined as the shell
 * takes it, not normalized (its ".." as written): "~" and "~/x" under
 * home, a relative entry under base.  0, or -1 (empty, no home for "~",
 * too long). */
int cd_path_search_join(const char *e, size_t n, const char *base, const char *home, char *out,
                        size_t outlen);

/* One entry of a search path ($PATH), n bytes at e, as a normalized
 * absolute path into out: "~" and "~/x" under home, a relative entry
 * under base (the shell searches it from where it is).  0, or -1 (empty,
 * no home for "~", too long). */
int cd_path_search_entry(const char *e, size_t n, const char *base, const char *home, char *out,
                         size_t outlen);

/* Is search-path entry e (n bytes) searched from the current directory:
 * empty, or neither absolute nor "~" / "~/x" ("~user/x" is: dash takes
 * it as written)?  1 or 0. */
int cd_path_search_relative(const char *e, size_t n);

#endif
