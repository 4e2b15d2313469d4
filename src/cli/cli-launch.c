/* cli-launch.c — the one launcher behind `cordon run` and `cordon shell`:
 * the run itself.
 *
 * Checks the options (cli-launch-opts.c), asks the gate, shapes the run
 * (cli-launch-policy.c, cli-launch-egress.c, cli-launch-propose.c), builds
 * the plan (src/lib/sandbox/plan.c), runs it (src/lib/sandbox/sandbox.c),
 * records and reports (cli-launch-report.c).  `cordon shell` differs only
 * in the plan's tty flag (a pty of the sandbox's own as the command's
 * stdio), the person's terminal in raw mode around the run, and the
 * session recording (cli-launch-tty.c).  Exit status: the command's own,
 * or 128+signal; 124 timeout; 125 cordon refused or failed; 126 not
 * executable; 127 not found.  Secrets given with --secret are placed only
 * in the command's environment: never in argv, the plan description or
 * any output.
 */
#include "cli.h"
#include "cli-launch-int.h"
#include "sandbox/tree-watch.h"

#include "cli-audit.h"
#include "cli-warm.h"
#include "egress/egress-proxy.h"
#include "gate/gate.h"
#include "image/image.h"
#include "mask/logmask.h"
#include "policy/policy-yaml.h"
#include "sandbox/idslot.h"
#include "sandbox/profile.h"
#include "sandbox/quotas.h"
#include "audit/session.h"
#include "store/state.h"
#include "util/util.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

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

/* The run's state, carried through the steps of cli_launch().  Each step
 * returns 0 to go on, or -1 to stop: the exit status is then l->rc
 * (CD_EXIT_CORDON unless the step set it), and finish() releases what
 * the steps took. */
struct launch {
	struct run_args a;
	struct cd_plan_opts po;
	struct cd_sandbox_profile prof;
	struct cd_arena arena;
	struct cd_plan *plan;
	struct cd_policy *policy;
	struct cd_audit *audit;
	struct cd_state *state;
	char privbuf[LAUNCH_NPRIVATE][CD_PATH_MAX], *priv[LAUNCH_NPRIVATE];
	char scan_cache[CD_PATH_MAX]; /* the walk's cache: scan/ in the state directory */
	char watch_sock[CD_PATH_MAX]; /* the service's tree watcher (tree-watch.h) */
	char approval_id[64];
	struct cd_gate gate;
	struct cd_run_request rq;
	struct cd_decision dec;
	struct intent intent;
	struct cd_sandbox_io io;
	struct cd_masker *masker;
	struct cd_egress_policy *epol;
	struct egress eg;
	struct cd_result res;
	struct cd_err err;
	struct cd_idslot slot;
	struct launch_ids ids;
	char run_id[CD_RUN_ID_LEN + 1];
	sigset_t oldmask;
	int rc, sfd;
	unsigned missing_before;
	json_t *planted, *planted_check, *session;
	char cwd[CD_PATH_MAX];
	char **cmd;
	struct cd_session sess;
	struct layer layer;
	int tty, raw, sess_fd;
	char sess_path[CD_PATH_MAX];
};

static void launch_init(struct launch *l, const struct cli_launch_mode *mode)
{
	/* All but privbuf (128 KiB of the stack): launch_private_paths fills
	 * each entry it points priv at, and nothing reads the others, so
	 * their pages are never touched (a fresh page's fault costs 17-24 us
	 * on a VM like the benchmarks'). */
	memset(l, 0, offsetof(struct launch, privbuf));
	memset((char *)l + offsetof(struct launch, priv), 0,
	       sizeof *l - offsetof(struct launch, priv));
	l->slot.fd = -1;
	l->rc = CD_EXIT_CORDON;
	l->sfd = -1;
	l->tty = mode->tty;
	l->sess_fd = -1;
	l->layer.fd = -1;
	l->a.mode = mode;
	cd_session_init(&l->sess, 0);
	l->eg.stop[0] = l->eg.stop[1] = -1;
}

/* The options parsed and checked, the command chosen, the run id made. */
static int check_options(struct launch *l, int argc, char **argv)
{
	int first;

	first = launch_parse_args(argc, argv, &l->a);
	if (first < 0)
		return -1;
	l->cmd = first < argc ? argv + first : launch_default_shell();
	if (l->tty) {
		cd_session_release(&l->sess);
		cd_session_init(&l->sess, l->a.record_limit);
	}
	if (!l->a.cwd) {
		if (!getcwd(l->cwd, sizeof l->cwd)) {
			cli_errorf("cannot read the current directory: %s", cd_strerror(-errno));
			return -1;
		}
		l->a.cwd = l->cwd;
	}
	if (l->a.policy && !l->a.agent) {
		cli_errorf("--policy needs --agent ID: every decision names its agent");
		return -1;
	}
	if (l->a.direct_stdio && (l->tty || l->a.install || !launch_is_pipe(STDIN_FILENO) ||
	                          !launch_is_pipe(STDOUT_FILENO))) {
		cli_errorf("--direct-stdio hands cordon's stdin and stdout to the command: both "
		           "must be pipes (never a terminal), and not with a shell or --install");
		return -1;
	}
	if (l->a.direct_stdio && l->a.json && l->a.json_fd < 0) {
		/* The record would land in the command's own output stream. */
		cli_errorf("--direct-stdio with --json needs --json-fd FD: stdout is the "
		           "command's");
		return -1;
	}
	if (cd_run_id_new(l->run_id) < 0) {
		cli_errorf("cannot make a run id: no randomness");
		return -1;
	}
	return 0;
}

/* No log, no run: the log opens before anything is decided, and the
 * policy's load — or its refusal — is the first record. */
static int open_policy(struct launch *l)
{
	if (!l->a.dry_run && cli_audit_open_warm(l->a.audit, &l->audit) < 0)
		return -1;
	if (launch_load_policy(&l->a, l->audit, l->run_id, &l->policy) < 0)
		return -1;
	if (l->a.nallow && l->a.net_none) {
		cli_errorf("--net none and --allow-host contradict each other");
		return -1;
	}
	if (l->a.nallow && l->policy) {
		cli_errorf("with --policy, egress comes from the grant's profile (allow_hosts): "
		           "--allow-host is refused");
		return -1;
	}
	/* Break-glass and delegated grants join the policy for this run. */
	if (l->policy && !l->a.dry_run &&
	    (cli_state_open(NULL, &l->state) < 0 ||
	     cli_temp_join(l->state, l->audit, l->policy, (int64_t)time(NULL)) < 0))
		return -1;
	return 0;
}

/* The gate's decision, and its approval when the grant asks for one. */
static int decide(struct launch *l)
{
	char msg[512];

	memset(&l->rq, 0, sizeof l->rq);
	l->rq.run_id = l->run_id;
	l->rq.agent = l->a.agent;
	l->rq.task = l->a.task;
	l->rq.tool = l->a.tool ? l->a.tool : "shell";
	l->rq.argv = l->cmd;
	l->rq.cwd = l->a.cwd;
	memset(&l->gate, 0, sizeof l->gate);
	l->gate.audit = l->audit;
	l->gate.policy = l->policy;
	l->gate.policy_path = l->a.policy;
	l->gate.now = (int64_t)time(NULL);
	l->gate.state = l->state;
	/* A policy that masks anything needs the key before the decision: the
	 * records of a run, a refused one too, are minimized with it.  If the
	 * key cannot be used they withhold the arguments, and a run whose
	 * grant masks is refused below. */
	if (l->audit && cd_policy_masks(l->policy) && cli_masker_open(&l->masker) < 0)
		l->masker = NULL;
	l->gate.masker = l->masker;
	memset(&l->dec, 0, sizeof l->dec);
	l->rq.decision = &l->dec;
	/* A dry run decides too (the grant's profile is what it shows) but
	 * records nothing: gate.audit is NULL then. */
	if (cd_gate_decide_run(&l->gate, &l->rq, &l->dec, &l->err) < 0) {
		l->rc = launch_refuse(&l->a, l->run_id, CD_REASON_SETUP_ERROR, l->err.msg);
		return -1;
	}
	if (l->dec.verdict == CD_VERDICT_NEEDS_APPROVAL && l->state) {
		/* Held: an approver rule, a person through the queue, or the
		 * operator's terminal decides; the decision's profile stays.
		 * No host id is held while the run waits (minutes, maybe):
		 * it is taken again once approved. */
		cd_idslot_release(&l->slot);
		if (cli_await_approval(&l->gate, &l->rq, &l->dec, l->state,
		                       l->a.approval_timeout_ms
		                               ? (int64_t)(l->a.approval_timeout_ms / 1000)
		                               : 600,
		                       l->a.approve_interactive, l->approval_id) < 0) {
			l->rc = launch_refuse(&l->a, l->run_id, CD_REASON_SETUP_ERROR,
			                      "approval could not be handled");
			return -1;
		}
		if (l->approval_id[0])
			l->rq.approval_id = l->approval_id;
		if (l->dec.verdict == CD_VERDICT_ALLOW)
			launch_host_ids_start(&l->ids, &l->slot);
	}
	if (l->dec.verdict != CD_VERDICT_ALLOW) {
		launch_explain_refusal(&l->dec, msg, sizeof msg);
		l->rc = launch_refuse(&l->a, l->run_id, CD_REASON_DENIED, msg);
		return -1;
	}
	return 0;
}

/* What the grant allows and the run cannot do refuses it; the install
 * step runs here, before the command. */
static int check_grant(struct launch *l, char **argv)
{
	char msg[512];
	int n_msg;

	if (l->a.install) {
		/* The install step first (not for a dry run); the command then
		 * runs with the caches read-only and without the install's
		 * egress: the run's own network setting, none by default. */
		if (!l->a.dry_run) {
			int st = launch_run_install(&l->a, argv);

			if (st != 0) {
				n_msg = snprintf(
				        msg, sizeof msg,
				        "--install: the install step failed (exit %d): the "
				        "command did not run",
				        st);
				if (n_msg < 0)
					msg[0] = '\0';
				l->rc = launch_refuse(&l->a, l->run_id, CD_REASON_SETUP_ERROR, msg);
				return -1;
			}
		}
		cd_egress_policy_free(l->epol);
		l->epol = NULL;
		l->a.nallow = 0;
	}
	if (l->dec.nfield_lists || l->dec.minimize_overflow) {
		l->rc = launch_refuse(
		        &l->a, l->run_id, CD_REASON_DENIED,
		        "the grant scopes fields of JSON results, which cordon run cannot apply "
		        "to a command's output");
		return -1;
	}
	if (l->a.propose && cd_mask_rules_active(&l->dec.mask)) {
		/* A proposal keeps the agent's files, their paths and hashes
		 * as written, in the state database and the audit log. */
		l->rc = launch_refuse(
		        &l->a, l->run_id, CD_REASON_DENIED,
		        "the grant masks output, which proposal mode would keep unmasked "
		        "(files, paths and hashes): --propose refused");
		return -1;
	}
	if (l->tty && cd_mask_rules_active(&l->dec.mask)) {
		/* Masking holds the output until the command ends, and the
		 * session recording would keep it raw: no interactive use. */
		l->rc = launch_refuse(
		        &l->a, l->run_id, CD_REASON_DENIED,
		        "the grant masks output, which an interactive session cannot do "
		        "(use cordon run)");
		return -1;
	}
	if (cd_mask_rules_active(&l->dec.mask) && !l->masker && cli_masker_open(&l->masker) < 0) {
		l->rc = launch_refuse(&l->a, l->run_id, CD_REASON_DENIED,
		                      "the grant masks output and the mask key cannot be used");
		return -1;
	}
	if (cd_mask_rules_active(&l->dec.mask) && cd_masker_prepare(l->masker, &l->err) < 0) {
		n_msg = snprintf(msg, sizeof msg,
		                 "the grant masks output and masking is unavailable: %s",
		                 l->err.msg);
		l->rc = launch_refuse(
		        &l->a, l->run_id, CD_REASON_DENIED,
		        n_msg > 0 ? msg : "the grant masks output and masking is unavailable");
		return -1;
	}
	return 0;
}

/* The sandbox's profile and limits, the egress allowlist, the caches. */
static int shape(struct launch *l)
{
	if (launch_apply_profile(&l->a, &l->prof, l->policy, l->policy ? l->dec.profile : NULL,
	                         &l->arena) < 0)
		return -1;
	/* The profile's allow_hosts (a granted profile under --policy, or a
	 * profile file) join the run's egress allowlist; then the proxy's
	 * allowlist is built and checked, before anything starts. */
	for (size_t h = 0; h < l->prof.nallow; h++) {
		if (l->a.nallow >= MAX_OPT_ITEMS) {
			cli_errorf("too many allowed hosts");
			return -1;
		}
		l->a.allow_hosts[l->a.nallow++] = l->prof.allow_hosts[h];
	}
	if (l->a.nallow && l->a.net_none) {
		cli_errorf("--net none and the profile's allow_hosts contradict each other");
		return -1;
	}
	if (l->a.nallow && launch_egress_policy(&l->a, &l->epol) < 0)
		return -1;
	if (launch_add_caches(&l->a) < 0)
		return -1;
	/* An interactive session outlasts a command: an hour unless told, and
	 * never longer than a granted profile says. */
	if (l->tty && !l->policy && !(l->a.set & SET_TIMEOUT) &&
	    !(l->a.profile && strchr(l->a.profile, '/')))
		l->a.limits.timeout_ms = 3600 * 1000;
	return 0;
}

/* The plan's options from the run's, and the plan built and checked. */
/* scan/ beside the state database (the state directory, which the plan
 * hides from the sandbox): where the walk of the bound trees keeps what
 * it found between runs.  NULL without one. */
static const char *launch_scan_cache(char *out, size_t cap)
{
	char *slash;

	if (cli_state_local(NULL, out, cap) < 0 || !(slash = strrchr(out, '/')) ||
	    (size_t)(slash - out) + sizeof "/scan" > cap)
		return NULL;
	memcpy(slash, "/scan", sizeof "/scan");
	return out;
}

/* The tree watcher's socket in the service's directory, when the warm
 * path is on and CORDON_WATCH is not "0": NULL otherwise (every
 * directory is looked at). */
static const char *launch_watch_sock(char *out, size_t cap)
{
	const char *v = getenv("CORDON_WATCH");
	char dir[CD_PATH_MAX];
	int n;

	if (!cli_warm_enabled() || (v && !strcmp(v, "0")) || cli_warm_dir(dir, sizeof dir) < 0)
		return NULL;
	n = snprintf(out, cap, "%s/%s", dir, CD_WATCH_SOCK_NAME);
	return n < 0 || (size_t)n >= cap ? NULL : out;
}

/* --image FILE: its entry in the cache (images/ beside the state
 * database), unpacked there first if missing, checked; then run as
 * --rootfs.  Only here is libarchive loaded. */
/* The unpack's caps from CORDON_IMAGE_MAX_BYTES (a size: "8G"),
 * CORDON_IMAGE_MAX_RATIO and CORDON_IMAGE_MAX_ENTRIES; unset: bounds.h's.
 * -1 with err for a value that does not parse. */
static int image_limits(struct cd_image_limits *lim, struct cd_err *err)
{
	static const char *const names[] = { "CORDON_IMAGE_MAX_BYTES", "CORDON_IMAGE_MAX_RATIO",
		                             "CORDON_IMAGE_MAX_ENTRIES" };
	uint64_t *out[] = { &lim->bytes_max, &lim->ratio_max, &lim->entries_max };
	const char *v;
	size_t i;
	int r;

	memset(lim, 0, sizeof *lim);
	for (i = 0; i < 3; i++) {
		if (!(v = getenv(names[i])) || !*v)
			continue;
		r = i == 0 ? cd_parse_size(v, 0, out[i])
		           : cd_parse_u64(v, strlen(v), UINT32_MAX, out[i]);
		if (r < 0 || *out[i] == 0)
			return cd_err_set(err, -CD_E_USAGE, "%s='%.40s': not a positive %s",
			                  names[i], v, i == 0 ? "size" : "number");
	}
	return 0;
}

static int launch_image(struct launch *l)
{
	struct cd_image_limits lim;
	/* Static: only --image touches their pages (launch_init zeroes
	 * struct launch on every run); the plan options point at them. */
	static struct cd_image img;
	static char desc[2 * CD_PATH_MAX]; /* "FORMAT DIGEST CACHE FILE", for the record */
	char cache[CD_PATH_MAX], file[CD_PATH_MAX], *slash;
	int n;

	if (cli_state_local(NULL, cache, sizeof cache) < 0 || !(slash = strrchr(cache, '/')) ||
	    (size_t)(slash - cache) + sizeof "/images" > sizeof cache) {
		l->rc = launch_refuse(&l->a, l->run_id, CD_REASON_SETUP_ERROR,
		                      "--image: no state directory for the image cache (set "
		                      "CORDON_STATE or HOME)");
		return -1;
	}
	memcpy(slash, "/images", sizeof "/images");
	if (image_limits(&lim, &l->err) < 0) {
		/* said */
	} else if (!realpath(l->a.image, file)) {
		cd_err_sys(&l->err, -errno, "image '%s'", l->a.image);
	} else if (cd_image_open(file, cache, &lim, &img, &l->err) == 0) {
		n = snprintf(desc, sizeof desc, "%s %s %s %s", img.format, img.digest,
		             img.unpacked ? "unpacked" : "cached", file);
		if (n > 0 && (size_t)n < sizeof desc) {
			l->po.image = desc;
			l->po.rootfs = img.rootfs;
			return 0;
		}
		cd_err_set(&l->err, -ENAMETOOLONG, "image '%s': a name too long", file);
	}
	l->rc = launch_refuse(&l->a, l->run_id, CD_REASON_SETUP_ERROR, l->err.msg);
	return -1;
}

static int build_plan(struct launch *l)
{
	int r;

	memset(&l->po, 0, sizeof l->po);
	if (l->a.propose) {
		if (l->prof.workspace_write) {
			l->rc = launch_refuse(
			        &l->a, l->run_id, CD_REASON_SETUP_ERROR,
			        "--propose and a workspace-write profile exclude each other: "
			        "in proposal mode every write is proposed");
			return -1;
		}
		if (!l->a.dry_run && ((!l->state && cli_state_open(NULL, &l->state) < 0) ||
		                      launch_layer_make(&l->layer, l->run_id) < 0))
			return -1;
		l->po.overlay = 1;
	} else if (l->a.propose_caps) {
		cli_errorf("--propose-size and --propose-inodes go with --propose");
		return -1;
	}
	l->po.cwd_writable = l->prof.workspace_write;
	l->po.profile = l->prof.name;
	l->po.argv = l->cmd;
	l->po.host_cwd = l->a.cwd;
	l->po.binds = l->a.binds;
	l->po.nbinds = l->a.nbinds;
	l->po.env = l->a.env;
	l->po.nenv = l->a.nenv;
	l->po.secrets = l->a.secrets;
	l->po.nsecrets = l->a.nsecrets;
	l->po.lang = getenv("LANG");
	l->po.term = getenv("TERM");
	if (l->tty && !l->po.term)
		l->po.term = "vt100";
	l->po.tty = l->tty;
	l->po.lc_all = getenv("LC_ALL");
	l->po.scratch_host = l->a.scratch;
	l->po.rootfs = l->a.rootfs;
	if (l->a.image && launch_image(l) < 0)
		return -1;
	l->po.limits = &l->a.limits;
	if (launch_host_ids_apply(&l->ids, &l->po, &l->slot, &l->err) < 0) {
		l->rc = launch_refuse(&l->a, l->run_id, CD_REASON_SETUP_ERROR, l->err.msg);
		return -1;
	}
	l->po.allow_degraded = l->a.allow_degraded;
	l->po.skip_socket_scan = l->a.skip_socket_scan;
	l->po.allow_home = l->a.allow_home;
	l->po.caller_home = getenv("HOME");
	l->po.caller_xdg_config_home = getenv("XDG_CONFIG_HOME");
	l->po.caller_git_config_global = getenv("GIT_CONFIG_GLOBAL");
	l->po.caller_git_config_system = getenv("GIT_CONFIG_SYSTEM");
	l->po.caller_git_template_dir = getenv("GIT_TEMPLATE_DIR");
	l->po.caller_path = getenv("PATH");
	l->po.cover_files = l->prof.cover_files;
	l->po.ncover_files = l->prof.ncover;
	l->po.egress = l->a.nallow > 0;
	launch_private_paths(&l->a, l->priv, l->privbuf, &l->po.nprivate);
	l->po.private_paths = (const char *const *)l->priv;
	l->po.scan_cache = launch_scan_cache(l->scan_cache, sizeof l->scan_cache);
	l->po.watch_sock = launch_watch_sock(l->watch_sock, sizeof l->watch_sock);
	if (cd_plan_build(&l->po, &l->plan, &l->err) < 0) {
		l->rc = launch_refuse(&l->a, l->run_id, CD_REASON_SETUP_ERROR, l->err.msg);
		return -1;
	}
	/* The slot's check ran meanwhile; a slot found busy was replaced. */
	r = launch_host_ids_confirm(&l->ids, &l->po, &l->slot, &l->err);
	if (r == 1) {
		cd_plan_free(l->plan);
		l->plan = NULL;
		r = cd_plan_build(&l->po, &l->plan, &l->err);
	}
	if (r < 0) {
		l->rc = launch_refuse(&l->a, l->run_id, CD_REASON_SETUP_ERROR, l->err.msg);
		return -1;
	}
	return 0;
}

/* --dry-run: the plan as JSON, nothing run. */
static int print_plan(const struct launch *l)
{
	char *d = cd_plan_describe(l->plan);
	if (!d) {
		cli_errorf("out of memory");
		return CD_EXIT_CORDON;
	}
	printf("%s\n", d);
	free(d);
	return CD_EXIT_OK;
}

/* The intent, the signals and the sandbox's stdio, hooks and egress. */
static int setup_io(struct launch *l)
{
	l->rq.cwd = l->plan->cwd;
	l->intent.gate = &l->gate;
	l->intent.rq = &l->rq;
	l->intent.plan = l->plan;
	l->intent.dec = &l->dec;
	l->intent.done = 0;
	l->sfd = launch_signals_setup(&l->oldmask, l->tty);
	if (l->sfd < 0) {
		cli_errorf("cannot set up signal forwarding: %s", cd_strerror(-errno));
		return -1;
	}
	fflush(stdout);
	if (l->prof.workspace_write)
		l->missing_before = launch_missing_protected(l->plan->cwd);
	l->io.stdin_fd = STDIN_FILENO;
	l->io.stdout_fd = STDOUT_FILENO;
	l->io.stderr_fd = STDERR_FILENO;
	/* A terminal gets no clipboard or title strings from the sandbox. */
	l->io.filter_stdout = isatty(STDOUT_FILENO);
	l->io.filter_stderr = isatty(STDERR_FILENO);
	l->io.signal_fd = l->sfd;
	l->io.on_proxy = NULL;
	l->io.proxy_ctx = NULL;
	l->io.winsize_fd = -1;
	l->io.record = NULL;
	l->io.record_ctx = NULL;
	l->io.on_layer = l->a.propose ? launch_layer_take : NULL;
	l->io.layer_ctx = &l->layer;
	if (l->tty) {
		l->io.winsize_fd = isatty(STDIN_FILENO)    ? STDIN_FILENO
		                   : isatty(STDOUT_FILENO) ? STDOUT_FILENO
		                                           : -1;
		l->io.record = cd_session_add;
		l->io.record_ctx = &l->sess;
	}
	/* The intent becomes durable while the child builds the sandbox; the
	 * command starts only after. */
	l->io.before_exec = record_intent;
	l->io.before_exec_ctx = &l->intent;
	l->io.masker = l->masker;
	l->io.mask = l->masker ? &l->dec.mask : NULL;
	/* Masked output is held until the end: that stream stays relayed. */
	l->io.direct_stdin = l->a.direct_stdio;
	l->io.direct_stdout =
	        l->a.direct_stdio && !(l->io.mask && cd_mask_rules_active(l->io.mask));
	if (l->epol) {
		l->eg.a = &l->a;
		l->eg.run_id = l->run_id;
		if (cd_mask_rules_active(&l->dec.mask)) {
			/* A name or a URL can carry what the grant masks: the
			 * proxy's records are minimized as the run's are. */
			json_t *j = cd_logmask_rules_json(&l->dec.mask);
			l->eg.log_mask = j ? json_dumps(j, JSON_COMPACT) : NULL;
			json_decref(j);
			if (!l->eg.log_mask) {
				cli_errorf("egress proxy: out of memory");
				return -1;
			}
		}
		/* The stop pipe's read end goes to the proxy: not close-on-exec
		 * there (dup2 clears it), close-on-exec everywhere else. */
		if (pipe2(l->eg.stop, O_CLOEXEC) < 0) {
			cli_errorf("egress proxy: %s", cd_strerror(-errno));
			return -1;
		}
		l->io.on_proxy = launch_egress_serve;
		l->io.proxy_ctx = &l->eg;
	}
	return 0;
}

/* The session's terminal and the run; -1 when nothing ran (no intent). */
static int run(struct launch *l)
{
	if (l->tty) {
		int r;

		l->sess_fd =
		        launch_session_open(&l->a, l->run_id, l->sess_path, sizeof l->sess_path);
		if (l->sess_fd < 0)
			return -1;
		r = launch_tty_raw(STDIN_FILENO);
		if (r < 0) {
			cli_errorf("cannot put the terminal in raw mode: %s", cd_strerror(r));
			return -1;
		}
		l->raw = 1;
	}
	cd_sandbox_run(l->plan, l->run_id, &l->io, &l->res, &l->err);
	/* Nothing of the sandbox is left: its id's keeper may go (reaped at
	 * the end, while the slot's lock is held until then). */
	cd_idslot_end_keeper(&l->slot);
	if (l->raw) {
		launch_tty_restore();
		l->raw = 0;
	}
	launch_egress_stop(&l->eg);
	if (!l->intent.done) {
		/* Nothing ran; without an intent there is nothing to pair a
		 * result with: the refusal is the record-less outcome. */
		cli_errorf("%s", l->res.error[0] ? l->res.error : "the run could not be recorded");
		l->rc = CD_EXIT_CORDON;
		if (l->a.json)
			launch_refuse(&l->a, l->run_id, CD_REASON_SETUP_ERROR, l->res.error);
		return -1;
	}
	return 0;
}

/* The outcome said, recorded (the result record, the proposal) and
 * printed as JSON when asked for. */
static void record(struct launch *l)
{
	json_t *extra;

	l->rc = l->res.exit_code;
	if (l->res.reason == CD_REASON_SETUP_ERROR)
		cli_errorf("%s", l->res.error);
	else if (l->res.error[0])
		cli_errorf("%s", l->res.error); /* exec failure: not found, not executable */
	else if (l->res.reason == CD_REASON_TIMEOUT)
		cli_errorf("timeout: killed after %llu ms",
		           (unsigned long long)l->plan->limits.timeout_ms);
	else if (l->res.reason == CD_REASON_OUTPUT_LIMIT)
		cli_errorf("output limit: killed after %llu bytes on one stream",
		           (unsigned long long)l->plan->limits.output_limit);
	if ((l->a.set & SET_MEMORY) && l->res.reason != CD_REASON_SETUP_ERROR &&
	    strcmp(cd_quotas_memory_cap(l->res.mech_memory), "approximate") == 0) {
		char mem[32];

		cli_size_human(l->plan->limits.memory, mem, sizeof mem);
		cli_warnf("--memory %s is approximate: no writable cgroup, so it is a per-process "
		          "rlimit (memfds and System V IPC refused, scratch within it)",
		          mem);
	}
	if (l->prof.workspace_write || l->plan->nplanted) {
		l->planted = launch_planted_paths(l->plan, l->missing_before, &l->planted_check);
		/* fail closed: an unchecked tree may hold what the host runs */
		const char *c = json_string_value(l->planted_check);

		if (!c || strcmp(c, "complete") != 0) {
			cli_errorf("the check for planted git or host-run files was %s; exit %d "
			           "(the command's own status is in the record)",
			           c ? c : "not recorded", CD_EXIT_CORDON);
			l->rc = CD_EXIT_CORDON;
		}
	}
	if (l->a.propose)
		launch_layer_measure(&l->layer, &l->plan->limits);
	extra = json_object();
	if (extra && l->layer.measured)
		json_object_set_new(extra, "proposal_layer", launch_layer_json(&l->layer));
	if (extra && l->planted)
		json_object_set(extra, "planted_paths", l->planted);
	if (extra && l->planted_check)
		json_object_set(extra, "planted_check", l->planted_check);
	if (extra)
		json_object_set_new(extra, "covered_paths", launch_covered_paths(l->plan));
	/* Which path recorded the run: the service's or the run's own. */
	if (extra && l->audit)
		json_object_set_new(extra, "path", json_string(cli_warm_path()));
	if (extra && l->tty) {
		json_object_set_new(extra, "tty", json_true());
		l->session = launch_session_save(l->sess_fd, l->sess_path, &l->sess);
		if (l->session)
			json_object_set_new(extra, "session", l->session);
	}
	if (cd_gate_run_result(&l->gate, &l->rq, l->plan, &l->res, extra, &l->err) < 0) {
		cli_errorf("the run finished (exit %d) but its result could not be recorded: %s",
		           l->res.exit_code, l->err.msg);
		l->rc = CD_EXIT_CORDON;
	}
	json_decref(extra);
	if (l->a.propose && launch_make_proposal(&l->layer, l->plan, &l->a, l->run_id, &l->res,
	                                         l->state, l->audit) < 0)
		l->rc = CD_EXIT_CORDON;
	if (l->a.json && launch_emit_result(&l->a, l->plan, &l->res, l->planted, l->planted_check,
	                                    l->layer.measured ? &l->layer : NULL) < 0)
		cli_warnf("could not write the result record");
}

/* Everything of the run released, its host id last; the exit status. */
static int finish(struct launch *l)
{
	launch_layer_done(&l->layer);
	launch_tty_restore();
	launch_egress_stop(&l->eg);
	free(l->eg.log_mask);
	cd_session_release(&l->sess);
	if (l->sess_fd >= 0) {
		close(l->sess_fd);
		if (!l->session)
			unlink(l->sess_path); /* nothing ran: no recording to keep */
	}
	cd_egress_policy_free(l->epol);
	json_decref(l->planted);
	json_decref(l->planted_check);
	if (l->sfd >= 0)
		close(l->sfd);
	cd_plan_free(l->plan);
	cd_masker_free(l->masker);
	cd_policy_free(l->policy);
	cd_state_close(l->state);
	cd_audit_close(l->audit);
	launch_args_release(&l->a);
	cd_arena_release(&l->arena);
	/* Last: the run's host id is free once nothing of the run is left. */
	cd_idslot_release(&l->slot);
	return l->rc;
}

int cli_launch(int argc, char **argv, const struct cli_launch_mode *mode)
{
	struct launch l;

	launch_init(&l, mode);
	if (check_options(&l, argc, argv) < 0)
		return finish(&l);
	/* A root caller's slot is checked while the policy loads. */
	launch_host_ids_start(&l.ids, &l.slot);
	if (open_policy(&l) < 0 || decide(&l) < 0 || check_grant(&l, argv) < 0 || shape(&l) < 0 ||
	    build_plan(&l) < 0)
		return finish(&l);
	if (l.a.dry_run) {
		l.rc = print_plan(&l);
		return finish(&l);
	}
	if (setup_io(&l) == 0 && run(&l) == 0)
		record(&l);
	return finish(&l);
}
