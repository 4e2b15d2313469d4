/* test-landlock.c — the Landlock wall, applied in a forked child and probed
 * from inside: filesystem writes, exec, TCP connect/bind, abstract unix
 * sockets and signals across the domain boundary.  The child runs each
 * probe and sends back one errno per probe (0 = it worked); the parent
 * makes the assertions, each of which has a positive control. */
#include "../tap.h"

#include "sandbox/landlock.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <stddef.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>

enum {
	P_APPLY,
	P_WRITE_OUTSIDE_NEW,
	P_WRITE_OUTSIDE_OLD,
	P_READ_OUTSIDE,
	P_WRITE_INSIDE,
	P_MKDIR_INSIDE,
	P_DEVNULL_TRUNC,
	P_EXEC_TRUE,
	P_CONNECT_DENIED,
	P_CONNECT_ALLOWED,
	P_BIND,
	P_ABSTRACT,
	P_KILL_OUTSIDE,
	P_KILL_INSIDE,
	P_N
};

struct fixture {
	char dir[64];          /* writable inside the domain */
	char outside_new[128]; /* a file the child tries to create */
	char outside_old[128]; /* an existing file the child tries to write */
	int port_denied, port_allowed;
	char abstract[64]; /* name after the leading NUL */
	pid_t victim;      /* outside the domain */
	int abi;
};

static int listen_tcp(int *ret_port)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof a;
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof a) < 0 || listen(fd, 8) < 0 ||
	    getsockname(fd, (struct sockaddr *)&a, &len) < 0)
		return -1;
	*ret_port = ntohs(a.sin_port);
	return fd;
}

static int abstract_addr(const char *name, struct sockaddr_un *a, socklen_t *ret_len)
{
	size_t n = strlen(name);

	memset(a, 0, sizeof *a);
	a->sun_family = AF_UNIX;
	if (n + 1 > sizeof a->sun_path)
		return -1;
	memcpy(a->sun_path + 1, name, n);
	*ret_len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + n);
	return 0;
}

static int listen_abstract(const char *name)
{
	struct sockaddr_un a;
	socklen_t len;
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (fd < 0 || abstract_addr(name, &a, &len) < 0 ||
	    bind(fd, (struct sockaddr *)&a, len) < 0 || listen(fd, 8) < 0)
		return -1;
	return fd;
}

static int err_of(int rc)
{
	return rc < 0 ? errno : 0;
}

static int try_open(const char *path, int flags)
{
	int fd = open(path, flags | O_CLOEXEC, 0600);

	if (fd < 0)
		return errno;
	close(fd);
	return 0;
}

static int try_connect_tcp(int port)
{
	struct sockaddr_in a = { .sin_family = AF_INET,
		                 .sin_port = htons((uint16_t)port),
		                 .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), rc;

	if (fd < 0)
		return errno;
	rc = err_of(connect(fd, (struct sockaddr *)&a, sizeof a));
	close(fd);
	return rc;
}

static int try_bind_tcp(void)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), rc;

	if (fd < 0)
		return errno;
	rc = err_of(bind(fd, (struct sockaddr *)&a, sizeof a));
	close(fd);
	return rc;
}

static int try_connect_abstract(const char *name)
{
	struct sockaddr_un a;
	socklen_t len;
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0), rc;

	if (fd < 0 || abstract_addr(name, &a, &len) < 0)
		return EINVAL;
	rc = err_of(connect(fd, (struct sockaddr *)&a, len));
	close(fd);
	return rc;
}

static int try_exec_true(void)
{
	int st;
	pid_t pid = fork();

	if (pid < 0)
		return errno;
	if (pid == 0) {
		char *argv[] = { "true", NULL }, *envp[] = { NULL };
		execve("/bin/true", argv, envp);
		_exit(100 + (errno & 0x1f));
	}
	if (waitpid(pid, &st, 0) < 0)
		return errno;
	if (WIFEXITED(st) && WEXITSTATUS(st) == 0)
		return 0;
	return WIFEXITED(st) && WEXITSTATUS(st) >= 100 ? WEXITSTATUS(st) - 100 : EIO;
}

static int try_kill_inside(void)
{
	pid_t pid = fork();
	int rc;

	if (pid < 0)
		return errno;
	if (pid == 0) {
		pause();
		_exit(0);
	}
	rc = err_of(kill(pid, SIGKILL));
	waitpid(pid, NULL, 0);
	return rc;
}

static void child(const struct fixture *f, int out)
{
	char inside[128], sub[128];
	int r[P_N];
	struct cd_landlock_path paths[] = {
		{ "/", cd_landlock_fs_read(f->abi), 0 },
		{ f->dir, cd_landlock_fs_write(f->abi), 0 },
		{ "/dev/null", cd_landlock_fs_dev(f->abi), 0 },
		{ "/nonexistent-cordon-path", cd_landlock_fs_read(f->abi), CD_LANDLOCK_OPTIONAL },
	};
	struct cd_landlock_spec spec = {
		.paths = paths,
		.npaths = sizeof paths / sizeof paths[0],
		.connect_port = f->abi >= 4 ? f->port_allowed : 0,
		.deny_bind = 1,
		.scope = cd_landlock_scope_all(f->abi),
	};

	for (int i = 0; i < P_N; i++)
		r[i] = -1;
	if (snprintf(inside, sizeof inside, "%s/inside", f->dir) >= (int)sizeof inside ||
	    snprintf(sub, sizeof sub, "%s/sub", f->dir) >= (int)sizeof sub)
		_exit(2);
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		_exit(3);
	r[P_APPLY] = -cd_landlock_apply(&spec, f->abi);
	if (r[P_APPLY] == 0) {
		r[P_WRITE_OUTSIDE_NEW] = try_open(f->outside_new, O_WRONLY | O_CREAT | O_EXCL);
		r[P_WRITE_OUTSIDE_OLD] = try_open(f->outside_old, O_WRONLY);
		r[P_READ_OUTSIDE] = try_open(f->outside_old, O_RDONLY);
		r[P_WRITE_INSIDE] = try_open(inside, O_WRONLY | O_CREAT | O_TRUNC);
		r[P_MKDIR_INSIDE] = err_of(mkdir(sub, 0700));
		r[P_DEVNULL_TRUNC] = try_open("/dev/null", O_WRONLY | O_TRUNC);
		r[P_EXEC_TRUE] = try_exec_true();
		r[P_CONNECT_DENIED] = try_connect_tcp(f->port_denied);
		r[P_CONNECT_ALLOWED] = try_connect_tcp(f->port_allowed);
		r[P_BIND] = try_bind_tcp();
		r[P_ABSTRACT] = try_connect_abstract(f->abstract);
		r[P_KILL_OUTSIDE] = err_of(kill(f->victim, SIGTERM));
		r[P_KILL_INSIDE] = try_kill_inside();
	}
	if (write(out, r, sizeof r) != (ssize_t)sizeof r)
		_exit(4);
	_exit(0);
}

static int run_child(const struct fixture *f, int r[P_N])
{
	int pfd[2], st;
	pid_t pid;
	ssize_t n;

	if (pipe2(pfd, O_CLOEXEC) < 0)
		return -1;
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		close(pfd[0]);
		child(f, pfd[1]);
	}
	close(pfd[1]);
	n = read(pfd[0], r, sizeof(int) * P_N);
	close(pfd[0]);
	waitpid(pid, &st, 0);
	return n == (ssize_t)(sizeof(int) * P_N) ? 0 : -1;
}

static void check_masks(void)
{
	is_int(cd_landlock_fs_all(1), 0x1fff, "ABI 1 handles the 13 original rights");
	is_int(cd_landlock_fs_all(3), 0x7fff, "ABI 3 adds refer and truncate");
	is_int(cd_landlock_fs_all(7), 0xffff, "ABI 5+ adds ioctl_dev");
	ok(!(cd_landlock_fs_write(7) & (CD_LL_FS_MAKE_CHAR | CD_LL_FS_MAKE_BLOCK)),
	   "write never grants device nodes");
	ok(!(cd_landlock_fs_write(1) & CD_LL_FS_REFER), "write at ABI 1 has no refer");
	is_int(cd_landlock_scope_all(5), 0, "no scopes below ABI 6");
	is_int(cd_landlock_fs_read(0), 0, "no rights without Landlock");
}

static void check_refusals(int abi)
{
	struct cd_landlock_spec s = { .connect_port = 80 };
	struct cd_landlock_path bad = { "/", 1ULL << 40, 0 };

	is_int(cd_landlock_apply(&s, 0), -EOPNOTSUPP, "apply without Landlock fails closed");
	is_int(cd_landlock_apply(&s, 3), -EOPNOTSUPP, "a port rule below ABI 4 is refused");
	s.connect_port = 0;
	s.scope = CD_LL_SCOPE_SIGNAL;
	is_int(cd_landlock_apply(&s, 5), -EOPNOTSUPP, "a scope below ABI 6 is refused");
	s.scope = 0;
	s.connect_port = 70000;
	is_int(cd_landlock_apply(&s, abi), -EINVAL, "a port out of range is refused");
	s.connect_port = 0;
	s.paths = &bad;
	s.npaths = 1;
	is_int(cd_landlock_apply(&s, abi), -EINVAL, "an unknown right is refused");
}

int main(void)
{
	struct fixture f = { 0 };
	int r[P_N], lt1, lt2, lu, fd;

	tap_start(60);
	check_masks();
	f.abi = cd_landlock_abi();
	diag("landlock ABI %d", f.abi);
	if (f.abi < 1) {
		tap_skip("landlock unavailable on this kernel");
		return tap_done();
	}
	check_refusals(f.abi);

	if (snprintf(f.dir, sizeof f.dir, "/tmp/cordon-ll.XXXXXX") >= (int)sizeof f.dir ||
	    !mkdtemp(f.dir))
		return ok(0, "mkdtemp"), tap_done();
	if (snprintf(f.outside_new, sizeof f.outside_new, "%s-outside-new", f.dir) >=
	            (int)sizeof f.outside_new ||
	    snprintf(f.outside_old, sizeof f.outside_old, "%s-outside-old", f.dir) >=
	            (int)sizeof f.outside_old ||
	    snprintf(f.abstract, sizeof f.abstract, "cordon-ll-%d", (int)getpid()) >=
	            (int)sizeof f.abstract)
		return ok(0, "names"), tap_done();
	fd = open(f.outside_old, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
	ok(fd >= 0, "control: the outside file can be created without Landlock");
	if (fd >= 0)
		close(fd);
	lt1 = listen_tcp(&f.port_denied);
	lt2 = listen_tcp(&f.port_allowed);
	lu = listen_abstract(f.abstract);
	ok(lt1 >= 0 && lt2 >= 0 && lu >= 0, "control: loopback listeners on ports %d and %d",
	   f.port_denied, f.port_allowed);
	ok(try_connect_tcp(f.port_denied) == 0 && try_connect_abstract(f.abstract) == 0,
	   "control: the listeners accept connections without Landlock");
	f.victim = fork();
	if (f.victim == 0) {
		pause();
		_exit(0);
	}

	if (!ok(run_child(&f, r) == 0, "child ran and reported"))
		goto out;
	if (!ok(r[P_APPLY] == 0, "cd_landlock_apply succeeds")) {
		diag("apply: %s", strerror(r[P_APPLY]));
		goto out;
	}
	is_int(r[P_WRITE_OUTSIDE_NEW], EACCES, "creating a file outside the writable dir: EACCES");
	is_int(r[P_WRITE_OUTSIDE_OLD], EACCES, "opening an outside file for write: EACCES");
	is_int(r[P_READ_OUTSIDE], 0, "reading outside works");
	is_int(r[P_WRITE_INSIDE], 0, "writing inside the writable dir works");
	is_int(r[P_MKDIR_INSIDE], 0, "mkdir inside the writable dir works");
	is_int(r[P_DEVNULL_TRUNC], 0, "/dev/null opens with O_TRUNC (shell '>')");
	is_int(r[P_EXEC_TRUE], 0, "exec of /bin/true works");
	if (f.abi >= 4) {
		is_int(r[P_CONNECT_DENIED], EACCES, "TCP connect to another port: EACCES");
		is_int(r[P_CONNECT_ALLOWED], 0, "TCP connect to the one allowed port works");
		is_int(r[P_BIND], EACCES, "TCP bind: EACCES");
	} else {
		tap_skip("landlock ABI < 4: no TCP rules");
		tap_skip("landlock ABI < 4: no TCP rules");
		tap_skip("landlock ABI < 4: no TCP rules");
	}
	if (f.abi >= 6) {
		is_int(r[P_ABSTRACT], EPERM, "connect to an abstract socket outside: EPERM");
		is_int(r[P_KILL_OUTSIDE], EPERM, "kill() of a process outside: EPERM");
		ok(kill(f.victim, 0) == 0, "the process outside is still alive");
		is_int(r[P_KILL_INSIDE], 0, "kill() inside the domain works");
	} else {
		for (int i = 0; i < 4; i++)
			tap_skip("landlock ABI < 6: no scopes");
	}
	ok(access(f.outside_new, F_OK) < 0, "nothing was created outside");
out:
	kill(f.victim, SIGKILL);
	waitpid(f.victim, NULL, 0);
	unlink(f.outside_old);
	unlink(f.outside_new);
	{
		char p[128];
		if (snprintf(p, sizeof p, "%s/inside", f.dir) < (int)sizeof p)
			unlink(p);
		if (snprintf(p, sizeof p, "%s/sub", f.dir) < (int)sizeof p)
			rmdir(p);
	}
	rmdir(f.dir);
	return tap_done();
}
