/* cmd-oci-run.c — the container's supervisor (see cmd-oci.h): forked by
 * `cordon-oci create`, it stays as the process the shim watches.
 *
 * Before create returns it opens the audit log, loads the policy, asks
 * the gate and builds the plan; what refuses the container is reported
 * on the create's pipe (its stderr is that pipe until then), so containerd
 * shows it.  Then it waits for `start`, makes the intent durable while
 * the sandbox is built, runs, records the result and exits with the
 * container's status.
 *
 * Where records go: $CORDON_AUDIT and $CORDON_STATE from containerd's
 * environment, else those named in /etc/cordon/oci.env (NAME=VALUE lines;
 * only CORDON_* names are read), else cordon's defaults.  Which policy:
 * the annotation cordon.policy names one of the operator's, NAME.yaml in
 * $CORDON_OCI_POLICY_DIR (default /etc/cordon/policies); without it
 * $CORDON_OCI_POLICY, the operator's default; without either the run is
 * the operator's own (allowed, recorded).  The agent: cordon.agent, else
 * $CORDON_OCI_AGENT.  A pod can choose among the operator's policies,
 * never bring its own.
 */
#include "cli.h"
#include "cli-warm.h"
#include "cmd-oci.h"

#include "cli-audit.h"
#include "cli-launch.h"
#include "gate/gate.h"
#include "sandbox/idslot.h"
#include "sandbox/sandbox.h"
#include "util/bounds.h"
#include "util/util.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <time.h>
#include <unistd.h>

#define OCI_ENV_FILE   "/etc/cordon/oci.env"
#define OCI_POLICY_DIR "/etc/cordon/policies"

struct sup {
	const struct oci_ctr *c;
	struct cd_oci_spec *spec;
	struct cd_audit *audit;
	struct cd_policy *policy;
	char policy_path[CD_PATH_MAX];
	struct cd_gate gate;
	struct cd_run_request rq;
	struct cd_decision dec;
	struct cd_plan_opts po;
	struct cd_limits lim;
	struct cd_plan_bind *binds;
	const char **tmpfs;
	struct cd_plan *plan;
	struct cd_idslot slot;
	char privbuf[9][CD_PATH_MAX];
	char *priv[9];
	char run_id[CD_RUN_ID_LEN + 1];
	struct cd_err err;
	int sfd, intent_done;
	int tty; /* process.terminal: the pty's follower (its controller went to the shim) */
	unsigned inherit_ns; /* oci_ns_enter */
};

void oci_env_defaults(void)
{
	char line[CD_PATH_MAX + 64], *eq, *nl;
	FILE *f = fopen(OCI_ENV_FILE, "re");

	if (!f)
		return;
	while (fgets(line, sizeof line, f)) {
		nl = strchr(line, '\n');
		if (nl)
			*nl = '\0';
		eq = strchr(line, '=');
		if (!eq || strncmp(line, "CORDON_", 7) != 0)
			continue;
		*eq = '\0';
		setenv(line, eq + 1, 0);
	}
	fclose(f);
}

static int name_ok(const char *s)
{
	size_t i, n = strlen(s);

	if (n == 0 || n > 64)
		return 0;
	for (i = 0; i < n; i++) {
		if (!isalnum((unsigned char)s[i]) && s[i] != '-' && s[i] != '_')
			return 0;
	}
	return 1;
}

static int load_policy(struct sup *s)
{
	const char *dir = getenv("CORDON_OCI_POLICY_DIR"), *def = getenv("CORDON_OCI_POLICY");
	struct cd_err rerr = { 0, "" };
	int n;

	if (s->spec->policy) {
		if (!name_ok(s->spec->policy)) {
			cli_errorf(
			        "annotation cordon.policy '%s': a policy name (letters, digits, - "
			        "and _), not a path",
			        s->spec->policy);
			return -1;
		}
		n = snprintf(s->policy_path, sizeof s->policy_path, "%s/%s.yaml",
		             dir && *dir ? dir : OCI_POLICY_DIR, s->spec->policy);
		if (n < 0 || (size_t)n >= sizeof s->policy_path)
			return -1;
	} else if (def && *def) {
		snprintf(s->policy_path, sizeof s->policy_path, "%s", def);
	} else {
		return 0;
	}
	if (cd_policy_load_file(s->policy_path, &s->policy, &s->err) < 0) {
		cli_errorf("policy: %s", s->err.msg);
		if (cd_gate_policy_load(s->audit, s->run_id, s->policy_path, NULL, s->err.msg, 0,
		                        &rerr) < 0)
			cli_errorf("%s", rerr.msg);
		return -1;
	}
	if (cd_gate_policy_load(s->audit, s->run_id, s->policy_path, s->policy, NULL, 1, &rerr) <
	    0) {
		cli_errorf("%s", rerr.msg);
		return -1;
	}
	return 0;
}

static int decide(struct sup *s)
{
	const char *agent = s->spec->agent ? s->spec->agent : getenv("CORDON_OCI_AGENT");

	if (s->policy && (!agent || !*agent)) {
		cli_errorf("the policy %s decides per agent: annotate the container with "
		           "cordon.agent (or set CORDON_OCI_AGENT)",
		           s->policy_path);
		return -1;
	}
	s->rq.run_id = s->run_id;
	s->rq.agent = agent && *agent ? agent : NULL;
	s->rq.task = s->spec->task;
	s->rq.tool = s->spec->tool ? s->spec->tool : "container";
	s->rq.argv = s->spec->args;
	s->rq.cwd = s->c->bundle;
	s->rq.decision = &s->dec;
	s->gate.audit = s->audit;
	s->gate.policy = s->policy;
	s->gate.policy_path = s->policy ? s->policy_path : NULL;
	s->gate.now = (int64_t)time(NULL);
	if (cd_gate_decide_run(&s->gate, &s->rq, &s->dec, &s->err) < 0) {
		cli_errorf("%s", s->err.msg);
		return -1;
	}
	if (s->dec.verdict == CD_VERDICT_NEEDS_APPROVAL) {
		cli_errorf("the container needs approval (%s), which a container start cannot wait "
		           "for",
		           s->dec.approval ? s->dec.approval : "human");
		return -1;
	}
	if (s->dec.verdict != CD_VERDICT_ALLOW) {
		cli_errorf("denied by policy: %s", s->dec.reason);
		return -1;
	}
	if (cd_mask_rules_active(&s->dec.mask) || s->dec.nfield_lists) {
		cli_errorf("the grant masks output, which cordon's OCI runtime does not apply");
		return -1;
	}
	return 0;
}

static int build(struct sup *s)
{
	size_t n = 0;

	memset(&s->po, 0, sizeof s->po);
	if (cd_oci_plan_opts(s->spec, &s->po, &s->lim, &s->binds, &s->tmpfs, &s->err) < 0 ||
	    launch_host_ids(&s->po, &s->slot, &s->err) < 0) {
		cli_errorf("%s", s->err.msg);
		return -1;
	}
	/* cordon's own files never show inside (a bind that holds them). */
	if (cli_audit_path(NULL, s->privbuf[n], CD_PATH_MAX) == 0) {
		s->priv[n] = s->privbuf[n];
		n++;
		if (cli_checkpoint_path(NULL, s->privbuf[n - 1], s->privbuf[n], CD_PATH_MAX) == 0) {
			s->priv[n] = s->privbuf[n];
			n++;
		}
	}
	if (cli_config_path("audit.key", s->privbuf[n], CD_PATH_MAX) == 0) {
		s->priv[n] = s->privbuf[n];
		n++;
	}
	if (cli_state_path(NULL, s->privbuf[n], CD_PATH_MAX) == 0) {
		s->priv[n] = s->privbuf[n];
		n++;
	}
	if (cli_mask_key_path(s->privbuf[n], CD_PATH_MAX) == 0) {
		s->priv[n] = s->privbuf[n];
		n++;
	}
	n += cli_warm_private(s->privbuf + n, s->priv + n, 9 - n);
	s->po.private_paths = (const char *const *)s->priv;
	s->po.nprivate = n;
	s->po.profile = "oci";
	if (cd_plan_build(&s->po, &s->plan, &s->err) < 0) {
		cli_errorf("%s", s->err.msg);
		return -1;
	}
	/* root.path was checked resolved (oci_check_root) and the plan
	 * resolved it again: a symlink swapped in between would have the plan
	 * bind a host tree, idmapped (an attacker's review read /etc/shadow
	 * that way).  After this, the child opens every entry without
	 * following symlinks, so a later swap fails the run. */
	if (!s->plan->rootfs || strcmp(s->plan->rootfs, s->spec->root) != 0) {
		cli_errorf("root.path %s changed while it was checked (a symlink swapped in?): "
		           "refused",
		           s->spec->root);
		return -1;
	}
	return 0;
}

static int signals_block(struct sup *s)
{
	static const int sigs[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2 };
	sigset_t set;
	size_t i;

	signal(SIGPIPE, SIG_IGN);
	sigemptyset(&set);
	for (i = 0; i < sizeof sigs / sizeof sigs[0]; i++)
		sigaddset(&set, sigs[i]);
	sigaddset(&set, OCI_KILL_SIGNAL);
	if (sigprocmask(SIG_BLOCK, &set, NULL) < 0)
		return -1;
	s->sfd = signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
	return s->sfd < 0 ? -1 : 0;
}

/* Until `start` writes to the fifo.  A signal first ends the container
 * before anything ran: 128+signal (137 for kill's KILL). */
static int wait_start(struct sup *s)
{
	struct signalfd_siginfo si;
	struct pollfd pf[2];
	char b;
	int fd = -1;
	ssize_t n;

	for (;;) {
		if (fd < 0)
			fd = open(s->c->fifo, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
		if (fd < 0)
			return -1;
		pf[0].fd = fd;
		pf[0].events = POLLIN;
		pf[1].fd = s->sfd;
		pf[1].events = POLLIN;
		if (poll(pf, 2, -1) < 0 && errno != EINTR)
			return -1;
		if (pf[1].revents & POLLIN && read(s->sfd, &si, sizeof si) == (ssize_t)sizeof si) {
			close(fd);
			return 128 +
			       ((int)si.ssi_signo == OCI_KILL_SIGNAL ? SIGKILL : (int)si.ssi_signo);
		}
		if (!(pf[0].revents & (POLLIN | POLLHUP)))
			continue;
		n = read(fd, &b, 1);
		if (n == 1)
			break;
		close(fd); /* a writer came and went without a word: wait again */
		fd = -1;
	}
	close(fd);
	unlink(s->c->fifo);
	return 0;
}

static int record_intent(void *ctx, char *msg, size_t msglen)
{
	struct sup *s = ctx;
	struct cd_err err = { 0, "" };

	if (cd_gate_run_intent(&s->gate, &s->rq, s->plan, &s->dec, &err) < 0) {
		snprintf(msg, msglen, "%s", err.msg);
		return -1;
	}
	s->intent_done = 1;
	return 0;
}

static json_t *oci_details(const struct sup *s)
{
	static const char *const ns_name[CD_OCI_NS_N] = { "network", "ipc", "uts" };
	json_t *ann = json_loads(s->spec->annotations, 0, NULL), *ns = json_object();
	size_t k;

	/* Each namespace: the path joined (a pod's), "own" (made for it). */
	for (k = 0; ns && k < CD_OCI_NS_N; k++)
		json_object_set_new(ns, ns_name[k],
		                    json_string(s->spec->ns_path[k] ? s->spec->ns_path[k] : "own"));
	return json_pack("{s:{s:s,s:s,s:s,s:o,s:i,s:i,s:i,s:s?,s:s?,s:o?}}", "oci", "id", s->c->id,
	                 "bundle", s->c->bundle, "rootfs", s->spec->root, "annotations",
	                 ann ? ann : json_object(), "capabilities_dropped",
	                 (int)s->spec->ncaps_dropped, "spec_uid", (int)s->spec->uid, "spec_gid",
	                 (int)s->spec->gid, "cgroups_path", s->spec->cgroups_path, "hostname",
	                 s->spec->hostname, "namespaces", ns);
}

static int run(struct sup *s)
{
	struct cd_sandbox_io io;
	struct cd_result res;
	json_t *extra;

	memset(&io, 0, sizeof io);
	memset(&res, 0, sizeof res);
	io.stdin_fd = s->tty >= 0 ? s->tty : STDIN_FILENO;
	io.stdout_fd = s->tty >= 0 ? s->tty : STDOUT_FILENO;
	io.stderr_fd = STDERR_FILENO;
	io.direct_stdin = io.direct_stdout = io.direct_tty = s->tty >= 0;
	io.signal_fd = s->sfd;
	io.kill_signo = OCI_KILL_SIGNAL;
	io.winsize_fd = -1;
	io.before_exec = record_intent;
	io.before_exec_ctx = s;
	io.inherit_ns = s->inherit_ns;
	io.cgroup_at = s->spec->cgroup_at;
	cd_sandbox_run(s->plan, s->run_id, &io, &res, &s->err);
	if (!s->intent_done) {
		cli_errorf("%s", res.error[0] ? res.error : "the run could not be recorded");
		return CD_EXIT_CORDON;
	}
	if (res.error[0])
		cli_errorf("%s", res.error);
	extra = oci_details(s);
	if (cd_gate_run_result(&s->gate, &s->rq, s->plan, &res, extra, &s->err) < 0) {
		cli_errorf("%s", s->err.msg);
		json_decref(extra);
		return CD_EXIT_CORDON;
	}
	json_decref(extra);
	return res.exit_code;
}

/* Until "ok" is said, stderr is the report pipe: every refusal's line
 * (cli_errorf) goes to create, which logs it for containerd. */
static int prepare(struct sup *s, int report_fd, int *saved_err)
{
	*saved_err = fcntl(STDERR_FILENO, F_DUPFD_CLOEXEC, 3);
	if (*saved_err < 0 || dup2(report_fd, STDERR_FILENO) < 0)
		return -1;
	oci_env_defaults();
	if (cd_run_id_new(s->run_id) < 0) {
		cli_errorf("cannot make a run id: no randomness");
		return -1;
	}
	if (cli_audit_open(NULL, &s->audit) < 0 || load_policy(s) < 0 || decide(s) < 0)
		return -1;
	/* Allowed, but what the plan or the namespaces refuse is on record
	 * too (build() logged it). */
	if (build(s) < 0 ||
	    (s->spec->terminal && oci_tty_give(s->c->console, &s->tty, &s->err) < 0) ||
	    oci_ns_enter(s->spec, &s->inherit_ns, &s->err) < 0) {
		if (s->plan)
			cli_errorf("%s", s->err.msg);
		oci_record_refusal(s->c, s->audit, s->err.msg);
		return -1;
	}
	if (signals_block(s) < 0) {
		cli_errorf("cannot set up signal forwarding: %s", cd_strerror(-errno));
		return -1;
	}
	return 0;
}

static int drop_stdio(void)
{
	int fd = open("/dev/null", O_RDWR | O_CLOEXEC), i;

	if (fd < 0)
		return -1;
	for (i = 0; i < 3; i++) {
		if (dup2(fd, i) < 0) {
			close(fd);
			return -1;
		}
	}
	close(fd);
	return 0;
}

int oci_supervise(const struct oci_ctr *c, struct cd_oci_spec *spec, int report_fd)
{
	struct sup s;
	int saved_err = -1, rc;

	memset(&s, 0, sizeof s);
	s.c = c;
	s.spec = spec;
	s.slot.fd = -1;
	s.sfd = -1;
	s.tty = -1;
	if (prepare(&s, report_fd, &saved_err) < 0) {
		rc = CD_EXIT_CORDON;
		goto out;
	}
	if (write(report_fd, OCI_READY, sizeof OCI_READY - 1) != (ssize_t)sizeof OCI_READY - 1)
		return CD_EXIT_CORDON;
	fflush(stderr);
	dup2(saved_err, STDERR_FILENO);
	close(saved_err);
	close(report_fd);
	report_fd = -1;
	/* With a terminal the runtime's stdio is the shim's output pipe,
	 * read until every writer closed it (go-runc): runc's create leaves
	 * nothing holding it, and neither may the supervisor. */
	if (s.tty >= 0 && drop_stdio() < 0) {
		rc = CD_EXIT_CORDON;
		goto out;
	}
	rc = wait_start(&s);
	if (rc == 0)
		rc = run(&s);
out:
	if (report_fd >= 0)
		close(report_fd);
	if (s.tty >= 0)
		close(s.tty);
	cd_plan_free(s.plan);
	cd_idslot_release(&s.slot);
	free(s.binds);
	free(s.tmpfs);
	cd_policy_free(s.policy);
	cd_audit_close(s.audit);
	return rc;
}
