/* cli-warm.c — the client side of the warm path (cli-warm.h): where the
 * service's socket is, the framing, the records as JSON, and `cordon
 * run`'s log through the service, with the cold path (the log opened by
 * the run itself) whenever the service is absent, stale, another user's
 * or answers wrongly.
 *
 * Trust boundary: see cli-warm.h.  Replies are length-capped and checked
 * field by field; a reply that is not exactly what was asked for is a
 * failure of the warm path, never of the run. */
#include "cli.h"
#include "cli-warm.h"

#include "util/bounds.h"
#include "util/fs.h"
#include "util/util.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

int cli_warm_enabled(void)
{
	const char *v = getenv("CORDON_WARM");
	return !(v && strcmp(v, "0") == 0);
}

int cli_warm_dir(char *out, size_t outlen)
{
	const char *d = getenv("CORDON_SERVICE_DIR"), *base, *sub = "/cordon";
	int n;

	if (d && *d == '/') {
		/* tests: one directory per uid under the one named */
		n = snprintf(out, outlen, "%s/%lu", d, (unsigned long)geteuid());
		return n < 0 || (size_t)n >= outlen ? -ENAMETOOLONG : 0;
	} else if ((base = getenv("XDG_RUNTIME_DIR")) && *base == '/') {
	} else if ((base = getenv("XDG_STATE_HOME")) && *base == '/') {
	} else if ((base = getenv("HOME")) && *base == '/') {
		sub = "/.local/state/cordon";
	} else {
		return -ENOENT;
	}
	n = snprintf(out, outlen, "%s%s", base, sub);
	return n < 0 || (size_t)n >= outlen ? -ENAMETOOLONG : 0;
}

int cli_warm_sock(char *out, size_t outlen)
{
	char dir[CD_PATH_MAX];
	int n, r = cli_warm_dir(dir, sizeof dir);

	if (r < 0)
		return r;
	n = snprintf(out, outlen, "%s/service.sock", dir);
	/* sun_path holds 108 bytes */
	return n < 0 || (size_t)n >= outlen || n >= 108 ? -ENAMETOOLONG : 0;
}

int cli_warm_dir_check(const char *dir, int create)
{
	struct stat st;

	if (create && mkdir(dir, 0700) < 0 && errno != EEXIST) {
		if (errno != ENOENT || cd_mkdir_parents(dir, NULL) < 0 ||
		    (mkdir(dir, 0700) < 0 && errno != EEXIST))
			return -errno;
	}
	if (lstat(dir, &st) < 0)
		return -errno;
	if (!S_ISDIR(st.st_mode) || st.st_uid != geteuid() || (st.st_mode & 077))
		return -EPERM;
	return 0;
}

/* Every directory the service may listen in, from this environment: it
 * is one of cordon's private paths in every sandbox (the plan masks the
 * directory with a tmpfs where a bind would show it, and refuses a
 * writable bind of it).  The one this environment's service uses is
 * made now, so that it is masked even before a service first starts.
 * Given as the socket in each directory, as the plan takes files. */
size_t cli_warm_private(char (*buf)[CD_PATH_MAX], char **v, size_t max)
{
	const char *env[] = { getenv("XDG_RUNTIME_DIR"), getenv("XDG_STATE_HOME"), getenv("HOME") };
	const char *sub[] = { "/cordon", "/cordon", "/.local/state/cordon" };
	const char *d = getenv("CORDON_SERVICE_DIR");
	char dir[CD_PATH_MAX];
	size_t i, n = 0;
	int k;

	if (cli_warm_dir(dir, sizeof dir) == 0)
		(void)cli_warm_dir_check(dir, 1);
	if (d && *d == '/' && n < max &&
	    (k = snprintf(buf[n], CD_PATH_MAX, "%s/%lu/service.sock", d,
	                  (unsigned long)geteuid())) > 0 &&
	    k < CD_PATH_MAX) {
		v[n] = buf[n];
		n++;
	}
	for (i = 0; i < sizeof env / sizeof env[0]; i++) {
		if (!env[i] || *env[i] != '/' || n >= max)
			continue;
		k = snprintf(buf[n], CD_PATH_MAX, "%s%s/service.sock", env[i], sub[i]);
		if (k > 0 && k < CD_PATH_MAX) {
			v[n] = buf[n];
			n++;
		}
	}
	return n;
}

long cli_warm_peer_uid(int fd)
{
	struct ucred uc;
	socklen_t len = sizeof uc;

	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &uc, &len) < 0 || len != sizeof uc)
		return -1;
	return (long)uc.uid;
}

/* send() with MSG_NOSIGNAL: a service that died never kills the run
 * with SIGPIPE (the run goes cold instead). */
static int send_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;

	while (len) {
		ssize_t n = send(fd, p, len, MSG_NOSIGNAL);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -errno : -EPIPE;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

int cli_warm_send(int fd, json_t *msg)
{
	char *s = json_dumps(msg, JSON_COMPACT);
	size_t n;
	unsigned char hdr[4];
	int r;

	if (!s)
		return -ENOMEM;
	n = strlen(s);
	if (n > CLI_WARM_FRAME_MAX) {
		free(s);
		return -E2BIG;
	}
	hdr[0] = (unsigned char)n;
	hdr[1] = (unsigned char)(n >> 8);
	hdr[2] = (unsigned char)(n >> 16);
	hdr[3] = (unsigned char)(n >> 24);
	r = send_all(fd, hdr, 4);
	if (r == 0)
		r = send_all(fd, s, n);
	free(s);
	return r;
}

static int read_exact(int fd, void *buf, size_t len)
{
	char *p = buf;

	while (len) {
		ssize_t n = read(fd, p, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -errno : -EPIPE;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

int cli_warm_recv(int fd, json_t **ret)
{
	unsigned char hdr[4];
	size_t n;
	char *s;
	json_t *o;
	int r = read_exact(fd, hdr, 4);

	if (r < 0)
		return r;
	n = (size_t)hdr[0] | (size_t)hdr[1] << 8 | (size_t)hdr[2] << 16 | (size_t)hdr[3] << 24;
	if (n == 0 || n > CLI_WARM_FRAME_MAX)
		return -CD_E_PARSE;
	s = malloc(n);
	if (!s)
		return -ENOMEM;
	r = read_exact(fd, s, n);
	o = r == 0 ? json_loadb(s, n, JSON_REJECT_DUPLICATES, NULL) : NULL;
	free(s);
	if (r < 0)
		return r;
	if (!json_is_object(o)) {
		json_decref(o);
		return -CD_E_PARSE;
	}
	*ret = o;
	return 0;
}

/* ---- records as JSON -------------------------------------------- */

#define REC_STR(f)                                                                                 \
	{                                                                                          \
#f, offsetof(struct cd_record, f)                                                  \
	}
static const struct {
	const char *name;
	size_t off;
} rec_fields[] = {
	REC_STR(kind),         REC_STR(run_id),        REC_STR(agent),
	REC_STR(task),         REC_STR(tool),          REC_STR(action),
	REC_STR(target),       REC_STR(decision),      REC_STR(grant_ids),
	REC_STR(reason),       REC_STR(argv_sha256),   REC_STR(code_sha256),
	REC_STR(stdin_sha256), REC_STR(stdout_sha256), REC_STR(stderr_sha256),
	REC_STR(details_json),
};

json_t *cli_warm_record_json(const struct cd_record *r)
{
	json_t *o = json_object();
	size_t i;

	if (!o)
		return NULL;
	for (i = 0; i < sizeof rec_fields / sizeof rec_fields[0]; i++) {
		const char *v = *(const char *const *)((const char *)r + rec_fields[i].off);
		if (v && json_object_set_new(o, rec_fields[i].name, json_string(v)) < 0)
			goto fail;
	}
	if (r->has_exit && json_object_set_new(o, "exit_code", json_integer(r->exit_code)) < 0)
		goto fail;
	if (r->has_duration &&
	    (r->duration_ms > INT64_MAX ||
	     json_object_set_new(o, "duration_ms", json_integer((json_int_t)r->duration_ms)) < 0))
		goto fail;
	return o;
fail:
	json_decref(o);
	return NULL;
}

int cli_warm_record_from(json_t *o, struct cd_record *r)
{
	const char *k;
	json_t *v;

	memset(r, 0, sizeof *r);
	if (!json_is_object(o))
		return -CD_E_PARSE;
	json_object_foreach(o, k, v)
	{
		size_t i;
		if (strcmp(k, "exit_code") == 0 && json_is_integer(v)) {
			r->has_exit = 1;
			r->exit_code = json_integer_value(v);
			continue;
		}
		if (strcmp(k, "duration_ms") == 0 && json_is_integer(v) &&
		    json_integer_value(v) >= 0) {
			r->has_duration = 1;
			r->duration_ms = (uint64_t)json_integer_value(v);
			continue;
		}
		for (i = 0; i < sizeof rec_fields / sizeof rec_fields[0]; i++)
			if (strcmp(k, rec_fields[i].name) == 0)
				break;
		/* a text field holds no NUL: a string with one is refused */
		if (i == sizeof rec_fields / sizeof rec_fields[0] || !json_is_string(v) ||
		    strlen(json_string_value(v)) != json_string_length(v))
			return -CD_E_PARSE;
		*(const char **)((char *)r + rec_fields[i].off) = json_string_value(v);
	}
	return r->kind ? 0 : -CD_E_PARSE;
}

/* ---- `cordon run`'s log through the service ----------------------- */

/* What a remote log carries: the connection, and what the cold path
 * needs to take over (the log's path and options) when the service
 * fails mid-run. */
struct warm {
	int fd;
	char db[CD_PATH_MAX], key[CD_PATH_MAX], cp[CD_PATH_MAX];
	struct cd_audit_opts o;
	struct cd_audit *cold; /* opened after the service failed */
	json_t *open;          /* the log to open, sent with the first append */
};

static int used_cold; /* a record of this process went the cold way */

const char *cli_warm_path(void)
{
	return used_cold ? "cold" : "warm";
}

/* Start `cordon service` detached (its own session, stdio on /dev/null,
 * no descriptor of ours) for the runs to come; this run goes on cold. */
static void start_service(void)
{
	pid_t pid = fork();

	if (pid < 0)
		return;
	if (pid == 0) {
		static const char *const keep[] = { "HOME", "XDG_RUNTIME_DIR", "XDG_STATE_HOME",
			                            "CORDON_SERVICE_DIR", "CORDON_SERVICE_IDLE" };
		char *argv[] = { "cordon", "service", NULL }, *envp[6];
		size_t i, k = 0;
		int nul;
		if (setsid() < 0 || fork() != 0)
			_exit(0);
		/* Only what finds its directory: no secret of the run's
		 * environment lives on in the service. */
		for (i = 0; i < sizeof keep / sizeof keep[0]; i++) {
			const char *v = getenv(keep[i]);
			size_t a = strlen(keep[i]), b = v ? strlen(v) : 0;
			if (v && (envp[k] = malloc(a + b + 2))) {
				memcpy(envp[k], keep[i], a);
				envp[k][a] = '=';
				memcpy(envp[k] + a + 1, v, b + 1);
				k++;
			}
		}
		envp[k] = NULL;
		nul = open("/dev/null", O_RDWR | O_CLOEXEC);
		if (nul < 0 || dup2(nul, 0) < 0 || dup2(nul, 1) < 0 || dup2(nul, 2) < 0)
			_exit(1);
		closefrom(3);
		signal(SIGPIPE, SIG_DFL);
		execve("/proc/self/exe", argv, envp);
		_exit(127);
	}
	while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
		;
}

static int connect_service(void)
{
	char dir[CD_PATH_MAX];
	struct sockaddr_un sa;
	struct timeval tv = { CLI_WARM_TIMEOUT_S, 0 };
	int fd;

	if (cli_warm_dir(dir, sizeof dir) < 0 || cli_warm_dir_check(dir, 0) < 0)
		return -ENOENT;
	memset(&sa, 0, sizeof sa);
	sa.sun_family = AF_UNIX;
	if (cli_warm_sock(sa.sun_path, sizeof sa.sun_path) < 0)
		return -ENAMETOOLONG;
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (connect(fd, (struct sockaddr *)&sa, sizeof sa) < 0) {
		int r = -errno;
		close(fd);
		return r;
	}
	/* Another user's socket (or a planted one): never talked to. */
	if (cli_warm_peer_uid(fd) != (long)geteuid() ||
	    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv) < 0 ||
	    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv) < 0) {
		close(fd);
		return -EPERM;
	}
	return fd;
}

/* One request and its reply; the reply must say ok. */
static int ask(int fd, json_t *req, json_t **ret)
{
	json_t *rep = NULL;
	int r;

	if (!req)
		return -ENOMEM;
	r = cli_warm_send(fd, req);
	json_decref(req);
	if (r == 0)
		r = cli_warm_recv(fd, &rep);
	if (r < 0)
		return r;
	if (json_object_get(rep, "ok") != json_true()) {
		json_decref(rep);
		return -EPROTO;
	}
	*ret = rep;
	return 0;
}

/* A run's first append, which carries its open.  A service started by
 * an older cordon (still running after an upgrade, until it idles out)
 * knows only a separate open: it says "append before open" (and then,
 * always, "unknown request" too, read here), and the open is then sent
 * on its own, then the append again. */
static int ask_opening(int fd, json_t *req, json_t **ret)
{
	json_t *o = json_incref(json_object_get(req, "open")), *rep = NULL;
	const char *why;
	int r;

	if (!o)
		return ask(fd, req, ret);
	r = cli_warm_send(fd, req);
	if (r == 0)
		r = cli_warm_recv(fd, &rep);
	if (r == 0 && json_object_get(rep, "ok") == json_true()) {
		*ret = rep;
		goto out;
	}
	why = json_string_value(json_object_get(rep, "error"));
	r = -EPROTO;
	if (!why || strcmp(why, "append before open") != 0 ||
	    json_object_set_new(o, "op", json_string("open")) < 0 ||
	    json_object_del(req, "open") < 0)
		goto out;
	json_decref(rep);
	rep = NULL;
	if (cli_warm_recv(fd, &rep) < 0 || !json_is_string(json_object_get(rep, "error")) ||
	    strcmp(json_string_value(json_object_get(rep, "error")), "unknown request") != 0)
		goto out;
	json_decref(rep);
	rep = NULL;
	r = ask(fd, json_incref(o), &rep);
	if (r == 0)
		r = ask(fd, json_incref(req), ret);
out:
	json_decref(o);
	json_decref(req);
	if (rep && r < 0)
		json_decref(rep);
	else if (rep && *ret != rep)
		json_decref(rep);
	return r;
}

static int cold_append(struct warm *w, const struct cd_record *r, size_t n, int lazy,
                       uint64_t *ret_last, struct cd_err *err)
{
	int rc;

	used_cold = 1;
	if (!w->cold && (rc = cd_audit_open(w->db, &w->o, &w->cold, err)) < 0)
		return rc;
	if (n == 1 && lazy)
		return cd_audit_append_lazy(w->cold, r, err);
	return cd_audit_append_many(w->cold, r, n, ret_last, err);
}

static int warm_append(void *ctx, const struct cd_record *r, size_t n, int lazy, uint64_t *ret_last,
                       struct cd_err *err)
{
	struct warm *w = ctx;
	json_t *req, *recs, *rep = NULL, *last;
	size_t i;

	if (w->fd < 0 || (lazy && n != 1))
		return cold_append(w, r, n, lazy, ret_last, err);
	req = json_pack("{s:s, s:b, s:[]}", "op", "append", "lazy", lazy, "recs");
	recs = json_object_get(req, "recs");
	/* The open rides with the first append (the run's intent): no
	 * round trip of its own before the sandbox is built. */
	if (req && w->open && json_object_set_new(req, "open", w->open) < 0)
		recs = NULL;
	w->open = NULL;
	for (i = 0; recs && i < n; i++)
		if (json_array_append_new(recs, cli_warm_record_json(&r[i])) < 0)
			recs = NULL;
	if (!recs) {
		json_decref(req);
		return cd_err_set(err, -ENOMEM, "out of memory");
	}
	if (ask_opening(w->fd, req, &rep) == 0 &&
	    json_is_integer(last = json_object_get(rep, "last")) && json_integer_value(last) > 0) {
		if (ret_last)
			*ret_last = (uint64_t)json_integer_value(last);
		json_decref(rep);
		return 0;
	}
	json_decref(rep);
	/* The service failed: the records may or may not be in the log (a
	 * crash between its commit and its answer); appending them again
	 * may write them twice, never lose them.  From here on, cold. */
	close(w->fd);
	w->fd = -1;
	return cold_append(w, r, n, lazy, ret_last, err);
}

static void warm_close(void *ctx)
{
	struct warm *w = ctx;

	if (w->fd >= 0)
		close(w->fd);
	json_decref(w->open);
	cd_audit_close(w->cold);
	free(w);
}

static int copy_path(char *dst, const char *src)
{
	size_t n = src ? strlen(src) : 0;

	if (n >= CD_PATH_MAX)
		return -ENAMETOOLONG;
	memcpy(dst, src ? src : "", n + 1);
	return 0;
}

static int is_own_file(const char *path)
{
	struct stat st;

	return path[0] == '/' && lstat(path, &st) == 0 && S_ISREG(st.st_mode) &&
	       st.st_uid == geteuid();
}

int cli_warm_audit_open(const char *db, const struct cd_audit_opts *o, struct cd_audit **ret)
{
	struct cd_audit_remote rm;
	struct warm *w;
	int fd, fresh;

	used_cold = 1;
	if (!cli_warm_enabled() || o->read_only)
		return 1;
	/* The service creates nothing: a new log (or a key's first
	 * checkpoint file) is made by this run, cold. */
	fresh = !is_own_file(db) ||
	        (o->key_path && (!is_own_file(o->key_path) ||
	                         (o->checkpoint_out && !is_own_file(o->checkpoint_out))));
	fd = connect_service();
	if (fd == -ENOENT || fd == -ECONNREFUSED)
		start_service();
	if (fd >= 0 && fresh)
		close(fd);
	if (fd < 0 || fresh)
		return 1;
	w = calloc(1, sizeof *w);
	if (!w || copy_path(w->db, db) < 0 || copy_path(w->key, o->key_path) < 0 ||
	    copy_path(w->cp, o->checkpoint_out) < 0)
		goto cold;
	w->fd = fd;
	w->o = *o;
	w->o.key_path = o->key_path ? w->key : NULL;
	/* no key, no checkpoints: the file is not named to the service */
	w->o.checkpoint_out = o->checkpoint_out && o->key_path ? w->cp : NULL;
	/* Nothing is asked yet: the service opens the log with the first
	 * append, and a refusal then sends that append (and the rest) cold. */
	w->open = json_pack("{s:s, s:s?, s:s?, s:I, s:I}", "audit", db, "key", o->key_path, "cp",
	                    w->o.checkpoint_out, "every", (json_int_t)o->checkpoint_every, "secs",
	                    (json_int_t)o->checkpoint_secs);
	rm.append = warm_append;
	rm.close = warm_close;
	rm.ctx = w;
	if (!w->open || cd_audit_open_remote(db, NULL, &rm, ret, NULL) < 0)
		goto cold;
	used_cold = 0;
	return 0;
cold:
	if (w)
		json_decref(w->open);
	free(w);
	close(fd);
	return 1;
}
