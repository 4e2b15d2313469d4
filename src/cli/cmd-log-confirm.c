/* cmd-log-confirm.c — `cordon log confirm`: an investigator holding the
 * deployment's mask key checks a guessed raw value against the keyed
 * commitments of one record (logmask.h), without the log ever holding
 * the value.
 *
 * The record is untrusted (read back from the log); the candidate comes
 * from the investigator.  Output names only which member and type
 * matched, never echoes the candidate. */
#include "cli-audit.h"
#include "cli.h"

#include "audit/audit.h"
#include "util/buf.h"
#include "mask/logmask.h"
#include "mask/mask.h"
#include "mcp/mcp.h"
#include "util/num.h"
#include "sandbox/sandbox.h"

#include <errno.h>
#include <getopt.h>
#include <jansson.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#define CONFIRM_USAGE                                                                              \
	"usage: cordon log confirm [--audit PATH] [--key F] SEQ VALUE\n"                           \
	"       cordon log confirm [OPTIONS] SEQ --argv -- ARG...\n"                               \
	"       cordon log confirm [OPTIONS] SEQ --arguments JSON\n"                               \
	"       cordon log confirm [OPTIONS] SEQ --file NAME:PATH\n\n"                             \
	"Check a raw value against the keyed commitments of record SEQ, made where\n"              \
	"a grant masked it: a value that was masked (an email, a card number ...),\n"              \
	"the whole command line, an MCP call's arguments, or the raw data behind a\n"              \
	"hash (NAME: stdin, stdout, stderr, code, result).  Needs the deployment's\n"              \
	"mask key; the log alone cannot confirm anything.  Exit 0 on a match\n"                    \
	"(naming where), 1 when nothing matches, 2 on a usage error, 125 when it\n"                \
	"cannot check (no key, no such record, nothing committed in it).  VALUE '-'\n"             \
	"reads it from stdin (kept out of argv and history); one starting with '-'\n"              \
	"goes after '--'.\n\n"                                                                     \
	"  --audit PATH      the log (default $CORDON_AUDIT, then "                                \
	"$XDG_STATE_HOME/cordon/audit.db)\n"                                                       \
	"  --key F           the mask key (default $CORDON_MASK_KEY, then "                        \
	"$XDG_CONFIG_HOME/cordon/mask.key)\n"                                                      \
	"  --argv            the rest of the command line is the command to check\n"               \
	"  --arguments JSON  an MCP tools/call arguments object to check\n"                        \
	"  --file NAME:PATH  the raw data behind hash NAME, read from PATH\n"                      \
	"  --json            one JSON object: {seq, match, matches: [{in, type}]}\n"

enum { O_AUDIT = 256, O_KEY, O_ARGV, O_ARGUMENTS, O_FILE, O_JSON };

/* Where matches go: printed, or collected for --json. */
struct out {
	uint64_t seq;
	json_t *matches; /* --json: [{"in", "type"}], else NULL */
};

struct found {
	uint64_t seq;
	char *details; /* NUL-terminated copy */
	int seen;
};

static int take(const struct cd_audit_entry *e, void *ctx)
{
	struct found *f = ctx;
	const struct cd_audit_str *d = &e->str[CD_AF_DETAILS];

	if (e->seq != f->seq)
		return 1; /* past it: the record is not there */
	f->seen = 1;
	if (d->p) {
		f->details = malloc(d->len + 1);
		if (!f->details)
			return -ENOMEM;
		memcpy(f->details, d->p, d->len);
		f->details[d->len] = '\0';
	}
	return 1;
}

/* `in` and `type` come from the record: escaped (THREATS 44); JSON
 * escapes them itself. */
static void matched(void *ctx, const char *in, const char *type)
{
	struct out *o = ctx;
	struct cd_buf a, b;

	if (o->matches) {
		json_t *m = json_object();
		json_object_set_new(m, "in", json_string(in ? in : "?"));
		if (type)
			json_object_set_new(m, "type", json_string(type));
		json_array_append_new(o->matches, m);
		return;
	}
	cd_buf_init(&a, 4096);
	cd_buf_init(&b, 4096);
	cd_buf_escape(&a, in ? in : "?", strlen(in ? in : "?"));
	cd_buf_putc(&a, '\0');
	if (type) {
		cd_buf_escape(&b, type, strlen(type));
		cd_buf_putc(&b, '\0');
		printf("match: record %llu, %s in %s\n", (unsigned long long)o->seq,
		       b.data ? b.data : "?", a.data ? a.data : "?");
	} else {
		printf("match: record %llu, %s\n", (unsigned long long)o->seq,
		       a.data ? a.data : "?");
	}
	cd_buf_release(&a);
	cd_buf_release(&b);
}

/* VALUE "-": one line from stdin, so the value stays out of argv and the
 * shell's history.  A new string, or NULL. */
static char *value_from_stdin(void)
{
	char *line = NULL;
	size_t cap = 0;
	ssize_t n = getline(&line, &cap, stdin);

	if (n < 0) {
		free(line);
		return NULL;
	}
	if (n > 0 && line[n - 1] == '\n')
		line[--n] = '\0';
	return line;
}

/* The SHA-256 the record's hash NAME would hold for this candidate. */
static int candidate_hash(const char *what, char **argv, const char *arguments, const char *file,
                          unsigned char h[32])
{
	char hex[65];

	if (!strcmp(what, "argv")) {
		cd_argv_sha256(argv, hex);
	} else if (!strcmp(what, "arguments")) {
		json_error_t je;
		json_t *v = json_loads(arguments, JSON_REJECT_DUPLICATES, &je);
		struct cd_buf b;
		int r;
		if (!json_is_object(v)) {
			json_decref(v);
			cli_errorf("--arguments: not a JSON object");
			return -EINVAL;
		}
		cd_buf_init(&b, 64u * 1024 * 1024);
		r = cd_mcp_canonical(v, &b);
		json_decref(v);
		if (r < 0) {
			cd_buf_release(&b);
			cli_errorf("--arguments: cannot be put in canonical form");
			return r;
		}
		cd_mcp_sha256_hex(b.data, b.len, hex);
		cd_buf_release(&b);
	} else {
		crypto_hash_sha256_state st;
		unsigned char buf[65536];
		ssize_t k;
		int fd = open(file, O_RDONLY | O_CLOEXEC);
		if (fd < 0) {
			cli_errorf("--file: cannot open '%s': %s", file, strerror(errno));
			return -errno;
		}
		crypto_hash_sha256_init(&st);
		while ((k = read(fd, buf, sizeof buf)) > 0 || (k < 0 && errno == EINTR))
			if (k > 0)
				crypto_hash_sha256_update(&st, buf, (unsigned long long)k);
		close(fd);
		if (k < 0) {
			cli_errorf("--file: cannot read '%s': %s", file, strerror(errno));
			return -EIO;
		}
		crypto_hash_sha256_final(&st, h);
		return 0;
	}
	return cd_audit_unhex(hex, 64, h, 32) < 0 ? -EINVAL : 0;
}

/* --file NAME:PATH */
static int parse_file(const char *arg, char *what, size_t wn, const char **ret_path)
{
	static const char *const names[] = { "stdin", "stdout", "stderr", "code", "result" };
	const char *colon = strchr(arg, ':');
	size_t k = colon ? (size_t)(colon - arg) : 0, i;

	for (i = 0; colon && colon[1] && k < wn && i < sizeof names / sizeof names[0]; i++) {
		if (strlen(names[i]) == k && !memcmp(names[i], arg, k)) {
			memcpy(what, arg, k);
			what[k] = '\0';
			*ret_path = colon + 1;
			return 0;
		}
	}
	cli_errorf("--file wants NAME:PATH, NAME one of stdin, stdout, stderr, code, result");
	return -EINVAL;
}

/* The options, also for `cordon completion` (cli-complete.c). */
static const struct option confirm_opts[] = {
	{ "help", no_argument, NULL, 'h' },
	{ "audit", required_argument, NULL, O_AUDIT },
	{ "key", required_argument, NULL, O_KEY },
	{ "argv", no_argument, NULL, O_ARGV },
	{ "arguments", required_argument, NULL, O_ARGUMENTS },
	{ "file", required_argument, NULL, O_FILE },
	{ "json", no_argument, NULL, O_JSON },
	{ NULL, 0, NULL, 0 },
};
const struct option *const cli_opts_log_confirm = confirm_opts;

/* What `cordon log confirm` was asked. */
struct confirm_args {
	const char *audit_opt, *key_opt, *arguments, *file;
	char what[16]; /* --file NAME */
	int use_argv, want_json;
	uint64_t seq;
};

/* The command line: options before and after SEQ.  -1 to go on, else the
 * exit status. */
static int parse_confirm(int argc, char **argv, struct confirm_args *co)
{
	int c, pass;

	opterr = 0;
	optind = 1;
	/* Options may come before and after SEQ: two passes, SEQ between. */
	for (pass = 0; pass < 2; pass++) {
		while (!co->use_argv &&
		       (c = cli_getopt(argc, argv, "+h", confirm_opts, -1)) != -1) {
			switch (c) {
			case 'h':
				fputs(CONFIRM_USAGE, stdout);
				return CD_EXIT_OK;
			case O_AUDIT:
				co->audit_opt = optarg;
				break;
			case O_KEY:
				co->key_opt = optarg;
				break;
			case O_ARGV:
				co->use_argv = 1; /* the rest is the command line */
				break;
			case O_JSON:
				co->want_json = 1;
				break;
			case O_ARGUMENTS:
				co->arguments = optarg;
				break;
			case O_FILE:
				if (parse_file(optarg, co->what, sizeof co->what, &co->file) < 0)
					return CD_EXIT_USAGE;
				break;
			default:
				/* Not echoed: it may be the value to confirm. */
				cli_errorf("confirm: bad option (a VALUE starting with '-' goes "
				           "after '--'; see --help)");
				return CD_EXIT_USAGE;
			}
		}
		if (pass == 0) {
			if (optind >= argc ||
			    cd_parse_u64(argv[optind], strlen(argv[optind]), UINT64_MAX, &co->seq) <
			            0 ||
			    co->seq == 0) {
				fputs(CONFIRM_USAGE, stderr);
				return CD_EXIT_USAGE;
			}
			optind++;
		}
	}
	return -1;
}

int cmd_log_confirm(int argc, char **argv)
{
	struct confirm_args co = { .what = "" };
	struct cli_audit_cfg cfg;
	struct cd_audit *log = NULL;
	struct cd_audit_filter f;
	struct cd_masker *m = NULL;
	struct cd_err err = { 0, "" };
	struct found fd;
	json_t *details = NULL;
	char *value = NULL;
	struct out o = { 0, NULL };
	int modes, n, rc;

	rc = parse_confirm(argc, argv, &co);
	if (rc >= 0)
		return rc;
	rc = CD_EXIT_CORDON;
	memset(&fd, 0, sizeof fd);
	fd.seq = co.seq;
	o.seq = co.seq;
	modes = co.use_argv + (co.arguments != NULL) + (co.file != NULL);
	if (modes > 1) {
		fputs(CONFIRM_USAGE, stderr);
		return CD_EXIT_USAGE;
	}
	if (co.use_argv && optind < argc && !strcmp(argv[optind], "--"))
		optind++;
	if ((modes == 0 && optind + 1 != argc) || (co.use_argv && optind >= argc) ||
	    ((co.arguments || co.file) && optind != argc)) {
		fputs(CONFIRM_USAGE, stderr);
		return CD_EXIT_USAGE;
	}
	/* The key must exist: a new one would confirm nothing. */
	if (cli_masker_open_key(co.key_opt, 0, &m) < 0)
		return CD_EXIT_CORDON;
	if (co.want_json && !(o.matches = json_array())) {
		cli_errorf("out of memory");
		goto out;
	}
	memset(&cfg, 0, sizeof cfg);
	cfg.path = co.audit_opt;
	cfg.read_only = 1;
	if (cli_audit_open_cfg(&cfg, &log) < 0)
		goto out;
	memset(&f, 0, sizeof f);
	f.after_seq = fd.seq - 1;
	if (cd_audit_query(log, &f, take, &fd, &err) < 0 && !fd.seen) {
		cli_errorf("%s", err.msg);
		goto out;
	}
	if (!fd.seen) {
		cli_errorf("no record %llu in the log", (unsigned long long)fd.seq);
		goto out;
	}
	details = fd.details ? json_loads(fd.details, 0, NULL) : NULL;
	if (!json_object_get(details, "commitments")) {
		cli_errorf("record %llu holds no commitments (nothing in it was masked)",
		           (unsigned long long)fd.seq);
		goto out;
	}
	if (json_object_get(json_object_get(details, "commitments"), "withheld")) {
		cli_errorf("record %llu: its values were withheld, not committed (the mask key "
		           "was unavailable when it was written)",
		           (unsigned long long)fd.seq);
		goto out;
	}
	if (modes) {
		unsigned char h[32];
		if (co.use_argv)
			snprintf(co.what, sizeof co.what, "argv");
		else if (co.arguments)
			snprintf(co.what, sizeof co.what, "arguments");
		if (candidate_hash(co.what, argv + optind, co.arguments, co.file, h) < 0)
			goto out;
		n = cd_logmask_confirm(m, details, (const char *)h, sizeof h, co.what, matched, &o);
	} else {
		value = strcmp(argv[optind], "-") ? strdup(argv[optind]) : value_from_stdin();
		if (!value) {
			cli_errorf("no value to confirm");
			goto out;
		}
		n = cd_logmask_confirm(m, details, value, strlen(value), NULL, matched, &o);
		sodium_memzero(value, strlen(value));
	}
	if (n < 0) {
		cli_errorf("record %llu: its commitments cannot be read",
		           (unsigned long long)fd.seq);
		goto out;
	}
	rc = n > 0 ? CD_EXIT_OK : CD_EXIT_FAIL;
	if (o.matches) {
		json_t *r = json_pack("{s:I,s:b,s:O}", "seq", (json_int_t)fd.seq, "match", n > 0,
		                      "matches", o.matches);
		char *txt = r ? json_dumps(r, JSON_COMPACT | JSON_ENSURE_ASCII) : NULL;
		if (txt)
			printf("%s\n", txt);
		else
			rc = CD_EXIT_CORDON;
		free(txt);
		json_decref(r);
	} else if (n == 0) {
		printf("no match in record %llu\n", (unsigned long long)fd.seq);
	}
out:
	json_decref(o.matches);
	free(value);
	json_decref(details);
	free(fd.details);
	cd_audit_close(log);
	cd_masker_free(m);
	return rc;
}
