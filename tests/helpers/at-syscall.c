/* at-syscall — run a command, and run a shell script at the moment the
 * command first enters a given system call (before the call proceeds).
 * Tests use it to make a race deterministic: e.g. swap a directory for a
 * symlink after cordon planned the run but before it clones the sandbox.
 *
 *   at-syscall [-w | -W SECONDS] NR SCRIPT CMD [ARG...]
 *
 * -w: NR makes a process (clone3, fork): hold the command at the call's
 * return until that new process has ended (a zombie), at most 20 s, e.g.
 * to let a sandbox child fail before its supervisor goes on.  -W: the
 * same, at most SECONDS (a new process that waits for its parent cannot
 * end while the parent is held: a run that goes on).  Only the command's
 * first process is traced (its children are not), and it is let go right
 * after that.  Exits with the command's
 * status (128+signal when killed), 2 when the helper itself fails. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/wait.h>
#include <unistd.h>

static int run_script(const char *script)
{
	int st;
	pid_t pid = fork();

	if (pid < 0)
		return -1;
	if (pid == 0) {
		execl("/bin/sh", "sh", "-c", script, (char *)NULL);
		_exit(127);
	}
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* Wait (at most ~secs s) until process pid is a zombie or gone. */
static void wait_ended(long pid, int secs)
{
	char path[64], buf[512];
	int i;

	snprintf(path, sizeof path, "/proc/%ld/stat", pid);
	for (i = 0; i < secs * 100; i++) {
		FILE *f = fopen(path, "r");
		size_t n;
		char *rp;

		if (!f)
			return;
		n = fread(buf, 1, sizeof buf - 1, f);
		fclose(f);
		buf[n] = '\0';
		rp = strrchr(buf, ')');
		if (!rp || (rp[1] == ' ' && (rp[2] == 'Z' || rp[2] == 'X')))
			return;
		usleep(10000);
	}
}

static int status_of(int st)
{
	if (WIFEXITED(st))
		return WEXITSTATUS(st);
	return 128 + WTERMSIG(st);
}

int main(int argc, char **argv)
{
	struct __ptrace_syscall_info info;
	unsigned long nr;
	char *end;
	pid_t pid;
	int st, sig = 0, wait_child = 0, fired = 0;

	if (argc > 1 && strcmp(argv[1], "-w") == 0) {
		wait_child = 20;
		argv++;
		argc--;
	} else if (argc > 2 && strcmp(argv[1], "-W") == 0) {
		long secs = strtol(argv[2], &end, 10);

		if (*end || secs < 1 || secs > 600) {
			fprintf(stderr, "at-syscall: -W takes 1 to 600 seconds\n");
			return 2;
		}
		wait_child = (int)secs;
		argv += 2;
		argc -= 2;
	}
	if (argc < 4) {
		fprintf(stderr, "usage: at-syscall [-w | -W SECONDS] NR SCRIPT CMD [ARG...]\n");
		return 2;
	}
	nr = strtoul(argv[1], &end, 10);
	if (*end) {
		fprintf(stderr, "at-syscall: bad syscall number '%s'\n", argv[1]);
		return 2;
	}
	pid = fork();
	if (pid < 0)
		return 2;
	if (pid == 0) {
		if (ptrace(PTRACE_TRACEME, 0, NULL, NULL) < 0)
			_exit(2);
		raise(SIGSTOP);
		execvp(argv[3], argv + 3);
		_exit(127);
	}
	if (waitpid(pid, &st, 0) < 0 || !WIFSTOPPED(st))
		return 2;
	if (ptrace(PTRACE_SETOPTIONS, pid, NULL,
	           (void *)(long)(PTRACE_O_TRACESYSGOOD | PTRACE_O_EXITKILL)) < 0)
		return 2;
	for (;;) {
		if (ptrace(PTRACE_SYSCALL, pid, NULL, (void *)(long)sig) < 0)
			return 2;
		sig = 0;
		if (waitpid(pid, &st, 0) < 0)
			return 2;
		if (WIFEXITED(st) || WIFSIGNALED(st))
			return status_of(st);
		if (!WIFSTOPPED(st))
			continue;
		if (WSTOPSIG(st) != (SIGTRAP | 0x80)) {
			/* A signal for the command (the exec's own SIGTRAP aside):
			 * delivered when it goes on. */
			sig = WSTOPSIG(st) == SIGTRAP ? 0 : WSTOPSIG(st);
			continue;
		}
		memset(&info, 0, sizeof info);
		if (ptrace(PTRACE_GET_SYSCALL_INFO, pid, (void *)sizeof info, &info) < 0)
			return 2;
		if (!fired && info.op == PTRACE_SYSCALL_INFO_ENTRY && info.entry.nr == nr) {
			if (run_script(argv[2]) != 0)
				fprintf(stderr, "at-syscall: the script failed\n");
			fired = 1;
			if (wait_child)
				continue; /* on to the call's return */
		} else if (fired && info.op == PTRACE_SYSCALL_INFO_EXIT) {
			if (info.exit.rval > 0)
				wait_ended((long)info.exit.rval, wait_child);
		} else {
			continue;
		}
		if (ptrace(PTRACE_DETACH, pid, NULL, NULL) < 0)
			return 2;
		break;
	}
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			return 2;
	return status_of(st);
}
