/* envrc.c — see envrc.h.  A word reader, not a shell: quotes are dropped,
 * a word ends at a blank or a separator (; & | { } ( ) newline), each of
 * which starts a new command, as do if/then/do/! ...; what it misreads only widens or
 * narrows what is named, never crashes (the .envrc is the agent's to
 * write in a writable tree). */
#include "envrc.h"

#include "util/bounds.h"
#include "util/path.h"
#include "util/util.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ENVRC_WORDS 16 /* words of one .envrc line read */

/* direnv's stdlib commands whose argument is a file the .envrc runs
 * (source_env: a directory's .envrc too), and the `use` layouts with
 * the files they evaluate: direnv runs them on every cd into the
 * directory, and allows an .envrc by its own content only, so a
 * rewritten .envrc.local or shell.nix runs without a new `direnv allow`.
 * (dotenv's files are credentials: masked, not run.) */
static const struct {
	const char *cmd, *arg; /* arg NULL: the next word names the file */
	const char *files[2];
} envrc_cmds[] = {
	{ "source_env", NULL, { NULL, NULL } },
	{ "source_env_if_exists", NULL, { NULL, NULL } },
	{ "use", "nix", { "shell.nix", "default.nix" } },
	{ "use_nix", NULL, { "shell.nix", "default.nix" } },
	{ "use", "flake", { "flake.nix", "flake.lock" } },
	{ "use_flake", NULL, { "flake.nix", "flake.lock" } },
};

/* direnv's layouts and the directories each puts on PATH, relative to
 * the .envrc's: the user's shell there runs what they hold by name (a
 * planted bin/git).  Any other layout (python, python3, ruby, perl,
 * pyenv, anaconda ...) keeps its environment in .direnv/ (python-X.Y/bin,
 * bin, perl5/bin): .direnv whole. */
static const struct {
	const char *name;
	const char *dirs[2];
} envrc_layouts[] = {
	{ "node", { "node_modules/.bin", NULL } },
	{ "go", { "bin", ".direnv" } },
	{ "php", { "vendor/bin", NULL } },
	{ "uv", { ".venv/bin", ".direnv" } },
	{ "poetry", { ".venv/bin", ".direnv" } },
	{ "pipenv", { ".venv/bin", ".direnv" } },
	{ NULL, { ".direnv", NULL } },
};

struct envrc {
	const char *dir;
	cd_envrc_named_fn fn;
	void *arg;
	char word[ENVRC_WORDS + 1][CD_PATH_MAX]; /* the last: a spare */
};

/* A byte that ends a word and the command it is in: direnv's shell
 * starts a new command after each (`[ -d bin ] && PATH_add bin`,
 * `{ PATH_add bin; }`, `a | b`, `(cd x)`). */
static int envrc_sep(char c)
{
	return c && strchr(";&|{}()\n", c) != NULL;
}

enum { ENVRC_END, ENVRC_SEP, ENVRC_WORD };

/* The next token at *pp: a word into word (quotes dropped, `\` escapes
 * the next byte, `\`+newline joins lines, `$(`..`)` and `${`..`}` kept in
 * the word), a command's end (ENVRC_SEP: a separator, or a comment up to
 * it), or the buffer's end.  A word ends wherever the shell's might, so
 * a misread starts more commands, never fewer. */
static int envrc_word(const char **pp, const char *end, char *word, size_t cap)
{
	const char *p = *pp;
	size_t wl = 0, depth = 0;

	for (;;) {
		while (p < end && (*p == ' ' || *p == '\t'))
			p++;
		if (end - p < 2 || p[0] != '\\' || p[1] != '\n')
			break;
		p += 2;
	}
	if (p < end && *p == '#')
		while (p < end && *p != '\n')
			p++;
	if (p >= end) {
		*pp = p;
		return ENVRC_END;
	}
	if (envrc_sep(*p)) {
		*pp = p + 1;
		return ENVRC_SEP;
	}
	for (; p < end; p++) {
		char c = *p;

		if (c == '\\' && end - p > 1) {
			if (*++p != '\n' && wl < cap - 1)
				word[wl++] = *p;
			continue;
		}
		if (c == '$' && end - p > 1 && (p[1] == '(' || p[1] == '{')) {
			depth++;
			if (wl + 1 < cap - 1) {
				word[wl++] = c;
				word[wl++] = p[1];
			}
			p++;
			continue;
		}
		if ((c == ')' || c == '}') && depth) {
			depth--;
		} else if (c == ' ' || c == '\t' || envrc_sep(c)) {
			break;
		} else if (c == '"' || c == '\'' || c == '\0') {
			continue;
		}
		if (wl < cap - 1)
			word[wl++] = c;
	}
	word[wl] = '\0';
	*pp = p;
	return ENVRC_WORD;
}

/* The shell's reserved words that start a command after them. */
static int envrc_keyword(const char *w)
{
	static const char *const kw[] = { "if",    "then", "else", "elif", "do",  "while",
		                          "until", "!",    "fi",   "done", "time" };
	size_t i;

	for (i = 0; i < CD_ARRAY_SIZE(kw); i++)
		if (!strcmp(w, kw[i]))
			return 1;
	return 0;
}

/* A directory a ".." of a named path is taken from: to fn. */
static int envrc_way(void *arg, const char *dir)
{
	struct envrc *e = arg;

	return e->fn(e->arg, dir, CD_ENVRC_WAY);
}

/* A path word v (vl bytes) as direnv's shell expands it (it runs the
 * .envrc in its directory), to fn as kind. */
static int envrc_path(struct envrc *e, const char *v, size_t vl, enum cd_envrc_named kind)
{
	char host[CD_PATH_MAX], norm[CD_PATH_MAX];
	size_t skip = 0;
	int k, r;

	if (vl >= 4 && !memcmp(v, "$PWD", 4) && (vl == 4 || v[4] == '/'))
		skip = 4;
	else if (vl >= 6 && !memcmp(v, "${PWD}", 6) && (vl == 6 || v[6] == '/'))
		skip = 6;
	else if (!vl || v[0] == '$' || v[0] == '~')
		return 0;
	k = skip || v[0] != '/'
	            ? snprintf(host, sizeof host, "%s/%.*s", e->dir, (int)(vl - skip), v + skip)
	            : snprintf(host, sizeof host, "%.*s", (int)vl, v);
	if (k <= 0 || (size_t)k >= sizeof host || cd_path_normalize(host, norm, sizeof norm) < 0)
		return 0;
	if ((r = cd_path_dotdot_dirs(host, envrc_way, e)) != 0)
		return r; /* the shell takes ".." on disk */
	return e->fn(e->arg, norm, kind);
}

/* An assignment VAR=v (export PATH=$PWD/bin:$PATH): each ':' part of a
 * *PATH variable (PATH, PYTHONPATH, LD_LIBRARY_PATH ...), a directory
 * the host then searches. */
static int envrc_assign(struct envrc *e, const char *word)
{
	const char *eq = strchr(word, '='), *p;
	int r = 0;

	if (!eq || eq - word < 4 || memcmp(eq - 4, "PATH", 4))
		return 0;
	for (p = eq + 1; r == 0 && *p;) {
		size_t pl = strcspn(p, ":");

		r = envrc_path(e, p, pl, CD_ENVRC_DIR);
		p += pl + (p[pl] == ':');
	}
	return r;
}

/* The directories `layout NAME` puts on PATH (envrc_layouts). */
static int envrc_layout(struct envrc *e, const char *name)
{
	size_t i, j;
	int r = 0;

	for (i = 0; envrc_layouts[i].name && strcmp(envrc_layouts[i].name, name); i++)
		;
	for (j = 0; r == 0 && j < CD_ARRAY_SIZE(envrc_layouts[i].dirs); j++) {
		const char *d = envrc_layouts[i].dirs[j];

		if (d)
			r = envrc_path(e, d, strlen(d), CD_ENVRC_DIR);
	}
	return r;
}

/* One line's words (n of them, the command first): what it runs or puts
 * on a search path. */
static int envrc_line(struct envrc *e, size_t n)
{
	const char *cmd = e->word[0];
	size_t i, j;
	int r = 0;

	if (strchr(cmd, '=')) { /* VAR=v ... cmd: cmd runs too */
		for (i = 0; r == 0 && i < n && strchr(e->word[i], '='); i++)
			r = envrc_assign(e, e->word[i]);
		if (r || i == n)
			return r;
		memmove(e->word[0], e->word[i], (n - i) * sizeof e->word[0]);
		return envrc_line(e, n - i);
	}
	if (!strcmp(cmd, "export") || !strcmp(cmd, "local")) {
		for (i = 1; r == 0 && i < n; i++)
			r = envrc_assign(e, e->word[i]);
		return r;
	}
	if (!strcmp(cmd, "layout") && n > 1)
		return envrc_layout(e, e->word[1]);
	if (!strncmp(cmd, "layout_", 7))
		return envrc_layout(e, cmd + 7);
	/* PATH_add DIR...; path_add VAR DIR... (any variable: PYTHONPATH
	 * too); load_prefix DIR: its bin, sbin, lib (LD_LIBRARY_PATH) ... */
	if (!strcmp(cmd, "PATH_add") || !strcmp(cmd, "path_add") || !strcmp(cmd, "load_prefix")) {
		for (i = cmd[0] == 'p' ? 2 : 1; r == 0 && i < n; i++)
			r = envrc_path(e, e->word[i], strlen(e->word[i]), CD_ENVRC_DIR);
		return r;
	}
	for (i = 0; r == 0 && i < CD_ARRAY_SIZE(envrc_cmds); i++) {
		if (strcmp(cmd, envrc_cmds[i].cmd) ||
		    (envrc_cmds[i].arg && (n < 2 || strcmp(e->word[1], envrc_cmds[i].arg))))
			continue;
		for (j = 0; r == 0 && j < 2 && envrc_cmds[i].files[j]; j++)
			r = envrc_path(e, envrc_cmds[i].files[j], strlen(envrc_cmds[i].files[j]),
			               CD_ENVRC_RUN);
		if (r == 0 && !envrc_cmds[i].files[0] && n > 1)
			r = envrc_path(e, e->word[1], strlen(e->word[1]), CD_ENVRC_RUN);
	}
	return r;
}

int cd_envrc_named_paths(const char *buf, size_t n, const char *dir, cd_envrc_named_fn fn,
                         void *arg)
{
	struct envrc *e = malloc(sizeof *e);
	const char *p = buf;
	size_t nw = 0;
	int r = 0, t;

	if (!e)
		return -ENOMEM;
	e->dir = dir;
	e->fn = fn;
	e->arg = arg;
	do {
		/* words past ENVRC_WORDS are read into the spare and dropped */
		t = envrc_word(&p, buf + n, e->word[nw], sizeof e->word[nw]);
		if (t == ENVRC_WORD) {
			if ((nw || !envrc_keyword(e->word[0])) && nw < ENVRC_WORDS)
				nw++;
			continue;
		}
		if (nw)
			r = envrc_line(e, nw);
		nw = 0;
	} while (r == 0 && t != ENVRC_END);
	free(e);
	return r;
}
