/* cli-spawn.c — start a command in a cordon run sandbox with pipes for its
 * stdio (cordon mcp's server, cordon inventory's probes).  The launch is an
 * ordinary `cordon run --policy`: decided, recorded, the grant's profile. */
#include "cli.h"

#include "util/bounds.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

void cli_die_with_parent(pid_t parent)
{
	/* Armed first, then checked: a parent that died before the signal
	 * took effect shows as a parent pid that is no longer its. */
	if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid() != parent)
		_exit(CD_EXIT_CORDON);
}

int cli_spawn_run(const struct cli_spawn *sp, pid_t *ret_pid, int *to, int *from, int *errfd)
{
	int in[2], outp[2], errp[2];
	pid_t pid, self = getpid();

	if (pipe2(in, O_CLOEXEC) < 0 || pipe2(outp, O_CLOEXEC) < 0 || pipe2(errp, O_CLOEXEC) < 0) {
		cli_errorf("cannot make pipes: %s", strerror(errno));
		return -1;
	}
	pid = fork();
	if (pid < 0) {
		cli_errorf("cannot fork: %s", strerror(errno));
		return -1;
	}
	if (pid == 0) {
		const char *argv[32 + CD_PLAN_MAX_ARGV];
		size_t n = 0, i;
		sigset_t none;

		/* The server's supervisor dies with us, and its sandbox with it
		 * (cordon run's own parent-death kill). */
		cli_die_with_parent(self);
		if (dup2(in[0], 0) < 0 || dup2(outp[1], 1) < 0 || dup2(errp[1], 2) < 0)
			_exit(CD_EXIT_CORDON);
		syscall(SYS_close_range, 3, ~0U, 0);
		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		argv[n++] = "cordon";
		argv[n++] = "run";
		argv[n++] = "--policy";
		argv[n++] = sp->policy;
		argv[n++] = "--agent";
		argv[n++] = sp->agent;
		if (sp->task) {
			argv[n++] = "--task";
			argv[n++] = sp->task;
		}
		argv[n++] = "--tool";
		argv[n++] = sp->tool;
		if (sp->audit) {
			argv[n++] = "--audit";
			argv[n++] = sp->audit;
		}
		if (sp->state) {
			argv[n++] = "--state";
			argv[n++] = sp->state;
		}
		if (sp->cwd) {
			argv[n++] = "--cwd";
			argv[n++] = sp->cwd;
		}
		if (sp->direct)
			argv[n++] = "--direct-stdio";
		argv[n++] = "--";
		for (i = 0; sp->cmd[i] && n < sizeof argv / sizeof argv[0] - 1; i++)
			argv[n++] = sp->cmd[i];
		argv[n] = NULL;
		execv("/proc/self/exe", (char *const *)argv);
		_exit(CD_EXIT_CORDON);
	}
	close(in[0]);
	close(outp[1]);
	close(errp[1]);
	*ret_pid = pid;
	*to = in[1];
	*from = outp[0];
	*errfd = errp[0];
	fcntl(*to, F_SETFL, O_NONBLOCK);
	fcntl(*from, F_SETFL, O_NONBLOCK);
	fcntl(*errfd, F_SETFL, O_NONBLOCK);
	return 0;
}
