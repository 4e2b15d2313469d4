/* test-seccomp.c — the seccomp wall: tables, build, fd passing, counts, and
 * every probe of tests/helpers/syscall-probes.h run under the real filter.
 *
 * Each probe runs twice in forked children: once bare (the baseline: what
 * the kernel answers) and once under the filter, installed as the sandbox
 * will (no_new_privs, install, listener sent to this process over a unix
 * socket, this process answering notifications in a poll loop).  A refusal
 * must show up both in the child (the errno) and in the counts; where the
 * baseline already gives the refusal errno, only the count proves it. */
#include "../tap.h"
#include "../helpers/syscall-probes.h"

#include "util/err.h"
#include "sandbox/seccomp.h"
#include "util/util.h"

#include <seccomp.h> /* libseccomp's: cordon's own is "sandbox/seccomp.h" */

#include <errno.h>
#include <linux/seccomp.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>

struct result {
	int have_ret; /* the probe returned (was not killed) */
	long ret;
	int status; /* the probe process's wait status */
};

struct rec {
	int idx;  /* probe index, -1 for a setup failure */
	int type; /* 0: return value, 1: wait status */
	long val;
};

static void child_report(int fd, int idx, int type, long val)
{
	struct rec r = { idx, type, val };
	if (cd_write_all(fd, &r, sizeof r) < 0)
		_exit(3);
}

/* The filtered (or bare) child: install, then run each probe in its own
 * process so that a kill ends only that probe. */
static void child_main(const struct cd_seccomp_prog *p, int sock, int out)
{
	size_t i;
	int devnull = open("/dev/null", O_RDONLY | O_CLOEXEC);

	if (devnull < 0 || dup2(devnull, 0) < 0)
		_exit(4);
	if (p) {
		int listener = -1, r;

		if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
			child_report(out, -1, 0, -errno), _exit(1);
		r = cd_seccomp_install(p, &listener);
		if (r < 0)
			child_report(out, -1, 0, r), _exit(1);
		if (p->notify) {
			r = cd_fd_send(sock, listener);
			close(listener);
			if (r < 0)
				child_report(out, -1, 0, r), _exit(1);
		}
	}
	close(sock);
	for (i = 0; i < PROBES_N; i++) {
		int status = 0;
		pid_t pid = fork();

		if (pid < 0)
			_exit(5);
		if (pid == 0) {
			/* A fault is an expected answer (int 0x80 without an ia32
			 * entry); under ASan, let it end the probe quietly. */
			signal(SIGSEGV, SIG_DFL);
			child_report(out, (int)i, 0, probes[i].fn());
			_exit(0);
		}
		while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
			;
		child_report(out, (int)i, 1, status);
	}
	_exit(0);
}

/* Run every probe; with `p`, under it, counting into `st`.  Returns 0 or
 * the setup error the child reported. */
static long run_probes(const struct cd_seccomp_prog *p, struct result *res,
                       struct cd_seccomp_stats *st)
{
	int sv[2], pfd[2], listener = -1, status;
	long setup = 0;
	struct rec r;
	size_t have = 0;
	pid_t pid;

	memset(res, 0, PROBES_N * sizeof *res);
	cd_seccomp_stats_init(st);
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0 || pipe2(pfd, O_CLOEXEC) < 0)
		return -errno;
	pid = fork();
	if (pid < 0)
		return -errno;
	if (pid == 0) {
		close(sv[0]);
		close(pfd[0]);
		child_main(p, sv[1], pfd[1]);
	}
	close(sv[1]);
	close(pfd[1]);
	if (p && p->notify) {
		int e = cd_fd_recv(sv[0], &listener);
		if (e < 0)
			diag("no listener: %s", cd_strerror(e));
	}
	close(sv[0]);
	for (;;) {
		struct pollfd fds[2] = { { pfd[0], POLLIN, 0 }, { listener, POLLIN, 0 } };
		ssize_t n;

		if (poll(fds, listener >= 0 ? 2 : 1, -1) < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		if (listener >= 0 && (fds[1].revents & POLLIN)) {
			int h = cd_seccomp_notify_handle(listener, p, st);
			if (h < 0 && h != -EINTR)
				diag("notify_handle: %s", cd_strerror(h));
			continue; /* answer first: the child may be blocked on it */
		}
		if (listener >= 0 && (fds[1].revents & (POLLHUP | POLLERR | POLLNVAL))) {
			close(listener);
			listener = -1;
		}
		if (!(fds[0].revents & (POLLIN | POLLHUP)))
			continue;
		n = read(pfd[0], (char *)&r + have, sizeof r - have);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		have += (size_t)n;
		if (have < sizeof r)
			continue;
		have = 0;
		if (r.idx < 0) {
			setup = r.val;
		} else if ((size_t)r.idx < PROBES_N && r.type == 0) {
			res[r.idx].have_ret = 1;
			res[r.idx].ret = r.val;
		} else if ((size_t)r.idx < PROBES_N) {
			res[r.idx].status = (int)r.val;
		}
	}
	if (listener >= 0)
		close(listener);
	close(pfd[0]);
	waitpid(pid, &status, 0);
	return setup;
}

static const char *errname(long r)
{
	static char buf[32];
	const char *e;

	if (r >= 0)
		return "ok";
	e = strerrorname_np((int)-r);
	if (e)
		return e;
	snprintf(buf, sizeof buf, "%ld", r);
	return buf;
}

static int killed_by(const struct result *r, int sig)
{
	return !r->have_ret && WIFSIGNALED(r->status) && WTERMSIG(r->status) == sig;
}

struct want {
	uint32_t arch;
	int nr;
	uint64_t n;
};

static void want_add(struct want *w, size_t *nw, uint32_t arch, int nr)
{
	size_t i;

	for (i = 0; i < *nw; i++)
		if (w[i].arch == arch && w[i].nr == nr) {
			w[i].n++;
			return;
		}
	w[*nw].arch = arch;
	w[*nw].nr = nr;
	w[*nw].n = 1;
	(*nw)++;
}

/* The heart: every probe under a filter built from `o`. */
static void test_probes(const struct cd_seccomp_opts *o, const struct result *base)
{
	const char *mode = o->notify ? (o->allow_net_inet ? "notify+inet" : "notify") : "errno";
	struct cd_seccomp_prog p;
	struct cd_seccomp_stats st;
	struct cd_err err = { 0 };
	struct result res[PROBES_N];
	struct want want[PROBES_N];
	size_t i, nw = 0;
	uint64_t sum = 0;
	long setup;

	if (cd_seccomp_build(o, &p, &err) < 0) {
		ok(0, "%s: build: %s", mode, err.msg);
		return;
	}
	setup = run_probes(&p, res, &st);
	is_int(setup, 0, "%s: filter installed in the child", mode);
	for (i = 0; i < PROBES_N; i++) {
		const struct probe *pr = &probes[i];
		const struct result *b = &base[i], *f = &res[i];
		enum probe_kind k = pr->kind;

		if (k == PROBE_INET)
			k = o->allow_net_inet ? PROBE_ALLOW : PROBE_DENY;
		if (k == PROBE_ABI && !b->have_ret) {
			/* No ia32 entry on this kernel (int 0x80 is a general
			 * protection fault): the call cannot reach the kernel at
			 * all.  Assert that it still cannot; test_bpf() checks
			 * what the filter itself does with an i386 call. */
			ok(!f->have_ret && f->status == b->status,
			   "%s: %s faults before any syscall, as on the bare kernel (signal %d)",
			   mode, pr->name, WIFSIGNALED(b->status) ? WTERMSIG(b->status) : 0);
			continue;
		}
		switch (k) {
		case PROBE_ALLOW:
			ok(f->have_ret && (f->ret >= 0 ? b->ret >= 0 : f->ret == b->ret),
			   "%s: %s allowed (%s, bare %s)", mode, pr->name,
			   f->have_ret ? errname(f->ret) : "killed", errname(b->ret));
			break;
		case PROBE_DENY:
		case PROBE_SILENT:
			ok(f->have_ret && f->ret == -pr->deny_errno,
			   "%s: %s refused with %s (got %s, bare %s)", mode, pr->name,
			   strerrorname_np(pr->deny_errno),
			   f->have_ret ? errname(f->ret) : "killed", errname(b->ret));
			if (b->ret == -pr->deny_errno)
				diag("%s: bare kernel also answers %s: the count decides", pr->name,
				     errname(b->ret));
			if (k == PROBE_DENY && o->notify)
				want_add(want, &nw, pr->arch, pr->nr);
			break;
		case PROBE_ABI:
			if (o->notify) {
				ok(f->have_ret && f->ret == -EPERM,
				   "%s: %s refused with EPERM through the listener (got %s)", mode,
				   pr->name, f->have_ret ? errname(f->ret) : "killed");
				want_add(want, &nw, pr->arch, pr->nr);
			} else {
				ok(killed_by(f, SIGSYS), "%s: %s kills the process with SIGSYS",
				   mode, pr->name);
			}
			break;
		default:
			break;
		}
	}
	if (o->notify) {
		for (i = 0; i < nw; i++) {
			uint64_t got = cd_seccomp_stats_get(&st, want[i].arch, want[i].nr);
			is_int(got, want[i].n, "%s: %llu refusal(s) of arch 0x%x nr %d counted",
			       mode, (unsigned long long)want[i].n, want[i].arch, want[i].nr);
			sum += want[i].n;
		}
		is_int(cd_seccomp_stats_get(&st, AUDIT_ARCH_X86_64, SYS_clone3), 0,
		       "%s: clone3 refused but not counted", mode);
		is_int(st.total, sum, "%s: no refusal beyond the probes' (total)", mode);
		if (st.total != sum)
			for (i = 0; i < st.n; i++)
				diag("counted arch 0x%x nr %d x%llu", st.e[i].arch, st.e[i].nr,
				     (unsigned long long)st.e[i].count);
	}
	cd_seccomp_prog_release(&p);
}

/* A classic-BPF interpreter for seccomp programs, so the filter's answer for
 * any (arch, nr, args) can be checked without the kernel making that call:
 * i386 calls on a kernel without an ia32 entry, every ioctl request. */
#define BPF_BAD 0xdeadbeefU
static uint32_t bpf_run(const struct cd_seccomp_prog *p, const struct seccomp_data *d)
{
	uint32_t a = 0, x = 0, mem[BPF_MEMWORDS] = { 0 };
	size_t pc = 0;

	while (pc < p->len) {
		const struct sock_filter *f = &p->filter[pc++];
		uint32_t k = f->k, src = BPF_SRC(f->code) == BPF_X ? x : k;

		switch (f->code) {
		case BPF_LD | BPF_W | BPF_ABS:
			if (k % 4 || k > sizeof *d - 4)
				return BPF_BAD;
			memcpy(&a, (const char *)d + k, 4);
			break;
		case BPF_LD | BPF_IMM:
			a = k;
			break;
		case BPF_LDX | BPF_IMM:
			x = k;
			break;
		case BPF_LD | BPF_MEM:
		case BPF_LDX | BPF_MEM:
		case BPF_ST:
		case BPF_STX:
			if (k >= BPF_MEMWORDS)
				return BPF_BAD;
			if (f->code == (BPF_LD | BPF_MEM))
				a = mem[k];
			else if (f->code == (BPF_LDX | BPF_MEM))
				x = mem[k];
			else
				mem[k] = f->code == BPF_ST ? a : x;
			break;
		case BPF_ALU | BPF_AND | BPF_K:
		case BPF_ALU | BPF_AND | BPF_X:
			a &= src;
			break;
		case BPF_ALU | BPF_OR | BPF_K:
		case BPF_ALU | BPF_OR | BPF_X:
			a |= src;
			break;
		case BPF_MISC | BPF_TAX:
			x = a;
			break;
		case BPF_MISC | BPF_TXA:
			a = x;
			break;
		case BPF_JMP | BPF_JA:
			pc += k;
			break;
		case BPF_JMP | BPF_JEQ | BPF_K:
		case BPF_JMP | BPF_JEQ | BPF_X:
			pc += a == src ? f->jt : f->jf;
			break;
		case BPF_JMP | BPF_JGT | BPF_K:
		case BPF_JMP | BPF_JGT | BPF_X:
			pc += a > src ? f->jt : f->jf;
			break;
		case BPF_JMP | BPF_JGE | BPF_K:
		case BPF_JMP | BPF_JGE | BPF_X:
			pc += a >= src ? f->jt : f->jf;
			break;
		case BPF_JMP | BPF_JSET | BPF_K:
		case BPF_JMP | BPF_JSET | BPF_X:
			pc += (a & src) ? f->jt : f->jf;
			break;
		case BPF_RET | BPF_K:
			return k;
		case BPF_RET | BPF_A:
			return a;
		default:
			return BPF_BAD;
		}
	}
	return BPF_BAD;
}

static uint32_t ask(const struct cd_seccomp_prog *p, uint32_t arch, int nr, uint64_t a0,
                    uint64_t a1)
{
	struct seccomp_data d;

	memset(&d, 0, sizeof d);
	d.arch = arch;
	d.nr = nr;
	d.args[0] = a0;
	d.args[1] = a1;
	return bpf_run(p, &d);
}

static void test_bpf_mode(const struct cd_seccomp_opts *o)
{
	static const uint64_t ns[] = {
		CLONE_NEWUSER, CLONE_NEWNS,  CLONE_NEWPID,    CLONE_NEWNET,
		CLONE_NEWIPC,  CLONE_NEWUTS, CLONE_NEWCGROUP, CLONE_NEWTIME
	};
	static const uint64_t highs[] = { 0, 1ULL << 32, 0xdeadbeefULL << 32, 0xffffffffULL << 32 };
	const char *mode = o->notify ? (o->allow_net_inet ? "notify+inet" : "notify") : "errno";
	uint32_t deny = o->notify ? SECCOMP_RET_USER_NOTIF : SECCOMP_RET_ERRNO | EPERM;
	uint32_t badarch = o->notify ? SECCOMP_RET_USER_NOTIF : SECCOMP_RET_KILL_PROCESS;
	uint32_t nosys = SECCOMP_RET_ERRNO | ENOSYS, allow = SECCOMP_RET_ALLOW;
	const uint64_t fork_flags = CLONE_CHILD_SETTID | CLONE_CHILD_CLEARTID | SIGCHLD;
	const uint64_t thread_flags = CLONE_VM | CLONE_FS | CLONE_FILES | CLONE_SIGHAND |
	                              CLONE_THREAD | CLONE_SYSVSEM | CLONE_SETTLS |
	                              CLONE_PARENT_SETTID | CLONE_CHILD_CLEARTID;
	struct cd_seccomp_prog p;
	size_t i, h, bad = 0, n = 0;
	int bit;

	if (cd_seccomp_build(o, &p, NULL) < 0) {
		ok(0, "%s: build", mode);
		return;
	}
	is_int(ask(&p, AUDIT_ARCH_X86_64, SYS_getpid, 0, 0), allow, "%s: bpf: getpid allowed",
	       mode);
	is_int(ask(&p, AUDIT_ARCH_I386, 20, 0, 0), badarch, "%s: bpf: i386 getpid refused", mode);
	is_int(ask(&p, AUDIT_ARCH_I386, 102, 1, 0), badarch, "%s: bpf: i386 socketcall refused",
	       mode);
	is_int(ask(&p, AUDIT_ARCH_X86_64, 0x40000000 | SYS_getpid, 0, 0), badarch,
	       "%s: bpf: x32 getpid refused", mode);
	is_int(ask(&p, AUDIT_ARCH_X86_64, 0x40000000 | 512, 0, 0), badarch,
	       "%s: bpf: x32-only number refused", mode);
	is_int(ask(&p, AUDIT_ARCH_AARCH64, SYS_getpid, 0, 0), badarch,
	       "%s: bpf: another arch refused", mode);
	is_int(ask(&p, AUDIT_ARCH_X86_64, SYS_ptrace, 0, 0), deny, "%s: bpf: ptrace refused", mode);
	is_int(ask(&p, AUDIT_ARCH_X86_64, 1000, 0, 0), deny, "%s: bpf: unknown number refused",
	       mode);
	is_int(ask(&p, AUDIT_ARCH_X86_64, SYS_clone3, 0, 0), nosys,
	       "%s: bpf: clone3 ENOSYS from the filter", mode);
	is_int(ask(&p, AUDIT_ARCH_X86_64, SYS_io_uring_setup, 0, 0), o->notify ? deny : nosys,
	       "%s: bpf: io_uring_setup refused (ENOSYS)", mode);

	/* ioctl: refused exactly when the low 32 bits are TIOCSTI/TIOCLINUX,
	 * whatever the high half holds.  Every one-bit neighbour of the two
	 * refused values is checked, so an off-by-one cube would show. */
	for (h = 0; h < CD_ARRAY_SIZE(highs); h++) {
		uint32_t base[] = {
			TIOCSTI, TIOCLINUX, TCGETS, TIOCGWINSZ, FIONREAD, 0, 0xffffffff
		};
		for (i = 0; i < CD_ARRAY_SIZE(base); i++) {
			for (bit = -1; bit < 32; bit++) {
				uint32_t low = bit < 0 ? base[i] : base[i] ^ (1U << bit);
				uint32_t want = low == TIOCSTI || low == TIOCLINUX ? deny : allow;
				n++;
				if (ask(&p, AUDIT_ARCH_X86_64, SYS_ioctl, 0, highs[h] | low) !=
				    want) {
					if (bad++ < 5)
						diag("ioctl 0x%llx: wrong answer",
						     (unsigned long long)(highs[h] | low));
				}
			}
		}
	}
	ok(bad == 0, "%s: bpf: %zu ioctl requests, TIOCSTI/TIOCLINUX refused on the low 32 bits",
	   mode, n);

	bad = 0;
	for (i = 0; i < CD_ARRAY_SIZE(ns); i++) {
		if (ask(&p, AUDIT_ARCH_X86_64, SYS_clone, fork_flags | ns[i], 0) != deny ||
		    ask(&p, AUDIT_ARCH_X86_64, SYS_unshare, ns[i], 0) != deny) {
			diag("namespace flag 0x%llx not refused", (unsigned long long)ns[i]);
			bad++;
		}
	}
	ok(bad == 0, "%s: bpf: clone/unshare with each CLONE_NEW* refused", mode);
	is_int(ask(&p, AUDIT_ARCH_X86_64, SYS_clone, fork_flags, 0), allow,
	       "%s: bpf: clone for fork allowed", mode);
	is_int(ask(&p, AUDIT_ARCH_X86_64, SYS_clone, thread_flags, 0), allow,
	       "%s: bpf: clone for a thread allowed", mode);
	is_int(ask(&p, AUDIT_ARCH_X86_64, SYS_unshare, CLONE_FILES | CLONE_FS, 0), allow,
	       "%s: bpf: unshare(CLONE_FILES|CLONE_FS) allowed", mode);

	is_int(ask(&p, AUDIT_ARCH_X86_64, SYS_socket, AF_UNIX, 0), allow,
	       "%s: bpf: socket(AF_UNIX) allowed", mode);
	is_int(ask(&p, AUDIT_ARCH_X86_64, SYS_socket, (1ULL << 32) | AF_UNIX, 0), allow,
	       "%s: bpf: socket(AF_UNIX) with junk above allowed (the kernel sees AF_UNIX)", mode);
	is_int(ask(&p, AUDIT_ARCH_X86_64, SYS_socket, (1ULL << 32) | AF_NETLINK, 0), deny,
	       "%s: bpf: socket(AF_NETLINK) with junk above refused", mode);
	is_int(ask(&p, AUDIT_ARCH_X86_64, SYS_socket, AF_PACKET, 0), deny,
	       "%s: bpf: socket(AF_PACKET) refused", mode);
	is_int(ask(&p, AUDIT_ARCH_X86_64, SYS_socket, AF_INET6, 0),
	       o->allow_net_inet ? allow : deny, "%s: bpf: socket(AF_INET6) %s", mode,
	       o->allow_net_inet ? "allowed" : "refused");
	is_int(ask(&p, AUDIT_ARCH_X86_64, SYS_socketpair, AF_INET, 0), deny,
	       "%s: bpf: socketpair(AF_INET) refused", mode);
	is_int(ask(&p, AUDIT_ARCH_X86_64, SYS_personality, 0xffffffff, 0), allow,
	       "%s: bpf: personality query allowed", mode);
	is_int(ask(&p, AUDIT_ARCH_X86_64, SYS_personality, 0x0040000 /* ADDR_NO_RANDOMIZE */, 0),
	       deny, "%s: bpf: personality(ADDR_NO_RANDOMIZE) refused", mode);
	cd_seccomp_prog_release(&p);
}

static uint32_t ask6(const struct cd_seccomp_prog *p, int nr, const uint64_t a[6])
{
	struct seccomp_data d;

	memset(&d, 0, sizeof d);
	d.arch = AUDIT_ARCH_X86_64;
	d.nr = nr;
	memcpy(d.args, a, sizeof d.args);
	return bpf_run(p, &d);
}

/* Issue 16: every call that takes a file mode is refused exactly when the
 * low 32 bits of the mode carry S_ISUID or S_ISGID (open/openat only when
 * they create), whatever the upper half and the other arguments hold. */
static void test_bpf_modes(const struct cd_seccomp_opts *o)
{
	static const struct {
		const char *name;
		int nr, mode_arg, flags_arg;
	} calls[] = {
		{ "chmod", SYS_chmod, 1, -1 },       { "fchmod", SYS_fchmod, 1, -1 },
		{ "fchmodat", SYS_fchmodat, 2, -1 }, { "fchmodat2", 452, 2, -1 },
		{ "creat", SYS_creat, 1, -1 },       { "open", SYS_open, 2, 1 },
		{ "openat", SYS_openat, 3, 2 },      { "mknod", SYS_mknod, 1, -1 },
		{ "mknodat", SYS_mknodat, 2, -1 },
	};
	static const uint64_t highs[] = { 0, 1ULL << 32, 0xdeadbeefULL << 32, 0xffffffffULL << 32 };
	static const uint32_t modes[] = { 0,
		                          0644,
		                          0755,
		                          01777,
		                          0777,
		                          04000,
		                          02000,
		                          04755,
		                          02755,
		                          06755,
		                          07777,
		                          S_IFREG | 04644,
		                          S_IFIFO | 02644,
		                          0xfffff9ff,
		                          0xffffffff };
	static const uint64_t creates[] = { O_CREAT | O_WRONLY, 020000000 | O_DIRECTORY | O_RDWR,
		                            O_CREAT | O_EXCL | O_CLOEXEC };
	const char *mode = o->notify ? (o->allow_net_inet ? "notify+inet" : "notify") : "errno";
	uint32_t deny = o->notify ? SECCOMP_RET_USER_NOTIF : SECCOMP_RET_ERRNO | EPERM;
	uint32_t nosys = SECCOMP_RET_ERRNO | ENOSYS, allow = SECCOMP_RET_ALLOW;
	struct cd_seccomp_prog p;
	size_t c, h, m, f;

	if (cd_seccomp_build(o, &p, NULL) < 0) {
		ok(0, "%s: build", mode);
		return;
	}
	for (c = 0; c < CD_ARRAY_SIZE(calls); c++) {
		size_t bad = 0, n = 0, nf = calls[c].flags_arg < 0 ? 1 : CD_ARRAY_SIZE(creates);

		for (h = 0; h < CD_ARRAY_SIZE(highs); h++)
			for (m = 0; m < CD_ARRAY_SIZE(modes); m++)
				for (f = 0; f < nf; f++) {
					/* Junk in every other argument too. */
					uint64_t a[6] = { highs[h] | 3, highs[h] | 5, highs[h] | 7,
						          highs[h] | 9, highs[h],     highs[h] };
					uint32_t want =
					        modes[m] & (S_ISUID | S_ISGID) ? deny : allow;

					a[calls[c].mode_arg] = highs[h] | modes[m];
					if (calls[c].flags_arg >= 0)
						a[calls[c].flags_arg] = highs[h] | creates[f];
					n++;
					if (ask6(&p, calls[c].nr, a) != want && bad++ < 3)
						diag("%s mode 0x%llx: wrong answer", calls[c].name,
						     (unsigned long long)a[calls[c].mode_arg]);
				}
		ok(bad == 0,
		   "%s: bpf: %s refused exactly for S_ISUID/S_ISGID in the low 32 bits of "
		   "the mode (%zu cases)",
		   mode, calls[c].name, n);
	}
	/* The bits only in the upper half: the kernel never sees them. */
	for (c = 0; c < CD_ARRAY_SIZE(calls); c++) {
		uint64_t a[6] = { 0, 0, 0, 0, 0, 0 };
		a[calls[c].mode_arg] = (uint64_t)06000 << 32 | 0755;
		if (calls[c].flags_arg >= 0)
			a[calls[c].flags_arg] = O_CREAT;
		is_int(ask6(&p, calls[c].nr, a), allow,
		       "%s: bpf: %s with 06000 only above bit 32 allowed", mode, calls[c].name);
	}
	/* open/openat that create nothing: the kernel ignores the mode. */
	{
		uint64_t a[6] = { 0, O_RDONLY, 06755, 0, 0, 0 };
		uint64_t b[6] = { (uint64_t)-100, 0, O_RDWR | O_DIRECTORY, 04755, 0, 0 };
		uint64_t hi[6] = { 0, (uint64_t)O_CREAT << 32, 04755, 0, 0, 0 };
		is_int(ask6(&p, SYS_open, a), allow,
		       "%s: bpf: open without O_CREAT ignores the mode", mode);
		is_int(ask6(&p, SYS_openat, b), allow,
		       "%s: bpf: openat without O_CREAT ignores the mode", mode);
		is_int(ask6(&p, SYS_open, hi), allow,
		       "%s: bpf: O_CREAT only in the upper half of the flags creates nothing",
		       mode);
	}
	{
		uint64_t a[6] = { (uint64_t)-100, 0, 06755, 0, 0, 0 };
		is_int(ask6(&p, SYS_mkdirat, a), allow,
		       "%s: bpf: mkdirat with 06755 allowed (the kernel drops the bits)", mode);
	}
	is_int(ask(&p, AUDIT_ARCH_X86_64, 437, (uint64_t)-100, 0), o->notify ? deny : nosys,
	       "%s: bpf: openat2 refused (ENOSYS)", mode);
	is_int(ask(&p, AUDIT_ARCH_X86_64, SYS_io_setup, 1, 0), o->notify ? deny : nosys,
	       "%s: bpf: io_setup refused (ENOSYS)", mode);
	is_int(ask(&p, AUDIT_ARCH_X86_64, SYS_io_submit, 0, 0), allow,
	       "%s: bpf: io_submit allowed (no context can exist)", mode);
	cd_seccomp_prog_release(&p);
}

static void test_tables(void)
{
	static const char *must_refuse[] = {
		"ptrace",
		"process_vm_readv",
		"process_vm_writev",
		"keyctl",
		"add_key",
		"request_key",
		"bpf",
		"perf_event_open",
		"userfaultfd",
		"mount",
		"umount2",
		"fsopen",
		"fsmount",
		"fsconfig",
		"fspick",
		"move_mount",
		"open_tree",
		"mount_setattr",
		"pivot_root",
		"chroot",
		"setns",
		"init_module",
		"finit_module",
		"delete_module",
		"kexec_load",
		"kexec_file_load",
		"reboot",
		"swapon",
		"swapoff",
		"acct",
		"settimeofday",
		"clock_settime",
		"clock_adjtime",
		"adjtimex",
		"io_uring_setup",
		"io_uring_enter",
		"io_uring_register",
		"clone3",
		"name_to_handle_at",
		"open_by_handle_at",
		"lookup_dcookie",
		"quotactl",
		"vhangup",
		"nfsservctl",
		"uselib",
		"ustat",
		"sysfs",
		"iopl",
		"ioperm",
		"modify_ldt",
		"kcmp",
		"openat2",
		"io_setup",
		"fanotify_init",
		"fanotify_mark",
	};
	static const char *mode_calls[] = { "chmod", "fchmod", "fchmodat", "fchmodat2", "creat",
		                            "open",  "openat", "mknod",    "mknodat" };
	size_t i;
	int nr, unknown = 0, refused = 1;

	for (i = 0; i < CD_ARRAY_SIZE(must_refuse); i++) {
		int c = cd_seccomp_policy_of(must_refuse[i]);
		if (c != CD_SC_EPERM && c != CD_SC_ENOSYS && c != CD_SC_SILENT) {
			diag("'%s' is not refused (class %d)", must_refuse[i], c);
			refused = 0;
		}
	}
	ok(refused, "every always-refused syscall is in a refusing table");
	for (nr = 0; nr < CD_SECCOMP_NR_MAX; nr++) {
		char *name = seccomp_syscall_resolve_num_arch(SCMP_ARCH_X86_64, nr);
		if (name && cd_seccomp_policy_of(name) == CD_SC_UNKNOWN) {
			diag("x86_64 syscall %d '%s' is in no table", nr, name);
			unknown++;
		}
		free(name);
	}
	is_int(unknown, 0, "every x86_64 syscall libseccomp knows has a decided class");
	is_int(cd_seccomp_policy_of("ioctl"), CD_SC_COND, "ioctl is conditional");
	is_int(cd_seccomp_policy_of("clone3"), CD_SC_SILENT, "clone3 is the silent ENOSYS");
	is_int(cd_seccomp_policy_of("io_uring_enter"), CD_SC_ENOSYS, "io_uring is ENOSYS");
	is_int(cd_seccomp_policy_of("openat2"), CD_SC_ENOSYS, "openat2 is ENOSYS");
	is_int(cd_seccomp_policy_of("io_setup"), CD_SC_ENOSYS, "io_setup is ENOSYS");
	for (i = 0; i < CD_ARRAY_SIZE(mode_calls); i++)
		is_int(cd_seccomp_policy_of(mode_calls[i]), CD_SC_COND, "%s is conditional (mode)",
		       mode_calls[i]);
	is_int(cd_seccomp_policy_of("mkdir"), CD_SC_ALLOW,
	       "mkdir is allowed (the kernel drops S_ISUID/S_ISGID)");
}

static void test_build(void)
{
	struct cd_seccomp_opts o = { .allow_net_inet = 0, .notify = 1 };
	struct cd_seccomp_opts oi = { .allow_net_inet = 1, .notify = 1 };
	struct cd_seccomp_prog p, pi;
	struct cd_err err = { 0 };

	is_int(cd_seccomp_build(&o, &p, &err), 0, "build (notify) %s", err.msg);
	ok(p.len > 50 && p.len <= BPF_MAXINSNS, "filter has %u instructions", p.len);
	is_int(cd_seccomp_build(&oi, &pi, &err), 0, "build (notify, inet)");
	ok(pi.len > p.len, "inet adds rules (%u > %u)", pi.len, p.len);
	is_int(cd_seccomp_reply_errno(&p, AUDIT_ARCH_X86_64, SYS_ptrace), EPERM, "ptrace -> EPERM");
	is_int(cd_seccomp_reply_errno(&p, AUDIT_ARCH_X86_64, SYS_ioctl), EPERM,
	       "refused ioctl -> EPERM");
	is_int(cd_seccomp_reply_errno(&p, AUDIT_ARCH_X86_64, SYS_io_uring_setup), ENOSYS,
	       "io_uring_setup -> ENOSYS");
	is_int(cd_seccomp_reply_errno(&p, AUDIT_ARCH_X86_64, SYS_fchmodat), EPERM,
	       "refused fchmodat -> EPERM");
	is_int(cd_seccomp_reply_errno(&p, AUDIT_ARCH_X86_64, 452), EPERM,
	       "refused fchmodat2 -> EPERM");
	is_int(cd_seccomp_reply_errno(&p, AUDIT_ARCH_X86_64, SYS_openat), EPERM,
	       "refused openat -> EPERM");
	is_int(cd_seccomp_reply_errno(&p, AUDIT_ARCH_X86_64, 437), ENOSYS, "openat2 -> ENOSYS");
	is_int(cd_seccomp_reply_errno(&p, AUDIT_ARCH_X86_64, SYS_io_setup), ENOSYS,
	       "io_setup -> ENOSYS");
	is_int(cd_seccomp_reply_errno(&p, AUDIT_ARCH_X86_64, 1000), ENOSYS,
	       "a number newer than the filter -> ENOSYS");
	is_int(cd_seccomp_reply_errno(&p, AUDIT_ARCH_X86_64, 0x40000000 | 1000), EPERM,
	       "any x32 number -> EPERM");
	is_int(cd_seccomp_reply_errno(&p, AUDIT_ARCH_I386, 1000), EPERM, "any i386 call -> EPERM");
	is_int(cd_seccomp_install(&p, NULL), -EINVAL,
	       "install of a notify prog needs ret_listener");
	cd_seccomp_prog_release(&p);
	cd_seccomp_prog_release(&p);
	cd_seccomp_prog_release(NULL);
	ok(p.filter == NULL && p.len == 0, "release is idempotent");
	cd_seccomp_prog_release(&pi);
	is_int(cd_seccomp_build(NULL, &p, &err), -EINVAL, "no options refused");
}

/* Install without no_new_privs is refused by us, even as root. */
static void test_needs_nnp(void)
{
	struct cd_seccomp_opts o = { .notify = 0 };
	struct cd_seccomp_prog p;
	int status = 0;
	pid_t pid;

	if (cd_seccomp_build(&o, &p, NULL) < 0) {
		ok(0, "build (errno mode)");
		return;
	}
	pid = fork();
	if (pid == 0)
		_exit(cd_seccomp_install(&p, NULL) == -EPERM ? 0 : 1);
	waitpid(pid, &status, 0);
	ok(WIFEXITED(status) && WEXITSTATUS(status) == 0, "install without no_new_privs -> -EPERM");
	cd_seccomp_prog_release(&p);
}

/* A container's profile stacked on cordon's filter (errno mode): it
 * narrows (getppid, getpgid(0)) and cannot widen (ptrace, which cordon
 * refuses, stays refused though the profile allows it). */
static void test_profile_stacked(void)
{
	struct cd_seccomp_opts o = { .notify = 0 };
	struct cd_seccomp_rule rules[4];
	struct cd_seccomp_profile pr = { CD_SCP_ALLOW, 0, rules, 4 };
	struct cd_seccomp_prog base, prof;
	unsigned skipped = 0;
	char got[6] = "";
	int fds[2], status = 0;
	pid_t pid;

	memset(rules, 0, sizeof rules);
	rules[0].name = "getppid";
	rules[0].act = CD_SCP_ERRNO;
	rules[0].errno_ret = 42;
	rules[1].name = "ptrace";
	rules[1].act = CD_SCP_LOG; /* allowed by the profile */
	rules[2].name = "getpgid";
	rules[2].act = CD_SCP_ERRNO;
	rules[2].errno_ret = 44;
	rules[2].nargs = 1;
	rules[2].args[0].index = 0;
	rules[2].args[0].op = CD_SCP_EQ;
	rules[2].args[0].value = 0;
	rules[3].name = "no_such_call_2004";
	rules[3].act = CD_SCP_ERRNO;
	rules[3].errno_ret = 1;
	if (!ok(cd_seccomp_build(&o, &base, NULL) == 0, "cordon's filter (errno mode)") ||
	    !ok(cd_seccomp_build_profile(&pr, &prof, &skipped, NULL) == 0,
	        "a container's profile builds") ||
	    pipe(fds) < 0)
		return;
	is_int((int)skipped, 1, "the rule naming an unknown call is skipped");
	pid = fork();
	if (pid == 0) {
		char r[5];

		close(fds[0]);
		if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 ||
		    cd_seccomp_install(&base, NULL) < 0 || cd_seccomp_install(&prof, NULL) < 0)
			_exit(2);
		errno = 0;
		r[0] = syscall(SYS_getppid) == -1 && errno == 42 ? 'y' : 'n';
		errno = 0;
		r[1] = syscall(SYS_ptrace, 0 /* PTRACE_TRACEME */, 0, 0, 0) == -1 && errno == EPERM
		               ? 'y'
		               : 'n';
		errno = 0;
		r[2] = syscall(SYS_getpgid, 0) == -1 && errno == 44 ? 'y' : 'n';
		r[3] = syscall(SYS_getpgid, getpid()) >= 0 ? 'y' : 'n';
		r[4] = syscall(SYS_getpid) > 0 ? 'y' : 'n';
		if (write(fds[1], r, 5) != 5)
			_exit(3);
		_exit(0);
	}
	close(fds[1]);
	if (read(fds[0], got, 5) != 5)
		got[0] = '\0';
	close(fds[0]);
	waitpid(pid, &status, 0);
	ok(WIFEXITED(status) && WEXITSTATUS(status) == 0, "the child installed both filters");
	ok(got[0] == 'y', "the profile narrows: getppid fails with its errno 42");
	ok(got[1] == 'y', "the profile cannot widen: ptrace, which cordon refuses, stays EPERM");
	ok(got[2] == 'y', "an argument rule: getpgid(0) fails with errno 44");
	ok(got[3] == 'y', "... and getpgid(pid) does not match it: allowed");
	ok(got[4] == 'y', "a call both allow (getpid) works");
	cd_seccomp_prog_release(&base);
	cd_seccomp_prog_release(&prof);
}

static void test_fd_passing(void)
{
	int sv[2], pp[2], got = -1;
	char c = 0;

	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0 ||
	    pipe2(pp, O_CLOEXEC) < 0) {
		ok(0, "socketpair/pipe");
		return;
	}
	is_int(cd_fd_send(sv[1], pp[1]), 0, "send an fd");
	is_int(cd_fd_recv(sv[0], &got), 0, "receive it");
	ok(got >= 0 && got != pp[1] && write(got, "x", 1) == 1 && read(pp[0], &c, 1) == 1 &&
	           c == 'x',
	   "the received fd is the same pipe");
	ok(got >= 0 && (fcntl(got, F_GETFD) & FD_CLOEXEC), "received fd is close-on-exec");
	if (got >= 0)
		close(got);
	ok(write(sv[1], "y", 1) == 1, "send a byte without an fd");
	is_int(cd_fd_recv(sv[0], &got), -EBADMSG, "a message without an fd is refused");
	is_int(cd_fd_send(sv[1], -1), -EBADF, "sending a bad fd is refused");
	close(sv[1]);
	is_int(cd_fd_recv(sv[0], &got), -EPIPE, "closed peer -> -EPIPE");
	close(sv[0]);
	close(pp[0]);
	close(pp[1]);
}

static void test_json(void)
{
	struct cd_seccomp_stats st;
	json_t *j = NULL;
	char *s;
	int i;

	cd_seccomp_stats_init(&st);
	st.total = 4;
	st.n = 3;
	st.e[0] = (struct cd_seccomp_stat){ AUDIT_ARCH_X86_64, SYS_ptrace, 2 };
	st.e[1] = (struct cd_seccomp_stat){ AUDIT_ARCH_X86_64, 0x40000000 | SYS_getpid, 1 };
	st.e[2] = (struct cd_seccomp_stat){ AUDIT_ARCH_I386, 20, 1 };
	is_int(cd_seccomp_stats_json(&st, &j), 0, "stats to json");
	s = j ? json_dumps(j, JSON_COMPACT) : NULL;
	is_str(s,
	       "[{\"syscall\":\"ptrace\",\"arch\":\"x86_64\",\"nr\":101,\"count\":2},"
	       "{\"syscall\":\"getpid\",\"arch\":\"x32\",\"nr\":1073741863,\"count\":1},"
	       "{\"syscall\":\"getpid\",\"arch\":\"i386\",\"nr\":20,\"count\":1}]",
	       "json names syscalls per arch");
	free(s);
	json_decref(j);

	cd_seccomp_stats_init(&st);
	for (i = 0; i < CD_SECCOMP_STATS_MAX; i++)
		st.e[i] = (struct cd_seccomp_stat){ AUDIT_ARCH_X86_64, 2000 + i, 1 };
	st.n = CD_SECCOMP_STATS_MAX;
	st.total = CD_SECCOMP_STATS_MAX + 5;
	st.overflow = 5;
	is_int(cd_seccomp_stats_json(&st, &j), 0, "full stats to json");
	is_int(json_array_size(j), CD_SECCOMP_STATS_MAX + 1, "overflow gets one entry");
	s = j ? json_dumps(json_array_get(j, CD_SECCOMP_STATS_MAX), JSON_COMPACT) : NULL;
	is_str(s, "{\"syscall\":\"(other)\",\"arch\":\"(other)\",\"count\":5}", "overflow entry");
	free(s);
	json_decref(j);
}

int main(void)
{
	struct cd_seccomp_opts on = { .notify = 1 }, oi = { .notify = 1, .allow_net_inet = 1 },
	                       oe = { .notify = 0 };
	static struct result base[PROBES_N];
	struct cd_seccomp_stats st;

	tap_start(120);
	test_tables();
	test_build();
	test_needs_nnp();
	test_profile_stacked();
	test_fd_passing();
	test_json();
	test_bpf_mode(&on);
	test_bpf_mode(&oi);
	test_bpf_mode(&oe);
	test_bpf_modes(&on);
	test_bpf_modes(&oi);
	test_bpf_modes(&oe);
	is_int(run_probes(NULL, base, &st), 0, "bare run of every probe");
	test_probes(&on, base);
	test_probes(&oi, base);
	test_probes(&oe, base);
	return tap_done();
}
