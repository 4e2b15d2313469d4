/* cli-launch.c — the one launcher behind `cordon run` and `cordon shell`.
 *
 * Parses the run options into plan options, asks the gate, builds the plan
 * (src/lib/plan.c), runs it (src/lib/sandbox.c), records and reports.
 * `cordon shell` differs only in the plan's tty flag (a pty of the
 * sandbox's own as the command's stdio), the person's terminal in raw mode
 * around the run, and the session recording (cli-session.c).  Exit status: the command's own, or
 * 128+signal; 124 timeout; 125 cordon refused or failed; 126 not
 * executable; 127 not found.  Secrets given with --secret are read here
 * and placed only in the command's environment: never in argv, the plan
 * description or any output.
 */
#include "cli.h"
#include "cli-launch.h"

#include "util/bounds.h"
#include "util/buf.h"
#include "cli-audit.h"
#include "cli-cache.h"
#include "egress/egress-proxy.h"
#include "util/fs.h"
#include "gate/gate.h"
#include "sandbox/idmap.h"
#include "sandbox/idslot.h"
#include "mask/logmask.h"
#include "store/state.h"
#include "util/num.h"
#include "sandbox/plan.h"
#include "policy/policy-yaml.h"
#include "sandbox/profile.h"
#include "proposal/proposal.h"
#include "sandbox/quotas.h"
#include "sandbox/sandbox.h"
#include "audit/session.h"
#include "util/util.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <jansson.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/vfs.h>
#include <sys/wait.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#define MAX_OPT_ITEMS 128
#define MAX_CACHES    16

enum {
	OPT_RO = 256,
	OPT_RW,
	OPT_SCRATCH,
	OPT_SCRATCH_SIZE,
	OPT_ENV,
	OPT_SECRET,
	OPT_CWD,
	OPT_TIMEOUT,
	OPT_OUTPUT_LIMIT,
	OPT_MEMORY,
	OPT_PIDS,
	OPT_CPU_TIME,
	OPT_JSON,
	OPT_JSON_FD,
	OPT_DRY_RUN,
	OPT_ALLOW_DEGRADED,
	OPT_PROFILE,
	OPT_POLICY,
	OPT_AGENT,
	OPT_TASK,
	OPT_TOOL,
	OPT_AUDIT,
	OPT_STATE,
	OPT_SKIP_SOCKET_SCAN,
	OPT_ALLOW_HOME,
	OPT_ALLOW_HOST,
	OPT_NET,
	OPT_APPROVAL_TIMEOUT,
	OPT_APPROVE_INTERACTIVE,
	OPT_PROPOSE,
	OPT_PROPOSE_SIZE,
	OPT_PROPOSE_INODES,
	OPT_RECORD_LIMIT,
	OPT_CACHE,
	OPT_INSTALL,
	OPT_DIRECT_STDIO,
};

static const struct option options[] = {
	{ "ro", required_argument, NULL, OPT_RO },
	{ "rw", required_argument, NULL, OPT_RW },
	{ "scratch", required_argument, NULL, OPT_SCRATCH },
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

struct run_args {
	struct cd_plan_bind binds[MAX_OPT_ITEMS];
	size_t nbinds;
	char *env[MAX_OPT_ITEMS];
	size_t nenv;
	char *secrets[MAX_OPT_ITEMS];
	size_t nsecrets;
	const char *cwd, *scratch;
	struct cd_limits limits;
	int json, json_fd, dry_run, allow_degraded, skip_socket_scan, allow_home;
	int direct_stdio; /* stdin and stdout handed to the command, not relayed */
	const char *allow_hosts[MAX_OPT_ITEMS];
	size_t nallow;
	int net_none;
	uint64_t approval_timeout_ms;
	int approve_interactive;
	int propose, propose_caps; /* --propose; --propose-size/-inodes given */
	const char *profile, *policy, *agent, *task, *tool, *audit;
	unsigned set;          /* SET_* limits given as options: they win over the profile */
	uint64_t record_limit; /* shell: cap of the session recording */
	const struct cli_launch_mode *mode;
	const char *caches[MAX_CACHES]; /* --cache NAME:DEST, as given */
	size_t ncaches;
	const char *install; /* --install CMD */
	/* Where each option was in argv, to hand the install step the same
	 * options minus the ones that are the command's alone. */
	struct {
		int code, start, end;
	} spans[4 * MAX_OPT_ITEMS];
	size_t nspans;
};

enum {
	SET_SCRATCH = 1u << 0,
	SET_TIMEOUT = 1u << 1,
	SET_CPU = 1u << 2,
	SET_OUTPUT = 1u << 3,
	SET_MEMORY = 1u << 4,
	SET_PIDS = 1u << 5,
	SET_PROPOSE_SIZE = 1u << 6,
};

static void launch_args_release(struct run_args *a)
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
static int launch_add_bind(struct run_args *a, const char *arg, int rw)
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

static int launch_add_env(struct run_args *a, const char *arg)
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

static int launch_parse_args(int argc, char **argv, struct run_args *a)
{
	uint64_t v;
	int c;

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
		switch (c) {
		case 'h':
			a->mode->usage(stdout);
			exit(CD_EXIT_OK);
		case OPT_RO:
		case OPT_RW:
			if (launch_add_bind(a, optarg, c == OPT_RW) < 0)
				return -1;
			break;
		case OPT_SCRATCH:
			a->scratch = optarg;
			break;
		case OPT_SCRATCH_SIZE:
			a->set |= SET_SCRATCH;
			if (parse_size_opt("--scratch-size", optarg, &a->limits.scratch_size) < 0)
				return -1;
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
		case OPT_TIMEOUT:
			a->set |= SET_TIMEOUT;
			if (strcmp(optarg, "0") == 0) {
				a->limits.timeout_ms = 0;
			} else if (cd_parse_duration_ms(optarg, &a->limits.timeout_ms) < 0) {
				cli_errorf("--timeout '%s': expected a duration like 30s or 5m",
				           optarg);
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
				cli_errorf("--pids '%s': expected a number from 1 to 1000000",
				           optarg);
				return -1;
			}
			a->limits.pids = v;
			break;
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
		case OPT_PROPOSE:
			a->propose = 1;
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
			if (cd_parse_u64(optarg, strlen(optarg), CD_PROPOSE_INODES_MAX, &v) < 0 ||
			    v < 16) {
				cli_errorf("--propose-inodes '%s': expected a number from 16 to %d",
				           optarg, CD_PROPOSE_INODES_MAX);
				return -1;
			}
			a->limits.propose_inodes = v;
			break;
		case OPT_APPROVE_INTERACTIVE:
			a->approve_interactive = 1;
			break;
		case OPT_ALLOW_DEGRADED:
			a->allow_degraded = 1;
			break;
		case OPT_PROFILE:
			a->profile = optarg;
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
		case OPT_RECORD_LIMIT:
			if (!a->mode->tty) {
				cli_errorf(
				        "--record-limit is for cordon shell (run records hashes)");
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

/* A tmpfs is memory: the scratch and the proposal layer never exceed the
 * memory limit (without a cgroup nothing else would count them).  A size
 * given as an option above it is refused; a profile's or the default is
 * lowered to it. */
static int bound_tmpfs(struct run_args *a)
{
	static const struct {
		const char *opt;
		unsigned set;
		size_t off;
	} t[] = {
		{ "--scratch-size", SET_SCRATCH, offsetof(struct cd_limits, scratch_size) },
		{ "--propose-size", SET_PROPOSE_SIZE, offsetof(struct cd_limits, propose_size) },
	};
	char want[32], mem[32];
	size_t i;

	for (i = 0; a->limits.memory && i < CD_ARRAY_SIZE(t); i++) {
		uint64_t *v = (uint64_t *)((char *)&a->limits + t[i].off);

		if (*v <= a->limits.memory)
			continue;
		if (a->set & t[i].set) {
			cli_size_human(*v, want, sizeof want);
			cli_size_human(a->limits.memory, mem, sizeof mem);
			cli_errorf("%s %s is more than --memory %s: a tmpfs is held in memory "
			           "(lower it, or raise --memory)",
			           t[i].opt, want, mem);
			return -1;
		}
		*v = a->limits.memory;
	}
	return 0;
}

/* The profile is the base; limits given as options win; its binds and env
 * are added to the options' own. */
static int launch_apply_profile(struct run_args *a, struct cd_sandbox_profile *prof,
                                const struct cd_policy *policy, const char *granted,
                                struct cd_arena *arena)
{
	struct cd_err err = { 0, "" };
	struct cd_limits mine = a->limits;
	size_t i;

	if (policy) {
		/* The grant decides the sandbox: options may not widen it. */
		const struct cd_profile_setting *set = NULL;
		size_t nset = 0;
		int n;

		/* --cache stays allowed: a cache is cordon's, per agent, never
		 * another agent's (issue 10: installs under a policy's install
		 * profile fill it). */
		if (a->profile || a->nbinds || a->scratch) {
			cli_errorf("with --policy the grant's profile decides the sandbox: "
			           "--profile, --ro, --rw and --scratch are refused");
			return -1;
		}
		if (cd_profile_builtin("strict", prof, &err) < 0)
			return -1;
		if (granted) {
			if (cd_policy_profile(policy, granted, &set, &nset) < 0 &&
			    cd_profile_builtin(granted, prof, &err) < 0) {
				cli_errorf("policy profile '%s' does not exist", granted);
				return -1;
			}
			if (cd_profile_apply(prof, set, nset, &err) < 0) {
				cli_errorf("policy profile '%s': %s", granted, err.msg);
				return -1;
			}
			n = snprintf(prof->name, sizeof prof->name, "%s", granted);
			if (n < 0 || (size_t)n >= sizeof prof->name)
				return -1;
		}
		/* Limits given as options may only lower the profile's. */
		if (((a->set & SET_MEMORY) && mine.memory > prof->limits.memory) ||
		    ((a->set & SET_PIDS) && mine.pids > prof->limits.pids) ||
		    ((a->set & SET_TIMEOUT) &&
		     (mine.timeout_ms == 0 || mine.timeout_ms > prof->limits.timeout_ms)) ||
		    ((a->set & SET_OUTPUT) && mine.output_limit > prof->limits.output_limit) ||
		    ((a->set & SET_SCRATCH) && mine.scratch_size > prof->limits.scratch_size)) {
			cli_errorf("with --policy, limit options may only lower the granted "
			           "profile's limits");
			return -1;
		}
	} else if (a->profile && strchr(a->profile, '/')) {
		/* A path: a profile file (a bare name is a built-in profile). */
		if (cd_profile_load_file(a->profile, arena, prof, &err) < 0) {
			cli_errorf("--profile: %s", err.msg);
			return -1;
		}
	} else if (cd_profile_builtin(a->profile ? a->profile : "strict", prof, &err) < 0) {
		cli_errorf("--profile: %s", err.msg);
		return -1;
	}
	a->limits = prof->limits;
	/* No profile sets the proposal layer's caps: the options' (or the
	 * defaults) stand. */
	a->limits.propose_size = mine.propose_size;
	a->limits.propose_inodes = mine.propose_inodes;
	if (a->set & SET_SCRATCH)
		a->limits.scratch_size = mine.scratch_size;
	if (a->set & SET_TIMEOUT)
		a->limits.timeout_ms = mine.timeout_ms;
	if (a->set & SET_CPU)
		a->limits.cpu_ms = mine.cpu_ms;
	if (a->set & SET_OUTPUT)
		a->limits.output_limit = mine.output_limit;
	if (a->set & SET_MEMORY)
		a->limits.memory = mine.memory;
	if (a->set & SET_PIDS)
		a->limits.pids = mine.pids;
	if (bound_tmpfs(a) < 0)
		return -1;
	for (i = 0; i < prof->nbinds; i++) {
		if (launch_add_bind(a, prof->binds[i], prof->bind_rw[i]) < 0)
			return -1;
	}
	for (i = 0; i < prof->nenv; i++) {
		if (launch_add_env(a, prof->env[i]) < 0)
			return -1;
	}
	return 0;
}

/* workspace-write keeps what exists of the protected paths read-only, but
 * a path that did not exist can be created by the command.  Note which are
 * missing before the run and report any that appear: they would run later
 * on the host, so the operator must look at them. */
static unsigned launch_missing_protected(const char *cwd)
{
	char path[CD_PATH_MAX];
	struct stat st;
	unsigned mask = 0;
	size_t i;

	for (i = 0; i < 32 && cd_protected_workspace_paths[i]; i++) {
		int n = snprintf(path, sizeof path, "%s/%s", cwd, cd_protected_workspace_paths[i]);
		if (n > 0 && (size_t)n < sizeof path && lstat(path, &st) < 0 && errno == ENOENT)
			mask |= 1u << i;
	}
	return mask;
}

static int json_has(json_t *a, const char *s)
{
	size_t i;
	json_t *v;

	json_array_foreach(a, i, v)
	{
		if (!strcmp(json_string_value(v), s))
			return 1;
	}
	return 0;
}

/* rel, and why when it is not simply new (cd_plan_planted: after its NUL);
 * an absolute path lies in a --rw directory outside the working one */
static void planted_one(json_t *a, const char *rel, const char *why)
{
	const char *where = rel[0] == '/' ? "a --rw directory" : "the workspace";

	if (!a || json_has(a, rel))
		return;
	if (why && *why)
		cli_warnf("the command left '%s' in %s: %s; git on the host could run "
		          "what it planted there: review it",
		          rel, where, why);
	else
		cli_warnf("the command created '%s' in %s: it could run later on the "
		          "host; review or remove it",
		          rel, where);
	json_array_append_new(a, json_string(rel));
}

/* The protected paths at the top, and the git control paths and host-run
 * files at any depth of every writable tree (cd_plan_planted), that the
 * run created. */
static json_t *launch_planted_paths(const struct cd_plan *plan, unsigned before)
{
	unsigned after = launch_missing_protected(plan->cwd);
	json_t *a = json_array();
	struct cd_err err;
	char **v = NULL;
	size_t i, n = 0;

	for (i = 0; a && i < 32 && cd_protected_workspace_paths[i]; i++) {
		if ((before & (1u << i)) && !(after & (1u << i)))
			planted_one(a, cd_protected_workspace_paths[i], NULL);
	}
	if (cd_plan_planted(plan, &v, &n, &err) < 0)
		cli_warnf("could not check the workspace for planted git or host-run files: %s",
		          err.msg);
	for (i = 0; i < n; i++) {
		planted_one(a, v[i], v[i] + strlen(v[i]) + 1);
		free(v[i]);
	}
	free(v);
	return a;
}

/* What the plan covered or kept read-only inside bound trees, and why. */
static json_t *launch_covered_paths(const struct cd_plan *p)
{
	json_t *a = json_array();
	size_t i;

	for (i = 0; a && i < p->nmounts; i++) {
		const struct cd_mount *m = &p->mounts[i];
		json_t *e;

		if (!m->why || m->kind == CD_MNT_BIND || !(e = json_object()))
			continue;
		json_object_set_new(e, "path", json_string(m->dest));
		json_object_set_new(e, "reason", json_string(m->why));
		json_array_append_new(a, e);
	}
	return a;
}

static json_t *walls_json(unsigned w)
{
	static const struct {
		unsigned bit;
		const char *name;
	} names[] = {
		{ CD_WALL_USERNS, "userns" },     { CD_WALL_MOUNTNS, "mountns" },
		{ CD_WALL_PIDNS, "pidns" },       { CD_WALL_NETNS, "netns" },
		{ CD_WALL_IPCNS, "ipcns" },       { CD_WALL_UTSNS, "utsns" },
		{ CD_WALL_CGROUPNS, "cgroupns" }, { CD_WALL_NNP, "no_new_privs" },
		{ CD_WALL_CAPS, "caps_dropped" }, { CD_WALL_SECCOMP, "seccomp" },
		{ CD_WALL_LANDLOCK, "landlock" },
	};
	json_t *o = json_object();
	size_t i;

	for (i = 0; o && i < CD_ARRAY_SIZE(names); i++)
		json_object_set_new(o, names[i].name, json_boolean(w & names[i].bit));
	return o;
}

struct layer;
static json_t *launch_layer_json(const struct layer *l);
static int launch_is_pipe(int fd)
{
	struct stat st;

	return fstat(fd, &st) == 0 && S_ISFIFO(st.st_mode);
}

static int same_file(int a, int b)
{
	struct stat x, y;

	return fstat(a, &x) == 0 && fstat(b, &y) == 0 && x.st_dev == y.st_dev &&
	       x.st_ino == y.st_ino;
}

static int launch_emit_result(const struct run_args *a, const struct cd_plan *p,
                              const struct cd_result *r, json_t *planted, const struct layer *layer)
{
	json_t *o = json_object();
	char *s;
	int fd = a->json_fd >= 0 ? a->json_fd : STDOUT_FILENO, rc;

	if (!o)
		return -ENOMEM;
	json_object_set_new(o, "run_id", json_string(r->run_id));
	json_object_set_new(o, "reason", json_string(cd_reason_name(r->reason)));
	json_object_set_new(o, "exit_code", json_integer(r->exit_code));
	json_object_set_new(o, "signal", r->signal ? json_integer(r->signal) : json_null());
	json_object_set_new(o, "error", r->error[0] ? json_string(r->error) : json_null());
	json_object_set_new(o, "wall_ms", json_integer((json_int_t)r->wall_ms));
	json_object_set_new(o, "cpu_ms", json_integer((json_int_t)r->cpu_ms));
	json_object_set_new(o, "max_rss_kb", json_integer((json_int_t)r->max_rss_kb));
	json_object_set_new(o, "argv_sha256", json_string(r->argv_sha256));
	/* null: the stream was handed to the command directly (--direct-stdio). */
	json_object_set_new(o, "stdin_sha256",
	                    r->stdin_direct ? json_null() : json_string(r->stdin_sha256));
	json_object_set_new(o, "stdout_sha256",
	                    r->stdout_direct ? json_null() : json_string(r->stdout_sha256));
	json_object_set_new(o, "stderr_sha256", json_string(r->stderr_sha256));
	json_object_set_new(o, "stdin_bytes", json_integer((json_int_t)r->stdin_bytes));
	json_object_set_new(o, "stdout_bytes", json_integer((json_int_t)r->stdout_bytes));
	json_object_set_new(o, "stderr_bytes", json_integer((json_int_t)r->stderr_bytes));
	json_object_set_new(o, "profile", json_string(p->profile));
	/* Who the sandbox was on the host (for root: the run's own id, from
	 * slot id_slot of root's range). */
	json_object_set_new(o, "host_uid", json_integer((json_int_t)p->host_uid));
	json_object_set_new(o, "host_gid", json_integer((json_int_t)p->host_gid));
	json_object_set_new(o, "id_slot", p->idmap ? json_integer(p->id_slot) : json_null());
	if (p->idmap) {
		json_object_set_new(o, "idmapped_binds", json_integer(r->idmapped_binds));
		json_object_set_new(o, "plain_binds", json_integer(r->plain_binds));
	}
	if (planted)
		json_object_set(o, "planted_paths", planted);
	json_object_set_new(o, "covered_paths", launch_covered_paths(p));
	if (layer)
		json_object_set_new(o, "proposal_layer", launch_layer_json(layer));
	json_object_set_new(o, "walls", walls_json(r->walls));
	json_object_set_new(o, "landlock_abi", json_integer(r->landlock_abi));
	{
		json_t *denied = NULL, *lim = json_object();

		if (cd_seccomp_stats_json(&r->denied, &denied) == 0)
			json_object_set_new(o, "denied_syscalls", denied);
		if (lim) {
			json_object_set_new(lim, "memory",
			                    json_integer((json_int_t)p->limits.memory));
			json_object_set_new(lim, "memory_by",
			                    json_string(r->mech_memory ? r->mech_memory : "none"));
			json_object_set_new(lim, "memory_cap",
			                    json_string(cd_quotas_memory_cap(r->mech_memory)));
			json_object_set_new(lim, "pids", json_integer((json_int_t)p->limits.pids));
			json_object_set_new(lim, "pids_by",
			                    json_string(r->mech_pids ? r->mech_pids : "none"));
			json_object_set_new(lim, "cpu_ms",
			                    json_integer((json_int_t)p->limits.cpu_ms));
			json_object_set_new(lim, "cpu_by",
			                    json_string(r->mech_cpu ? r->mech_cpu : "none"));
			json_object_set_new(lim, "timeout_ms",
			                    json_integer((json_int_t)p->limits.timeout_ms));
			json_object_set_new(lim, "output_limit",
			                    json_integer((json_int_t)p->limits.output_limit));
			json_object_set_new(lim, "scratch_size",
			                    json_integer((json_int_t)p->limits.scratch_size));
			json_object_set_new(lim, "note", json_string(r->limits_note));
			cd_quotas_json(&p->limits, lim);
			json_object_set_new(lim, "peak_memory",
			                    json_integer((json_int_t)r->peak_memory));
			json_object_set_new(o, "limits", lim);
		}
	}
	s = json_dumps(o, JSON_COMPACT | JSON_ENSURE_ASCII);
	json_decref(o);
	if (!s)
		return -ENOMEM;
	/* The record is a line of its own, always the last: after output
	 * without a final newline on the same stream, a command could
	 * otherwise print the start of a record line for ours to complete. */
	rc = 0;
	if ((r->stdout_open_line && same_file(fd, STDOUT_FILENO)) ||
	    (r->stderr_open_line && same_file(fd, STDERR_FILENO)))
		rc = cd_write_all(fd, "\n", 1);
	if (rc == 0)
		rc = cd_write_all(fd, s, strlen(s));
	if (rc == 0)
		rc = cd_write_all(fd, "\n", 1);
	free(s);
	return rc;
}

/* Signals for the command are read from a signalfd and forwarded by the
 * sandbox; blocking them here keeps cordon alive to report. */
static int launch_signals_setup(sigset_t *old, int tty)
{
	sigset_t set;

	signal(SIGPIPE, SIG_IGN);
	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGHUP);
	sigaddset(&set, SIGQUIT);
	sigaddset(&set, SIGUSR1);
	sigaddset(&set, SIGUSR2);
	if (tty)
		sigaddset(&set, SIGWINCH); /* copied to the session pty, not forwarded */
	if (sigprocmask(SIG_BLOCK, &set, old) < 0)
		return -1;
	return signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
}

/* Egress: the proxy for one run, in a process of its own outside the
 * sandbox, serving the listening socket the sandbox made on its loopback.
 * It ends when the run does (the stop pipe closes) or when cordon dies. */
struct egress {
	const struct run_args *a;
	const char *run_id;
	char *log_mask; /* the run's mask rules as JSON (--log-mask), or NULL */
	int stop[2];    /* the proxy process reads [0]; cordon closes [1] at the end */
	pid_t pid;
};

/* The proxy runs as a fresh `cordon proxy` (exec, not just fork: a forked
 * copy would inherit SQLite's state for the audit database the supervisor
 * holds open), with the sandbox's listening socket as fd 3 and the stop
 * pipe as fd 4; nothing else of the run is inherited. */
__attribute__((noreturn)) static void egress_child(struct egress *e, int listen_fd, pid_t parent)
{
	const char *argv[16 + 2 * MAX_OPT_ITEMS];
	size_t n = 0, i;
	sigset_t none;
	int lfd, sfd;

	cli_die_with_parent(parent);
	lfd = fcntl(listen_fd, F_DUPFD, 10);
	sfd = fcntl(e->stop[0], F_DUPFD, 10);
	/* Out of the way first, so neither dup2 clobbers the other. */
	if (lfd < 0 || sfd < 0 || dup2(lfd, 3) < 0 || dup2(sfd, 4) < 0)
		_exit(CD_EXIT_CORDON);
	if (syscall(SYS_close_range, 5, ~0U, 0) < 0)
		_exit(CD_EXIT_CORDON);
	/* Under --direct-stdio, 0 and 1 are the command's own pipes: the
	 * proxy must never read or write them. */
	{
		int nul = open("/dev/null", O_RDWR | O_CLOEXEC);
		if (nul < 0 || dup2(nul, 0) < 0 || dup2(nul, 1) < 0)
			_exit(CD_EXIT_CORDON);
		if (nul > 1)
			close(nul);
	}
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	argv[n++] = "cordon";
	argv[n++] = "proxy";
	argv[n++] = "--listen-fd";
	argv[n++] = "3";
	argv[n++] = "--stop-fd";
	argv[n++] = "4";
	argv[n++] = "--run-id";
	argv[n++] = e->run_id;
	if (e->a->agent) {
		argv[n++] = "--agent";
		argv[n++] = e->a->agent;
	}
	if (e->a->audit) {
		argv[n++] = "--audit";
		argv[n++] = e->a->audit;
	}
	for (i = 0; i < e->a->nallow; i++) {
		argv[n++] = "--allow-host";
		argv[n++] = e->a->allow_hosts[i];
	}
	if (e->log_mask) {
		argv[n++] = "--log-mask";
		argv[n++] = e->log_mask;
	}
	argv[n] = NULL;
	execv("/proc/self/exe", (char *const *)argv);
	_exit(CD_EXIT_CORDON);
}

static void launch_egress_serve(int listen_fd, void *ctx)
{
	struct egress *e = ctx;
	pid_t self = getpid(), pid = fork();

	if (pid == 0)
		egress_child(e, listen_fd, self);
	if (pid < 0)
		cli_errorf("egress proxy: cannot fork: %s", cd_strerror(-errno));
	e->pid = pid;
	close(listen_fd);
}

static void launch_egress_stop(struct egress *e)
{
	int st;

	if (e->stop[1] >= 0) {
		close(e->stop[1]);
		e->stop[1] = -1;
	}
	if (e->stop[0] >= 0) {
		close(e->stop[0]);
		e->stop[0] = -1;
	}
	if (e->pid > 0) {
		while (waitpid(e->pid, &st, 0) < 0 && errno == EINTR)
			;
		e->pid = 0;
	}
}

static int launch_egress_policy(const struct run_args *a, struct cd_egress_policy **ret)
{
	struct cd_err err = { 0, "" };
	size_t i;

	if (cd_egress_policy_new(ret) < 0) {
		cli_errorf("out of memory");
		return -1;
	}
	for (i = 0; i < a->nallow; i++) {
		if (cd_egress_policy_add(*ret, a->allow_hosts[i], &err) < 0) {
			cli_errorf("--allow-host '%s': %s", a->allow_hosts[i], err.msg);
			return -1;
		}
	}
	return 0;
}

/* The write-ahead intent, made durable from the sandbox's before_exec hook. */
struct intent {
	const struct cd_gate *gate;
	const struct cd_run_request *rq;
	const struct cd_plan *plan;
	const struct cd_decision *dec;
	int done;
};

static int record_intent(void *ctx, char *msg, size_t msglen)
{
	struct intent *in = ctx;
	struct cd_err err = { 0, "" };
	int n;

	if (cd_gate_run_intent(in->gate, in->rq, in->plan, in->dec, &err) < 0) {
		n = snprintf(msg, msglen, "%s", err.msg);
		if (n < 0 && msglen)
			msg[0] = '\0';
		return -1;
	}
	in->done = 1;
	return 0;
}

/* A refusal before anything ran: one line on stderr, and the JSON record
 * when asked for, with reason "denied" or "setup-error". */
static int launch_refuse(const struct run_args *a, const char *run_id, enum cd_reason why,
                         const char *msg)
{
	cli_errorf("%s", msg);
	if (a->json) {
		json_t *o =
		        json_pack("{s:s,s:s,s:i,s:s}", "run_id", run_id ? run_id : "", "reason",
		                  cd_reason_name(why), "exit_code", CD_EXIT_CORDON, "error", msg);
		char *s = o ? json_dumps(o, JSON_COMPACT | JSON_ENSURE_ASCII) : NULL;
		int fd = a->json_fd >= 0 ? a->json_fd : STDOUT_FILENO;
		if (s && cd_write_all(fd, s, strlen(s)) == 0)
			cd_write_all(fd, "\n", 1);
		free(s);
		json_decref(o);
	}
	return CD_EXIT_CORDON;
}

/* cordon's own files, which the plan keeps out of the sandbox: the audit
 * log, its checkpoint file, the signing key, the state database and the
 * mask key. */
static void launch_private_paths(const struct run_args *a, char *v[5], char buf[5][CD_PATH_MAX],
                                 size_t *ret_n)
{
	size_t n = 0;

	if (cli_audit_path(a->audit, buf[n], CD_PATH_MAX) == 0) {
		v[n] = buf[n];
		n++;
		if (cli_checkpoint_path(NULL, buf[n - 1], buf[n], CD_PATH_MAX) == 0) {
			v[n] = buf[n];
			n++;
		}
	}
	if (cli_config_path("audit.key", buf[n], CD_PATH_MAX) == 0) {
		v[n] = buf[n];
		n++;
	}
	if (cli_state_path(NULL, buf[n], CD_PATH_MAX) == 0) {
		v[n] = buf[n];
		n++;
	}
	if (cli_mask_key_path(buf[n], CD_PATH_MAX) == 0) {
		v[n] = buf[n];
		n++;
	}
	*ret_n = n;
}

static int launch_load_policy(const struct run_args *a, struct cd_audit *audit, const char *run_id,
                              struct cd_policy **ret)
{
	struct cd_err err = { 0, "" }, rerr = { 0, "" };

	if (!a->policy)
		return 0;
	if (cd_policy_load_file(a->policy, ret, &err) < 0) {
		cli_errorf("policy: %s", err.msg);
		/* The refusal is on the record (and made durable: nothing
		 * durable follows it). */
		if (cd_gate_policy_load(audit, run_id, a->policy, NULL, err.msg, 0, &rerr) < 0)
			cli_errorf("%s", rerr.msg);
		return -1;
	}
	if (cd_gate_policy_load(audit, run_id, a->policy, *ret, NULL, 1, &rerr) < 0) {
		cli_errorf("%s", rerr.msg);
		return -1;
	}
	return 0;
}

/* Proposal mode: the overlay's layer (a capped tmpfs the sandbox makes,
 * handed over after the run) and the proposal's directory beside the
 * state database, which no sandbox sees, where the new content is stored. */
struct layer {
	char dir[CD_PATH_MAX], store[CD_PATH_MAX + 8];
	int fd; /* the layer tmpfs once the run has ended, or -1 */
	int made, keep, measured;
	struct cd_prop_layer use;
};

static int launch_layer_make(struct layer *l, const char *run_id)
{
	struct cd_err err = { 0, "" };
	int r = cli_proposal_layer_dir(NULL, run_id, l->dir, sizeof l->dir);

	if (r < 0) {
		cli_errorf("--propose: no place for the proposal: %s", cd_strerror(r));
		return -1;
	}
	snprintf(l->store, sizeof l->store, "%s/upper", l->dir);
	if (cd_mkdir_parents(l->dir, &err) < 0) {
		cli_errorf("--propose: %s", err.msg);
		return -1;
	}
	if (mkdir(l->dir, 0700) < 0) {
		cli_errorf("--propose: cannot create '%s': %s", l->dir, cd_strerror(-errno));
		return -1;
	}
	l->made = 1;
	return 0;
}

/* The sandbox hands the layer over once the run has ended. */
static void launch_layer_take(int fd, void *ctx)
{
	struct layer *l = ctx;

	if (l->fd >= 0)
		close(l->fd);
	l->fd = fd;
}

/* What the run left in the layer, against its caps: "full" when no block
 * (or no inode) was left, so a write past the cap failed with ENOSPC
 * inside.  (A failed write whose partial output was removed afterwards,
 * as overlayfs does with a copy-up that did not fit, leaves the layer
 * below its cap and is not seen here.) */
static void launch_layer_measure(struct layer *l, const struct cd_limits *lim)
{
	struct statfs sf;

	if (l->fd < 0 || fstatfs(l->fd, &sf) < 0)
		return;
	l->use.size = lim->propose_size;
	l->use.inodes = lim->propose_inodes;
	l->use.used = (uint64_t)(sf.f_blocks - sf.f_bfree) * (uint64_t)sf.f_bsize;
	l->use.used_inodes = (uint64_t)(sf.f_files - sf.f_ffree);
	l->use.bytes_full = sf.f_bfree == 0;
	l->use.inodes_full = sf.f_ffree == 0;
	l->measured = 1;
	if (l->use.bytes_full || l->use.inodes_full) {
		char cap[32], what[96];
		int n;

		cli_size_human(l->use.size, cap, sizeof cap);
		if (l->use.bytes_full && l->use.inodes_full)
			n = snprintf(what, sizeof what, "--propose-size %s, --propose-inodes %llu",
			             cap, (unsigned long long)l->use.inodes);
		else if (l->use.bytes_full)
			n = snprintf(what, sizeof what, "--propose-size %s", cap);
		else
			n = snprintf(what, sizeof what, "--propose-inodes %llu",
			             (unsigned long long)l->use.inodes);
		if (n < 0)
			what[0] = '\0';
		cli_warnf(
		        "--propose: the layer was full (%s): writes past it failed with 'No space "
		        "left on device' inside; the proposal holds what fit",
		        what);
	}
}

static json_t *launch_layer_json(const struct layer *l)
{
	return json_pack("{s:I,s:I,s:I,s:I,s:b,s:b}", "size", (json_int_t)l->use.size, "inodes",
	                 (json_int_t)l->use.inodes, "used", (json_int_t)l->use.used, "used_inodes",
	                 (json_int_t)l->use.used_inodes, "bytes_full", l->use.bytes_full,
	                 "inodes_full", l->use.inodes_full);
}

static void launch_layer_done(struct layer *l)
{
	if (l->fd >= 0)
		close(l->fd); /* the tmpfs goes with its last reference */
	l->fd = -1;
	if (l->made && !l->keep)
		cd_prop_remove_tree(l->dir);
	l->made = 0;
}

/* After a --propose run: the change set, its content stored, recorded.
 * 0, or -1 (reported): the proposal is lost, cordon fails. */
static int launch_make_proposal(struct layer *l, const struct cd_plan *plan,
                                const struct run_args *a, const char *run_id,
                                const struct cd_result *res, struct cd_state *state,
                                struct cd_audit *audit)
{
	struct cd_err err = { 0, "" };
	struct cd_proposal *p = NULL;
	struct cd_prop_scan_in in;
	size_t c[CD_PROP_NOPS], fl;
	struct timespec t0, t1;
	long ms;
	int upfd, r;

	if (l->fd < 0) {
		if (res->reason == CD_REASON_SETUP_ERROR)
			return 0; /* the sandbox never ran: said already */
		cli_errorf("--propose: the sandbox handed back no layer: no proposal");
		return -1;
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	upfd = openat(l->fd, "upper", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (upfd < 0) {
		cli_errorf("--propose: the layer has no upper directory: %s", cd_strerror(-errno));
		return -1;
	}
	memset(&in, 0, sizeof in);
	in.tree = plan->cwd;
	in.upper_fd = upfd;
	in.store = l->store;
	in.max_bytes = plan->limits.propose_size;
	in.run_id = run_id;
	in.agent = a->agent;
	in.task = a->task;
	in.now = (int64_t)time(NULL);
	r = cd_proposal_scan(&in, &p, &err);
	close(upfd);
	if (r < 0) {
		cli_errorf("--propose: no proposal: %s", err.msg);
		return -1;
	}
	p->layer = l->use;
	if (p->nfiles == 0) {
		cli_warnf("--propose: no file changed: no proposal");
		cd_proposal_free(p);
		return 0;
	}
	/* The record first: a proposal the log does not know is never stored
	 * (the real tree is untouched either way). */
	if (cli_proposal_record(audit, p, "proposal.created", NULL, NULL) < 0) {
		cd_proposal_free(p);
		return -1;
	}
	if (cd_proposal_save(state, p, &err) < 0) {
		cli_errorf("--propose: %s", err.msg);
		cd_proposal_free(p);
		return -1;
	}
	l->keep = 1;
	cd_proposal_counts(p, c, &fl);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	ms = (long)(t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_nsec - t0.tv_nsec) / 1000000;
	cli_warnf("proposal %s (computed in %ld ms): %zu added, %zu modified, %zu deleted, %zu "
	          "mkdir, %zu rmdir, %zu refused, %zu flagged%s; review with 'cordon proposals "
	          "show %s'",
	          p->id, ms, c[CD_PROP_ADDED], c[CD_PROP_MODIFIED], c[CD_PROP_DELETED],
	          c[CD_PROP_MKDIR], c[CD_PROP_RMDIR], c[CD_PROP_REFUSED], fl,
	          p->layer.bytes_full || p->layer.inodes_full ? " (made on a full layer)" : "",
	          p->id);
	cd_proposal_free(p);
	return 0;
}

static void launch_explain_refusal(const struct cd_decision *d, char *out, size_t cap)
{
	int n;

	if (d->verdict == CD_VERDICT_NEEDS_APPROVAL)
		n = snprintf(out, cap,
		             "needs approval (%s, grant %s): a dry run does not wait for one",
		             d->approval ? d->approval : "human", d->nids ? d->ids[0] : "?");
	else if (d->approval)
		n = snprintf(out, cap, "not approved: %s", d->reason);
	else
		n = snprintf(out, cap, "denied by policy: %s", d->reason);
	if (n < 0)
		out[0] = '\0';
}

/* --install: the install step is `cordon run` with this run's options
 * (caches writable, --allow-host as given: the install's allowlist), its
 * own decision (tool "install" under a policy) and its own records, run
 * before the command; its output goes to cordon's stderr, its stdin is
 * empty.  Returns its exit status, or -1 when it could not be started. */
static int launch_run_install(const struct run_args *a, char **argv)
{
	const char *av[4 * MAX_OPT_ITEMS * 2 + 16];
	size_t n = 0, i;
	pid_t pid, self;
	int st, j;

	av[n++] = "cordon";
	av[n++] = "run";
	for (i = 0; i < a->nspans; i++) {
		int c = a->spans[i].code;

		if (c == OPT_INSTALL || c == OPT_JSON || c == OPT_JSON_FD || c == OPT_DRY_RUN ||
		    c == OPT_DIRECT_STDIO || c == OPT_RECORD_LIMIT ||
		    c == OPT_APPROVE_INTERACTIVE || (c == OPT_TOOL && a->policy))
			continue;
		for (j = a->spans[i].start; j < a->spans[i].end && n + 8 < CD_ARRAY_SIZE(av); j++)
			av[n++] = argv[j];
	}
	if (a->policy) {
		av[n++] = "--tool";
		av[n++] = "install";
	}
	av[n++] = "--";
	av[n++] = "/bin/sh";
	av[n++] = "-c";
	av[n++] = a->install;
	av[n] = NULL;
	fflush(stdout);
	fflush(stderr);
	self = getpid();
	pid = fork();
	if (pid < 0) {
		cli_errorf("--install: cannot fork: %s", cd_strerror(-errno));
		return -1;
	}
	if (pid == 0) {
		int null;

		cli_die_with_parent(self); /* its sandbox dies with it */
		null = open("/dev/null", O_RDONLY | O_CLOEXEC);
		if (null < 0 || dup2(null, STDIN_FILENO) < 0 ||
		    dup2(STDERR_FILENO, STDOUT_FILENO) < 0)
			_exit(CD_EXIT_CORDON);
		execv("/proc/self/exe", (char *const *)av);
		_exit(CD_EXIT_CORDON);
	}
	while (waitpid(pid, &st, 0) < 0) {
		if (errno != EINTR) {
			cli_errorf("--install: lost the install step: %s", cd_strerror(-errno));
			return -1;
		}
	}
	if (WIFEXITED(st))
		return WEXITSTATUS(st);
	return 128 + (WIFSIGNALED(st) ? WTERMSIG(st) : 0);
}

/* --cache NAME:DEST: the agent's cache directory bound at DEST, writable
 * unless the run has an install step (then only that step writes). */
static int launch_add_caches(struct run_args *a)
{
	char dir[CD_PATH_MAX];
	size_t i;

	for (i = 0; i < a->ncaches; i++) {
		const char *spec = a->caches[i], *colon = strchr(spec, ':');
		struct cd_plan_bind *b;
		char *src;

		if (cli_cache_dir(a->agent, spec, (size_t)(colon - spec), dir, sizeof dir) < 0)
			return -1;
		if (a->nbinds >= MAX_OPT_ITEMS) {
			cli_errorf("too many binds (max %d)", MAX_OPT_ITEMS);
			return -1;
		}
		src = strdup(dir);
		if (!src) {
			cli_errorf("out of memory");
			return -1;
		}
		b = &a->binds[a->nbinds++];
		b->src = src;
		b->dest = colon + 1;
		b->rw = a->install == NULL;
	}
	return 0;
}

/* cordon shell without a command: the person's shell when the sandbox
 * sees it (the system directories are bound at the same paths), else
 * /bin/sh; interactive either way. */
static char *shell_argv[3];

static char **launch_default_shell(void)
{
	const char *sh = getenv("SHELL");

	if (!sh || (strncmp(sh, "/bin/", 5) != 0 && strncmp(sh, "/usr/bin/", 9) != 0) ||
	    strstr(sh, "/..") || access(sh, X_OK) < 0)
		sh = "/bin/sh";
	shell_argv[0] = (char *)sh;
	shell_argv[1] = (char *)"-i";
	shell_argv[2] = NULL;
	return shell_argv;
}

/* The person's terminal in raw mode for the session, restored on every
 * way out: after the run, and from atexit for any exit() on the way. */
static struct termios tty_saved;
static int tty_saved_fd = -1;

static void launch_tty_restore(void)
{
	if (tty_saved_fd >= 0) {
		tcsetattr(tty_saved_fd, TCSADRAIN, &tty_saved);
		tty_saved_fd = -1;
	}
}

/* A crash must not leave the person's terminal raw either: restore, then
 * die of the same signal (SA_RESETHAND: the default action on re-raise).
 * tcsetattr is async-signal-safe. */
static void tty_fatal(int sig)
{
	if (tty_saved_fd >= 0)
		tcsetattr(tty_saved_fd, TCSADRAIN, &tty_saved);
	raise(sig);
}

static int launch_tty_raw(int fd)
{
	static const int fatal[] = { SIGSEGV, SIGBUS, SIGABRT, SIGFPE, SIGILL };
	static int registered;
	struct sigaction sa;
	struct termios t;
	size_t i;

	if (!isatty(fd))
		return 0; /* driven by a pipe or a file: nothing to switch */
	if (tcgetattr(fd, &tty_saved) < 0)
		return -errno;
	if (!registered) {
		if (atexit(launch_tty_restore) != 0)
			return -ENOMEM;
		memset(&sa, 0, sizeof sa);
		sa.sa_handler = tty_fatal;
		sa.sa_flags = (int)SA_RESETHAND;
		sigemptyset(&sa.sa_mask);
		for (i = 0; i < CD_ARRAY_SIZE(fatal); i++)
			sigaction(fatal[i], &sa, NULL);
		/* Raw mode sends ^Z to the sandbox as a byte; a stop signal from
		 * elsewhere must not freeze cordon with the terminal raw. */
		signal(SIGTSTP, SIG_IGN);
		registered = 1;
	}
	t = tty_saved;
	cfmakeraw(&t);
	tty_saved_fd = fd;
	if (tcsetattr(fd, TCSADRAIN, &t) < 0) {
		int e = -errno;
		tty_saved_fd = -1;
		return e;
	}
	return 0;
}

/* The session's file next to the audit log, sessions/RUN_ID.rec, made
 * before the session starts: no recording, no session. */
static int launch_session_open(const struct run_args *a, const char *run_id, char *path, size_t cap)
{
	char *slash;
	int n, fd;

	if (cli_audit_path(a->audit, path, cap) < 0 || !(slash = strrchr(path, '/'))) {
		cli_errorf("session recording: no audit directory");
		return -1;
	}
	*slash = '\0';
	n = snprintf(slash, cap - (size_t)(slash - path), "/sessions");
	if (n < 0 || (size_t)n >= cap - (size_t)(slash - path)) {
		cli_errorf("session recording: path too long");
		return -1;
	}
	if (mkdir(path, 0700) < 0 && errno != EEXIST) {
		cli_errorf("session recording: cannot create '%s': %s", path, cd_strerror(-errno));
		return -1;
	}
	n = snprintf(slash, cap - (size_t)(slash - path), "/sessions/%s.rec", run_id);
	if (n < 0 || (size_t)n >= cap - (size_t)(slash - path)) {
		cli_errorf("session recording: path too long");
		return -1;
	}
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		cli_errorf("session recording '%s': %s", path, cd_strerror(-errno));
	return fd;
}

/* Save the session and name it, with its SHA-256, in the result record's
 * details. */
static json_t *launch_session_save(int fd, const char *path, const struct cd_session *sess)
{
	struct cd_err err = { 0, "" };
	char sha[65];

	if (cd_session_save(sess, fd, sha, &err) < 0) {
		cli_warnf("session recording '%s': %s", path, err.msg);
		return json_pack("{s:s}", "error", err.msg);
	}
	return json_pack("{s:s,s:s,s:I,s:I,s:I,s:I,s:b}", "file", strrchr(path, '/') + 1, "sha256",
	                 sha, "bytes", (json_int_t)sess->buf.len, "typed_bytes",
	                 (json_int_t)sess->typed, "printed_bytes", (json_int_t)sess->printed,
	                 "dropped_bytes", (json_int_t)sess->dropped, "truncated",
	                 sess->dropped > 0);
}

/* Who the sandbox is on the host: the caller, or for root a slot of root's
 * range, held until cordon exits (idmap.h, idslot.h).  The test seam
 * CORDON_TEST_ID_SLOTS=[FIRST:]COUNT narrows the slots a root run may take
 * and can never widen them: a window outside the range refuses the run. */
static int launch_host_ids(struct cd_plan_opts *po, struct cd_idslot *slot, struct cd_err *err)
{
	struct cd_idmap_range range;
	const char *w = getenv("CORDON_TEST_ID_SLOTS");
	uint32_t first = 0, count = 0;
	int r;

	po->idmap = geteuid() == 0;
	po->id_slot = -1;
	if (!po->idmap) {
		po->host_uid = geteuid();
		po->host_gid = getegid();
		return 0;
	}
	if (w && cd_idslot_parse_window(w, &first, &count) < 0)
		return cd_err_set(err, -EINVAL, "CORDON_TEST_ID_SLOTS: not [FIRST:]COUNT");
	cd_idmap_root_range(&range);
	if ((r = cd_idslot_take(CD_IDSLOT_DIR, &range, first, count, slot, err)) < 0)
		return r;
	po->host_uid = slot->uid;
	po->host_gid = slot->gid;
	po->id_slot = (long)slot->index;
	return 0;
}

int cli_launch(int argc, char **argv, const struct cli_launch_mode *mode)
{
	struct run_args a;
	struct cd_plan_opts po;
	struct cd_sandbox_profile prof;
	struct cd_arena arena;
	struct cd_plan *plan = NULL;
	struct cd_policy *policy = NULL;
	struct cd_audit *audit = NULL;
	struct cd_state *state = NULL;
	char privbuf[5][CD_PATH_MAX], *priv[5];
	char approval_id[64] = "";
	struct cd_gate gate;
	struct cd_run_request rq;
	struct cd_decision dec;
	struct intent intent;
	struct cd_sandbox_io io;
	struct cd_masker *masker = NULL;
	struct cd_egress_policy *epol = NULL;
	struct egress eg;
	struct cd_result res;
	struct cd_err err = { 0, "" };
	struct cd_idslot slot = { .fd = -1 };
	char run_id[CD_RUN_ID_LEN + 1] = "", msg[512];
	sigset_t oldmask;
	int first, rc = CD_EXIT_CORDON, sfd = -1;
	unsigned missing_before = 0;
	json_t *planted = NULL, *extra, *session = NULL;
	char cwd[CD_PATH_MAX];
	char **cmd;
	struct cd_session sess;
	struct layer layer;
	int tty = mode->tty, raw = 0, sess_fd = -1, n_msg;
	char sess_path[CD_PATH_MAX] = "";

	memset(&a, 0, sizeof a);
	memset(&layer, 0, sizeof layer);
	layer.fd = -1;
	a.mode = mode;
	memset(&arena, 0, sizeof arena);
	cd_session_init(&sess, 0);
	memset(&eg, 0, sizeof eg);
	eg.stop[0] = eg.stop[1] = -1;
	first = launch_parse_args(argc, argv, &a);
	if (first < 0)
		goto out;
	cmd = first < argc ? argv + first : launch_default_shell();
	if (tty) {
		cd_session_release(&sess);
		cd_session_init(&sess, a.record_limit);
	}
	if (!a.cwd) {
		if (!getcwd(cwd, sizeof cwd)) {
			cli_errorf("cannot read the current directory: %s", cd_strerror(-errno));
			goto out;
		}
		a.cwd = cwd;
	}
	if (a.policy && !a.agent) {
		cli_errorf("--policy needs --agent ID: every decision names its agent");
		goto out;
	}
	if (a.direct_stdio &&
	    (tty || a.install || !launch_is_pipe(STDIN_FILENO) || !launch_is_pipe(STDOUT_FILENO))) {
		cli_errorf("--direct-stdio hands cordon's stdin and stdout to the command: both "
		           "must be pipes (never a terminal), and not with a shell or --install");
		goto out;
	}
	if (a.direct_stdio && a.json && a.json_fd < 0) {
		/* The record would land in the command's own output stream. */
		cli_errorf("--direct-stdio with --json needs --json-fd FD: stdout is the "
		           "command's");
		goto out;
	}
	if (cd_run_id_new(run_id) < 0) {
		cli_errorf("cannot make a run id: no randomness");
		goto out;
	}
	/* No log, no run: the log opens before anything is decided, and the
	 * policy's load — or its refusal — is the first record. */
	if (!a.dry_run && cli_audit_open(a.audit, &audit) < 0)
		goto out;
	if (launch_load_policy(&a, audit, run_id, &policy) < 0)
		goto out;
	if (a.nallow && a.net_none) {
		cli_errorf("--net none and --allow-host contradict each other");
		goto out;
	}
	if (a.nallow && policy) {
		cli_errorf("with --policy, egress comes from the grant's profile (allow_hosts): "
		           "--allow-host is refused");
		goto out;
	}
	/* Break-glass and delegated grants join the policy for this run. */
	if (policy && !a.dry_run &&
	    (cli_state_open(NULL, &state) < 0 ||
	     cli_temp_join(state, audit, policy, (int64_t)time(NULL)) < 0))
		goto out;

	memset(&rq, 0, sizeof rq);
	rq.run_id = run_id;
	rq.agent = a.agent;
	rq.task = a.task;
	rq.tool = a.tool ? a.tool : "shell";
	rq.argv = cmd;
	rq.cwd = a.cwd;
	memset(&gate, 0, sizeof gate);
	gate.audit = audit;
	gate.policy = policy;
	gate.policy_path = a.policy;
	gate.now = (int64_t)time(NULL);
	gate.state = state;
	/* A policy that masks anything needs the key before the decision: the
	 * records of a run, a refused one too, are minimized with it.  If the
	 * key cannot be used they withhold the arguments, and a run whose
	 * grant masks is refused below. */
	if (audit && cd_policy_masks(policy) && cli_masker_open(&masker) < 0)
		masker = NULL;
	gate.masker = masker;
	memset(&dec, 0, sizeof dec);
	rq.decision = &dec;
	/* A dry run decides too (the grant's profile is what it shows) but
	 * records nothing: gate.audit is NULL then. */
	if (cd_gate_decide_run(&gate, &rq, &dec, &err) < 0) {
		rc = launch_refuse(&a, run_id, CD_REASON_SETUP_ERROR, err.msg);
		goto out;
	}
	if (dec.verdict == CD_VERDICT_NEEDS_APPROVAL && state) {
		/* Held: an approver rule, a person through the queue, or the
		 * operator's terminal decides; the decision's profile stays. */
		if (cli_await_approval(
		            &gate, &rq, &dec, state,
		            a.approval_timeout_ms ? (int64_t)(a.approval_timeout_ms / 1000) : 600,
		            a.approve_interactive, approval_id) < 0) {
			rc = launch_refuse(&a, run_id, CD_REASON_SETUP_ERROR,
			                   "approval could not be handled");
			goto out;
		}
		if (approval_id[0])
			rq.approval_id = approval_id;
	}
	if (dec.verdict != CD_VERDICT_ALLOW) {
		launch_explain_refusal(&dec, msg, sizeof msg);
		rc = launch_refuse(&a, run_id, CD_REASON_DENIED, msg);
		goto out;
	}
	if (a.install) {
		/* The install step first (not for a dry run); the command then
		 * runs with the caches read-only and without the install's
		 * egress: the run's own network setting, none by default. */
		if (!a.dry_run) {
			int st = launch_run_install(&a, argv);

			if (st != 0) {
				n_msg = snprintf(
				        msg, sizeof msg,
				        "--install: the install step failed (exit %d): the "
				        "command did not run",
				        st);
				if (n_msg < 0)
					msg[0] = '\0';
				rc = launch_refuse(&a, run_id, CD_REASON_SETUP_ERROR, msg);
				goto out;
			}
		}
		cd_egress_policy_free(epol);
		epol = NULL;
		a.nallow = 0;
	}
	if (dec.nfield_lists || dec.minimize_overflow) {
		rc = launch_refuse(
		        &a, run_id, CD_REASON_DENIED,
		        "the grant scopes fields of JSON results, which cordon run cannot apply "
		        "to a command's output");
		goto out;
	}
	if (a.propose && cd_mask_rules_active(&dec.mask)) {
		/* A proposal keeps the agent's files, their paths and hashes
		 * as written, in the state database and the audit log. */
		rc = launch_refuse(
		        &a, run_id, CD_REASON_DENIED,
		        "the grant masks output, which proposal mode would keep unmasked "
		        "(files, paths and hashes): --propose refused");
		goto out;
	}
	if (tty && cd_mask_rules_active(&dec.mask)) {
		/* Masking holds the output until the command ends, and the
		 * session recording would keep it raw: no interactive use. */
		rc = launch_refuse(&a, run_id, CD_REASON_DENIED,
		                   "the grant masks output, which an interactive session cannot do "
		                   "(use cordon run)");
		goto out;
	}
	if (cd_mask_rules_active(&dec.mask) && !masker && cli_masker_open(&masker) < 0) {
		rc = launch_refuse(&a, run_id, CD_REASON_DENIED,
		                   "the grant masks output and the mask key cannot be used");
		goto out;
	}
	if (cd_mask_rules_active(&dec.mask) && cd_masker_prepare(masker, &err) < 0) {
		n_msg = snprintf(msg, sizeof msg,
		                 "the grant masks output and masking is unavailable: %s", err.msg);
		rc = launch_refuse(&a, run_id, CD_REASON_DENIED,
		                   n_msg > 0 ? msg
		                             : "the grant masks output and masking is unavailable");
		goto out;
	}
	if (launch_apply_profile(&a, &prof, policy, policy ? dec.profile : NULL, &arena) < 0)
		goto out;
	/* The profile's allow_hosts (a granted profile under --policy, or a
	 * profile file) join the run's egress allowlist; then the proxy's
	 * allowlist is built and checked, before anything starts. */
	for (size_t h = 0; h < prof.nallow; h++) {
		if (a.nallow >= MAX_OPT_ITEMS) {
			cli_errorf("too many allowed hosts");
			goto out;
		}
		a.allow_hosts[a.nallow++] = prof.allow_hosts[h];
	}
	if (a.nallow && a.net_none) {
		cli_errorf("--net none and the profile's allow_hosts contradict each other");
		goto out;
	}
	if (a.nallow && launch_egress_policy(&a, &epol) < 0)
		goto out;
	if (launch_add_caches(&a) < 0)
		goto out;
	/* An interactive session outlasts a command: an hour unless told, and
	 * never longer than a granted profile says. */
	if (tty && !policy && !(a.set & SET_TIMEOUT) && !(a.profile && strchr(a.profile, '/')))
		a.limits.timeout_ms = 3600 * 1000;
	memset(&po, 0, sizeof po);
	if (a.propose) {
		if (prof.workspace_write) {
			rc = launch_refuse(
			        &a, run_id, CD_REASON_SETUP_ERROR,
			        "--propose and a workspace-write profile exclude each other: "
			        "in proposal mode every write is proposed");
			goto out;
		}
		if (!a.dry_run && ((!state && cli_state_open(NULL, &state) < 0) ||
		                   launch_layer_make(&layer, run_id) < 0))
			goto out;
		po.overlay = 1;
	} else if (a.propose_caps) {
		cli_errorf("--propose-size and --propose-inodes go with --propose");
		goto out;
	}
	po.cwd_writable = prof.workspace_write;
	po.profile = prof.name;
	po.argv = cmd;
	po.host_cwd = a.cwd;
	po.binds = a.binds;
	po.nbinds = a.nbinds;
	po.env = a.env;
	po.nenv = a.nenv;
	po.secrets = a.secrets;
	po.nsecrets = a.nsecrets;
	po.lang = getenv("LANG");
	po.term = getenv("TERM");
	if (tty && !po.term)
		po.term = "vt100";
	po.tty = tty;
	po.lc_all = getenv("LC_ALL");
	po.scratch_host = a.scratch;
	po.limits = &a.limits;
	if (launch_host_ids(&po, &slot, &err) < 0) {
		rc = launch_refuse(&a, run_id, CD_REASON_SETUP_ERROR, err.msg);
		goto out;
	}
	po.allow_degraded = a.allow_degraded;
	po.skip_socket_scan = a.skip_socket_scan;
	po.allow_home = a.allow_home;
	po.caller_home = getenv("HOME");
	po.cover_files = prof.cover_files;
	po.ncover_files = prof.ncover;
	po.egress = a.nallow > 0;
	launch_private_paths(&a, priv, privbuf, &po.nprivate);
	po.private_paths = (const char *const *)priv;
	if (cd_plan_build(&po, &plan, &err) < 0) {
		rc = launch_refuse(&a, run_id, CD_REASON_SETUP_ERROR, err.msg);
		goto out;
	}
	if (a.dry_run) {
		char *d = cd_plan_describe(plan);
		if (!d) {
			cli_errorf("out of memory");
			goto out;
		}
		printf("%s\n", d);
		free(d);
		rc = CD_EXIT_OK;
		goto out;
	}
	rq.cwd = plan->cwd;
	intent.gate = &gate;
	intent.rq = &rq;
	intent.plan = plan;
	intent.dec = &dec;
	intent.done = 0;
	sfd = launch_signals_setup(&oldmask, tty);
	if (sfd < 0) {
		cli_errorf("cannot set up signal forwarding: %s", cd_strerror(-errno));
		goto out;
	}
	fflush(stdout);
	if (prof.workspace_write)
		missing_before = launch_missing_protected(plan->cwd);
	io.stdin_fd = STDIN_FILENO;
	io.stdout_fd = STDOUT_FILENO;
	io.stderr_fd = STDERR_FILENO;
	/* A terminal gets no clipboard or title strings from the sandbox. */
	io.filter_stdout = isatty(STDOUT_FILENO);
	io.filter_stderr = isatty(STDERR_FILENO);
	io.signal_fd = sfd;
	io.on_proxy = NULL;
	io.proxy_ctx = NULL;
	io.winsize_fd = -1;
	io.record = NULL;
	io.record_ctx = NULL;
	io.on_layer = a.propose ? launch_layer_take : NULL;
	io.layer_ctx = &layer;
	if (tty) {
		io.winsize_fd = isatty(STDIN_FILENO)    ? STDIN_FILENO
		                : isatty(STDOUT_FILENO) ? STDOUT_FILENO
		                                        : -1;
		io.record = cd_session_add;
		io.record_ctx = &sess;
	}
	/* The intent becomes durable while the child builds the sandbox; the
	 * command starts only after. */
	io.before_exec = record_intent;
	io.before_exec_ctx = &intent;
	io.masker = masker;
	io.mask = masker ? &dec.mask : NULL;
	/* Masked output is held until the end: that stream stays relayed. */
	io.direct_stdin = a.direct_stdio;
	io.direct_stdout = a.direct_stdio && !(io.mask && cd_mask_rules_active(io.mask));
	if (epol) {
		eg.a = &a;
		eg.run_id = run_id;
		if (cd_mask_rules_active(&dec.mask)) {
			/* A name or a URL can carry what the grant masks: the
			 * proxy's records are minimized as the run's are. */
			json_t *j = cd_logmask_rules_json(&dec.mask);
			eg.log_mask = j ? json_dumps(j, JSON_COMPACT) : NULL;
			json_decref(j);
			if (!eg.log_mask) {
				cli_errorf("egress proxy: out of memory");
				goto out;
			}
		}
		/* The stop pipe's read end goes to the proxy: not close-on-exec
		 * there (dup2 clears it), close-on-exec everywhere else. */
		if (pipe2(eg.stop, O_CLOEXEC) < 0) {
			cli_errorf("egress proxy: %s", cd_strerror(-errno));
			goto out;
		}
		io.on_proxy = launch_egress_serve;
		io.proxy_ctx = &eg;
	}
	if (tty) {
		int r;

		sess_fd = launch_session_open(&a, run_id, sess_path, sizeof sess_path);
		if (sess_fd < 0)
			goto out;
		r = launch_tty_raw(STDIN_FILENO);
		if (r < 0) {
			cli_errorf("cannot put the terminal in raw mode: %s", cd_strerror(r));
			goto out;
		}
		raw = 1;
	}
	cd_sandbox_run(plan, run_id, &io, &res, &err);
	if (raw) {
		launch_tty_restore();
		raw = 0;
	}
	launch_egress_stop(&eg);
	if (!intent.done) {
		/* Nothing ran; without an intent there is nothing to pair a
		 * result with: the refusal is the record-less outcome. */
		cli_errorf("%s", res.error[0] ? res.error : "the run could not be recorded");
		rc = CD_EXIT_CORDON;
		if (a.json)
			launch_refuse(&a, run_id, CD_REASON_SETUP_ERROR, res.error);
		goto out;
	}
	rc = res.exit_code;
	if (res.reason == CD_REASON_SETUP_ERROR)
		cli_errorf("%s", res.error);
	else if (res.error[0])
		cli_errorf("%s", res.error); /* exec failure: not found, not executable */
	else if (res.reason == CD_REASON_TIMEOUT)
		cli_errorf("timeout: killed after %llu ms",
		           (unsigned long long)plan->limits.timeout_ms);
	else if (res.reason == CD_REASON_OUTPUT_LIMIT)
		cli_errorf("output limit: killed after %llu bytes on one stream",
		           (unsigned long long)plan->limits.output_limit);
	if ((a.set & SET_MEMORY) && res.reason != CD_REASON_SETUP_ERROR &&
	    strcmp(cd_quotas_memory_cap(res.mech_memory), "approximate") == 0) {
		char mem[32];

		cli_size_human(plan->limits.memory, mem, sizeof mem);
		cli_warnf("--memory %s is approximate: no writable cgroup, so it is a per-process "
		          "rlimit (memfds and System V IPC refused, scratch within it)",
		          mem);
	}
	if (prof.workspace_write || plan->ntrees)
		planted = launch_planted_paths(plan, missing_before);
	if (a.propose)
		launch_layer_measure(&layer, &plan->limits);
	extra = json_object();
	if (extra && layer.measured)
		json_object_set_new(extra, "proposal_layer", launch_layer_json(&layer));
	if (extra && planted)
		json_object_set(extra, "planted_paths", planted);
	if (extra)
		json_object_set_new(extra, "covered_paths", launch_covered_paths(plan));
	if (extra && tty) {
		json_object_set_new(extra, "tty", json_true());
		session = launch_session_save(sess_fd, sess_path, &sess);
		if (session)
			json_object_set_new(extra, "session", session);
	}
	if (cd_gate_run_result(&gate, &rq, plan, &res, extra, &err) < 0) {
		cli_errorf("the run finished (exit %d) but its result could not be recorded: %s",
		           res.exit_code, err.msg);
		rc = CD_EXIT_CORDON;
	}
	json_decref(extra);
	if (a.propose && launch_make_proposal(&layer, plan, &a, run_id, &res, state, audit) < 0)
		rc = CD_EXIT_CORDON;
	if (a.json &&
	    launch_emit_result(&a, plan, &res, planted, layer.measured ? &layer : NULL) < 0)
		cli_warnf("could not write the result record");
out:
	launch_layer_done(&layer);
	launch_tty_restore();
	launch_egress_stop(&eg);
	free(eg.log_mask);
	cd_session_release(&sess);
	if (sess_fd >= 0) {
		close(sess_fd);
		if (!session)
			unlink(sess_path); /* nothing ran: no recording to keep */
	}
	cd_egress_policy_free(epol);
	json_decref(planted);
	if (sfd >= 0)
		close(sfd);
	cd_plan_free(plan);
	cd_masker_free(masker);
	cd_policy_free(policy);
	cd_state_close(state);
	cd_audit_close(audit);
	launch_args_release(&a);
	cd_arena_release(&arena);
	/* Last: the run's host id is free once nothing of the run is left. */
	cd_idslot_release(&slot);
	return rc;
}

void cli_launch_options_help(FILE *f)
{
	fputs("Filesystem:\n"
	      "  --cwd DIR             expose DIR (read-only) and run there (default: .)\n"
	      "  --ro PATH[:DEST]      bind PATH read-only at DEST (default: same path)\n"
	      "  --rw PATH[:DEST]      bind PATH writable at DEST (run by root: idmapped, so\n"
	      "                        files land owned by root; refused where the filesystem\n"
	      "                        cannot be idmapped; see Host identity in cordon(1))\n"
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
