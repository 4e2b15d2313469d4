/* cmd-mcp-token.c — `cordon mcp token add|list|revoke`: the bearer tokens
 * that name an agent to the MCP HTTP front (cmd-mcp-front.c).  A token is
 * 32 random bytes, printed once as the last line of stdout; the state
 * database keeps only its SHA-256, the agent, the policy and the expiry.
 *
 * Trust boundary: the operator's command line.  A token is never written
 * anywhere but stdout; whoever holds it is the agent to the front. */
#include "cli.h"

#include "cli-audit.h"
#include "cmd-mcp.h"
#include "mcp/mcp.h"
#include "store/state.h"
#include "util/num.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

static int random_hex(char *out, size_t nbytes)
{
	unsigned char b[32];
	size_t i;

	if (nbytes > sizeof b || getrandom(b, nbytes, 0) != (ssize_t)nbytes)
		return -1;
	for (i = 0; i < nbytes; i++) {
		out[2 * i] = "0123456789abcdef"[b[i] >> 4];
		out[2 * i + 1] = "0123456789abcdef"[b[i] & 15];
	}
	out[2 * nbytes] = 0;
	explicit_bzero(b, sizeof b);
	return 0;
}

/* The hash the store keeps of a token (also the front's lookup key). */
void mcp_token_hash(const char *token, char out[65])
{
	cd_mcp_sha256_hex(token, strlen(token), out);
}

static int add(struct cd_store *st, const char *agent, const char *policy, uint64_t ttl_ms)
{
	char token[5 + 64 + 1] = "cdt_", id[3 + 16 + 1] = "tk-", hash[65], abs[PATH_MAX];
	struct cd_err err = { 0, "" };
	struct cd_agent_token t = { .agent = agent };

	if (policy && !realpath(policy, abs)) {
		cli_errorf("--policy '%s': %s", policy, cd_strerror(-errno));
		return CD_EXIT_USAGE;
	}
	if (random_hex(token + 4, 32) < 0 || random_hex(id + 3, 8) < 0) {
		cli_errorf("cannot make a token: no randomness");
		return CD_EXIT_CORDON;
	}
	mcp_token_hash(token, hash);
	t.id = id;
	t.hash = hash;
	t.policy = policy ? abs : NULL;
	t.created = (int64_t)time(NULL);
	t.expires = ttl_ms ? t.created + (int64_t)((ttl_ms + 999) / 1000) : 0;
	if (st->ops->agent_token_add(st, &t, &err) < 0) {
		explicit_bzero(token, sizeof token);
		cli_errorf("%s", err.msg);
		return CD_EXIT_CORDON;
	}
	printf("token %s for agent %s%s%s\n%s\n", id, agent, policy ? ", policy " : "",
	       policy ? abs : "", token);
	fflush(stdout);
	explicit_bzero(token, sizeof token);
	return CD_EXIT_OK;
}

static int print_row(const struct cd_agent_token *t, void *ctx)
{
	int64_t now = *(const int64_t *)ctx;
	const char *state = t->revoked                        ? "revoked"
	                    : t->expires && t->expires <= now ? "expired"
	                                                      : "active";

	printf("%s\t%s\t%s\texpires=%lld\t%s\n", t->id, t->agent, state, (long long)t->expires,
	       t->policy ? t->policy : "-");
	return 0;
}

static const struct option token_opts[] = {
	{ "agent", required_argument, NULL, 'a' },   { "policy", required_argument, NULL, 'p' },
	{ "expires", required_argument, NULL, 'e' }, { "state", required_argument, NULL, 'S' },
	{ "help", no_argument, NULL, 'h' },          { NULL, 0, NULL, 0 },
};

const struct option *const cli_opts_mcp_token = token_opts;

static void usage(FILE *f)
{
	fprintf(f, "usage: cordon mcp token add --agent ID [--policy FILE] [--expires DUR] "
	           "[--state PATH]\n"
	           "       cordon mcp token list [--state PATH]\n"
	           "       cordon mcp token revoke ID [--state PATH]\n"
	           "\n"
	           "Bearer tokens of `cordon mcp --listen`: add prints the new token once, as\n"
	           "the last line of stdout (the state database keeps its SHA-256 only); a\n"
	           "request bearing it is agent ID, decided with FILE (default: the front's\n"
	           "--policy) until DUR has passed (default: no expiry) or it is revoked.\n");
}

int mcp_token_cmd(int argc, char **argv)
{
	const char *agent = NULL, *policy = NULL, *state = NULL, *sub;
	uint64_t ttl_ms = 0;
	struct cd_state *st = NULL;
	struct cd_err err = { 0, "" };
	int64_t now = (int64_t)time(NULL);
	int c, rc;

	if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
		usage(argc < 2 ? stderr : stdout);
		return argc < 2 ? CD_EXIT_USAGE : CD_EXIT_OK;
	}
	sub = argv[1];
	optind = 1;
	opterr = 0;
	while ((c = cli_getopt(argc - 1, argv + 1, "h", token_opts, CD_EXIT_USAGE)) != -1) {
		switch (c) {
		case 'a':
			agent = optarg;
			break;
		case 'p':
			policy = optarg;
			break;
		case 'S':
			state = optarg;
			break;
		case 'e':
			if (cd_parse_duration_ms(optarg, &ttl_ms) < 0 || ttl_ms < 1000) {
				cli_errorf("--expires '%s': a duration (30m, 8h, 90d)", optarg);
				return CD_EXIT_USAGE;
			}
			break;
		case 'h':
			usage(stdout);
			return CD_EXIT_OK;
		default:
			cli_errorf("unknown or incomplete option (see cordon mcp token --help)");
			return CD_EXIT_USAGE;
		}
	}
	if (!strcmp(sub, "add")      ? !agent || !*agent || optind != argc - 1
	    : !strcmp(sub, "revoke") ? optind != argc - 2
	    : !strcmp(sub, "list")   ? optind != argc - 1
	                             : 1) {
		usage(stderr);
		return CD_EXIT_USAGE;
	}
	if (mcp_open_state(state, &st) < 0)
		return CD_EXIT_CORDON;
	if (!strcmp(sub, "add")) {
		rc = add(cd_state_store(st), agent, policy, ttl_ms);
	} else if (!strcmp(sub, "list")) {
		rc = cd_state_store(st)->ops->agent_token_list(cd_state_store(st), print_row, &now,
		                                               &err) < 0
		             ? CD_EXIT_CORDON
		             : CD_EXIT_OK;
		if (rc)
			cli_errorf("%s", err.msg);
	} else if (cd_state_store(st)->ops->agent_token_revoke(cd_state_store(st), argv[argc - 1],
	                                                       now, &err) < 0) {
		cli_errorf("%s", err.msg);
		rc = err.code == -ENOENT ? CD_EXIT_FAIL : CD_EXIT_CORDON;
	} else {
		printf("revoked %s\n", argv[argc - 1]);
		rc = CD_EXIT_OK;
	}
	cd_state_close(st);
	return rc;
}
