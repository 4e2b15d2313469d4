/* audit-append.c — append records to an audit log fast, for the tamper,
 * crash and concurrency tests and for bench/audit.sh.  Not installed.
 *
 *   audit-append --db PATH [-n N] [--pairs|--bulk] [--intent-only]
 *                [--key F --every N --cp-out F] [--kind K] [--agent A]
 *                [--tool T] [--target S] [--reason S] [--details JSON]
 *                [--run ID] [--decision D]
 *
 * --pairs writes a run.intent and a run.result per iteration, each in its
 * own durable transaction, as `cordon run` does; --bulk writes batches of
 * 1000 in one transaction.  Prints the last seq. */
#include "audit/audit.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char H[] = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "db", required_argument, NULL, 'd' },
		{ "pairs", no_argument, NULL, 'p' },
		{ "bulk", no_argument, NULL, 'b' },
		{ "intent-only", no_argument, NULL, 'i' },
		{ "key", required_argument, NULL, 'k' },
		{ "every", required_argument, NULL, 'e' },
		{ "cp-out", required_argument, NULL, 'c' },
		{ "kind", required_argument, NULL, 'K' },
		{ "agent", required_argument, NULL, 'a' },
		{ "tool", required_argument, NULL, 't' },
		{ "target", required_argument, NULL, 'T' },
		{ "reason", required_argument, NULL, 'r' },
		{ "details", required_argument, NULL, 'D' },
		{ "run", required_argument, NULL, 'R' },
		{ "decision", required_argument, NULL, 'x' },
		{ NULL, 0, NULL, 0 },
	};
	struct cd_audit_opts o;
	struct cd_record rec;
	struct cd_audit *a = NULL;
	struct cd_err err;
	const char *db = NULL, *run = NULL;
	char agent[64], target[64], runid[96];
	unsigned long n = 1, i;
	int pairs = 0, bulk = 0, intent_only = 0, c;
	uint64_t seq = 0;

	memset(&o, 0, sizeof o);
	memset(&rec, 0, sizeof rec);
	rec.kind = "decision";
	snprintf(agent, sizeof agent, "agent-%d", (int)getpid());
	rec.agent = agent;
	rec.tool = "shell";
	rec.decision = "allow";
	while ((c = getopt_long(argc, argv, "n:", opts, NULL)) != -1) {
		switch (c) {
		case 'n':
			n = strtoul(optarg, NULL, 10);
			break;
		case 'd':
			db = optarg;
			break;
		case 'p':
			pairs = 1;
			break;
		case 'b':
			bulk = 1;
			break;
		case 'i':
			intent_only = 1;
			break;
		case 'k':
			o.key_path = optarg;
			break;
		case 'e':
			o.checkpoint_every = strtoull(optarg, NULL, 10);
			break;
		case 'c':
			o.checkpoint_out = optarg;
			break;
		case 'K':
			rec.kind = optarg;
			break;
		case 'a':
			rec.agent = optarg;
			break;
		case 't':
			rec.tool = optarg;
			break;
		case 'T':
			rec.target = optarg;
			break;
		case 'r':
			rec.reason = optarg;
			break;
		case 'D':
			rec.details_json = optarg;
			break;
		case 'R':
			run = optarg;
			break;
		case 'x':
			rec.decision = optarg;
			break;
		default:
			fprintf(stderr, "audit-append: bad option\n");
			return 2;
		}
	}
	if (!db) {
		fprintf(stderr, "audit-append: --db PATH required\n");
		return 2;
	}
	if (cd_audit_open(db, &o, &a, &err) < 0) {
		fprintf(stderr, "audit-append: %s\n", err.msg);
		return 1;
	}
	if (bulk) {
		struct cd_record *batch = calloc(1000, sizeof *batch);
		for (i = 0; i < 1000; i++) {
			batch[i] = rec;
			batch[i].argv_sha256 = H;
			batch[i].target = rec.target ? rec.target : "/some/path/of/typical/length";
		}
		for (i = 0; i < n; i += 1000) {
			size_t k = n - i < 1000 ? n - i : 1000;
			if (cd_audit_append_many(a, batch, k, &seq, &err) < 0) {
				fprintf(stderr, "audit-append: %s\n", err.msg);
				return 1;
			}
		}
		free(batch);
	}
	for (i = 0; !bulk && i < n; i++) {
		struct cd_record r = rec;
		if (!rec.target) {
			snprintf(target, sizeof target, "t%lu", i);
			r.target = target;
		}
		if (pairs || intent_only) {
			if (run)
				snprintf(runid, sizeof runid, "%s", run);
			else
				snprintf(runid, sizeof runid, "run-%d-%lu", (int)getpid(), i);
			r.run_id = runid;
			r.kind = "run.intent";
			r.argv_sha256 = H;
			if (cd_audit_append(a, &r, &seq, &err) < 0) {
				fprintf(stderr, "audit-append: %s\n", err.msg);
				return 1;
			}
			if (intent_only)
				continue;
			r.kind = "run.result";
			r.has_exit = 1;
			r.exit_code = 0;
			r.has_duration = 1;
			r.duration_ms = 3;
			r.stdin_sha256 = r.stdout_sha256 = r.stderr_sha256 = H;
			r.reason = "exited";
		}
		if (cd_audit_append(a, &r, &seq, &err) < 0) {
			fprintf(stderr, "audit-append: %s\n", err.msg);
			return 1;
		}
		if (cd_audit_warning(a))
			fprintf(stderr, "audit-append: warning: %s\n", cd_audit_warning(a));
	}
	printf("%llu\n", (unsigned long long)seq);
	cd_audit_close(a);
	return 0;
}
