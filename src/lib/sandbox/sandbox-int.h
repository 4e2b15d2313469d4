/* sandbox-int.h — what the supervisor (sandbox.c, sandbox-supervise.c)
 * and the child (sandbox-child.c, sandbox-mount.c) share.  Not part of
 * the library's interface.
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
#include "sandbox.h"
#include "termfilter.h"
#include "util/buf.h"

#include <sodium.h>
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
	int watch_fd;    /* the tree watcher (plan->watch_fd), asked after the mounts; or -1 */
	char uid_map[64], gid_map[64];
	int tree_fd[CD_PLAN_MAX_MOUNTS];         /* plan->idmap: the caller's trees, idmapped
					  * by the supervisor (idmap.h); -1: none */
	char tmpfs_size[CD_PLAN_MAX_MOUNTS][24]; /* decimal sizes, per mount */
	char layer_inodes[24];                   /* overlay: decimal inode cap of its layer */
	unsigned inherit_ns;                     /* cd_sandbox_io.inherit_ns */
	int ctty; /* cd_sandbox_io.direct_tty: stdio[0] becomes the controlling terminal */
};

/* The child's whole life: never returns. */
__attribute__((noreturn)) void cd_child_main(const struct cd_child_ctx *ctx);

/* --- The supervisor (sandbox.c runs it, sandbox-supervise.c is its loop) --- */

#define CD_RELAY_CHUNK (64 * 1024)

/* One relayed stream: the command's output toward the caller's fd. */
struct cd_stream {
	int from; /* our end of the pipe, -1 when closed */
	int to;   /* caller's fd; -1 after a write error (keep draining) */
	uint64_t bytes;
	crypto_hash_sha256_state hash;
	struct cd_buf held; /* masking: the output until the command ends */
	int holding, overflow;
	int open_line; /* the last byte written to `to` was not a newline */
	int filter;    /* `to` is a terminal: through the filter (termfilter.h) */
	struct cd_termfilter tf;
};

struct cd_supervisor {
	const struct cd_plan *plan;
	const struct cd_sandbox_io *io;
	struct cd_result *res;
	int epfd, pidfd, timerfd, report_fd;
	struct cd_stream out, err;
	/* stdin toward the command */
	int in_to;       /* our end of the command's stdin pipe, -1 when closed */
	int in_from;     /* caller's stdin, -1 at EOF */
	int in_pollable; /* the caller's stdin works with epoll */
	char *in_buf;    /* CD_RELAY_CHUNK bytes, on the heap: untouched (no page
	               * faults) unless stdin carries data */
	size_t in_len, in_off;
	uint64_t in_bytes;
	crypto_hash_sha256_state in_hash;
	int psock;    /* our end of the proxy socket, -1 once the listener came */
	int lsock;    /* our end of the listener socket, -1 once the listener came */
	int listener; /* seccomp user-notification fd, -1 when none */
	int ptysock;  /* plan->tty: our end of the pty socket, -1 once the controller came */
	int ptm;      /* plan->tty: the pty's controller side (a copy is out.from), or -1 */
	int laysock;  /* overlay: our end of the layer socket, read once after the run */
	struct cd_cgroup *cg;
	int child_done, killed_timeout, killed_output, got_status, status, started;
	/* Covered credentials watched on the host (sandbox-covers.c): an
	 * inotify fd (-1 when none is covered) and what each watch names. */
	int cover_fd, killed_cover;
	struct cd_cover_watch *covers;
	size_t ncovers;
	uint32_t walls;
	/* The seccomp program the child installs (quotas.h), for the answers. */
	const struct cd_seccomp_prog *prog;
};

enum {
	CD_EV_OUT = 1,
	CD_EV_ERR,
	CD_EV_IN_FROM,
	CD_EV_IN_TO,
	CD_EV_PID,
	CD_EV_TIMER,
	CD_EV_REPORT,
	CD_EV_SIGNAL,
	CD_EV_LSOCK,
	CD_EV_LISTENER,
	CD_EV_PROXY,
	CD_EV_PTY,
	CD_EV_COVER,
};

/* One covered credential's host parent directory (watch wd) and name. */
struct cd_cover_watch {
	int wd;
	char *host;       /* the covered host path */
	const char *name; /* its last component, inside host */
};

/* sandbox-covers.c: watch the host parent directory of every covered
 * credential (before the child mounts anything) and stop the run when a
 * covered name is replaced, renamed over or removed on the host, which
 * detaches its cover.  -1 (err says why) when a watch cannot be set:
 * the run is refused. */
int cd_sup_cover_watch(struct cd_supervisor *s, const struct cd_plan *plan, struct cd_err *err);
void cd_sup_cover_event(struct cd_supervisor *s);
void cd_sup_cover_release(struct cd_supervisor *s);

/* The hex SHA-256 of what `st` hashed (sandbox.c). */
void cd_sup_hex_digest(crypto_hash_sha256_state *st, char out[65]);

/* sandbox-supervise.c: the loop and its pieces cd_sandbox_run() calls. */
int cd_sup_set_nonblock(int fd);
int cd_sup_ep_add(int epfd, int fd, uint32_t events, uint64_t tag);
void cd_sup_kill_sandbox(struct cd_supervisor *s);
int cd_sup_plan_overlay(const struct cd_plan *p);
void cd_sup_receive_layer(struct cd_supervisor *s);
void cd_sup_close_listener(struct cd_supervisor *s);
void cd_sup_close_stream(struct cd_supervisor *s, struct cd_stream *st);
void cd_sup_flush_masked(struct cd_supervisor *s, struct cd_stream *st, const char *name);
void cd_sup_close_stdin_pipe(struct cd_supervisor *s);
void cd_sup_pump_stdin(struct cd_supervisor *s);
void cd_sup_read_reports(struct cd_supervisor *s);
void cd_sup_reap(struct cd_supervisor *s);
void cd_sup_finish_result(struct cd_supervisor *s);
void cd_sup_account_limits(struct cd_supervisor *s);
void cd_sup_loop(struct cd_supervisor *s);
/* The command is started: relay until it and its streams end, reap the
 * sandbox, take the overlay's layer, then fill in the result and what the
 * limits saw. */
void cd_sup_run(struct cd_supervisor *s);

/* --- The child (sandbox-child.c), and its filesystem (sandbox-mount.c) --- */

#define CD_CHILD_NEWROOT "/tmp" /* where the new root is built before pivot_root */

extern const struct cd_child_ctx *cd_child_g_ctx; /* the context, set at the child's start */
extern int cd_child_g_pty_follower;               /* plan->tty: the session pty's follower side */

/* Report a setup failure on the report socket and exit. */
__attribute__((noreturn)) void cd_child_fail(const char *what, const char *subject, int err);
/* openat2(2) with `flags` and `resolve`: an fd or -1 (errno). */
int cd_child_openat2(int dirfd, const char *path, uint64_t flags, uint64_t resolve);
/* Open every source, build the new root from the plan's mounts, pivot. */
void cd_child_build_root(void);
/* plan->tty: open the session pty in the new /dev/pts (cd_child_g_pty_follower). */
void cd_child_make_pty(void);

/* --- Checks after the mounts (sandbox-verify.c) --- */

#define CD_CHILD_MOVED 100000 /* -CD_CHILD_MOVED: a pinned cover's file moved */

/* Is fd the file (dev, ino) the walk judged?  Through an overlay
 * (proposal mode) a file keeps its inode number under a device of the
 * overlay's, and a directory has neither: those compare by inode, or not
 * at all. */
int cd_child_same_file(int fd, dev_t dev, ino_t ino);
/* Before pivot_root, every mount made: each cover is in place (its path
 * gone, /dev/null, an empty read-only tmpfs, or read-only as planned),
 * and no directory of a stamped tree changed since the walk read it
 * unless all it gained was files or empty directories.  Fails the child
 * otherwise. */
void cd_child_verify_covers(int rootfd, int nullfd);

#endif
