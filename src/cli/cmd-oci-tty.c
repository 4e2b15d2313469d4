/* cmd-oci-tty.c — a container's terminal (process.terminal with
 * --console-socket; see cmd-oci.h).
 *
 * runc's protocol, which containerd's shim (go-runc's ConsoleSocket)
 * expects: the runtime connects to the AF_UNIX stream socket named by
 * --console-socket and sends one message whose data is the pty's name
 * and whose SCM_RIGHTS carry exactly one fd, the pty's controller.  The
 * shim accepts it after `create` returns and from then on copies between
 * the controller and the task's stdio (and resizes it).
 *
 * The pty is made here, in the supervisor, before create returns (the
 * sandbox is built only at `start`, too late for the shim): a fresh pair
 * from /dev/ptmx.  The controller goes to the shim and is closed here at
 * once: it never enters the sandbox.  The follower is kept and handed
 * to the sandbox at start as the command's stdio and controlling
 * terminal (cd_sandbox_io.direct_tty), set up inside the sandbox's
 * namespaces by cordon's child (setsid, TIOCSCTTY) before the command
 * runs.  The command then holds no other terminal; TIOCSTI and TIOCLINUX
 * stay refused by cordon's seccomp filter, so it cannot type into the
 * manager's side.  cordon's terminal output filter does not apply: the
 * shim owns the controller and nothing passes through cordon.
 */
#include "cli.h"
#include "cmd-oci.h"

#include "util/util.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

static int send_controller(const char *sock_path, int ptm, const char *name, struct cd_err *err)
{
	struct sockaddr_un sa;
	struct msghdr mh;
	struct iovec iov;
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} u;
	struct cmsghdr *cm;
	ssize_t n;
	int s;

	memset(&sa, 0, sizeof sa);
	sa.sun_family = AF_UNIX;
	if (strlen(sock_path) >= sizeof sa.sun_path)
		return cd_err_set(err, -CD_E_USAGE, "--console-socket %s: path too long",
		                  sock_path);
	memcpy(sa.sun_path, sock_path, strlen(sock_path) + 1);
	s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (s < 0 || connect(s, (struct sockaddr *)&sa, sizeof sa) < 0) {
		int e = errno;
		if (s >= 0)
			close(s);
		return cd_err_set(err, -CD_E_USAGE, "--console-socket %s: %s", sock_path,
		                  cd_strerror(-e));
	}
	memset(&mh, 0, sizeof mh);
	memset(&u, 0, sizeof u);
	iov.iov_base = (void *)name;
	iov.iov_len = strlen(name);
	mh.msg_iov = &iov;
	mh.msg_iovlen = 1;
	mh.msg_control = u.buf;
	mh.msg_controllen = sizeof u.buf;
	cm = CMSG_FIRSTHDR(&mh);
	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(cm), &ptm, sizeof(int));
	do
		n = sendmsg(s, &mh, MSG_NOSIGNAL);
	while (n < 0 && errno == EINTR);
	if (n != (ssize_t)iov.iov_len) {
		int e = n < 0 ? errno : EIO;
		close(s);
		return cd_err_set(err, -CD_E_USAGE,
		                  "--console-socket %s: cannot send the terminal: %s", sock_path,
		                  cd_strerror(-e));
	}
	close(s);
	return 0;
}

int oci_tty_give(const char *console_socket, int *ret_follower, struct cd_err *err)
{
	char name[64];
	int ptm, pts, unlock = 0, num = -1, r;

	*ret_follower = -1;
	if (!console_socket || !*console_socket)
		return cd_err_set(err, -CD_E_USAGE,
		                  "process.terminal is set but no --console-socket was given "
		                  "(the manager takes the terminal over that socket)");
	ptm = open("/dev/ptmx", O_RDWR | O_NOCTTY | O_CLOEXEC);
	if (ptm < 0)
		return cd_err_set(err, -CD_E_KERNEL, "cannot make the container's terminal: %s",
		                  cd_strerror(-errno));
	if (ioctl(ptm, TIOCSPTLCK, &unlock) < 0 || ioctl(ptm, TIOCGPTN, &num) < 0 ||
	    (pts = ioctl(ptm, TIOCGPTPEER, O_RDWR | O_NOCTTY | O_CLOEXEC)) < 0) {
		r = -errno;
		close(ptm);
		return cd_err_set(err, -CD_E_KERNEL, "cannot open the container's terminal: %s",
		                  cd_strerror(r));
	}
	snprintf(name, sizeof name, "/dev/pts/%d", num);
	r = send_controller(console_socket, ptm, name, err);
	close(ptm); /* the shim has its own copy now; the controller never goes in */
	if (r < 0) {
		close(pts);
		return r;
	}
	*ret_follower = pts;
	return 0;
}
