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

#include "cli-audit.h"
#include "egress/egress-proxy.h"
#include "gate/gate.h"
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
