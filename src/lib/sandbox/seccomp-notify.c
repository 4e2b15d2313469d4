/* seccomp-notify.c — the supervisor's side of the seccomp wall: receive the
 * listener fd from the sandbox, answer every notification with a refusal,
 * count the refusals and report them.  See seccomp.h.
 *
 * Trust boundary: the listener is read only by the supervisor, outside the
 * sandbox.  The notification's contents come from the kernel; the sandboxed
 * program decides only which call it makes, and every call that reaches here
 * fails.  Nothing here lets a call continue (SECCOMP_USER_NOTIF_FLAG_CONTINUE
 * would hand the decision back to the kernel after a time-of-check gap). */
#include "seccomp.h"

#include "util/util.h"

#include <errno.h>
#include <linux/audit.h>
#include <linux/seccomp.h>
#include <seccomp.h> /* libseccomp's: cordon's own is "sandbox/seccomp.h" */
#include <stdio.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/uio.h>

int cd_fd_send(int sock, int fd)
{
	union {
		struct cmsghdr h;
		char buf[CMSG_SPACE(sizeof(int))];
	} u;
	char byte = 'F';
	struct iovec iov = { .iov_base = &byte, .iov_len = 1 };
	struct msghdr m;
	struct cmsghdr *c;
	ssize_t n;

	if (fd < 0)
		return -EBADF;
	memset(&u, 0, sizeof u);
	memset(&m, 0, sizeof m);
	m.msg_iov = &iov;
	m.msg_iovlen = 1;
	m.msg_control = u.buf;
	m.msg_controllen = sizeof u.buf;
	c = CMSG_FIRSTHDR(&m);
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(c), &fd, sizeof fd);
	do
		n = sendmsg(sock, &m, MSG_NOSIGNAL);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	return n == 1 ? 0 : -EIO;
}

/* Close every fd carried by `m` (a message we refuse). */
static void close_rights(struct msghdr *m)
{
	struct cmsghdr *c;

	for (c = CMSG_FIRSTHDR(m); c; c = CMSG_NXTHDR(m, c)) {
		size_t i, n;

		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS ||
		    c->cmsg_len < CMSG_LEN(0))
			continue;
		n = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		for (i = 0; i < n; i++) {
			int fd;
			memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof fd);
			close(fd);
		}
	}
}

int cd_fd_recv(int sock, int *ret_fd)
{
	/* Room for a few fds, so that a peer sending more is detected and
	 * every one of them closed rather than leaked. */
	union {
		struct cmsghdr h;
		char buf[CMSG_SPACE(8 * sizeof(int))];
	} u;
	char byte;
	struct iovec iov = { .iov_base = &byte, .iov_len = 1 };
	struct msghdr m;
	struct cmsghdr *c;
	ssize_t n;
	int fd;

	memset(&u, 0, sizeof u);
	memset(&m, 0, sizeof m);
	m.msg_iov = &iov;
	m.msg_iovlen = 1;
	m.msg_control = u.buf;
	m.msg_controllen = sizeof u.buf;
	do
		n = recvmsg(sock, &m, MSG_CMSG_CLOEXEC);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	if (n == 0 && m.msg_controllen == 0)
		return -EPIPE;
	c = CMSG_FIRSTHDR(&m);
	if ((m.msg_flags & MSG_CTRUNC) || !c || c->cmsg_level != SOL_SOCKET ||
	    c->cmsg_type != SCM_RIGHTS || c->cmsg_len != CMSG_LEN(sizeof(int)) ||
	    CMSG_NXTHDR(&m, c) != NULL) {
		close_rights(&m);
		return -EBADMSG;
	}
	memcpy(&fd, CMSG_DATA(c), sizeof fd);
	*ret_fd = fd;
	return 0;
}

void cd_seccomp_stats_init(struct cd_seccomp_stats *st)
{
	memset(st, 0, sizeof *st);
}

uint64_t cd_seccomp_stats_get(const struct cd_seccomp_stats *st, uint32_t arch, int32_t nr)
{
	unsigned i;

	for (i = 0; i < st->n && i < CD_SECCOMP_STATS_MAX; i++)
		if (st->e[i].arch == arch && st->e[i].nr == nr)
			return st->e[i].count;
	return 0;
}

static void stats_add(struct cd_seccomp_stats *st, uint32_t arch, int32_t nr)
{
	unsigned i;

	st->total++;
	for (i = 0; i < st->n && i < CD_SECCOMP_STATS_MAX; i++) {
		if (st->e[i].arch == arch && st->e[i].nr == nr) {
			st->e[i].count++;
			return;
		}
	}
	if (st->n >= CD_SECCOMP_STATS_MAX) {
		st->overflow++;
		return;
	}
	st->e[st->n].arch = arch;
	st->e[st->n].nr = nr;
	st->e[st->n].count = 1;
	st->n++;
}

int cd_seccomp_reply_errno(const struct cd_seccomp_prog *p, uint32_t arch, int32_t nr)
{
	if (arch != AUDIT_ARCH_X86_64 || (nr & CD_SECCOMP_X32_BIT))
		return EPERM; /* another ABI: refused, whatever the call */
	if (nr >= 0 && nr < CD_SECCOMP_NR_MAX && (p->eperm[nr / 64] >> (nr % 64) & 1))
		return EPERM;
	/* io_uring_*, landlock_*, openat2, io_setup, and numbers no table
	 * names (newer than this filter): as if the kernel did not have them. */
	return ENOSYS;
}

int cd_seccomp_notify_handle(int listener, const struct cd_seccomp_prog *p,
                             struct cd_seccomp_stats *st)
{
	struct seccomp_notif req;
	struct seccomp_notif_resp resp;

	if (!p || !st || !p->notify)
		return -EINVAL;
	/* The kernel refuses a request buffer that is not zeroed. */
	memset(&req, 0, sizeof req);
	if (ioctl(listener, SECCOMP_IOCTL_NOTIF_RECV, &req) < 0) {
		if (errno == ENOENT)
			return 0; /* the caller was killed before we read it */
		return -errno;
	}
	stats_add(st, req.data.arch, req.data.nr);

	memset(&resp, 0, sizeof resp);
	resp.id = req.id;
	resp.val = 0;
	resp.error = -cd_seccomp_reply_errno(p, req.data.arch, req.data.nr);
	resp.flags = 0; /* never SECCOMP_USER_NOTIF_FLAG_CONTINUE */
	for (;;) {
		if (ioctl(listener, SECCOMP_IOCTL_NOTIF_SEND, &resp) == 0)
			return 1;
		if (errno == EINTR)
			continue;
		/* ENOENT: the caller died or was interrupted meanwhile; the call
		 * did not run either way, and it was attempted: keep the count. */
		if (errno == ENOENT)
			return 1;
		return -errno;
	}
}

/* The arch's name and the libseccomp token to resolve its numbers. */
static const char *arch_label(uint32_t arch, int32_t nr, uint32_t *ret_token, char *tmp,
                              size_t tmplen)
{
	int n;

	if (arch == AUDIT_ARCH_X86_64 && (nr & CD_SECCOMP_X32_BIT)) {
		*ret_token = SCMP_ARCH_X32;
		return "x32";
	}
	if (arch == AUDIT_ARCH_X86_64) {
		*ret_token = SCMP_ARCH_X86_64;
		return "x86_64";
	}
	if (arch == AUDIT_ARCH_I386) {
		*ret_token = SCMP_ARCH_X86;
		return "i386";
	}
	*ret_token = 0;
	n = snprintf(tmp, tmplen, "0x%08x", arch);
	if (n < 0 || (size_t)n >= tmplen)
		return "unknown";
	return tmp;
}

static int append_entry(json_t *arr, const char *name, const char *arch, json_int_t nr,
                        uint64_t count)
{
	json_t *o = json_object();

	if (!o)
		return -ENOMEM;
	if (json_object_set_new(o, "syscall", json_string(name)) < 0 ||
	    json_object_set_new(o, "arch", json_string(arch)) < 0 ||
	    (nr >= 0 && json_object_set_new(o, "nr", json_integer(nr)) < 0) ||
	    json_object_set_new(o, "count", json_integer((json_int_t)count)) < 0 ||
	    json_array_append_new(arr, o) < 0)
		return -ENOMEM;
	return 0;
}

int cd_seccomp_stats_json(const struct cd_seccomp_stats *st, json_t **ret_json)
{
	json_t *arr = json_array();
	unsigned i;

	if (!arr)
		return -ENOMEM;
	for (i = 0; i < st->n && i < CD_SECCOMP_STATS_MAX; i++) {
		const struct cd_seccomp_stat *e = &st->e[i];
		char tmp[16];
		uint32_t token;
		const char *arch = arch_label(e->arch, e->nr, &token, tmp, sizeof tmp);
		char *name = token ? seccomp_syscall_resolve_num_arch(token, e->nr) : NULL;
		int r;

		/* Names are libseccomp's; a name is only ever a table entry,
		 * never bytes from the sandbox. */
		r = append_entry(arr, name ? name : "unknown", arch, e->nr, e->count);
		free(name);
		if (r < 0) {
			json_decref(arr);
			return r;
		}
	}
	if (st->overflow > 0 && append_entry(arr, "(other)", "(other)", -1, st->overflow) < 0) {
		json_decref(arr);
		return -ENOMEM;
	}
	*ret_json = arr;
	return 0;
}
