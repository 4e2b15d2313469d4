/* gitcfg.h — the paths a git directory's own configuration and hooks
 * name, which the host's git runs or reads configuration from: the
 * directory core.hooksPath names, the files include.path and
 * includeIf.*.path pull in (followed: what they name counts too), the
 * tree scripts of commands git runs on its own (core.fsmonitor,
 * core.sshCommand, filter and diff drivers, credential helpers ...: each
 * word of the value with a '/'), and the target of a hook that is a
 * symlink.  The table of keys is in gitcfg.c.  Used by the tree walk
 * (read-only) and by --propose (flagged), for every repository in a
 * writable tree and for the one the tree lies in (its .git above). */
#ifndef CD_GITCFG_H
#define CD_GITCFG_H

enum cd_git_named {
	CD_GIT_NAMED_DIR,    /* core.hooksPath: a directory of hooks */
	CD_GIT_NAMED_CONFIG, /* a configuration file git reads */
	CD_GIT_NAMED_RUN,    /* a file git runs (a command's script, a hook's target) */
	CD_GIT_NAMED_WAY,    /* a directory a ".." of such a path is taken from */
};

/* Called with each named path (absolute, lexically normalized; it may
 * not exist).  Nonzero stops the listing and is returned. */
typedef int (*cd_git_named_fn)(void *arg, const char *path, enum cd_git_named kind);

/* Where the host's git looks for configuration besides the repository's
 * own, as the caller's environment says now (a later shell may differ:
 * each file named here is read in addition to the default one, never
 * instead of it, so what is kept read-only only widens).  NULL: unset. */
struct cd_git_env {
	const char *home;            /* $HOME: ~/.gitconfig, ~/.config/git/config, "~/" values */
	const char *xdg_config_home; /* $XDG_CONFIG_HOME: its git/config */
	const char *global;          /* $GIT_CONFIG_GLOBAL */
	const char *system;          /* $GIT_CONFIG_SYSTEM (besides /etc/gitconfig) */
	const char *template_dir;    /* $GIT_TEMPLATE_DIR: every clone's and init's hooks */
};

/* The paths git directory `gd` (absolute) names through its
 * configuration: the repository's (its commondir's config when gd is a
 * linked worktree's git directory, and gd's config.worktree), the
 * caller's global ones and the system's (env; NULL: only
 * /etc/gitconfig; a relative core.hooksPath there is this repository's
 * too), their includes (10 deep, as git), and the symlinks in the hooks
 * directory (the commondir's) and in the one core.hooksPath names.
 * Relative commands and hooksPath are taken from the working tree's top:
 * core.worktree when set, else `top` (NULL: gd's parent for a .git, else
 * gd).  0 or fn's answer; -E2BIG when the includes reach more than 256
 * files in all, -EFBIG when a file is 1 MiB or more (what the rest would
 * name is unknown), -ENOMEM.  A value "~/..." is the caller's home's (no
 * home: not a path); a config file read through a symlink has its target
 * reported too, as are the system's and the caller's files themselves.
 * gd NULL: no repository, only those (their absolute and ~/ paths). */
int cd_git_named_paths(const char *gd, const char *top, const struct cd_git_env *env,
                       cd_git_named_fn fn, void *arg);

/* The git directory a .git file names ("gitdir: PATH", relative to the
 * file's directory), resolved (symlinks followed) into gd (CD_PATH_MAX).
 * 1, or 0 when git would find no repository through it. */
int cd_git_file_target(const char *file, char *gd);

/* The repository git finds from `dir` (absolute: dir itself, then each
 * directory above it up to the root): a .git directory, the one a .git
 * file names, or a directory that is a git directory itself (bare).
 * Its git directory into gd and the working tree's top into top (both
 * CD_PATH_MAX; top is gd for a bare one).  1 found, 0 none.  Wider than
 * git (no ceiling, crosses filesystems): the host's git may be run with
 * other settings. */
int cd_git_discover(const char *dir, char *gd, char *top);

#endif
