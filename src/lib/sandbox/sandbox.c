/* sandbox.c — the supervisor side of a run (see sandbox.h).
 *
 * The supervisor stays outside every namespace.  It prepares the child's
 * context, clones it with a pidfd, says "go", then runs one epoll loop:
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
#include <sys/timerfd.h>
#include <sys/vfs.h>
#include <sys/wait.h>
#include <time.h>

#define CD_RELAY_CHUNK (64 * 1024)

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

static void cd_sup_hex_digest(crypto_hash_sha256_state *st, char out[65])
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

/* Write what the command printed toward the caller's fd, through the
 * terminal filter when asked.  -1 when the write failed. */
static int write_out(struct cd_stream *st, const char *buf, size_t len)
{
	char fbuf[CD_RELAY_CHUNK + CD_TERMFILTER_HOLD];
	size_t off = 0;

	while (off < len) {
		size_t take = len - off < CD_RELAY_CHUNK ? len - off : CD_RELAY_CHUNK, n = take;
		const char *p = buf + off;

		if (st->filter) {
			n = cd_termfilter_run(&st->tf, p, take, fbuf);
			p = fbuf;
		}
		if (n && cd_write_all(st->to, p, n) < 0)
			return -1;
		if (n)
			st->open_line = p[n - 1] != '\n';
		off += take;
	}
	return 0;
}

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
};

static int cd_sup_set_nonblock(int fd);

static int cd_sup_ep_add(int epfd, int fd, uint32_t events, uint64_t tag)
{
	struct epoll_event ev;

	memset(&ev, 0, sizeof ev);
	ev.events = events;
	ev.data.u64 = tag;
	return epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &ev) < 0 ? -errno : 0;
}

static void cd_sup_kill_sandbox(struct cd_supervisor *s)
{
	/* SIGKILL to the init kills the whole pid namespace; the cgroup kill
	 * catches anything that got out of it. */
	syscall(SYS_pidfd_send_signal, s->pidfd, SIGKILL, NULL, 0);
	if (s->cg)
		cd_cgroup_kill(s->cg);
}

/* The sandbox's init sends the seccomp listener once, over its own socket. */
static void receive_listener(struct cd_supervisor *s)
{
	int fd = -1;

	if (cd_fd_recv(s->lsock, &fd) == 0) {
		s->listener = fd;
		if (cd_sup_ep_add(s->epfd, fd, EPOLLIN, CD_EV_LISTENER) < 0) {
			/* Unanswered notifications would hang the command: stop the run. */
			cd_sup_kill_sandbox(s);
		}
	}
	epoll_ctl(s->epfd, EPOLL_CTL_DEL, s->lsock, NULL);
	close(s->lsock);
	s->lsock = -1;
}

/* The egress proxy's listening socket arrives once; the caller serves it. */
static void receive_proxy(struct cd_supervisor *s)
{
	int fd = -1;

	if (cd_fd_recv(s->psock, &fd) == 0)
		s->io->on_proxy(fd, s->io->proxy_ctx);
	epoll_ctl(s->epfd, EPOLL_CTL_DEL, s->psock, NULL);
	close(s->psock);
	s->psock = -1;
}

static int cd_sup_plan_overlay(const struct cd_plan *p)
{
	size_t i;

	for (i = 0; i < p->nmounts; i++) {
		if (p->mounts[i].kind == CD_MNT_OVERLAY)
			return 1;
	}
	return 0;
}

/* Proposal mode: the overlay's layer tmpfs, sent by the child while it
 * built the sandbox, waits in the socket; read it once the run is over
 * (the sandbox's processes are gone: nothing writes to it any more).  It
 * must be the root directory of a tmpfs, or it is dropped. */
static void cd_sup_receive_layer(struct cd_supervisor *s)
{
	struct statfs sf;
	struct stat st;
	int fd = -1;

	if (s->laysock < 0 || !cd_sup_plan_overlay(s->plan))
		return;
	if (cd_sup_set_nonblock(s->laysock) == 0 && cd_fd_recv(s->laysock, &fd) == 0) {
		if (fstatfs(fd, &sf) == 0 && sf.f_type == TMPFS_MAGIC && fstat(fd, &st) == 0 &&
		    S_ISDIR(st.st_mode))
			s->io->on_layer(fd, s->io->layer_ctx);
		else
			close(fd);
	}
	cd_closep(&s->laysock);
	s->laysock = -1;
}

static void cd_sup_close_listener(struct cd_supervisor *s)
{
	if (s->listener >= 0) {
		epoll_ctl(s->epfd, EPOLL_CTL_DEL, s->listener, NULL);
		close(s->listener);
		s->listener = -1;
	}
}

static void answer_seccomp(struct cd_supervisor *s, uint32_t events)
{
	if (events & EPOLLIN) {
		int r = cd_seccomp_notify_handle(s->listener, s->prog, &s->res->denied);
		if (r < 0 && r != -EINTR && r != -EAGAIN)
			cd_sup_close_listener(s);
		return;
	}
	if (events & (EPOLLHUP | EPOLLERR))
		cd_sup_close_listener(s); /* no process uses the filter any more */
}

static void cd_sup_close_stream(struct cd_supervisor *s, struct cd_stream *st)
{
	if (st->from >= 0 && st->from == s->ptm)
		s->ptm = -1;
	if (st->from >= 0) {
		epoll_ctl(s->epfd, EPOLL_CTL_DEL, st->from, NULL);
		close(st->from);
		st->from = -1;
	}
}

static void relay_out(struct cd_supervisor *s, struct cd_stream *st)
{
	char buf[CD_RELAY_CHUNK];
	uint64_t cap = s->plan->limits.output_limit;

	for (;;) {
		ssize_t n = read(st->from, buf, sizeof buf);
		size_t keep;

		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN)
				return;
			cd_sup_close_stream(s, st);
			return;
		}
		if (n == 0) {
			cd_sup_close_stream(s, st);
			return;
		}
		keep = (size_t)n;
		if (cap && st->bytes + keep > cap) {
			keep = (size_t)(cap - st->bytes);
			if (!s->killed_output) {
				s->killed_output = 1;
				cd_sup_kill_sandbox(s);
			}
		}
		if (keep) {
			crypto_hash_sha256_update(&st->hash, (unsigned char *)buf, keep);
			st->bytes += keep;
			if (s->plan->tty && s->io->record)
				s->io->record(s->io->record_ctx, 'o', buf, keep);
			if (st->holding) {
				if (!st->overflow && cd_buf_append(&st->held, buf, keep) < 0)
					st->overflow = 1;
			} else if (st->to >= 0 && write_out(st, buf, keep) < 0) {
				st->to = -1; /* the reader went away: keep draining, stop writing */
			}
		}
		if (keep < (size_t)n) {
			cd_sup_close_stream(s, st);
			return;
		}
	}
}

/* Masking: write what a stream held, masked, or withhold it all. */
static void cd_sup_flush_masked(struct cd_supervisor *s, struct cd_stream *st, const char *name)
{
	struct cd_buf out;
	int r = -CD_E_LIMIT;

	if (!st->holding)
		return;
	cd_buf_init(&out, (size_t)CD_SANDBOX_MASK_MAX * 2);
	if (!st->overflow)
		r = cd_mask_text(s->io->masker, s->io->mask, st->held.data, st->held.len, &out,
		                 NULL);
	if (r == 0 && st->to >= 0 && write_out(st, out.data, out.len) < 0)
		st->to = -1;
	if (r < 0 && s->io->stderr_fd >= 0) {
		char note[160];
		int n = snprintf(note, sizeof note,
		                 "cordon: %s withheld: it could not be masked (%s)\n", name,
		                 st->overflow ? "past the masking cap" : cd_strerror(r));
		if (n > 0 && (size_t)n < sizeof note &&
		    cd_write_all(s->io->stderr_fd, note, (size_t)n) == 0)
			s->err.open_line = 0;
	}
	cd_buf_release(&out);
	cd_buf_release_secret(&st->held);
	st->holding = 0;
}

static void cd_sup_close_stdin_pipe(struct cd_supervisor *s)
{
	if (s->in_to >= 0) {
		epoll_ctl(s->epfd, EPOLL_CTL_DEL, s->in_to, NULL);
		close(s->in_to);
		s->in_to = -1;
	}
	if (s->in_from >= 0 && s->in_pollable)
		epoll_ctl(s->epfd, EPOLL_CTL_DEL, s->in_from, NULL);
	s->in_from = -1;
}

/* Move what we have of stdin into the command's pipe; read more when the
 * buffer is empty.  Returns when the pipe is full or stdin has nothing. */
static void cd_sup_pump_stdin(struct cd_supervisor *s)
{
	struct epoll_event ev;

	while (s->in_to >= 0) {
		if (s->in_off == s->in_len) {
			ssize_t n;

			if (s->in_from < 0) {
				cd_sup_close_stdin_pipe(s); /* EOF reaches the command */
				return;
			}
			/* The caller's stdin is not ours to make non-blocking (the
			 * file description is shared): read only what is there, or
			 * an interactive pipe would hold the run up until its EOF. */
			if (s->in_pollable) {
				struct pollfd pfd = { s->in_from, POLLIN, 0 };
				if (poll(&pfd, 1, 0) == 0)
					break;
			}
			n = read(s->in_from, s->in_buf, CD_RELAY_CHUNK);
			if (n < 0 && errno == EINTR)
				continue;
			if (n < 0 && errno == EAGAIN)
				break;
			if (n <= 0) {
				cd_sup_close_stdin_pipe(s);
				return;
			}
			crypto_hash_sha256_update(&s->in_hash, (unsigned char *)s->in_buf,
			                          (size_t)n);
			s->in_bytes += (uint64_t)n;
			if (s->plan->tty && s->io->record)
				s->io->record(s->io->record_ctx, 'i', s->in_buf, (size_t)n);
			s->in_len = (size_t)n;
			s->in_off = 0;
		}
		{
			ssize_t w = write(s->in_to, s->in_buf + s->in_off, s->in_len - s->in_off);
			if (w < 0 && errno == EINTR)
				continue;
			if (w < 0 && errno == EAGAIN)
				break;
			if (w < 0) { /* the command closed its stdin */
				cd_sup_close_stdin_pipe(s);
				return;
			}
			s->in_off += (size_t)w;
		}
	}
	if (s->in_to < 0)
		return;
	/* Wait for room in the pipe when we hold data (or the caller's stdin
	 * cannot be polled); otherwise wait for the caller's stdin. */
	memset(&ev, 0, sizeof ev);
	ev.data.u64 = CD_EV_IN_TO;
	ev.events = (s->in_off < s->in_len || !s->in_pollable) ? EPOLLOUT : 0;
	epoll_ctl(s->epfd, EPOLL_CTL_MOD, s->in_to, &ev);
	if (s->in_from >= 0 && s->in_pollable) {
		ev.data.u64 = CD_EV_IN_FROM;
		ev.events = s->in_off < s->in_len ? 0 : EPOLLIN;
		epoll_ctl(s->epfd, EPOLL_CTL_MOD, s->in_from, &ev);
	}
}

static void describe_failure(struct cd_result *res, const struct cd_report *r)
{
	char what[sizeof r->what + 1];
	int n;

	memcpy(what, r->what, sizeof r->what);
	what[sizeof r->what] = '\0';
	n = snprintf(res->error, sizeof res->error, "%s: %s", what, cd_strerror(-r->err));
	if (n < 0)
		res->error[0] = '\0';
}

static void cd_sup_read_reports(struct cd_supervisor *s)
{
	for (;;) {
		struct cd_report r;
		ssize_t n = recv(s->report_fd, &r, sizeof r, MSG_DONTWAIT);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			if (n == 0 || (errno != EAGAIN)) {
				epoll_ctl(s->epfd, EPOLL_CTL_DEL, s->report_fd, NULL);
				close(s->report_fd);
				s->report_fd = -1;
			}
			return;
		}
		if ((size_t)n != sizeof r)
			continue; /* not a record of ours: ignore */
		switch (r.type) {
		case CD_REPORT_SETUP_FAIL:
			if (!s->res->error[0]) {
				describe_failure(s->res, &r);
				s->res->reason = CD_REASON_SETUP_ERROR;
			}
			break;
		case CD_REPORT_EXEC_FAIL:
			if (!s->res->error[0])
				describe_failure(s->res, &r);
			break;
		case CD_REPORT_STARTED:
			s->started = 1;
			s->walls = r.walls;
			break;
		case CD_REPORT_STATUS:
			s->got_status = 1;
			s->status = r.status;
			break;
		default:
			break;
		}
	}
}

/* The person's terminal size onto the session pty; the kernel tells the
 * pty's foreground process group (SIGWINCH) when it changed. */
static void copy_winsize(struct cd_supervisor *s)
{
	struct winsize ws;
	uint16_t rec[2];

	if (s->ptm < 0)
		return;
	if (s->io->winsize_fd < 0 || ioctl(s->io->winsize_fd, TIOCGWINSZ, &ws) < 0 ||
	    ws.ws_row == 0 || ws.ws_col == 0) {
		memset(&ws, 0, sizeof ws);
		ws.ws_row = 24;
		ws.ws_col = 80;
	}
	if (ioctl(s->ptm, TIOCSWINSZ, &ws) < 0)
		return;
	rec[0] = ws.ws_row;
	rec[1] = ws.ws_col;
	if (s->io->record)
		s->io->record(s->io->record_ctx, 'w', rec, sizeof rec);
}

/* The session pty's controller arrives once from the sandbox's init; from
 * then on it is both the command's stdout (out.from) and stdin (in_to). */
static void receive_pty(struct cd_supervisor *s)
{
	int fd = -1, in = -1;

	if (cd_fd_recv(s->ptysock, &fd) == 0) {
		in = fcntl(fd, F_DUPFD_CLOEXEC, 3);
		if (in < 0 || cd_sup_set_nonblock(fd) < 0 ||
		    cd_sup_ep_add(s->epfd, fd, EPOLLIN, CD_EV_OUT) < 0 ||
		    cd_sup_ep_add(s->epfd, in, 0, CD_EV_IN_TO) < 0) {
			cd_closep(&fd);
			cd_closep(&in);
			cd_sup_kill_sandbox(s);
		} else {
			s->ptm = fd;
			s->out.from = fd;
			s->in_to = in;
			copy_winsize(s);
			if (s->in_from >= 0) {
				int r = cd_sup_ep_add(s->epfd, s->in_from, EPOLLIN, CD_EV_IN_FROM);
				s->in_pollable = r == 0;
				if (r < 0 && r != -EPERM)
					cd_sup_kill_sandbox(s);
			}
			cd_sup_pump_stdin(s);
		}
	}
	epoll_ctl(s->epfd, EPOLL_CTL_DEL, s->ptysock, NULL);
	close(s->ptysock);
	s->ptysock = -1;
}

static void forward_signals(struct cd_supervisor *s)
{
	struct signalfd_siginfo si;

	while (read(s->io->signal_fd, &si, sizeof si) == (ssize_t)sizeof si) {
		if (si.ssi_signo == SIGWINCH && s->plan->tty)
			copy_winsize(s);
		else if (si.ssi_signo == SIGKILL)
			cd_sup_kill_sandbox(s);
		else
			syscall(SYS_pidfd_send_signal, s->pidfd, (int)si.ssi_signo, NULL, 0);
	}
}

static void cd_sup_reap(struct cd_supervisor *s)
{
	siginfo_t info;
	struct rusage ru;

	memset(&info, 0, sizeof info);
	memset(&ru, 0, sizeof ru);
	if (syscall(SYS_waitid, P_PIDFD, s->pidfd, &info, WEXITED, &ru) == 0) {
		s->res->cpu_ms =
		        (uint64_t)ru.ru_utime.tv_sec * 1000 + (uint64_t)ru.ru_utime.tv_usec / 1000 +
		        (uint64_t)ru.ru_stime.tv_sec * 1000 + (uint64_t)ru.ru_stime.tv_usec / 1000;
		s->res->max_rss_kb = (uint64_t)ru.ru_maxrss;
	}
	s->child_done = 1;
	epoll_ctl(s->epfd, EPOLL_CTL_DEL, s->pidfd, NULL);
}

static void cd_sup_finish_result(struct cd_supervisor *s)
{
	struct cd_result *res = s->res;

	cd_sup_hex_digest(&s->out.hash, res->stdout_sha256);
	cd_sup_hex_digest(&s->err.hash, res->stderr_sha256);
	cd_sup_hex_digest(&s->in_hash, res->stdin_sha256);
	/* A stream handed over was never seen here: no hash to claim. */
	if (s->io->direct_stdin)
		res->stdin_sha256[0] = '\0';
	if (s->io->direct_stdout)
		res->stdout_sha256[0] = '\0';
	res->stdin_direct = s->io->direct_stdin != 0;
	res->stdout_direct = s->io->direct_stdout != 0;
	res->stdout_open_line = s->out.open_line;
	res->stderr_open_line = s->err.open_line;
	res->stdout_bytes = s->out.bytes;
	res->stderr_bytes = s->err.bytes;
	res->stdin_bytes = s->in_bytes;
	res->walls = s->walls;

	if (s->killed_timeout) {
		res->reason = CD_REASON_TIMEOUT;
		res->exit_code = 124;
		res->signal = SIGKILL;
		return;
	}
	if (s->killed_output) {
		res->reason = CD_REASON_OUTPUT_LIMIT;
		res->exit_code = 128 + SIGKILL;
		res->signal = SIGKILL;
		return;
	}
	/* The sandbox's init died while the command ran: only the kernel can
	 * kill it, and the OOM killer does when a tmpfs or a memfd, charged to
	 * the run's cgroup but to no process, fills it.  The tree went with it:
	 * a kill, which cd_sup_account_limits() can name. */
	if (res->reason != CD_REASON_SETUP_ERROR && s->started && !s->got_status) {
		s->status = SIGKILL; /* the wait status of a SIGKILL */
		s->got_status = 1;
	}
	if (res->reason == CD_REASON_SETUP_ERROR || !s->started || !s->got_status) {
		res->reason = CD_REASON_SETUP_ERROR;
		res->exit_code = 125;
		if (!res->error[0]) {
			int n = snprintf(res->error, sizeof res->error,
			                 "the sandbox ended before the command could run");
			if (n < 0)
				res->error[0] = '\0';
		}
		return;
	}
	if (WIFEXITED(s->status)) {
		res->reason = CD_REASON_EXITED;
		res->exit_code = WEXITSTATUS(s->status);
	} else if (WIFSIGNALED(s->status)) {
		res->reason = CD_REASON_SIGNALED;
		res->signal = WTERMSIG(s->status);
		res->exit_code = 128 + res->signal;
	}
}

/* What the cgroup saw, which mechanism enforced what, and whether the
 * kernel's refusal explains the end of the run better than a bare signal. */
static void cd_sup_account_limits(struct cd_supervisor *s)
{
	struct cd_result *res = s->res;
	struct cd_cgroup_stats st;
	const char *why;
	int n;

	res->mech_memory = cd_cgroup_mechanism(s->cg, "memory");
	res->mech_pids = cd_cgroup_mechanism(s->cg, "pids");
	res->mech_cpu = cd_cgroup_mechanism(s->cg, "cpu");
	res->landlock_abi = (res->walls & CD_WALL_LANDLOCK) ? s->plan->landlock_abi : 0;
	n = snprintf(res->limits_note, sizeof res->limits_note, "%s",
	             s->cg ? cd_cgroup_note(s->cg) : "rlimit");
	if (n < 0)
		res->limits_note[0] = '\0';
	if (!s->cg || cd_cgroup_collect(s->cg, &st) < 0)
		return;
	res->peak_memory = st.peak_memory;
	if (res->reason != CD_REASON_EXITED && res->reason != CD_REASON_SIGNALED)
		return;
	why = cd_cgroup_reason(&st, s->status);
	if (why && strcmp(why, "memory") == 0)
		res->reason = CD_REASON_MEMORY;
	else if (why && strcmp(why, "pids") == 0)
		res->reason = CD_REASON_PIDS;
}

static void cd_sup_loop(struct cd_supervisor *s)
{
	struct epoll_event evs[8];

	while (!s->child_done || s->out.from >= 0 || s->err.from >= 0 || s->report_fd >= 0 ||
	       s->ptysock >= 0) {
		int n, i;

		n = epoll_wait(s->epfd, evs, 8, -1);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			cd_sup_kill_sandbox(s);
			break;
		}
		for (i = 0; i < n; i++) {
			switch (evs[i].data.u64) {
			case CD_EV_OUT:
				relay_out(s, &s->out);
				break;
			case CD_EV_ERR:
				relay_out(s, &s->err);
				break;
			case CD_EV_IN_FROM:
			case CD_EV_IN_TO:
				cd_sup_pump_stdin(s);
				break;
			case CD_EV_REPORT:
				cd_sup_read_reports(s);
				break;
			case CD_EV_SIGNAL:
				forward_signals(s);
				break;
			case CD_EV_LSOCK:
				receive_listener(s);
				break;
			case CD_EV_LISTENER:
				answer_seccomp(s, evs[i].events);
				break;
			case CD_EV_PROXY:
				receive_proxy(s);
				break;
			case CD_EV_PTY:
				receive_pty(s);
				break;
			case CD_EV_TIMER:
				if (!s->child_done) {
					s->killed_timeout = 1;
					cd_sup_kill_sandbox(s);
				}
				epoll_ctl(s->epfd, EPOLL_CTL_DEL, s->timerfd, NULL);
				break;
			case CD_EV_PID:
				cd_sup_reap(s);
				/* Anything still holding the pipes died with the namespace;
				 * stdin has no reader any more. */
				cd_sup_close_stdin_pipe(s);
				break;
			}
		}
	}
}

static int cd_sup_set_nonblock(int fd)
{
	int fl = fcntl(fd, F_GETFL);
	if (fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) < 0)
		return -errno;
	return 0;
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

/* A stream handed to the command directly must be a pipe: never the
 * host's terminal (THREATS 1), a socket or a file. */
static int check_direct(const struct cd_plan *plan, const struct cd_sandbox_io *io)
{
	struct stat st;

	if (!io->direct_stdin && !io->direct_stdout)
		return 0;
	if (plan->tty)
		return -EINVAL;
	if (io->direct_stdout && io->mask && cd_mask_rules_active(io->mask))
		return -EINVAL;
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
	char placed, run = CD_SYNC_RUN;
	int pidfd = -1, n1, n2, r;
	size_t i;
	long pid;

	memset(res, 0, sizeof *res);
	memset(&s, 0, sizeof s);
	s.lsock = s.listener = s.psock = s.ptysock = s.ptm = s.laysock = -1;
	s.prog = &plan->seccomp;
	if (plan->proxy_port && !io->on_proxy)
		return setup_fail(res, err, -EINVAL,
		                  "the plan has an egress proxy but nothing serves it");
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
		        "direct stdio: only pipes, never with a terminal or masked output");
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

	memset(&ctx, 0, sizeof ctx);
	ctx.plan = plan;
	ctx.report_fd = f.rep[1];
	ctx.sync_fd = f.sync[0];
	ctx.lifeline_fd = f.life;
	ctx.stdio[0] = io->direct_stdin ? io->stdin_fd : f.in[0];
	ctx.stdio[1] = io->direct_stdout ? io->stdout_fd : f.out[1];
	ctx.stdio[2] = f.err[1];
	n1 = snprintf(ctx.uid_map, sizeof ctx.uid_map, "%u %u 1\n", (unsigned)plan->uid,
	              (unsigned)plan->host_uid);
	n2 = snprintf(ctx.gid_map, sizeof ctx.gid_map, "%u %u 1\n", (unsigned)plan->gid,
	              (unsigned)plan->host_gid);
	if (n1 < 0 || n2 < 0 || (size_t)n1 >= sizeof ctx.uid_map ||
	    (size_t)n2 >= sizeof ctx.gid_map) {
		close_all(&f);
		free(s.in_buf);
		return setup_fail(res, err, -EINVAL, "format the id maps");
	}
	for (i = 0; i < plan->nmounts && i < CD_PLAN_MAX_MOUNTS; i++) {
		u64_dec(plan->mounts[i].size, ctx.tmpfs_size[i], sizeof ctx.tmpfs_size[i]);
		if (plan->mounts[i].kind == CD_MNT_OVERLAY)
			u64_dec(plan->mounts[i].inodes, ctx.layer_inodes, sizeof ctx.layer_inodes);
	}
	ctx.layer_fd = f.lay[1];
	ctx.listener_fd = f.lis[1];
	ctx.proxy_fd = f.prx[1];
	ctx.pty_fd = f.pty[1];
	if ((r = open_trees(plan, &ctx, res, err)) < 0) {
		close_all(&f);
		free(s.in_buf);
		return r;
	}

	memset(&ca, 0, sizeof ca);
	ca.flags = CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWNET | CLONE_NEWIPC |
	           CLONE_NEWUTS | CLONE_PIDFD;
	ca.pidfd = (uint64_t)(uintptr_t)&pidfd;
	ca.exit_signal = SIGCHLD;
	pid = clone_sandbox(plan, &ca);
	if (pid < 0) {
		r = (int)pid;
		close_trees(&ctx);
		close_all(&f);
		free(s.in_buf);
		return setup_fail(res, err, r, clone_hint(r, hint, sizeof hint));
	}
	if (pid == 0)
		cd_child_main(&ctx); /* never returns */

	/* The child's ends belong to the child now. */
	close_trees(&ctx);
	cd_closep(&f.in[0]);
	cd_closep(&f.out[1]);
	cd_closep(&f.err[1]);
	cd_closep(&f.rep[1]);
	cd_closep(&f.sync[0]);
	cd_closep(&f.life);
	f.life = -1;
	cd_closep(&f.lis[1]);
	cd_closep(&f.prx[1]);
	f.prx[1] = -1;
	cd_closep(&f.pty[1]);
	f.pty[1] = -1;
	cd_closep(&f.lay[1]);
	f.lay[1] = -1;
	s.laysock = f.lay[0];
	f.lay[0] = -1;
	s.ptysock = f.pty[0];
	f.pty[0] = -1;
	s.psock = f.prx[0];
	f.prx[0] = -1;
	f.in[0] = f.out[1] = f.err[1] = f.rep[1] = f.sync[0] = f.lis[1] = -1;
	s.lsock = f.lis[0];
	f.lis[0] = -1;

	s.plan = plan;
	s.io = io;
	s.res = res;
	s.pidfd = pidfd;
	s.report_fd = f.rep[0];
	s.out.to = io->stdout_fd;
	s.err.to = io->stderr_fd;
	s.out.filter = io->filter_stdout != 0;
	s.err.filter = io->filter_stderr != 0;
	cd_termfilter_init(&s.out.tf);
	cd_termfilter_init(&s.err.tf);
	if (io->mask && cd_mask_rules_active(io->mask)) {
		uint64_t cap = plan->limits.output_limit;
		size_t hc = cap && cap < CD_SANDBOX_MASK_MAX ? (size_t)cap : CD_SANDBOX_MASK_MAX;
		cd_buf_init(&s.out.held, hc);
		cd_buf_init(&s.err.held, hc);
		s.out.holding = s.err.holding = 1;
	}
	s.in_from = io->direct_stdin ? -1 : io->stdin_fd;
	s.timerfd = -1;
	s.out.from = s.err.from = s.in_to = -1;
	s.epfd = epoll_create1(EPOLL_CLOEXEC);
	if (s.epfd < 0) {
		r = -errno;
		goto abort;
	}
	if (plan->tty) {
		/* The pty carries all three streams; the pipes stay unused. */
		if ((r = cd_sup_ep_add(s.epfd, s.ptysock, EPOLLIN, CD_EV_PTY)) < 0)
			goto abort;
	} else {
		cd_closep(&s.ptysock); /* no pty: nothing will come */
		s.ptysock = -1;
		s.out.from = f.out[0];
		s.err.from = f.err[0];
		s.in_to = f.in[1];
		f.out[0] = f.err[0] = f.in[1] = -1;
		if ((s.out.from >= 0 && cd_sup_set_nonblock(s.out.from) < 0) ||
		    cd_sup_set_nonblock(s.err.from) < 0 ||
		    (s.in_to >= 0 && cd_sup_set_nonblock(s.in_to) < 0)) {
			r = -errno;
			goto abort;
		}
		if ((s.out.from >= 0 &&
		     (r = cd_sup_ep_add(s.epfd, s.out.from, EPOLLIN, CD_EV_OUT)) < 0) ||
		    (r = cd_sup_ep_add(s.epfd, s.err.from, EPOLLIN, CD_EV_ERR)) < 0 ||
		    (s.in_to >= 0 && (r = cd_sup_ep_add(s.epfd, s.in_to, 0, CD_EV_IN_TO)) < 0))
			goto abort;
	}
	if ((r = cd_sup_ep_add(s.epfd, s.report_fd, EPOLLIN, CD_EV_REPORT)) < 0 ||
	    (r = cd_sup_ep_add(s.epfd, s.pidfd, EPOLLIN, CD_EV_PID)) < 0 ||
	    (r = cd_sup_ep_add(s.epfd, s.lsock, EPOLLIN, CD_EV_LSOCK)) < 0)
		goto abort;
	if (plan->proxy_port && (r = cd_sup_ep_add(s.epfd, s.psock, EPOLLIN, CD_EV_PROXY)) < 0)
		goto abort;
	/* The child builds the sandbox's filesystem meanwhile; it waits for
	 * CD_SYNC_PLACED before anything the limits must cover can start. */
	if ((r = cd_cgroup_create(res->run_id, &plan->limits, &s.cg, err)) < 0) {
		what = "create the run's cgroup";
		goto abort;
	}
	if ((r = cd_cgroup_attach(s.cg, (pid_t)pid, err)) < 0)
		goto abort;
	if (io->signal_fd >= 0 &&
	    (r = cd_sup_ep_add(s.epfd, io->signal_fd, EPOLLIN, CD_EV_SIGNAL)) < 0)
		goto abort;
	if (s.in_from >= 0 && !plan->tty) {
		r = cd_sup_ep_add(s.epfd, s.in_from, EPOLLIN, CD_EV_IN_FROM);
		if (r == -EPERM)
			s.in_pollable = 0; /* a regular file or /dev/null: always ready */
		else if (r < 0)
			goto abort;
		else
			s.in_pollable = 1;
	}
	if (plan->limits.timeout_ms) {
		struct itimerspec its;

		memset(&its, 0, sizeof its);
		its.it_value.tv_sec = (time_t)(plan->limits.timeout_ms / 1000);
		its.it_value.tv_nsec = (long)(plan->limits.timeout_ms % 1000) * 1000000L;
		s.timerfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC);
		if (s.timerfd < 0 || timerfd_settime(s.timerfd, 0, &its, NULL) < 0 ||
		    (r = cd_sup_ep_add(s.epfd, s.timerfd, EPOLLIN, CD_EV_TIMER)) < 0) {
			r = s.timerfd < 0 ? -errno : r;
			goto abort;
		}
	}
	/* Everything is in place: let the child raise its walls, then (once
	 * the caller has recorded the run) let it start the command. */
	placed = CD_SYNC_PLACED | (cd_cgroup_enforces(s.cg, "memory") ? CD_SYNC_CG_MEMORY : 0) |
	         (cd_cgroup_enforces(s.cg, "pids") ? CD_SYNC_CG_PIDS : 0);
	s.prog = cd_quotas_prog(plan, (placed & CD_SYNC_CG_MEMORY) != 0);
	if (write(f.sync[1], &placed, 1) != 1) {
		r = -errno;
		goto abort;
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
			cd_closep(&f.sync[1]); /* EOF: the child exits without the command */
			f.sync[1] = -1;
		}
	}
	if (f.sync[1] >= 0 && write(f.sync[1], &run, 1) != 1 && errno != EPIPE) {
		r = -errno;
		goto abort;
	}
	cd_closep(&f.sync[1]);
	f.sync[1] = -1;
	cd_sup_pump_stdin(&s);
	cd_sup_loop(&s);
	if (s.report_fd >= 0)
		cd_sup_read_reports(&s);
	if (!s.child_done)
		cd_sup_reap(&s);
	cd_sup_receive_layer(&s);
	cd_sup_flush_masked(&s, &s.out, "stdout");
	cd_sup_flush_masked(&s, &s.err, "stderr");
	cd_sup_finish_result(&s);
	cd_sup_account_limits(&s);
	res->wall_ms = now_ms() - t0;
	r = 0;
	if (res->reason == CD_REASON_SETUP_ERROR)
		r = cd_err_set(err, -CD_E_KERNEL, "%s", res->error);
	goto out;
abort:
	cd_sup_kill_sandbox(&s);
	if (!s.child_done)
		cd_sup_reap(&s);
	/* A child that failed first (a bind source swapped for a symlink, a
	 * mount refused) left its reason on the report socket: that, not the
	 * broken pipe or the vanished process it left us, is what happened. */
	if (s.report_fd >= 0)
		cd_sup_read_reports(&s);
	if (res->reason == CD_REASON_SETUP_ERROR && res->error[0]) {
		res->exit_code = 125;
		r = cd_err_set(err, -CD_E_KERNEL, "%s", res->error);
	} else {
		setup_fail(res, err, r, what);
	}
out:
	cd_sup_close_stream(&s, &s.out);
	cd_sup_close_stream(&s, &s.err);
	cd_sup_close_stdin_pipe(&s);
	if (s.report_fd >= 0)
		close(s.report_fd);
	if (s.timerfd >= 0)
		close(s.timerfd);
	if (s.epfd >= 0)
		close(s.epfd);
	cd_closep(&s.lsock);
	cd_closep(&s.psock);
	cd_closep(&s.ptysock);
	cd_closep(&s.laysock);
	cd_sup_close_listener(&s);
	cd_closep(&f.in[1]);
	cd_closep(&f.out[0]);
	cd_closep(&f.err[0]);
	cd_cgroup_destroy(s.cg);
	cd_closep(&pidfd);
	cd_closep(&f.sync[1]);
	cd_closep(&f.life);
	free(s.in_buf);
	return r;
}
