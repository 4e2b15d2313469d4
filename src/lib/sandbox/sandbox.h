/* sandbox.h — execute a checked plan in a throwaway sandbox.
 *
 * The sandbox knows nothing of policy: it takes a complete plan, clones a
 * child into new user, mount, pid, net, ipc, uts and cgroup namespaces,
 * builds the filesystem, drops every privilege and execs the command under
 * a small init (pid 1 inside, non-dumpable, under the same walls).  The
 * supervisor — the calling process, outside every namespace — relays and
 * hashes stdin/stdout/stderr, enforces the wall clock and output caps and
 * returns a result.  When the run ends nothing of it remains: the pid
 * namespace dies with its init, the mount namespace with its last process,
 * the scratch tmpfs with the mount namespace.
 */
#ifndef CD_SANDBOX_H
#define CD_SANDBOX_H

#include "util/err.h"
#include "mask/mask.h"
#include "plan.h"
#include "seccomp.h"

#include <stdint.h>

#define CD_RUN_ID_LEN 32 /* hex characters */

enum cd_reason {
	CD_REASON_EXITED,
	CD_REASON_SIGNALED,
	CD_REASON_TIMEOUT,
	CD_REASON_MEMORY,
	CD_REASON_PIDS,
	CD_REASON_OUTPUT_LIMIT,
	CD_REASON_DENIED,
	CD_REASON_SETUP_ERROR,
	CD_REASON_COVER_REPLACED, /* a covered credential was replaced on the host */
};

struct cd_result {
	char run_id[CD_RUN_ID_LEN + 1];
	enum cd_reason reason;
	int exit_code; /* what `cordon run` exits with: the command's status,
			* 128+signal, 124 timeout, 125 setup, 126, 127 */
	int signal;    /* the signal that ended the command, or 0 */
	uint64_t wall_ms, cpu_ms, max_rss_kb;
	uint64_t stdin_bytes, stdout_bytes, stderr_bytes;
	int stdin_direct, stdout_direct; /* handed over, not relayed: no hash, no count */
	/* The last byte written to stdout_fd / stderr_fd was not a newline:
	 * what the caller prints there next (a record) must start a line. */
	int stdout_open_line, stderr_open_line;
	char argv_sha256[65], stdin_sha256[65], stdout_sha256[65], stderr_sha256[65];
	unsigned walls; /* CD_WALL_* that were up when the command started */
	int landlock_abi;
	/* A root caller (plan->idmap): how many of the caller's trees were
	 * bound idmapped, and how many read-only ones plain (their filesystem
	 * cannot be idmapped: what "other" cannot read is unreadable). */
	unsigned idmapped_binds, plain_binds;
	struct cd_seccomp_stats denied; /* syscalls the filter refused, with counts */
	/* Limits: which mechanism enforced each ("cgroup1", "cgroup2", "rlimit",
	 * "none"), what the cgroup measured, and why a cgroup was not used. */
	const char *mech_memory, *mech_pids, *mech_cpu;
	uint64_t peak_memory; /* bytes, when a cgroup measured it; else 0 */
	char limits_note[160];
	char error[CD_ERR_MSG_MAX]; /* setup or exec failure, one line; "" if none */
};

/* Where the supervisor relays the command's stdio.  stdin_fd may be -1
 * (the command gets an empty stdin).  signal_fd, when >= 0, is a signalfd
 * owned by the caller: signals read from it are forwarded to the command
 * (through the sandbox's init). */
#define CD_SANDBOX_MASK_MAX (64u * 1024 * 1024)

struct cd_sandbox_io {
	int stdin_fd, stdout_fd, stderr_fd;
	int signal_fd;
	/* Egress (plan->proxy_port): called once with the proxy's listening
	 * socket, bound to 127.0.0.1 inside the sandbox's network namespace;
	 * the callee owns the fd and serves it (outside the sandbox) until
	 * the run ends.  Required when the plan has a proxy port. */
	void (*on_proxy)(int listen_fd, void *ctx);
	void *proxy_ctx;
	/* Called once the child is building the sandbox and before the
	 * command may start (e.g. to make the intent record durable, in
	 * parallel with the mount work).  A negative return stops the run
	 * before the command exists, with the reason written to msg.  NULL:
	 * start at once. */
	int (*before_exec)(void *ctx, char *msg, size_t msglen);
	void *before_exec_ctx;
	/* Masking of the command's output (the deciding grants' mask:): when
	 * `mask` is active, stdout and stderr are held (up to the output
	 * limit, at most CD_SANDBOX_MASK_MAX) and written masked when the
	 * command ends; output that cannot be masked is withheld with a note
	 * on stderr.  The hashes stay those of the raw output.  Borrowed. */
	struct cd_masker *masker;
	const struct cd_mask_rules *mask;
	/* plan->tty (cordon shell): the command's stdin, stdout and stderr
	 * are one pty of the sandbox's own devpts; the supervisor relays
	 * stdin_fd to its controller side and the controller to stdout_fd
	 * (stderr_fd is unused; the output cap and the stdout hash cover
	 * what the pty printed, the stdin hash what was typed).  winsize_fd,
	 * when >= 0, is the person's terminal: its size is copied to the pty
	 * when the pty comes and on every SIGWINCH read from signal_fd (which
	 * is then not forwarded).  Ignored without plan->tty. */
	int winsize_fd;
	/* When set, sees every byte relayed, in order: dir 'i' what was
	 * typed, 'o' what was printed, 'w' a new window size (two uint16_t
	 * rows, cols).  Only with plan->tty.  Must not block. */
	void (*record)(void *ctx, char dir, const void *buf, size_t len);
	void *record_ctx;
	/* Proposal mode (an overlay in the plan): called once after the run
	 * with the overlay's layer, a detached tmpfs mount (directories
	 * `upper` and `work`) that the sandbox made in its own user
	 * namespace; nothing else holds it once the run has ended.  The
	 * callee owns the fd (closing it frees the layer).  Not called when
	 * the sandbox failed before it made the layer.  Required when the
	 * plan has an overlay. */
	void (*on_layer)(int layer_fd, void *ctx);
	void *layer_ctx;
	/* Direct stdio (cordon mcp's server): stdin_fd and/or stdout_fd, each
	 * a pipe (anything else is refused: never a terminal, THREATS 1), is
	 * handed to the command as its fd 0 / fd 1 instead of a pipe the
	 * supervisor relays.  That stream then has no hash, no byte count and
	 * no output cap here: the caller, who holds the other end, hashes and
	 * caps what passes.  Refused with plan->tty and, for stdout, with an
	 * active mask. */
	int direct_stdin, direct_stdout;
	/* A terminal given away (the OCI runtime's --console-socket): with
	 * direct_stdin and direct_stdout set and stdin_fd == stdout_fd, that
	 * fd is the follower side of a fresh pty whose controller the caller
	 * handed to its manager (never the caller's own terminal: refused).
	 * It becomes the command's fds 0, 1 and 2 and its controlling
	 * terminal; nothing is relayed (no hashes, no output cap).  Refused
	 * with plan->tty and with an active mask. */
	int direct_tty;
	/* Terminal output (e.g. when stdout_fd / stderr_fd is a terminal):
	 * OSC 52 clipboard and OSC 0/1/2 title strings are dropped from what
	 * is written there (see termfilter.h).  The hashes, byte counts and
	 * the record callback keep the command's raw bytes: what it wrote. */
	int filter_stdout, filter_stderr;
	/* When > 0, this signal read from signal_fd is not forwarded: it
	 * kills the sandbox as SIGKILL would (SIGKILL itself cannot reach a
	 * signalfd; the OCI runtime's `kill ID KILL` sends this one). */
	int kill_signo;
	/* CLONE_NEWNET, CLONE_NEWIPC and/or CLONE_NEWUTS: the sandbox does
	 * not make that namespace but stays in the caller's (the OCI runtime,
	 * root, made or joined it and set it up: loopback up, hostname).  The
	 * caller's must not be the host's.  Refused with an egress proxy. */
	unsigned inherit_ns;
	/* When set, the run's v1 cgroups are made at this path below each
	 * hierarchy's root (cd_cgroup_create_at: the OCI spec's
	 * cgroupsPath), not below the caller's own. */
	const char *cgroup_at;
};

/* A fresh random run id (hex).  Returns -errno only if the kernel's random
 * source fails. */
int cd_run_id_new(char out[CD_RUN_ID_LEN + 1]);

/* SHA-256 of the command line as recorded everywhere: each argument
 * followed by one NUL byte. */
void cd_argv_sha256(char *const *argv, char out[65]);

/* Run the plan.  Returns 0 when the run happened (whatever the command
 * did: see ret->reason and ret->exit_code), or a negative error when the
 * sandbox could not be set up; in both cases *ret is filled (reason
 * CD_REASON_SETUP_ERROR and exit_code 125 for the latter, with ret->error
 * saying what failed and how to fix it).  run_id is the caller's (the
 * intent record names it before the run starts). */
int cd_sandbox_run(const struct cd_plan *plan, const char *run_id, const struct cd_sandbox_io *io,
                   struct cd_result *ret, struct cd_err *err);

/* The reason's name in results and records: "exited", "signaled", ... */
const char *cd_reason_name(enum cd_reason r);

#endif
