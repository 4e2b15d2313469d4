/* cmd-log.c — `cordon log`: show, tail, export and verify the audit log,
 * write a checkpoint, create the signing key.
 *
 * Everything shown comes from the log and is untrusted: the table escapes
 * control bytes and invalid UTF-8 (cd_buf_escape), JSON output escapes
 * them as JSON. */
#include "cli-audit.h"
#include "cli.h"

#include "audit/audit.h"
#include "util/bounds.h"
#include "util/buf.h"
#include "sandbox/sandbox.h"
#include "audit/session.h"
#include "util/fs.h"
#include "util/num.h"
#include "util/util.h"

#include <errno.h>
#include <getopt.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

enum {
	O_AUDIT = 256,
	O_JSON,
	O_TABLE,
	O_AGENT,
	O_TASK,
	O_TOOL,
	O_KIND,
	O_SINCE,
	O_UNTIL,
	O_DECISION,
	O_RUN,
	O_FORMAT,
	O_PUBKEY,
	O_CHECKPOINT,
	O_KEY,
	O_CP_OUT,
	O_REPLAY,
	O_ASCIICAST,
};

/* Which options each subcommand takes. */
#define A_FILTER (1u << 0)
#define A_OUTPUT (1u << 1)
#define A_LINES  (1u << 2)
#define A_FOLLOW (1u << 3)
#define A_FORMAT (1u << 4)
#define A_VERIFY (1u << 5)
#define A_SIGN   (1u << 6)
#define A_KEYGEN (1u << 7)
#define A_REPLAY (1u << 8)

struct args {
	const char *audit, *format, *pubkey, *checkpoint, *key, *cp_out;
	struct cd_audit_filter f;
	int json, table, follow, replay, asciicast;
	uint64_t lines;
};

struct sub {
	const char *name;
	int (*fn)(struct args *);
	unsigned allow;
	const char *usage;
};

static int64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* ---- output ------------------------------------------------------- */

/* One table cell: escaped, cut to `width` display columns at a character
 * boundary, padded unless it is the last. */
static int cell(struct cd_buf *line, const struct cd_audit_str *s, size_t width, int last)
{
	struct cd_buf esc;
	size_t n, cols = 0, i = 0;
	int r = 0;

	cd_buf_init(&esc, 4 * CD_AUDIT_FIELD_MAX + 16);
	if (s->p)
		r = cd_buf_escape(&esc, s->p, s->len);
	else
		r = cd_buf_putc(&esc, '-');
	if (r < 0) {
		cd_buf_release(&esc);
		return r;
	}
	n = esc.len;
	/* Count characters (UTF-8 lead bytes) up to the width. */
	while (i < n && cols < width) {
		i++;
		while (i < n && ((unsigned char)esc.data[i] & 0xc0) == 0x80)
			i++;
		cols++;
	}
	if (i < n && width > 1) {
		/* Cut one character earlier to make room for the marker. */
		do
			i--;
		while (i > 0 && ((unsigned char)esc.data[i] & 0xc0) == 0x80);
		r = cd_buf_append(line, esc.data, i);
		if (r == 0)
			r = cd_buf_puts(line, "~");
		cols = width;
	} else {
		r = cd_buf_append(line, esc.data, i);
	}
	cd_buf_release(&esc);
	for (; r == 0 && !last && cols < width + 1; cols++)
		r = cd_buf_putc(line, ' ');
	return r;
}

static int print_table_row(const struct cd_audit_entry *e, void *ctx)
{
	struct cd_buf line;
	char t[64], num[32];
	struct cd_audit_str ts, ns, ex;
	const struct cd_audit_str *what;
	int r, n;

	(void)ctx;
	cd_buf_init(&line, 1024 * 1024);
	if (cd_audit_time_format(e->time_ns, t, sizeof t) < 0)
		t[0] = '\0';
	t[19] = '\0'; /* to the second */
	ts.p = t;
	ts.len = strlen(t);
	n = snprintf(num, sizeof num, "%llu", (unsigned long long)e->seq);
	ns.p = num;
	ns.len = n > 0 ? (size_t)n : 0;
	r = cell(&line, &ns, 7, 0);
	if (r == 0)
		r = cell(&line, &ts, 19, 0);
	if (r == 0)
		r = cell(&line, &e->str[CD_AF_KIND], 12, 0);
	if (r == 0)
		r = cell(&line, &e->str[CD_AF_AGENT], 12, 0);
	if (r == 0)
		r = cell(&line, &e->str[CD_AF_TOOL], 12, 0);
	if (r == 0)
		r = cell(&line, &e->str[CD_AF_DECISION], 8, 0);
	if (r == 0) {
		char x[32];
		int m = e->has_exit ? snprintf(x, sizeof x, "%lld", (long long)e->exit_code) : 0;
		ex.p = e->has_exit && m > 0 ? x : NULL;
		ex.len = m > 0 ? (size_t)m : 0;
		r = cell(&line, &ex, 4, 0);
	}
	what = e->str[CD_AF_TARGET].p ? &e->str[CD_AF_TARGET] : &e->str[CD_AF_REASON];
	if (r == 0)
		r = cell(&line, what, 60, 1);
	if (r == 0)
		printf("%s\n", line.data);
	cd_buf_release(&line);
	return r < 0 ? r : 0;
}

static int print_json_row(const struct cd_audit_entry *e, void *ctx)
{
	struct cd_buf b;
	int r;

	(void)ctx;
	cd_buf_init(&b, 8 * CD_AUDIT_DETAILS_MAX);
	r = cd_audit_entry_json(e, &b);
	if (r == 0)
		printf("%s\n", b.data);
	cd_buf_release(&b);
	return r;
}

struct follow_ctx {
	int table;
	struct cli_follow cur;
};

static int print_row(const struct cd_audit_entry *e, void *ctx)
{
	struct follow_ctx *fc = ctx;

	if (cli_follow_seen(&fc->cur, e) < 0)
		return -ENOMEM;
	return fc->table ? print_table_row(e, NULL) : print_json_row(e, NULL);
}

static int open_ro(struct args *a, struct cd_audit **ret)
{
	struct cli_audit_cfg cfg;

	memset(&cfg, 0, sizeof cfg);
	cfg.path = a->audit;
	cfg.read_only = 1;
	return cli_audit_open_cfg(&cfg, ret);
}

static int list(struct args *a, int follow)
{
	struct cd_audit *log = NULL;
	struct follow_ctx fc;
	struct cd_err err;
	int r;

	memset(&fc, 0, sizeof fc);
	fc.table = a->table || (!a->json && isatty(STDOUT_FILENO));
	if (open_ro(a, &log) < 0)
		return CD_EXIT_FAIL;
	if (follow && cli_follow_start(&fc.cur, log) < 0) {
		cd_audit_close(log);
		return CD_EXIT_FAIL;
	}
	if (fc.table)
		printf("%-7s %-19s %-12s %-12s %-12s %-8s %-4s %s\n", "SEQ", "TIME (UTC)", "KIND",
		       "AGENT", "TOOL", "DECISION", "EXIT", "TARGET/REASON");
	r = cd_audit_query(log, &a->f, print_row, &fc, &err);
	while (r == 0 && follow) {
		fflush(stdout);
		/* The next look when a writer appends (PostgreSQL: NOTIFY from
		 * any host; SQLite: its data version), at the latest in 2 s (a
		 * notice that crossed the last query). */
		cd_audit_wait(log, 2000);
		/* After the last record shown of each chain. */
		if (cli_follow_filter(&fc.cur, &a->f) < 0) {
			r = cd_err_set(&err, -ENOMEM, "out of memory");
			break;
		}
		a->f.last = 0;
		r = cd_audit_query(log, &a->f, print_row, &fc, &err);
	}
	cli_follow_free(&fc.cur);
	cd_audit_close(log);
	if (fflush(stdout) != 0 || ferror(stdout)) {
		cli_errorf("cannot write the output");
		return CD_EXIT_FAIL;
	}
	if (r < 0) {
		cli_errorf("%s", err.msg);
		return CD_EXIT_FAIL;
	}
	return CD_EXIT_OK;
}

/* The run's result record: its details (the session's file and hash). */
struct replay_ctx {
	json_t *details;
	int64_t exit_code;
	int has_exit;
	int64_t start_s; /* when the run started, seconds since the epoch */
};

static int find_result(const struct cd_audit_entry *e, void *ctx)
{
	struct replay_ctx *rc = ctx;
	const struct cd_audit_str *d = &e->str[CD_AF_DETAILS];

	json_decref(rc->details);
	rc->details = d->p ? json_loadb(d->p, d->len, 0, NULL) : NULL;
	rc->exit_code = e->exit_code;
	rc->has_exit = e->has_exit;
	rc->start_s =
	        e->time_ns / 1000000000 - (e->has_duration ? (int64_t)(e->duration_ms / 1000) : 0);
	return 0;
}

/* `cordon log show --run ID --replay`: what was typed and printed in a
 * `cordon shell` session, checked against the hash in the run's result
 * record, every byte escaped. */
static int replay(struct args *a)
{
	struct replay_ctx rc = { NULL, 0, 0, 0 };
	struct cd_audit *log = NULL;
	struct cd_err err = { 0, "" };
	struct cd_buf out;
	const char *sha;
	json_t *sess;
	char path[CD_PATH_MAX], *slash;
	size_t i;
	int r, n;

	if (!a->f.run_id) {
		cli_errorf("%s needs --run ID", a->asciicast ? "--asciicast" : "--replay");
		return CD_EXIT_USAGE;
	}
	for (i = 0; a->f.run_id[i]; i++) {
		char c = a->f.run_id[i];
		if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f')))
			break;
	}
	if (i != CD_RUN_ID_LEN || a->f.run_id[i]) {
		cli_errorf("--run: a run id is %d lower-case hex digits", CD_RUN_ID_LEN);
		return CD_EXIT_USAGE;
	}
	a->f.kind = "run.result";
	if (open_ro(a, &log) < 0)
		return CD_EXIT_FAIL;
	r = cd_audit_query(log, &a->f, find_result, &rc, &err);
	cd_audit_close(log);
	if (r < 0) {
		cli_errorf("%s", err.msg);
		json_decref(rc.details);
		return CD_EXIT_FAIL;
	}
	sess = json_object_get(rc.details, "session");
	sha = json_string_value(json_object_get(sess, "sha256"));
	if (!rc.details || !sess || !sha) {
		cli_errorf("run %s: no session recording in its result record (not a cordon shell "
		           "run, or no result recorded)",
		           a->f.run_id);
		json_decref(rc.details);
		return CD_EXIT_FAIL;
	}
	/* The path comes from the run id (checked above), not from the record. */
	if (cli_audit_local(a->audit, path, sizeof path) < 0 || !(slash = strrchr(path, '/'))) {
		json_decref(rc.details);
		return CD_EXIT_FAIL;
	}
	*slash = '\0';
	n = snprintf(slash, sizeof path - (size_t)(slash - path), "/sessions/%s.rec", a->f.run_id);
	if (n < 0 || (size_t)n >= sizeof path - (size_t)(slash - path)) {
		cli_errorf("session path too long");
		json_decref(rc.details);
		return CD_EXIT_FAIL;
	}
	cd_buf_init(&out, 16 * CD_SESSION_MAX);
	if (a->asciicast) {
		r = cd_session_asciicast(path, CD_SESSION_MAX + 64, sha, rc.start_s, &out, &err);
		if (r == 0 && out.len)
			fwrite(out.data, 1, out.len, stdout);
	} else {
		r = cd_session_replay(path, CD_SESSION_MAX + 64, sha, &out, &err);
	}
	if (r == 0 && !a->asciicast) {
		printf("# run %s: exit %lld, typed %lld bytes, printed %lld bytes%s\n", a->f.run_id,
		       rc.has_exit ? (long long)rc.exit_code : -1LL,
		       (long long)json_integer_value(json_object_get(sess, "typed_bytes")),
		       (long long)json_integer_value(json_object_get(sess, "printed_bytes")),
		       json_is_true(json_object_get(sess, "truncated"))
		               ? " (recording truncated at its cap)"
		               : "");
		if (out.len)
			fwrite(out.data, 1, out.len, stdout);
	}
	cd_buf_release(&out);
	json_decref(rc.details);
	if (r < 0) {
		cli_errorf("%s", err.msg);
		return CD_EXIT_FAIL;
	}
	if (fflush(stdout) != 0 || ferror(stdout)) {
		cli_errorf("cannot write the output");
		return CD_EXIT_FAIL;
	}
	return CD_EXIT_OK;
}

static int do_show(struct args *a)
{
	if (a->replay)
		return replay(a);
	return list(a, 0);
}

static int do_tail(struct args *a)
{
	a->f.last = a->lines ? a->lines : 10;
	return list(a, a->follow);
}

static int do_export(struct args *a)
{
	if (a->format && strcmp(a->format, "jsonl") != 0) {
		cli_errorf("unknown format '%s' (only 'jsonl')", a->format);
		return CD_EXIT_USAGE;
	}
	a->json = 1;
	a->table = 0;
	return list(a, 0);
}

/* ---- verify ------------------------------------------------------- */

/* What an interrupted run was: its intent's tool and target (a command
 * run's working directory; a container's bundle, which names it). */
struct intent_what {
	char tool[128], target[1024];
};

static void str_copy(char *out, size_t cap, const struct cd_audit_str *s)
{
	size_t n = s->p ? (s->len < cap - 1 ? s->len : cap - 1) : 0;

	if (n)
		memcpy(out, s->p, n);
	out[n] = '\0';
}

static int intent_seen(const struct cd_audit_entry *e, void *ctx)
{
	struct intent_what *w = ctx;

	str_copy(w->tool, sizeof w->tool, &e->str[CD_AF_TOOL]);
	str_copy(w->target, sizeof w->target, &e->str[CD_AF_TARGET]);
	return 0;
}

static void intents_of(struct cd_audit *log, const struct cd_audit_report *rep,
                       struct intent_what *w)
{
	struct cd_audit_filter f;
	struct cd_err err = { 0, "" };
	uint64_t i;

	for (i = 0; i < rep->interrupted && i < CD_AUDIT_REPORT_INTERRUPTED; i++) {
		memset(&f, 0, sizeof f);
		f.kind = "run.intent";
		f.run_id = rep->interrupted_runs[i].run_id;
		w[i].tool[0] = w[i].target[0] = '\0';
		cd_audit_query(log, &f, intent_seen, &w[i], &err);
	}
}

/* `verify --json`: one object for a program (a SIEM, a cron check). */
static int verify_json(const struct cd_audit_verify_opts *vo, const struct cd_audit_report *rep,
                       const struct intent_what *w)
{
	json_t *o, *runs = json_array();
	char *txt;
	uint64_t i;
	int intact = rep->problem == CD_AUDIT_INTACT;

	for (i = 0; runs && i < rep->interrupted && i < CD_AUDIT_REPORT_INTERRUPTED; i++)
		json_array_append_new(runs, json_pack("{s:s,s:I,s:s,s:s}", "run_id",
		                                      rep->interrupted_runs[i].run_id, "seq",
		                                      (json_int_t)rep->interrupted_runs[i].seq,
		                                      "tool", w[i].tool, "target", w[i].target));
	o = json_pack("{s:b,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:o,s:b,s:b,s:b}", "intact", intact,
	              "records", (json_int_t)rep->records, "last_seq", (json_int_t)rep->last_seq,
	              "checkpoints", (json_int_t)rep->checkpoints, "file_checkpoints",
	              (json_int_t)rep->file_checkpoints, "file_covered",
	              (json_int_t)rep->file_covered, "signatures", (json_int_t)rep->signatures,
	              "interrupted", (json_int_t)rep->interrupted, "interrupted_runs",
	              runs ? runs : json_array(), "torn_checkpoint_line", rep->torn_file_line != 0,
	              "pubkey", vo->pubkey != NULL, "checkpoint_file", vo->checkpoint_path != NULL);
	if (o && !intact) {
		json_object_set_new(o, "bad_seq", json_integer((json_int_t)rep->bad_seq));
		json_object_set_new(o, "problem", json_string(cd_audit_problem_name(rep->problem)));
		json_object_set_new(o, "what", json_string(rep->what));
		if (rep->chain[0])
			json_object_set_new(o, "chain", json_string(rep->chain));
	}
	if (o && rep->chains)
		json_object_set_new(o, "chains", json_integer((json_int_t)rep->chains));
	if (o && intact) {
		json_t *u = json_array();
		for (i = 0; u && i < rep->unanchored_chains && i < CD_AUDIT_REPORT_CHAINS; i++)
			json_array_append_new(
			        u, json_pack("{s:s,s:I,s:I}", "chain", rep->unanchored[i].chain,
			                     "last_checkpoint",
			                     (json_int_t)rep->unanchored[i].last_checkpoint,
			                     "last_seq", (json_int_t)rep->unanchored[i].last_seq));
		if (u)
			json_object_set_new(o, "unanchored", u);
	}
	txt = o ? json_dumps(o, JSON_COMPACT | JSON_ENSURE_ASCII) : NULL;
	json_decref(o);
	if (!txt) {
		cli_errorf("verify: out of memory");
		return CD_EXIT_FAIL;
	}
	printf("%s\n", txt);
	free(txt);
	if (!intact)
		cli_errorf("seq %llu: %s: %s", (unsigned long long)rep->bad_seq,
		           cd_audit_problem_name(rep->problem), rep->what);
	return intact ? CD_EXIT_OK : CD_EXIT_FAIL;
}

/* Records no signed checkpoint covers yet, per chain (not a failure). */
static void print_unanchored(const struct cd_audit_report *rep)
{
	uint64_t i;

	for (i = 0; i < rep->unanchored_chains && i < CD_AUDIT_REPORT_CHAINS; i++) {
		struct cd_buf c;
		cd_buf_init(&c, 1024);
		if (rep->unanchored[i].chain[0] &&
		    (cd_buf_puts(&c, "chain '") < 0 ||
		     cd_buf_escape(&c, rep->unanchored[i].chain, strlen(rep->unanchored[i].chain)) <
		             0 ||
		     cd_buf_puts(&c, "': ") < 0))
			c.len = 0;
		printf("unanchored: %srecords %llu to %llu follow its last checkpoint%s\n",
		       c.len ? c.data : "",
		       (unsigned long long)rep->unanchored[i].last_checkpoint + 1,
		       (unsigned long long)rep->unanchored[i].last_seq,
		       rep->unanchored[i].last_checkpoint ? "" : " (it has none)");
		cd_buf_release(&c);
	}
	if (rep->unanchored_chains > CD_AUDIT_REPORT_CHAINS)
		printf("unanchored: %llu more chains\n",
		       (unsigned long long)(rep->unanchored_chains - CD_AUDIT_REPORT_CHAINS));
}

static int do_verify(struct args *a)
{
	unsigned char pk[CD_AUDIT_PK_LEN];
	char db[4096], pkpath[4096], cppath[4096];
	struct cd_audit_verify_opts vo;
	struct cd_audit_report rep;
	static struct intent_what what[CD_AUDIT_REPORT_INTERRUPTED];
	struct cd_audit *log = NULL;
	struct cd_err err;
	uint64_t i;
	int r;

	memset(&vo, 0, sizeof vo);
	if (a->pubkey) {
		if (cd_audit_pubkey_load(a->pubkey, pk, &err) < 0) {
			cli_errorf("%s", err.msg);
			return CD_EXIT_FAIL;
		}
		vo.pubkey = pk;
	} else if (cli_config_path("audit.pub", pkpath, sizeof pkpath) == 0 &&
	           access(pkpath, F_OK) == 0) {
		if (cd_audit_pubkey_load(pkpath, pk, &err) < 0) {
			cli_errorf("%s", err.msg);
			return CD_EXIT_FAIL;
		}
		vo.pubkey = pk;
	}
	if (cli_audit_path(a->audit, db, sizeof db) < 0) {
		cli_errorf("audit log: cannot find its path (set CORDON_AUDIT or HOME)");
		return CD_EXIT_FAIL;
	}
	if (a->checkpoint)
		vo.checkpoint_path = a->checkpoint;
	else if (cli_checkpoint_path(NULL, db, cppath, sizeof cppath) == 0 &&
	         access(cppath, F_OK) == 0)
		vo.checkpoint_path = cppath;
	if (open_ro(a, &log) < 0)
		return CD_EXIT_FAIL;
	r = cd_audit_verify(log, &vo, &rep, &err);
	if (r == 0)
		intents_of(log, &rep, what);
	cd_audit_close(log);
	if (r < 0) {
		cli_errorf("verify: %s", err.msg);
		return CD_EXIT_FAIL;
	}
	if (a->json)
		return verify_json(&vo, &rep, what);
	if (rep.torn_file_line)
		printf("torn: the checkpoint file ends in an incomplete line (a crash while "
		       "writing it), ignored\n");
	for (i = 0; i < rep.interrupted && i < CD_AUDIT_REPORT_INTERRUPTED; i++) {
		struct cd_buf b;
		cd_buf_init(&b, 512);
		/* Which run: its tool and target (a container's bundle names it),
		 * escaped (a record's text is anyone's). */
		if (cd_buf_escape(&b, rep.interrupted_runs[i].run_id,
		                  strlen(rep.interrupted_runs[i].run_id)) == 0 &&
		    cd_buf_puts(&b, " (intent at seq ") == 0 &&
		    cd_buf_printf(&b, "%llu", (unsigned long long)rep.interrupted_runs[i].seq) ==
		            0 &&
		    cd_buf_puts(&b, ") has no result: tool ") == 0 &&
		    cd_buf_escape(&b, what[i].tool, strlen(what[i].tool)) == 0 &&
		    cd_buf_puts(&b, ", target ") == 0 &&
		    cd_buf_escape(&b, what[i].target, strlen(what[i].target)) == 0)
			printf("interrupted: run %s\n", b.data);
		cd_buf_release(&b);
	}
	if (rep.interrupted > CD_AUDIT_REPORT_INTERRUPTED)
		printf("interrupted: %llu more\n",
		       (unsigned long long)(rep.interrupted - CD_AUDIT_REPORT_INTERRUPTED));
	if (rep.problem != CD_AUDIT_INTACT) {
		struct cd_buf c;
		cd_buf_init(&c, 1024);
		/* The chain's name is the store's (a host name): escaped. */
		if (rep.chain[0] && (cd_buf_puts(&c, "chain '") < 0 ||
		                     cd_buf_escape(&c, rep.chain, strlen(rep.chain)) < 0 ||
		                     cd_buf_puts(&c, "': ") < 0))
			c.len = 0;
		printf("FAILED: %sseq %llu: %s: %s\n", c.len ? c.data : "",
		       (unsigned long long)rep.bad_seq, cd_audit_problem_name(rep.problem),
		       rep.what);
		cli_errorf("%sseq %llu: %s: %s", c.len ? c.data : "",
		           (unsigned long long)rep.bad_seq, cd_audit_problem_name(rep.problem),
		           rep.what);
		cd_buf_release(&c);
		return CD_EXIT_FAIL;
	}
	if (rep.chains)
		printf("chains: %llu (one per host), each verified\n",
		       (unsigned long long)rep.chains);
	print_unanchored(&rep);
	printf("intact: %llu records (last seq %llu), %llu checkpoints in the log, %llu in the "
	       "checkpoint file (covering %llu), %llu signatures verified\n",
	       (unsigned long long)rep.records, (unsigned long long)rep.last_seq,
	       (unsigned long long)rep.checkpoints, (unsigned long long)rep.file_checkpoints,
	       (unsigned long long)rep.file_covered, (unsigned long long)rep.signatures);
	if (!vo.pubkey && (rep.checkpoints || rep.file_checkpoints))
		printf("note: no public key: checkpoint signatures were not checked (--pubkey)\n");
	if (!vo.checkpoint_path)
		printf("note: no checkpoint file: truncation and rollback are detected only "
		       "against one (--checkpoint)\n");
	return CD_EXIT_OK;
}

/* ---- checkpoint and keygen ---------------------------------------- */

static int do_checkpoint(struct args *a)
{
	struct cli_audit_cfg cfg;
	struct cd_audit *log = NULL;
	struct cd_err err;
	uint64_t size = 0;
	int r;

	memset(&cfg, 0, sizeof cfg);
	cfg.path = a->audit;
	cfg.key = a->key;
	cfg.checkpoint_out = a->cp_out;
	cfg.need_key = 1;
	if (cli_audit_open_cfg(&cfg, &log) < 0)
		return CD_EXIT_FAIL;
	r = cd_audit_checkpoint(log, &size, &err);
	if (r == 0 && cd_audit_warning(log))
		cli_warnf("%s", cd_audit_warning(log));
	cd_audit_close(log);
	if (r < 0) {
		cli_errorf("%s", err.msg);
		return CD_EXIT_FAIL;
	}
	printf("checkpoint: %llu records signed\n", (unsigned long long)size);
	return CD_EXIT_OK;
}

static int do_keygen(struct args *a)
{
	char sk[4096], pk[4096];
	struct cd_err err;
	int r;

	if (a->key)
		r = snprintf(sk, sizeof sk, "%s", a->key) >= (int)sizeof sk ? -ENAMETOOLONG : 0;
	else
		r = cli_config_path("audit.key", sk, sizeof sk);
	if (r == 0 && a->pubkey)
		r = snprintf(pk, sizeof pk, "%s", a->pubkey) >= (int)sizeof pk ? -ENAMETOOLONG : 0;
	else if (r == 0)
		r = cli_config_path("audit.pub", pk, sizeof pk);
	if (r < 0) {
		cli_errorf("cannot find the key paths (set XDG_CONFIG_HOME or HOME, or pass --key "
		           "and --pubkey)");
		return CD_EXIT_FAIL;
	}
	if (cd_mkdir_parents(sk, &err) < 0 || cd_mkdir_parents(pk, &err) < 0) {
		cli_errorf("%s", err.msg);
		return CD_EXIT_FAIL;
	}
	if (cd_audit_keygen(sk, pk, &err) < 0) {
		cli_errorf("%s", err.msg);
		return CD_EXIT_FAIL;
	}
	printf("secret key: %s\npublic key: %s\n", sk, pk);
	return CD_EXIT_OK;
}

/* ---- the subcommand table ----------------------------------------- */

#define FILTER_HELP                                                                                \
	"  --agent ID --task ID --tool NAME --kind KIND --decision D --run ID\n"                   \
	"                    only matching records\n"                                              \
	"  --since T --until T  a time range: 2026-01-02[T03:04:05Z], @UNIXSECS or an age (10m, "  \
	"2h, 1d)\n"
#define AUDIT_HELP                                                                                 \
	"  --audit PATH      the log (default $CORDON_AUDIT, then "                                \
	"$XDG_STATE_HOME/cordon/audit.db)\n"

static const struct sub subs[] = {
	{ "show", do_show, A_FILTER | A_OUTPUT | A_REPLAY,
	  "usage: cordon log show [OPTIONS]\n\nShow audit records: a table on a terminal, one JSON "
	  "object per line otherwise.\n\n" AUDIT_HELP FILTER_HELP
	  "  --json            JSON lines even on a terminal\n"
	  "  --table           a table even when not on a terminal\n"
	  "  --replay          with --run ID: print what was typed (in) and printed (out)\n"
	  "                    in that cordon shell session, checked against the hash in\n"
	  "                    its result record, control characters escaped\n"
	  "  --asciicast       with --run ID: that session, checked the same way, as an\n"
	  "                    asciicast v2 file for 'asciinema play' (what was printed,\n"
	  "                    with its times and window sizes; not what was typed)\n" },
	{ "tail", do_tail, A_FILTER | A_OUTPUT | A_LINES | A_FOLLOW,
	  "usage: cordon log tail [-f] [-n N] [OPTIONS]\n\nShow the last N records (10), and with "
	  "-f "
	  "keep showing new ones.\n\n" AUDIT_HELP FILTER_HELP
	  "  -n, --lines N     how many records\n"
	  "  -f, --follow      wait for new records\n"
	  "  --json, --table   as for show\n" },
	{ "export", do_export, A_FILTER | A_FORMAT,
	  "usage: cordon log export [--format jsonl | --json] [OPTIONS]\n\nWrite records as JSON "
	  "lines for a "
	  "SIEM (field reference: cordon(1), docs/cordon-log.md).\n\n" AUDIT_HELP FILTER_HELP
	  "  --format jsonl    the output format (the default; --json says the same)\n" },
	{ "verify", do_verify, A_VERIFY | A_OUTPUT,
	  "usage: cordon log verify [--pubkey F] [--checkpoint F] [--audit PATH] "
	  "[--json]\n\nRecompute "
	  "the "
	  "hash chain and check every checkpoint.  Exit 0 when intact; 1 naming the\nfirst bad "
	  "sequence number and what is wrong (modified, missing, reordered, inserted,\ntruncated, "
	  "rolled back, bad signature, cut: ended below its last signed\ncheckpoint).  Runs with "
	  "an "
	  "intent and no result are listed as interrupted,\nrecords after a chain's last "
	  "checkpoint as unanchored.\n\n" AUDIT_HELP
	  "  --pubkey F        the public key (default $XDG_CONFIG_HOME/cordon/audit.pub)\n"
	  "  --checkpoint F    a checkpoint file kept off the host (default: the log's path + "
	  "'.checkpoints')\n"
	  "  --json            one JSON object: intact, records, last_seq, checkpoints,\n"
	  "                    signatures, interrupted_runs, and bad_seq/problem/what\n" },
	{ "checkpoint", do_checkpoint, A_SIGN,
	  "usage: cordon log checkpoint [--key F] [--checkpoint-out F] [--audit PATH]\n\nSign the "
	  "head of the log now: the checkpoint is stored in the log and appended\nto the "
	  "checkpoint "
	  "file (copy that file off the host).\n\n" AUDIT_HELP
	  "  --key F           the secret key (default $CORDON_AUDIT_KEY, then "
	  "$XDG_CONFIG_HOME/cordon/audit.key)\n"
	  "  --checkpoint-out F  the checkpoint file (default $CORDON_AUDIT_CHECKPOINTS, then the "
	  "log's path + '.checkpoints')\n" },
	{ "keygen", do_keygen, A_KEYGEN,
	  "usage: cordon log keygen [--key F] [--pubkey F]\n\nCreate the Ed25519 key that signs "
	  "checkpoints: the secret key (0600) and the\npublic key, by default "
	  "$XDG_CONFIG_HOME/cordon/audit.key and audit.pub.\nExisting keys are never "
	  "overwritten.\n" },
};

static void usage(FILE *f)
{
	size_t i;

	fprintf(f, "usage: cordon log COMMAND [OPTIONS]\n\nThe tamper-evident audit log.\n\n"
	           "Commands:\n");
	for (i = 0; i < CD_ARRAY_SIZE(subs); i++) {
		const char *u = subs[i].usage + strlen("usage: ");
		const char *nl = strchr(u, '\n');
		fprintf(f, "  %.*s\n", (int)(nl ? nl - u : (long)strlen(u)), u);
	}
	fprintf(f, "  log confirm [--audit PATH] [--key F] SEQ VALUE|--argv -- ARG...|--arguments "
	           "JSON|--file NAME:PATH\n");
	fprintf(f, "  log ship [--from PATH] [--to URI] [--batch N] [--pubkey F] [--json]\n");
	fprintf(f, "\nRun 'cordon log COMMAND --help' for details.\n");
}

/* The options, also for `cordon completion` (cli-complete.c). */
static const struct option log_opts[] = {
	{ "help", no_argument, NULL, 'h' },
	{ "audit", required_argument, NULL, O_AUDIT },
	{ "json", no_argument, NULL, O_JSON },
	{ "table", no_argument, NULL, O_TABLE },
	{ "agent", required_argument, NULL, O_AGENT },
	{ "task", required_argument, NULL, O_TASK },
	{ "tool", required_argument, NULL, O_TOOL },
	{ "kind", required_argument, NULL, O_KIND },
	{ "since", required_argument, NULL, O_SINCE },
	{ "until", required_argument, NULL, O_UNTIL },
	{ "decision", required_argument, NULL, O_DECISION },
	{ "run", required_argument, NULL, O_RUN },
	{ "lines", required_argument, NULL, 'n' },
	{ "follow", no_argument, NULL, 'f' },
	{ "format", required_argument, NULL, O_FORMAT },
	{ "pubkey", required_argument, NULL, O_PUBKEY },
	{ "checkpoint", required_argument, NULL, O_CHECKPOINT },
	{ "key", required_argument, NULL, O_KEY },
	{ "checkpoint-out", required_argument, NULL, O_CP_OUT },
	{ "replay", no_argument, NULL, O_REPLAY },
	{ "asciicast", no_argument, NULL, O_ASCIICAST },
	{ NULL, 0, NULL, 0 },
};
const struct option *const cli_opts_log = log_opts;

/* Which subcommands take option c (a value of log_opts): the parser refuses
 * the others, and `cordon completion` offers only these. */
static unsigned opt_need(int c)
{
	switch (c) {
	case O_JSON:
		/* export writes JSON lines anyway: --json is accepted there
		 * too, so every command that prints data takes it. */
		return A_OUTPUT | A_FORMAT;
	case O_TABLE:
		return A_OUTPUT;
	case O_AGENT:
	case O_TASK:
	case O_TOOL:
	case O_KIND:
	case O_DECISION:
	case O_RUN:
	case O_SINCE:
	case O_UNTIL:
		return A_FILTER;
	case O_REPLAY:
	case O_ASCIICAST:
		return A_REPLAY;
	case 'n':
		return A_LINES;
	case 'f':
		return A_FOLLOW;
	case O_FORMAT:
		return A_FORMAT;
	case O_PUBKEY:
		return A_VERIFY | A_KEYGEN;
	case O_CHECKPOINT:
		return A_VERIFY;
	case O_KEY:
		return A_SIGN | A_KEYGEN;
	case O_CP_OUT:
		return A_SIGN;
	default:
		return 0;
	}
}

int cli_log_opt_applies(const char *sub, const struct option *o)
{
	size_t i;

	for (i = 0; i < CD_ARRAY_SIZE(subs); i++)
		if (!strcmp(subs[i].name, sub)) {
			unsigned need = opt_need(o->val);
			return !need || (subs[i].allow & need);
		}
	return 1;
}

static int parse(const struct sub *s, int argc, char **argv, struct args *a)
{
	int c;

	opterr = 0;
	optind = 1;
	while ((c = cli_getopt(argc, argv, "+hn:f", log_opts, CD_EXIT_USAGE)) != -1) {
		unsigned need = opt_need(c);
		int64_t *tp = NULL;

		switch (c) {
		case 'h':
			fputs(s->usage, stdout);
			return 1;
		case O_AUDIT:
			a->audit = optarg;
			break;
		case O_JSON:
			a->json = 1;
			break;
		case O_TABLE:
			a->table = 1;
			break;
		case O_AGENT:
			a->f.agent = optarg;
			break;
		case O_TASK:
			a->f.task = optarg;
			break;
		case O_TOOL:
			a->f.tool = optarg;
			break;
		case O_KIND:
			a->f.kind = optarg;
			break;
		case O_DECISION:
			a->f.decision = optarg;
			break;
		case O_RUN:
			a->f.run_id = optarg;
			break;
		case O_REPLAY:
			a->replay |= 1;
			break;
		case O_ASCIICAST:
			a->replay |= 2; /* the same session, another rendering */
			a->asciicast = 1;
			break;
		case O_SINCE:
			tp = &a->f.since_ns;
			break;
		case O_UNTIL:
			tp = &a->f.until_ns;
			break;
		case 'n':
			if (cd_parse_u64(optarg, strlen(optarg), 1000000000, &a->lines) < 0 ||
			    a->lines == 0) {
				cli_errorf("bad --lines '%s' (a positive number)", optarg);
				return -1;
			}
			break;
		case 'f':
			a->follow = 1;
			break;
		case O_FORMAT:
			a->format = optarg;
			break;
		case O_PUBKEY:
			a->pubkey = optarg;
			break;
		case O_CHECKPOINT:
			a->checkpoint = optarg;
			break;
		case O_KEY:
			a->key = optarg;
			break;
		case O_CP_OUT:
			a->cp_out = optarg;
			break;
		default:
			if (optopt)
				cli_errorf("%s: bad option '-%c' (see --help)", s->name, optopt);
			else
				cli_errorf("%s: bad option '%s' (see --help)", s->name,
				           argv[optind - 1]);
			return -1;
		}
		if (need && !(s->allow & need)) {
			cli_errorf("%s: option '%s' does not apply (see --help)", s->name,
			           argv[optind - 1]);
			return -1;
		}
		if (tp && cd_audit_time_parse(optarg, now_ns(), tp) < 0) {
			cli_errorf("bad time '%s' (write " CLI_TIME_FORMS ", or an age like 10m)",
			           optarg);
			return -1;
		}
	}
	if (optind < argc) {
		cli_errorf("%s: unexpected argument '%s' (see --help)", s->name, argv[optind]);
		return -1;
	}
	if (a->json && a->table) {
		cli_errorf("%s: --json and --table exclude each other", s->name);
		return -1;
	}
	if (a->asciicast && (a->replay & 1 || a->json || a->table)) {
		cli_errorf("%s: --asciicast excludes --replay, --json and --table", s->name);
		return -1;
	}
	return 0;
}

int cmd_log(int argc, char **argv)
{
	struct args a;
	size_t i;
	int r;

	if (argc < 2) {
		usage(stderr);
		return CD_EXIT_USAGE;
	}
	if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 ||
	    strcmp(argv[1], "help") == 0) {
		usage(stdout);
		return CD_EXIT_OK;
	}
	if (!strcmp(argv[1], "confirm"))
		return cmd_log_confirm(argc - 1, argv + 1);
	if (!strcmp(argv[1], "ship"))
		return cmd_log_ship(argc - 1, argv + 1);
	for (i = 0; i < CD_ARRAY_SIZE(subs); i++) {
		if (strcmp(argv[1], subs[i].name) != 0)
			continue;
		memset(&a, 0, sizeof a);
		r = parse(&subs[i], argc - 1, argv + 1, &a);
		if (r != 0)
			return r > 0 ? CD_EXIT_OK : CD_EXIT_USAGE;
		return subs[i].fn(&a);
	}
	cli_errorf("unknown command 'log %s' (see 'cordon log --help')", argv[1]);
	return CD_EXIT_USAGE;
}
