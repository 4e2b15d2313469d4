/* profile.c — see profile.h. */
#include "profile.h"

#include "util/match.h"
#include "util/num.h"
#include "policy/policy-yaml.h"
#include "util/util.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

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

const char *const cd_host_run_names[] = {
	".git",
	".gitmodules",
	".gitattributes",
	".github",
	".gitlab-ci.yml",
	".circleci",
	".envrc",
	".mcp.json",
	".vscode",
	".idea",
	".devcontainer",
	".husky",
	".pre-commit-config.yaml",
	".cursor",
	".claude",
	".npmrc",              /* node-options, script-shell: run by any npm command */
	".yarnrc",             /* yarn-path: the yarn that runs */
	".yarnrc.yml",         /* yarnPath, plugins: the same for yarn 2+ */
	".pnpmfile.cjs",       /* pnpm's install hooks */
	".pnpmfile.mjs",       /* ... */
	".pnpmfile.js",        /* ... */
	"bunfig.toml",         /* bun: preload scripts */
	".mvn",                /* extensions.xml, jvm.config, wrapper/ (the maven mvnw runs) */
	"lefthook.yml",        /* the commands lefthook's git hooks run */
	"lefthook.yaml",       /* ... */
	".lefthook.yml",       /* ... */
	".lefthook.yaml",      /* ... */
	"lefthook-local.yml",  /* ... */
	"mise.toml",           /* mise: env, tasks and hooks run on entering the directory */
	".mise.toml",          /* ... */
	"mise.local.toml",     /* ... */
	".mise.local.toml",    /* ... */
	".nvim.lua",           /* neovim's exrc */
	".nvimrc",             /* ... */
	".exrc",               /* vim's and neovim's exrc */
	".vimrc",              /* ... read by vim's exrc too */
	"gradle.properties",   /* org.gradle.jvmargs: the JVM any gradle command starts */
	".pdbrc",              /* python's pdb runs its lines: breakpoint(), pytest --pdb */
	"pyvenv.cfg",          /* a virtualenv's home =: where its python loads the stdlib */
	".pylintrc",           /* init-hook, load-plugins: run by editors on open */
	"pylintrc",            /* ... */
	"mypy.ini",            /* plugins = : run by editors on open */
	".mypy.ini",           /* ... */
	"pylintrc.toml",       /* ... pylint's TOML forms */
	".pylintrc.toml",      /* ... */
	"eslint.config.js",    /* the editor's ESLint runs it on open (trusted workspace) */
	"eslint.config.mjs",   /* ... */
	"eslint.config.cjs",   /* ... */
	"eslint.config.ts",    /* ... */
	".eslintrc.js",        /* ... its older names */
	".eslintrc.cjs",       /* ... */
	"prettier.config.js",  /* the editor's Prettier runs it on open and on save */
	"prettier.config.mjs", /* ... */
	"prettier.config.cjs", /* ... */
	".prettierrc.js",      /* ... */
	".prettierrc.cjs",     /* ... */
	".prettierrc.mjs",     /* ... */
	".rubocop.yml",        /* require: the same for ruby */
	".irbrc",              /* irb loads the working directory's */
	".pryrc",              /* ... pry */
	".Rprofile",           /* R runs the working directory's at start */
	".Renviron",           /* ... R_PROFILE_USER and friends */
	".ghci",               /* ghci runs the working directory's */
	".octaverc",           /* octave runs the working directory's */
	".dir-locals.el",      /* emacs' directory variables (eval:) */
	".devcontainer.json",  /* initializeCommand runs on the host */
	"ansible.cfg",         /* vault_password_file, plugin paths: read from the cwd */
	"rust-toolchain",      /* rustup: a toolchain path inside the tree */
	"rust-toolchain.toml", /* ... */
	".bazelrc",            /* bazel: startup options, a --host_jvm_args or a wrapper */
	".jvmopts",            /* sbt: the JVM's options */
	".sbtopts",            /* ... */
	".tool-versions",      /* asdf and mise: the tools (and plugins) that run */
	".lldbinit",           /* lldb's local init file */
	NULL,
};

/* Keep tree-names.c's first-letter filter (cd_tree_host_run_path) in step:
 * the last components here start with one of "acghmprsA".  A virtualenv is
 * matched by its bin/ entries whatever the environment's directory is
 * called (venv/, env/, .venv/ ...); its pyvenv.cfg is a host-run name.
 * The rest of a virtualenv's bin/ (one with a pyvenv.cfg beside it: read
 * only whole) and a site directory's *.pth and sitecustomize files are
 * matched in code (tree-names.c, cd_tree_python_run). */
const char *const cd_host_run_paths[] = {
	".cargo/config.toml", /* build.rustc-wrapper, target runners: run by any cargo command */
	".cargo/config",      /* ... its older name */
	".config/mise.toml",  /* mise */
	".mise/config.toml",  /* ... */
	"bin/python",         /* what editors run to find a virtualenv's interpreter */
	"bin/python3",        /* ... */
	"bin/python3.9",      /* ... and its versioned names */
	"bin/python3.10",     /* ... */
	"bin/python3.11",     /* ... */
	"bin/python3.12",     /* ... */
	"bin/python3.13",     /* ... */
	"bin/python3.14",     /* ... */
	"bin/activate",       /* what the shell sources */
	"bin/activate.fish",  /* ... fish's */
	"bin/activate.csh",   /* ... csh's */
	"bin/Activate.ps1",   /* ... PowerShell's */
	".hg/hgrc",           /* mercurial: [hooks] and [extensions] run on any hg command */
	"gradle/wrapper/gradle-wrapper.properties", /* distributionUrl: the gradle gradlew runs */
	"gradle/wrapper/gradle-wrapper.jar",        /* what gradlew runs: a binary no diff shows */
	".yarn/releases", /* the yarn that yarnPath names: run by any yarn command (corepack) */
	".yarn/plugins",  /* the plugins .yarnrc.yml loads: run by any yarn command too */
	".yarn/sdks",     /* what .vscode/settings.json's typescript.tsdk and eslint.nodePath
	                   * make the editor run on open */
	NULL,
};

/* Yarn PnP's loader, which every `yarn run`/`yarn node` requires and the
 * .yarn/sdks wrappers load: not read-only (yarn install rewrites it, and
 * the sandbox may install), but reported after the run when written and
 * flagged in --propose.  Matched at any depth by name. */
const char *const cd_host_reported_names[] = {
	".pnp.cjs",
	".pnp.loader.mjs",
	".pnp.js",
	NULL,
};

const char *const cd_config_run_names[] = { "pyproject.toml", "setup.cfg", "tox.ini", NULL };

int cd_config_run_name(const char *name)
{
	size_t i;

	if (name[0] != 'p' && name[0] != 's' && name[0] != 't')
		return 0;
	for (i = 0; cd_config_run_names[i]; i++) {
		if (!strcmp(name, cd_config_run_names[i]))
			return 1;
	}
	return 0;
}

/* pylint's init-hook and load-plugins (either spelling), and mypy's
 * plugins: a line starting "plugins" in a file that mentions mypy. */
int cd_config_runs_code(const char *buf, size_t n)
{
	static const char *const keys[] = { "init-hook", "init_hook", "load-plugins",
		                            "load_plugins", NULL };
	const char *p, *end = buf + n;
	size_t i;

	for (i = 0; keys[i]; i++) {
		if (memmem(buf, n, keys[i], strlen(keys[i])))
			return 1;
	}
	if (!memmem(buf, n, "mypy", 4))
		return 0;
	for (p = buf; (p = memmem(p, (size_t)(end - p), "plugins", 7)); p += 7) {
		const char *q = p;

		while (q > buf && (q[-1] == ' ' || q[-1] == '\t'))
			q--;
		if (q == buf || q[-1] == '\n')
			return 1;
	}
	return 0;
}

const char *const cd_git_control_names[] = {
	"config", "config.worktree", "hooks", "info", "worktrees", "commondir", NULL,
};

/* A "*.EXT" matches a name ending in .EXT, in any case (a.PPK); a
 * "*WORD*" a name holding WORD, in any case, but source code and docs
 * (tree-creds.c).
 * Private keys: by their usual names, any *.key (gpg's private-keys-v1.d
 * among them), a *.pem, *.crt, *.cer or *.asc that holds a PRIVATE KEY
 * block (a certificate stays readable; tree-creds.c looks inside), and any file at any
 * depth below a .ssh directory but public keys, known_hosts, authorized_keys and config. */
const char *const cd_credential_files[] = {
	".netrc",
	".git-credentials",
	".config/git/credentials", /* git credential-store's XDG file: the same secret */
	".npmrc",
	".pypirc",
	".pgpass",
	".docker/config.json",
	".kube/config",
	".aws/credentials",
	".aws/config", /* credential_process, sso sessions */
	".config/gh/hosts.yml",
	".cargo/credentials",
	".cargo/credentials.toml",
	"id_rsa",
	"id_dsa",
	"id_ecdsa",
	"id_ed25519",
	"id_ecdsa_sk",
	"id_ed25519_sk",
	"*.key",
	"*.p12",                              /* PKCS#12 key stores */
	"*.pfx",                              /* ... */
	"*.jks",                              /* java key stores */
	"*.keystore",                         /* ... android's and java's other name */
	"*.p8",                               /* PKCS#8 private keys (Apple's AuthKey_ID.p8) */
	"*.ppk",                              /* PuTTY's private keys */
	"*kubeconfig*",                       /* a cluster's credentials outside .kube/ */
	"*.tfvars",                           /* terraform variables: the secrets passed in */
	"*.tfvars.json",                      /* ... in their JSON form */
	"*.tfstate",                          /* terraform state: every resource's secrets */
	"*.tfstate.backup",                   /* ... */
	".my.cnf",                            /* mysql's password */
	".vault-token",                       /* hashicorp vault */
	".s3cfg",                             /* s3cmd's keys */
	".boto",                              /* gsutil's and boto's keys */
	".databrickscfg",                     /* databricks tokens */
	".htpasswd",                          /* password hashes */
	"client_secret.json",                 /* an OAuth client's secret */
	".gem/credentials",                   /* rubygems' API key */
	".m2/settings.xml",                   /* maven's server passwords */
	".composer/auth.json",                /* composer's tokens */
	".pulumi/credentials.json",           /* pulumi's tokens */
	".terraform.d/credentials.tfrc.json", /* terraform cloud's tokens */
	NULL,
};

const char *const cd_credential_dirs[] = {
	".aws",
	".azure",
	".config/gcloud",
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

const char *cd_profile_builtin_name(size_t i)
{
	return i < CD_ARRAY_SIZE(builtins) ? builtins[i].name : NULL;
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
	const char *why;
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
			/* none: loopback only; proxy: cordon's egress proxy, which
			 * reaches allow_hosts only (none listed: nothing). */
			if ((r = one_value(&s[i], err)) == 0 &&
			    strcmp(s[i].values[0], "none") != 0 &&
			    strcmp(s[i].values[0], "proxy") != 0)
				r = cd_err_set(err, -CD_E_USAGE,
				               "profile setting net: '%s' is not none or proxy",
				               s[i].values[0]);
		} else if (!strcmp(k, "allow_hosts")) {
			for (j = 0; j < s[i].nvalues && r == 0; j++) {
				if (p->nallow >= CD_PROFILE_MAX_ITEMS)
					r = cd_err_set(err, -CD_E_LIMIT,
					               "profile has too many allow_hosts");
				else
					p->allow_hosts[p->nallow++] = s[i].values[j];
			}
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
		} else if (!strcmp(k, "image") || !strcmp(k, "rootfs")) {
			if ((r = one_value(&s[i], err)) == 0 && s[i].values[0][0] != '/')
				r = cd_err_set(err, -CD_E_USAGE,
				               "profile setting %s: '%s' is not an absolute path",
				               k, s[i].values[0]);
			else if (r == 0 && (k[0] == 'i' ? p->rootfs : p->image))
				r = cd_err_set(
				        err, -CD_E_USAGE,
				        "profile settings image and rootfs exclude each other");
			else if (r == 0 && k[0] == 'i')
				p->image = s[i].values[0];
			else if (r == 0)
				p->rootfs = s[i].values[0];
		} else if (!strcmp(k, "cover_files")) {
			for (j = 0; j < s[i].nvalues && r == 0; j++) {
				if (p->ncover >= CD_PROFILE_MAX_ITEMS)
					r = cd_err_set(err, -CD_E_LIMIT,
					               "profile has too many cover_files");
				else if (!s[i].values[j][0])
					r = cd_err_set(err, -CD_E_USAGE,
					               "profile setting cover_files: empty glob");
				else if (strstr(s[i].values[j], "**"))
					r = cd_err_set(err, -CD_E_USAGE,
					               "profile setting cover_files: '%s': '**' is "
					               "not supported ('*' stays within one "
					               "directory; a glob without '/', such as "
					               "'*.tok', matches that name at any depth)",
					               s[i].values[j]);
				else if (cd_cover_glob_valid(s[i].values[j], strlen(s[i].values[j]),
				                             &why) < 0)
					r = cd_err_set(err, -CD_E_USAGE,
					               "profile setting cover_files: '%s': %s",
					               s[i].values[j], why);
				else
					p->cover_files[p->ncover++] = s[i].values[j];
			}
		} else {
			r = cd_err_set(err, -CD_E_USAGE, "unknown profile setting '%s'", k);
		}
	}
	return r;
}

#define PROFILE_FILE_MAX (64 * 1024)

static int read_small(const char *path, char **ret, size_t *ret_len, struct cd_err *err)
{
	struct stat st;
	char *buf;
	size_t got = 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);

	if (fd < 0)
		return cd_err_sys(err, -errno, "profile '%s'", path);
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_size > PROFILE_FILE_MAX) {
		close(fd);
		return cd_err_set(err, -CD_E_USAGE,
		                  "profile '%s': not a regular file of at most %d bytes", path,
		                  PROFILE_FILE_MAX);
	}
	buf = malloc((size_t)st.st_size + 1);
	if (!buf) {
		close(fd);
		return cd_err_set(err, -ENOMEM, "out of memory");
	}
	while (got < (size_t)st.st_size) {
		ssize_t n = read(fd, buf + got, (size_t)st.st_size - got);
		if (n <= 0)
			break;
		got += (size_t)n;
	}
	close(fd);
	buf[got] = '\0';
	*ret = buf;
	*ret_len = got;
	return 0;
}

int cd_profile_load_file(const char *path, struct cd_arena *arena, struct cd_sandbox_profile *ret,
                         struct cd_err *err)
{
	struct cd_profile_setting *set;
	struct cd_ynode *root = NULL, *k;
	const char *base;
	char *data = NULL;
	size_t len = 0, n = 0;
	int r;

	if ((r = cd_profile_builtin("strict", ret, err)) < 0)
		return r;
	if ((r = read_small(path, &data, &len, err)) < 0)
		return r;
	r = cd_yaml_parse(arena, path, data, len, &root, err);
	free(data);
	if (r < 0)
		return r;
	if (root->type != CD_Y_MAP)
		return cd_err_set(err, -CD_E_PARSE, "%s:%u:%u: a profile is a mapping of settings",
		                  path, root->mark.line, root->mark.col);
	set = cd_arena_alloc(arena, (root->n / 2 + 1) * sizeof *set);
	if (!set)
		return cd_err_set(err, -ENOMEM, "out of memory");
	for (k = root->child; k; k = k->next->next) {
		const struct cd_ynode *v = k->next, *item;
		const char **vals;
		size_t i = 0;

		if (v->type == CD_Y_MAP)
			return cd_err_set(err, -CD_E_PARSE,
			                  "%s:%u:%u: setting '%s' takes a value or a list", path,
			                  v->mark.line, v->mark.col, k->s);
		vals = cd_arena_alloc(arena, (v->type == CD_Y_SEQ ? v->n : 1) * sizeof *vals + 1);
		if (!vals)
			return cd_err_set(err, -ENOMEM, "out of memory");
		if (v->type == CD_Y_SCALAR) {
			vals[i++] = v->s;
		} else {
			for (item = v->child; item; item = item->next) {
				if (item->type != CD_Y_SCALAR)
					return cd_err_set(err, -CD_E_PARSE,
					                  "%s:%u:%u: '%s' lists values only", path,
					                  item->mark.line, item->mark.col, k->s);
				vals[i++] = item->s;
			}
		}
		set[n].key = k->s;
		set[n].values = vals;
		set[n].nvalues = i;
		n++;
		/* Apply one at a time so an error can name its line. */
		if ((r = cd_profile_apply(ret, &set[n - 1], 1, err)) < 0)
			return cd_err_prefix(err, "%s:%u:%u: ", path, k->mark.line, k->mark.col);
	}
	base = strrchr(path, '/');
	base = base ? base + 1 : path;
	if (snprintf(ret->name, sizeof ret->name, "%s", base) < 0)
		ret->name[0] = '\0';
	return 0;
}
