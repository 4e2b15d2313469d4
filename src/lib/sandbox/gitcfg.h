/* gitcfg.h — the paths a git directory's own configuration and hooks
 * name, which the host's git runs or reads configuration from: the
 * directory core.hooksPath names, the files include.path and
 * includeIf.*.path pull in (followed: what they name counts too), the
 * tree scripts of commands git runs on its own (core.fsmonitor,
 * core.sshCommand, filter and diff drivers, credential helpers ...: each
 * word of the value with a '/'), and the target of a hook that is a
 * symlink.  The table of keys is in gitcfg.c.  Used by the tree walk
 * (read-only) and by --propose (flagged). */
#ifndef CD_GITCFG_H
#define CD_GITCFG_H

enum cd_git_named {
	CD_GIT_NAMED_DIR,    /* core.hooksPath: a directory of hooks */
	CD_GIT_NAMED_CONFIG, /* a configuration file git reads */
	CD_GIT_NAMED_RUN,    /* a file git runs (a command's script, a hook's target) */
};

/* Called with each named path (absolute, lexically normalized; it may
 * not exist).  Nonzero stops the listing and is returned. */
typedef int (*cd_git_named_fn)(void *arg, const char *path, enum cd_git_named kind);

/* The paths git directory `gd` (absolute) names through its config,
 * config.worktree, the caller's HOME/.gitconfig and HOME/.config/git/config
 * (home NULL: not read) and /etc/gitconfig (a relative core.hooksPath there is this
 * repository's too), their includes (10 deep, as git) and the symlinks in
 * its hooks directory and in the one core.hooksPath names.  Relative
 * commands and hooksPath are taken from the working tree's top (gd's
 * parent for a .git, core.worktree when set, else gd).  0 or fn's answer;
 * -E2BIG when the includes reach more than 256 files in all, -EFBIG when
 * a file is 1 MiB or more (what the rest would name is unknown), -ENOMEM.
 * A value "~/..." is the caller's home's (home NULL: not a path); a
 * config file read through a symlink has its target reported too. */
int cd_git_named_paths(const char *gd, const char *home, cd_git_named_fn fn, void *arg);

#endif
