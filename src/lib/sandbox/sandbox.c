/* sandbox.c — the supervisor side of a run (see sandbox.h).
 *
 * The supervisor stays outside every namespace.  It prepares the child's
 * context, clones it with a pidfd, says "go", then runs one epoll loop
 * (sandbox-supervise.c):
 * relay stdin to the command, relay and hash stdout/stderr (stopping at the
 * output cap), forward signals, enforce the wall clock, and collect the
 * child's reports.  It never trusts what the child sends beyond the fixed
 * record layout.
 */
#include "sandbox.h"

#include "util/bounds.h"
#include "cgroup.h"
#include "idmap.h"
#include "quotas.h"
#include "sandbox-int.h"
#include "termfilter.h"
#include "userns-why.h"
#include "util/util.h"

#include <errno.h>
#include <poll.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <linux/sched.h>
#include <signal.h>
#include <sodium.h>
#include <stdio.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/timerfd.h>
#include <sys/vfs.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

const char *cd_reason_name(enum cd_reason r)
{
	switch (r) {
	case CD_REASON_EXITED:
		return "exited";
	case CD_REASON_SIGNALED:
		return "signaled";
	case CD_REASON_TIMEOUT:
		return "timeout";
	case CD_REASON_MEMORY:
		return "memory";
	case CD_REASON_PIDS:
		return "pids";
	case CD_REASON_OUTPUT_LIMIT:
		return "output-limit";
	case CD_REASON_DENIED:
		return "denied";
	case CD_REASON_SETUP_ERROR:
		return "setup-error";
	case CD_REASON_COVER_REPLACED:
		return "cover-replaced";
	}
	return "unknown";
}

int cd_run_id_new(char out[CD_RUN_ID_LEN + 1])
{
	unsigned char raw[CD_RUN_ID_LEN / 2];

	if (sodium_init() < 0)
		return -EIO;
	randombytes_buf(raw, sizeof raw);
	sodium_bin2hex(out, CD_RUN_ID_LEN + 1, raw, sizeof raw);
	return 0;
}

void cd_sup_hex_digest(crypto_hash_sha256_state *st, char out[65])
{
	unsigned char d[crypto_hash_sha256_BYTES];

	crypto_hash_sha256_final(st, d);
	sodium_bin2hex(out, 65, d, sizeof d);
}

void cd_argv_sha256(char *const *argv, char out[65])
{
	crypto_hash_sha256_state st;
	size_t i;

	crypto_hash_sha256_init(&st);
	for (i = 0; argv[i]; i++)
		crypto_hash_sha256_update(&st, (const unsigned char *)argv[i], strlen(argv[i]) + 1);
	cd_sup_hex_digest(&st, out);
}

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static void u64_dec(uint64_t v, char *out, size_t cap)
{
	char tmp[24];
	size_t n = 0, i;

	do {
		tmp[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v && n < sizeof tmp);
	for (i = 0; i < n && i + 1 < cap; i++)
		out[i] = tmp[n - 1 - i];
	out[i] = '\0';
}

/* Pipes are made in pairs: [0] read end, [1] write end, both close-on-exec.
 * life is a pidfd of this process: the child polls it to learn whether we
 * died before its parent-death signal was armed.  A pidfd says so however
 * many processes hold it, where a pipe's hang-up would wait for every
 * copy of its write end (a sibling sandbox cloned at the same moment, a
 * helper forked but not yet exec'd). */
struct fds {
	int in[2], out[2], err[2], rep[2], sync[2], lis[2], prx[2], pty[2], lay[2];
	int life;
};

static void close_pair(int *p)
{
	cd_closep(&p[0]);
	cd_closep(&p[1]);
	p[0] = p[1] = -1;
}

static void close_all(struct fds *f)
{
	close_pair(f->in);
	close_pair(f->out);
	close_pair(f->err);
	close_pair(f->rep);
	close_pair(f->sync);
	cd_closep(&f->life);
	f->life = -1;
	close_pair(f->lis);
	close_pair(f->prx);
	close_pair(f->pty);
	close_pair(f->lay);
}

static int make_fds(struct fds *f)
{
	memset(f, -1, sizeof *f);
	if (pipe2(f->in, O_CLOEXEC) < 0 || pipe2(f->out, O_CLOEXEC) < 0 ||
	    pipe2(f->err, O_CLOEXEC) < 0 || pipe2(f->sync, O_CLOEXEC) < 0 ||
	    (f->life = (int)syscall(SYS_pidfd_open, getpid(), 0)) < 0 ||
	    socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, f->rep) < 0 ||
	    socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, f->lis) < 0 ||
	    socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, f->prx) < 0 ||
	    socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, f->pty) < 0 ||
	    socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, f->lay) < 0) {
		int e = -errno;
		close_all(f);
		return e;
	}
	return 0;
}

static int setup_fail(struct cd_result *res, struct cd_err *err, int code, const char *msg)
{
	int n = snprintf(res->error, sizeof res->error, "%s: %s", msg, cd_strerror(code));
	if (n < 0)
		res->error[0] = '\0';
	res->reason = CD_REASON_SETUP_ERROR;
	res->exit_code = 125;
	return cd_err_set(err, code, "%s", res->error);
}

/* A covered credential could not be watched: the run is refused with
 * what cd_sup_cover_watch() said. */
static int cover_fail(struct cd_result *res, struct cd_err *err, int code)
{
	int n = snprintf(res->error, sizeof res->error, "%s", err->msg);
	if (n < 0)
		res->error[0] = '\0';
	res->reason = CD_REASON_SETUP_ERROR;
	res->exit_code = 125;
	return code;
}

/* A terminal handed over (direct_tty): the follower side of a Unix98
 * pty (majors 136-143), as both streams, and not the caller's own
 * controlling terminal (THREATS 1: the host's terminal never goes in). */
static int check_tty(const struct cd_sandbox_io *io)
{
	struct stat st, own;
	int fd;

	if (!io->direct_stdin || !io->direct_stdout || io->stdin_fd != io->stdout_fd ||
	    fstat(io->stdin_fd, &st) < 0 || !S_ISCHR(st.st_mode) || major(st.st_rdev) < 136 ||
	    major(st.st_rdev) > 143 || !isatty(io->stdin_fd))
		return -ENOTSUP;
	fd = open("/dev/tty", O_RDONLY | O_NOCTTY | O_CLOEXEC | O_NONBLOCK);
	if (fd >= 0) {
		int same = fstat(fd, &own) == 0 && own.st_rdev == st.st_rdev;
		close(fd);
		if (same)
			return -EPERM;
	}
	return 0;
}

/* A stream handed to the command directly must be a pipe: never the
 * host's terminal (THREATS 1), a socket or a file. */
static int check_direct(const struct cd_plan *plan, const struct cd_sandbox_io *io)
{
	struct stat st;

	if (!io->direct_stdin && !io->direct_stdout)
		return io->direct_tty ? -EINVAL : 0;
	if (plan->tty)
		return -EINVAL;
	if (io->direct_stdout && io->mask && cd_mask_rules_active(io->mask))
		return -EINVAL;
	if (io->direct_tty)
		return check_tty(io);
	if (io->direct_stdin && (fstat(io->stdin_fd, &st) < 0 || !S_ISFIFO(st.st_mode)))
		return -ENOTSUP;
	if (io->direct_stdout && (fstat(io->stdout_fd, &st) < 0 || !S_ISFIFO(st.st_mode)))
		return -ENOTSUP;
	return 0;
}

/* A root caller (plan->idmap): the caller's trees as idmapped detached
 * mounts for the child (idmap.h); -1 everywhere else. */
static int open_trees(const struct cd_plan *plan, struct cd_child_ctx *ctx, struct cd_result *res,
                      struct cd_err *err)
{
	struct cd_err e;
	size_t i;
	int r, n;

	for (i = 0; i < CD_PLAN_MAX_MOUNTS; i++)
		ctx->tree_fd[i] = -1;
	if (!plan->idmap)
		return 0;
	memset(&e, 0, sizeof e);
	r = cd_idmap_open_trees(plan, ctx->tree_fd, CD_PLAN_MAX_MOUNTS, &res->idmapped_binds,
	                        &res->plain_binds, &e);
	if (r < 0) {
		n = snprintf(res->error, sizeof res->error, "%s", e.msg);
		if (n < 0)
			res->error[0] = '\0';
		res->reason = CD_REASON_SETUP_ERROR;
		res->exit_code = 125;
		return cd_err_set(err, r, "%s", res->error);
	}
	return 0;
}

static void close_trees(struct cd_child_ctx *ctx)
{
	size_t i;

	for (i = 0; i < CD_PLAN_MAX_MOUNTS; i++)
		cd_closep(&ctx->tree_fd[i]);
}

/* clone3 the sandbox; for a root caller with the dedicated id's effective
 * ids, so the sandbox's user namespace is that id's (idmap.h).  Returns
 * the pid, 0 in the child, -errno. */
static long clone_sandbox(const struct cd_plan *plan, struct clone_args *ca)
{
	struct cd_idmap_creds c;
	long pid;
	int r, e;

	if (!plan->idmap) {
		pid = syscall(SYS_clone3, ca, sizeof *ca);
		return pid < 0 ? -errno : pid;
	}
	if ((r = cd_idmap_creds_enter(plan, &c)) < 0)
		return r;
	pid = syscall(SYS_clone3, ca, sizeof *ca);
	if (pid == 0)
		return 0; /* the child keeps the dedicated ids */
	e = errno;
	r = cd_idmap_creds_leave(&c);
	if (r < 0) {
		if (pid > 0)
			kill((pid_t)pid, SIGKILL); /* reaped by the caller's abort */
		return r;
	}
	return pid < 0 ? -e : pid;
}

/* Why the namespaces were refused, named (a chroot first): one line.
 * AppArmor refuses the user namespace with EACCES where no profile takes
 * it, and the others with EPERM where its unprivileged_userns profile
 * strips the new namespace's capabilities. */
static const char *clone_hint(int e, char *buf, size_t n)
{
	struct cd_userns_facts facts;

	if (e != -EPERM && e != -EACCES && e != -ENOSPC && e != -EUSERS)
		return "cannot create the sandbox's namespaces";
	cd_userns_facts_read(&facts);
	snprintf(buf, n, "cannot create the sandbox's namespaces (%s)",
	         cd_userns_hint(cd_userns_classify(&facts)));
	return buf;
}

/* The child's context: its ends of the pipes and sockets, the id maps,
 * and the mounts' sizes as text (the child allocates nothing).  -EINVAL
 * when an id map does not fit. */
static int fill_ctx(const struct cd_plan *plan, const struct cd_sandbox_io *io, const struct fds *f,
                    struct cd_child_ctx *ctx)
{
	size_t i;
	int n1, n2;

	memset(ctx, 0, sizeof *ctx);
	ctx->plan = plan;
	ctx->report_fd = f->rep[1];
	ctx->sync_fd = f->sync[0];
	ctx->lifeline_fd = f->life;
	ctx->stdio[0] = io->direct_stdin ? io->stdin_fd : f->in[0];
	ctx->stdio[1] = io->direct_stdout ? io->stdout_fd : f->out[1];
	ctx->stdio[2] = io->direct_tty ? io->stdin_fd : f->err[1];
	ctx->ctty = io->direct_tty != 0;
	n1 = snprintf(ctx->uid_map, sizeof ctx->uid_map, "%u %u 1\n", (unsigned)plan->uid,
	              (unsigned)plan->host_uid);
	n2 = snprintf(ctx->gid_map, sizeof ctx->gid_map, "%u %u 1\n", (unsigned)plan->gid,
	              (unsigned)plan->host_gid);
	if (n1 < 0 || n2 < 0 || (size_t)n1 >= sizeof ctx->uid_map ||
	    (size_t)n2 >= sizeof ctx->gid_map)
		return -EINVAL;
	for (i = 0; i < plan->nmounts && i < CD_PLAN_MAX_MOUNTS; i++) {
		u64_dec(plan->mounts[i].size, ctx->tmpfs_size[i], sizeof ctx->tmpfs_size[i]);
		if (plan->mounts[i].kind == CD_MNT_OVERLAY)
			u64_dec(plan->mounts[i].inodes, ctx->layer_inodes,
			        sizeof ctx->layer_inodes);
	}
	ctx->layer_fd = f->lay[1];
	ctx->listener_fd = f->lis[1];
	ctx->proxy_fd = f->prx[1];
	ctx->pty_fd = f->pty[1];
	ctx->watch_fd = plan->watch_instance ? plan->watch_fd : -1;
	ctx->inherit_ns = io->inherit_ns;
	return 0;
}

/* After the clone: the child's ends belong to the child now; our ends of
 * the sockets pass from `f` to the supervisor. */
static void hand_over(struct fds *f, struct cd_child_ctx *ctx, struct cd_supervisor *s)
{
	close_trees(ctx);
	cd_closep(&f->in[0]);
	cd_closep(&f->out[1]);
	cd_closep(&f->err[1]);
	cd_closep(&f->rep[1]);
	cd_closep(&f->sync[0]);
	cd_closep(&f->life);
	f->life = -1;
	cd_closep(&f->lis[1]);
	cd_closep(&f->prx[1]);
	f->prx[1] = -1;
	cd_closep(&f->pty[1]);
	f->pty[1] = -1;
	cd_closep(&f->lay[1]);
	f->lay[1] = -1;
	s->laysock = f->lay[0];
	f->lay[0] = -1;
	s->ptysock = f->pty[0];
	f->pty[0] = -1;
	s->psock = f->prx[0];
	f->prx[0] = -1;
	f->in[0] = f->out[1] = f->err[1] = f->rep[1] = f->sync[0] = f->lis[1] = -1;
	s->lsock = f->lis[0];
	f->lis[0] = -1;
}

/* The supervisor's view of the run: where each stream goes, whether it
 * is filtered or held for masking; no fd is opened here. */
static void init_supervisor(struct cd_supervisor *s, const struct cd_plan *plan,
                            const struct cd_sandbox_io *io, struct cd_result *res, int pidfd,
                            const struct fds *f)
{
	s->plan = plan;
	s->io = io;
	s->res = res;
	s->pidfd = pidfd;
	s->report_fd = f->rep[0];
	s->out.to = io->stdout_fd;
	s->err.to = io->stderr_fd;
	s->out.filter = io->filter_stdout != 0;
	s->err.filter = io->filter_stderr != 0;
	cd_termfilter_init(&s->out.tf);
	cd_termfilter_init(&s->err.tf);
	if (io->mask && cd_mask_rules_active(io->mask)) {
		uint64_t cap = plan->limits.output_limit;
		size_t hc = cap && cap < CD_SANDBOX_MASK_MAX ? (size_t)cap : CD_SANDBOX_MASK_MAX;
		cd_buf_init(&s->out.held, hc);
		cd_buf_init(&s->err.held, hc);
		s->out.holding = s->err.holding = 1;
	}
	s->in_from = io->direct_stdin ? -1 : io->stdin_fd;
	s->timerfd = -1;
	s->out.from = s->err.from = s->in_to = -1;
}

/* Our ends of the pipes and sockets, the caller's signals and stdin and
 * the wall clock on one epoll set; the run's cgroup made and the child
 * moved in.  -1 to abort the run, with its error in *rp (and what failed
 * in *what when it is not the supervision). */
static int watch_fds(struct cd_supervisor *s, const struct cd_plan *plan,
                     const struct cd_sandbox_io *io, struct fds *f, long pid, const char **what,
                     int *rp, struct cd_err *err)
{
	int r = *rp;

	s->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (s->epfd < 0) {
		r = -errno;
		goto abort;
	}
	if (plan->tty) {
		/* The pty carries all three streams; the pipes stay unused. */
		if ((r = cd_sup_ep_add(s->epfd, s->ptysock, EPOLLIN, CD_EV_PTY)) < 0)
			goto abort;
	} else {
		cd_closep(&s->ptysock); /* no pty: nothing will come */
		s->ptysock = -1;
		s->out.from = f->out[0];
		s->err.from = f->err[0];
		s->in_to = f->in[1];
		f->out[0] = f->err[0] = f->in[1] = -1;
		if ((s->out.from >= 0 && cd_sup_set_nonblock(s->out.from) < 0) ||
		    cd_sup_set_nonblock(s->err.from) < 0 ||
		    (s->in_to >= 0 && cd_sup_set_nonblock(s->in_to) < 0)) {
			r = -errno;
			goto abort;
		}
		if ((s->out.from >= 0 &&
		     (r = cd_sup_ep_add(s->epfd, s->out.from, EPOLLIN, CD_EV_OUT)) < 0) ||
		    (r = cd_sup_ep_add(s->epfd, s->err.from, EPOLLIN, CD_EV_ERR)) < 0 ||
		    (s->in_to >= 0 && (r = cd_sup_ep_add(s->epfd, s->in_to, 0, CD_EV_IN_TO)) < 0))
			goto abort;
	}
	if ((r = cd_sup_ep_add(s->epfd, s->report_fd, EPOLLIN, CD_EV_REPORT)) < 0 ||
	    (r = cd_sup_ep_add(s->epfd, s->pidfd, EPOLLIN, CD_EV_PID)) < 0 ||
	    (r = cd_sup_ep_add(s->epfd, s->lsock, EPOLLIN, CD_EV_LSOCK)) < 0)
		goto abort;
	if (plan->proxy_port && (r = cd_sup_ep_add(s->epfd, s->psock, EPOLLIN, CD_EV_PROXY)) < 0)
		goto abort;
	/* The child builds the sandbox's filesystem meanwhile; it waits for
	 * CD_SYNC_PLACED before anything the limits must cover can start. */
	if ((r = cd_cgroup_create_at(s->res->run_id, &plan->limits, io->cgroup_at, &s->cg, err)) <
	    0) {
		*what = r == -EEXIST && io->cgroup_at
		                ? "create the run's cgroup (cgroupsPath): it exists already, "
		                  "another's"
		                : "create the run's cgroup";
		goto abort;
	}
	if ((r = cd_cgroup_attach(s->cg, (pid_t)pid, err)) < 0)
		goto abort;
	if (io->signal_fd >= 0 &&
	    (r = cd_sup_ep_add(s->epfd, io->signal_fd, EPOLLIN, CD_EV_SIGNAL)) < 0)
		goto abort;
	if (s->in_from >= 0 && !plan->tty) {
		r = cd_sup_ep_add(s->epfd, s->in_from, EPOLLIN, CD_EV_IN_FROM);
		if (r == -EPERM)
			s->in_pollable = 0; /* a regular file or /dev/null: always ready */
		else if (r < 0)
			goto abort;
		else
			s->in_pollable = 1;
	}
	if (plan->limits.timeout_ms) {
		struct itimerspec its;

		memset(&its, 0, sizeof its);
		its.it_value.tv_sec = (time_t)(plan->limits.timeout_ms / 1000);
		its.it_value.tv_nsec = (long)(plan->limits.timeout_ms % 1000) * 1000000L;
		s->timerfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC);
		if (s->timerfd < 0 || timerfd_settime(s->timerfd, 0, &its, NULL) < 0 ||
		    (r = cd_sup_ep_add(s->epfd, s->timerfd, EPOLLIN, CD_EV_TIMER)) < 0) {
			r = s->timerfd < 0 ? -errno : r;
			goto abort;
		}
	}
	*rp = r;
	return 0;
abort:
	*rp = r;
	return -1;
}

/* Tell the child it is placed (with the limits its cgroup enforces), let
 * the caller record the run, then say "run" (or close the pipe: the child
 * exits without the command).  -1 to abort the run, with its error in
 * *rp. */
static int start_command(struct cd_supervisor *s, const struct cd_plan *plan,
                         const struct cd_sandbox_io *io, struct cd_result *res, struct fds *f,
                         int *rp)
{
	char placed, run = CD_SYNC_RUN;

	/* Everything is in place: let the child raise its walls, then (once
	 * the caller has recorded the run) let it start the command. */
	placed = CD_SYNC_PLACED | (cd_cgroup_enforces(s->cg, "memory") ? CD_SYNC_CG_MEMORY : 0) |
	         (cd_cgroup_enforces(s->cg, "pids") ? CD_SYNC_CG_PIDS : 0);
	s->prog = cd_quotas_prog(plan, (placed & CD_SYNC_CG_MEMORY) != 0);
	if (write(f->sync[1], &placed, 1) != 1) {
		*rp = -errno;
		return -1;
	}
	if (io->before_exec) {
		if (io->before_exec(io->before_exec_ctx, res->error, sizeof res->error) < 0) {
			if (!res->error[0]) {
				int n = snprintf(res->error, sizeof res->error,
				                 "the run could not be recorded");
				if (n < 0)
					res->error[0] = '\0';
			}
			res->reason = CD_REASON_SETUP_ERROR;
			cd_closep(&f->sync[1]); /* EOF: the child exits without the command */
			f->sync[1] = -1;
		}
	}
	if (f->sync[1] >= 0 && write(f->sync[1], &run, 1) != 1 && errno != EPIPE) {
		*rp = -errno;
		return -1;
	}
	cd_closep(&f->sync[1]);
	f->sync[1] = -1;
	return 0;
}

/* The run failed before the command ended: kill and reap the sandbox,
 * and say why.  Returns the run's error. */
static int abort_run(struct cd_supervisor *s, int r, const char *what, struct cd_err *err)
{
	struct cd_result *res = s->res;

	cd_sup_kill_sandbox(s);
	if (!s->child_done)
		cd_sup_reap(s);
	/* A child that failed first (a bind source swapped for a symlink, a
	 * mount refused) left its reason on the report socket: that, not the
	 * broken pipe or the vanished process it left us, is what happened. */
	if (s->report_fd >= 0)
		cd_sup_read_reports(s);
	if (res->reason == CD_REASON_SETUP_ERROR && res->error[0]) {
		res->exit_code = 125;
		r = cd_err_set(err, -CD_E_KERNEL, "%s", res->error);
	} else {
		setup_fail(res, err, r, what);
	}
	return r;
}

/* Close everything the run opened and still holds, whichever way it
 * ended. */
static void release(struct cd_supervisor *s, struct fds *f, int *pidfd)
{
	cd_sup_close_stream(s, &s->out);
	cd_sup_close_stream(s, &s->err);
	cd_sup_close_stdin_pipe(s);
	if (s->report_fd >= 0)
		close(s->report_fd);
	if (s->timerfd >= 0)
		close(s->timerfd);
	if (s->epfd >= 0)
		close(s->epfd);
	cd_sup_cover_release(s);
	cd_closep(&s->lsock);
	cd_closep(&s->psock);
	cd_closep(&s->ptysock);
	cd_closep(&s->laysock);
	cd_sup_close_listener(s);
	cd_closep(&f->in[1]);
	cd_closep(&f->out[0]);
	cd_closep(&f->err[0]);
	cd_cgroup_destroy(s->cg);
	cd_closep(pidfd);
	cd_closep(&f->sync[1]);
	cd_closep(&f->life);
	free(s->in_buf);
}

int cd_sandbox_run(const struct cd_plan *plan, const char *run_id, const struct cd_sandbox_io *io,
                   struct cd_result *res, struct cd_err *err)
{
	struct cd_child_ctx ctx;
	struct cd_supervisor s;
	char hint[512];
	struct clone_args ca;
	struct fds f;
	uint64_t t0 = now_ms();
	const char *what = "supervise the sandbox";
	int pidfd = -1, r;
	long pid;

	memset(res, 0, sizeof *res);
	memset(&s, 0, sizeof s);
	s.lsock = s.listener = s.psock = s.ptysock = s.ptm = s.laysock = s.cover_fd = -1;
	s.prog = &plan->seccomp;
	if (plan->proxy_port && !io->on_proxy)
		return setup_fail(res, err, -EINVAL,
		                  "the plan has an egress proxy but nothing serves it");
	if (io->inherit_ns & ~(unsigned)(CLONE_NEWNET | CLONE_NEWIPC | CLONE_NEWUTS) ||
	    (plan->proxy_port && (io->inherit_ns & CLONE_NEWNET)))
		return setup_fail(res, err, -EINVAL,
		                  "only the network, IPC and UTS namespaces may be the caller's, "
		                  "and the network one not with an egress proxy");
	if (cd_sup_plan_overlay(plan) && !io->on_layer)
		return setup_fail(res, err, -EINVAL,
		                  "the plan has an overlay but nothing takes its layer");
	if (run_id)
		memcpy(res->run_id, run_id, strnlen(run_id, CD_RUN_ID_LEN));
	cd_argv_sha256(plan->argv, res->argv_sha256);
	crypto_hash_sha256_init(&s.out.hash);
	crypto_hash_sha256_init(&s.err.hash);
	crypto_hash_sha256_init(&s.in_hash);

	if ((r = check_direct(plan, io)) < 0)
		return setup_fail(
		        res, err, r,
		        "direct stdio: only pipes or a pty given away, never the caller's "
		        "terminal, a session pty or masked output");
	s.in_buf = malloc(CD_RELAY_CHUNK);
	if (!s.in_buf)
		return setup_fail(res, err, -ENOMEM, "allocate the stdin buffer");
	if ((r = make_fds(&f)) < 0) {
		free(s.in_buf);
		return setup_fail(res, err, r, "create pipes");
	}
	/* A direct stream's relay pipe is never used. */
	if (io->direct_stdin)
		close_pair(f.in);
	if (io->direct_stdout)
		close_pair(f.out);

	if (fill_ctx(plan, io, &f, &ctx) < 0) {
		close_all(&f);
		free(s.in_buf);
		return setup_fail(res, err, -EINVAL, "format the id maps");
	}
	if ((r = open_trees(plan, &ctx, res, err)) < 0) {
		close_all(&f);
		free(s.in_buf);
		return r;
	}
	/* Before the child mounts anything: no replacement goes unseen. */
	if ((r = cd_sup_cover_watch(&s, plan, err)) < 0) {
		close_trees(&ctx);
		close_all(&f);
		free(s.in_buf);
		return cover_fail(res, err, r);
	}

	memset(&ca, 0, sizeof ca);
	ca.flags = CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWNET | CLONE_NEWIPC |
	           CLONE_NEWUTS | CLONE_PIDFD;
	ca.flags &= ~(uint64_t)io->inherit_ns;
	ca.pidfd = (uint64_t)(uintptr_t)&pidfd;
	ca.exit_signal = SIGCHLD;
	pid = clone_sandbox(plan, &ca);
	if (pid < 0) {
		r = (int)pid;
		close_trees(&ctx);
		close_all(&f);
		free(s.in_buf);
		cd_sup_cover_release(&s);
		return setup_fail(res, err, r, clone_hint(r, hint, sizeof hint));
	}
	if (pid == 0)
		cd_child_main(&ctx); /* never returns */

	hand_over(&f, &ctx, &s);
	init_supervisor(&s, plan, io, res, pidfd, &f);
	if (watch_fds(&s, plan, io, &f, pid, &what, &r, err) < 0)
		goto abort;
	if (s.cover_fd >= 0 && (r = cd_sup_ep_add(s.epfd, s.cover_fd, EPOLLIN, CD_EV_COVER)) < 0) {
		what = "watch the covered credentials";
		goto abort;
	}
	if (start_command(&s, plan, io, res, &f, &r) < 0)
		goto abort;
	cd_sup_run(&s);
	res->wall_ms = now_ms() - t0;
	r = 0;
	if (res->reason == CD_REASON_SETUP_ERROR)
		r = cd_err_set(err, -CD_E_KERNEL, "%s", res->error);
	goto out;
abort:
	r = abort_run(&s, r, what, err);
out:
	release(&s, &f, &pidfd);
	return r;
}
