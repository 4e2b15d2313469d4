/* cli-launch-opts.c — the run options of `cordon run` and `cordon shell`:
 * their table (shared with `cordon completion`), the parser that turns
 * argv into a struct run_args, and their part of --help.  Secrets given
 * with --secret are read here into the struct, to be placed only in the
 * command's environment; argv and the environment are the caller's, so
 * every value is checked before it is kept.
 */
#include "cli.h"
#include "cli-launch-int.h"

#include "audit/session.h"
#include "cli-audit.h"
#include "util/bounds.h"
#include "util/buf.h"
#include "util/num.h"
#include "util/util.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const struct option options[] = {
	{ "ro", required_argument, NULL, OPT_RO },
	{ "rw", required_argument, NULL, OPT_RW },
	{ "scratch", required_argument, NULL, OPT_SCRATCH },
	{ "rootfs", required_argument, NULL, OPT_ROOTFS },
	{ "image", required_argument, NULL, OPT_IMAGE },
	{ "scratch-size", required_argument, NULL, OPT_SCRATCH_SIZE },
	{ "env", required_argument, NULL, OPT_ENV },
	{ "secret", required_argument, NULL, OPT_SECRET },
	{ "cwd", required_argument, NULL, OPT_CWD },
	{ "timeout", required_argument, NULL, OPT_TIMEOUT },
	{ "output-limit", required_argument, NULL, OPT_OUTPUT_LIMIT },
	{ "memory", required_argument, NULL, OPT_MEMORY },
	{ "pids", required_argument, NULL, OPT_PIDS },
	{ "cpu-time", required_argument, NULL, OPT_CPU_TIME },
	{ "json", no_argument, NULL, OPT_JSON },
	{ "json-fd", required_argument, NULL, OPT_JSON_FD },
	{ "dry-run", no_argument, NULL, OPT_DRY_RUN },
	{ "approval-timeout", required_argument, NULL, OPT_APPROVAL_TIMEOUT },
	{ "approve-interactive", no_argument, NULL, OPT_APPROVE_INTERACTIVE },
	{ "propose", no_argument, NULL, OPT_PROPOSE },
	{ "propose-size", required_argument, NULL, OPT_PROPOSE_SIZE },
	{ "propose-inodes", required_argument, NULL, OPT_PROPOSE_INODES },
	{ "allow-degraded", no_argument, NULL, OPT_ALLOW_DEGRADED },
	{ "profile", required_argument, NULL, OPT_PROFILE },
	{ "policy", required_argument, NULL, OPT_POLICY },
	{ "agent", required_argument, NULL, OPT_AGENT },
	{ "task", required_argument, NULL, OPT_TASK },
	{ "tool", required_argument, NULL, OPT_TOOL },
	{ "audit", required_argument, NULL, OPT_AUDIT },
	{ "state", required_argument, NULL, OPT_STATE },
	{ "skip-socket-scan", no_argument, NULL, OPT_SKIP_SOCKET_SCAN },
	{ "allow-home", no_argument, NULL, OPT_ALLOW_HOME },
	{ "allow-host", required_argument, NULL, OPT_ALLOW_HOST },
	{ "net", required_argument, NULL, OPT_NET },
	{ "record-limit", required_argument, NULL, OPT_RECORD_LIMIT },
	{ "cache", required_argument, NULL, OPT_CACHE },
	{ "install", required_argument, NULL, OPT_INSTALL },
	{ "direct-stdio", no_argument, NULL, OPT_DIRECT_STDIO },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};
const struct option *const cli_opts_run = options; /* cordon completion */

void launch_args_release(struct run_args *a)
{
	size_t i;

	for (i = 0; i < a->nbinds; i++)
		free((char *)a->binds[i].src);
	for (i = 0; i < a->nenv; i++)
		free(a->env[i]);
	for (i = 0; i < a->nsecrets; i++)
		cd_free_secret(a->secrets[i], strlen(a->secrets[i]));
}

static int valid_name(const char *s, size_t n)
{
	size_t i;

	if (n == 0 || (s[0] >= '0' && s[0] <= '9'))
		return 0;
	for (i = 0; i < n; i++) {
		char c = s[i];
		if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
		      c == '_'))
			return 0;
	}
	return 1;
}

/* PATH[:DEST]: the split is at the last ':' followed by '/'. */
int launch_add_bind(struct run_args *a, const char *arg, int rw)
{
	const char *colon = strrchr(arg, ':');
	struct cd_plan_bind *b;
	char *src;

	if (a->nbinds >= MAX_OPT_ITEMS) {
		cli_errorf("too many --ro/--rw options (max %d)", MAX_OPT_ITEMS);
		return -1;
	}
	src = strdup(arg);
	if (!src)
		return -1;
	b = &a->binds[a->nbinds++];
	b->src = src;
	b->dest = NULL;
	b->rw = rw;
	if (colon && colon[1] == '/') {
		src[colon - arg] = '\0';
		b->dest = src + (colon - arg) + 1;
	}
	if (!src[0]) {
		cli_errorf("%s needs a path", rw ? "--rw" : "--ro");
		return -1;
	}
	return 0;
}

int launch_add_env(struct run_args *a, const char *arg)
{
	const char *eq = strchr(arg, '=');
	size_t nl = eq ? (size_t)(eq - arg) : strlen(arg);
	struct cd_buf b;
	const char *val;

	if (!valid_name(arg, nl)) {
		cli_errorf("--env '%s': NAME must be letters, digits and '_'", arg);
		return -1;
	}
	if (a->nenv >= MAX_OPT_ITEMS) {
		cli_errorf("too many --env options (max %d)", MAX_OPT_ITEMS);
		return -1;
	}
	if (eq) {
		a->env[a->nenv] = strdup(arg);
	} else {
		val = getenv(arg);
		if (!val) {
			cli_errorf("--env %s: not set in cordon's environment (use NAME=VALUE)",
			           arg);
			return -1;
		}
		cd_buf_init(&b, CD_PLAN_MAX_ARGS_BYTES);
		if (cd_buf_printf(&b, "%s=%s", arg, val) < 0) {
			cd_buf_release(&b);
			cli_errorf("--env %s: value too long", arg);
			return -1;
		}
		a->env[a->nenv] = cd_buf_take(&b);
	}
	if (!a->env[a->nenv])
		return -1;
	a->nenv++;
	return 0;
}

static int read_secret_file(const char *path, struct cd_buf *b)
{
	char chunk[4096];
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	ssize_t n;

	if (fd < 0)
		return -errno;
	while ((n = read(fd, chunk, sizeof chunk)) > 0) {
		if (cd_buf_append(b, chunk, (size_t)n) < 0) {
			explicit_bzero(chunk, sizeof chunk);
			close(fd);
			return -CD_E_LIMIT;
		}
	}
	explicit_bzero(chunk, sizeof chunk);
	close(fd);
	if (n < 0)
		return -EIO;
	/* One trailing newline is the file's, not the secret's. */
	if (b->len && b->data[b->len - 1] == '\n')
		b->data[--b->len] = '\0';
	return 0;
}

static int add_secret(struct run_args *a, const char *arg)
{
	const char *colon = strchr(arg, ':');
	size_t nl = colon ? (size_t)(colon - arg) : strlen(arg);
	struct cd_buf b;
	int r = 0;

	if (!valid_name(arg, nl)) {
		cli_errorf("--secret: NAME must be letters, digits and '_'");
		return -1;
	}
	if (a->nsecrets >= MAX_OPT_ITEMS) {
		cli_errorf("too many --secret options (max %d)", MAX_OPT_ITEMS);
		return -1;
	}
	cd_buf_init(&b, CD_SECRET_MAX + 256);
	r = cd_buf_append(&b, arg, nl);
	if (r == 0)
		r = cd_buf_putc(&b, '=');
	if (r == 0 && colon) {
		r = read_secret_file(colon + 1, &b);
		if (r < 0) {
			cd_buf_release_secret(&b);
			cli_errorf("--secret %.*s: cannot read '%s': %s", (int)nl, arg, colon + 1,
			           cd_strerror(r));
			return -1;
		}
	} else if (r == 0) {
		const char *v;
		char name[256];

		if (nl >= sizeof name) {
			cd_buf_release_secret(&b);
			cli_errorf("--secret: name too long");
			return -1;
		}
		memcpy(name, arg, nl);
		name[nl] = '\0';
		v = getenv(name);
		if (!v) {
			cd_buf_release_secret(&b);
			cli_errorf(
			        "--secret %s: not set in cordon's environment (or use NAME:FILE)",
			        name);
			return -1;
		}
		r = cd_buf_puts(&b, v);
	}
	if (r < 0 || memchr(b.data, '\0', b.len)) {
		cd_buf_release_secret(&b);
		cli_errorf("--secret %.*s: value too long or holds a NUL byte", (int)nl, arg);
		return -1;
	}
	a->secrets[a->nsecrets++] = cd_buf_take(&b);
	return 0;
}

static int parse_size_opt(const char *name, const char *v, uint64_t *out)
{
	if (cd_parse_size(v, 0, out) < 0) {
		cli_errorf("%s '%s': expected a size like 512M or 2G", name, v);
		return -1;
	}
	return 0;
}

/* The options that shape the sandbox: binds, environment, secrets, the
 * profile, the network, caches and the proposal mode.  0, -1 (reported),
 * or 1: not one of these. */
static int opt_sandbox(struct run_args *a, int c)
{
	switch (c) {
	case OPT_RO:
	case OPT_RW:
		if (launch_add_bind(a, optarg, c == OPT_RW) < 0)
			return -1;
		break;
	case OPT_SCRATCH:
		a->scratch = optarg;
		break;
	case OPT_ROOTFS:
		a->rootfs = optarg;
		break;
	case OPT_IMAGE:
		a->image = optarg;
		break;
	case OPT_ENV:
		if (launch_add_env(a, optarg) < 0)
			return -1;
		break;
	case OPT_SECRET:
		if (add_secret(a, optarg) < 0)
			return -1;
		break;
	case OPT_CWD:
		a->cwd = optarg;
		break;
	case OPT_PROPOSE:
		a->propose = 1;
		break;
	case OPT_ALLOW_DEGRADED:
		a->allow_degraded = 1;
		break;
	case OPT_PROFILE:
		a->profile = optarg;
		break;
	case OPT_SKIP_SOCKET_SCAN:
		a->skip_socket_scan = 1;
		break;
	case OPT_ALLOW_HOME:
		a->allow_home = 1;
		break;
	case OPT_ALLOW_HOST:
		if (a->nallow >= MAX_OPT_ITEMS) {
			cli_errorf("too many --allow-host options (max %d)", MAX_OPT_ITEMS);
			return -1;
		}
		a->allow_hosts[a->nallow++] = optarg;
		break;
	case OPT_CACHE: {
		const char *colon = strchr(optarg, ':');

		if (!colon || colon[1] != '/') {
			cli_errorf("--cache '%s': expected NAME:/DEST", optarg);
			return -1;
		}
		if (a->ncaches >= MAX_CACHES) {
			cli_errorf("too many --cache options (max %d)", MAX_CACHES);
			return -1;
		}
		a->caches[a->ncaches++] = optarg;
		break;
	}
	case OPT_INSTALL:
		if (a->install || !optarg[0]) {
			cli_errorf("--install: one non-empty install command");
			return -1;
		}
		a->install = optarg;
		break;
	case OPT_NET:
		if (strcmp(optarg, "none") != 0) {
			cli_errorf("--net '%s': only 'none' (the default); egress is "
			           "--allow-host HOST[:PORT]",
			           optarg);
			return -1;
		}
		a->net_none = 1;
		break;
	default:
		return 1;
	}
	return 0;
}

/* The limits: sizes, durations and counts, each checked against its
 * range.  0, -1 (reported), or 1: not one of these. */
static int opt_limits(struct run_args *a, int c)
{
	uint64_t v;

	switch (c) {
	case OPT_SCRATCH_SIZE:
		a->set |= SET_SCRATCH;
		if (parse_size_opt("--scratch-size", optarg, &a->limits.scratch_size) < 0)
			return -1;
		break;
	case OPT_TIMEOUT:
		a->set |= SET_TIMEOUT;
		if (strcmp(optarg, "0") == 0) {
			a->limits.timeout_ms = 0;
		} else if (cd_parse_duration_ms(optarg, &a->limits.timeout_ms) < 0) {
			cli_errorf("--timeout '%s': expected a duration like 30s or 5m", optarg);
			return -1;
		}
		break;
	case OPT_CPU_TIME:
		a->set |= SET_CPU;
		if (cd_parse_duration_ms(optarg, &a->limits.cpu_ms) < 0) {
			cli_errorf("--cpu-time '%s': expected a duration like 10s", optarg);
			return -1;
		}
		break;
	case OPT_OUTPUT_LIMIT:
		a->set |= SET_OUTPUT;
		if (parse_size_opt("--output-limit", optarg, &a->limits.output_limit) < 0)
			return -1;
		break;
	case OPT_MEMORY:
		a->set |= SET_MEMORY;
		if (parse_size_opt("--memory", optarg, &a->limits.memory) < 0)
			return -1;
		break;
	case OPT_PIDS:
		a->set |= SET_PIDS;
		if (cd_parse_u64(optarg, strlen(optarg), 1000000, &v) < 0 || v == 0) {
			cli_errorf("--pids '%s': expected a number from 1 to 1000000", optarg);
			return -1;
		}
		a->limits.pids = v;
		break;
	case OPT_PROPOSE_SIZE:
		a->propose_caps = 1;
		a->set |= SET_PROPOSE_SIZE;
		if (parse_size_opt("--propose-size", optarg, &a->limits.propose_size) < 0)
			return -1;
		if (a->limits.propose_size > CD_PROPOSE_SIZE_MAX) {
			cli_errorf("--propose-size '%s': at most %lluG", optarg,
			           (unsigned long long)(CD_PROPOSE_SIZE_MAX / CD_GIB));
			return -1;
		}
		break;
	case OPT_PROPOSE_INODES:
		a->propose_caps = 1;
		if (cd_parse_u64(optarg, strlen(optarg), CD_PROPOSE_INODES_MAX, &v) < 0 || v < 16) {
			cli_errorf("--propose-inodes '%s': expected a number from 16 to %d", optarg,
			           CD_PROPOSE_INODES_MAX);
			return -1;
		}
		a->limits.propose_inodes = v;
		break;
	case OPT_RECORD_LIMIT:
		if (!a->mode->tty) {
			cli_errorf("--record-limit is for cordon shell (run records hashes)");
			return -1;
		}
		if (parse_size_opt("--record-limit", optarg, &a->record_limit) < 0)
			return -1;
		if (a->record_limit > CD_SESSION_MAX) {
			cli_errorf("--record-limit: at most %lluM",
			           (unsigned long long)(CD_SESSION_MAX >> 20));
			return -1;
		}
		break;
	default:
		return 1;
	}
	return 0;
}

/* The run's own options: help, output, the decision's names, approval,
 * audit and state.  0, -1 (reported), or 1: not one of these. */
static int opt_run(struct run_args *a, int c)
{
	uint64_t v;

	switch (c) {
	case 'h':
		a->mode->usage(stdout);
		exit(CD_EXIT_OK);
	case OPT_JSON:
		a->json = 1;
		break;
	case OPT_JSON_FD:
		if (cd_parse_u64(optarg, strlen(optarg), 1 << 20, &v) < 0 ||
		    fcntl((int)v, F_GETFD) < 0) {
			cli_errorf("--json-fd '%s': not an open file descriptor", optarg);
			return -1;
		}
		a->json = 1;
		a->json_fd = (int)v;
		break;
	case OPT_DRY_RUN:
		a->dry_run = 1;
		break;
	case OPT_DIRECT_STDIO:
		a->direct_stdio = 1;
		break;
	case OPT_APPROVAL_TIMEOUT:
		if (cd_parse_duration_ms(optarg, &a->approval_timeout_ms) < 0 ||
		    a->approval_timeout_ms < 1000 || a->approval_timeout_ms > 86400000) {
			cli_errorf("--approval-timeout '%s': expected a duration from 1s "
			           "to 24h",
			           optarg);
			return -1;
		}
		break;
	case OPT_APPROVE_INTERACTIVE:
		a->approve_interactive = 1;
		break;
	case OPT_POLICY:
		a->policy = optarg;
		break;
	case OPT_AGENT:
		a->agent = optarg;
		break;
	case OPT_TASK:
		a->task = optarg;
		break;
	case OPT_TOOL:
		a->tool = optarg;
		break;
	case OPT_AUDIT:
		a->audit = optarg;
		break;
	case OPT_STATE:
		if (!optarg[0]) {
			cli_errorf("--state: an empty path");
			return -1;
		}
		cli_state_set_default(optarg);
		break;
	default:
		return 1;
	}
	return 0;
}

int launch_parse_args(int argc, char **argv, struct run_args *a)
{
	int c, r;

	cd_limits_default(&a->limits);
	a->json_fd = -1;
	a->record_limit = CD_SESSION_DEFAULT;
	optind = 1;
	opterr = 0;
	for (;;) {
		int start = optind;

		c = cli_getopt(argc, argv, "+h", options, CD_EXIT_CORDON);
		if (c == -1)
			break;
		if (a->nspans < CD_ARRAY_SIZE(a->spans)) {
			a->spans[a->nspans].code = c;
			a->spans[a->nspans].start = start;
			a->spans[a->nspans++].end = optind;
		} else {
			cli_errorf("too many options");
			return -1;
		}
		r = opt_sandbox(a, c);
		if (r > 0)
			r = opt_limits(a, c);
		if (r > 0)
			r = opt_run(a, c);
		if (r < 0)
			return -1;
		if (r > 0) {
			if (optopt)
				cli_errorf("unknown or incomplete option '-%c' (see --help)",
				           optopt);
			else
				cli_errorf("unknown or incomplete option '%s' (see --help)",
				           argv[optind - 1]);
			return -1;
		}
	}
	if (optind >= argc && !a->mode->tty) {
		cli_errorf("no command given (cordon run [OPTIONS] -- CMD [ARG...])");
		return -1;
	}
	return optind;
}

void cli_launch_options_help(FILE *f)
{
	fputs("Filesystem:\n"
	      "  --cwd DIR             expose DIR (read-only) and run there (default: .)\n"
	      "  --ro PATH[:DEST]      bind PATH read-only at DEST (default: same path)\n"
	      "  --rw PATH[:DEST]      bind PATH writable at DEST (run by root: idmapped, so\n"
	      "                        files land owned by root; refused where the filesystem\n"
	      "                        cannot be idmapped; see Host identity in cordon(1))\n"
	      "  --rootfs DIR          an unpacked image as the system: DIR's entries read-only\n"
	      "                        in place of the host's /usr, /bin, /lib and /etc,\n"
	      "                        with cordon's /proc, /dev, scratch and the working\n"
	      "                        directory on top\n"
	      "  --image FILE          an OCI image layout (directory or tarball) or a\n"
	      "                        docker-archive, unpacked once into the state\n"
	      "                        directory's images/ (digests checked, setuid bits,\n"
	      "                        xattrs and devices left out), run as --rootfs\n"
	      "  --scratch DIR         use host DIR as the scratch (kept after the run)\n"
	      "  --scratch-size SIZE   size of the scratch tmpfs (default 256M, at most\n"
	      "                        --memory)\n"
	      "  --propose             the working directory is writable through an overlay:\n"
	      "                        the real tree stays untouched, the writes become a\n"
	      "                        proposal ('cordon proposals show|apply|reject ID')\n"
	      "  --propose-size SIZE   what the run may write through the overlay (default\n"
	      "                        256M, at most 4G); past it writes fail with ENOSPC\n"
	      "  --propose-inodes N    files, directories and deletions the overlay's layer\n"
	      "                        may hold (default 65536; 16 to 200000)\n"
	      "  --skip-socket-scan    do not cover host Unix sockets in bound directories\n"
	      "                        (covered by default: connect() ignores read-only);\n"
	      "                        credentials and git control paths are covered anyway\n"
	      "  --allow-home          allow a working directory or bind that is or contains\n"
	      "                        a home directory (refused by default)\n"
	      "Environment:\n"
	      "  --env NAME[=VALUE]    pass NAME (from cordon's environment, or VALUE)\n"
	      "  --secret NAME[:FILE]  pass secret NAME from cordon's environment or FILE;\n"
	      "                        never in argv, never printed or logged\n"
	      "Network:\n"
	      "  --net none            no network at all (the default): loopback only\n"
	      "  --allow-host HOST[:PORT]  reach HOST (exact, or *.domain: subdomains only)\n"
	      "                        through cordon's egress proxy on 127.0.0.1:3128\n"
	      "                        inside (HTTP_PROXY etc. set); repeatable; every\n"
	      "                        attempt is logged; nothing else has a route\n"
	      "Limits:\n"
	      "  --timeout DURATION    wall clock for the whole tree (default 60s; 0 = none)\n"
	      "  --output-limit SIZE   per stream (default 16M); the run is killed past it\n"
	      "  --memory SIZE         memory of the tree (default 512M; cgroup, else an\n"
	      "                        approximate rlimit: memfds, System V IPC refused)\n"
	      "  --pids N              processes and threads (default 256)\n"
	      "  --cpu-time DURATION   CPU time per process (RLIMIT_CPU; default none)\n"
	      "Profile:\n"
	      "  --profile NAME|FILE   strict (default) or workspace-write (the working\n"
	      "                        directory writable; .git/hooks, .git/config, CI,\n"
	      "                        editor and shell rc files kept read-only); or a YAML\n"
	      "                        file (a path with '/') of settings: memory, pids,\n"
	      "                        timeout, cpu_time, output_limit, scratch_size, net,\n"
	      "                        ro, rw, env, workspace, allow_hosts (egress)\n"
	      "Policy and audit:\n"
	      "  --policy FILE         decide the run with the grant matrix (action\n"
	      "                        execute, argv as scope); the grant's profile decides\n"
	      "                        the sandbox; needs --agent\n"
	      "  --agent ID, --task ID, --tool ID (default: shell)\n"
	      "  --approval-timeout DURATION  how long a call whose grant needs approval\n"
	      "                        waits for 'cordon approvals approve' (default 10m);\n"
	      "                        no answer means deny\n"
	      "  --approve-interactive ask on this terminal too (only when the terminal\n"
	      "                        is a person's, never the agent's)\n"
	      "  --audit PATH          the audit log (default $CORDON_AUDIT, else\n"
	      "                        $XDG_STATE_HOME/cordon/audit.db); no log, no run\n"
	      "  --state PATH          the state database: temporary grants, approvals,\n"
	      "                        proposals, caches beside it (default $CORDON_STATE,\n"
	      "                        else $XDG_STATE_HOME/cordon/state.db)\n"
	      "                        Either may be a postgresql:// URI: a store shared\n"
	      "                        by many hosts (local files stay in the state dir)\n"
	      "Walls:\n"
	      "  --allow-degraded      run even when the kernel lacks Landlock or seccomp;\n"
	      "                        the result records which walls were up\n"
	      "Output:\n"
	      "  --json                print a JSON result record on stdout after the output\n"
	      "  --json-fd N           write the JSON result record to fd N instead\n"
	      "  --dry-run             print the plan as JSON and run nothing\n"
	      "  --direct-stdio        hand cordon's stdin and stdout (both must be pipes)\n"
	      "                        to the command instead of relaying them (cordon mcp\n"
	      "                        uses it): no hash, byte count or output limit for\n"
	      "                        them here, the reader must cap; stdout stays relayed\n"
	      "                        when the grant masks\n"
	      "  -h, --help            this text\n",
	      f);
	fputs("Package caches:\n"
	      "  --cache NAME:DEST     the agent's cache NAME (kept under cordon's state\n"
	      "                        directory, never shared between agents) at DEST,\n"
	      "                        writable; repeatable; see cordon cache list|clear\n"
	      "  --install CMD         first run CMD (/bin/sh -c) as its own run: the\n"
	      "                        caches writable, --allow-host as its egress (with\n"
	      "                        --policy: decided as tool 'install'); then the\n"
	      "                        command with the caches read-only and no network;\n"
	      "                        a failed install step means the command does not run\n",
	      f);
	fputs("Session (cordon shell):\n"
	      "  --record-limit SIZE   cap of the session recording (default 1M; what is\n"
	      "                        past it is counted, not kept)\n",
	      f);
}
