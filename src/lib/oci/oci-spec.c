/* oci-spec.c — config.json read strictly and checked (see oci-spec.h).
 *
 * Every field cordon reads is type-checked; a field of the wrong type
 * refuses the container, as does anything that would ask cordon for more
 * than it gives every sandbox.  Fields cordon does not apply are named in
 * oci-spec.h; unknown fields are allowed (the spec allows extensions).
 */
#include "oci-int.h"

#include "util/bounds.h"
#include "util/path.h"

#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* containerd's default capability set: asked for by every ordinary
 * container and dropped here.  Anything beyond it is a privileged
 * container, refused. */
static const char *const default_caps[] = {
	"CAP_CHOWN",   "CAP_DAC_OVERRIDE", "CAP_FSETID",           "CAP_FOWNER",
	"CAP_MKNOD",   "CAP_NET_RAW",      "CAP_SETGID",           "CAP_SETUID",
	"CAP_SETFCAP", "CAP_SETPCAP",      "CAP_NET_BIND_SERVICE", "CAP_SYS_CHROOT",
	"CAP_KILL",    "CAP_AUDIT_WRITE",
};

/* The devices every container has, which cordon's /dev provides. */
static const char *const default_devices[] = {
	"/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom", "/dev/tty",
};

/* The namespaces cordon makes for every sandbox: a spec without one of
 * them asks to share the host's. */
static const char *const needed_ns[] = { "pid", "network", "ipc", "uts", "mount" };

static int bad(struct cd_err *err, const char *field, const char *want)
{
	return cd_err_set(err, -CD_E_PARSE, "config.json: %s must be %s", field, want);
}

static int in_list(const char *s, const char *const *list, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		if (strcmp(s, list[i]) == 0)
			return 1;
	}
	return 0;
}

/* An optional string member: NULL when absent, -CD_E_PARSE when not a
 * string or holding a NUL. */
static int opt_str(json_t *o, const char *key, const char *field, char **ret, struct cd_err *err)
{
	json_t *v = json_object_get(o, key);

	*ret = NULL;
	if (!v)
		return 0;
	if (!json_is_string(v) || strlen(json_string_value(v)) != json_string_length(v))
		return bad(err, field, "a string without NUL bytes");
	*ret = strdup(json_string_value(v));
	return *ret ? 0 : cd_err_set(err, -ENOMEM, "out of memory");
}

/* A member that must be an object when present. */
static int opt_obj(json_t *o, const char *key, const char *field, json_t **ret, struct cd_err *err)
{
	*ret = json_object_get(o, key);
	if (*ret && !json_is_object(*ret))
		return bad(err, field, "an object");
	return 0;
}

static int opt_u64(json_t *o, const char *key, const char *field, uint64_t *ret, struct cd_err *err)
{
	json_t *v = json_object_get(o, key);

	if (!v)
		return 0;
	if (!json_is_integer(v) || json_integer_value(v) < 0)
		return bad(err, field, "a non-negative integer");
	*ret = (uint64_t)json_integer_value(v);
	return 0;
}

/* A string array into a NULL-terminated vector. */
static int str_vec(json_t *a, const char *field, char ***ret, size_t *ret_n, struct cd_err *err)
{
	size_t i, n;
	char **v;

	if (!json_is_array(a))
		return bad(err, field, "an array of strings");
	n = json_array_size(a);
	if (n > CD_OCI_MAX_ARGS)
		return cd_err_set(err, -CD_E_LIMIT, "config.json: %s has more than %d entries",
		                  field, CD_OCI_MAX_ARGS);
	v = calloc(n + 1, sizeof *v);
	if (!v)
		return cd_err_set(err, -ENOMEM, "out of memory");
	*ret = v;
	for (i = 0; i < n; i++) {
		json_t *e = json_array_get(a, i);

		if (!json_is_string(e) || strlen(json_string_value(e)) != json_string_length(e))
			return bad(err, field, "an array of strings without NUL bytes");
		v[i] = strdup(json_string_value(e));
		if (!v[i])
			return cd_err_set(err, -ENOMEM, "out of memory");
	}
	if (ret_n)
		*ret_n = n;
	return 0;
}

static int abs_path(const char *in, const char *field, char **ret, struct cd_err *err)
{
	char norm[CD_PATH_MAX];

	if (!in || in[0] != '/' || cd_path_normalize(in, norm, sizeof norm) < 0)
		return bad(err, field, "an absolute path without '..' above '/'");
	*ret = strdup(norm);
	return *ret ? 0 : cd_err_set(err, -ENOMEM, "out of memory");
}

/* Capabilities: every set must stay within containerd's default. */
static int parse_caps(json_t *caps, struct cd_oci_spec *s, struct cd_err *err)
{
	static const char *const sets[] = { "bounding", "effective", "inheritable", "permitted",
		                            "ambient" };
	size_t i, j;

	if (!caps)
		return 0;
	if (!json_is_object(caps))
		return bad(err, "process.capabilities", "an object");
	/* A privileged container asks for everything: name the one that
	 * matters most. */
	for (i = 0; i < sizeof sets / sizeof sets[0]; i++) {
		json_t *a = json_object_get(caps, sets[i]), *e;

		json_array_foreach(a, j, e)
		{
			if (json_is_string(e) && strcmp(json_string_value(e), "CAP_SYS_ADMIN") == 0)
				return cd_err_set(err, -CD_E_DENIED,
				                  "cordon refuses privileged containers: "
				                  "process.capabilities.%s asks for CAP_SYS_ADMIN",
				                  sets[i]);
		}
	}
	for (i = 0; i < sizeof sets / sizeof sets[0]; i++) {
		json_t *a = json_object_get(caps, sets[i]), *e;

		if (!a)
			continue;
		if (!json_is_array(a))
			return bad(err, "process.capabilities", "an object of string arrays");
		json_array_foreach(a, j, e)
		{
			if (!json_is_string(e))
				return bad(err, "process.capabilities",
				           "an object of string arrays");
			if (!in_list(json_string_value(e), default_caps,
			             sizeof default_caps / sizeof default_caps[0]))
				return cd_err_set(
				        err, -CD_E_DENIED,
				        "cordon refuses privileged containers: capability %s (in "
				        "process.capabilities.%s) is beyond the default set, and "
				        "cordon runs every container with no capabilities at all",
				        json_string_value(e), sets[i]);
			s->ncaps_dropped++;
		}
	}
	return 0;
}

static int parse_rlimits(json_t *rl, struct cd_oci_spec *s, struct cd_err *err)
{
	size_t i;
	json_t *e;

	if (!rl)
		return 0;
	if (!json_is_array(rl))
		return bad(err, "process.rlimits", "an array");
	json_array_foreach(rl, i, e)
	{
		json_t *t = json_object_get(e, "type");
		uint64_t hard = 0, soft = 0;
		int r;

		if (!json_is_object(e) || !json_is_string(t))
			return bad(err, "process.rlimits[]", "objects with a string type");
		if ((r = opt_u64(e, "hard", "process.rlimits[].hard", &hard, err)) < 0 ||
		    (r = opt_u64(e, "soft", "process.rlimits[].soft", &soft, err)) < 0)
			return r;
		if (soft > hard)
			return bad(err, "process.rlimits[].soft", "at most its hard value");
		if (strcmp(json_string_value(t), "RLIMIT_NOFILE") == 0)
			s->nofile = hard;
	}
	return 0;
}

static int parse_user(json_t *u, struct cd_oci_spec *s, struct cd_err *err)
{
	uint64_t uid = 0, gid = 0;
	int r;

	if (!u)
		return 0;
	if (!json_is_object(u))
		return bad(err, "process.user", "an object");
	if ((r = opt_u64(u, "uid", "process.user.uid", &uid, err)) < 0 ||
	    (r = opt_u64(u, "gid", "process.user.gid", &gid, err)) < 0)
		return r;
	if (uid > UINT32_MAX - 1 || gid > UINT32_MAX - 1)
		return bad(err, "process.user", "a uid and gid below 2^32-1");
	s->uid = (uint32_t)uid;
	s->gid = (uint32_t)gid;
	return 0;
}

static int parse_process(json_t *p, struct cd_oci_spec *s, struct cd_err *err)
{
	json_t *v;
	char *cwd = NULL;
	int r;

	if (!json_is_object(p))
		return bad(err, "process", "an object");
	v = json_object_get(p, "terminal");
	if (v && !json_is_boolean(v))
		return bad(err, "process.terminal", "a boolean");
	s->terminal = json_is_true(v);
	v = json_object_get(p, "args");
	if (!v)
		return bad(err, "process.args", "present");
	if ((r = str_vec(v, "process.args", &s->args, NULL, err)) < 0)
		return r;
	if (!s->args[0] || !s->args[0][0])
		return bad(err, "process.args", "a non-empty array with a non-empty first entry");
	v = json_object_get(p, "env");
	if (v && (r = str_vec(v, "process.env", &s->env, &s->nenv, err)) < 0)
		return r;
	for (size_t i = 0; i < s->nenv; i++) {
		if (!strchr(s->env[i], '=') || s->env[i][0] == '=')
			return bad(err, "process.env", "NAME=VALUE entries");
	}
	if ((r = opt_str(p, "cwd", "process.cwd", &cwd, err)) < 0)
		return r;
	r = abs_path(cwd ? cwd : "/", "process.cwd", &s->cwd, err);
	free(cwd);
	if (r < 0)
		return r;
	if ((r = parse_user(json_object_get(p, "user"), s, err)) < 0 ||
	    (r = parse_caps(json_object_get(p, "capabilities"), s, err)) < 0)
		return r;
	v = json_object_get(p, "noNewPrivileges");
	if (v && !json_is_boolean(v))
		return bad(err, "process.noNewPrivileges", "a boolean");
	return parse_rlimits(json_object_get(p, "rlimits"), s, err);
}

/* Is `dest` (normalized) one cordon builds itself, and of a type that
 * would be there anyway? */
static int cordon_mount(const char *dest, const char *type)
{
	static const char *const types[] = { "proc",  "tmpfs",  "devpts", "mqueue",
		                             "sysfs", "cgroup", "cgroup2" };

	if (!type || !in_list(type, types, sizeof types / sizeof types[0]))
		return 0;
	return strcmp(dest, "/proc") == 0 || cd_path_is_under(dest, "/dev") ||
	       cd_path_is_under(dest, "/sys");
}

static int has_opt(json_t *opts, const char *want)
{
	size_t i;
	json_t *e;

	json_array_foreach(opts, i, e)
	{
		if (json_is_string(e) && strcmp(json_string_value(e), want) == 0)
			return 1;
	}
	return 0;
}

static int parse_mount(json_t *e, const char *bundle, struct cd_oci_mount *m, struct cd_err *err)
{
	json_t *d = json_object_get(e, "destination"), *t = json_object_get(e, "type"),
	       *src = json_object_get(e, "source"), *opts = json_object_get(e, "options");
	const char *type = json_is_string(t) ? json_string_value(t) : NULL;
	char buf[CD_PATH_MAX];
	int r;

	if (!json_is_object(e) || !json_is_string(d) || (t && !json_is_string(t)) ||
	    (src && !json_is_string(src)) || (opts && !json_is_array(opts)))
		return bad(err, "mounts[]",
		           "objects with a string destination, type and source and an options "
		           "array");
	if ((r = abs_path(json_string_value(d), "mounts[].destination", &m->dest, err)) < 0)
		return r;
	if (strcmp(m->dest, "/") == 0)
		return cd_err_set(err, -CD_E_DENIED, "config.json: a mount over '/' is refused");
	if (cordon_mount(m->dest, type)) {
		m->use = CD_OCI_MNT_CORDON;
		return 0;
	}
	if (type && strcmp(type, "tmpfs") == 0) {
		m->use = CD_OCI_MNT_TMPFS;
		return 0;
	}
	if ((type && strcmp(type, "bind") != 0 && strcmp(type, "none") != 0) ||
	    !(opts && (has_opt(opts, "bind") || has_opt(opts, "rbind"))) || !src)
		return cd_err_set(err, -CD_E_DENIED,
		                  "config.json: mount at %s (type %s): cordon mounts only binds, "
		                  "tmpfs and its own /proc, /dev and /sys",
		                  m->dest, type ? type : "none");
	m->use = CD_OCI_MNT_BIND;
	m->rw = !has_opt(opts, "ro");
	if (json_string_value(src)[0] == '/')
		r = abs_path(json_string_value(src), "mounts[].source", &m->src, err);
	else if (snprintf(buf, sizeof buf, "%s/%s", bundle, json_string_value(src)) >=
	         (int)sizeof buf)
		r = bad(err, "mounts[].source", "shorter");
	else
		r = abs_path(buf, "mounts[].source", &m->src, err);
	if (r == 0 && (cd_path_is_under(m->src, "/dev") || cd_path_is_under(m->src, "/proc") ||
	               cd_path_is_under(m->src, "/sys")))
		r = cd_err_set(err, -CD_E_DENIED,
		               "config.json: mount at %s binds the host's %s: cordon binds no host "
		               "device, /proc or /sys tree into a container",
		               m->dest, m->src);
	return r;
}

static int parse_mounts(json_t *a, const char *bundle, struct cd_oci_spec *s, struct cd_err *err)
{
	size_t i;
	json_t *e;
	int r;

	if (!a)
		return 0;
	if (!json_is_array(a))
		return bad(err, "mounts", "an array");
	if (json_array_size(a) > CD_OCI_MAX_MOUNTS)
		return cd_err_set(err, -CD_E_LIMIT, "config.json: more than %d mounts",
		                  CD_OCI_MAX_MOUNTS);
	json_array_foreach(a, i, e)
	{
		if ((r = parse_mount(e, bundle, &s->mounts[s->nmounts++], err)) < 0)
			return r;
	}
	return 0;
}

static const char *ns_proc_name(const char *type)
{
	static const char *const map[][2] = { { "pid", "pid" },       { "network", "net" },
		                              { "ipc", "ipc" },       { "uts", "uts" },
		                              { "mount", "mnt" },     { "user", "user" },
		                              { "cgroup", "cgroup" }, { "time", "time" } };
	size_t i;

	for (i = 0; i < sizeof map / sizeof map[0]; i++) {
		if (strcmp(type, map[i][0]) == 0)
			return map[i][1];
	}
	return NULL;
}

/* A namespace joined by path.  The host's own is refused as such.  A
 * pod's network, IPC and UTS namespaces (those of its sandbox container,
 * as containerd's CRI plugin gives them) are joined: their paths are
 * kept.  The others are refused with why. */
static int ns_path(const char *type, const char *path, struct cd_oci_spec *s, struct cd_err *err)
{
	static const char *const joinable[CD_OCI_NS_N] = { "network", "ipc", "uts" };
	struct stat b;
	const char *pn = ns_proc_name(type);
	size_t i;
	int host;

	/* A path that cannot be read here is refused when it is opened. */
	if (pn && stat(path, &b) == 0 && (host = cd_oci_ns_is_host(&b, pn)) != 0)
		return cd_err_set(err, -CD_E_DENIED,
		                  host > 0
		                          ? "cordon refuses host namespaces: linux.namespaces %s "
		                            "joins the host's (%s)"
		                          : "linux.namespaces %s joins %s: the host's namespaces "
		                            "cannot be read here (neither pid 1's nor kthreadd's), "
		                            "so a pod's cannot be told apart from them: refused",
		                  type, path);
	for (i = 0; i < CD_OCI_NS_N; i++) {
		if (strcmp(type, joinable[i]) != 0)
			continue;
		if (s->ns_path[i])
			return bad(err, "linux.namespaces", "without a type given twice");
		if (path[0] != '/' || strlen(path) >= CD_PATH_MAX)
			return bad(err, "linux.namespaces[].path", "an absolute path");
		s->ns_path[i] = strdup(path);
		return s->ns_path[i] ? 0 : cd_err_set(err, -ENOMEM, "out of memory");
	}
	if (strcmp(type, "pid") == 0)
		return cd_err_set(
		        err, -CD_E_DENIED,
		        "linux.namespaces pid joins %s: cordon gives every container a pid "
		        "namespace of its own (its /proc could not be mounted in another "
		        "sandbox's; a pod's shareProcessNamespace is not supported)",
		        path);
	if (strcmp(type, "user") == 0)
		return cd_err_set(err, -CD_E_DENIED,
		                  "linux.namespaces user joins %s: cordon maps the container's ids "
		                  "into a user namespace of its own and never joins another's (its "
		                  "id map and capabilities would be that namespace's)",
		                  path);
	if (strcmp(type, "mount") == 0)
		return cd_err_set(err, -CD_E_DENIED,
		                  "linux.namespaces mount joins %s: cordon builds the container's "
		                  "filesystem itself (a read-only image, its /proc and /dev) and "
		                  "never enters another's mounts",
		                  path);
	return cd_err_set(err, -CD_E_DENIED,
	                  "linux.namespaces %s joins %s: cordon makes that namespace itself", type,
	                  path);
}

static int parse_namespaces(json_t *a, struct cd_oci_spec *s, struct cd_err *err)
{
	unsigned seen = 0;
	size_t i, k;
	json_t *e;
	int r;

	if (!json_is_array(a))
		return bad(err, "linux.namespaces", "an array");
	json_array_foreach(a, i, e)
	{
		json_t *t = json_object_get(e, "type"), *p = json_object_get(e, "path");

		if (!json_is_object(e) || !json_is_string(t) || (p && !json_is_string(p)))
			return bad(err, "linux.namespaces[]",
			           "objects with a string type and path");
		if (!ns_proc_name(json_string_value(t)))
			return cd_err_set(err, -CD_E_PARSE,
			                  "config.json: linux.namespaces: unknown type '%s'",
			                  json_string_value(t));
		if (p && json_string_length(p) > 0 &&
		    (r = ns_path(json_string_value(t), json_string_value(p), s, err)) < 0)
			return r;
		for (k = 0; k < sizeof needed_ns / sizeof needed_ns[0]; k++) {
			if (strcmp(json_string_value(t), needed_ns[k]) == 0)
				seen |= 1u << k;
		}
	}
	for (k = 0; k < sizeof needed_ns / sizeof needed_ns[0]; k++) {
		if (!(seen & (1u << k)))
			return cd_err_set(err, -CD_E_DENIED,
			                  "cordon refuses host namespaces: linux.namespaces has no "
			                  "%s namespace, which shares the host's",
			                  needed_ns[k]);
	}
	return 0;
}

static int parse_devices(json_t *a, struct cd_err *err)
{
	size_t i;
	json_t *e;

	if (!a)
		return 0;
	if (!json_is_array(a))
		return bad(err, "linux.devices", "an array");
	json_array_foreach(a, i, e)
	{
		json_t *p = json_object_get(e, "path");

		if (!json_is_object(e) || !json_is_string(p))
			return bad(err, "linux.devices[]", "objects with a string path");
		if (!in_list(json_string_value(p), default_devices,
		             sizeof default_devices / sizeof default_devices[0]))
			return cd_err_set(
			        err, -CD_E_DENIED,
			        "cordon refuses device %s (linux.devices): containers get "
			        "only null, zero, full, random, urandom and tty",
			        json_string_value(p));
	}
	return 0;
}

static int parse_resources(json_t *res, struct cd_oci_spec *s, struct cd_err *err)
{
	json_t *mem, *pids, *cpu, *v;
	uint64_t period = 0, quota = 0;
	int r;

	if (!res)
		return 0;
	if (!json_is_object(res))
		return bad(err, "linux.resources", "an object");
	if ((r = opt_obj(res, "memory", "linux.resources.memory", &mem, err)) < 0 ||
	    (r = opt_obj(res, "pids", "linux.resources.pids", &pids, err)) < 0 ||
	    (r = opt_obj(res, "cpu", "linux.resources.cpu", &cpu, err)) < 0)
		return r;
	/* -1 means "no limit" in the spec: cordon's default stays then. */
	v = mem ? json_object_get(mem, "limit") : NULL;
	if (v && !(json_is_integer(v) && json_integer_value(v) == -1) &&
	    (r = opt_u64(mem, "limit", "linux.resources.memory.limit", &s->memory, err)) < 0)
		return r;
	v = pids ? json_object_get(pids, "limit") : NULL;
	if (v && !(json_is_integer(v) && json_integer_value(v) <= 0) &&
	    (r = opt_u64(pids, "limit", "linux.resources.pids.limit", &s->pids, err)) < 0)
		return r;
	v = cpu ? json_object_get(cpu, "quota") : NULL;
	if (v && !(json_is_integer(v) && json_integer_value(v) == -1) &&
	    ((r = opt_u64(cpu, "quota", "linux.resources.cpu.quota", &quota, err)) < 0 ||
	     (r = opt_u64(cpu, "period", "linux.resources.cpu.period", &period, err)) < 0))
		return r;
	if (quota && period) {
		if (quota > UINT64_MAX / 100)
			return bad(err, "linux.resources.cpu.quota", "smaller");
		s->cpu_pct = quota * 100 / period;
		if (s->cpu_pct == 0)
			s->cpu_pct = 1;
	}
	return 0;
}

/* linux.cgroupsPath, cgroupfs style ("/kubepods/burstable/podU/ID", or
 * relative: taken from the hierarchy's root): where the container's
 * cgroup is made (cd_cgroup_create_at).  Every component a plain name:
 * "." and ".." (a path leaving the hierarchy, or climbing to another's
 * cgroup) are refused.  The systemd form ("slice:prefix:name") is kept
 * on record only: cordon does not talk to systemd. */
static int cgroup_place(struct cd_oci_spec *s, struct cd_err *err)
{
	const char *p = s->cgroups_path, *c;
	size_t n, len, depth = 0, o = 0;
	char *out;

	if (!p || strchr(p, ':'))
		return 0;
	len = strlen(p);
	if (len == 0 || len > 1024)
		return bad(err, "linux.cgroupsPath", "a path of 1 to 1024 bytes");
	out = malloc(len + 2);
	if (!out)
		return cd_err_set(err, -ENOMEM, "out of memory");
	out[0] = '\0';
	for (c = p; *c; c += n) {
		c += strspn(c, "/");
		n = strcspn(c, "/");
		if (n == 0)
			break;
		if ((n == 1 && c[0] == '.') || (n == 2 && c[0] == '.' && c[1] == '.') ||
		    strspn(c, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-") <
		            n ||
		    ++depth > 32) {
			free(out);
			return cd_err_set(err, -CD_E_DENIED,
			                  "linux.cgroupsPath %s: cordon places a container only in "
			                  "a cgroup below the hierarchy's root named by plain "
			                  "components (no '.', '..' or special characters)",
			                  p);
		}
		out[o++] = '/';
		memcpy(out + o, c, n);
		o += n;
		out[o] = '\0';
	}
	if (!out[0]) {
		free(out);
		return bad(err, "linux.cgroupsPath", "a cgroup below the hierarchy's root");
	}
	s->cgroup_at = out;
	return 0;
}

static int parse_linux(json_t *l, struct cd_oci_spec *s, struct cd_err *err)
{
	int r;

	if (!json_is_object(l))
		return bad(err, "linux", "an object (cordon runs Linux containers only)");
	if ((r = parse_namespaces(json_object_get(l, "namespaces"), s, err)) < 0 ||
	    (r = parse_devices(json_object_get(l, "devices"), err)) < 0 ||
	    (r = parse_resources(json_object_get(l, "resources"), s, err)) < 0 ||
	    (r = opt_str(l, "cgroupsPath", "linux.cgroupsPath", &s->cgroups_path, err)) < 0 ||
	    (r = cgroup_place(s, err)) < 0 ||
	    (r = cd_oci_parse_seccomp(json_object_get(l, "seccomp"), &s->seccomp, err)) < 0)
		return r;
	if (json_object_get(l, "uidMappings") || json_object_get(l, "gidMappings"))
		return cd_err_set(err, -CD_E_DENIED,
		                  "linux.uidMappings: cordon maps the container's ids itself (to "
		                  "the run's own unprivileged host id)");
	return 0;
}

static int parse_annotations(json_t *a, struct cd_oci_spec *s, struct cd_err *err)
{
	const char *k;
	json_t *v;
	int r;

	if (!a) {
		s->annotations = strdup("{}");
		return s->annotations ? 0 : cd_err_set(err, -ENOMEM, "out of memory");
	}
	if (!json_is_object(a))
		return bad(err, "annotations", "an object");
	json_object_foreach(a, k, v)
	{
		if (!json_is_string(v))
			return bad(err, "annotations", "an object of strings");
	}
	if ((r = opt_str(a, "cordon.agent", "annotations.cordon.agent", &s->agent, err)) < 0 ||
	    (r = opt_str(a, "cordon.policy", "annotations.cordon.policy", &s->policy, err)) < 0 ||
	    (r = opt_str(a, "cordon.task", "annotations.cordon.task", &s->task, err)) < 0 ||
	    (r = opt_str(a, "cordon.tool", "annotations.cordon.tool", &s->tool, err)) < 0)
		return r;
	s->annotations = json_dumps(a, JSON_COMPACT | JSON_SORT_KEYS);
	return s->annotations ? 0 : cd_err_set(err, -ENOMEM, "out of memory");
}

static int parse_root(json_t *o, const char *bundle, struct cd_oci_spec *s, struct cd_err *err)
{
	json_t *root, *ro;
	char *path = NULL, buf[CD_PATH_MAX];
	int r;

	if ((r = opt_obj(o, "root", "root", &root, err)) < 0)
		return r;
	if (!root)
		return bad(err, "root", "present");
	if ((r = opt_str(root, "path", "root.path", &path, err)) < 0)
		return r;
	if (!path || !path[0]) {
		free(path);
		return bad(err, "root.path", "a non-empty string");
	}
	if (path[0] == '/')
		r = abs_path(path, "root.path", &s->root, err);
	else if (snprintf(buf, sizeof buf, "%s/%s", bundle, path) >= (int)sizeof buf)
		r = bad(err, "root.path", "shorter");
	else
		r = abs_path(buf, "root.path", &s->root, err);
	free(path);
	ro = json_object_get(root, "readonly");
	if (r == 0 && ro && !json_is_boolean(ro))
		r = bad(err, "root.readonly", "a boolean");
	s->root_rw = ro && json_is_false(ro);
	return r;
}

int cd_oci_spec_parse(const char *text, size_t len, const char *bundle, struct cd_oci_spec *ret,
                      struct cd_err *err)
{
	json_error_t jerr;
	json_t *o, *v;
	int r;

	memset(ret, 0, sizeof *ret);
	o = json_loadb(text, len, JSON_REJECT_DUPLICATES, &jerr);
	if (!o)
		return cd_err_set(err, -CD_E_PARSE, "config.json: line %d: %s", jerr.line,
		                  jerr.text);
	r = 0;
	v = json_object_get(o, "ociVersion");
	if (!json_is_object(o))
		r = bad(err, "the top level", "an object");
	else if (!json_is_string(v) || strncmp(json_string_value(v), "1.", 2) != 0)
		r = bad(err, "ociVersion", "a string of version 1.x");
	if (r == 0 && !json_object_get(o, "process"))
		r = bad(err, "process", "present");
	if (r == 0)
		r = parse_root(o, bundle, ret, err);
	if (r == 0)
		r = parse_process(json_object_get(o, "process"), ret, err);
	if (r == 0)
		r = parse_mounts(json_object_get(o, "mounts"), bundle, ret, err);
	if (r == 0)
		r = opt_str(o, "hostname", "hostname", &ret->hostname, err);
	if (r == 0)
		r = parse_linux(json_object_get(o, "linux"), ret, err);
	if (r == 0)
		r = parse_annotations(json_object_get(o, "annotations"), ret, err);
	v = json_object_get(o, "hooks");
	if (r == 0 && v && (!json_is_object(v) || json_object_size(v) > 0))
		r = cd_err_set(err, -CD_E_DENIED,
		               "config.json: hooks run host programs as root beside the container: "
		               "cordon refuses them");
	json_decref(o);
	if (r < 0)
		cd_oci_spec_free(ret);
	return r;
}

static void free_vec(char **v)
{
	size_t i;

	for (i = 0; v && v[i]; i++)
		free(v[i]);
	free(v);
}

void cd_oci_spec_free(struct cd_oci_spec *s)
{
	size_t i;

	if (!s)
		return;
	free(s->root);
	free_vec(s->args);
	free_vec(s->env);
	free(s->cwd);
	for (i = 0; i < s->nmounts; i++) {
		free(s->mounts[i].dest);
		free(s->mounts[i].src);
	}
	free(s->hostname);
	free(s->cgroups_path);
	free(s->cgroup_at);
	free(s->agent);
	free(s->policy);
	free(s->task);
	free(s->tool);
	free(s->annotations);
	for (i = 0; i < CD_OCI_NS_N; i++)
		free(s->ns_path[i]);
	cd_oci_seccomp_free(s->seccomp);
	memset(s, 0, sizeof *s);
}
