/* envrc.h — what a direnv .envrc names, which the host's shell runs on
 * every cd into its directory (direnv allows an .envrc by its own content
 * only): the files it sources or evaluates (source_env, use nix, use
 * flake) and the directories it puts on a search path (PATH_add,
 * path_add, *PATH= assignments, load_prefix, layout), where the user's
 * shell runs what is there by name.  Read as direnv's stdlib writes them,
 * line by line; other shell is not followed (docs/threats.md).  Used by
 * the tree walk (read-only) and by --propose (flagged). */
#ifndef CD_ENVRC_H
#define CD_ENVRC_H

#include <stddef.h>

enum cd_envrc_named {
	CD_ENVRC_RUN, /* a file it runs or evaluates */
	CD_ENVRC_DIR, /* a directory on a search path: whole */
	CD_ENVRC_WAY, /* a directory a ".." of such a path is taken from */
};

/* Called with each named path (absolute, lexically normalized; it may
 * not exist).  Nonzero stops the reading and is returned. */
typedef int (*cd_envrc_named_fn)(void *arg, const char *path, enum cd_envrc_named kind);

/* The paths the .envrc buf (n bytes, untrusted) in directory dir
 * (absolute, normalized) names: "$PWD/x" and "${PWD}/x" are dir's, a
 * relative one is taken from dir, another "$VAR" or "~" names nothing.
 * 0, fn's answer, or -ENOMEM. */
int cd_envrc_named_paths(const char *buf, size_t n, const char *dir, cd_envrc_named_fn fn,
                         void *arg);

#endif
