/* cli-complete.c — `cordon completion bash|zsh|fish`: a completion script
 * for the shell, generated from main.c's command table and the option
 * tables each command's parser takes (cli.h), so an option added to a
 * parser is completed without a second list to keep.  What this file adds
 * is what those tables do not hold: the sub-commands of each command, which
 * options take a file, a directory or one of a known set of words, and what
 * the positional arguments are.  0008-completion checks it against --help.
 *
 * Trust boundary: argv from the invoking user; the output is a shell script
 * the user sources, built only from the constant tables below (names of
 * lower-case letters, digits and '-'), never from input.
 */
#include "cli.h"

#include "sandbox/profile.h"
#include "util/util.h"

#include <getopt.h>
#include <stdio.h>
#include <string.h>

/* What a command's positional arguments are. */
enum cpl_args {
	ARGS_NONE,
	ARGS_FILES, /* policy files */
	ARGS_CMD,   /* a command and its arguments (run, shell, mcp) */
	ARGS_SHELL, /* completion's shell names */
};

struct cpl_node {
	const char *path;                 /* "run", "policy check"; "" is cordon itself */
	const struct option *const *opts; /* the parser's table; NULL: only --help */
	enum cpl_args args;
	/* Options the parser takes but --help does not list (cordon's own,
	 * between its processes): never offered. */
	const char *hide;
	/* For a table shared by subcommands that take part of it each. */
	int (*applies)(const char *sub, const struct option *o);
};

static const struct cpl_node nodes[] = {
	{ "", NULL, ARGS_NONE, NULL, NULL },
	{ "run", &cli_opts_run, ARGS_CMD, NULL, NULL },
	{ "shell", &cli_opts_run, ARGS_CMD, NULL, NULL },
	{ "cache list", &cli_opts_cache, ARGS_NONE, NULL, NULL },
	{ "cache clear", &cli_opts_cache, ARGS_NONE, NULL, NULL },
	{ "log show", &cli_opts_log, ARGS_NONE, NULL, cli_log_opt_applies },
	{ "log tail", &cli_opts_log, ARGS_NONE, NULL, cli_log_opt_applies },
	{ "log export", &cli_opts_log, ARGS_NONE, NULL, cli_log_opt_applies },
	{ "log verify", &cli_opts_log, ARGS_NONE, NULL, cli_log_opt_applies },
	{ "log checkpoint", &cli_opts_log, ARGS_NONE, NULL, cli_log_opt_applies },
	{ "log keygen", &cli_opts_log, ARGS_NONE, NULL, cli_log_opt_applies },
	{ "log confirm", &cli_opts_log_confirm, ARGS_NONE, NULL, NULL },
	{ "log ship", &cli_opts_log_ship, ARGS_NONE, NULL, NULL },
	{ "policy lint", &cli_opts_policy_json, ARGS_FILES, NULL, NULL },
	{ "policy check", &cli_opts_policy_request, ARGS_FILES, NULL, NULL },
	{ "policy explain", &cli_opts_policy_request, ARGS_FILES, NULL, NULL },
	{ "policy test", &cli_opts_policy_json, ARGS_FILES, NULL, NULL },
	{ "policy diff", &cli_opts_policy_json, ARGS_FILES, NULL, NULL },
	{ "policy review", &cli_opts_policy_review, ARGS_FILES, NULL, NULL },
	{ "policy matrix", &cli_opts_policy_matrix, ARGS_FILES, NULL, NULL },
	{ "proxy", &cli_opts_proxy, ARGS_NONE, " listen-fd stop-fd run-id log-mask ", NULL },
	{ "grant break-glass", &cli_opts_grant, ARGS_NONE, NULL, NULL },
	{ "grant list", &cli_opts_grant, ARGS_NONE, NULL, NULL },
	{ "grant revoke", &cli_opts_grant, ARGS_NONE, NULL, NULL },
	{ "delegate", &cli_opts_grant, ARGS_NONE, NULL, NULL },
	{ "approvals list", &cli_opts_approvals, ARGS_NONE, NULL, NULL },
	{ "approvals show", &cli_opts_approvals, ARGS_NONE, NULL, NULL },
	{ "approvals approve", &cli_opts_approvals, ARGS_NONE, NULL, NULL },
	{ "approvals deny", &cli_opts_approvals, ARGS_NONE, NULL, NULL },
	{ "approvals sample", &cli_opts_approvals, ARGS_NONE, NULL, NULL },
	{ "approvals stats", &cli_opts_approvals, ARGS_NONE, NULL, NULL },
	{ "approvals keygen", &cli_opts_approvals, ARGS_NONE, NULL, NULL },
	{ "serve", &cli_opts_serve, ARGS_NONE, NULL, NULL },
	{ "serve login", &cli_opts_serve, ARGS_NONE, NULL, NULL },
	{ "inventory", &cli_opts_inventory, ARGS_NONE, NULL, NULL },
	{ "proposals list", &cli_opts_proposals, ARGS_NONE, NULL, NULL },
	{ "proposals show", &cli_opts_proposals, ARGS_NONE, NULL, NULL },
	{ "proposals diff", &cli_opts_proposals, ARGS_NONE, NULL, NULL },
	{ "proposals apply", &cli_opts_proposals, ARGS_NONE, NULL, NULL },
	{ "proposals commit", &cli_opts_proposals, ARGS_NONE, NULL, NULL },
	{ "proposals reject", &cli_opts_proposals, ARGS_NONE, NULL, NULL },
	{ "mcp", &cli_opts_mcp, ARGS_CMD, NULL, NULL },
	{ "mcp pins list", &cli_opts_mcp_pins, ARGS_NONE, NULL, NULL },
	{ "mcp pins approve", &cli_opts_mcp_pins, ARGS_NONE, NULL, NULL },
	{ "mcp pins diff", &cli_opts_mcp_pins, ARGS_NONE, NULL, NULL },
	{ "mcp token add", &cli_opts_mcp_token, ARGS_NONE, NULL, NULL },
	{ "mcp token list", &cli_opts_mcp_token, ARGS_NONE, NULL, NULL },
	{ "mcp token revoke", &cli_opts_mcp_token, ARGS_NONE, NULL, NULL },
	{ "doctor", &cli_opts_doctor, ARGS_NONE, NULL, NULL },
	{ "completion", NULL, ARGS_SHELL, NULL, NULL },
};

/* What an option's value is: the first entry whose command (NULL: any)
 * is the node's path or a leading part of it. */
enum cpl_val { VAL_NONE, VAL_FILE, VAL_DIR, VAL_WORDS, VAL_PROFILE };

static const struct cpl_hint {
	const char *path, *opt;
	enum cpl_val kind;
	const char *words;
} hints[] = {
	{ "log export", "format", VAL_WORDS, "jsonl" },
	{ "policy matrix", "format", VAL_WORDS, "text markdown json" },
	{ "approvals", "status", VAL_WORDS, "pending approved denied expired used" },
	{ NULL, "approval", VAL_WORDS, "human" },
	{ NULL, "net", VAL_WORDS, "none" },
	{ NULL, "profile", VAL_PROFILE, NULL },
	{ NULL, "cwd", VAL_DIR, NULL },
	{ NULL, "scratch", VAL_DIR, NULL },
	{ NULL, "rootfs", VAL_DIR, NULL },
	{ NULL, "image", VAL_FILE, NULL },
	{ NULL, "ro", VAL_FILE, NULL },
	{ NULL, "rw", VAL_FILE, NULL },
	{ NULL, "policy", VAL_FILE, NULL },
	{ NULL, "audit", VAL_FILE, NULL },
	{ NULL, "state", VAL_FILE, NULL },
	{ NULL, "config", VAL_FILE, NULL },
	{ NULL, "pubkey", VAL_FILE, NULL },
	{ NULL, "key", VAL_FILE, NULL },
	{ NULL, "checkpoint", VAL_FILE, NULL },
	{ NULL, "checkpoint-out", VAL_FILE, NULL },
	{ NULL, "paths", VAL_FILE, NULL },
	{ NULL, "accept-flagged", VAL_FILE, NULL },
};

static const char shells[] = "bash zsh fish";

/* path is under (or is) prefix, word by word. */
static int under(const char *path, const char *prefix)
{
	size_t n = strlen(prefix);

	return !strncmp(path, prefix, n) && (path[n] == '\0' || path[n] == ' ');
}

static const struct cpl_hint *hint_of(const char *path, const char *opt)
{
	size_t i;

	for (i = 0; i < CD_ARRAY_SIZE(hints); i++)
		if (!strcmp(hints[i].opt, opt) && (!hints[i].path || under(path, hints[i].path)))
			return &hints[i];
	return NULL;
}

static int offered(const struct cpl_node *n, const struct option *o)
{
	char h[64];
	int k;

	if (n->hide) {
		k = snprintf(h, sizeof h, " %s ", o->name);
		if (k > 0 && (size_t)k < sizeof h && strstr(n->hide, h))
			return 0;
	}
	if (n->applies && strchr(n->path, ' '))
		return n->applies(strchr(n->path, ' ') + 1, o);
	return 1;
}

/* The node of path, NULL when it has none (a command only main.c names,
 * or an intermediate one such as "policy": sub-commands and --help). */
static const struct cpl_node *node_of(const char *path)
{
	size_t i;

	for (i = 0; i < CD_ARRAY_SIZE(nodes); i++)
		if (!strcmp(nodes[i].path, path))
			return &nodes[i];
	return NULL;
}

/* Every path that has options or sub-commands: the nodes, the commands of
 * main.c's table, and each leading part of a node's path. */
typedef void (*path_fn)(FILE *f, const char *path);

static void each_path(FILE *f, path_fn fn)
{
	const struct cd_cmd *cmds;
	size_t i, j, ncmd;
	char p[64];

	cmds = cli_commands(&ncmd);
	fn(f, "");
	for (i = 0; i < ncmd; i++)
		fn(f, cmds[i].name);
	for (i = 1; i < CD_ARRAY_SIZE(nodes); i++) {
		const char *s = nodes[i].path;
		const char *sp = strchr(s, ' ');

		/* Intermediate paths ("mcp pins") once, at their first node. */
		for (; sp; sp = strchr(sp + 1, ' ')) {
			int k = snprintf(p, sizeof p, "%.*s", (int)(sp - s), s);
			if (k < 0 || (size_t)k >= sizeof p || !strchr(p, ' ') || node_of(p))
				continue;
			for (j = 1; j < i && !under(nodes[j].path, p); j++)
				;
			if (j == i)
				fn(f, p);
		}
		if (strchr(s, ' '))
			fn(f, s);
	}
}

/* The sub-commands of path, separated by spaces. */
static void put_subs(FILE *f, const char *path)
{
	const struct cd_cmd *cmds;
	size_t i, j, n = strlen(path), ncmd;
	const char *sep = "";

	if (!*path) {
		cmds = cli_commands(&ncmd);
		for (i = 0; i < ncmd; i++, sep = " ")
			fprintf(f, "%s%s", sep, cmds[i].name);
		return;
	}
	for (i = 0; i < CD_ARRAY_SIZE(nodes); i++) {
		const char *s = nodes[i].path, *w, *end;

		if (!under(s, path) || s[n] != ' ')
			continue;
		w = s + n + 1;
		end = strchr(w, ' ');
		end = end ? end : w + strlen(w);
		for (j = 0; j < i; j++) /* once each */
			if (under(nodes[j].path, path) && nodes[j].path[n] == ' ' &&
			    !strncmp(nodes[j].path + n + 1, w, (size_t)(end - w)) &&
			    (nodes[j].path[n + 1 + (end - w)] == ' ' ||
			     !nodes[j].path[n + 1 + (end - w)]))
				break;
		if (j < i)
			continue;
		fprintf(f, "%s%.*s", sep, (int)(end - w), w);
		sep = " ";
	}
}

/* The long options of path (values only: those that take one), each as
 * "--name" followed by a space. */
static void put_opts(FILE *f, const char *path, int values_only)
{
	const struct cpl_node *n = node_of(path);
	const struct option *o;

	if (!n || !n->opts) {
		if (!values_only)
			fprintf(f, *path ? "--help " : "--help --version ");
		return;
	}
	for (o = *n->opts; o->name; o++)
		if (offered(n, o) && (!values_only || o->has_arg == required_argument))
			fprintf(f, "--%s ", o->name);
}

static const char *args_name(const char *path)
{
	const struct cpl_node *n = node_of(path);
	static const char *const names[] = { "", "files", "cmd", "words" };

	return n ? names[n->args] : "";
}

/* ---- bash and zsh: one data part, one driver each ---------------- */

static void sh_spec_case(FILE *f, const char *path)
{
	const struct cpl_node *n = node_of(path);

	fprintf(f, "\t'%s')\n\t\t_cordon_subs='", path);
	put_subs(f, path);
	fprintf(f, "'\n\t\t_cordon_opts='");
	put_opts(f, path, 0);
	fprintf(f, "'\n\t\t_cordon_vopts=' ");
	put_opts(f, path, 1);
	fprintf(f, "'\n\t\t_cordon_args='%s'", args_name(path));
	if (n && n->args == ARGS_SHELL)
		fprintf(f, "\n\t\t_cordon_words='%s'", shells);
	fprintf(f, " ;;\n");
}

static void sh_value_cases(FILE *f, const char *path)
{
	const struct cpl_node *n = node_of(path);
	const struct option *o;
	size_t i;

	if (!n || !n->opts)
		return;
	for (o = *n->opts; o->name; o++) {
		const struct cpl_hint *h = hint_of(path, o->name);

		if (!h || !offered(n, o) || o->has_arg != required_argument)
			continue;
		fprintf(f, "\t'%s --%s') ", path, o->name);
		switch (h->kind) {
		case VAL_FILE:
			fprintf(f, "_cordon_kind=file ;;\n");
			break;
		case VAL_DIR:
			fprintf(f, "_cordon_kind=dir ;;\n");
			break;
		case VAL_WORDS:
			fprintf(f, "_cordon_kind=words _cordon_words='%s' ;;\n", h->words);
			break;
		case VAL_PROFILE:
			fprintf(f, "_cordon_kind=filewords _cordon_words='");
			for (i = 0; cd_profile_builtin_name(i); i++)
				fprintf(f, "%s%s", i ? " " : "", cd_profile_builtin_name(i));
			fprintf(f, "' ;;\n");
			break;
		default:
			break;
		}
	}
}

static void sh_data(FILE *f)
{
	fputs("# _cordon_spec PATH: the sub-commands, options, options taking a value and\n"
	      "# positional arguments of the command PATH (\"\" is cordon itself).\n"
	      "_cordon_spec() {\n"
	      "\t_cordon_subs= _cordon_opts= _cordon_vopts= _cordon_args= _cordon_words=\n"
	      "\tcase $1 in\n",
	      f);
	each_path(f, sh_spec_case);
	fputs("\tesac\n}\n\n"
	      "# _cordon_value PATH OPTION: what OPTION's value is (file, dir, words,\n"
	      "# filewords: those words or a file; empty: nothing to offer).\n"
	      "_cordon_value() {\n"
	      "\t_cordon_kind= _cordon_words=\n"
	      "\tcase \"$1 $2\" in\n",
	      f);
	each_path(f, sh_value_cases);
	fputs("\tesac\n}\n\n", f);
}

/* The walk over the words before the cursor, the same in both shells
 * (W is how a word is read: bash and zsh index their arrays differently):
 * PATH grows by each sub-command; an option that takes a value skips it;
 * "--" or the first operand of a command that runs a command (run, shell,
 * mcp) switches to that command. */
#define SH_WALK(W, NEXT)                                                                           \
	"\twhile [ \"$i\" -lt \"$last\" ]; do\n"                                                   \
	"\t\tw=" W "\n"                                                                            \
	"\t\t_cordon_spec \"$cpath\"\n"                                                            \
	"\t\tif [ \"$cmd\" -gt 0 ]; then\n"                                                        \
	"\t\t\t:\n"                                                                                \
	"\t\telif [ \"$w\" = -- ] && [ \"$endopt\" = 0 ]; then\n"                                  \
	"\t\t\tendopt=1\n"                                                                         \
	"\t\t\t[ \"$_cordon_args\" = cmd ] && cmd=$((i + 1))\n"                                    \
	"\t\telif [ \"$endopt\" = 0 ] && [ \"${w#-}\" != \"$w\" ]; then\n"                         \
	"\t\t\tif [ \"" NEXT "\" = = ]; then\n"                                                    \
	"\t\t\t\ti=$((i + 2))\n"                                                                   \
	"\t\t\telse\n"                                                                             \
	"\t\t\t\tcase $_cordon_vopts in *\" $w \"*) i=$((i + 1)) ;; esac\n"                        \
	"\t\t\tfi\n"                                                                               \
	"\t\telif [ \"$nargs\" = 0 ] && case \" $_cordon_subs \" in *\" $w \"*) true ;; *) false " \
	";; esac; then\n"                                                                          \
	"\t\t\tcpath=${cpath:+$cpath }$w\n"                                                        \
	"\t\telse\n"                                                                               \
	"\t\t\tnargs=$((nargs + 1))\n"                                                             \
	"\t\t\t[ \"$_cordon_args\" = cmd ] && cmd=$i\n"                                            \
	"\t\tfi\n"                                                                                 \
	"\t\ti=$((i + 1))\n"                                                                       \
	"\tdone\n"                                                                                 \
	"\t_cordon_spec \"$cpath\"\n"

static const char bash_driver[] =
        "# One reply per line of compgen's output (file names may hold spaces).\n"
        "_cordon_reply() {\n"
        "\tlocal w\n"
        "\twhile IFS= read -r w; do COMPREPLY+=(\"$w\"); done < <(compgen \"$@\")\n"
        "}\n\n"
        "_cordon() {\n"
        "\tlocal cur=${COMP_WORDS[COMP_CWORD]} prev= w cpath= opt= i=1 last=$COMP_CWORD\n"
        "\tlocal nargs=0 cmd=0 endopt=0\n"
        "\tCOMPREPLY=()\n" SH_WALK(
                "${COMP_WORDS[i]}",
                "${COMP_WORDS[i + 1]}") "\tif [ \"$cmd\" -gt 0 ]; then\n"
                                        "\t\tif [ \"$cmd\" = \"$last\" ]; then _cordon_reply -c -- "
                                        "\"$cur\"\n"
                                        "\t\telse compopt -o filenames 2>/dev/null; _cordon_reply "
                                        "-f -- \"$cur\"; fi\n"
                                        "\t\treturn 0\n"
                                        "\tfi\n"
                                        "\t[ \"$last\" -gt 1 ] && prev=${COMP_WORDS[last - 1]}\n"
                                        "\t# bash splits --opt=value at '=': --opt, =, value\n"
                                        "\tif [ \"$cur\" = = ]; then opt=$prev cur=\n"
                                        "\telif [ \"$prev\" = = ] && [ \"$last\" -gt 2 ]; then "
                                        "opt=${COMP_WORDS[last - 2]}\n"
                                        "\telif [ \"$endopt\" = 0 ]; then\n"
                                        "\t\tcase $_cordon_vopts in *\" $prev \"*) opt=$prev ;; "
                                        "esac\n"
                                        "\tfi\n"
                                        "\tif [ -n \"$opt\" ]; then\n"
                                        "\t\t_cordon_value \"$cpath\" \"$opt\"\n"
                                        "\t\tcase $_cordon_kind in\n"
                                        "\t\tfile) compopt -o filenames 2>/dev/null; _cordon_reply "
                                        "-f -- \"$cur\" ;;\n"
                                        "\t\tdir) compopt -o filenames 2>/dev/null; _cordon_reply "
                                        "-d -- \"$cur\" ;;\n"
                                        "\t\twords) _cordon_reply -W \"$_cordon_words\" -- "
                                        "\"$cur\" ;;\n"
                                        "\t\tfilewords) compopt -o filenames 2>/dev/null\n"
                                        "\t\t\t_cordon_reply -W \"$_cordon_words\" -- \"$cur\"; "
                                        "_cordon_reply -f -- \"$cur\" ;;\n"
                                        "\t\tesac\n"
                                        "\t\treturn 0\n"
                                        "\tfi\n"
                                        "\tif [ \"$endopt\" = 0 ] && [ \"${cur#-}\" != \"$cur\" ]; "
                                        "then\n"
                                        "\t\t_cordon_reply -W \"$_cordon_opts\" -- \"$cur\"\n"
                                        "\telif [ -n \"$_cordon_subs\" ] && [ \"$nargs\" = 0 ]; "
                                        "then\n"
                                        "\t\t_cordon_reply -W \"$_cordon_subs\" -- \"$cur\"\n"
                                        "\telse\n"
                                        "\t\tcase $_cordon_args in\n"
                                        "\t\tfiles) compopt -o filenames 2>/dev/null; "
                                        "_cordon_reply -f -- \"$cur\" ;;\n"
                                        "\t\tcmd) _cordon_reply -c -- \"$cur\" ;;\n"
                                        "\t\twords) _cordon_reply -W \"$_cordon_words\" -- "
                                        "\"$cur\" ;;\n"
                                        "\t\tesac\n"
                                        "\tfi\n"
                                        "\treturn 0\n"
                                        "}\n\n"
                                        "complete -F _cordon cordon\n";

static const char zsh_driver[] =
        "_cordon() {\n"
        "\tlocal cur=${words[CURRENT]} prev= w cpath= opt= i=2 last=$CURRENT\n"
        "\tlocal nargs=0 cmd=0 endopt=0\n" SH_WALK(
                "${words[i]}",
                "") "\tif [ \"$cmd\" -gt 0 ]; then\n"
                    "\t\twords=(\"${(@)words[cmd,-1]}\")\n"
                    "\t\tCURRENT=$((CURRENT - cmd + 1))\n"
                    "\t\t_normal\n"
                    "\t\treturn\n"
                    "\tfi\n"
                    "\t[ \"$last\" -gt 2 ] && prev=${words[last - 1]}\n"
                    "\tif [ \"$endopt\" = 0 ] && [ \"${cur#--*=}\" != \"$cur\" ]; then\n"
                    "\t\topt=${cur%%=*}\n"
                    "\t\tcompset -P '*='\n"
                    "\telif [ \"$endopt\" = 0 ]; then\n"
                    "\t\tcase $_cordon_vopts in *\" $prev \"*) opt=$prev ;; esac\n"
                    "\tfi\n"
                    "\tif [ -n \"$opt\" ]; then\n"
                    "\t\t_cordon_value \"$cpath\" \"$opt\"\n"
                    "\t\tcase $_cordon_kind in\n"
                    "\t\tfile) _files ;;\n"
                    "\t\tdir) _files -/ ;;\n"
                    "\t\twords) compadd -- ${=_cordon_words} ;;\n"
                    "\t\tfilewords) compadd -- ${=_cordon_words}; _files ;;\n"
                    "\t\tesac\n"
                    "\t\treturn\n"
                    "\tfi\n"
                    "\tif [ \"$endopt\" = 0 ] && [ \"${cur#-}\" != \"$cur\" ]; then\n"
                    "\t\tcompadd -- ${=_cordon_opts}\n"
                    "\telif [ -n \"$_cordon_subs\" ] && [ \"$nargs\" = 0 ]; then\n"
                    "\t\tcompadd -- ${=_cordon_subs}\n"
                    "\telse\n"
                    "\t\tcase $_cordon_args in\n"
                    "\t\tfiles) _files ;;\n"
                    "\t\tcmd) _command_names -e ;;\n"
                    "\t\twords) compadd -- ${=_cordon_words} ;;\n"
                    "\t\tesac\n"
                    "\tfi\n"
                    "}\n\n"
                    "# Autoloaded from $fpath (as _cordon) this runs the completion; sourced,\n"
                    "# it registers it (compinit must have run).\n"
                    "if [ \"${funcstack[1]}\" = _cordon ]; then\n"
                    "\t_cordon \"$@\"\n"
                    "else\n"
                    "\tcompdef _cordon cordon\n"
                    "fi\n";

static void put_bash(FILE *f)
{
	fputs("# bash completion for cordon, generated by `cordon completion bash` from\n"
	      "# the option tables cordon parses with.  Enable it with\n"
	      "#   source <(cordon completion bash)\n"
	      "# in ~/.bashrc, or save it as ~/.local/share/bash-completion/completions/cordon\n\n",
	      f);
	sh_data(f);
	fputs(bash_driver, f);
}

static void put_zsh(FILE *f)
{
	fputs("#compdef cordon\n"
	      "# zsh completion for cordon, generated by `cordon completion zsh` from\n"
	      "# the option tables cordon parses with.  Enable it with\n"
	      "#   source <(cordon completion zsh)\n"
	      "# in ~/.zshrc after compinit, or save it as _cordon in a directory of $fpath\n\n",
	      f);
	sh_data(f);
	fputs(zsh_driver, f);
}

/* ---- fish ----------------------------------------------------------- */

static void fish_spec_case(FILE *f, const char *path)
{
	const struct cpl_node *n = node_of(path);

	fprintf(f, "\tcase '%s'\n\t\tset __cordon_subs ", path);
	put_subs(f, path);
	fprintf(f, "\n\t\tset __cordon_vopts ");
	put_opts(f, path, 1);
	fprintf(f, "\n\t\tset __cordon_args '%s'\n", args_name(path));
	(void)n;
}

/* A fish single-quoted string: only \ and ' are special in it. */
static void fish_quoted(FILE *f, const char *s)
{
	fputc('\'', f);
	for (; *s; s++) {
		if (*s == '\\' || *s == '\'')
			fputc('\\', f);
		fputc(*s, f);
	}
	fputc('\'', f);
}

static void fish_option_lines(FILE *f, const char *path)
{
	const struct cpl_node *n = node_of(path);
	const struct option *o;
	size_t i;

	if (!n || !n->opts) {
		fprintf(f, "complete -c cordon -n \"__cordon_at '%s'\" -l help\n", path);
		if (!*path)
			fprintf(f, "complete -c cordon -n \"__cordon_at ''\" -l version\n");
		return;
	}
	for (o = *n->opts; o->name; o++) {
		const struct cpl_hint *h = hint_of(path, o->name);

		if (!offered(n, o))
			continue;
		fprintf(f, "complete -c cordon -n \"__cordon_at '%s'\" -l %s", path, o->name);
		if (o->has_arg != required_argument) {
			fputc('\n', f);
			continue;
		}
		switch (h ? h->kind : VAL_NONE) {
		case VAL_FILE:
			fprintf(f, " -r -F\n");
			break;
		case VAL_DIR:
			fprintf(f, " -x -a '(__fish_complete_directories (commandline -ct))'\n");
			break;
		case VAL_WORDS:
			fprintf(f, " -x -a '%s'\n", h->words);
			break;
		case VAL_PROFILE:
			fprintf(f, " -r -F -a '");
			for (i = 0; cd_profile_builtin_name(i); i++)
				fprintf(f, "%s%s", i ? " " : "", cd_profile_builtin_name(i));
			fprintf(f, "'\n");
			break;
		default:
			fprintf(f, " -x\n");
			break;
		}
	}
}

static void fish_arg_lines(FILE *f, const char *path)
{
	const struct cpl_node *n = node_of(path);
	const struct cd_cmd *cmds;
	size_t i, ncmd;

	if (!*path) {
		cmds = cli_commands(&ncmd);
		for (i = 0; i < ncmd; i++) {
			fprintf(f, "complete -c cordon -n \"__cordon_sub_at ''\" -a %s -d ",
			        cmds[i].name);
			fish_quoted(f, cmds[i].summary);
			fputc('\n', f);
		}
		return;
	}
	fprintf(f, "complete -c cordon -n \"__cordon_sub_at '%s'\" -a '", path);
	put_subs(f, path);
	fprintf(f, "'\n");
	switch (n ? n->args : ARGS_NONE) {
	case ARGS_FILES:
		fprintf(f, "complete -c cordon -n \"__cordon_at '%s'\" -F\n", path);
		break;
	case ARGS_CMD:
		fprintf(f,
		        "complete -c cordon -n \"__cordon_sub_at '%s'\" -a "
		        "'(__fish_complete_command)'\n",
		        path);
		break;
	case ARGS_SHELL:
		fprintf(f, "complete -c cordon -n \"__cordon_sub_at '%s'\" -a '%s'\n", path,
		        shells);
		break;
	default:
		break;
	}
}

static void fish_lines(FILE *f, const char *path)
{
	fish_option_lines(f, path);
	fish_arg_lines(f, path);
}

static const char fish_walk[] =
        "# The words before the cursor: the command path (sub-commands), how many\n"
        "# operands, and whether they are already a command cordon runs (run, shell,\n"
        "# mcp: after '--' or from its first operand on).\n"
        "function __cordon_state\n"
        "\tset -l toks (commandline -opc)\n"
        "\tset -g __cordon_path ''\n"
        "\tset -g __cordon_n 0\n"
        "\tset -g __cordon_cmd 0\n"
        "\tset -l endopt 0\n"
        "\tset -l skip 0\n"
        "\tfor w in $toks[2..-1]\n"
        "\t\tif test $skip = 1\n"
        "\t\t\tset skip 0\n"
        "\t\t\tcontinue\n"
        "\t\tend\n"
        "\t\t__cordon_spec \"$__cordon_path\"\n"
        "\t\tif test $__cordon_cmd = 1\n"
        "\t\t\tset __cordon_n (math $__cordon_n + 1)\n"
        "\t\telse if test \"$w\" = '--' -a $endopt = 0\n"
        "\t\t\tset endopt 1\n"
        "\t\t\tif test \"$__cordon_args\" = cmd\n"
        "\t\t\t\tset __cordon_cmd 1\n"
        "\t\t\t\tset __cordon_n 0\n"
        "\t\t\tend\n"
        "\t\telse if test $endopt = 0; and string match -q -- '-*' \"$w\"\n"
        "\t\t\tif contains -- \"$w\" $__cordon_vopts\n"
        "\t\t\t\tset skip 1\n"
        "\t\t\tend\n"
        "\t\telse if test $__cordon_n = 0; and contains -- \"$w\" $__cordon_subs\n"
        "\t\t\tset __cordon_path (string trim -- \"$__cordon_path $w\")\n"
        "\t\telse\n"
        "\t\t\tset __cordon_n (math $__cordon_n + 1)\n"
        "\t\t\tif test \"$__cordon_args\" = cmd\n"
        "\t\t\t\tset __cordon_cmd 1\n"
        "\t\t\tend\n"
        "\t\tend\n"
        "\tend\n"
        "\t__cordon_spec \"$__cordon_path\"\n"
        "end\n\n"
        "# At the command PATH: its options and option values.\n"
        "function __cordon_at --argument-names p\n"
        "\t__cordon_state\n"
        "\ttest $__cordon_cmd = 0 -a \"$__cordon_path\" = \"$p\"\n"
        "end\n\n"
        "# At PATH before any operand: its sub-commands.\n"
        "function __cordon_sub_at --argument-names p\n"
        "\t__cordon_at \"$p\"; and test $__cordon_n = 0\n"
        "end\n\n"
        "# In the command cordon runs: its name (first = 1) or its arguments.\n"
        "function __cordon_in_cmd --argument-names first\n"
        "\t__cordon_state\n"
        "\ttest $__cordon_cmd = 1; or return 1\n"
        "\tif test $first = 1\n"
        "\t\ttest $__cordon_n = 0\n"
        "\telse\n"
        "\t\ttest $__cordon_n -gt 0\n"
        "\tend\n"
        "end\n\n";

static void put_fish(FILE *f)
{
	fputs("# fish completion for cordon, generated by `cordon completion fish` from\n"
	      "# the option tables cordon parses with.  Enable it with\n"
	      "#   cordon completion fish > ~/.config/fish/completions/cordon.fish\n\n"
	      "# __cordon_spec PATH: the sub-commands, options taking a value and\n"
	      "# positional arguments of the command PATH ('' is cordon itself).\n"
	      "function __cordon_spec --argument-names p\n"
	      "\tset -g __cordon_subs\n"
	      "\tset -g __cordon_vopts\n"
	      "\tset -g __cordon_args ''\n"
	      "\tswitch \"$p\"\n",
	      f);
	each_path(f, fish_spec_case);
	fputs("\tend\nend\n\n", f);
	fputs(fish_walk, f);
	fputs("complete -c cordon -e\n"
	      "complete -c cordon -f\n"
	      "complete -c cordon -n '__cordon_in_cmd 1' -a '(__fish_complete_command)'\n"
	      "complete -c cordon -n '__cordon_in_cmd 0' -F\n",
	      f);
	each_path(f, fish_lines);
}

static void usage(FILE *f)
{
	fprintf(f, "usage: cordon completion bash|zsh|fish\n"
	           "\n"
	           "Print a completion script for the shell: every command, sub-command and\n"
	           "option, generated from the tables cordon parses its options with, and the\n"
	           "values of options that take a file, a directory or one of a known set\n"
	           "(profiles, formats, shells).  Enable it:\n"
	           "  bash: source <(cordon completion bash)       (in ~/.bashrc)\n"
	           "  zsh:  source <(cordon completion zsh)        (in ~/.zshrc, after compinit)\n"
	           "  fish: cordon completion fish > ~/.config/fish/completions/cordon.fish\n"
	           "\n"
	           "  -h, --help    this text\n"
	           "\n"
	           "Exit status: 0, 2 usage (an unknown shell), 125 the script could not be\n"
	           "written.\n");
}

int cmd_completion(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *sh;
	int c;

	optind = 1;
	while ((c = cli_getopt(argc, argv, "h", opts, CD_EXIT_USAGE)) != -1) {
		if (c == 'h') {
			usage(stdout);
			return CD_EXIT_OK;
		}
	}
	if (optind != argc - 1) {
		cli_errorf("name one shell: bash, zsh or fish (see --help)");
		return CD_EXIT_USAGE;
	}
	sh = argv[optind];
	if (!strcmp(sh, "bash"))
		put_bash(stdout);
	else if (!strcmp(sh, "zsh"))
		put_zsh(stdout);
	else if (!strcmp(sh, "fish"))
		put_fish(stdout);
	else {
		cli_errorf("unknown shell '%s' (bash, zsh or fish)", sh);
		return CD_EXIT_USAGE;
	}
	if (fflush(stdout) != 0 || ferror(stdout)) {
		cli_errorf("cannot write the completion script");
		return CD_EXIT_CORDON;
	}
	return CD_EXIT_OK;
}
