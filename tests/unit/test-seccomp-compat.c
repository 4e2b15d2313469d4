/* test-seccomp-compat.c — real programs run normally under the seccomp
 * allowlist: sh pipelines, coreutils, bash, python3 (threads, subprocess),
 * gcc compiling and running a program, make, git, perl, node.
 *
 * Each command runs as the sandbox will run it: fork, no_new_privs, install
 * the notify filter, hand the listener to this process, exec.  This process
 * answers notifications, so a refusal does not hang the command, and counts
 * them: a command passes when it exits 0, prints what it should, and made
 * no refused call at all (a refusal in normal use would be noise in every
 * run's audit record, or a missing entry in the allowlist). */
#include "../tap.h"

#include "util/err.h"
#include "sandbox/seccomp.h"
#include "util/util.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>

#define OUT_MAX 8192

static char tmpdir[] = "/tmp/cordon-seccomp-compat.XXXXXX";

static void child_exec(const struct cd_seccomp_prog *p, int sock, int out, const char *script)
{
	char home[64], tmp[64];
	char *argv[] = { "sh", "-c", (char *)script, NULL };
	char *envp[] = { "PATH=/usr/local/bin:/usr/bin:/bin",
		         home,
		         tmp,
		         "LANG=C.UTF-8",
		         "GIT_CONFIG_NOSYSTEM=1",
		         NULL };
	int listener = -1, devnull = open("/dev/null", O_RDONLY | O_CLOEXEC);

	if (snprintf(home, sizeof home, "HOME=%s", tmpdir) >= (int)sizeof home ||
	    snprintf(tmp, sizeof tmp, "TMPDIR=%s", tmpdir) >= (int)sizeof tmp)
		_exit(120);
	if (devnull < 0 || dup2(devnull, 0) < 0 || dup2(out, 1) < 0 || dup2(out, 2) < 0 ||
	    chdir(tmpdir) < 0)
		_exit(121);
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 || cd_seccomp_install(p, &listener) < 0)
		_exit(122);
	if (cd_fd_send(sock, listener) < 0)
		_exit(123);
	close(listener);
	close(sock);
	execve("/bin/sh", argv, envp);
	_exit(127);
}

/* Run `script` under `p`; fills out (NUL-terminated), status and counts. */
static int run(const struct cd_seccomp_prog *p, const char *script, char *out, int *ret_status,
               struct cd_seccomp_stats *st)
{
	int sv[2], pfd[2], listener = -1;
	size_t len = 0;
	pid_t pid;

	cd_seccomp_stats_init(st);
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0 || pipe2(pfd, O_CLOEXEC) < 0)
		return -errno;
	pid = fork();
	if (pid < 0)
		return -errno;
	if (pid == 0) {
		close(sv[0]);
		close(pfd[0]);
		child_exec(p, sv[1], pfd[1], script);
	}
	close(sv[1]);
	close(pfd[1]);
	if (cd_fd_recv(sv[0], &listener) < 0)
		listener = -1;
	close(sv[0]);
	for (;;) {
		struct pollfd fds[2] = { { pfd[0], POLLIN, 0 }, { listener, POLLIN, 0 } };
		char buf[4096];
		ssize_t n;

		if (poll(fds, listener >= 0 ? 2 : 1, -1) < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		if (listener >= 0 && (fds[1].revents & POLLIN)) {
			cd_seccomp_notify_handle(listener, p, st);
			continue;
		}
		if (listener >= 0 && (fds[1].revents & (POLLHUP | POLLERR | POLLNVAL))) {
			close(listener);
			listener = -1;
		}
		if (!(fds[0].revents & (POLLIN | POLLHUP)))
			continue;
		n = read(pfd[0], buf, sizeof buf);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		if (len + (size_t)n < OUT_MAX) {
			memcpy(out + len, buf, (size_t)n);
			len += (size_t)n;
		}
	}
	out[len] = '\0';
	if (listener >= 0)
		close(listener);
	close(pfd[0]);
	while (waitpid(pid, ret_status, 0) < 0 && errno == EINTR)
		;
	return 0;
}

static void check(const struct cd_seccomp_prog *p, const char *what, const char *script,
                  const char *want)
{
	static char out[OUT_MAX];
	struct cd_seccomp_stats st;
	int status = -1;
	json_t *j = NULL;

	if (run(p, script, out, &status, &st) < 0) {
		ok(0, "%s: could not start", what);
		return;
	}
	if (!ok(WIFEXITED(status) && WEXITSTATUS(status) == 0 && strstr(out, want),
	        "%s runs under the filter", what)) {
		diag("status 0x%x, output:", status);
		diag("%s", out);
	}
	if (!ok(st.total == 0, "%s makes no refused call", what) &&
	    cd_seccomp_stats_json(&st, &j) == 0) {
		char *s = json_dumps(j, JSON_COMPACT);
		diag("refused: %s", s ? s : "?");
		free(s);
		json_decref(j);
	}
}

static int have(const char *path)
{
	return access(path, X_OK) == 0;
}

int main(void)
{
	struct cd_seccomp_opts o = { .notify = 1 };
	struct cd_seccomp_prog p;
	struct cd_err err = { 0 };
	char cmd[256];

	tap_start(240);
	if (!mkdtemp(tmpdir)) {
		ok(0, "mkdtemp");
		return tap_done();
	}
	if (cd_seccomp_build(&o, &p, &err) < 0) {
		ok(0, "build: %s", err.msg);
		return tap_done();
	}
	check(&p, "sh pipeline", "ls / >/dev/null && echo hi | tr a-z A-Z", "HI");
	check(&p, "coreutils",
	      "mkdir -p d/e && echo x > d/e/f && cp -a d d2 && mv d2 d3 && tar cf t.tar d3 && "
	      "rm -r d3 && tar xf t.tar && find . -name f | sort | head -1 && du -s . >/dev/null "
	      "&& "
	      "stat -c %s t.tar >/dev/null && date >/dev/null && id -u >/dev/null && nproc "
	      ">/dev/null && ln -s d3 l && readlink l && chmod 600 t.tar && echo cu-ok",
	      "cu-ok");
	if (have("/bin/bash"))
		check(&p, "bash",
		      "bash -c 'for i in 1 2 3; do echo $i; done | sort -r | head -1; "
		      "x=$(echo sub); [ \"$x\" = sub ] && (echo bash-ok) & wait'",
		      "bash-ok");
	if (have("/usr/bin/python3"))
		check(&p, "python3",
		      "/usr/bin/python3 -c 'import os,subprocess,threading; "
		      "t=threading.Thread(target=lambda: None); t.start(); t.join(); "
		      "print(subprocess.run([\"true\"]).returncode); "
		      "import tempfile, shutil; d=tempfile.mkdtemp(); shutil.rmtree(d); "
		      "import socket; a,b=socket.socketpair(); a.send(b\"x\"); print(b.recv(1))'",
		      "b'x'");
	else
		tap_skip("no /usr/bin/python3");
	if (have("/usr/bin/gcc"))
		check(&p, "gcc",
		      "printf '#include <stdio.h>\\nint main(void){puts(\"hello\");return 0;}\\n' "
		      "> "
		      "h.c && gcc -O1 -o h h.c && ./h",
		      "hello");
	else
		tap_skip("no /usr/bin/gcc");
	if (have("/usr/bin/make"))
		check(&p, "make", "printf 'all:\\n\\t@echo made\\n' > Makefile && make -s -j2",
		      "made");
	else
		tap_skip("no /usr/bin/make");
	if (have("/usr/bin/git"))
		check(&p, "git",
		      "git --version && git init -q r && cd r && echo a > a && git add a && "
		      "git -c user.name=t -c user.email=t@t commit -qm m && git status --short && "
		      "git log --oneline | wc -l && echo git-ok",
		      "git-ok");
	else
		tap_skip("no /usr/bin/git");
	if (have("/usr/bin/perl"))
		check(&p, "perl", "perl -e 'print qq(perl-ok\\n)'", "perl-ok");
	else
		tap_skip("no /usr/bin/perl");
	if (have("/usr/bin/node"))
		check(&p, "node",
		      "node -e 'require(\"child_process\").execSync(\"true\"); "
		      "console.log(\"node-ok\")'",
		      "node-ok");
	else
		tap_skip("no /usr/bin/node");

	if (snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir) < (int)sizeof cmd) {
		pid_t pid = fork();
		if (pid == 0) {
			execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
			_exit(127);
		}
		waitpid(pid, NULL, 0);
	}
	cd_seccomp_prog_release(&p);
	return tap_done();
}
