/* cmd-oci.h — cordon as an OCI runtime (`cordon-oci`, issue 20): what
 * the command line (cmd-oci.c) shares with the container's supervisor
 * (cmd-oci-run.c).
 *
 * The contract is runc's, as containerd's runc shim (io.containerd.runc.v2,
 * through go-runc) drives it: `create --bundle B --pid-file P ID` returns
 * once the container is ready to start and leaves one process behind,
 * whose pid is in P; the shim, a child subreaper, reaps that process and
 * reports its exit status as the container's.  Here that process is
 * cordon's supervisor: it has decided the run and built the plan before
 * create returns, waits on the state directory's fifo for `start`, makes
 * the intent durable, runs the sandbox, records the result and exits
 * with the container's status (128+signal for a signal).
 */
#ifndef CD_CMD_OCI_H
#define CD_CMD_OCI_H

#include "audit/audit.h"
#include "oci/oci-spec.h"

#include <jansson.h>

#include <signal.h>
#include <stddef.h>

/* `kill ID KILL` reaches the supervisor as this signal: it kills the
 * sandbox and still records the result (SIGKILL itself would not). */
#define OCI_KILL_SIGNAL (SIGRTMIN + 3)

/* What the supervisor says on create's pipe when the container is ready
 * (after any warning lines). */
#define OCI_READY "\001ready"

/* The state directory of one container: DIR/ID. */
struct oci_ctr {
	char dir[4096];
	char fifo[4096 + 16];
	const char *id;
	const char *bundle;  /* absolute */
	const char *console; /* create's --console-socket, or NULL */
};

/* Log an error as runc does: one line on stderr and, with --log, one
 * JSON line {"level":"error","msg":...,"time":...} (the shim shows the
 * last one as the reason create failed). */
void oci_errorf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* The supervisor, in the process create forked: decide, plan, report
 * "ok" (or the reason it refuses) on report_fd and close it, wait for
 * start, run, record.  Returns the exit status. */
int oci_supervise(const struct oci_ctr *c, struct cd_oci_spec *spec, int report_fd);

/* In the supervisor, before create returns (cmd-oci-ns.c): as root, enter
 * the container's network, IPC and UTS namespaces (join those the spec
 * gives by path, make the others: loopback up, the spec's hostname), so
 * /proc/SUPERVISOR/ns/ names them (containerd's CRI plugin joins a pod's
 * containers to its sandbox's by that path); *inherit is then those
 * three CLONE_NEW* flags (cd_sandbox_io.inherit_ns).  Not root: nothing
 * (the sandbox makes its own), and a namespace by path is refused.  0, or
 * -1 with err saying why. */
int oci_ns_enter(const struct cd_oci_spec *spec, unsigned *inherit, struct cd_err *err);

/* process.terminal (cmd-oci-tty.c): make a fresh pty, send its
 * controller to the manager over `console_socket` (runc's protocol: the
 * pty's name as data, the fd as SCM_RIGHTS) and close it here; the
 * follower is *ret_follower, for the sandbox (cd_sandbox_io.direct_tty).
 * 0, or negative with err saying why (no socket given: refused). */
int oci_tty_give(const char *console_socket, int *ret_follower, struct cd_err *err);

/* CORDON_* defaults from /etc/cordon/oci.env (NAME=VALUE lines) for the
 * names the environment does not set. */
void oci_env_defaults(void);

/* root.path (cmd-oci-check.c): it must resolve to BUNDLE/rootfs, a mount
 * root below the bundle, a CRI-O/podman STORE/overlay/LAYER/merged mount
 * root, or a directory below one CORDON_OCI_ROOTS names; spec->root
 * becomes the resolved path.  0, or -CD_E_DENIED with err saying why. */
int oci_check_root(struct cd_oci_spec *spec, const char *bundle, struct cd_err *err);

/* linux.cgroupsPath (cgroupfs style): refused when that cgroup exists
 * already in a v1 hierarchy cordon uses (another's: cordon writes its
 * limits only into one it makes; the sandbox's mkdir decides in the
 * end).  0, or -CD_E_DENIED with err saying why. */
int oci_check_cgroup(const struct cd_oci_spec *spec, struct cd_err *err);

/* A container refused at create (its spec): a "decision" record (deny,
 * the reason, tool container, the id and bundle) in the audit log, so a
 * refusal is on record and not only in containerd's --log; in `open`
 * when the caller has the log open, else opened here.  Best effort:
 * the refusal stands whatever happens here. */
void oci_record_refusal(const struct oci_ctr *c, struct cd_audit *open, const char *reason);

/* The same for any refusal: `at` is the runtime command that refused
 * ("create", "exec"), `action` the record's action, `args` (borrowed,
 * may be NULL) the process asked for. */
void oci_record_denial(const struct oci_ctr *c, struct cd_audit *open, const char *at,
                       const char *action, json_t *args, const char *reason);

#endif
