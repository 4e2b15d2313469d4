/* cmd-proxy.c — `cordon proxy`: the egress proxy on its own, listening on
 * a loopback address, deciding every request against --allow-host entries
 * and logging every attempt to the audit log (no log, no proxy).
 *
 * The CLI owns argv, signals (SIGINT/SIGTERM end the loop through a
 * signalfd) and the one "listening on" line on stdout; the loop, the
 * parser and the decisions live in src/lib/egress-*. */
#include "cli.h"

#include "util/bounds.h"
#include "cli-audit.h"
#include "egress/egress-addr.h"
#include "egress/egress-policy.h"
#include "egress/egress-proxy.h"
#include "mask/logmask.h"
#include "util/num.h"
#include "util/util.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <getopt.h>
#include <netinet/in.h>
#include <signal.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <unistd.h>

static void usage(FILE *f)
{
	fprintf(f,
	        "usage: cordon proxy --listen ADDR:PORT [--allow-host HOST[:PORT]]... [OPTIONS]\n"
	        "\n"
	        "An HTTP forward proxy (CONNECT and plain http:// requests; SOCKS5 CONNECT "
	        "without\n"
	        "authentication on the same port) that allows only the\n"
	        "destinations named with --allow-host, refuses loopback, private, link-local,\n"
	        "CGNAT, multicast and reserved addresses unless an entry names them, connects to\n"
	        "the address it checked, and logs every attempt to the audit log.\n"
	        "\n"
	        "  --listen ADDR:PORT      loopback address to listen on (127.0.0.1:0 picks a "
	        "port);\n"
	        "                          the address is printed as 'listening on ADDR:PORT'\n"
	        "  --allow-host ENTRY      HOST[:PORT]: a name, '*.' + a name, an address, or\n"
	        "                          ADDR/BITS; without a port, 80 and 443 (repeatable);\n"
	        "                          a wildcard over a public suffix (*.co.uk) is refused\n"
	        "  --audit PATH            the audit log (default: see cordon-log(1))\n"
	        "  --agent ID              the agent the records name\n"
	        "  --max-conns N           open connections at most (default %d)\n"
	        "  --header-timeout DUR    to send a complete request head (default 10s)\n"
	        "  --connect-timeout DUR   to reach the destination (default 10s)\n"
	        "  --idle-timeout DUR      a relay with no traffic is closed (default 5m)\n"
	        "  --report-only           allow what would be refused (allowlist, address class,\n"
	        "                          TLS SNI) and log it as decision=report-only-deny;\n"
	        "                          malformed, huge and slow requests are still refused\n"
	        "  -h, --help              this text\n"
	        "\n"
	        "Refusals answer 403 (400 malformed, 408 too slow, 431 too large) with the reason\n"
	        "in an X-Cordon-Reason header (SOCKS5: reply 02, 07, 08 or 01; the reason is in\n"
	        "the record).  Exit status: 0 after SIGINT/SIGTERM, 2 usage,\n"
	        "125 when the proxy could not start or the audit log failed.\n",
	        CD_EGRESS_CONNS_MAX);
}

enum {
	OPT_LISTEN = 256,
	OPT_ALLOW_HOST,
	OPT_AUDIT,
	OPT_AGENT,
	OPT_MAX_CONNS,
	OPT_HEADER_TIMEOUT,
	OPT_CONNECT_TIMEOUT,
	OPT_IDLE_TIMEOUT,
	OPT_LISTEN_FD,
	OPT_STOP_FD,
	OPT_RUN_ID,
	OPT_REPORT_ONLY,
	OPT_LOG_MASK,
};

static const struct option options[] = {
	{ "listen", required_argument, NULL, OPT_LISTEN },
	{ "allow-host", required_argument, NULL, OPT_ALLOW_HOST },
	{ "audit", required_argument, NULL, OPT_AUDIT },
	{ "agent", required_argument, NULL, OPT_AGENT },
	{ "max-conns", required_argument, NULL, OPT_MAX_CONNS },
	{ "header-timeout", required_argument, NULL, OPT_HEADER_TIMEOUT },
	{ "connect-timeout", required_argument, NULL, OPT_CONNECT_TIMEOUT },
	{ "idle-timeout", required_argument, NULL, OPT_IDLE_TIMEOUT },
	/* Used by `cordon run --allow-host`, which execs the proxy with the
	 * socket the sandbox listens on and a pipe that closes with the run. */
	{ "listen-fd", required_argument, NULL, OPT_LISTEN_FD },
	{ "stop-fd", required_argument, NULL, OPT_STOP_FD },
	{ "run-id", required_argument, NULL, OPT_RUN_ID },
	/* The run's grants mask data: its egress records are minimized with
	 * these rules ({"email": "redact", ...}) and the deployment's key. */
	{ "log-mask", required_argument, NULL, OPT_LOG_MASK },
	{ "report-only", no_argument, NULL, OPT_REPORT_ONLY },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};
const struct option *const cli_opts_proxy = options; /* cordon completion */

static int duration_opt(const char *name, const char *v, unsigned *ret)
{
	uint64_t ms;

	if (cd_parse_duration_ms(v, &ms) < 0 || ms == 0 || ms > 24ULL * 3600 * 1000) {
		cli_errorf("--%s: invalid duration '%s'", name, v);
		return -EINVAL;
	}
	*ret = (unsigned)ms;
	return 0;
}

/* A bound, listening socket on a loopback ADDR:PORT. */
static int listen_on(const char *spec, char *shown, size_t shownlen)
{
	struct sockaddr_storage ss;
	socklen_t slen = sizeof ss;
	const char *colon;
	uint64_t port;
	char text[64];
	int fd, one = 1, n;

	if (spec[0] == '[') {
		const char *close = strchr(spec, ']');
		colon = close ? close + 1 : NULL;
	} else {
		colon = strchr(spec, ':');
	}
	if (!colon || *colon != ':' ||
	    cd_addr_literal(spec, (size_t)(colon - spec), &ss) <= CD_LIT_NAME ||
	    cd_parse_u64(colon + 1, strlen(colon + 1), 65535, &port) < 0) {
		cli_errorf("--listen: expected ADDR:PORT with a canonical address, got '%s'", spec);
		return -EINVAL;
	}
	if (cd_addr_classify(&ss) != CD_ADDR_LOOPBACK) {
		cli_errorf("--listen: '%s' is not a loopback address", spec);
		return -EINVAL;
	}
	cd_addr_set_port(&ss, (uint16_t)port);
	fd = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0) {
		cli_errorf("--listen: socket: %s", strerror(errno));
		return -errno;
	}
	(void)setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
	if (bind(fd, (struct sockaddr *)&ss, cd_addr_len(&ss)) < 0 || listen(fd, 128) < 0 ||
	    getsockname(fd, (struct sockaddr *)&ss, &slen) < 0) {
		int e = errno;
		cli_errorf("--listen '%s': %s", spec, strerror(e));
		close(fd);
		return -e;
	}
	if (cd_addr_format(&ss, text, sizeof text) < 0)
		text[0] = '\0';
	n = snprintf(shown, shownlen, "%s:%u", text,
	             ntohs(ss.ss_family == AF_INET ? ((struct sockaddr_in *)&ss)->sin_port
	                                           : ((struct sockaddr_in6 *)&ss)->sin6_port));
	if (n < 0 || (size_t)n >= shownlen)
		shown[0] = '\0';
	return fd;
}

/* Room for every connection's two sockets and two splice pipes: the soft
 * descriptor limit is raised towards the hard one.  When it cannot be,
 * the loop splices for fewer connections and copies for the rest. */
static void raise_nofile(unsigned max_conns)
{
	rlim_t want = 6 * (rlim_t)max_conns + 64;
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) < 0 || rl.rlim_cur >= want)
		return;
	rl.rlim_cur = rl.rlim_max != RLIM_INFINITY && rl.rlim_max < want ? rl.rlim_max : want;
	(void)setrlimit(RLIMIT_NOFILE, &rl);
}

/* What the command line names, besides the proxy's own settings. */
struct proxy_opts {
	const char *listen_spec, *audit_path, *agent, *run_id;
	int given_lfd, given_sfd; /* -1: none */
	struct cd_mask_rules log_mask;
	int masked; /* log_mask masks something */
};

/* The command line, checked: -1 to run the proxy, else the exit status. */
static int parse_opts(int argc, char **argv, struct proxy_opts *o, struct cd_egress_proxy_cfg *cfg,
                      struct cd_egress_policy *policy)
{
	struct cd_err err;
	uint64_t v;
	int c;

	optind = 1;
	while ((c = cli_getopt(argc, argv, "+h", options, CD_EXIT_USAGE)) != -1) {
		switch (c) {
		case OPT_LISTEN:
			o->listen_spec = optarg;
			break;
		case OPT_LOG_MASK: {
			json_t *j = json_loads(optarg, 0, NULL);
			int pr = cd_logmask_rules_parse(j, &o->log_mask);
			json_decref(j);
			if (pr < 0) {
				cli_errorf("--log-mask: not mask rules: %s", optarg);
				return CD_EXIT_CORDON;
			}
			o->masked = cd_mask_rules_active(&o->log_mask);
			break;
		}
		case OPT_ALLOW_HOST:
			if (cd_egress_policy_add(policy, optarg, &err) < 0) {
				cli_errorf("--allow-host: %s", err.msg);
				return CD_EXIT_USAGE;
			}
			break;
		case OPT_AUDIT:
			o->audit_path = optarg;
			break;
		case OPT_AGENT:
			o->agent = optarg;
			break;
		case OPT_MAX_CONNS:
			if (cd_parse_u64(optarg, strlen(optarg), CD_EGRESS_CONNS_LIMIT, &v) < 0 ||
			    v == 0) {
				cli_errorf("--max-conns: expected 1..%d, got '%s'",
				           CD_EGRESS_CONNS_LIMIT, optarg);
				return CD_EXIT_USAGE;
			}
			cfg->max_conns = (unsigned)v;
			break;
		case OPT_HEADER_TIMEOUT:
		case OPT_CONNECT_TIMEOUT:
		case OPT_IDLE_TIMEOUT:
			if (duration_opt(options[c - OPT_LISTEN].name, optarg,
			                 c == OPT_HEADER_TIMEOUT    ? &cfg->head_timeout_ms
			                 : c == OPT_CONNECT_TIMEOUT ? &cfg->connect_timeout_ms
			                                            : &cfg->idle_timeout_ms) < 0) {
				return CD_EXIT_USAGE;
			}
			break;
		case OPT_LISTEN_FD:
		case OPT_STOP_FD:
			if (cd_parse_u64(optarg, strlen(optarg), 1 << 20, &v) < 0 ||
			    fcntl((int)v, F_GETFD) < 0) {
				cli_errorf("--%s '%s': not an open file descriptor",
				           c == OPT_LISTEN_FD ? "listen-fd" : "stop-fd", optarg);
				return CD_EXIT_USAGE;
			}
			if (c == OPT_LISTEN_FD)
				o->given_lfd = (int)v;
			else
				o->given_sfd = (int)v;
			break;
		case OPT_RUN_ID:
			o->run_id = optarg;
			break;
		case OPT_REPORT_ONLY:
			cfg->report_only = 1;
			break;
		case 'h':
			usage(stdout);
			return CD_EXIT_OK;
		default:
			usage(stderr);
			return CD_EXIT_USAGE;
		}
	}
	if (optind != argc || (!o->listen_spec == (o->given_lfd < 0))) {
		if (optind != argc)
			cli_errorf("unexpected argument '%s'", argv[optind]);
		else
			cli_errorf("--listen is required (exactly one of --listen, --listen-fd)");
		return CD_EXIT_USAGE;
	}

	/* Report-only is for rolling out an allowlist with a proxy an operator
	 * runs; a sandbox's own proxy always enforces. */
	if (cfg->report_only && o->given_lfd >= 0) {
		cli_errorf("--report-only cannot be used with --listen-fd (cordon run)");
		return CD_EXIT_USAGE;
	}
	return -1;
}

int cmd_proxy(int argc, char **argv)
{
	struct cd_egress_policy *policy = NULL;
	struct cd_egress_proxy_cfg cfg;
	struct cd_egress_audit log;
	struct proxy_opts o = { .given_lfd = -1, .given_sfd = -1 };
	struct cd_masker *masker = NULL;
	struct cd_audit *audit = NULL;
	char shown[96];
	struct cd_err err;
	sigset_t mask;
	int r, rc = CD_EXIT_CORDON, lfd = -1, sfd = -1;

	memset(&cfg, 0, sizeof cfg);
	if (cd_egress_policy_new(&policy) < 0) {
		cli_errorf("out of memory");
		return CD_EXIT_CORDON;
	}
	r = parse_opts(argc, argv, &o, &cfg, policy);
	if (r >= 0) {
		rc = r;
		goto out;
	}

	/* No log, no proxy. */
	if (cli_audit_open(o.audit_path, &audit) < 0)
		goto out;
	if (o.given_lfd >= 0) {
		lfd = o.given_lfd;
		memcpy(shown, "the sandbox's 127.0.0.1", sizeof "the sandbox's 127.0.0.1");
	} else {
		lfd = listen_on(o.listen_spec, shown, sizeof shown);
		if (lfd < 0)
			goto out;
	}

	sigemptyset(&mask);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGHUP);
	signal(SIGPIPE, SIG_IGN);
	if (sigprocmask(SIG_BLOCK, &mask, NULL) < 0 ||
	    (sfd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK)) < 0) {
		cli_errorf("signalfd: %s", strerror(errno));
		goto out;
	}

	raise_nofile(cfg.max_conns ? cfg.max_conns : CD_EGRESS_CONNS_MAX);

	memset(&log, 0, sizeof log);
	log.audit = audit;
	log.agent = o.agent;
	log.run_id = o.run_id;
	if (o.masked) {
		/* No key: the records withhold what they would mask. */
		if (cli_masker_open(&masker) < 0)
			masker = NULL;
		log.mask = &o.log_mask;
		log.masker = masker;
	}
	cfg.listen_fd = lfd;
	cfg.stop_fd = o.given_sfd >= 0 ? o.given_sfd : sfd;
	cfg.policy = policy;
	cfg.log = cd_egress_audit_log;
	cfg.log_many = cd_egress_audit_log_many;
	cfg.log_ctx = &log;

	if (o.given_lfd < 0) {
		printf("listening on %s\n", shown);
		fflush(stdout);
	}
	r = cd_egress_proxy_run(&cfg, &err);
	if (r < 0) {
		cli_errorf("%s%s%s", err.msg, log.err.msg[0] ? ": " : "", log.err.msg);
		goto out;
	}
	rc = CD_EXIT_OK;
out:
	if (sfd >= 0)
		close(sfd);
	if (lfd >= 0)
		close(lfd);
	cd_audit_close(audit);
	cd_egress_policy_free(policy);
	cd_masker_free(masker);
	return rc;
}
