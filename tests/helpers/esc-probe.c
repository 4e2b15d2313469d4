/* esc-probe — escape attempts for tests/integration/9xxx-*.sh.
 *
 *   esc-probe ptrace PID           PTRACE_ATTACH then PTRACE_SEIZE on PID
 *   esc-probe vm-read PID          process_vm_readv of PID
 *   esc-probe open-write PATH      open(PATH, O_WRONLY)
 *   esc-probe open-read PATH       open(PATH, O_RDONLY) and read a byte
 *   esc-probe connect-unix PATH    connect to a Unix socket (@NAME: abstract)
 *   esc-probe udp ADDR PORT        send a datagram (IPv4 or IPv6 literal)
 *   esc-probe tcp ADDR PORT        connect (IPv4 or IPv6 literal)
 *   esc-probe tcp-bind             bind a TCP socket to 127.0.0.1:0
 *   esc-probe raw                  socket(AF_INET, SOCK_RAW, ICMP)
 *   esc-probe ping ADDR            ICMP datagram socket, send an echo
 *   esc-probe ids                  euid, egid and capability sets, setuid(0)
 *   esc-probe securebits           prctl(PR_GET_SECUREBITS), in hex
 *   esc-probe alloc MB             allocate and touch MB MiB
 *   esc-probe swap A B MAX         renameat2(A, B, RENAME_EXCHANGE) up to MAX
 *                                  times (host side, for races)
 *   esc-probe kill PID             kill(PID, SIGTERM)
 *   esc-probe shm-stat ID          shmctl(ID, IPC_STAT) of a SysV segment
 *   esc-probe msg-stat ID          msgctl(ID, IPC_STAT) of a SysV queue
 *   esc-probe shm-create KEY       shmget(KEY, 4096, IPC_CREAT | IPC_EXCL | 0600),
 *                                  left in place
 *   esc-probe ambient-raise        raise CAP_NET_BIND_SERVICE in the ambient set
 *
 * Each attempt prints "WHAT=ok" when the kernel let it through, or
 * "WHAT=ERRNONAME", so tests compare the output exactly; exit status 0
 * unless the usage is wrong (2).  Static, libc only. */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <netinet/in.h>
#include <netinet/ip_icmp.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/msg.h>
#include <sys/ptrace.h>
#include <sys/shm.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <unistd.h>

static int report(const char *what, long r)
{
	if (r >= 0) {
		printf("%s=ok\n", what);
	} else {
		const char *e = strerrorname_np(errno);
		if (e)
			printf("%s=%s\n", what, e);
		else
			printf("%s=%d\n", what, errno);
	}
	return 0;
}

static socklen_t inet_addr_of(const char *a, int port, struct sockaddr_storage *ss)
{
	struct sockaddr_in *s4 = (struct sockaddr_in *)ss;
	struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)ss;

	memset(ss, 0, sizeof *ss);
	if (inet_pton(AF_INET, a, &s4->sin_addr) == 1) {
		s4->sin_family = AF_INET;
		s4->sin_port = htons((unsigned short)port);
		return sizeof *s4;
	}
	if (inet_pton(AF_INET6, a, &s6->sin6_addr) == 1) {
		s6->sin6_family = AF_INET6;
		s6->sin6_port = htons((unsigned short)port);
		return sizeof *s6;
	}
	fprintf(stderr, "esc-probe: bad address %s\n", a);
	exit(2);
}

static void status_line(const char *key)
{
	char line[256];
	FILE *f = fopen("/proc/self/status", "r");
	if (!f)
		return;
	while (fgets(line, sizeof line, f))
		if (strncmp(line, key, strlen(key)) == 0 && line[strlen(key)] == ':') {
			char *v = line + strlen(key) + 1;
			v += strspn(v, " \t");
			v[strcspn(v, "\n")] = 0;
			printf("%s=%s\n", key, v);
		}
	fclose(f);
}

/* Signals, System V IPC, capabilities: the walls that other
 * walls hide (9035).  -1 when CMD is none of these. */
static int ipc_probe(const char *cmd, int argc, char **argv)
{
	const char *arg = argc > 2 ? argv[2] : "";

	if (argc != 3 && strcmp(cmd, "ambient-raise") != 0)
		return -1;
	if (strcmp(cmd, "kill") == 0)
		return report("kill", kill(atoi(arg), SIGTERM));
	if (strcmp(cmd, "shm-stat") == 0) {
		struct shmid_ds ds;
		return report("shm-stat", shmctl(atoi(arg), IPC_STAT, &ds));
	}
	if (strcmp(cmd, "msg-stat") == 0) {
		struct msqid_ds ds;
		return report("msg-stat", msgctl(atoi(arg), IPC_STAT, &ds));
	}
	if (strcmp(cmd, "shm-create") == 0)
		return report("shm-create", shmget((key_t)strtol(arg, NULL, 0), 4096,
		                                   IPC_CREAT | IPC_EXCL | 0600));
	if (strcmp(cmd, "ambient-raise") == 0 && argc == 2)
		return report("ambient-raise", prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_RAISE,
		                                     CAP_NET_BIND_SERVICE, 0, 0));
	return -1;
}

int main(int argc, char **argv)
{
	const char *cmd = argc > 1 ? argv[1] : "";
	int r;

	setvbuf(stdout, NULL, _IONBF, 0);
	if ((r = ipc_probe(cmd, argc, argv)) >= 0)
		return r;
	if (strcmp(cmd, "ptrace") == 0 && argc == 3) {
		pid_t pid = atoi(argv[2]);
		report("ptrace-attach", ptrace(PTRACE_ATTACH, pid, 0, 0));
		return report("ptrace-seize", ptrace(PTRACE_SEIZE, pid, 0, 0));
	}
	if (strcmp(cmd, "vm-read") == 0 && argc == 3) {
		char buf[8];
		struct iovec l = { buf, sizeof buf }, r = { (void *)0x400000, sizeof buf };
		return report("vm-read",
		              syscall(SYS_process_vm_readv, atoi(argv[2]), &l, 1, &r, 1, 0));
	}
	if (strcmp(cmd, "open-write") == 0 && argc == 3) {
		int fd = open(argv[2], O_WRONLY | O_CLOEXEC);
		if (fd >= 0)
			close(fd);
		return report("open-write", fd);
	}
	if (strcmp(cmd, "open-read") == 0 && argc == 3) {
		char c;
		long r = open(argv[2], O_RDONLY | O_CLOEXEC);
		if (r >= 0) {
			int fd = (int)r;
			r = read(fd, &c, 1);
			close(fd);
		}
		return report("open-read", r);
	}
	if (strcmp(cmd, "connect-unix") == 0 && argc == 3) {
		struct sockaddr_un sun = { .sun_family = AF_UNIX };
		socklen_t len;
		int s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (s < 0)
			return report("socket", s);
		strncpy(sun.sun_path, argv[2], sizeof sun.sun_path - 1);
		len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + strlen(argv[2]));
		if (argv[2][0] == '@')
			sun.sun_path[0] = 0;
		return report("connect", connect(s, (struct sockaddr *)&sun, len));
	}
	if ((strcmp(cmd, "udp") == 0 || strcmp(cmd, "tcp") == 0) && argc == 4) {
		struct sockaddr_storage ss;
		socklen_t len = inet_addr_of(argv[2], atoi(argv[3]), &ss);
		int udp = cmd[0] == 'u';
		int s = socket(ss.ss_family, (udp ? SOCK_DGRAM : SOCK_STREAM) | SOCK_CLOEXEC, 0);
		if (s < 0)
			return report("socket", s);
		if (udp)
			return report("sendto", sendto(s, "x", 1, 0, (struct sockaddr *)&ss, len));
		return report("connect", connect(s, (struct sockaddr *)&ss, len));
	}
	if (strcmp(cmd, "tcp-bind") == 0) {
		struct sockaddr_storage ss;
		socklen_t len = inet_addr_of("127.0.0.1", 0, &ss);
		int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (s < 0)
			return report("socket", s);
		return report("bind", bind(s, (struct sockaddr *)&ss, len));
	}
	if (strcmp(cmd, "raw") == 0)
		return report("raw", socket(AF_INET, SOCK_RAW | SOCK_CLOEXEC, IPPROTO_ICMP));
	if (strcmp(cmd, "ping") == 0 && argc == 3) {
		struct sockaddr_storage ss;
		socklen_t len = inet_addr_of(argv[2], 0, &ss);
		struct icmphdr h = { .type = ICMP_ECHO };
		int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, IPPROTO_ICMP);
		if (s < 0)
			return report("socket", s);
		return report("sendto", sendto(s, &h, sizeof h, 0, (struct sockaddr *)&ss, len));
	}
	if (strcmp(cmd, "ids") == 0) {
		printf("euid=%d\negid=%d\n", (int)geteuid(), (int)getegid());
		status_line("CapPrm");
		status_line("CapEff");
		status_line("CapAmb");
		return report("setuid0", setuid(0));
	}
	if (strcmp(cmd, "securebits") == 0) {
		int r = prctl(PR_GET_SECUREBITS, 0, 0, 0, 0);
		if (r < 0)
			return report("securebits", r);
		printf("securebits=0x%x\n", (unsigned)r);
		return 0;
	}
	if (strcmp(cmd, "alloc") == 0 && argc == 3) {
		size_t mb = strtoul(argv[2], NULL, 10), i;
		for (i = 0; i < mb; i++) {
			char *p = malloc(1 << 20);
			if (!p)
				return report("alloc", -1);
			memset(p, 1, 1 << 20);
		}
		return report("alloc", 0);
	}
	if (strcmp(cmd, "swap") == 0 && argc == 5) {
		long i, max = atol(argv[4]);
		for (i = 0; i < max; i++)
			if (syscall(SYS_renameat2, AT_FDCWD, argv[2], AT_FDCWD, argv[3],
			            2 /* RENAME_EXCHANGE */) != 0)
				return report("swap", -1);
		return report("swap", 0);
	}
	fprintf(stderr, "usage: esc-probe ptrace|vm-read|open-write|open-read|connect-unix|udp|tcp|"
	                "tcp-bind|raw|ping|ids|securebits|alloc|swap|kill|shm-stat|msg-stat|"
	                "shm-create|ambient-raise ARGS\n");
	return 2;
}
