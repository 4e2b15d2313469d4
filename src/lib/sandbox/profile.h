/* profile.h — named sandbox settings turned into plan options.
 *
 * A profile is a list of key/value settings, the same shape whether it is
 * built in (strict, workspace-write) or comes from a policy file's
 * `profiles:` (validated there by the policy loader): memory, pids,
 * timeout, cpu_time, output_limit, scratch_size, net, allow_hosts, ro, rw,
 * env, workspace, cover_files, image, rootfs.  This module applies them on top of the strict defaults;
 * it refuses what it cannot enforce (fail closed), e.g. `net: proxy` until
 * the egress proxy exists. */
#ifndef CD_PROFILE_H
#define CD_PROFILE_H

#include "util/err.h"
#include "util/limits.h"
#include "plan.h"
#include "policy/policy.h"

#define CD_PROFILE_MAX_ITEMS 64

struct cd_sandbox_profile {
	char name[64];
	struct cd_limits limits;
	int workspace_write; /* the working directory is writable, minus protected paths */
	const char *binds[CD_PROFILE_MAX_ITEMS]; /* "PATH[:DEST]", borrowed */
	int bind_rw[CD_PROFILE_MAX_ITEMS];
	size_t nbinds;
	const char *env[CD_PROFILE_MAX_ITEMS]; /* NAME or NAME=VALUE, borrowed */
	size_t nenv;
	/* Egress through cordon's proxy: HOST[:PORT] entries, borrowed (the
	 * front end checks each one as --allow-host would). */
	const char *allow_hosts[CD_PROFILE_MAX_ITEMS];
	size_t nallow;
	/* cover_files: globs of further credential files, borrowed */
	const char *cover_files[CD_PROFILE_MAX_ITEMS];
	size_t ncover;
	/* image: an image file (cordon run --image), rootfs: an unpacked
	 * root (--rootfs); absolute paths, borrowed; at most one of them. */
	const char *image, *rootfs;
};

/* The built-in profiles, by name: "strict" (the default) and
 * "workspace-write".  -ENOENT (with a message listing them) otherwise. */
int cd_profile_builtin(const char *name, struct cd_sandbox_profile *ret, struct cd_err *err);
/* The name of built-in profile i (0, 1, ...), NULL past the last. */
const char *cd_profile_builtin_name(size_t i);

/* Apply settings (borrowed: strings must outlive *p) on top of *p.
 * -CD_E_USAGE for an unknown key or bad value, naming it. */
int cd_profile_apply(struct cd_sandbox_profile *p, const struct cd_profile_setting *s, size_t n,
                     struct cd_err *err);

struct cd_arena;

/* Load a profile file: a YAML mapping of the settings above (scalars, or
 * sequences for ro, rw, env, allow_hosts), parsed strictly (duplicate keys,
 * anchors, tags refused) and applied on top of the strict defaults.
 * Strings live in `arena` (caller-owned, released with cd_arena_release
 * after *ret is no longer used).  Errors are "FILE:LINE:COL: message". */
int cd_profile_load_file(const char *path, struct cd_arena *arena, struct cd_sandbox_profile *ret,
                         struct cd_err *err);

/* Files and directories in a writable workspace that would run later on
 * the host (git hooks and config, CI definitions, editor tasks, shell rc
 * files, MCP client configs): kept read-only.  NULL-terminated. */
extern const char *const cd_protected_workspace_paths[];

/* Names the host runs or reads as configuration wherever they are (a
 * nested repository's .git, .envrc, editor and MCP client configs): kept
 * read-only at any depth of a writable tree.  NULL-terminated. */
extern const char *const cd_host_run_names[];

/* The same, for paths of two or three components matched as a path's
 * tail (.cargo/config.toml, .venv/bin/python).  NULL-terminated. */
extern const char *const cd_host_run_paths[];

/* Names the host runs through a tool the user starts (yarn PnP's
 * .pnp.cjs): reported after the run when written, flagged in --propose,
 * left writable.  NULL-terminated. */
extern const char *const cd_host_reported_names[];

/* Shared configs that run code only when they say so (a pylint
 * init-hook or load-plugins, mypy plugins: editors run them on opening
 * the project): read-only while cd_config_runs_code says so of their
 * content, reported when rewritten otherwise, flagged in --propose when
 * the new content does.  NULL-terminated; cd_config_run_name: one of
 * them? */
extern const char *const cd_config_run_names[];
int cd_config_run_name(const char *name);
int cd_config_runs_code(const char *buf, size_t n);

/* Inside a git directory (a repository's, a submodule's under
 * .git/modules, a worktree's): what git reads as configuration or runs.
 * NULL-terminated. */
extern const char *const cd_git_control_names[];

/* Credential files covered (empty) in every bound tree at any depth: a
 * name, "DIR/NAME" matched as the path's tail, or "*.EXT".  NULL-terminated. */
extern const char *const cd_credential_files[];

/* Directories whose every file is a credential (a cloud CLI's keys, its
 * config and token caches), covered at any depth; .env and .env.NAME
 * files (not the .example, .sample, .template copies) are credentials
 * too.  NULL-terminated. */
extern const char *const cd_credential_dirs[];

#endif
