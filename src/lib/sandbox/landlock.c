/* landlock.c — see landlock.h.
 *
 * Runs in the sandbox child between clone and execve: raw system calls
 * only, no allocation, no stdio, no global state.  The uapi structures are
 * declared here because Debian 12's header stops at ABI 2. */
#include "landlock.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef SYS_landlock_create_ruleset
#define SYS_landlock_create_ruleset 444
#define SYS_landlock_add_rule       445
#define SYS_landlock_restrict_self  446
#endif

#define LL_CREATE_RULESET_VERSION (1U << 0)
#define LL_RULE_PATH_BENEATH      1
#define LL_RULE_NET_PORT          2
#define LL_RESTRICT_LOG_NEW_EXEC  (1U << 1) /* ABI 7 */

struct ll_ruleset_attr {
	uint64_t handled_access_fs;
	uint64_t handled_access_net; /* ABI 4 */
	uint64_t scoped;             /* ABI 6 */
};

struct ll_path_beneath_attr {
	uint64_t allowed_access;
	int32_t parent_fd;
} __attribute__((packed));

struct ll_net_port_attr {
	uint64_t allowed_access;
	uint64_t port;
};

int cd_landlock_abi(void)
{
	long v = syscall(SYS_landlock_create_ruleset, NULL, 0, LL_CREATE_RULESET_VERSION);
	return v < 0 ? 0 : (int)v;
}

static int clamp_abi(int abi)
{
	return abi > CD_LANDLOCK_ABI_MAX ? CD_LANDLOCK_ABI_MAX : abi;
}

uint64_t cd_landlock_fs_all(int abi)
{
	uint64_t m;

	abi = clamp_abi(abi);
	if (abi < 1)
		return 0;
	m = (CD_LL_FS_MAKE_SYM << 1) - 1; /* ABI 1: bits 0..12 */
	if (abi >= 2)
		m |= CD_LL_FS_REFER;
	if (abi >= 3)
		m |= CD_LL_FS_TRUNCATE;
	if (abi >= 5)
		m |= CD_LL_FS_IOCTL_DEV;
	return m;
}

uint64_t cd_landlock_fs_read(int abi)
{
	if (clamp_abi(abi) < 1)
		return 0;
	return CD_LL_FS_EXECUTE | CD_LL_FS_READ_FILE | CD_LL_FS_READ_DIR;
}

uint64_t cd_landlock_fs_write(int abi)
{
	uint64_t m;

	if (clamp_abi(abi) < 1)
		return 0;
	m = cd_landlock_fs_read(abi) | CD_LL_FS_WRITE_FILE | CD_LL_FS_REMOVE_DIR |
	    CD_LL_FS_REMOVE_FILE | CD_LL_FS_MAKE_DIR | CD_LL_FS_MAKE_REG | CD_LL_FS_MAKE_SOCK |
	    CD_LL_FS_MAKE_FIFO | CD_LL_FS_MAKE_SYM | CD_LL_FS_REFER | CD_LL_FS_TRUNCATE;
	/* refer and truncate only where the ABI knows them: a right outside
	 * the handled set makes landlock_add_rule fail with EINVAL. */
	return m & cd_landlock_fs_all(abi);
}

uint64_t cd_landlock_fs_dev(int abi)
{
	uint64_t m =
	        CD_LL_FS_READ_FILE | CD_LL_FS_WRITE_FILE | CD_LL_FS_TRUNCATE | CD_LL_FS_IOCTL_DEV;

	return m & cd_landlock_fs_all(abi);
}

uint64_t cd_landlock_scope_all(int abi)
{
	if (clamp_abi(abi) < 6)
		return 0;
	return CD_LL_SCOPE_ABSTRACT_UNIX_SOCKET | CD_LL_SCOPE_SIGNAL;
}

static void close_keep_errno(int fd)
{
	int saved = errno;

	close(fd);
	errno = saved;
}

static int add_path(int ruleset, const struct cd_landlock_path *p, uint64_t handled)
{
	struct ll_path_beneath_attr pb;
	struct stat st;
	int fd, rc = 0;

	if (!p->path || (p->access & ~handled))
		return -EINVAL;
	if (!p->access)
		return 0;
	fd = open(p->path, O_PATH | O_CLOEXEC);
	if (fd < 0) {
		if (errno == ENOENT && (p->flags & CD_LANDLOCK_OPTIONAL))
			return 0;
		return -errno;
	}
	pb.allowed_access = p->access;
	pb.parent_fd = fd;
	if (fstat(fd, &st) < 0)
		rc = -errno;
	else if (!S_ISDIR(st.st_mode))
		pb.allowed_access &= CD_LL_FS_FILE_RIGHTS;
	if (rc == 0 && pb.allowed_access &&
	    syscall(SYS_landlock_add_rule, ruleset, LL_RULE_PATH_BENEATH, &pb, 0) < 0)
		rc = -errno;
	close_keep_errno(fd);
	return rc;
}

static int add_port(int ruleset, uint64_t access, int port)
{
	struct ll_net_port_attr np = { .allowed_access = access, .port = (uint64_t)port };

	if (syscall(SYS_landlock_add_rule, ruleset, LL_RULE_NET_PORT, &np, 0) < 0)
		return -errno;
	return 0;
}

/* Fill the ruleset attribute and its size for the ABI; -EOPNOTSUPP when
 * the spec asks for what the ABI cannot enforce. */
static int build_attr(const struct cd_landlock_spec *s, int abi, struct ll_ruleset_attr *a,
                      size_t *ret_size)
{
	a->handled_access_fs = cd_landlock_fs_all(abi);
	a->handled_access_net = 0;
	a->scoped = 0;
	*ret_size = sizeof a->handled_access_fs;
	if (s->connect_port < 0 || s->connect_port > 65535)
		return -EINVAL;
	if (abi >= 4) {
		a->handled_access_net = CD_LL_NET_CONNECT_TCP;
		if (s->deny_bind)
			a->handled_access_net |= CD_LL_NET_BIND_TCP;
		*ret_size = 2 * sizeof(uint64_t);
	} else if (s->connect_port) {
		/* An allowed port is an exception to a net wall that is not
		 * there; below ABI 4 connect is not Landlock's to deny at all,
		 * which the caller learns from the ABI it passed. */
		return -EOPNOTSUPP;
	}
	if (s->scope & ~cd_landlock_scope_all(abi))
		return -EOPNOTSUPP;
	if (abi >= 6) {
		a->scoped = s->scope;
		*ret_size = sizeof *a;
	}
	return 0;
}

int cd_landlock_apply(const struct cd_landlock_spec *s, int abi)
{
	struct ll_ruleset_attr attr;
	size_t attr_size;
	unsigned flags = 0;
	int ruleset, rc;

	if (!s || (s->npaths && !s->paths))
		return -EINVAL;
	abi = clamp_abi(abi);
	if (abi < 1)
		return -EOPNOTSUPP;
	rc = build_attr(s, abi, &attr, &attr_size);
	if (rc < 0)
		return rc;
	ruleset = (int)syscall(SYS_landlock_create_ruleset, &attr, attr_size, 0);
	if (ruleset < 0)
		return -errno;
	for (size_t i = 0; i < s->npaths && rc == 0; i++)
		rc = add_path(ruleset, &s->paths[i], attr.handled_access_fs);
	if (rc == 0 && abi >= 4 && s->connect_port)
		rc = add_port(ruleset, CD_LL_NET_CONNECT_TCP, s->connect_port);
	if (rc == 0 && s->log_new_exec && abi >= 7)
		flags |= LL_RESTRICT_LOG_NEW_EXEC;
	if (rc == 0 && syscall(SYS_landlock_restrict_self, ruleset, flags) < 0)
		rc = -errno;
	close_keep_errno(ruleset);
	return rc;
}
