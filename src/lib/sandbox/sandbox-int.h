/* sandbox-int.h — what the supervisor (sandbox.c) and the child
 * (sandbox-child.c) share.  Not part of the library's interface.
 *
 * Trust boundary: the child runs in the new namespaces and becomes the
 * sandbox's init; everything it sends back over the report socket is
 * re-checked by the supervisor (type, length) before use, since the
 * command could in principle reach the socket if a wall failed.
 */
#ifndef CD_SANDBOX_INT_H
#define CD_SANDBOX_INT_H

#include "util/bounds.h"
#include "plan.h"

#include <stdint.h>

enum cd_report_type {
	CD_REPORT_SETUP_FAIL = 1, /* the child could not build the sandbox */
	CD_REPORT_EXEC_FAIL = 2,  /* execve of the command failed */
	CD_REPORT_STATUS = 3,     /* init: the command's wait status */
	CD_REPORT_STARTED = 4,    /* init: the walls are up, the command is forked */
};

/* One fixed-size record on the SOCK_SEQPACKET report socket. */
struct cd_report {
	uint32_t type;
	int32_t err;    /* errno of the failure */
	int32_t status; /* wait status (STATUS) */
	uint32_t walls; /* CD_WALL_* up (STARTED) */
	char what[200]; /* what failed, NUL-terminated */
};

/* The sync pipe.  The child builds the sandbox's filesystem at once; the
 * supervisor meanwhile makes the run's cgroup and moves the child in, then
 * sends CD_SYNC_PLACED with the limits a cgroup enforces (the child sets
 * the rlimit floor for the others, and makes its cgroup namespace from
 * there).  CD_SYNC_RUN follows once the run's intent is durable; EOF
 * instead means the command must not start. */
#define CD_SYNC_PLACED    0x40 /* | CD_SYNC_CG_* */
#define CD_SYNC_CG_MEMORY 0x01 /* a cgroup enforces the memory limit */
#define CD_SYNC_CG_PIDS   0x02 /* a cgroup enforces the pids limit */
#define CD_SYNC_RUN       'x'

/* Everything the child needs, prepared by the supervisor before clone:
 * the child allocates nothing.  Every fd here is one the child keeps at
 * its start; it closes all others it inherited (a new fd for the child
 * must also be listed in child_keep() in sandbox-child.c). */
struct cd_child_ctx {
	const struct cd_plan *plan;
	int report_fd;   /* child's end of the report socket */
	int sync_fd;     /* read end: the supervisor's CD_SYNC_* bytes */
	int lifeline_fd; /* pidfd of the supervisor: readable once it died */
	int stdio[3];    /* the command's ends of the stdio pipes */
	int proxy_fd;    /* child's end of the socket the proxy listener goes over */
	int listener_fd; /* child's end of the socket the seccomp listener goes over */
	int pty_fd;      /* plan->tty: child's end of the socket the pty controller goes over */
	int layer_fd;    /* overlay: child's end of the socket its layer tmpfs goes over */
	char uid_map[64], gid_map[64];
	int tree_fd[CD_PLAN_MAX_MOUNTS];         /* plan->idmap: the caller's trees, idmapped
					  * by the supervisor (idmap.h); -1: none */
	char tmpfs_size[CD_PLAN_MAX_MOUNTS][24]; /* decimal sizes, per mount */
	char layer_inodes[24];                   /* overlay: decimal inode cap of its layer */
};

/* The child's whole life: never returns. */
__attribute__((noreturn)) void cd_child_main(const struct cd_child_ctx *ctx);

#endif
