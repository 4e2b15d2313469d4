/* cmd-log-ship.c — `cordon log ship`: copy this host's local audit log
 * (SQLite) into the shared store (PostgreSQL), incrementally, verifying
 * it as it goes (audit-ship.c).  For hosts that keep a local log (air-gapped,
 * or for latency) and ship it when they can; the shared copy is also the
 * external anchor that shows a local tail cut after it was shipped.
 *
 * The local log's path and the destination are the operator's; what the
 * log holds is untrusted (verified record by record before it is sent). */
#include "cli-audit.h"
#include "cli.h"

#include "audit/audit.h"
#include "store/store.h"
#include "util/buf.h"
#include "util/num.h"
#include "util/util.h"

#include <errno.h>
#include <getopt.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define SHIP_USAGE                                                                                 \
	"usage: cordon log ship [--from PATH] [--to URI] [--batch N] [--pubkey F] [--json]\n\n"    \
	"Copy the local audit log into the shared store's chain of its host name:\n"               \
	"only the records the shared chain does not hold yet, each verified (hash,\n"              \
	"seq, checkpoints) before it is sent, in durable batches.  Run it again at\n"              \
	"any time: it resumes after a crash and copies nothing twice.  Exit 0 when\n"              \
	"the shared chain ends where the local log does; 1 naming the seq when the\n"              \
	"local log is broken (what came before is shipped, nothing after), when the\n"             \
	"shared chain differs from it or is longer, or when the store refuses.\n\n"                \
	"  --from PATH       the local log (default $CORDON_AUDIT when a file, then\n"             \
	"                    $XDG_STATE_HOME/cordon/audit.db)\n"                                   \
	"  --to URI          the shared store, a postgresql:// URI (default $CORDON_AUDIT\n"       \
	"                    when a URI); its role must be the one mapped to this host's\n"        \
	"                    chain (docs/postgresql-roles.sql)\n"                                  \
	"  --batch N         records per transaction (default 1000)\n"                             \
	"  --pubkey F        also check the local checkpoints' signatures (default\n"              \
	"                    $XDG_CONFIG_HOME/cordon/audit.pub when it exists)\n"                  \
	"  --json            one JSON object: chain, local_last, remote_before, shipped\n"

enum { O_FROM = 256, O_TO, O_BATCH, O_PUBKEY, O_JSON };

static const struct option ship_opts[] = {
	{ "help", no_argument, NULL, 'h' },
	{ "from", required_argument, NULL, O_FROM },
	{ "to", required_argument, NULL, O_TO },
	{ "batch", required_argument, NULL, O_BATCH },
	{ "pubkey", required_argument, NULL, O_PUBKEY },
	{ "json", no_argument, NULL, O_JSON },
	{ NULL, 0, NULL, 0 },
};
const struct option *const cli_opts_log_ship = ship_opts;

struct ship_args {
	const char *from, *to, *pubkey;
	uint64_t batch;
	int json;
};

static int parse(int argc, char **argv, struct ship_args *a)
{
	int c;

	opterr = 0;
	optind = 1;
	while ((c = cli_getopt(argc, argv, "+h", ship_opts, CD_EXIT_USAGE)) != -1) {
		switch (c) {
		case 'h':
			fputs(SHIP_USAGE, stdout);
			return 1;
		case O_FROM:
			a->from = optarg;
			break;
		case O_TO:
			a->to = optarg;
			break;
		case O_BATCH:
			if (cd_parse_u64(optarg, strlen(optarg), 1000000, &a->batch) < 0 ||
			    a->batch == 0) {
				cli_errorf("ship: bad --batch '%s' (1 to 1000000)", optarg);
				return -1;
			}
			break;
		case O_PUBKEY:
			a->pubkey = optarg;
			break;
		case O_JSON:
			a->json = 1;
			break;
		default:
			cli_errorf("ship: bad option '%s' (see --help)", argv[optind - 1]);
			return -1;
		}
	}
	if (optind < argc) {
		cli_errorf("ship: unexpected argument '%s' (see --help)", argv[optind]);
		return -1;
	}
	return 0;
}

/* Where from and where to: 0, or the exit status after saying why. */
static int paths(struct ship_args *a, char *from, size_t flen)
{
	const char *env = getenv("CORDON_AUDIT");
	int r;

	if (!a->to && env && cd_store_is_uri(env))
		a->to = env;
	if (!a->to) {
		cli_errorf("ship: no shared store: pass --to postgresql://... (or set "
		           "CORDON_AUDIT to one and --from the local log)");
		return CD_EXIT_USAGE;
	}
	if (!cd_store_is_uri(a->to)) {
		cli_errorf("ship: --to must be a shared store (a postgresql:// URI)");
		return CD_EXIT_USAGE;
	}
	if (a->from)
		r = snprintf(from, flen, "%s", a->from) >= (int)flen ? -ENAMETOOLONG : 0;
	else if (env && cd_store_is_uri(env))
		r = -EINVAL; /* the configured log is the destination: say which file */
	else
		r = cli_audit_path(NULL, from, flen);
	if (r == -EINVAL) {
		cli_errorf("ship: $CORDON_AUDIT is the shared store: pass --from LOCAL.db");
		return CD_EXIT_USAGE;
	}
	if (r < 0 || cd_store_is_uri(from)) {
		cli_errorf("ship: --from must be a local log file");
		return CD_EXIT_USAGE;
	}
	if (access(from, F_OK) < 0) {
		cli_errorf("ship: no local log at '%s'", from);
		return CD_EXIT_FAIL;
	}
	return 0;
}

static int load_pubkey(const char *opt, unsigned char pk[CD_AUDIT_PK_LEN], int *have)
{
	char path[4096];
	struct cd_err err = { 0, "" };

	*have = 0;
	if (!opt && (cli_config_path("audit.pub", path, sizeof path) < 0 || access(path, F_OK) < 0))
		return 0;
	if (cd_audit_pubkey_load(opt ? opt : path, pk, &err) < 0) {
		cli_errorf("%s", err.msg);
		return -1;
	}
	*have = 1;
	return 0;
}

static void report(const struct ship_args *a, const struct cd_audit_ship_report *rep)
{
	struct cd_buf b;
	const char *host;

	if (a->json) {
		json_t *o = json_pack("{s:s,s:I,s:I,s:I}", "chain", rep->host, "local_last",
		                      (json_int_t)rep->local_last, "remote_before",
		                      (json_int_t)rep->remote_before, "shipped",
		                      (json_int_t)rep->shipped);
		char *txt = o ? json_dumps(o, JSON_COMPACT | JSON_ENSURE_ASCII) : NULL;
		if (txt)
			printf("%s\n", txt);
		free(txt);
		json_decref(o);
		return;
	}
	if (!rep->host[0]) {
		printf("nothing to ship: the local log is empty\n");
		return;
	}
	/* The chain's name comes from the log: escaped. */
	cd_buf_init(&b, 1024);
	host = cd_buf_escape(&b, rep->host, strlen(rep->host)) == 0 ? b.data : "?";
	if (rep->shipped)
		printf("shipped %llu records of chain '%s' (seq %llu to %llu)\n",
		       (unsigned long long)rep->shipped, host,
		       (unsigned long long)rep->remote_before + 1,
		       (unsigned long long)(rep->remote_before + rep->shipped));
	else
		printf("nothing new: chain '%s' in the shared store already ends at seq %llu\n",
		       host, (unsigned long long)rep->remote_before);
	cd_buf_release(&b);
}

int cmd_log_ship(int argc, char **argv)
{
	struct ship_args a = { NULL, NULL, NULL, 1000, 0 };
	struct cd_audit_ship_opts so;
	struct cd_audit_ship_report rep;
	struct cd_audit_opts ao;
	struct cd_audit *from = NULL;
	struct cd_err err = { 0, "" };
	unsigned char pk[CD_AUDIT_PK_LEN];
	char path[4096];
	int r, have_pk;

	if ((r = parse(argc, argv, &a)) != 0)
		return r > 0 ? CD_EXIT_OK : CD_EXIT_USAGE;
	if ((r = paths(&a, path, sizeof path)) != 0)
		return r;
	if (load_pubkey(a.pubkey, pk, &have_pk) < 0)
		return CD_EXIT_FAIL;
	memset(&ao, 0, sizeof ao);
	ao.read_only = 1;
	if (cd_audit_open(path, &ao, &from, &err) < 0) {
		cli_errorf("%s", err.msg);
		return CD_EXIT_FAIL;
	}
	memset(&so, 0, sizeof so);
	so.to = a.to;
	so.batch = a.batch;
	so.pubkey = have_pk ? pk : NULL;
	r = cd_audit_ship(from, &so, &rep, &err);
	cd_audit_close(from);
	if (rep.shipped && r < 0)
		cli_warnf("ship: %llu records of chain '%s' were shipped before the refusal",
		          (unsigned long long)rep.shipped, rep.host);
	if (r < 0) {
		cli_errorf("ship: %s", err.msg);
		return CD_EXIT_FAIL;
	}
	report(&a, &rep);
	return CD_EXIT_OK;
}
