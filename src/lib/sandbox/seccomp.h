/* seccomp.h — the seccomp second wall of `cordon run`.
 *
 * A default-deny allowlist built with libseccomp in the parent (where malloc
 * is allowed), exported to classic BPF in memory, and installed in the child
 * with one raw seccomp(2) call (async-signal-safe, between fork and exec).
 *
 * Denied calls are made visible: with opts.notify the filter returns
 * SECCOMP_RET_USER_NOTIF, the child hands the listener fd to the supervisor
 * (cd_fd_send / cd_fd_recv) and the supervisor answers each notification with
 * the errno the call is refused with and counts it (cd_seccomp_notify_handle).
 * The supervisor never lets a call continue: a notification always fails.
 *
 * Trust boundary: everything the filter sees comes from the sandboxed
 * program; the notification data comes from the kernel.  The listener fd is
 * the key to the wall: whoever holds it decides what the sandbox's refused
 * calls return, so only the supervisor may keep it (see cd_seccomp_install).
 *
 * x86_64 only (the native ABI); i386 (`int 0x80`) and x32 (syscall numbers
 * with bit 30 set) are refused, through the listener when notify is on,
 * otherwise by killing the process (SIGSYS), so they are never silent. */
#ifndef CD_SECCOMP_H
#define CD_SECCOMP_H

#include "util/err.h"

#include <jansson.h>
#include <linux/filter.h>
#include <stdint.h>

/* Native syscall numbers tracked for the reply errno (x86_64 uses < 512). */
#define CD_SECCOMP_NR_MAX   512
#define CD_SECCOMP_NR_WORDS (CD_SECCOMP_NR_MAX / 64)

/* Distinct (arch, nr) pairs counted per run; more go to `overflow`. */
#define CD_SECCOMP_STATS_MAX 64

/* The x32 ABI marks its syscall numbers with this bit on x86_64. */
#define CD_SECCOMP_X32_BIT 0x40000000

struct cd_seccomp_opts {
	int allow_net_inet; /* AF_INET/AF_INET6 sockets allowed; AF_UNIX always */
	int notify;         /* 1: denials go to a user-notification listener */
};

/* The exported filter plus what the supervisor needs to answer for it.
 * Embedded: cd_seccomp_build() fills it, cd_seccomp_prog_release() frees the
 * filter.  Read-only after build, so a forked child may use it. */
struct cd_seccomp_prog {
	struct sock_filter *filter; /* owned; len instructions */
	unsigned short len;
	int notify;                          /* built for a listener */
	uint64_t eperm[CD_SECCOMP_NR_WORDS]; /* native nrs refused with EPERM */
};

/* Build the filter for `o` and export it to BPF.  On success *ret is filled
 * (release it with cd_seccomp_prog_release).  Errors: -CD_E_KERNEL when the
 * kernel or libseccomp lacks what `o` needs (user notification, the native
 * arch is not x86_64), -ENOMEM, -errno from the export; `err` says which. */
int cd_seccomp_build(const struct cd_seccomp_opts *o, struct cd_seccomp_prog *ret,
                     struct cd_err *err);

/* Free the filter; accepts NULL and a released or zeroed prog. */
void cd_seccomp_prog_release(struct cd_seccomp_prog *p);

/* The default program, generated at build time by src/gen/gen-seccomp.c
 * and linked into the cordon binary only (a weak reference elsewhere:
 * unit tests and the generator itself build with libseccomp).
 * cd_seccomp_build() copies it when the options match. */
struct cd_seccomp_prebuilt {
	const struct sock_filter *filter;
	unsigned short len; /* 0: none, build at run time */
	int allow_net_inet, notify;
	uint64_t eperm[CD_SECCOMP_NR_WORDS];
};
extern const struct cd_seccomp_prebuilt cd_seccomp_prebuilt __attribute__((weak));

/* A container's own profile (the OCI spec's linux.seccomp), built as a
 * second filter stacked on cordon's (seccomp-profile.c): for each call the
 * kernel takes the stricter action of the two, so the profile can narrow
 * what cordon allows and never widen it. */
enum cd_seccomp_act {
	CD_SCP_ALLOW,
	CD_SCP_ERRNO, /* errno_ret */
	CD_SCP_KILL_THREAD,
	CD_SCP_KILL_PROCESS,
	CD_SCP_TRAP,
	CD_SCP_LOG, /* allowed and logged by the kernel */
};

/* Comparison operators, libseccomp's scmp_compare values. */
enum cd_seccomp_cmp {
	CD_SCP_NE = 1,
	CD_SCP_LT,
	CD_SCP_LE,
	CD_SCP_EQ,
	CD_SCP_GE,
	CD_SCP_GT,
	CD_SCP_MASKED_EQ, /* (arg & value) == value2 */
};

#define CD_SECCOMP_PROFILE_MAX_RULES 4096

struct cd_seccomp_rule {
	char *name; /* the system call; one unknown here is skipped */
	enum cd_seccomp_act act;
	int errno_ret;
	unsigned nargs;
	struct {
		unsigned index; /* 0..5 */
		enum cd_seccomp_cmp op;
		uint64_t value, value2;
	} args[6];
};

struct cd_seccomp_profile {
	enum cd_seccomp_act def;
	int def_errno;
	struct cd_seccomp_rule *rules;
	size_t nrules;
};

/* Build `pr` into a filter (no listener) for the native ABI; calls of
 * another ABI take the default action.  *ret_skipped counts rules naming
 * a call this libseccomp does not know (skipped, as runc does).  0 or a
 * negative error with `err` saying which rule. */
int cd_seccomp_build_profile(const struct cd_seccomp_profile *pr, struct cd_seccomp_prog *ret,
                             unsigned *ret_skipped, struct cd_err *err);

/* Internal (seccomp-profile.c): export a libseccomp filter context to
 * p->filter / p->len. */
int cd_seccomp_export(void *ctx, struct cd_seccomp_prog *p, struct cd_err *err);

/* Child side, async-signal-safe: install `p` on the calling thread with one
 * seccomp(2) call.  no_new_privs must already be set (checked: -EPERM
 * otherwise, even for root, so the order cannot silently change).  With a
 * notify prog, *ret_listener receives the listener fd (O_CLOEXEC): send it to
 * the supervisor and close it at once, before any untrusted code runs in a
 * process that could reach it (pidfd_getfd is refused by the filter, but an
 * inherited fd is not).  The kernel refuses a second listener in one filter
 * chain (-EBUSY), so a sandbox nested in another notifying sandbox must fall
 * back to a non-notify prog.  Returns 0 or -errno. */
int cd_seccomp_install(const struct cd_seccomp_prog *p, int *ret_listener);

/* Pass one fd over a unix socket (SCM_RIGHTS).  cd_fd_send is
 * async-signal-safe (child side); the caller keeps and closes its `fd`.
 * cd_fd_recv returns a new O_CLOEXEC fd in *ret_fd (caller owns it);
 * -EPIPE when the peer closed, -EBADMSG when the message held no fd or more
 * than one (extras are closed). */
int cd_fd_send(int sock, int fd);
int cd_fd_recv(int sock, int *ret_fd);

struct cd_seccomp_stat {
	uint32_t arch; /* AUDIT_ARCH_* as in seccomp_data */
	int32_t nr;    /* as in seccomp_data (x32 numbers keep bit 30) */
	uint64_t count;
};

/* Refused calls of one run.  Fixed size, no allocation. */
struct cd_seccomp_stats {
	uint64_t total;    /* every refused call, counted or not */
	uint64_t overflow; /* refused calls of pairs that did not fit in e[] */
	unsigned n;        /* entries used in e[] */
	struct cd_seccomp_stat e[CD_SECCOMP_STATS_MAX];
};

void cd_seccomp_stats_init(struct cd_seccomp_stats *st);

/* Count of (arch, nr), 0 when absent. */
uint64_t cd_seccomp_stats_get(const struct cd_seccomp_stats *st, uint32_t arch, int32_t nr);

/* Supervisor side: receive one notification from `listener`, count it in
 * `st`, and answer it with the errno the call is refused with (EPERM; ENOSYS
 * for io_uring_*, landlock_*, openat2, io_setup and numbers this filter does
 * not know, so libc falls back as on an older kernel).  Never lets a call continue.  Call it
 * when the listener polls readable.  Returns 1 when a call was counted and
 * answered, 0 when there was nothing to answer (the caller died or was
 * interrupted: ENOENT), -errno otherwise (-EINTR: call again).  POLLHUP on
 * the listener means no process uses the filter any more: close it. */
int cd_seccomp_notify_handle(int listener, const struct cd_seccomp_prog *p,
                             struct cd_seccomp_stats *st);

/* The errno a refused (arch, nr) is answered with by the handler. */
int cd_seccomp_reply_errno(const struct cd_seccomp_prog *p, uint32_t arch, int32_t nr);

/* The refused calls as a new jansson array, in the order first seen:
 * [{"syscall":"ptrace","arch":"x86_64","nr":101,"count":2}, ...].  arch is
 * "x86_64", "x32" or "i386" (or "0x%08x"); syscall is the name libseccomp
 * gives, or "unknown".  When some pairs did not fit, one last entry
 * {"syscall":"(other)","arch":"(other)","count":overflow} keeps the sum of
 * counts equal to total.  Caller owns *ret_json.  -ENOMEM on failure. */
int cd_seccomp_stats_json(const struct cd_seccomp_stats *st, json_t **ret_json);

/* How the filter treats native syscall `name`, for plans, docs and tests. */
enum {
	CD_SC_UNKNOWN = 0, /* not in any table: refused with ENOSYS when notify */
	CD_SC_ALLOW,       /* allowed unconditionally */
	CD_SC_COND,        /* allowed for some arguments, else EPERM */
	CD_SC_EPERM,       /* always refused with EPERM */
	CD_SC_ENOSYS,      /* always refused with ENOSYS (counted) */
	CD_SC_SILENT,      /* ENOSYS straight from the filter, not counted (clone3) */
};
int cd_seccomp_policy_of(const char *name);

#endif
