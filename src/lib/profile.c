/* profile.c — see profile.h. */
#include "profile.h"

#include "num.h"
#include "util.h"

#include <errno.h>
#include <stdio.h>

const char *const cd_protected_workspace_paths[] = {
	".git/hooks", ".git/config",
	".git/info",  ".gitmodules",
	".github",    ".gitlab-ci.yml",
	".circleci",  ".envrc",
	".mcp.json",  ".vscode",
	".idea",      ".devcontainer",
	".husky",     ".pre-commit-config.yaml",
	".bashrc",    ".bash_profile",
	".profile",   ".zshrc",
	".npmrc",     ".pypirc",
	".cursor",    ".claude",
	NULL,
};

static const char *const one_write[] = { "write" };
static const struct cd_profile_setting workspace_write[] = {
	{ "workspace", one_write, 1 },
};

static const struct {
	const char *name;
	const struct cd_profile_setting *settings;
	size_t n;
} builtins[] = {
	{ "strict", NULL, 0 },
	{ "workspace-write", workspace_write, CD_ARRAY_SIZE(workspace_write) },
};

static int name_copy(struct cd_sandbox_profile *p, const char *name)
{
	int n = snprintf(p->name, sizeof p->name, "%s", name);
	return (n < 0 || (size_t)n >= sizeof p->name) ? -ENAMETOOLONG : 0;
}

int cd_profile_builtin(const char *name, struct cd_sandbox_profile *ret, struct cd_err *err)
{
	size_t i;

	memset(ret, 0, sizeof *ret);
	cd_limits_default(&ret->limits);
	for (i = 0; i < CD_ARRAY_SIZE(builtins); i++) {
		if (strcmp(name, builtins[i].name) == 0) {
			if (name_copy(ret, name) < 0)
				return cd_err_set(err, -ENAMETOOLONG, "profile name too long");
			return cd_profile_apply(ret, builtins[i].settings, builtins[i].n, err);
		}
	}
	return cd_err_set(err, -ENOENT,
	                  "unknown profile '%s' (built in: strict, workspace-write; or name a "
	                  "profile of the --policy file)",
	                  name);
}

static int one_value(const struct cd_profile_setting *s, struct cd_err *err)
{
	if (s->nvalues != 1 || !s->values[0])
		return cd_err_set(err, -CD_E_USAGE, "profile setting '%s' takes one value", s->key);
	return 0;
}

static int set_size(const struct cd_profile_setting *s, uint64_t *out, struct cd_err *err)
{
	if (one_value(s, err) < 0)
		return -CD_E_USAGE;
	if (cd_parse_size(s->values[0], 0, out) < 0)
		return cd_err_set(err, -CD_E_USAGE, "profile setting %s: '%s' is not a size",
		                  s->key, s->values[0]);
	return 0;
}

static int set_duration(const struct cd_profile_setting *s, uint64_t *out, struct cd_err *err)
{
	if (one_value(s, err) < 0)
		return -CD_E_USAGE;
	if (cd_parse_duration_ms(s->values[0], out) < 0)
		return cd_err_set(err, -CD_E_USAGE, "profile setting %s: '%s' is not a duration",
		                  s->key, s->values[0]);
	return 0;
}

static int add_binds(struct cd_sandbox_profile *p, const struct cd_profile_setting *s, int rw,
                     struct cd_err *err)
{
	size_t i;

	for (i = 0; i < s->nvalues; i++) {
		if (p->nbinds >= CD_PROFILE_MAX_ITEMS)
			return cd_err_set(err, -CD_E_LIMIT, "profile has too many binds");
		/* "PATH[:DEST]" stays one string; the front end splits it as it
		 * does for --ro/--rw. */
		p->binds[p->nbinds] = s->values[i];
		p->bind_rw[p->nbinds] = rw;
		p->nbinds++;
	}
	return 0;
}

int cd_profile_apply(struct cd_sandbox_profile *p, const struct cd_profile_setting *s, size_t n,
                     struct cd_err *err)
{
	size_t i, j;
	int r = 0;

	for (i = 0; i < n && r == 0; i++) {
		const char *k = s[i].key;
		uint64_t v;

		if (!strcmp(k, "memory")) {
			r = set_size(&s[i], &p->limits.memory, err);
		} else if (!strcmp(k, "output_limit")) {
			r = set_size(&s[i], &p->limits.output_limit, err);
		} else if (!strcmp(k, "scratch_size")) {
			r = set_size(&s[i], &p->limits.scratch_size, err);
		} else if (!strcmp(k, "timeout")) {
			r = set_duration(&s[i], &p->limits.timeout_ms, err);
		} else if (!strcmp(k, "cpu_time")) {
			r = set_duration(&s[i], &p->limits.cpu_ms, err);
		} else if (!strcmp(k, "pids")) {
			if ((r = one_value(&s[i], err)) == 0) {
				const char *x = s[i].values[0];
				if (cd_parse_u64(x, strlen(x), 1000000, &v) < 0 || v == 0)
					r = cd_err_set(
					        err, -CD_E_USAGE,
					        "profile setting pids: '%s' is not 1-1000000", x);
				else
					p->limits.pids = v;
			}
		} else if (!strcmp(k, "net")) {
			if ((r = one_value(&s[i], err)) == 0 && strcmp(s[i].values[0], "none") != 0)
				r = cd_err_set(err, -CD_E_USAGE,
				               "profile setting net: '%s' needs the egress proxy, "
				               "which this build does not have; only 'none' runs",
				               s[i].values[0]);
		} else if (!strcmp(k, "allow_hosts")) {
			if (s[i].nvalues > 0)
				r = cd_err_set(
				        err, -CD_E_USAGE,
				        "profile setting allow_hosts needs the egress proxy, "
				        "which this build does not have");
		} else if (!strcmp(k, "ro") || !strcmp(k, "rw")) {
			r = add_binds(p, &s[i], k[1] == 'w', err);
		} else if (!strcmp(k, "env")) {
			for (j = 0; j < s[i].nvalues && r == 0; j++) {
				if (p->nenv >= CD_PROFILE_MAX_ITEMS)
					r = cd_err_set(err, -CD_E_LIMIT,
					               "profile has too many env");
				else
					p->env[p->nenv++] = s[i].values[j];
			}
		} else if (!strcmp(k, "workspace")) {
			if ((r = one_value(&s[i], err)) == 0) {
				if (!strcmp(s[i].values[0], "write"))
					p->workspace_write = 1;
				else if (!strcmp(s[i].values[0], "read-only"))
					p->workspace_write = 0;
				else
					r = cd_err_set(err, -CD_E_USAGE,
					               "profile setting workspace: '%s' is not "
					               "read-only or write",
					               s[i].values[0]);
			}
		} else {
			r = cd_err_set(err, -CD_E_USAGE, "unknown profile setting '%s'", k);
		}
	}
	return r;
}
