/* cli-launch-egress.c — egress for one run (--allow-host, or a profile's
 * allow_hosts): the allowlist built and checked before anything starts,
 * and the proxy, a fresh `cordon proxy` outside the sandbox serving the
 * listening socket the sandbox made on its loopback.  Every connection
 * the command attempts is the sandbox's and untrusted; the proxy decides
 * and logs it.
 */
#include "cli.h"
#include "cli-launch-int.h"

#include "egress/egress-proxy.h"
#include "util/util.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

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

void launch_egress_serve(int listen_fd, void *ctx)
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

void launch_egress_stop(struct egress *e)
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

int launch_egress_policy(const struct run_args *a, struct cd_egress_policy **ret)
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
