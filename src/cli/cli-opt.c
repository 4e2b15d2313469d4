/* cli-opt.c — one option rule for every command: long options are taken by
 * their exact name only (getopt_long would accept any unambiguous prefix, so
 * `--tim` meant `--timeout` and a later option could silently change what an
 * old script means), and an unknown option is reported with the nearest
 * known name.  Trust boundary: argv, from the invoking user. */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

#include "util/editdist.h"

const char *cli_opt_nearest(const char *name, size_t len, const struct option *longopts)
{
	const struct option *o, *best = NULL;
	size_t d, rank, bestrank = 3, bestd = 99;

	for (o = longopts; o && o->name; o++) {
		d = cd_edit_distance(name, len, o->name);
		/* An abbreviation getopt_long used to accept points at its option
		 * first; then the nearest by edit distance (at most 2). */
		rank = len >= 2 && len < strlen(o->name) && !strncmp(o->name, name, len) ? 0 : d;
		if (rank < bestrank || (rank == bestrank && d < bestd)) {
			bestrank = rank;
			bestd = d;
			best = o;
		}
	}
	return best ? best->name : NULL;
}

void cli_opt_unknown(const char *token, const struct option *longopts)
{
	const char *eq, *name, *near = NULL;
	size_t len;

	if (token[0] == '-' && token[1] == '-') {
		name = token + 2;
		eq = strchr(name, '=');
		len = eq ? (size_t)(eq - name) : strlen(name);
		near = cli_opt_nearest(name, len, longopts);
		if (near) {
			cli_errorf("unknown option '%.*s' (did you mean '--%s'?)", (int)(len + 2),
			           token, near);
			return;
		}
		cli_errorf("unknown option '%.*s' (see --help)", (int)(len + 2), token);
		return;
	}
	cli_errorf("unknown option '%s' (see --help)", token);
}

static const struct option *find_long(const char *name, size_t len, const struct option *longopts)
{
	const struct option *o;

	for (o = longopts; o && o->name; o++)
		if (strlen(o->name) == len && !strncmp(o->name, name, len))
			return o;
	return NULL;
}

/* Walk argv as getopt_long will and find the first long option whose name
 * is not exactly one of longopts.  Short options are left to getopt_long;
 * their argument, when they take one, is skipped here. */
static const char *first_inexact(int argc, char **argv, const char *shortopts,
                                 const struct option *longopts)
{
	int i, in_order = shortopts[0] == '+' || getenv("POSIXLY_CORRECT");

	for (i = optind > 0 ? optind : 1; i < argc; i++) {
		const char *t = argv[i], *eq;
		const struct option *o;

		if (!strcmp(t, "--"))
			return NULL;
		if (t[0] != '-' || t[1] == '\0') {
			if (in_order)
				return NULL;
			continue;
		}
		if (t[1] != '-') {
			size_t k;
			for (k = 1; t[k]; k++) {
				const char *s = t[k] == ':' ? NULL : strchr(shortopts, t[k]);
				if (s && s[1] == ':') {
					if (!t[k + 1] && s[2] != ':')
						i++;
					break;
				}
			}
			continue;
		}
		eq = strchr(t + 2, '=');
		o = find_long(t + 2, eq ? (size_t)(eq - t - 2) : strlen(t + 2), longopts);
		if (!o)
			return t;
		if (o->has_arg == required_argument && !eq)
			i++;
	}
	return NULL;
}

int cli_getopt(int argc, char **argv, const char *shortopts, const struct option *longopts,
               int bad_exit)
{
	const char *bad, *tok;
	int c;

	opterr = 0;
	/* The whole command line is checked before the first option is taken
	 * (optind is 0 or 1 then; again after a short option group, harmlessly). */
	if (optind <= 1 && (bad = first_inexact(argc, argv, shortopts, longopts))) {
		if (bad_exit < 0)
			return '?';
		cli_opt_unknown(bad, longopts);
		exit(bad_exit);
	}
	c = getopt_long(argc, argv, shortopts, longopts, NULL);
	if ((c != '?' && c != ':') || bad_exit < 0)
		return c;
	tok = optind > 0 && optind <= argc ? argv[optind - 1] : "";
	if (optopt && optopt < 256 && !(tok[0] == '-' && tok[1] == '-')) {
		if (strchr(shortopts, optopt) && optopt != ':')
			cli_errorf("option '-%c' needs a value", optopt);
		else
			cli_errorf("unknown option '-%c' (see --help)", optopt);
	} else if (tok[0] == '-' && tok[1] == '-' && strchr(tok, '=')) {
		cli_errorf("option '%.*s' takes no value", (int)(strchr(tok, '=') - tok), tok);
	} else if (tok[0] == '-' && tok[1] == '-') {
		cli_errorf("option '%s' needs a value", tok);
	} else {
		cli_errorf("bad option (see --help)");
	}
	exit(bad_exit);
}
