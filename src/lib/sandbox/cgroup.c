/* cgroup.c — see cgroup.h.  Supervisor side only.
 *
 * Layout.  The run's cgroup nests under the supervisor's own cgroup of each
 * hierarchy (from /proc/self/cgroup), so limits set above cordon still
 * apply to the run: <mount><own>/cordon/<run_id>.  On v1, hierarchies that
 * share a mount (cpu,cpuacct) are detected by device and used once.
 *
 * v2 is used only when our own cgroup already delegates every controller
 * the limits need (its cgroup.subtree_control lists them) and is writable;
 * enabling controllers ourselves would require moving the supervisor out
 * of its cgroup first (the no-internal-process rule), which a library must
 * not do behind its caller's back. */
#include "cgroup.h"

#include "util/bounds.h"
#include "util/num.h"
#include "util/util.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define CG1_MAGIC   0x27e0ebUL
#define CG2_MAGIC   0x63677270UL
#define CG_ROOT     "/sys/fs/cgroup"
#define CPU_PERIOD  100000 /* us */
#define CG_SELF_MAX 8192   /* /proc/self/cgroup */

enum { MECH_NONE, MECH_V1, MECH_V2 };
enum { L_MEMORY, L_PIDS, L_QUOTA, L_N };
enum { C_MEMORY, C_PIDS, C_CPU, C_CPUACCT, C_FREEZER, C_N };

static const char *const ctrl_name[C_N] = { "memory", "pids", "cpu", "cpuacct", "freezer" };

struct cd_cgroup {
	struct cd_limits lim;
	int mech[L_N];
	int v2;
	char v2_dir[CD_PATH_MAX];
	char dir[C_N][CD_PATH_MAX]; /* v1 run dirs; "" when absent */
	int owned[C_N];             /* made by us (not a shared hierarchy's alias) */
	char note[256];
	char at[CD_PATH_MAX]; /* cd_cgroup_create_at's path (v1), "" for the default */
};

/* ---- small file helpers --------------------------------------------- */

static int path_join(char *buf, size_t size, const char *a, const char *b)
{
	int n = snprintf(buf, size, "%s/%s", a, b);
	return n < 0 || (size_t)n >= size ? -ENAMETOOLONG : 0;
}

static int write_str(const char *dir, const char *file, const char *val)
{
	char p[CD_PATH_MAX];
	int fd, rc;

	if ((rc = path_join(p, sizeof p, dir, file)) < 0)
		return rc;
	fd = open(p, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	rc = cd_write_all(fd, val, strlen(val));
	if (close(fd) < 0 && rc == 0)
		rc = -errno;
	return rc;
}

static int write_u64(const char *dir, const char *file, uint64_t v)
{
	char s[32];
	int n = snprintf(s, sizeof s, "%llu", (unsigned long long)v);

	if (n < 0 || (size_t)n >= sizeof s)
		return -EOVERFLOW;
	return write_str(dir, file, s);
}

/* Read at most size-1 bytes of a small kernel file, NUL-terminated. */
static int read_small(const char *path, char *buf, size_t size)
{
	CD_AUTOCLOSE int fd = open(path, O_RDONLY | O_CLOEXEC);
	size_t len = 0;

	if (fd < 0)
		return -errno;
	while (len + 1 < size) {
		ssize_t n = read(fd, buf + len, size - 1 - len);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	buf[len] = '\0';
	return (int)len;
}

/* The whole file is one number (with a trailing newline). */
static int read_u64(const char *dir, const char *file, uint64_t *ret)
{
	char p[CD_PATH_MAX], buf[64];
	int rc, n;

	if ((rc = path_join(p, sizeof p, dir, file)) < 0)
		return rc;
	if ((n = read_small(p, buf, sizeof buf)) < 0)
		return n;
	while (n > 0 && buf[n - 1] == '\n')
		n--;
	return cd_parse_u64(buf, (size_t)n, UINT64_MAX, ret);
}

/* A "key value" line of a flat-keyed file (memory.events, oom_control). */
static int read_key(const char *dir, const char *file, const char *key, uint64_t *ret)
{
	char p[CD_PATH_MAX], buf[4096];
	size_t klen = strlen(key);
	int rc;

	if ((rc = path_join(p, sizeof p, dir, file)) < 0)
		return rc;
	if ((rc = read_small(p, buf, sizeof buf)) < 0)
		return rc;
	for (char *line = buf; line && *line;) {
		char *nl = strchr(line, '\n');
		size_t len = nl ? (size_t)(nl - line) : strlen(line);
		if (len > klen + 1 && memcmp(line, key, klen) == 0 && line[klen] == ' ')
			return cd_parse_u64(line + klen + 1, len - klen - 1, UINT64_MAX, ret);
		line = nl ? nl + 1 : NULL;
	}
	return -ENOENT;
}

static int has_word(const char *list, const char *word)
{
	size_t wl = strlen(word);

	for (const char *p = list; *p;) {
		size_t n = strcspn(p, " \n,");
		if (n == wl && memcmp(p, word, wl) == 0)
			return 1;
		p += n;
		p += strspn(p, " \n,");
	}
	return 0;
}

/* Our own cgroup in hierarchy `ctrl` ("" for v2), as "" for the root or
 * "/a/b", from `self`: the text of /proc/self/cgroup (read once per
 * create; an empty string when it could not be read).  Lines are
 * "id:controllers:path"; `self` is not modified. */
static int own_path(const char *self, const char *ctrl, char *buf, size_t size)
{
	size_t cl = strlen(ctrl);

	for (const char *line = self; *line;) {
		const char *nl = strchr(line, '\n'), *end = nl ? nl : line + strlen(line);
		const char *c1 = memchr(line, ':', (size_t)(end - line));
		const char *c2 = c1 ? memchr(c1 + 1, ':', (size_t)(end - c1 - 1)) : NULL;

		if (c2) {
			const char *path = c2 + 1;
			size_t pl = (size_t)(end - path);
			int match = 0;

			if (cl == 0)
				match = c1 - line == 1 && line[0] == '0' && c2 == c1 + 1;
			for (const char *w = c1 + 1; cl && !match && w < c2;) {
				size_t wl = strcspn(w, ",:");
				match = wl == cl && memcmp(w, ctrl, cl) == 0;
				w += wl + 1;
			}
			if (match) {
				if (pl == 1 && path[0] == '/')
					pl = 0;
				if (pl >= size)
					return -ENAMETOOLONG;
				memcpy(buf, path, pl);
				buf[pl] = '\0';
				return 0;
			}
		}
		line = nl ? nl + 1 : end;
	}
	return -ENOENT;
}

static int valid_id(const char *id)
{
	size_t n = 0;

	if (!id || strcmp(id, ".") == 0 || strcmp(id, "..") == 0)
		return 0;
	for (; id[n]; n++) {
		char c = id[n];
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		      c == '.' || c == '_' || c == '-'))
			return 0;
	}
	return n >= 1 && n <= CD_CGROUP_ID_MAX;
}

static int is_unwritable(int rc)
{
	return rc == -EACCES || rc == -EPERM || rc == -EROFS;
}

/* Remove empty run directories older than CD_CGROUP_STALE_S: a live run's
 * cgroup holds processes (rmdir fails with EBUSY) and a fresh one is young. */
static void remove_stale(const char *parent)
{
	DIR *d = opendir(parent);
	struct dirent *e;
	time_t now = time(NULL);

	if (!d)
		return;
	while ((e = readdir(d))) {
		char p[CD_PATH_MAX];
		struct stat st;
		if (e->d_type != DT_DIR || !valid_id(e->d_name) ||
		    path_join(p, sizeof p, parent, e->d_name) < 0 || stat(p, &st) < 0)
			continue;
		if (now - st.st_mtime > CD_CGROUP_STALE_S)
			(void)rmdir(p); /* EBUSY when in use: left alone */
	}
	closedir(d);
}

/* mkdir <base>/cordon and <base>/cordon/<id>; the run dir into ret. */
static int make_run_dir(const char *base, const char *id, char *ret, size_t size)
{
	char parent[CD_PATH_MAX];
	int rc;

	if ((rc = path_join(parent, sizeof parent, base, "cordon")) < 0)
		return rc;
	if (mkdir(parent, 0755) < 0 && errno != EEXIST)
		return -errno;
	remove_stale(parent);
	if ((rc = path_join(ret, size, parent, id)) < 0)
		return rc;
	if (mkdir(ret, 0755) < 0)
		return -errno;
	return 0;
}

/* cd_cgroup_create_at: mkdir each parent of `dir` below the hierarchy's
 * mount `mnt` (kept: the manager's, e.g. the kubelet's pod cgroup), then
 * `dir` itself, which must be new: a cgroup that exists is another's and
 * cordon writes its limits only into one it made. */
static int make_at(const char *mnt, const char *dir)
{
	char p[CD_PATH_MAX];
	size_t ml = strlen(mnt);
	char *slash;

	if (strlen(dir) >= sizeof p)
		return -ENAMETOOLONG;
	memcpy(p, dir, strlen(dir) + 1);
	for (slash = strchr(p + ml + 1, '/'); slash; slash = strchr(slash + 1, '/')) {
		*slash = '\0';
		if (mkdir(p, 0755) < 0 && errno != EEXIST)
			return -errno;
		*slash = '/';
	}
	return mkdir(p, 0755) < 0 ? -errno : 0;
}

static int fs_magic(const char *path, unsigned long magic)
{
	struct statfs sf;
	return statfs(path, &sf) == 0 && (unsigned long)sf.f_type == magic;
}

/* ---- cgroup v2 ------------------------------------------------------- */

/* 1 when v2 was set up, 0 when it is not usable here (note says why),
 * -errno when it is usable but a limit could not be set. */
static int try_v2(struct cd_cgroup *cg, const char *self, const char *id, struct cd_err *err)
{
	const struct cd_limits *l = &cg->lim;
	char own[CD_PATH_MAX], base[CD_PATH_MAX], parent[CD_PATH_MAX], sub[256], enable[64];
	const char *mnt = NULL;
	int rc, n;

	if (fs_magic(CG_ROOT, CG2_MAGIC))
		mnt = CG_ROOT;
	else if (fs_magic(CG_ROOT "/unified", CG2_MAGIC))
		mnt = CG_ROOT "/unified";
	if (!mnt || own_path(self, "", own, sizeof own) < 0)
		return 0;
	n = snprintf(base, sizeof base, "%s%s", mnt, own);
	if (n < 0 || (size_t)n >= sizeof base)
		return 0;
	if (path_join(parent, sizeof parent, base, "cgroup.subtree_control") < 0 ||
	    read_small(parent, sub, sizeof sub) < 0)
		return 0;
	if ((l->memory && !has_word(sub, "memory")) || (l->pids && !has_word(sub, "pids")) ||
	    (!l->memory && !l->pids) || access(base, W_OK) < 0)
		return 0;
	n = snprintf(enable, sizeof enable, "%s%s%s", l->memory ? "+memory " : "",
	             l->pids ? "+pids " : "", has_word(sub, "cpu") ? "+cpu" : "");
	if (n < 0 || (size_t)n >= sizeof enable)
		return 0;
	if (path_join(parent, sizeof parent, base, "cordon") < 0)
		return 0;
	if (mkdir(parent, 0755) < 0 && errno != EEXIST)
		return 0;
	if (write_str(parent, "cgroup.subtree_control", enable) < 0)
		return 0;
	rc = make_run_dir(base, id, cg->v2_dir, sizeof cg->v2_dir);
	if (rc < 0)
		return cd_err_sys(err, rc, "cgroup2 '%s/cordon/%s'", base, id);
	cg->v2 = 1;
	if (l->memory) {
		if ((rc = write_u64(cg->v2_dir, "memory.max", l->memory)) < 0)
			return cd_err_sys(err, rc, "cgroup2 '%s/memory.max'", cg->v2_dir);
		rc = write_str(cg->v2_dir, "memory.swap.max", "0");
		if (rc < 0 && rc != -ENOENT)
			return cd_err_sys(err, rc, "cgroup2 '%s/memory.swap.max'", cg->v2_dir);
		cg->mech[L_MEMORY] = MECH_V2;
	}
	if (l->pids) {
		if ((rc = write_u64(cg->v2_dir, "pids.max", l->pids)) < 0)
			return cd_err_sys(err, rc, "cgroup2 '%s/pids.max'", cg->v2_dir);
		cg->mech[L_PIDS] = MECH_V2;
	}
	if (l->cpu_quota_pct && has_word(sub, "cpu")) {
		char v[64];
		n = snprintf(v, sizeof v, "%llu %d",
		             (unsigned long long)(l->cpu_quota_pct * (CPU_PERIOD / 100)),
		             CPU_PERIOD);
		if (n < 0 || (size_t)n >= sizeof v)
			return cd_err_set(err, -EINVAL, "cpu quota %llu%% out of range",
			                  (unsigned long long)l->cpu_quota_pct);
		if ((rc = write_str(cg->v2_dir, "cpu.max", v)) < 0)
			return cd_err_sys(err, rc, "cgroup2 '%s/cpu.max'", cg->v2_dir);
		cg->mech[L_QUOTA] = MECH_V2;
	}
	return 1;
}

/* ---- cgroup v1 ------------------------------------------------------- */

/* Make the run dir of controller c; 0 also when the hierarchy is absent or
 * not writable (dir stays ""). */
static int v1_make(struct cd_cgroup *cg, const char *self, int c, const char *id, dev_t *devs,
                   struct cd_err *err)
{
	char mnt[64], own[CD_PATH_MAX], base[CD_PATH_MAX];
	struct stat st;
	int rc, n;

	n = snprintf(mnt, sizeof mnt, "%s/%s", CG_ROOT, ctrl_name[c]);
	if (n < 0 || (size_t)n >= sizeof mnt)
		return -ENAMETOOLONG;
	if (!fs_magic(mnt, CG1_MAGIC) || stat(mnt, &st) < 0 ||
	    own_path(self, ctrl_name[c], own, sizeof own) < 0)
		return 0;
	devs[c] = st.st_dev;
	for (int i = 0; i < c; i++) {
		if (cg->dir[i][0] && devs[i] == st.st_dev) { /* co-mounted: the same dir */
			memcpy(cg->dir[c], cg->dir[i], sizeof cg->dir[c]);
			return 0;
		}
	}
	n = snprintf(base, sizeof base, "%s%s", mnt, cg->at[0] ? cg->at : own);
	if (n < 0 || (size_t)n >= sizeof base)
		return -ENAMETOOLONG;
	if (cg->at[0]) {
		rc = make_at(mnt, base);
		if (rc == 0)
			memcpy(cg->dir[c], base, sizeof cg->dir[c]);
		if (rc == -EEXIST)
			return cd_err_sys(err, rc,
			                  "cgroup1 '%s' exists already (another's cgroup): cordon "
			                  "places a run only in a cgroup it makes",
			                  base);
	} else {
		rc = make_run_dir(base, id, cg->dir[c], sizeof cg->dir[c]);
	}
	if (rc < 0) {
		cg->dir[c][0] = '\0';
		if (is_unwritable(rc)) {
			if (strncmp(cg->note, "rlimit: no ", 11) != 0)
				return 0; /* keep the first reason */
			n = snprintf(cg->note, sizeof cg->note, "rlimit: %s not writable: %s", base,
			             strerror(-rc));
			if (n < 0 || (size_t)n >= sizeof cg->note)
				cg->note[0] = '\0';
			return 0;
		}
		return cd_err_sys(err, rc, "cgroup1 '%s/cordon/%s'", base, id);
	}
	cg->owned[c] = 1;
	return 0;
}

static int v1_limits(struct cd_cgroup *cg, struct cd_err *err)
{
	const struct cd_limits *l = &cg->lim;
	const char *d;
	int rc;

	d = cg->dir[C_MEMORY];
	if (*d && l->memory) {
		if ((rc = write_u64(d, "memory.limit_in_bytes", l->memory)) < 0)
			return cd_err_sys(err, rc, "cgroup1 '%s/memory.limit_in_bytes'", d);
		/* memsw (memory+swap) must be >= limit_in_bytes; absent without
		 * swap accounting, and then swap cannot be used to escape. */
		rc = write_u64(d, "memory.memsw.limit_in_bytes", l->memory);
		if (rc < 0 && rc != -ENOENT)
			return cd_err_sys(err, rc, "cgroup1 '%s/memory.memsw.limit_in_bytes'", d);
		cg->mech[L_MEMORY] = MECH_V1;
	}
	d = cg->dir[C_PIDS];
	if (*d && l->pids) {
		if ((rc = write_u64(d, "pids.max", l->pids)) < 0)
			return cd_err_sys(err, rc, "cgroup1 '%s/pids.max'", d);
		cg->mech[L_PIDS] = MECH_V1;
	}
	d = cg->dir[C_CPU];
	if (*d && l->cpu_quota_pct) {
		if (l->cpu_quota_pct > UINT64_MAX / (CPU_PERIOD / 100))
			return cd_err_set(err, -EINVAL, "cpu quota %llu%% out of range",
			                  (unsigned long long)l->cpu_quota_pct);
		if ((rc = write_u64(d, "cpu.cfs_period_us", CPU_PERIOD)) < 0 ||
		    (rc = write_u64(d, "cpu.cfs_quota_us", l->cpu_quota_pct * (CPU_PERIOD / 100))) <
		            0)
			return cd_err_sys(err, rc, "cgroup1 '%s' cpu quota", d);
		cg->mech[L_QUOTA] = MECH_V1;
	}
	return 0;
}

static int try_v1(struct cd_cgroup *cg, const char *self, const char *id, struct cd_err *err)
{
	dev_t devs[C_N] = { 0 };
	int rc;

	for (int c = 0; c < C_N; c++) {
		/* cpu and cpuacct serve a CPU quota alone: without one they
		 * would cost a directory and an attach per run for nothing. */
		if ((c == C_CPU || c == C_CPUACCT) && !cg->lim.cpu_quota_pct)
			continue;
		if ((rc = v1_make(cg, self, c, id, devs, err)) < 0)
			return rc;
	}
	return v1_limits(cg, err);
}

static void set_note(struct cd_cgroup *cg)
{
	static const char *const lname[L_N] = { "memory", "pids", "cpu_quota" };
	char list[64] = "";
	size_t len = 0;
	int n;

	for (int i = 0; i < L_N; i++) {
		if (cg->mech[i] == MECH_NONE)
			continue;
		n = snprintf(list + len, sizeof list - len, "%s%s", len ? "," : "", lname[i]);
		if (n < 0 || (size_t)n >= sizeof list - len)
			break;
		len += (size_t)n;
	}
	if (!len)
		return; /* keep the reason the hierarchies were not usable */
	n = snprintf(cg->note, sizeof cg->note, "%s: %s", cg->v2 ? "cgroup2" : "cgroup1", list);
	if (n < 0 || (size_t)n >= sizeof cg->note)
		cg->note[0] = '\0';
}

int cd_cgroup_create(const char *run_id, const struct cd_limits *lim, struct cd_cgroup **ret,
                     struct cd_err *err)
{
	return cd_cgroup_create_at(run_id, lim, NULL, ret, err);
}

int cd_cgroup_create_at(const char *run_id, const struct cd_limits *lim, const char *at,
                        struct cd_cgroup **ret, struct cd_err *err)
{
	char self[CG_SELF_MAX];
	struct cd_cgroup *cg;
	int rc;

	if (!valid_id(run_id))
		return cd_err_set(err, -EINVAL, "cgroup: bad run id");
	if (!lim || !ret)
		return cd_err_set(err, -EINVAL, "cgroup: no limits");
	cg = calloc(1, sizeof *cg);
	if (!cg)
		return cd_err_set(err, -ENOMEM, "cgroup: out of memory");
	cg->lim = *lim;
	if (at && (at[0] != '/' || strlen(at) >= sizeof cg->at || strstr(at, "/.") ||
	           strstr(at, "//") || strcmp(at, "/") == 0)) {
		free(cg);
		return cd_err_set(err, -EINVAL, "cgroup: path '%s' is not a plain absolute path",
		                  at);
	}
	if (at)
		memcpy(cg->at, at, strlen(at) + 1);
	rc = snprintf(cg->note, sizeof cg->note, "rlimit: no writable cgroup hierarchy");
	if (rc < 0 || (size_t)rc >= sizeof cg->note)
		cg->note[0] = '\0';
	if (read_small("/proc/self/cgroup", self, sizeof self) < 0)
		self[0] = '\0'; /* no hierarchy is ours: rlimits */
	rc = try_v2(cg, self, run_id, err);
	if (rc == 0)
		rc = try_v1(cg, self, run_id, err);
	if (rc < 0) {
		cd_cgroup_destroy(cg);
		return rc;
	}
	set_note(cg);
	*ret = cg;
	return 0;
}

/* ---- attach, kill ---------------------------------------------------- */

int cd_cgroup_attach(struct cd_cgroup *cg, pid_t pid, struct cd_err *err)
{
	int rc;

	if (!cg || pid <= 0)
		return cd_err_set(err, -EINVAL, "cgroup attach: bad arguments");
	if (cg->v2) {
		if ((rc = write_u64(cg->v2_dir, "cgroup.procs", (uint64_t)pid)) < 0)
			return cd_err_sys(err, rc, "cgroup2 '%s/cgroup.procs'", cg->v2_dir);
		return 0;
	}
	for (int c = 0; c < C_N; c++) {
		if (!cg->owned[c])
			continue;
		if ((rc = write_u64(cg->dir[c], "cgroup.procs", (uint64_t)pid)) < 0)
			return cd_err_sys(err, rc, "cgroup1 '%s/cgroup.procs'", cg->dir[c]);
	}
	return 0;
}

/* The directory whose cgroup.procs lists the whole run, or NULL. */
static const char *procs_dir(const struct cd_cgroup *cg)
{
	static const int order[] = { C_PIDS, C_MEMORY, C_FREEZER, C_CPU, C_CPUACCT };

	if (cg->v2)
		return cg->v2_dir;
	for (size_t i = 0; i < CD_ARRAY_SIZE(order); i++)
		if (cg->owned[order[i]])
			return cg->dir[order[i]];
	return NULL;
}

/* SIGKILL every pid listed in dir/cgroup.procs; the count, or -errno. */
static int kill_listed(const char *dir)
{
	char p[CD_PATH_MAX], buf[4096];
	size_t have = 0;
	int rc, killed = 0;
	CD_AUTOCLOSE int fd = -1;

	if ((rc = path_join(p, sizeof p, dir, "cgroup.procs")) < 0)
		return rc;
	if ((fd = open(p, O_RDONLY | O_CLOEXEC)) < 0)
		return -errno;
	for (;;) {
		ssize_t n = read(fd, buf + have, sizeof buf - have);
		size_t start = 0;
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		have += (size_t)n;
		for (size_t i = 0; i < have; i++) {
			uint64_t pid;
			if (buf[i] != '\n')
				continue;
			if (cd_parse_u64(buf + start, i - start, INT32_MAX, &pid) == 0 && pid > 1 &&
			    kill((pid_t)pid, SIGKILL) == 0)
				killed++;
			start = i + 1;
		}
		memmove(buf, buf + start, have - start);
		have -= start;
		if (n == 0 || have == sizeof buf)
			break;
	}
	return killed;
}

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

static int empty(const char *dir)
{
	char p[CD_PATH_MAX], c;
	CD_AUTOCLOSE int fd = -1;

	if (path_join(p, sizeof p, dir, "cgroup.procs") < 0)
		return 0;
	if ((fd = open(p, O_RDONLY | O_CLOEXEC)) < 0)
		return errno == ENOENT;
	return read(fd, &c, 1) == 0;
}

int cd_cgroup_kill(struct cd_cgroup *cg)
{
	const char *dir, *fz;
	int total = 0;

	if (!cg || !(dir = procs_dir(cg)))
		return 0;
	if (cg->v2 && write_str(cg->v2_dir, "cgroup.kill", "1") == 0) {
		for (int i = 0; i < 200 && !empty(dir); i++)
			sleep_ms(5);
		return empty(dir) ? 0 : -EAGAIN;
	}
	fz = cg->owned[C_FREEZER] ? cg->dir[C_FREEZER] : NULL;
	for (int round = 0; round < 200; round++) {
		int n;
		if (empty(dir))
			return total;
		/* Frozen, nothing can fork between reading the list and the
		 * kill; the pending SIGKILLs are delivered on thaw. */
		if (fz && write_str(fz, "freezer.state", "FROZEN") == 0) {
			char st[32];
			char p[CD_PATH_MAX];
			for (int i = 0; i < 20; i++) {
				if (path_join(p, sizeof p, fz, "freezer.state") < 0 ||
				    read_small(p, st, sizeof st) < 0 ||
				    strncmp(st, "FROZEN", 6) == 0)
					break;
				sleep_ms(1);
			}
		}
		n = kill_listed(dir);
		if (fz)
			(void)write_str(fz, "freezer.state", "THAWED");
		if (n < 0)
			return n;
		total += n;
		sleep_ms(round < 10 ? 1 : 5);
	}
	return empty(dir) ? total : -EAGAIN;
}

/* ---- stats, destroy, names ------------------------------------------ */

int cd_cgroup_collect(struct cd_cgroup *cg, struct cd_cgroup_stats *ret)
{
	struct cd_cgroup_stats s = { 0 };
	uint64_t v;
	int rc;

	if (!cg || !ret)
		return -EINVAL;
	if (cg->v2) {
		const char *d = cg->v2_dir;
		if (cg->mech[L_MEMORY]) {
			if (read_u64(d, "memory.peak", &s.peak_memory) < 0)
				s.peak_memory = 0; /* before 5.19 */
			if ((rc = read_key(d, "memory.events", "oom_kill", &s.oom_kills)) < 0 ||
			    (rc = read_key(d, "memory.events", "max", &s.memory_max_hits)) < 0)
				return rc;
			s.measured |= CD_CGSTAT_MEMORY;
		}
		if (cg->mech[L_PIDS]) {
			if ((rc = read_key(d, "pids.events", "max", &s.pids_max_hits)) < 0)
				return rc;
			s.measured |= CD_CGSTAT_PIDS;
		}
		if (read_key(d, "cpu.stat", "usage_usec", &v) == 0) {
			s.cpu_usage_ns = v * 1000;
			s.measured |= CD_CGSTAT_CPU;
		}
		if (cg->mech[L_QUOTA] &&
		    read_key(d, "cpu.stat", "nr_throttled", &s.cpu_throttled) == 0)
			s.measured |= CD_CGSTAT_QUOTA;
		*ret = s;
		return 0;
	}
	if (cg->dir[C_MEMORY][0]) {
		const char *d = cg->dir[C_MEMORY];
		if ((rc = read_u64(d, "memory.max_usage_in_bytes", &s.peak_memory)) < 0 ||
		    (rc = read_u64(d, "memory.failcnt", &s.memory_max_hits)) < 0 ||
		    (rc = read_key(d, "memory.oom_control", "oom_kill", &s.oom_kills)) < 0)
			return rc;
		s.measured |= CD_CGSTAT_MEMORY;
	}
	if (cg->dir[C_PIDS][0]) {
		if ((rc = read_key(cg->dir[C_PIDS], "pids.events", "max", &s.pids_max_hits)) < 0)
			return rc;
		s.measured |= CD_CGSTAT_PIDS;
	}
	if (cg->dir[C_CPUACCT][0] && read_u64(cg->dir[C_CPUACCT], "cpuacct.usage", &v) == 0) {
		s.cpu_usage_ns = v;
		s.measured |= CD_CGSTAT_CPU;
	}
	if (cg->mech[L_QUOTA] &&
	    read_key(cg->dir[C_CPU], "cpu.stat", "nr_throttled", &s.cpu_throttled) == 0)
		s.measured |= CD_CGSTAT_QUOTA;
	*ret = s;
	return 0;
}

static void rmdir_retry(struct cd_cgroup *cg, const char *dir)
{
	for (int i = 0; i < 200; i++) {
		if (rmdir(dir) == 0 || errno == ENOENT)
			return;
		if (errno != EBUSY)
			return;
		if (i == 20)
			(void)cd_cgroup_kill(cg);
		sleep_ms(5);
	}
}

void cd_cgroup_destroy(struct cd_cgroup *cg)
{
	if (!cg)
		return;
	if (cg->v2 && cg->v2_dir[0])
		rmdir_retry(cg, cg->v2_dir);
	for (int c = 0; c < C_N; c++)
		if (cg->owned[c])
			rmdir_retry(cg, cg->dir[c]);
	free(cg);
}

static int limit_index(const char *limit)
{
	if (!limit)
		return -1;
	if (strcmp(limit, "memory") == 0)
		return L_MEMORY;
	if (strcmp(limit, "pids") == 0)
		return L_PIDS;
	if (strcmp(limit, "cpu_quota") == 0)
		return L_QUOTA;
	return -1;
}

static uint64_t limit_value(const struct cd_limits *l, const char *limit)
{
	if (strcmp(limit, "memory") == 0)
		return l->memory;
	if (strcmp(limit, "pids") == 0)
		return l->pids;
	if (strcmp(limit, "cpu_quota") == 0)
		return l->cpu_quota_pct;
	return l->cpu_ms;
}

const char *cd_cgroup_mechanism(const struct cd_cgroup *cg, const char *limit)
{
	int i = limit_index(limit);

	if (!limit || (i < 0 && strcmp(limit, "cpu") != 0))
		return "none";
	if (cg && !limit_value(&cg->lim, limit))
		return "none";
	if (i < 0) /* cpu: the total, RLIMIT_CPU */
		return "rlimit";
	if (cg && cg->mech[i] == MECH_V2)
		return "cgroup2";
	if (cg && cg->mech[i] == MECH_V1)
		return "cgroup1";
	return i == L_QUOTA ? "none" : "rlimit";
}

int cd_cgroup_enforces(const struct cd_cgroup *cg, const char *limit)
{
	int i = limit_index(limit);
	return cg && i >= 0 && cg->mech[i] != MECH_NONE;
}

const char *cd_cgroup_note(const struct cd_cgroup *cg)
{
	return cg ? cg->note : "rlimit: no cgroup";
}

const char *cd_cgroup_reason(const struct cd_cgroup_stats *st, int wstatus)
{
	if (!st || (WIFEXITED(wstatus) && WEXITSTATUS(wstatus) == 0))
		return NULL;
	if ((st->measured & CD_CGSTAT_MEMORY) && st->oom_kills > 0)
		return "memory";
	if ((st->measured & CD_CGSTAT_PIDS) && st->pids_max_hits > 0)
		return "pids";
	return NULL;
}
