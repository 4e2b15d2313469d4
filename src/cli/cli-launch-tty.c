/* cli-launch-tty.c — the terminal and the session: the signals forwarded
 * to the command, the shell `cordon shell` starts without a command, the
 * person's terminal in raw mode (restored on every way out) and the
 * session recording next to the audit log.  What the sandbox prints
 * reaches the terminal through the supervisor's filter, not from here.
 */
#include "cli.h"
#include "cli-launch-int.h"

#include "audit/session.h"
#include "cli-audit.h"
#include "util/util.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <termios.h>
#include <unistd.h>

/* Signals for the command are read from a signalfd and forwarded by the
 * sandbox; blocking them here keeps cordon alive to report. */
int launch_signals_setup(sigset_t *old, int tty)
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

/* cordon shell without a command: the person's shell when the sandbox
 * sees it (the system directories are bound at the same paths), else
 * /bin/sh; interactive either way. */
static char *shell_argv[3];

char **launch_default_shell(void)
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

void launch_tty_restore(void)
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

int launch_tty_raw(int fd)
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
int launch_session_open(const struct run_args *a, const char *run_id, char *path, size_t cap)
{
	char *slash;
	int n, fd;

	if (cli_audit_local(a->audit, path, cap) < 0 || !(slash = strrchr(path, '/'))) {
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
json_t *launch_session_save(int fd, const char *path, const struct cd_session *sess)
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
