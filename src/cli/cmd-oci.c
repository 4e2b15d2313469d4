/* cmd-oci.c — `cordon-oci`: cordon as an OCI runtime, with runc's command
 * line (see cmd-oci.h for the contract with containerd's runc shim).
 *
 *   cordon-oci [--root DIR] [--log FILE] [--log-format text|json]
 *              [--systemd-cgroup] COMMAND ...
 *   create [--bundle DIR] [--pid-file FILE] [--console-socket SOCK]
 *          [--no-pivot] [--no-new-keyring] ID
 *   start ID | state ID | kill [--all] ID [SIGNAL] | delete [--force] ID
 *   features
 *
 * State lives in --root (default /run/cordon-oci), one directory per
 * container holding state.json and, until `start`, the fifo the
 * supervisor waits on.  `exec` is refused and recorded (a deny decision);
 * everything else (ps, pause, update, checkpoint) is refused with a
 * reason.
 */
#include "cli.h"
#include "cmd-oci.h"

#include "util/fs.h"
#include "util/util.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define OCI_VERSION      "1.0.2"
#define OCI_CONFIG_MAX   (4u * 1024 * 1024)
#define OCI_ROOT_DEFAULT "/run/cordon-oci"

static struct {
	const char *root, *log;
	int log_json;
} g = { OCI_ROOT_DEFAULT, NULL, 0 };

static void rfc3339(char *out, size_t cap)
{
	struct timespec ts;
	struct tm tm;
	char base[32];

	clock_gettime(CLOCK_REALTIME, &ts);
	gmtime_r(&ts.tv_sec, &tm);
	strftime(base, sizeof base, "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(out, cap, "%s.%09ldZ", base, ts.tv_nsec);
}

void oci_errorf(const char *fmt, ...)
{
	char msg[1024], now[64];
	va_list ap;
	json_t *o;
	char *line;
	FILE *f;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	fprintf(stderr, "cordon-oci: %s\n", msg);
	if (!g.log)
		return;
	f = fopen(g.log, "ae");
	if (!f)
		return;
	rfc3339(now, sizeof now);
	if (g.log_json) {
		o = json_pack("{s:s,s:s,s:s}", "level", "error", "msg", msg, "time", now);
		line = o ? json_dumps(o, JSON_COMPACT) : NULL;
		if (line)
			fprintf(f, "%s\n", line);
		free(line);
		json_decref(o);
	} else {
		fprintf(f, "time=\"%s\" level=error msg=\"%s\"\n", now, msg);
	}
	fclose(f);
}

/* A container id as runc allows it: letters, digits, _ + - . (not first). */
static int id_ok(const char *id)
{
	size_t i, n = strlen(id);

	if (n == 0 || n > 1024 || id[0] == '.' || id[0] == '-')
		return 0;
	for (i = 0; i < n; i++) {
		if (!isalnum((unsigned char)id[i]) && !strchr("_+-.", id[i]))
			return 0;
	}
	return 1;
}

static int ctr_init(struct oci_ctr *c, const char *id)
{
	if (!id_ok(id)) {
		oci_errorf("invalid container id '%s'", id);
		return -1;
	}
	if (strlen(g.root) + strlen(id) + 2 > sizeof c->dir) {
		oci_errorf("--root: path too long");
		return -1;
	}
	memset(c, 0, sizeof *c);
	snprintf(c->dir, sizeof c->dir, "%s/%s", g.root, id);
	snprintf(c->fifo, sizeof c->fifo, "%s/start", c->dir);
	c->id = id;
	return 0;
}

/* The process's start time (field 22 of /proc/PID/stat), and whether it
 * is a zombie: a pid alone may have been reused. */
static unsigned long long proc_start(pid_t pid, int *zombie)
{
	char path[64], buf[1024], *p;
	unsigned long long v = 0;
	ssize_t n;
	int fd, field;

	*zombie = 0;
	snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof buf - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	p = strrchr(buf, ')');
	if (!p || !p[1] || !p[2])
		return 0;
	*zombie = p[2] == 'Z' || p[2] == 'X';
	for (field = 3, p += 2; *p && field < 22; p++) {
		if (*p == ' ')
			field++;
	}
	v = strtoull(p, NULL, 10);
	return v;
}

static json_t *state_load(const struct oci_ctr *c)
{
	char path[4200];
	json_error_t jerr;

	snprintf(path, sizeof path, "%s/state.json", c->dir);
	return json_load_file(path, JSON_REJECT_DUPLICATES, &jerr);
}

static int state_save(const struct oci_ctr *c, json_t *st)
{
	char path[4200], tmp[4200];

	snprintf(path, sizeof path, "%s/state.json", c->dir);
	snprintf(tmp, sizeof tmp, "%s/state.json.tmp", c->dir);
	if (json_dump_file(st, tmp, JSON_COMPACT) < 0 || rename(tmp, path) < 0)
		return -1;
	return 0;
}

/* "created", "running" or "stopped", and the live supervisor's pid. */
static const char *status_of(const struct oci_ctr *c, json_t *st, pid_t *ret_pid)
{
	pid_t pid = (pid_t)json_integer_value(json_object_get(st, "pid"));
	unsigned long long want =
	        (unsigned long long)json_integer_value(json_object_get(st, "pid_start"));
	int zombie = 0;
	struct stat sb;

	*ret_pid = 0;
	if (pid <= 0 || proc_start(pid, &zombie) != want || zombie)
		return "stopped";
	*ret_pid = pid;
	return lstat(c->fifo, &sb) == 0 ? "created" : "running";
}

static int write_pid_file(const char *path, pid_t pid)
{
	char tmp[4200], num[32];
	int fd, n;

	if (snprintf(tmp, sizeof tmp, "%s.cordon-tmp", path) >= (int)sizeof tmp)
		return -ENAMETOOLONG;
	n = snprintf(num, sizeof num, "%d", (int)pid); /* no newline: runc's format */
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0644);
	if (fd < 0)
		return -errno;
	if (write(fd, num, (size_t)n) != n || close(fd) < 0 || rename(tmp, path) < 0) {
		int e = errno;
		unlink(tmp);
		return -e;
	}
	return 0;
}

/* "--name VALUE" or "--name=VALUE" at argv[*i]; advances *i. */
static int opt_val(int argc, char **argv, int *i, const char *name, const char **ret)
{
	size_t n = strlen(name);

	if (strncmp(argv[*i], name, n) != 0)
		return 0;
	if (argv[*i][n] == '=') {
		*ret = argv[*i] + n + 1;
		return 1;
	}
	if (argv[*i][n] != '\0')
		return 0;
	if (*i + 1 >= argc) {
		oci_errorf("%s needs a value", name);
		return -1;
	}
	*ret = argv[++*i];
	return 1;
}

static int read_config(const char *bundle, char **ret, size_t *ret_len)
{
	char path[4200];
	struct stat st;
	ssize_t n;
	size_t got = 0;
	int fd;

	snprintf(path, sizeof path, "%s/config.json", bundle);
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) ||
	    (uint64_t)st.st_size > OCI_CONFIG_MAX) {
		oci_errorf("%s: %s", path,
		           fd < 0 ? cd_strerror(-errno) : "not a regular file of at most 4 MiB");
		if (fd >= 0)
			close(fd);
		return -1;
	}
	*ret = malloc((size_t)st.st_size + 1);
	while (*ret && got < (size_t)st.st_size &&
	       (n = read(fd, *ret + got, (size_t)st.st_size - got)) > 0)
		got += (size_t)n;
	close(fd);
	if (!*ret || got != (size_t)st.st_size) {
		oci_errorf("%s: cannot read it", path);
		return -1;
	}
	(*ret)[got] = '\0';
	*ret_len = got;
	return 0;
}

static void ctr_remove(const struct oci_ctr *c)
{
	char path[4200];

	unlink(c->fifo);
	snprintf(path, sizeof path, "%s/state.json", c->dir);
	unlink(path);
	rmdir(c->dir);
}

/* The supervisor said "ok": state.json and the pid file. */
static int created(const struct oci_ctr *c, const struct cd_oci_spec *spec, pid_t pid,
                   const char *pid_file)
{
	char now[64];
	json_t *st, *ann;
	int zombie, r;

	rfc3339(now, sizeof now);
	ann = json_loads(spec->annotations, 0, NULL);
	st = json_pack("{s:s,s:i,s:I,s:s,s:s,s:s,s:o}", "id", c->id, "pid", (int)pid, "pid_start",
	               (json_int_t)proc_start(pid, &zombie), "bundle", c->bundle, "rootfs",
	               spec->root, "created", now, "annotations", ann ? ann : json_object());
	if (!st || state_save(c, st) < 0) {
		json_decref(st);
		oci_errorf("%s: cannot write the container's state", c->dir);
		return -1;
	}
	json_decref(st);
	if (pid_file && (r = write_pid_file(pid_file, pid)) < 0) {
		oci_errorf("--pid-file %s: %s", pid_file, cd_strerror(r));
		return -1;
	}
	return 0;
}

/* Fork the supervisor and wait for its word: "ok", or why it refused. */
static int spawn_supervisor(struct oci_ctr *c, struct cd_oci_spec *spec, const char *pid_file)
{
	char buf[2048];
	size_t got = 0;
	ssize_t n;
	int rep[2], st, ready;
	pid_t pid;

	if (pipe2(rep, O_CLOEXEC) < 0) {
		oci_errorf("pipe: %s", cd_strerror(-errno));
		return -1;
	}
	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		oci_errorf("fork: %s", cd_strerror(-errno));
		return -1;
	}
	if (pid == 0) {
		close(rep[0]);
		_exit(oci_supervise(c, spec, rep[1]));
	}
	close(rep[1]);
	while (got < sizeof buf - 1 && (n = read(rep[0], buf + got, sizeof buf - 1 - got)) != 0) {
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			break;
		got += (size_t)n;
	}
	close(rep[0]);
	buf[got] = '\0';
	ready = got >= sizeof OCI_READY - 1 &&
	        strcmp(buf + got - (sizeof OCI_READY - 1), OCI_READY) == 0;
	while (got > 0 && (buf[got - 1] == '\n' || buf[got - 1] == '\001'))
		buf[--got] = '\0';
	/* The supervisor's lines carry cordon's prefix; ours is added again. */
	if (strncmp(buf, "cordon oci: ", 12) == 0)
		memmove(buf, buf + 12, strlen(buf + 12) + 1);
	if (ready && created(c, spec, pid, pid_file) == 0)
		return 0;
	if (ready)
		kill(pid, OCI_KILL_SIGNAL);
	else
		oci_errorf("%s", got ? buf : "the container's supervisor failed to start");
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	return -1;
}

static int oci_create(int argc, char **argv)
{
	const char *bundle = ".", *pid_file = NULL, *console = NULL, *id = NULL, *v;
	char bundle_abs[4096], *text = NULL;
	struct cd_oci_spec spec;
	struct cd_err err = { 0, "" };
	struct oci_ctr c;
	size_t len = 0;
	int i, r;

	for (i = 1; i < argc; i++) {
		if ((r = opt_val(argc, argv, &i, "--bundle", &bundle)) ||
		    (r = opt_val(argc, argv, &i, "-b", &bundle)) ||
		    (r = opt_val(argc, argv, &i, "--pid-file", &pid_file)) ||
		    (r = opt_val(argc, argv, &i, "--console-socket", &console)) ||
		    (r = opt_val(argc, argv, &i, "--preserve-fds", &v))) {
			if (r < 0)
				return 1;
		} else if (strcmp(argv[i], "--no-pivot") == 0 ||
		           strcmp(argv[i], "--no-new-keyring") == 0) {
			/* cordon always pivots and never shares a keyring (seccomp
			 * refuses keyctl): accepted, nothing to change. */
		} else if (argv[i][0] == '-') {
			oci_errorf("create: unknown option '%s'", argv[i]);
			return 1;
		} else if (!id) {
			id = argv[i];
		} else {
			oci_errorf("create: one container id, not '%s'", argv[i]);
			return 1;
		}
	}
	if (!id) {
		oci_errorf("create: no container id");
		return 1;
	}
	if (ctr_init(&c, id) < 0)
		return 1;
	if (!realpath(bundle, bundle_abs)) {
		oci_errorf("--bundle %s: %s", bundle, cd_strerror(-errno));
		return 1;
	}
	c.bundle = bundle_abs;
	if (read_config(bundle_abs, &text, &len) < 0)
		return 1;
	oci_env_defaults();
	r = cd_oci_spec_parse(text, len, bundle_abs, &spec, &err);
	free(text);
	if (r == 0 && ((r = oci_check_root(&spec, bundle_abs, &err)) < 0 ||
	               (r = oci_check_cgroup(&spec, &err)) < 0))
		cd_oci_spec_free(&spec);
	if (r < 0) {
		oci_errorf("%s", err.msg);
		oci_record_refusal(&c, NULL, err.msg);
		return 1;
	}
	c.console = console; /* the supervisor sends the terminal over it */
	if (spec.terminal && !console) {
		snprintf(err.msg, sizeof err.msg,
		         "process.terminal is set but no --console-socket was given");
		oci_errorf("%s", err.msg);
		oci_record_refusal(&c, NULL, err.msg);
		cd_oci_spec_free(&spec);
		return 1;
	}
	if (cd_mkdir_parents(c.dir, &err) < 0 || mkdir(c.dir, 0700) < 0) {
		if (errno == EEXIST)
			oci_errorf("container with id %s exists already", id);
		else
			oci_errorf("%s: %s", c.dir, cd_strerror(-errno));
		cd_oci_spec_free(&spec);
		return 1;
	}
	if (mkfifo(c.fifo, 0600) < 0) {
		oci_errorf("%s: %s", c.fifo, cd_strerror(-errno));
		r = -1;
	} else {
		r = spawn_supervisor(&c, &spec, pid_file);
	}
	if (r < 0)
		ctr_remove(&c);
	cd_oci_spec_free(&spec);
	return r < 0 ? 1 : 0;
}

/* The container named by the only positional argument, and its state. */
static json_t *ctr_open(struct oci_ctr *c, const char *id, int quiet)
{
	json_t *st;

	if (!id) {
		oci_errorf("no container id");
		return NULL;
	}
	if (ctr_init(c, id) < 0)
		return NULL;
	st = state_load(c);
	if (!st && !quiet)
		oci_errorf("container %s does not exist", id);
	if (st)
		c->bundle = json_string_value(json_object_get(st, "bundle"));
	return st;
}

static int oci_start(int argc, char **argv)
{
	struct oci_ctr c;
	json_t *st = ctr_open(&c, argc == 2 ? argv[1] : NULL, 0);
	struct stat sb;
	pid_t pid;
	int fd, i;

	if (!st)
		return 1;
	if (strcmp(status_of(&c, st, &pid), "created") != 0) {
		oci_errorf("cannot start a container that is %s", status_of(&c, st, &pid));
		json_decref(st);
		return 1;
	}
	json_decref(st);
	fd = open(c.fifo, O_WRONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0 || write(fd, "s", 1) != 1) {
		oci_errorf("container %s: its supervisor is not waiting: %s", c.id,
		           cd_strerror(-errno));
		if (fd >= 0)
			close(fd);
		return 1;
	}
	close(fd);
	/* Until the supervisor has taken the word, `state` would still say
	 * created: wait for it (a few ms), at most 10 s. */
	for (i = 0; i < 1000 && lstat(c.fifo, &sb) == 0; i++)
		poll(NULL, 0, 10);
	return 0;
}

static int oci_state(int argc, char **argv)
{
	struct oci_ctr c;
	json_t *st = ctr_open(&c, argc == 2 ? argv[1] : NULL, 0), *out;
	const char *status;
	char *s;
	pid_t pid;

	if (!st)
		return 1;
	status = status_of(&c, st, &pid);
	out = json_pack("{s:s,s:s,s:i,s:s,s:O,s:O,s:O,s:s,s:O}", "ociVersion", OCI_VERSION, "id",
	                c.id, "pid", (int)pid, "status", status, "bundle",
	                json_object_get(st, "bundle"), "rootfs", json_object_get(st, "rootfs"),
	                "created", json_object_get(st, "created"), "owner", "", "annotations",
	                json_object_get(st, "annotations"));
	s = out ? json_dumps(out, JSON_INDENT(2)) : NULL;
	json_decref(out);
	json_decref(st);
	if (!s) {
		oci_errorf("state: out of memory");
		return 1;
	}
	printf("%s\n", s);
	free(s);
	return 0;
}

static int parse_signal(const char *s)
{
	static const struct {
		const char *name;
		int sig;
	} names[] = { { "HUP", SIGHUP },     { "INT", SIGINT },   { "QUIT", SIGQUIT },
		      { "KILL", SIGKILL },   { "TERM", SIGTERM }, { "USR1", SIGUSR1 },
		      { "USR2", SIGUSR2 },   { "STOP", SIGSTOP }, { "CONT", SIGCONT },
		      { "WINCH", SIGWINCH }, { "ALRM", SIGALRM }, { "PIPE", SIGPIPE } };
	char *end;
	long v;
	size_t i;

	if (isdigit((unsigned char)s[0])) {
		v = strtol(s, &end, 10);
		return (*end || v < 1 || v > 64) ? -1 : (int)v;
	}
	if (strncmp(s, "SIG", 3) == 0)
		s += 3;
	for (i = 0; i < sizeof names / sizeof names[0]; i++) {
		if (strcmp(s, names[i].name) == 0)
			return names[i].sig;
	}
	return -1;
}

/* Signal the live supervisor (pid checked against its start time); KILL
 * becomes OCI_KILL_SIGNAL so the result is still recorded. */
static int signal_ctr(const struct oci_ctr *c, json_t *st, int sig)
{
	unsigned long long want;
	pid_t pid;
	int pfd, zombie, r;

	if (strcmp(status_of(c, st, &pid), "stopped") == 0) {
		oci_errorf("container %s is not running", c->id);
		return -1;
	}
	pfd = (int)syscall(SYS_pidfd_open, pid, 0);
	want = (unsigned long long)json_integer_value(json_object_get(st, "pid_start"));
	if (pfd < 0 || proc_start(pid, &zombie) != want || zombie) {
		if (pfd >= 0)
			close(pfd);
		oci_errorf("container %s is not running", c->id);
		return -1;
	}
	r = (int)syscall(SYS_pidfd_send_signal, pfd, sig == SIGKILL ? OCI_KILL_SIGNAL : sig, NULL,
	                 0);
	close(pfd);
	if (r < 0) {
		oci_errorf("kill %s: %s", c->id, cd_strerror(-errno));
		return -1;
	}
	return 0;
}

static int oci_kill(int argc, char **argv)
{
	const char *id = NULL, *sigs = "SIGTERM";
	struct oci_ctr c;
	json_t *st;
	int i, n = 0, sig, r;

	for (i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--all") == 0 || strcmp(argv[i], "-a") == 0)
			continue; /* the pid namespace dies with its init: all, always */
		if (n == 0)
			id = argv[i];
		else if (n == 1)
			sigs = argv[i];
		n++;
	}
	sig = parse_signal(sigs);
	if (n > 2 || sig < 0) {
		oci_errorf("kill: usage: kill [--all] ID [SIGNAL] (a name or a number)");
		return 1;
	}
	/* Only what the supervisor forwards (or turns into a kill that is
	 * still recorded): any other signal would hit the supervisor itself. */
	if (sig != SIGKILL && sig != SIGTERM && sig != SIGINT && sig != SIGHUP && sig != SIGQUIT &&
	    sig != SIGUSR1 && sig != SIGUSR2) {
		oci_errorf(
		        "kill: signal %s: cordon-oci passes KILL, TERM, INT, HUP, QUIT, USR1 and "
		        "USR2 only",
		        sigs);
		return 1;
	}
	st = ctr_open(&c, id, 0);
	if (!st)
		return 1;
	r = signal_ctr(&c, st, sig);
	json_decref(st);
	return r < 0 ? 1 : 0;
}

static int oci_delete(int argc, char **argv)
{
	const char *id = NULL;
	struct oci_ctr c;
	json_t *st;
	pid_t pid;
	int i, force = 0;

	for (i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--force") == 0 || strcmp(argv[i], "-f") == 0)
			force = 1;
		else
			id = argv[i];
	}
	st = ctr_open(&c, id, force);
	if (!st)
		return force && id && id_ok(id) ? 0 : 1;
	if (strcmp(status_of(&c, st, &pid), "stopped") != 0) {
		if (!force) {
			oci_errorf("cannot delete container %s that is not stopped (use --force)",
			           c.id);
			json_decref(st);
			return 1;
		}
		signal_ctr(&c, st, SIGKILL);
		for (i = 0; i < 1000 && strcmp(status_of(&c, st, &pid), "stopped") != 0; i++)
			poll(NULL, 0, 10);
		if (pid > 0 && strcmp(status_of(&c, st, &pid), "stopped") != 0)
			kill(pid, SIGKILL);
	}
	json_decref(st);
	ctr_remove(&c);
	return 0;
}

/* `exec` (ctr task exec, kubectl exec): refused, on record.  A second
 * process would have to enter the container's namespaces and take every
 * wall its init took (seccomp, Landlock, no capabilities, no_new_privs,
 * limits, cgroup) from outside the sandbox; cordon builds them only once,
 * in the sandbox's own child.  Until that is built, nothing enters. */
static int oci_exec(int argc, char **argv)
{
	static const char *const with_value[] = { "--process",
		                                  "-p",
		                                  "--pid-file",
		                                  "--console-socket",
		                                  "--cwd",
		                                  "--env",
		                                  "-e",
		                                  "--user",
		                                  "-u",
		                                  "--cap",
		                                  "-c",
		                                  "--apparmor",
		                                  "--process-label",
		                                  "--preserve-fds",
		                                  "--cgroup",
		                                  "--additional-gids",
		                                  "-g" };
	const char *id = NULL, *process = NULL, *v;
	json_t *st, *proc = NULL, *args = NULL;
	struct oci_ctr c;
	char msg[512];
	size_t k;
	int i, r;

	for (i = 1; i < argc && !id; i++) {
		if ((r = opt_val(argc, argv, &i, "--process", &process)) ||
		    (r = opt_val(argc, argv, &i, "-p", &process))) {
			if (r < 0)
				return 1;
			continue;
		}
		for (k = 0; k < sizeof with_value / sizeof with_value[0]; k++) {
			if ((r = opt_val(argc, argv, &i, with_value[k], &v)) != 0)
				break;
		}
		if (r < 0)
			return 1;
		if (k == sizeof with_value / sizeof with_value[0] && argv[i][0] != '-')
			id = argv[i];
	}
	if (!id) {
		oci_errorf("exec: no container id");
		return 1;
	}
	st = ctr_open(&c, id, 1); /* refused either way; on record when it exists */
	if (process)
		proc = json_load_file(process, JSON_REJECT_DUPLICATES, NULL);
	args = json_object_get(proc, "args");
	snprintf(msg, sizeof msg,
	         "exec: cordon-oci refuses a second process in container %s: its walls (seccomp, "
	         "Landlock, no capabilities, limits) are set once, for the container's own "
	         "process",
	         id);
	oci_errorf("%s", msg);
	if (st)
		oci_record_denial(&c, NULL, "exec", "exec", json_is_array(args) ? args : NULL, msg);
	json_decref(proc);
	json_decref(st);
	return 1;
}

static int oci_features(void)
{
	fputs("{\n"
	      "  \"ociVersionMin\": \"1.0.0\",\n"
	      "  \"ociVersionMax\": \"" OCI_VERSION "\",\n"
	      "  \"hooks\": [],\n"
	      "  \"mountOptions\": [\"bind\", \"rbind\", \"ro\", \"rw\"],\n"
	      "  \"linux\": {\n"
	      "    \"namespaces\": [\"pid\", \"network\", \"ipc\", \"uts\", \"mount\", \"cgroup\", "
	      "\"user\"],\n"
	      "    \"capabilities\": [],\n"
	      "    \"cgroup\": {\"v1\": true, \"v2\": true, \"systemd\": false},\n"
	      "    \"seccomp\": {\"enabled\": true},\n"
	      "    \"apparmor\": {\"enabled\": false},\n"
	      "    \"selinux\": {\"enabled\": false}\n"
	      "  },\n"
	      "  \"annotations\": {\n"
	      "    \"org.cordon.walls\": \"userns mountns pidns netns ipcns utsns cgroupns "
	      "no_new_privs no-capabilities seccomp landlock\"\n"
	      "  }\n"
	      "}\n",
	      stdout);
	return 0;
}

static void oci_usage(FILE *f)
{
	fputs("usage: cordon-oci [--root DIR] [--log FILE] [--log-format text|json] COMMAND\n"
	      "\n"
	      "cordon as an OCI runtime with runc's command line, for containerd's runc shim\n"
	      "(io.containerd.runc.v2 with BinaryName).  Every container runs under cordon's\n"
	      "walls and is a decided and recorded run in the audit log; see cordon(1), OCI\n"
	      "RUNTIME.\n"
	      "\n"
	      "Commands:\n"
	      "  create [--bundle DIR] [--pid-file FILE] ID   check config.json, decide, plan\n"
	      "  start ID                                     start the created container\n"
	      "  state ID                                     its state as JSON\n"
	      "  kill [--all] ID [SIGNAL]                     signal it (default SIGTERM)\n"
	      "  delete [--force] ID                          remove a stopped container\n"
	      "  features                                     what this runtime supports\n"
	      "  exec ID ...                                  refused (and recorded): nothing\n"
	      "                                               enters a container\n",
	      f);
}

int cmd_oci(int argc, char **argv)
{
	static const char *const refused[] = { "ps",     "pause",      "resume",  "update",
		                               "events", "checkpoint", "restore", "run",
		                               "spec",   "list" };
	const char *fmt = "text", *v;
	size_t k;
	int i, r;

	for (i = 1; i < argc && argv[i][0] == '-'; i++) {
		if ((r = opt_val(argc, argv, &i, "--root", &g.root)) ||
		    (r = opt_val(argc, argv, &i, "--log", &g.log)) ||
		    (r = opt_val(argc, argv, &i, "--log-format", &fmt)) ||
		    (r = opt_val(argc, argv, &i, "--criu", &v)) ||
		    (r = opt_val(argc, argv, &i, "--rootless", &v))) {
			if (r < 0)
				return 1;
		} else if (strcmp(argv[i], "--systemd-cgroup") == 0 ||
		           strcmp(argv[i], "--debug") == 0) {
			/* cordon makes the spec's cgroupsPath (cgroupfs form) or a
			 * cgroup of its own; the systemd form is recorded only. */
		} else if (strcmp(argv[i], "--version") == 0 || strcmp(argv[i], "-v") == 0) {
			printf("cordon-oci version %s\nspec: %s\n", CORDON_VERSION, OCI_VERSION);
			return 0;
		} else if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
			oci_usage(stdout);
			return 0;
		} else {
			oci_errorf("unknown global option '%s'", argv[i]);
			return 1;
		}
	}
	g.log_json = strcmp(fmt, "json") == 0;
	if (i >= argc) {
		oci_usage(stderr);
		return 1;
	}
	argc -= i;
	argv += i;
	if (strcmp(argv[0], "create") == 0)
		return oci_create(argc, argv);
	if (strcmp(argv[0], "start") == 0)
		return oci_start(argc, argv);
	if (strcmp(argv[0], "state") == 0)
		return oci_state(argc, argv);
	if (strcmp(argv[0], "kill") == 0)
		return oci_kill(argc, argv);
	if (strcmp(argv[0], "delete") == 0)
		return oci_delete(argc, argv);
	if (strcmp(argv[0], "features") == 0)
		return oci_features();
	if (strcmp(argv[0], "exec") == 0)
		return oci_exec(argc, argv);
	for (k = 0; k < sizeof refused / sizeof refused[0]; k++) {
		if (strcmp(argv[0], refused[k]) == 0) {
			oci_errorf("%s: not supported by cordon's OCI runtime (a container is one "
			           "decided run: nothing enters it, pauses or changes it)",
			           argv[0]);
			return 1;
		}
	}
	oci_errorf("unknown command '%s'", argv[0]);
	return 1;
}
