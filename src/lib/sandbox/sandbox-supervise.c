/* sandbox-supervise.c — the supervisor's loop: relay, timers, reports,
 * result (see sandbox-int.h).
 *
 * Runs outside every namespace, once cd_sandbox_run() (sandbox.c) has
 * cloned the child: relays stdin to the command and its stdout/stderr to
 * the caller (hashing, capping and masking them), forwards signals,
 * enforces the wall clock, reads the child's reports and turns what it saw
 * into the run's result.  Nothing the child sends is trusted beyond the
 * fixed record layout.
 */
#include "sandbox-int.h"

#include "util/bounds.h"
#include "cgroup.h"
#include "quotas.h"
#include "termfilter.h"
#include "util/util.h"

#include <errno.h>
#include <poll.h>
#include <fcntl.h>
#include <linux/magic.h>
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
#include <sys/vfs.h>
#include <sys/wait.h>

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

int cd_sup_ep_add(int epfd, int fd, uint32_t events, uint64_t tag)
{
	struct epoll_event ev;

	memset(&ev, 0, sizeof ev);
	ev.events = events;
	ev.data.u64 = tag;
	return epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &ev) < 0 ? -errno : 0;
}

void cd_sup_kill_sandbox(struct cd_supervisor *s)
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

int cd_sup_plan_overlay(const struct cd_plan *p)
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
void cd_sup_receive_layer(struct cd_supervisor *s)
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

void cd_sup_close_listener(struct cd_supervisor *s)
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

void cd_sup_close_stream(struct cd_supervisor *s, struct cd_stream *st)
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
void cd_sup_flush_masked(struct cd_supervisor *s, struct cd_stream *st, const char *name)
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

void cd_sup_close_stdin_pipe(struct cd_supervisor *s)
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
void cd_sup_pump_stdin(struct cd_supervisor *s)
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
	if (r->err)
		n = snprintf(res->error, sizeof res->error, "%s: %s", what, cd_strerror(-r->err));
	else /* the message says it all */
		n = snprintf(res->error, sizeof res->error, "%s", what);
	if (n < 0)
		res->error[0] = '\0';
}

void cd_sup_read_reports(struct cd_supervisor *s)
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
		else if (si.ssi_signo == SIGKILL ||
		         (s->io->kill_signo > 0 && si.ssi_signo == (uint32_t)s->io->kill_signo))
			cd_sup_kill_sandbox(s);
		else
			syscall(SYS_pidfd_send_signal, s->pidfd, (int)si.ssi_signo, NULL, 0);
	}
}

void cd_sup_reap(struct cd_supervisor *s)
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

void cd_sup_finish_result(struct cd_supervisor *s)
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

	if (s->killed_cover) {
		res->reason = CD_REASON_COVER_REPLACED;
		res->exit_code = 125;
		res->signal = SIGKILL;
		return;
	}
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
void cd_sup_account_limits(struct cd_supervisor *s)
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

void cd_sup_loop(struct cd_supervisor *s)
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
			case CD_EV_COVER:
				cd_sup_cover_event(s);
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

int cd_sup_set_nonblock(int fd)
{
	int fl = fcntl(fd, F_GETFL);
	if (fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) < 0)
		return -errno;
	return 0;
}

void cd_sup_run(struct cd_supervisor *s)
{
	cd_sup_pump_stdin(s);
	cd_sup_loop(s);
	if (s->report_fd >= 0)
		cd_sup_read_reports(s);
	if (!s->child_done)
		cd_sup_reap(s);
	cd_sup_receive_layer(s);
	cd_sup_flush_masked(s, &s->out, "stdout");
	cd_sup_flush_masked(s, &s->err, "stderr");
	cd_sup_finish_result(s);
	cd_sup_account_limits(s);
}
