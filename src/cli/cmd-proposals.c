/* cmd-proposals.c — `cordon proposals list|show|diff|apply|commit|reject`: a
 * person reviews what a `cordon run --propose` changed, then applies it to
 * the real tree (or commits it on a new git branch) or rejects it.
 *
 * Everything shown comes from the sandboxed command (names, contents,
 * diffs) and is escaped before it reaches the terminal or a JSON string.
 * Every end of a proposal is an audit record naming who decided; the
 * approver may not be the agent that made the proposal. */
#include "cli.h"

#include "util/buf.h"
#include "cli-audit.h"
#include "mask/mask.h"
#include "proposal/proposal.h"
#include "store/state.h"
#include "util/util.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <jansson.h>
#include <pwd.h>
#include <sodium.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define MAX_PATHS 4096

static void usage(FILE *f)
{
	fprintf(f,
	        "usage: cordon proposals list [--json]\n"
	        "       cordon proposals show ID [--json]\n"
	        "       cordon proposals diff ID [PATH...]\n"
	        "       cordon proposals apply ID [--paths P]... [--accept-flagged P]...\n"
	        "                                [--branch NAME] [--as NAME] [--json]\n"
	        "       cordon proposals commit ID --branch NAME [--paths P]...\n"
	        "                                [--accept-flagged P]... [--as NAME] [--json]\n"
	        "       cordon proposals reject ID [--as NAME]\n"
	        "\n"
	        "Review the file changes a 'cordon run --propose' made in its overlay, then\n"
	        "apply them to the real tree, commit them on a new git branch, or reject them.\n"
	        "\n"
	        "  list                  every proposal, newest first\n"
	        "  show ID               its files: added, modified, deleted, refused; its\n"
	        "                        directories: mkdir (new, with its mode), rmdir; the\n"
	        "                        SHA-256 of each base and new content; flagged files\n"
	        "                        (git hooks and config, CI, shell rc, .mcp.json ...);\n"
	        "                        the run's layer: its caps, and whether it was full\n"
	        "  diff ID [PATH...]     the unified diff of its text files (escaped)\n"
	        "  apply ID              check that every file's base in the real tree is still\n"
	        "                        what the run saw (else refuse, naming the files, and\n"
	        "                        change nothing), then replace each file atomically\n"
	        "                        (temporary name, fsync, rename; the old content is\n"
	        "                        checked again after the swap); new directories are\n"
	        "                        made first (one that exists by then: refused),\n"
	        "                        removed ones last (one not empty: left in place)\n"
	        "  --paths P             apply only P (repeatable; exact paths of the proposal)\n"
	        "  --accept-flagged P    apply flagged file P too (repeatable: one by one;\n"
	        "                        flagged files are never applied otherwise)\n"
	        "  --branch NAME         commit on a new branch NAME of the tree's git\n"
	        "                        repository (on top of HEAD) instead; the working\n"
	        "                        tree is not touched; git holds no directories: a\n"
	        "                        new empty one is left out, and said so; git runs\n"
	        "                        no hook and no filter of the repository\n"
	        "  commit ID             apply --branch: the same checks, the same record\n"
	        "  reject ID             end it unapplied; its layer is removed\n"
	        "  --as NAME             who decides (default: the login name); never the\n"
	        "                        agent that made the proposal\n"
	        "  --state PATH          the state database (default $CORDON_STATE, else\n"
	        "                        $XDG_STATE_HOME/cordon/state.db)\n"
	        "  --audit PATH          the audit log (default $CORDON_AUDIT ...)\n"
	        "  --json                machine-readable output\n"
	        "  -h, --help            this text\n"
	        "\n"
	        "Exit status: 0 done; 1 apply refused (stale bases, nothing applied) or\n"
	        "partly failed; 2 usage; 125 cordon failed.\n");
}

struct popts {
	const char *state, *audit, *as, *branch;
	const char *paths[MAX_PATHS];
	size_t npaths;
	const char *accept[MAX_PATHS];
	size_t naccept;
	int json;
	int first; /* index of the first operand */
};

enum { OPT_STATE = 256, OPT_AUDIT, OPT_AS, OPT_BRANCH, OPT_PATHS, OPT_ACCEPT, OPT_JSON };

static const struct option options[] = {
	{ "state", required_argument, NULL, OPT_STATE },
	{ "audit", required_argument, NULL, OPT_AUDIT },
	{ "as", required_argument, NULL, OPT_AS },
	{ "branch", required_argument, NULL, OPT_BRANCH },
	{ "paths", required_argument, NULL, OPT_PATHS },
	{ "accept-flagged", required_argument, NULL, OPT_ACCEPT },
	{ "json", no_argument, NULL, OPT_JSON },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};
const struct option *const cli_opts_proposals = options; /* cordon completion */

static int parse(int argc, char **argv, struct popts *o)
{
	int c;

	memset(o, 0, sizeof *o);
	optind = 1;
	opterr = 0;
	while ((c = cli_getopt(argc, argv, "h", options, CD_EXIT_USAGE)) != -1) {
		switch (c) {
		case 'h':
			usage(stdout);
			exit(CD_EXIT_OK);
		case OPT_STATE:
			o->state = optarg;
			break;
		case OPT_AUDIT:
			o->audit = optarg;
			break;
		case OPT_AS:
			o->as = optarg;
			break;
		case OPT_BRANCH:
			o->branch = optarg;
			break;
		case OPT_PATHS:
		case OPT_ACCEPT:
			if ((c == OPT_PATHS ? o->npaths : o->naccept) >= MAX_PATHS) {
				cli_errorf("too many paths (max %d)", MAX_PATHS);
				return -1;
			}
			if (c == OPT_PATHS)
				o->paths[o->npaths++] = optarg;
			else
				o->accept[o->naccept++] = optarg;
			break;
		case OPT_JSON:
			o->json = 1;
			break;
		default:
			cli_errorf("unknown option '%s' (see --help)", argv[optind - 1]);
			return -1;
		}
	}
	o->first = optind;
	return 0;
}

/* Escaped text for a terminal or a JSON string: control bytes, invalid
 * UTF-8 and newlines in names never reach either raw. */
static char *esc(const char *p, size_t n)
{
	struct cd_buf b;

	cd_buf_init(&b, 4 * n + 16);
	if (cd_buf_escape(&b, p, n) < 0 || cd_buf_putc(&b, '\0') < 0) {
		cd_buf_release(&b);
		return NULL;
	}
	return cd_buf_take(&b);
}

static void print_json(json_t *o)
{
	char *s = o ? json_dumps(o, JSON_COMPACT | JSON_ENSURE_ASCII) : NULL;
	if (s)
		printf("%s\n", s);
	free(s);
}

int cli_proposal_record(struct cd_audit *audit, const struct cd_proposal *p, const char *kind,
                        const char *by, const char *reason)
{
	struct cd_err err = { 0, "" };
	int r = cd_proposal_record(audit, p, kind, by, reason, &err);

	if (r < 0)
		cli_errorf("%s", err.msg);
	return r;
}

int cli_proposal_layer_dir(const char *state_opt, const char *run_id, char *out, size_t outlen)
{
	char st[4096];
	char *slash;
	int n;

	if (cli_state_local(state_opt, st, sizeof st) < 0)
		return -ENOENT;
	slash = strrchr(st, '/');
	if (!slash)
		return -EINVAL;
	*slash = '\0';
	n = snprintf(out, outlen, "%s/proposals/%s", st[0] ? st : "/", run_id);
	return n < 0 || (size_t)n >= outlen ? -ENAMETOOLONG : 0;
}

int cli_proposal_key(const char *state_opt, unsigned char *key)
{
	struct cd_err err = { 0, "" };
	char dir[4096], path[4200];
	char *slash;

	/* proposals/RUN -> proposals/ -> its parent: the local state dir. */
	if (cli_proposal_layer_dir(state_opt, "x", dir, sizeof dir) < 0 ||
	    !(slash = strrchr(dir, '/'))) {
		cli_errorf("proposals: no place for this host's proposal key");
		return -1;
	}
	*slash = '\0';
	slash = strrchr(dir, '/');
	if (slash)
		*slash = '\0';
	snprintf(path, sizeof path, "%s/proposal.key", dir[0] ? dir : "");
	if (cd_mask_key_load(path, key, &err) < 0) {
		cli_errorf("proposal key: %s", err.msg);
		return -1;
	}
	return 0;
}

struct env {
	struct cd_state *state;
	struct cd_audit *audit;
	const char *state_opt;
};

static int env_open(struct env *v, const struct popts *o, int need_audit)
{
	memset(v, 0, sizeof *v);
	v->state_opt = o->state;
	if ((need_audit && cli_audit_open(o->audit, &v->audit) < 0) ||
	    cli_state_open(o->state, &v->state) < 0)
		return -1;
	return 0;
}

static void env_close(struct env *v)
{
	cd_state_close(v->state);
	cd_audit_close(v->audit);
}

static int list_cmd(struct env *v, const struct popts *o)
{
	struct cd_err err = { 0, "" };
	struct cd_proposal *ps = NULL;
	size_t n = 0, i;
	json_t *arr = o->json ? json_array() : NULL;

	if (cd_proposal_list(v->state, &ps, &n, &err) < 0) {
		cli_errorf("%s", err.msg);
		json_decref(arr);
		return CD_EXIT_CORDON;
	}
	for (i = 0; i < n; i++) {
		char t[32];
		if (arr) {
			json_t *h = cd_proposal_head_json(&ps[i]);
			if (h)
				json_object_set_new(h, "files",
				                    json_integer((json_int_t)ps[i].nfiles));
			json_array_append_new(arr, h);
			continue;
		}
		cli_time_utc(ps[i].created, t, sizeof t);
		{
			char *ag = esc(ps[i].agent ? ps[i].agent : "-",
			               strlen(ps[i].agent ? ps[i].agent : "-"));
			printf("%s\t%s\t%s\t%s\t%zu files\trun %s\n", ps[i].id, ps[i].status, t,
			       ag ? ag : "?", ps[i].nfiles, ps[i].run_id);
			free(ag);
		}
	}
	if (arr)
		print_json(arr);
	json_decref(arr);
	cd_proposal_list_free(ps, n);
	return CD_EXIT_OK;
}

static int load(struct env *v, const char *id, struct cd_proposal **ret)
{
	struct cd_err err = { 0, "" };

	unsigned char key[CD_PROPOSAL_KEY_LEN];
	int r;

	if (cli_proposal_key(v->state_opt, key) < 0)
		return -1;
	r = cd_proposal_load(v->state, key, id, ret, &err);
	sodium_memzero(key, sizeof key);
	if (r < 0) {
		cli_errorf("%s", err.msg);
		return -1;
	}
	return 0;
}

static void print_file(const struct cd_prop_file *f)
{
	char *ep = esc(f->path, f->path_len);

	printf("%-8s %s %s", cd_prop_op_name(f->op), f->flagged ? "FLAGGED" : "-", ep ? ep : "?");
	if (f->op == CD_PROP_MODIFIED && f->base_mode != f->new_mode)
		printf("  (mode %04o -> %04o)", f->base_mode, f->new_mode);
	else if (f->op == CD_PROP_ADDED || f->op == CD_PROP_MKDIR)
		printf("  (mode %04o)", f->new_mode);
	if (f->note)
		printf("  (%s)", f->note);
	if (f->applied)
		printf("  [applied]");
	printf("\n");
	if (f->base_sha256[0])
		printf("         base %s\n", f->base_sha256);
	if (f->new_sha256[0])
		printf("         new  %s\n", f->new_sha256);
	free(ep);
}

static int show_cmd(struct env *v, const struct popts *o, const char *id)
{
	struct cd_proposal *p;
	size_t i, c[CD_PROP_NOPS], fl;
	char t[32];
	char *tree;

	if (load(v, id, &p) < 0)
		return CD_EXIT_CORDON;
	if (o->json) {
		json_t *j = cd_proposal_json(p, 0);
		print_json(j);
		json_decref(j);
		cd_proposal_free(p);
		return CD_EXIT_OK;
	}
	cd_proposal_counts(p, c, &fl);
	cli_time_utc(p->created, t, sizeof t);
	tree = esc(p->tree, strlen(p->tree));
	printf("proposal %s (%s)\nrun %s  agent %s  task %s  created %s\ntree %s\n", p->id,
	       p->status, p->run_id, p->agent ? p->agent : "-", p->task ? p->task : "-", t,
	       tree ? tree : "?");
	free(tree);
	if (p->decided_by)
		printf("decided by %s%s%s%s%s\n", p->decided_by, p->branch ? " on branch " : "",
		       p->branch ? p->branch : "", p->commit ? " commit " : "",
		       p->commit ? p->commit : "");
	if (p->layer.size) {
		char used[32], cap[32];
		cli_size_human(p->layer.used, used, sizeof used);
		cli_size_human(p->layer.size, cap, sizeof cap);
		printf("layer %s of %s, %llu of %llu inodes%s\n", used, cap,
		       (unsigned long long)p->layer.used_inodes,
		       (unsigned long long)p->layer.inodes,
		       p->layer.bytes_full || p->layer.inodes_full
		               ? ": FULL (writes past the cap failed with ENOSPC in the run; "
		                 "what fit is here, a file may be cut short)"
		               : "");
	}
	printf("%zu added, %zu modified, %zu deleted, %zu mkdir, %zu rmdir, %zu refused, %zu "
	       "flagged\n",
	       c[CD_PROP_ADDED], c[CD_PROP_MODIFIED], c[CD_PROP_DELETED], c[CD_PROP_MKDIR],
	       c[CD_PROP_RMDIR], c[CD_PROP_REFUSED], fl);
	for (i = 0; i < p->nfiles; i++)
		print_file(&p->files[i]);
	cd_proposal_free(p);
	return CD_EXIT_OK;
}

/* A diff's text, line by line, each line escaped (tabs and all). */
static void print_diff(const char *d, size_t n)
{
	size_t at = 0;

	while (at < n) {
		const char *nl = memchr(d + at, '\n', n - at);
		size_t len = nl ? (size_t)(nl - (d + at)) : n - at;
		char *e = esc(d + at, len);
		printf("%s\n", e ? e : "?");
		free(e);
		at += len + 1;
	}
}

static int diff_cmd(struct env *v, const struct popts *o, const char *id, char **want, size_t nwant)
{
	struct cd_proposal *p;
	size_t i, j;

	if (load(v, id, &p) < 0)
		return CD_EXIT_CORDON;
	for (i = 0; i < p->nfiles; i++) {
		const struct cd_prop_file *f = &p->files[i];
		int match = nwant == 0;

		for (j = 0; j < nwant && !match; j++)
			match = strlen(want[j]) == f->path_len &&
			        memcmp(want[j], f->path, f->path_len) == 0;
		if (!match)
			continue;
		if (f->diff) {
			print_diff(f->diff, f->diff_len);
		} else if (f->op == CD_PROP_MKDIR || f->op == CD_PROP_RMDIR) {
			char *ep = esc(f->path, f->path_len);
			printf("# %s %s (mode %04o)\n", cd_prop_op_name(f->op), ep ? ep : "?",
			       f->op == CD_PROP_MKDIR ? f->new_mode : f->base_mode);
			free(ep);
		} else if (f->op != CD_PROP_REFUSED) {
			char *ep = esc(f->path, f->path_len);
			printf("# %s %s: binary, large, mode-only or past the proposal's diff "
			       "budget: no text diff\n",
			       cd_prop_op_name(f->op), ep ? ep : "?");
			free(ep);
		}
	}
	cd_proposal_free(p);
	return CD_EXIT_OK;
}

/* Who decides: --as or the login name; never the proposal's agent, and
 * only a pending (or partial) proposal (cd_proposal_may_decide). */
static const char *approver(const struct popts *o, const struct cd_proposal *p)
{
	const char *by = o->as ? o->as : cli_login_name();
	struct cd_err err = { 0, "" };

	if (cd_proposal_may_decide(p, by, &err) < 0) {
		cli_errorf("%s", err.msg);
		return NULL;
	}
	return by;
}

static void report_problems(const struct cd_proposal *p, int only_stale)
{
	size_t i;

	for (i = 0; i < p->nfiles; i++) {
		const struct cd_prop_file *f = &p->files[i];
		char *ep;
		if (!f->problem[0] || (only_stale && !f->selected))
			continue;
		ep = esc(f->path, f->path_len);
		cli_errorf("%s: %s", ep ? ep : "?", f->problem);
		free(ep);
	}
}

static int apply_cmd(struct env *v, const struct popts *o, const char *id)
{
	struct cd_err err = { 0, "" };
	struct cd_proposal *p;
	const char *by;
	char commit[65] = "";
	size_t i, sel = 0, left = 0;
	int r, rc = CD_EXIT_CORDON;
	const char *status = NULL;

	if (load(v, id, &p) < 0)
		return CD_EXIT_CORDON;
	if (!(by = approver(o, p)))
		goto out;
	if (cd_proposal_select(p, o->npaths ? o->paths : NULL, o->npaths, o->accept, o->naccept,
	                       &err) < 0) {
		cli_errorf("%s", err.msg);
		rc = CD_EXIT_USAGE;
		goto out;
	}
	for (i = 0; i < p->nfiles; i++)
		sel += p->files[i].selected;
	report_problems(p, 0); /* skipped: refused, flagged and not accepted */
	if (!sel) {
		cli_errorf("nothing to apply in proposal %s", p->id);
		rc = CD_EXIT_FAIL;
		goto out;
	}
	r = cd_proposal_apply_by(v->state, v->audit, p, by, o->branch, commit, &status, &err);
	if (r < 0 && !status) {
		/* The apply failed (recorded as proposal.refused). */
		report_problems(p, 1);
		cli_errorf("proposal %s: %s", p->id, err.msg);
		rc = r == -ESTALE || r == -EEXIST || r == -CD_E_USAGE ? CD_EXIT_FAIL
		                                                      : CD_EXIT_CORDON;
		goto out;
	}
	if (r < 0) {
		cli_errorf("%s", err.msg);
		goto out;
	}
	if (r > 0)
		cli_warnf("could not remove the layer of proposal %s", p->id);
	for (i = 0; i < p->nfiles; i++)
		left += !p->files[i].applied && p->files[i].op != CD_PROP_REFUSED;
	if (o->json) {
		json_t *j = cd_proposal_json(p, 1);
		if (j) {
			json_object_set_new(j, "status", json_string(status));
			json_object_set_new(j, "by", json_string(by));
		}
		print_json(j);
		json_decref(j);
	} else if (o->branch) {
		for (i = 0; i < p->nfiles; i++) {
			/* New empty directories: git cannot hold them. */
			const struct cd_prop_file *f = &p->files[i];
			char *ep;
			if (!f->selected || f->applied || !f->problem[0])
				continue;
			ep = esc(f->path, f->path_len);
			cli_warnf("%s: %s", ep ? ep : "?", f->problem);
			free(ep);
		}
		printf("proposal %s: %zu changes committed on branch %s as %s\n", p->id, sel,
		       o->branch, commit);
	} else {
		printf("proposal %s: %zu changes applied%s\n", p->id, sel,
		       left ? " (others remain: see show)" : "");
	}
	rc = CD_EXIT_OK;
out:
	cd_proposal_free(p);
	return rc;
}

static int reject_cmd(struct env *v, const struct popts *o, const char *id)
{
	struct cd_err err = { 0, "" };
	struct cd_proposal *p;
	const char *by;
	int r, rc = CD_EXIT_CORDON;

	if (load(v, id, &p) < 0)
		return CD_EXIT_CORDON;
	if (!(by = approver(o, p)))
		goto out;
	r = cd_proposal_reject_by(v->state, v->audit, p, by, &err);
	if (r < 0) {
		cli_errorf("%s", err.msg);
		goto out;
	}
	if (r > 0)
		cli_warnf("could not remove the layer of proposal %s", p->id);
	printf("proposal %s rejected\n", p->id);
	rc = CD_EXIT_OK;
out:
	cd_proposal_free(p);
	return rc;
}

int cmd_proposals(int argc, char **argv)
{
	struct popts o;
	struct env v;
	const char *sub;
	int rc = CD_EXIT_CORDON, nargs;

	cli_set_prog("proposals");
	if (argc < 2 || !strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
		usage(argc < 2 ? stderr : stdout);
		return argc < 2 ? CD_EXIT_USAGE : CD_EXIT_OK;
	}
	sub = argv[1];
	if (parse(argc - 1, argv + 1, &o) < 0)
		return CD_EXIT_USAGE;
	o.first += 1;
	nargs = argc - o.first;
	if (strcmp(sub, "list") == 0) {
		if (nargs != 0)
			goto bad;
	} else if (!strcmp(sub, "show") || !strcmp(sub, "apply") || !strcmp(sub, "reject") ||
	           !strcmp(sub, "commit")) {
		if (nargs != 1)
			goto bad;
		if (!strcmp(sub, "commit") && !o.branch) {
			cli_errorf("commit needs --branch NAME (a new branch)");
			return CD_EXIT_USAGE;
		}
	} else if (!strcmp(sub, "diff")) {
		if (nargs < 1)
			goto bad;
	} else {
		cli_errorf("unknown subcommand '%s' (list, show, diff, apply, commit, reject)",
		           sub);
		return CD_EXIT_USAGE;
	}
	if ((o.branch || o.npaths || o.naccept) && strcmp(sub, "apply") != 0 &&
	    strcmp(sub, "commit") != 0) {
		cli_errorf("--branch, --paths and --accept-flagged go with apply or commit");
		return CD_EXIT_USAGE;
	}
	if (env_open(&v, &o,
	             !strcmp(sub, "apply") || !strcmp(sub, "commit") || !strcmp(sub, "reject")) <
	    0) {
		env_close(&v);
		return CD_EXIT_CORDON;
	}
	if (!strcmp(sub, "list"))
		rc = list_cmd(&v, &o);
	else if (!strcmp(sub, "show"))
		rc = show_cmd(&v, &o, argv[o.first]);
	else if (!strcmp(sub, "diff"))
		rc = diff_cmd(&v, &o, argv[o.first], argv + o.first + 1, (size_t)nargs - 1);
	else if (!strcmp(sub, "apply") || !strcmp(sub, "commit"))
		rc = apply_cmd(&v, &o, argv[o.first]);
	else
		rc = reject_cmd(&v, &o, argv[o.first]);
	env_close(&v);
	return rc;
bad:
	cli_errorf("'%s' takes %s (see --help)", sub,
	           !strcmp(sub, "list") ? "no operand" : "a proposal ID");
	return CD_EXIT_USAGE;
}
