/* cmd-mcp-fopts.c — `cordon mcp --listen`'s options (cmd-mcp-front.c):
 * the table (also the stdio gateway's, for completion) and their checks. */
#include "cli.h"

#include "cmd-mcp-front.h"
#include "cmd-mcp.h"
#include "util/num.h"

#include <getopt.h>
#include <string.h>

/* `cordon mcp` with --listen before any "--": the front. */
int mcp_front_wanted(int argc, char **argv)
{
	int i;

	for (i = 1; i < argc && strcmp(argv[i], "--"); i++)
		if (!strcmp(argv[i], "--listen") || !strncmp(argv[i], "--listen=", 9))
			return 1;
	return 0;
}

static const struct option front_opts[] = {
	{ "listen", required_argument, NULL, 'l' },
	{ "policy", required_argument, NULL, 'p' },
	{ "server", required_argument, NULL, 's' },
	{ "audit", required_argument, NULL, 'A' },
	{ "state", required_argument, NULL, 'S' },
	{ "cwd", required_argument, NULL, 'C' },
	{ "tls-cert", required_argument, NULL, 'c' },
	{ "tls-key", required_argument, NULL, 'k' },
	{ "allow-origin", required_argument, NULL, 'o' },
	{ "max-sessions", required_argument, NULL, 'm' },
	{ "max-request", required_argument, NULL, 'r' },
	{ "session-idle", required_argument, NULL, 'i' },
	{ "request-deadline", required_argument, NULL, 'D' },
	{ "agent", required_argument, NULL, 'a' },
	/* The stdio gateway's own (refused with --listen): the table is also
	 * what `cordon mcp` completes. */
	{ "task", required_argument, NULL, 'X' },
	{ "approval-timeout", required_argument, NULL, 'X' },
	{ "secret", required_argument, NULL, 'X' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

/* `cordon mcp`'s options, stdio and --listen (cli-complete.c). */
const struct option *const cli_opts_mcp = front_opts;

int front_args(int argc, char **argv, struct front *f)
{
	uint64_t v;
	int c;

	optind = 1;
	opterr = 0;
	while ((c = cli_getopt(argc, argv, "+h", front_opts, CD_EXIT_USAGE)) != -1) {
		switch (c) {
		case 'l':
			f->listen = optarg;
			break;
		case 'p':
			f->policy = optarg;
			break;
		case 's':
			f->server = optarg;
			break;
		case 'A':
			f->audit = optarg;
			break;
		case 'S':
			f->state_opt = optarg;
			break;
		case 'C':
			f->cwd = optarg;
			break;
		case 'c':
			f->cert = optarg;
			break;
		case 'k':
			f->key = optarg;
			break;
		case 'o':
			f->origin_opt = optarg;
			break;
		case 'm':
		case 'r':
			if ((c == 'm' ? cd_parse_u64(optarg, strlen(optarg), 256, &v)
			              : cd_parse_size(optarg, 0, &v)) < 0 ||
			    v < 1 || v > (c == 'm' ? 256u : 16u << 20)) {
				cli_errorf("--%s '%s': out of range",
				           c == 'm' ? "max-sessions" : "max-request", optarg);
				return CD_EXIT_USAGE;
			}
			if (c == 'm')
				f->max_sessions = (unsigned)v;
			else
				f->max_request = (size_t)v;
			break;
		case 'i':
			if (cd_parse_duration_ms(optarg, &v) < 0 || v < 1000 ||
			    v > 7ull * 24 * 3600 * 1000) {
				cli_errorf("--session-idle '%s': a duration from 1s to 7d", optarg);
				return CD_EXIT_USAGE;
			}
			f->idle_ms = v;
			break;
		case 'D':
			if (cd_parse_duration_ms(optarg, &v) < 0 || v < 1000 || v > 3600 * 1000) {
				cli_errorf("--request-deadline '%s': a duration from 1s to 1h",
				           optarg);
				return CD_EXIT_USAGE;
			}
			f->request_s = (unsigned)(v / 1000);
			break;
		case 'a':
			cli_errorf("--agent is not given with --listen: each request's token names "
			           "its "
			           "agent (cordon mcp token add)");
			return CD_EXIT_USAGE;
		case 'X':
			cli_errorf("--task, --approval-timeout and --secret are not taken with "
			           "--listen");
			return CD_EXIT_USAGE;
		case 'h':
			mcp_usage(stdout);
			return CD_EXIT_OK;
		default:
			cli_errorf("unknown or incomplete option '%s' (see --help)",
			           argv[optind - 1]);
			return CD_EXIT_USAGE;
		}
	}
	if (!f->policy) {
		cli_errorf("usage: cordon mcp --listen ADDR:PORT --policy FILE [--server NAME] [-- "
		           "CMD [ARG...]]");
		return CD_EXIT_USAGE;
	}
	f->cmd = optind < argc ? argv + optind : NULL;
	return -1;
}
