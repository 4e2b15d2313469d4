/* pool-park.c — issue 21's pooled path with cordon's own sandbox (a
 * closer prototype than pool-probe.c): a service keeps ONE cordon sandbox
 * parked at the step before its command starts — the plan built (strict
 * profile, the cwd), every namespace, mount and wall up (seccomp,
 * Landlock, caps, rlimits; root: the run's cgroup), its supervisor waiting
 * in the before_exec hook, i.e. where `cordon run` waits for its intent to
 * be durable.  Per client: the supervisor accepts it, writes and
 * fdatasyncs an "intent" line, lets the command start, relays its stdio
 * (to /dev/null here, the client's descriptors in a real pool), sees it
 * end and the sandbox torn down, fdatasyncs a "result" line, answers the
 * client the exit status; the service then parks the next one.
 *
 *   cc -O2 -Isrc/lib -o pool-park bench/pool-park.c build/libcordon.a \
 *      $(make -s print-ldlibs)
 *   pool-park serve SOCK LOG [CMD ARG...] &   (from the directory to expose)
 *   pool-park run SOCK                the client: connect, wait, exit
 *
 * The command is the service's (default /bin/true; argv and env are not
 * sent per run: a real pool sends them, a few hundred bytes); the sandbox runs as the caller's own
 * id (a root caller's would take a host-id slot).  Benchmarks only. */
#define _GNU_SOURCE
#include "sandbox/plan.h"
#include "sandbox/profile.h"
#include "sandbox/sandbox.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

static int listen_fd = -1, log_fd = -1, client = -1;
static char *true_argv[] = { "/bin/true", NULL }, **cmd = true_argv;

/* The park: wait for a client, then make its intent durable. */
static int park_hook(void *ctx, char *msg, size_t msglen)
{
	(void)ctx;
	client = accept4(listen_fd, NULL, NULL, SOCK_CLOEXEC);
	if (client < 0 || write(log_fd, "intent\n", 7) != 7 || fdatasync(log_fd) < 0) {
		snprintf(msg, msglen, "park: %s", strerror(errno));
		return -1;
	}
	return 0;
}

static int park_one(void)
{
	struct cd_sandbox_profile prof;
	struct cd_plan_opts o;
	struct cd_plan *p = NULL;
	struct cd_sandbox_io io;
	struct cd_result res;
	struct cd_err err = { 0, "" };
	char id[CD_RUN_ID_LEN + 1], cwd[4096];
	int null = open("/dev/null", O_RDWR | O_CLOEXEC), st;

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (null < 0 || !getcwd(cwd, sizeof cwd) || cd_profile_builtin("strict", &prof, &err) < 0)
		return 1;
	memset(&o, 0, sizeof o);
	o.argv = cmd;
	o.host_cwd = cwd;
	o.profile = prof.name;
	o.limits = &prof.limits;
	o.cover_files = prof.cover_files;
	o.ncover_files = prof.ncover;
	o.host_uid = geteuid();
	o.host_gid = getegid();
	if (cd_plan_build(&o, &p, &err) < 0) {
		fprintf(stderr, "pool-park: plan: %s\n", err.msg);
		return 1;
	}
	cd_run_id_new(id);
	memset(&io, 0, sizeof io);
	io.stdin_fd = null;
	io.stdout_fd = null;
	io.stderr_fd = null;
	io.signal_fd = -1;
	io.before_exec = park_hook;
	if (cd_sandbox_run(p, id, &io, &res, &err) < 0)
		fprintf(stderr, "pool-park: run: %s\n", err.msg);
	st = res.exit_code;
	if (write(log_fd, "result\n", 7) != 7 || fdatasync(log_fd) < 0 || client < 0 ||
	    write(client, &st, sizeof st) != sizeof st)
		return 1;
	return 0;
}

static int serve(const char *sock, const char *logpath)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };

	listen_fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	log_fd = open(logpath, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
	if (listen_fd < 0 || log_fd < 0)
		return 1;
	snprintf(a.sun_path, sizeof a.sun_path, "%s", sock);
	unlink(sock);
	if (bind(listen_fd, (struct sockaddr *)&a, sizeof a) < 0 || listen(listen_fd, 8) < 0)
		return 1;
	for (;;) {
		pid_t p = fork();

		if (p == 0)
			_exit(park_one());
		if (p < 0 || waitpid(p, NULL, 0) < 0)
			return 1;
	}
}

static int run(const char *sock)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	int s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0), st;

	snprintf(a.sun_path, sizeof a.sun_path, "%s", sock);
	if (s < 0 || connect(s, (struct sockaddr *)&a, sizeof a) < 0 ||
	    read(s, &st, sizeof st) != sizeof st)
		return 125;
	return st;
}

int main(int argc, char **argv)
{
	if (argc >= 4 && strcmp(argv[1], "serve") == 0) {
		if (argc > 4)
			cmd = argv + 4;
		return serve(argv[2], argv[3]);
	}
	if (argc == 3 && strcmp(argv[1], "run") == 0)
		return run(argv[2]);
	fprintf(stderr, "usage: pool-park serve SOCK LOG [CMD ARG...] | pool-park run SOCK\n");
	return 2;
}
