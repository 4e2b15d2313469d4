/* gitcfg.c — see gitcfg.h.  A reader of git's configuration syntax
 * (sections, subsections, quoting, escapes, continued lines, comments)
 * wide enough for the keys below; what it misreads only widens what is
 * kept read-only. */
#include "gitcfg.h"
#include "profile.h"

#include "util/bounds.h"
#include "util/path.h"
#include "util/util.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define GITCFG_READ_MAX  (1024 * 1024) /* of one config file: a larger one refuses */
#define GITCFG_DEPTH     10            /* includes, as git's own limit */
#define GITCFG_VALUE_MAX 4096
#define GITCFG_NAME_MAX  64
#define GITCFG_HOOKS_MAX 1000 /* entries of a hooks directory looked at */
/* config files read in all (includes fan out: 20 includes of a file
 * that includes itself 20 times, 10 deep, is 20^10 reads) */
#define GITCFG_FILES_MAX 256

/* The keys whose value names a path git runs or reads configuration
 * from, on its own or on a command a tool (an editor's git view, a
 * prompt) runs for the user: section, key (NULL: any key of the
 * section), what the value names.  Subsections are not compared
 * (diff.<driver>.textconv, credential.<url>.helper, gpg.<format>.program). */
static const struct {
	const char *section, *key;
	enum cd_git_named kind;
} named_keys[] = {
	{ "core", "hookspath", CD_GIT_NAMED_DIR },         /* every hook */
	{ "include", "path", CD_GIT_NAMED_CONFIG },        /* more config */
	{ "includeif", "path", CD_GIT_NAMED_CONFIG },      /* ... when its condition holds */
	{ "core", "attributesfile", CD_GIT_NAMED_CONFIG }, /* which drivers run on which files */
	{ "core", "fsmonitor", CD_GIT_NAMED_RUN },         /* git status, any index refresh */
	{ "core", "sshcommand", CD_GIT_NAMED_RUN },        /* fetch (an editor's auto-fetch) */
	{ "core", "gitproxy", CD_GIT_NAMED_RUN },          /* git:// fetch */
	{ "core", "pager", CD_GIT_NAMED_RUN },             /* log, diff, show */
	{ "core", "editor", CD_GIT_NAMED_RUN },            /* commit */
	{ "core", "askpass", CD_GIT_NAMED_RUN },           /* any prompt */
	{ "sequence", "editor", CD_GIT_NAMED_RUN },        /* rebase -i */
	{ "pager", NULL, CD_GIT_NAMED_RUN },               /* pager.<command> */
	{ "diff", "external", CD_GIT_NAMED_RUN },          /* diff */
	{ "diff", "command", CD_GIT_NAMED_RUN },           /* diff.<driver>.command */
	{ "diff", "textconv", CD_GIT_NAMED_RUN },          /* ... textconv */
	{ "filter", "clean", CD_GIT_NAMED_RUN },           /* add, status */
	{ "filter", "smudge", CD_GIT_NAMED_RUN },          /* checkout */
	{ "filter", "process", CD_GIT_NAMED_RUN },         /* both */
	{ "merge", "driver", CD_GIT_NAMED_RUN },           /* merge, rebase, pull */
	{ "credential", "helper", CD_GIT_NAMED_RUN },      /* fetch, push */
	{ "gpg", "program", CD_GIT_NAMED_RUN }, /* commit.gpgSign, log --show-signature */
	{ "uploadpack", "packobjectshook", CD_GIT_NAMED_RUN }, /* a local clone or fetch */
	{ "remote", "uploadpack", CD_GIT_NAMED_RUN },          /* fetch */
	{ "remote", "receivepack", CD_GIT_NAMED_RUN },         /* push */
	{ "interactive", "difffilter", CD_GIT_NAMED_RUN },     /* add -p */
	{ "alias", NULL, CD_GIT_NAMED_RUN },                   /* "!cmd" aliases */
	{ "difftool", "cmd", CD_GIT_NAMED_RUN },               /* difftool.<tool>.cmd */
	{ "difftool", "path", CD_GIT_NAMED_RUN },
	{ "mergetool", "cmd", CD_GIT_NAMED_RUN },
	{ "mergetool", "path", CD_GIT_NAMED_RUN },
	{ "submodule", "update", CD_GIT_NAMED_RUN }, /* "!cmd": submodule update */
	{ "trailer", "cmd", CD_GIT_NAMED_RUN },      /* commit --trailer */
	{ "trailer", "command", CD_GIT_NAMED_RUN },
	{ "gpg", "defaultkeycommand", CD_GIT_NAMED_RUN }, /* gpg.ssh.defaultKeyCommand */
	{ "gpg", "allowedsignersfile", CD_GIT_NAMED_CONFIG },
	{ "sendemail", NULL, CD_GIT_NAMED_RUN },     /* smtpServer, toCmd, ccCmd, headerCmd */
	{ "lfs", NULL, CD_GIT_NAMED_RUN },           /* customtransfer.*.path, extension.*.clean */
	{ "browser", NULL, CD_GIT_NAMED_RUN },       /* browser.<tool>.cmd/path (help -w) */
	{ "man", NULL, CD_GIT_NAMED_RUN },           /* man.<tool>.cmd/path */
	{ "hook", "command", CD_GIT_NAMED_RUN },     /* hook.<name>.command (git 2.54) */
	{ "init", "templatedir", CD_GIT_NAMED_DIR }, /* hooks and config of every clone, init */
};

struct ctx {
	cd_git_named_fn fn;
	void *arg;
	char top[CD_PATH_MAX];   /* where git runs commands and hooks */
	char hooks[CD_PATH_MAX]; /* core.hooksPath, resolved ("" if unset) */
	char worktree[CD_PATH_MAX];
	const char *home; /* the caller's, for ~/ (NULL: such values are not paths) */
	int pass;         /* 0: core.worktree only, 1: the named paths */
	size_t files;     /* config files opened so far (GITCFG_FILES_MAX) */
	int stop;         /* fn's nonzero answer for a ".." directory (CD_GIT_NAMED_WAY) */
	char gd[CD_PATH_MAX], common[CD_PATH_MAX]; /* the git directory, its commondir */
};

/* Is dir the git directory gd itself or one of its control paths (an
 * include "../.gitconfig" of its config, a hook linked as
 * ../../scripts/x)?  The walk pins those (read-only, mount points the
 * sandbox cannot rename or replace): a ".." from them stays put. */
static int pinned_in_gd(const char *gd, const char *dir)
{
	size_t gl = strlen(gd), i, cl;

	if (!gl || !cd_path_is_under(dir, gd))
		return 0;
	if (!dir[gl])
		return 1;
	cl = strcspn(dir + gl + 1, "/");
	for (i = 0; cd_git_control_names[i]; i++) {
		if (strlen(cd_git_control_names[i]) == cl &&
		    !memcmp(dir + gl + 1, cd_git_control_names[i], cl))
			return 1;
	}
	return 0;
}

/* A directory a ".." of a path is taken from: to fn, whose first
 * nonzero answer ends the listing (cd_git_named_paths returns it). */
static int way_found(void *arg, const char *dir)
{
	struct ctx *c = arg;

	if (!c->stop && !pinned_in_gd(c->gd, dir) && !pinned_in_gd(c->common, dir))
		c->stop = c->fn(c->arg, dir, CD_GIT_NAMED_WAY);
	return 0;
}

/* v, relative to base (or absolute; ~/ the caller's home, as git expands
 * it; a leading ":(optional)" dropped), normalized into out.  -1 if git
 * would not take it as a path here (empty, ~user, %(prefix), no home
 * known, relative with base "", too long).  Each directory a ".." in it
 * is taken from goes to fn first (way_found). */
static int resolve(struct ctx *c, const char *base, const char *v, char *out)
{
	char tmp[CD_PATH_MAX];
	int n;

	if (!strncmp(v, ":(optional)", 11))
		v += 11; /* git 2.52: a path that may be missing */
	if (!v[0] || v[0] == '%' ||
	    (v[0] == '~' && (v[1] != '/' || !c->home || c->home[0] != '/')) ||
	    (v[0] != '/' && v[0] != '~' && !base[0]))
		return -1; /* relative, with no repository to be relative to */
	if (v[0] == '~')
		n = snprintf(tmp, sizeof tmp, "%s%s", c->home, v + 1);
	else
		n = v[0] == '/' ? snprintf(tmp, sizeof tmp, "%s", v)
		                : snprintf(tmp, sizeof tmp, "%s/%s", base, v);
	if (n < 0 || (size_t)n >= sizeof tmp)
		return -1;
	(void)cd_path_dotdot_dirs(tmp, way_found, c); /* git takes ".." on disk */
	return cd_path_normalize(tmp, out, CD_PATH_MAX) < 0 ? -1 : 0;
}

static int parse_file(struct ctx *c, const char *file, unsigned depth);

/* path to the caller, and again as the filesystem resolves it when that
 * differs (~/dotfiles -> ~/src/dotfiles: a tree met by its real path
 * holds what the lexical one names; a dangling link's target too). */
static int report(struct ctx *c, const char *path, enum cd_git_named kind)
{
	char out[CD_PATH_MAX];
	int r;

	if ((r = c->fn(c->arg, path, kind)) != 0)
		return r;
	if (cd_path_resolve_links(path, out, sizeof out) < 0 || !strcmp(out, path))
		return 0;
	return c->fn(c->arg, out, kind);
}

/* A shell operator starting at v (; & | ( ) { } ` $( < >): a new simple
 * command follows (redirections too, erring toward a first word). */
static int is_operator(const char *v)
{
	return strchr(";&|(){}`<>", *v) || (v[0] == '$' && v[1] == '(');
}

#define CMD_BASES 8 /* directories a command's words are taken from */
#define CMD_DEPTH 2 /* quoted commands read again (sh -c '...') */

/* What command_words knows while it reads one value. */
struct cmd {
	struct ctx *c;
	char base[CMD_BASES][CD_PATH_MAX]; /* the top, then each cd DIR, -C DIR */
	size_t nbase;
};

#define SUBST_MAX 256 /* bytes of a $(...) read for what it prints */

/* Does the command inside a $(...) or `...` (v, n bytes) print the
 * directory git runs commands in: pwd, pwd -P, /bin/pwd, builtin pwd,
 * git rev-parse --show-toplevel, each with redirections (2>/dev/null)? */
static int subst_is_top(const char *v, size_t n)
{
	char w[8][32];
	size_t nw = 0, i = 0, wl;

	while (i < n && nw < CD_ARRAY_SIZE(w)) {
		while (i < n && (v[i] == ' ' || v[i] == '\t'))
			i++;
		for (wl = 0; i < n && v[i] != ' ' && v[i] != '\t'; i++) {
			if (wl >= sizeof w[0] - 1)
				return 0;
			w[nw][wl++] = v[i];
		}
		w[nw][wl] = '\0';
		if (!wl)
			break;
		/* a redirection: 2>/dev/null, >x, 2>&1; "2>" takes the next word */
		if (strspn(w[nw], "0123456789") < wl &&
		    strchr("<>", w[nw][strspn(w[nw], "0123456789")])) {
			if (w[nw][wl - 1] == '>' || w[nw][wl - 1] == '<') {
				while (i < n && (v[i] == ' ' || v[i] == '\t'))
					i++;
				while (i < n && v[i] != ' ' && v[i] != '\t')
					i++;
			}
			continue;
		}
		nw++;
	}
	if (i < n && nw == CD_ARRAY_SIZE(w))
		return 0;
	i = nw && (!strcmp(w[0], "builtin") || !strcmp(w[0], "command"));
	if (i < nw &&
	    (!strcmp(w[i], "pwd") || !strcmp(w[i], "/bin/pwd") || !strcmp(w[i], "/usr/bin/pwd"))) {
		for (i++; i < nw && (!strcmp(w[i], "-P") || !strcmp(w[i], "-L")); i++)
			;
		return i == nw;
	}
	return nw == 3 && !strcmp(w[0], "git") && !strcmp(w[1], "rev-parse") &&
	       !strcmp(w[2], "--show-toplevel");
}

/* How long a word at v is that the shell expands to the directory git
 * runs a command in (its top: *as "") or to the caller's home (*as
 * "~"): $PWD, ${PWD}, ${PWD:-x} and the other modifiers, $HOME alike,
 * and a $(...) or `...` subst_is_top takes.  0: none. */
static size_t cmd_dir_at(const char *v, const char **as)
{
	static const char *const vars[][2] = { { "PWD", "" }, { "HOME", "~" } };
	const char *e;
	size_t i, n;

	for (i = 0; v[0] == '$' && i < CD_ARRAY_SIZE(vars); i++) {
		n = strlen(vars[i][0]);
		*as = vars[i][1];
		if (!strncmp(v + 1, vars[i][0], n) &&
		    !(isalnum((unsigned char)v[1 + n]) || v[1 + n] == '_'))
			return 1 + n;
		if (v[1] == '{' && !strncmp(v + 2, vars[i][0], n) && strchr("}:-=+?#%", v[2 + n]) &&
		    (e = strchr(v + 2 + n, '}')) && !memchr(v + 2, '{', (size_t)(e - v - 2)))
			return (size_t)(e - v) + 1;
	}
	*as = "";
	if (v[0] == '$' && v[1] == '(' && (e = strchr(v + 2, ')')) && e - v < SUBST_MAX &&
	    !memchr(v + 2, '(', (size_t)(e - v - 2)) && subst_is_top(v + 2, (size_t)(e - v - 2)))
		return (size_t)(e - v) + 1;
	if (v[0] == '`' && (e = strchr(v + 1, '`')) && e - v < SUBST_MAX &&
	    subst_is_top(v + 1, (size_t)(e - v - 1)))
		return (size_t)(e - v) + 1;
	return 0;
}

/* word with a leading cmd_dir_at word as the shell expands it, into v
 * ("$PWD/tools/x" -> "tools/x", "$HOME/x" -> "~/x", "$PWD" -> "."). */
static void cmd_expand(const char *word, char *v)
{
	const char *as;
	size_t n = cmd_dir_at(word, &as);

	if (!n || (word[n] && word[n] != '/'))
		snprintf(v, CD_PATH_MAX, "%s", word);
	else if (!as[0])
		snprintf(v, CD_PATH_MAX, "%s", word[n] ? word + n + 1 : ".");
	else
		snprintf(v, CD_PATH_MAX, "~%s", word[n] ? word + n : "/");
}

/* word (naming a path; $PWD/ and $HOME/ as the shell expands them)
 * against every base, reported as kind. */
static int cmd_path(struct cmd *m, const char *word, enum cd_git_named kind)
{
	char v[CD_PATH_MAX], path[CD_PATH_MAX];
	size_t i;
	int r;

	cmd_expand(word, v);
	for (i = 0; i < m->nbase; i++) {
		if (resolve(m->c, m->base[i], v, path) < 0)
			continue;
		if ((r = report(m->c, path, kind)) != 0)
			return r;
		if (v[0] == '/' || v[0] == '~')
			break; /* the same from every base */
	}
	return 0;
}

/* A directory a `cd DIR` or `-C DIR` moves later words to, from each
 * base known (only widens what is reported). */
static void cmd_base(struct cmd *m, const char *word)
{
	char v[CD_PATH_MAX], path[CD_PATH_MAX];
	size_t i, n = m->nbase;

	cmd_expand(word, v);
	for (i = 0; i < n && m->nbase < CMD_BASES; i++) {
		if (resolve(m->c, m->base[i], v, path) == 0)
			memcpy(m->base[m->nbase++], path, strlen(path) + 1);
	}
}

/* The files `python -m a.b.c` runs: each package's __init__.py on the
 * way, then a/b/c.py or a/b/c/__init__.py and __main__.py. */
static int module_files(struct cmd *m, const char *mod)
{
	static const char *const last[] = { ".py", "/__init__.py", "/__main__.py" };
	char rel[CD_PATH_MAX], path[CD_PATH_MAX];
	size_t i, ml = strlen(mod);
	int r;

	if (!ml || ml >= sizeof rel - sizeof "/__init__.py" || strchr(mod, '/'))
		return 0;
	for (i = 0; i < ml; i++)
		rel[i] = mod[i] == '.' ? '/' : mod[i];
	rel[ml] = '\0';
	for (i = 0; i < ml; i++) {
		if (rel[i] != '/')
			continue;
		snprintf(path, sizeof path, "%.*s/__init__.py", (int)i, rel);
		if ((r = cmd_path(m, path, CD_GIT_NAMED_RUN)) != 0)
			return r;
	}
	for (i = 0; i < CD_ARRAY_SIZE(last); i++) {
		snprintf(path, sizeof path, "%s%s", rel, last[i]);
		if ((r = cmd_path(m, path, CD_GIT_NAMED_RUN)) != 0)
			return r;
	}
	return 0;
}

/* One word of a command, by its place: `after` is what the word before
 * asked for (1: a directory, cd DIR / -C DIR; 2: a module, -m MOD). */
static int cmd_word(struct cmd *m, const char *word, int first, int *after)
{
	const char *v = word, *eq = strchr(word, '=');
	int want = *after;

	*after = 0;
	if (want == 1 && word[0] == '-') {
		*after = 1; /* cd -- DIR, cd -P DIR */
		return 0;
	}
	if (want == 1) {
		cmd_base(m, word);
		return 0;
	}
	if (!strncmp(word, "--chdir=", 8)) { /* env --chdir=DIR */
		cmd_base(m, word + 8);
		return 0;
	}
	if (want == 2)
		return module_files(m, word);
	if (!strcmp(word, "cd") || !strcmp(word, "pushd") || !strcmp(word, "-C")) {
		*after = 1;
		return 0;
	}
	if (!strcmp(word, "-m") ||
	    (word[0] == '-' && word[1] != '-' && word[1] && word[strlen(word) - 1] == 'm')) {
		*after = 2; /* -m MOD, -Im MOD */
		return 0;
	}
	if (!strncmp(word, "-m", 2) && word[2] != '-')
		return module_files(m, word + 2); /* -mpkg.mod */
	if (first && eq && eq > word && word[0] != '-') {
		/* PATH=tools:$PATH cmd (any *PATH), VAR=dir/x: each ':' part
		 * of a search path, or with a '/', a directory */
		int search = eq - word >= 4 && !strncmp(eq - 4, "PATH", 4);
		char part[CD_PATH_MAX];
		const char *p = eq + 1;
		int r;

		while (*p) {
			size_t pl = strcspn(p, ":");

			snprintf(part, sizeof part, "%.*s", (int)pl, p);
			if (pl && (search || strchr(part, '/')) && strcmp(part, "$PATH") &&
			    (r = cmd_path(m, part, CD_GIT_NAMED_DIR)) != 0)
				return r;
			p += pl + (p[pl] == ':');
		}
		return 0;
	}
	if (first && !strchr(word, '/'))
		return 0;     /* a command found in PATH (VAR=value before it too) */
	if (word[0] == '-') { /* --rcfile=tools/rc, -Ftools/cfg; other flags name nothing */
		v = word[1] == '-' ? (eq ? eq + 1 : "") : word + 2;
		if (!strchr(v, '/'))
			return 0;
	} else if (eq && !strchr(word, '/')) {
		return 0;
	}
	/* a word without '/' too: an interpreter's script ("python3 conv.py",
	 * "sh x"), listed when not there yet so that making it is reported */
	return cmd_path(m, v, CD_GIT_NAMED_RUN);
}

/* The tree files a command value may run, as a shell reads it: words
 * split at blanks outside quotes (a backslash escapes one character), a
 * quoted word read again as a command of its own (sh -c '...', up to
 * CMD_DEPTH deep), operators starting a new simple command; see
 * cmd_word for what each word names.  What a script then reads or runs
 * in turn is not followed (docs/threats.md). */
static int cmd_read(struct cmd *m, const char *v, unsigned depth)
{
	char word[CD_PATH_MAX];
	int first = 1, after = 0, envw = 0, quoted, r;
	const char *as;
	size_t wl;
	char q;

	while (*v) {
		if (*v == ' ' || *v == '\t' || *v == '\n' || (first && *v == '!')) {
			v++;
			continue;
		}
		if (!cmd_dir_at(v, &as) && is_operator(v)) {
			v += v[0] == '$' ? 2 : 1;
			first = 1;
			after = envw = 0;
			continue;
		}
		for (wl = 0, quoted = 0, q = 0; *v; v++) {
			size_t dl = q == '\'' ? 0 : cmd_dir_at(v, &as);

			if (dl && wl + dl < sizeof word) { /* "$(pwd)/x": one word */
				memcpy(word + wl, v, dl);
				wl += dl;
				v += dl - 1;
				continue;
			}
			if (!q && (*v == ' ' || *v == '\t' || *v == '\n' || is_operator(v)))
				break;
			if (!q && (*v == '"' || *v == '\'')) {
				q = *v;
				quoted = 1;
				continue;
			}
			if (q && *v == q) {
				q = 0;
				continue;
			}
			if (v[0] == '$' && v[1] == '{') { /* ${PWD}: not a brace group */
				while (*v && *v != '}' && wl < sizeof word - 2)
					word[wl++] = *v++;
				if (!*v)
					break;
			}
			if (*v == '\\' && q != '\'' && v[1])
				v++;
			if (wl < sizeof word - 1)
				word[wl++] = *v;
		}
		word[wl] = '\0';
		if (!wl)
			continue;
		/* "cd tools && ./x" given to sh -c, or a path with a blank */
		if (quoted && depth < CMD_DEPTH && strpbrk(word, " \t\n;&|"))
			if ((r = cmd_read(m, word, depth + 1)) != 0)
				return r;
		if ((r = cmd_word(m, word, first, &after)) != 0)
			return r;
		/* VAR=value before a command, or env's words (env -i -u NAME
		 * PATH=tools:$PATH x): the command is still to come */
		if (first && word[0] != '-' && strchr(word, '=') &&
		    strcspn(word, "=") <= strcspn(word, "/"))
			continue;
		wl = strlen(word);
		if (first && (!strcmp(word, "env") || (wl > 4 && !strcmp(word + wl - 4, "/env"))))
			envw = 1;
		else if (first && envw == 2)
			envw = 1; /* -u NAME, -C DIR */
		else if (first && envw && word[0] == '-')
			envw = !strcmp(word, "-u") || !strcmp(word, "--unset") ||
			                       !strcmp(word, "-C")
			               ? 2
			               : 1;
		else
			first = envw = 0;
	}
	return 0;
}

static int command_words(struct ctx *c, const char *v)
{
	struct cmd *m = malloc(sizeof *m);
	int r;

	if (!m)
		return -ENOMEM;
	m->c = c;
	m->nbase = 1;
	memcpy(m->base[0], c->top, strlen(c->top) + 1);
	r = cmd_read(m, v, 0);
	free(m);
	return r;
}

static int on_value(struct ctx *c, const char *file, const char *sec, const char *key,
                    const char *v, unsigned depth)
{
	char path[CD_PATH_MAX], dir[CD_PATH_MAX];
	const char *slash;
	size_t i;
	int r;

	if (c->pass == 0) {
		if (!strcmp(sec, "core") && !strcmp(key, "worktree"))
			snprintf(c->worktree, sizeof c->worktree, "%s", v);
		return 0;
	}
	for (i = 0; i < CD_ARRAY_SIZE(named_keys); i++) {
		if (strcmp(sec, named_keys[i].section) ||
		    (named_keys[i].key && strcmp(key, named_keys[i].key)))
			continue;
		if (named_keys[i].kind == CD_GIT_NAMED_RUN)
			return command_words(c, v);
		if (named_keys[i].kind == CD_GIT_NAMED_DIR) {
			if (resolve(c, c->top, v, path) < 0)
				return 0;
			if (!strcmp(key, "hookspath"))
				memcpy(c->hooks, path, strlen(path) + 1);
			return report(c, path, CD_GIT_NAMED_DIR);
		}
		/* an include is relative to the file holding it */
		slash = strrchr(file, '/');
		snprintf(dir, sizeof dir, "%.*s", slash ? (int)(slash - file) : 0, file);
		if (resolve(c, strcmp(sec, "core") ? dir : c->top, v, path) < 0)
			return 0;
		if ((r = report(c, path, CD_GIT_NAMED_CONFIG)) != 0)
			return r;
		if (strcmp(sec, "core") && depth < GITCFG_DEPTH)
			return parse_file(c, path, depth + 1);
		return 0;
	}
	return 0;
}

/* A value from b[*i] (after the '='): quotes, escapes, continued lines,
 * comments, trailing blanks as git reads them, into v (truncated). */
static void read_value(const char *b, size_t n, size_t *i, char *v)
{
	size_t vl = 0, keep = 0;
	int q = 0;
	char ch;

	while (*i < n && (b[*i] == ' ' || b[*i] == '\t'))
		(*i)++;
	for (; *i < n && b[*i] != '\n'; (*i)++) {
		ch = b[*i];
		if (!q && (ch == '#' || ch == ';')) {
			while (*i < n && b[*i] != '\n')
				(*i)++;
			break;
		}
		if (ch == '"') {
			q = !q;
			keep = vl;
			continue;
		}
		if (ch == '\\' && *i + 1 < n) {
			ch = b[++(*i)];
			if (ch == '\r' && *i + 1 < n && b[*i + 1] == '\n')
				ch = b[++(*i)]; /* git reads CRLF as LF */
			if (ch == '\n')
				continue; /* a continued line */
			ch = ch == 'n' ? '\n' : ch == 't' ? '\t' : ch == 'b' ? '\b' : ch;
		} else if (ch == '\r') {
			continue;
		}
		if (vl < GITCFG_VALUE_MAX - 1)
			v[vl++] = ch;
		if (q || (ch != ' ' && ch != '\t'))
			keep = vl;
	}
	v[keep] = '\0';
}

/* A section header from b[*i] ('['): its name, lowercased, into sec
 * ("" if it does not parse); *i past the ']'. */
static void read_section(const char *b, size_t n, size_t *i, char *sec)
{
	size_t sl = 0;
	int q = 0;

	for ((*i)++; *i < n && (isalnum((unsigned char)b[*i]) || b[*i] == '-'); (*i)++) {
		if (sl < GITCFG_NAME_MAX - 1)
			sec[sl++] = (char)tolower((unsigned char)b[*i]);
	}
	sec[sl] = '\0';
	for (; *i < n && b[*i] != '\n'; (*i)++) {
		if (q && b[*i] == '\\' && *i + 1 < n)
			(*i)++;
		else if (b[*i] == '"')
			q = !q;
		else if (!q && b[*i] == ']')
			break;
	}
	if (*i < n && b[*i] == ']')
		(*i)++;
	else
		sec[0] = '\0';
}

static int parse_buf(struct ctx *c, const char *file, const char *b, size_t n, unsigned depth)
{
	char sec[GITCFG_NAME_MAX] = "", key[GITCFG_NAME_MAX], *v = malloc(GITCFG_VALUE_MAX);
	size_t i = 0, kl;
	int r = 0;

	if (!v)
		return -ENOMEM;
	if (n >= 3 && !memcmp(b, "\xef\xbb\xbf", 3))
		i = 3; /* a UTF-8 byte order mark, which git skips */
	while (r == 0 && i < n) {
		if (isspace((unsigned char)b[i])) {
			i++;
		} else if (b[i] == '#' || b[i] == ';') {
			while (i < n && b[i] != '\n')
				i++;
		} else if (b[i] == '[') {
			read_section(b, n, &i, sec);
		} else if (isalpha((unsigned char)b[i])) {
			for (kl = 0; i < n && (isalnum((unsigned char)b[i]) || b[i] == '-'); i++) {
				if (kl < sizeof key - 1)
					key[kl++] = (char)tolower((unsigned char)b[i]);
			}
			key[kl] = '\0';
			while (i < n && (b[i] == ' ' || b[i] == '\t'))
				i++;
			if (i < n && b[i] == '=') {
				i++;
				read_value(b, n, &i, v);
				if (sec[0])
					r = on_value(c, file, sec, key, v, depth);
			}
		} else {
			while (i < n && b[i] != '\n')
				i++;
		}
	}
	free(v);
	return r;
}

/* Where `file` really is, reported when a symlink on its path leads
 * elsewhere. */
static int config_target(struct ctx *c, const char *file)
{
	char *real = realpath(file, NULL);
	int r = 0;

	if (real && strcmp(real, file))
		r = c->fn(c->arg, real, CD_GIT_NAMED_CONFIG);
	free(real);
	return r;
}

static int parse_file(struct ctx *c, const char *file, unsigned depth)
{
	struct stat st;
	size_t got = 0;
	ssize_t k = 1;
	char *buf;
	int fd, r;

	if (++c->files > GITCFG_FILES_MAX)
		return -E2BIG; /* what the rest names is unknown: the caller refuses */
	fd = open(file, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0)
		return 0; /* git reads nothing there either */
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return 0;
	}
	/* one not read to its end would leave what the rest names unknown:
	 * one too large (or growing past the bound) is refused */
	if (st.st_size >= GITCFG_READ_MAX) {
		close(fd);
		return -EFBIG;
	}
	if (!(buf = malloc((size_t)st.st_size + 1))) {
		close(fd);
		return -ENOMEM;
	}
	while (got <= (size_t)st.st_size &&
	       (k = read(fd, buf + got, (size_t)st.st_size + 1 - got)) > 0)
		got += (size_t)k;
	close(fd);
	if (got > (size_t)st.st_size || k < 0) {
		free(buf);
		return -EFBIG;
	}
	/* read through a symlink (a ~/.gitconfig kept in a dotfiles tree):
	 * the file itself is what an agent there would rewrite */
	if (c->pass && (r = config_target(c, file)) != 0) {
		free(buf);
		return r;
	}
	r = parse_buf(c, file, buf, got, depth);
	free(buf);
	return r;
}

/* The symlinks in hooks directory dir: git runs what each points to. */
static int hook_links(struct ctx *c, const char *dir)
{
	char target[CD_PATH_MAX], path[CD_PATH_MAX];
	struct dirent *e;
	size_t seen = 0;
	ssize_t n;
	DIR *d;
	int r = 0;

	if (!dir[0] || !(d = opendir(dir)))
		return 0;
	while (r == 0 && seen++ < GITCFG_HOOKS_MAX && (e = readdir(d))) {
		if (e->d_type != DT_LNK && e->d_type != DT_UNKNOWN)
			continue;
		n = readlinkat(dirfd(d), e->d_name, target, sizeof target - 1);
		if (n <= 0)
			continue;
		target[n] = '\0';
		if (resolve(c, dir, target, path) == 0)
			r = report(c, path, CD_GIT_NAMED_RUN);
	}
	closedir(d);
	return r;
}

/* The first line of file (at most CD_PATH_MAX - 1 bytes) into out:
 * 1 if it was read, else 0. */
static int first_line(const char *file, char *out)
{
	int fd = open(file, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	struct stat st;
	ssize_t n;

	if (fd < 0)
		return 0;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) ||
	    (n = read(fd, out, CD_PATH_MAX - 1)) <= 0) {
		close(fd);
		return 0;
	}
	close(fd);
	out[n] = '\0';
	out[strcspn(out, "\r\n")] = '\0';
	return out[0] != '\0';
}

/* v relative to dir (or absolute), resolved: 1 into out, else 0. */
static int resolve_real(const char *dir, const char *v, char *out)
{
	char tmp[CD_PATH_MAX];
	int n = v[0] == '/' ? snprintf(tmp, sizeof tmp, "%s", v)
	                    : snprintf(tmp, sizeof tmp, "%s/%s", dir, v);

	return n > 0 && (size_t)n < sizeof tmp && cd_path_canonical(tmp, out, CD_PATH_MAX) == 0;
}

int cd_git_file_target(const char *file, char *gd)
{
	char line[CD_PATH_MAX], dir[CD_PATH_MAX];
	const char *slash = strrchr(file, '/');
	struct stat st;

	if (!slash || !first_line(file, line) || strncmp(line, "gitdir: ", 8) != 0)
		return 0; /* git ignores it */
	snprintf(dir, sizeof dir, "%.*s", slash == file ? 1 : (int)(slash - file), file);
	return resolve_real(dir, line + 8, gd) && stat(gd, &st) == 0 && S_ISDIR(st.st_mode);
}

/* Is dir a git directory by git's test (a HEAD, and an objects
 * directory or a commondir file)? */
static int is_gitdir(const char *dir)
{
	char p[CD_PATH_MAX];
	struct stat st;

	if (snprintf(p, sizeof p, "%s/HEAD", dir) >= (int)sizeof p - 10 || lstat(p, &st) < 0)
		return 0;
	snprintf(p, sizeof p, "%s/objects", dir);
	if (stat(p, &st) == 0 && S_ISDIR(st.st_mode))
		return 1;
	snprintf(p, sizeof p, "%s/commondir", dir);
	return lstat(p, &st) == 0;
}

int cd_git_discover(const char *dir, char *gd, char *top)
{
	char d[CD_PATH_MAX], dotgit[CD_PATH_MAX];
	struct stat st;
	size_t dl;

	if (dir[0] != '/' || cd_path_normalize(dir, d, sizeof d) < 0)
		return 0;
	for (dl = strlen(d);;) {
		snprintf(dotgit, sizeof dotgit, "%.*s/.git", dl == 1 ? 0 : (int)dl, d);
		if (stat(dotgit, &st) == 0) {
			if (S_ISDIR(st.st_mode) && is_gitdir(dotgit) &&
			    cd_path_canonical(dotgit, gd, CD_PATH_MAX) == 0) {
				snprintf(top, CD_PATH_MAX, "%.*s", (int)dl, d);
				return 1;
			}
			if (S_ISREG(st.st_mode) && cd_git_file_target(dotgit, gd)) {
				snprintf(top, CD_PATH_MAX, "%.*s", (int)dl, d);
				return 1;
			}
		}
		d[dl] = '\0';
		if (is_gitdir(d) && cd_path_canonical(d, gd, CD_PATH_MAX) == 0) {
			memcpy(top, gd, strlen(gd) + 1); /* bare: no working tree */
			return 1;
		}
		if (dl <= 1)
			return 0;
		while (dl > 1 && d[dl - 1] != '/')
			dl--;
		if (dl > 1)
			dl--;
	}
}

/* A configuration file git reads besides the repository's: itself
 * reported (one in a writable tree would be rewritten: a dotfiles
 * repository holding $GIT_CONFIG_GLOBAL), then read. */
static int outer_file(struct ctx *c, const char *file)
{
	int r = report(c, file, CD_GIT_NAMED_CONFIG);

	/* as the caller's environment spells it (a symlink on the way is
	 * refused by report's fn first, saying so) */
	if (r == 0)
		(void)cd_path_dotdot_dirs(file, way_found, c);

	return r ? r : parse_file(c, file, 0);
}

int cd_git_named_paths(const char *gd, const char *top, const struct cd_git_env *env,
                       cd_git_named_fn fn, void *arg)
{
	static const struct cd_git_env none;
	char cfg[CD_PATH_MAX], hooks[CD_PATH_MAX], common[CD_PATH_MAX], line[CD_PATH_MAX];
	char repo[2][CD_PATH_MAX];
	struct ctx *c = calloc(1, sizeof *c);
	size_t i, gl = gd ? strlen(gd) : 0, nrepo = gd ? CD_ARRAY_SIZE(repo) : 0;
	int r = 0;

	if (!c)
		return -ENOMEM;
	if (!env)
		env = &none;
	c->fn = fn;
	c->arg = arg;
	c->home = env->home;
	if (top)
		snprintf(c->top, sizeof c->top, "%s", top);
	else if (gl > 5 && !strcmp(gd + gl - 5, "/.git"))
		snprintf(c->top, sizeof c->top, "%.*s", (int)(gl - 5), gd);
	else if (gd)
		snprintf(c->top, sizeof c->top, "%s", gd);
	/* no repository: c->top "" (a relative value names nothing) */
	if (gd) {
		/* A linked worktree's git directory holds only its own state:
		 * the repository's config and hooks are in its commondir's. */
		snprintf(common, sizeof common, "%s", gd);
		if (snprintf(cfg, sizeof cfg, "%s/commondir", gd) < (int)sizeof cfg &&
		    first_line(cfg, line) && !resolve_real(gd, line, common))
			snprintf(common, sizeof common, "%s", gd);
		if (cd_path_normalize(gd, c->gd, sizeof c->gd) < 0 ||
		    cd_path_normalize(common, c->common, sizeof c->common) < 0)
			c->gd[0] = c->common[0] = '\0';
		if (snprintf(repo[0], sizeof repo[0], "%s/config", common) >= (int)sizeof repo[0] ||
		    snprintf(repo[1], sizeof repo[1], "%s/config.worktree", gd) >=
		            (int)sizeof repo[1]) {
			free(c);
			return -EFBIG; /* cannot be read: what it names is unknown */
		}
	}
	/* core.worktree first: where relative paths start */
	for (i = 0; r == 0 && i < nrepo; i++)
		r = parse_file(c, repo[i], 0);
	if (c->worktree[0] && resolve(c, gd, c->worktree, cfg) == 0)
		memcpy(c->top, cfg, strlen(cfg) + 1);
	/* then as git reads them, the last core.hooksPath winning: the
	 * system's and the caller's (a relative core.hooksPath there names
	 * a directory in every repository), the repository's */
	c->pass = 1;
	r = r ? r : outer_file(c, "/etc/gitconfig");
	if (r == 0 && env->system && env->system[0] == '/')
		r = outer_file(c, env->system);
	if (r == 0 && env->xdg_config_home && env->xdg_config_home[0] == '/' &&
	    snprintf(cfg, sizeof cfg, "%s/git/config", env->xdg_config_home) < (int)sizeof cfg)
		r = outer_file(c, cfg);
	if (r == 0 && env->home && env->home[0] == '/' &&
	    snprintf(cfg, sizeof cfg, "%s/.config/git/config", env->home) < (int)sizeof cfg)
		r = outer_file(c, cfg);
	if (r == 0 && env->home && env->home[0] == '/' &&
	    snprintf(cfg, sizeof cfg, "%s/.gitconfig", env->home) < (int)sizeof cfg)
		r = outer_file(c, cfg);
	if (r == 0 && env->global && env->global[0] == '/')
		r = outer_file(c, env->global);
	if (r == 0 && env->template_dir && env->template_dir[0] == '/' &&
	    cd_path_dotdot_dirs(env->template_dir, way_found, c) == 0 &&
	    cd_path_normalize(env->template_dir, cfg, sizeof cfg) == 0)
		r = report(c, cfg, CD_GIT_NAMED_DIR); /* as init.templateDir */
	for (i = 0; r == 0 && i < nrepo; i++)
		r = parse_file(c, repo[i], 0);
	if (r == 0 && gd && snprintf(hooks, sizeof hooks, "%s/hooks", common) < (int)sizeof hooks)
		r = hook_links(c, hooks);
	if (r == 0)
		r = hook_links(c, c->hooks);
	if (r == 0)
		r = c->stop;
	free(c);
	return r;
}
