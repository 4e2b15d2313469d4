/* plan.c — build and check the plan of one run (see plan.h).
 *
 * The default filesystem is the strict profile of SPEC.md: a fresh tmpfs
 * root holding read-only binds of the system directories, a minimal /etc
 * with no secrets, a minimal /dev, a new /proc with sensitive entries
 * covered, the working directory read-only, and one scratch tmpfs that is
 * $HOME and $TMPDIR.  Everything else of the host is absent.
 */
#include "plan.h"

#include "plan-int.h"

#include "util/bounds.h"
#include "util/buf.h"
#include "util/path.h"
#include "profile.h"
#include "quotas.h"
#include "util/util.h"

#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <dirent.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define SCRATCH_DIR  "/tmp"
#define SANDBOX_PATH "/usr/local/bin:/usr/bin:/bin:/usr/local/sbin:/usr/sbin:/sbin"

/* System directories: bound read-only when they are directories, recreated
 * as the same symlink when they are symlinks (merged /usr). */
static const char *const system_dirs[] = {
	"/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32",
};

/* Host /etc entries that carry no secrets and that programs need: the
 * dynamic linker's cache, Debian's alternatives, CA certificates, time
 * zone, service names.  Never /etc/shadow, ssh keys, /etc/ssl/private,
 * credentials or drop-in directories that may hold them. */
static const char *const etc_entries[] = {
	"/etc/ld.so.cache", "/etc/alternatives",   "/etc/ssl/certs", "/etc/ssl/openssl.cnf",
	"/etc/localtime",   "/etc/timezone",       "/etc/protocols", "/etc/services",
	"/etc/os-release",  "/etc/debian_version", "/etc/gitconfig",
};

static const char *const dev_nodes[] = {
	"/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom",
};

/* /proc entries that leak host state or offer kernel attack surface:
 * covered (files by /dev/null, directories by an empty tmpfs) or made
 * read-only.  The pid namespace already hides other processes. */
static const char *const proc_masked[] = {
	"/proc/kcore",         "/proc/keys",     "/proc/timer_list", "/proc/sched_debug",
	"/proc/latency_stats", "/proc/kallsyms", "/proc/kpagecount", "/proc/kpageflags",
	"/proc/kpagecgroup",   "/proc/acpi",     "/proc/scsi",       "/proc/asound",
	"/proc/sysrq-trigger",
};
static const char *const proc_readonly[] = {
	"/proc/sys",
	"/proc/irq",
	"/proc/bus",
	"/proc/fs",
};

/* Working directories that would expose far more than a project: refused
 * with a hint instead of bound. */
static const char *const cwd_refused_exact[] = {
	"/", "/tmp", "/var/tmp", "/var", "/home", "/root", "/usr", "/opt", "/srv", "/mnt", "/media",
};
static const char *const cwd_refused_tree[] = {
	"/etc", "/proc", "/sys", "/dev", "/run", "/var/run", "/boot", "/var/lib", "/var/log",
};
/* A directory holding one of these looks like a home directory. */
static const char *const home_markers[] = { ".ssh", ".gnupg", ".aws", ".kube", ".docker" };

void cd_limits_default(struct cd_limits *lim)
{
	memset(lim, 0, sizeof *lim);
	lim->memory = CD_DEFAULT_MEMORY;
	lim->pids = CD_DEFAULT_PIDS;
	lim->timeout_ms = CD_DEFAULT_TIMEOUT_MS;
	lim->output_limit = CD_DEFAULT_OUTPUT_LIMIT;
	lim->scratch_size = CD_DEFAULT_SCRATCH_SIZE;
	lim->propose_size = CD_DEFAULT_PROPOSE_SIZE;
	lim->propose_inodes = CD_DEFAULT_PROPOSE_INODES;
	lim->nofile = CD_DEFAULT_NOFILE;
	lim->fsize = CD_DEFAULT_FSIZE;
	lim->inotify_instances = CD_DEFAULT_INOTIFY_INSTANCES;
	lim->inotify_watches = CD_DEFAULT_INOTIFY_WATCHES;
	lim->msgqueue = CD_DEFAULT_MSGQUEUE;
	lim->sigpending = CD_DEFAULT_SIGPENDING;
	lim->memlock = CD_DEFAULT_MEMLOCK;
}

static void mount_release(struct cd_mount *m)
{
	free(m->src);
	free(m->dest);
	free(m->content);
	cd_closep(&m->src_fd);
}

void cd_plan_free(struct cd_plan *p)
{
	size_t i;

	if (!p)
		return;
	for (i = 0; p->argv && p->argv[i]; i++)
		free(p->argv[i]);
	free(p->argv);
	for (i = 0; p->envp && p->envp[i]; i++) {
		if (p->env_secret && p->env_secret[i])
			cd_free_secret(p->envp[i], strlen(p->envp[i]));
		else
			free(p->envp[i]);
	}
	free(p->envp);
	free(p->env_secret);
	for (i = 0; p->path_dirs && p->path_dirs[i]; i++)
		free(p->path_dirs[i]);
	free(p->path_dirs);
	for (i = 0; i < p->nmounts; i++)
		mount_release(&p->mounts[i]);
	free(p->mounts);
	free(p->ll_paths);
	cd_seccomp_prog_release(&p->seccomp);
	cd_seccomp_prog_release(&p->seccomp_nocg);
	cd_seccomp_prog_release(&p->seccomp_spec);
	free(p->cwd);
	free(p->hostname);
	free(p->rootfs);
	free(p->scratch_host);
	free(p->profile);
	for (i = 0; i < p->nhost_run; i++)
		free(p->host_run[i]);
	free(p->host_run);
	free(p->host_run_id);
	cd_name_chunks_free(p->dir_names);
	free(p->dirs);
	for (i = 0; i < p->nheld; i++) {
		munmap(p->held[i].map, p->held[i].maplen);
		munmap(p->held[i].names, p->held[i].names_cap);
		if (p->held[i].at_owned)
			free(p->held[i].at);
	}
	free(p->held);
	free(p->runs);
	for (i = 0; i < p->ntrees; i++) {
		free(p->trees[i].root);
		if (p->trees[i].fd >= 0)
			close(p->trees[i].fd);
	}
	free(p->trees);
	if (p->watch_instance) /* a plan made by hand has neither (tree-watch.h) */
		cd_closep(&p->watch_fd);
	free(p);
}

/* Append one mount; takes ownership of nothing (copies strings). */
static int add_mount(struct cd_plan *p, enum cd_mount_kind kind, unsigned flags, const char *src,
                     const char *dest, struct cd_err *err)
{
	struct cd_mount *m;

	if (p->nmounts >= CD_PLAN_MAX_MOUNTS)
		return cd_err_set(err, -CD_E_LIMIT,
		                  "more than %d mounts in one plan (the bound trees hold too many "
		                  "host sockets, credential files or git control paths to cover): "
		                  "refused rather than run half-protected; bind a smaller tree",
		                  CD_PLAN_MAX_MOUNTS);
	m = &p->mounts[p->nmounts];
	*m = (struct cd_mount){ .kind = kind, .flags = flags, .mode = 0755, .src_fd = -1 };
	m->dest = strdup(dest);
	if (!m->dest || (src && !(m->src = strdup(src)))) {
		mount_release(m);
		return cd_err_set(err, -ENOMEM, "out of memory");
	}
	p->nmounts++;
	return 0;
}

int cd_plan_mount_add(struct cd_plan *p, enum cd_mount_kind kind, unsigned flags, const char *src,
                      const char *dest, const char *why, struct cd_err *err)
{
	int r = add_mount(p, kind, flags, src, dest, err);

	if (r == 0)
		p->mounts[p->nmounts - 1].why = why;
	return r;
}

static int add_file(struct cd_plan *p, const char *dest, const char *content, struct cd_err *err)
{
	int r = add_mount(p, CD_MNT_FILE, 0, NULL, dest, err);
	struct cd_mount *m;

	if (r < 0)
		return r;
	m = &p->mounts[p->nmounts - 1];
	m->mode = 0644;
	m->content_len = strlen(content);
	m->content = strdup(content);
	if (!m->content)
		return cd_err_set(err, -ENOMEM, "out of memory");
	return 0;
}

/* A host path that is a symlink is recreated as the same symlink; a
 * directory or file is bound read-only; a missing one is skipped. */
static int add_host_entry(struct cd_plan *p, const char *path, struct cd_err *err)
{
	struct stat st;
	char target[CD_PATH_MAX];
	ssize_t n;

	if (lstat(path, &st) < 0)
		return 0;
	if (S_ISLNK(st.st_mode)) {
		n = readlink(path, target, sizeof target - 1);
		if (n < 0)
			return 0;
		target[n] = '\0';
		return add_mount(p, CD_MNT_SYMLINK, 0, target, path, err);
	}
	if (!S_ISDIR(st.st_mode) && !S_ISREG(st.st_mode))
		return 0;
	return add_mount(p, CD_MNT_BIND, CD_MNT_OPTIONAL, path, path, err);
}

static int add_etc(struct cd_plan *p, struct cd_err *err)
{
	char passwd[512], group[512];
	size_t i;
	int r, n;

	r = add_mount(p, CD_MNT_DIR, 0, NULL, "/etc", err);
	n = snprintf(passwd, sizeof passwd,
	             "root:x:0:0:root:/nonexistent:/usr/sbin/nologin\n"
	             "agent:x:%u:%u:cordon sandbox:" SCRATCH_DIR ":/bin/sh\n"
	             "nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n",
	             (unsigned)p->uid, (unsigned)p->gid);
	if (r < 0 || n < 0 || (size_t)n >= sizeof passwd)
		return r < 0 ? r : cd_err_set(err, -EOVERFLOW, "passwd too long");
	n = snprintf(group, sizeof group, "root:x:0:\nagent:x:%u:\nnogroup:x:65534:\n",
	             (unsigned)p->gid);
	if (n < 0 || (size_t)n >= sizeof group)
		return cd_err_set(err, -EOVERFLOW, "group too long");
	if ((r = add_file(p, "/etc/passwd", passwd, err)) < 0 ||
	    (r = add_file(p, "/etc/group", group, err)) < 0 ||
	    (r = add_file(p, "/etc/hostname", "cordon\n", err)) < 0 ||
	    (r = add_file(p, "/etc/hosts",
	                  "127.0.0.1\tlocalhost cordon\n::1\tlocalhost ip6-localhost\n", err)) <
	            0 ||
	    (r = add_file(p, "/etc/nsswitch.conf",
	                  "passwd: files\ngroup: files\nshadow: files\nhosts: files\n"
	                  "networks: files\nprotocols: files\nservices: files\n",
	                  err)) < 0)
		return r;
	for (i = 0; i < CD_ARRAY_SIZE(etc_entries); i++) {
		if ((r = add_host_entry(p, etc_entries[i], err)) < 0)
			return r;
	}
	return 0;
}

static int add_dev(struct cd_plan *p, int tty, struct cd_err *err)
{
	static const struct {
		const char *dest, *target;
	} links[] = {
		{ "/dev/fd", "/proc/self/fd" },       { "/dev/stdin", "/proc/self/fd/0" },
		{ "/dev/stdout", "/proc/self/fd/1" }, { "/dev/stderr", "/proc/self/fd/2" },
		{ "/dev/shm", SCRATCH_DIR },          { "/dev/core", "/proc/kcore" },
	};
	size_t i;
	int r = add_mount(p, CD_MNT_TMPFS, 0, NULL, "/dev", err);

	if (r < 0)
		return r;
	p->mounts[p->nmounts - 1].size = 64 * 1024;
	for (i = 0; i < CD_ARRAY_SIZE(dev_nodes); i++) {
		r = add_mount(p, CD_MNT_BIND, CD_MNT_RW | CD_MNT_DEV, dev_nodes[i], dev_nodes[i],
		              err);
		if (r < 0)
			return r;
	}
	for (i = 0; i < CD_ARRAY_SIZE(links); i++) {
		if (strcmp(links[i].dest, "/dev/core") == 0)
			continue; /* no alias for kcore, masked anyway */
		r = add_mount(p, CD_MNT_SYMLINK, 0, links[i].target, links[i].dest, err);
		if (r < 0)
			return r;
	}
	/* cordon shell: a devpts instance of the sandbox's own, never the
	 * host's; the child makes the session's pty in it before any wall. */
	if (tty && ((r = add_mount(p, CD_MNT_DEVPTS, CD_MNT_RW, NULL, "/dev/pts", err)) < 0 ||
	            (r = add_mount(p, CD_MNT_SYMLINK, 0, "pts/ptmx", "/dev/ptmx", err)) < 0))
		return r;
	/* /dev/tty names the opener's controlling terminal: inside, only ever
	 * the session pty (every process of the sandbox is in sessions made
	 * inside it), so programs that reopen it (less, vi) work. */
	if (tty && (r = add_mount(p, CD_MNT_BIND, CD_MNT_RW | CD_MNT_DEV, "/dev/tty", "/dev/tty",
	                          err)) < 0)
		return r;
	return 0;
}

static int add_proc(struct cd_plan *p, struct cd_err *err)
{
	size_t i;
	int r = add_mount(p, CD_MNT_PROC, 0, NULL, "/proc", err);

	for (i = 0; r == 0 && i < CD_ARRAY_SIZE(proc_masked); i++)
		r = add_mount(p, CD_MNT_MASK, CD_MNT_OPTIONAL, NULL, proc_masked[i], err);
	for (i = 0; r == 0 && i < CD_ARRAY_SIZE(proc_readonly); i++)
		r = add_mount(p, CD_MNT_REMOUNT_RO, CD_MNT_OPTIONAL, NULL, proc_readonly[i], err);
	return r;
}

static int check_cwd(const char *cwd, struct cd_err *err)
{
	char probe[CD_PATH_MAX];
	struct stat st;
	size_t i;
	int n;

	for (i = 0; i < CD_ARRAY_SIZE(cwd_refused_exact); i++) {
		if (strcmp(cwd, cwd_refused_exact[i]) == 0)
			goto refuse;
	}
	for (i = 0; i < CD_ARRAY_SIZE(cwd_refused_tree); i++) {
		if (cd_path_is_under(cwd, cwd_refused_tree[i]))
			goto refuse;
	}
	for (i = 0; i < CD_ARRAY_SIZE(home_markers); i++) {
		n = snprintf(probe, sizeof probe, "%s/%s", cwd, home_markers[i]);
		if (n > 0 && (size_t)n < sizeof probe && lstat(probe, &st) == 0)
			return cd_err_set(
			        err, -CD_E_USAGE,
			        "working directory '%s' looks like a home directory (it "
			        "holds %s): it would be visible to the sandbox; cd into a "
			        "project directory or pass --cwd DIR",
			        cwd, home_markers[i]);
	}
	return 0;
refuse:
	return cd_err_set(err, -CD_E_USAGE,
	                  "working directory '%s' would expose system or shared state to the "
	                  "sandbox; cd into a project directory or pass --cwd DIR",
	                  cwd);
}

/* workspace-write: what exists of the protected paths stays read-only.
 * Each is a mount point, so it cannot be renamed or removed either; a
 * directory holding protected paths (.git) is bound onto itself for the
 * same reason, or `mv .git x && mkdir -p .git/hooks` would plant a new
 * one beside the protected inodes.  A protected path that is a symlink
 * cannot be held (the agent could swap it), so the run is refused. */
static int protect_one(struct cd_plan *p, const char *path, enum cd_mount_kind kind, unsigned flags,
                       struct cd_err *err)
{
	struct cd_mount *m;
	struct stat st;
	size_t i;
	int r;

	if (lstat(path, &st) < 0)
		return 0;
	if (S_ISLNK(st.st_mode))
		return cd_err_set(err, -CD_E_USAGE,
		                  "'%s' is a symlink; workspace-write cannot keep it read-only, so "
		                  "the run is refused",
		                  path);
	for (i = 0; i < p->nmounts; i++) {
		if (strcmp(p->mounts[i].dest, path) == 0)
			return 0;
	}
	if (kind == CD_MNT_BIND && !S_ISDIR(st.st_mode))
		return 0;
	r = cd_plan_mount_add(p, kind, flags, kind == CD_MNT_BIND ? path : NULL, path,
	                      "runs on the host: read-only", err);
	if (r >= 0) { /* mounted as seen here, or refused */
		m = &p->mounts[p->nmounts - 1];
		m->flags |= kind == CD_MNT_BIND ? CD_MNT_SRC_PINNED : CD_MNT_PINNED;
		m->src_dev = m->pin_dev = st.st_dev;
		m->src_ino = m->pin_ino = st.st_ino;
	}
	return r;
}

static int protect_workspace(struct cd_plan *p, const char *cwd, struct cd_err *err)
{
	char path[CD_PATH_MAX];
	size_t i;
	int n, r;

	for (i = 0; cd_protected_workspace_paths[i]; i++) {
		const char *rel = cd_protected_workspace_paths[i];
		const char *slash = strchr(rel, '/');

		if (slash) {
			n = snprintf(path, sizeof path, "%s/%.*s", cwd, (int)(slash - rel), rel);
			if (n < 0 || (size_t)n >= sizeof path)
				return cd_err_set(err, -ENAMETOOLONG,
				                  "working directory path too long");
			if ((r = protect_one(p, path, CD_MNT_BIND, CD_MNT_RW, err)) < 0)
				return r;
		}
		n = snprintf(path, sizeof path, "%s/%s", cwd, rel);
		if (n < 0 || (size_t)n >= sizeof path)
			return cd_err_set(err, -ENAMETOOLONG, "working directory path too long");
		if ((r = protect_one(p, path, CD_MNT_REMOUNT_RO, 0, err)) < 0)
			return r;
	}
	return 0;
}

static int dest_ok(const char *dest, int rootfs, struct cd_err *err)
{
	static const char *const reserved[] = { "/proc", "/dev", "/etc" };
	size_t i, n = CD_ARRAY_SIZE(reserved) - (rootfs ? 1 : 0); /* an image's /etc */

	if (strcmp(dest, "/") == 0)
		return cd_err_set(err, -CD_E_USAGE, "cannot mount over the sandbox root '/'");
	for (i = 0; i < n; i++) {
		if (cd_path_is_under(dest, reserved[i]))
			return cd_err_set(err, -CD_E_USAGE,
			                  "mount destination '%s' is under %s, which cordon builds "
			                  "itself",
			                  dest, reserved[i]);
	}
	return 0;
}

static int add_user_binds(struct cd_plan *p, const struct cd_plan_opts *o, size_t first,
                          struct cd_err *err)
{
	char src[CD_PATH_MAX], dest[CD_PATH_MAX];
	size_t i, j;
	int r;

	for (i = 0; i < o->nbinds; i++) {
		const struct cd_plan_bind *b = &o->binds[i];

		r = cd_path_canonical(b->src, src, sizeof src);
		if (r < 0)
			return cd_err_sys(err, r, "%s '%s'", b->rw ? "--rw" : "--ro", b->src);
		r = cd_path_normalize(b->dest ? b->dest : src, dest, sizeof dest);
		if (r < 0)
			return cd_err_set(err, -CD_E_USAGE,
			                  "%s: destination '%s' must be an absolute path without "
			                  "'..' above '/'",
			                  b->rw ? "--rw" : "--ro", b->dest ? b->dest : src);
		if ((r = dest_ok(dest, p->rootfs != NULL, err)) < 0)
			return r;
		if (!o->allow_home &&
		    (r = cd_home_check(src, b->rw ? "--rw" : "--ro", o->caller_home, err)) < 0)
			return r;
		for (j = first; j < p->nmounts; j++) {
			if (strcmp(p->mounts[j].dest, dest) == 0)
				return cd_err_set(err, -CD_E_USAGE,
				                  "two mounts at '%s'; give each a different "
				                  "destination",
				                  dest);
		}
		r = add_mount(p, CD_MNT_BIND,
		              (b->rw ? CD_MNT_RW : 0) | (o->binds_plain ? CD_MNT_PLAIN : 0), src,
		              dest, err);
		if (r < 0)
			return r;
	}
	return 0;
}

/* cordon's own files must stay out of the sandbox (DESIGN.md: the state
 * directory no sandbox can see): an agent reading the audit log learns
 * other runs' arguments, and one writing beside the state database could
 * plant a WAL file or swap the directory for one holding a forged grant.
 * So a read-only bind that shows their directory gets an empty read-only
 * tmpfs over it, and a writable one refuses the run. */
static int hide_private(struct cd_plan *p, const struct cd_plan_opts *o, struct cd_err *err)
{
	char dir[CD_PATH_MAX], canon[CD_PATH_MAX], dest[CD_PATH_MAX];
	size_t i, j, n = p->nmounts;
	int r;

	for (i = 0; i < o->nprivate; i++) {
		const char *path = o->private_paths[i], *slash;
		if (!path || path[0] != '/' || !(slash = strrchr(path, '/')))
			continue;
		if ((size_t)(slash - path) >= sizeof dir)
			return cd_err_set(err, -ENAMETOOLONG, "path too long: '%.64s...'", path);
		memcpy(dir, path, (size_t)(slash - path));
		dir[slash - path] = '\0';
		if (!dir[0])
			memcpy(dir, "/", 2);
		if (cd_path_canonical(dir, canon, sizeof canon) < 0)
			continue; /* not there: nothing to show */
		for (j = 0; j < n; j++) {
			const struct cd_mount *m = &p->mounts[j];
			size_t sl;
			if ((m->kind != CD_MNT_BIND && m->kind != CD_MNT_OVERLAY) || !m->src ||
			    (m->flags & CD_MNT_DEV) || !cd_path_is_under(canon, m->src))
				continue;
			if ((m->flags & CD_MNT_RW) || m->kind == CD_MNT_OVERLAY ||
			    strcmp(canon, m->src) == 0)
				return cd_err_set(
				        err, -CD_E_USAGE,
				        "cordon's own file '%s' lies in '%s', which the sandbox "
				        "would "
				        "see%s: keep the audit log and state database "
				        "(CORDON_AUDIT, "
				        "CORDON_STATE) outside the directories handed to agents",
				        path, m->src, (m->flags & CD_MNT_RW) ? " and write" : "");
			sl = strcmp(m->src, "/") == 0 ? 0 : strlen(m->src);
			r = snprintf(dest, sizeof dest, "%s%s", strcmp(m->dest, "/") ? m->dest : "",
			             canon + sl);
			if (r < 0 || (size_t)r >= sizeof dest)
				return cd_err_set(err, -ENAMETOOLONG, "path too long: '%.64s...'",
				                  canon);
			if ((r = add_mount(p, CD_MNT_MASK, 0, NULL, dest, err)) < 0)
				return r;
		}
	}
	return 0;
}

/* Shallower destinations first (stable); each stamped tree follows its
 * bind (found again by its dest string, which moves with it). */
static void sort_by_depth(struct cd_plan *p, size_t first)
{
	const char *dest[CD_PLAN_MAX_MOUNTS] = { NULL };
	size_t i, j;

	for (i = 0; i < p->ntrees && i < CD_PLAN_MAX_MOUNTS; i++)
		dest[i] = p->mounts[p->trees[i].mount].dest;
	for (i = first + 1; i < p->nmounts; i++) {
		struct cd_mount m = p->mounts[i];
		size_t d = cd_path_depth(m.dest);

		for (j = i; j > first && cd_path_depth(p->mounts[j - 1].dest) > d; j--)
			p->mounts[j] = p->mounts[j - 1];
		p->mounts[j] = m;
	}
	for (i = 0; i < p->ntrees && i < CD_PLAN_MAX_MOUNTS; i++) /* none: nmounts, refused */
		for (p->trees[i].mount = 0; p->trees[i].mount < p->nmounts &&
		                            p->mounts[p->trees[i].mount].dest != dest[i];)
			p->trees[i].mount++;
}

static int push_str(char ***vec, size_t *n, size_t max, const char *s, struct cd_err *err)
{
	char **v;

	if (*n + 1 >= max)
		return cd_err_set(err, -CD_E_LIMIT, "too many entries (max %zu)", max);
	v = realloc(*vec, (*n + 2) * sizeof *v);
	if (!v)
		return cd_err_set(err, -ENOMEM, "out of memory");
	*vec = v;
	v[*n] = strdup(s);
	if (!v[*n])
		return cd_err_set(err, -ENOMEM, "out of memory");
	(*n)++;
	v[*n] = NULL;
	return 0;
}

/* Set NAME=VALUE in the plan's environment, replacing an earlier entry of
 * the same name. */
static int env_set(struct cd_plan *p, const char *entry, int secret, struct cd_err *err)
{
	const char *eq = strchr(entry, '=');
	size_t nl, i;
	unsigned char *s;
	int r;

	if (!eq || eq == entry)
		return cd_err_set(err, -CD_E_USAGE, "environment entry must be NAME=VALUE");
	nl = (size_t)(eq - entry) + 1;
	for (i = 0; i < p->envc; i++) {
		if (strncmp(p->envp[i], entry, nl) == 0) {
			char *dup = strdup(entry);
			if (!dup)
				return cd_err_set(err, -ENOMEM, "out of memory");
			if (p->env_secret[i])
				cd_free_secret(p->envp[i], strlen(p->envp[i]));
			else
				free(p->envp[i]);
			p->envp[i] = dup;
			p->env_secret[i] = (unsigned char)secret;
			return 0;
		}
	}
	r = push_str(&p->envp, &p->envc, CD_PLAN_MAX_ENV, entry, err);
	if (r < 0)
		return r;
	s = realloc(p->env_secret, p->envc);
	if (!s)
		return cd_err_set(err, -ENOMEM, "out of memory");
	p->env_secret = s;
	s[p->envc - 1] = (unsigned char)secret;
	return 0;
}

static int build_env(struct cd_plan *p, const struct cd_plan_opts *o, struct cd_err *err)
{
	struct cd_buf b;
	size_t i;
	int r;

	cd_buf_init(&b, CD_PATH_MAX + 64);
	r = env_set(p, "PATH=" SANDBOX_PATH, 0, err);
	if (r == 0)
		r = env_set(p, "HOME=" SCRATCH_DIR, 0, err);
	if (r == 0)
		r = env_set(p, "TMPDIR=" SCRATCH_DIR, 0, err);
	if (r == 0 && cd_buf_printf(&b, "LANG=%s", o->lang ? o->lang : "C.UTF-8") < 0)
		r = cd_err_set(err, -CD_E_USAGE, "LANG too long");
	if (r == 0)
		r = env_set(p, b.data, 0, err);
	cd_buf_reset(&b);
	if (r == 0 && o->term) {
		if (cd_buf_printf(&b, "TERM=%s", o->term) < 0)
			r = cd_err_set(err, -CD_E_USAGE, "TERM too long");
		else
			r = env_set(p, b.data, 0, err);
	}
	cd_buf_reset(&b);
	if (r == 0 && o->lc_all) {
		if (cd_buf_printf(&b, "LC_ALL=%s", o->lc_all) < 0)
			r = cd_err_set(err, -CD_E_USAGE, "LC_ALL too long");
		else
			r = env_set(p, b.data, 0, err);
	}
	cd_buf_release(&b);
	/* Egress goes through the proxy: every common client honours these;
	 * anything that ignores them has no route at all. */
	if (r == 0 && o->egress) {
		static const char *const names[] = { "HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY",
			                             "http_proxy", "https_proxy", "all_proxy" };
		char e[64];
		size_t k;
		int n;

		for (k = 0; r == 0 && k < CD_ARRAY_SIZE(names); k++) {
			n = snprintf(e, sizeof e, "%s=http://127.0.0.1:%u", names[k],
			             p->proxy_port);
			r = (n < 0 || (size_t)n >= sizeof e)
			            ? cd_err_set(err, -EOVERFLOW, "proxy env")
			            : env_set(p, e, 0, err);
		}
		if (r == 0)
			r = env_set(p, "NO_PROXY=", 0, err);
		if (r == 0)
			r = env_set(p, "no_proxy=", 0, err);
	}
	for (i = 0; r == 0 && i < o->nenv; i++)
		r = env_set(p, o->env[i], 0, err);
	for (i = 0; r == 0 && i < o->nsecrets; i++)
		r = env_set(p, o->secrets[i], 1, err);
	return r;
}

/* The PATH search list the child uses to find argv[0]. */
static int build_path_dirs(struct cd_plan *p, struct cd_err *err)
{
	const char *path = SANDBOX_PATH;
	size_t n = 0, i;
	int r;

	for (i = 0; i < p->envc; i++) {
		if (strncmp(p->envp[i], "PATH=", 5) == 0)
			path = p->envp[i] + 5;
	}
	r = push_str(&p->path_dirs, &n, 64, "", err); /* keeps the vector non-NULL */
	if (r < 0)
		return r;
	free(p->path_dirs[0]);
	n = 0;
	p->path_dirs[0] = NULL;
	while (*path) {
		const char *end = strchr(path, ':');
		size_t len = end ? (size_t)(end - path) : strlen(path);
		char dir[CD_PATH_MAX];

		if (len > 0 && len < sizeof dir && path[0] == '/') {
			memcpy(dir, path, len);
			dir[len] = '\0';
			if ((r = push_str(&p->path_dirs, &n, 64, dir, err)) < 0)
				return r;
		}
		path += len;
		if (*path == ':')
			path++;
	}
	return 0;
}

/* Landlock: read and execute everywhere visible, write only in the scratch
 * and --rw binds, device rights on the character devices; TCP connect and
 * bind denied; abstract unix sockets and signals scoped to the sandbox. */
static int build_landlock(struct cd_plan *p, struct cd_err *err)
{
	int abi = cd_landlock_abi();
	size_t i, n = 0;

	if (abi <= 0) {
		if (p->allow_degraded)
			return 0;
		return cd_err_set(
		        err, -CD_E_KERNEL,
		        "Landlock is not available on this kernel (needs Linux 5.13+ with "
		        "lsm=landlock); pass --allow-degraded to run without it, recorded in "
		        "the result");
	}
	p->ll_paths = calloc(p->nmounts + 2, sizeof *p->ll_paths);
	if (!p->ll_paths)
		return cd_err_set(err, -ENOMEM, "out of memory");
	p->ll_paths[n].path = "/";
	p->ll_paths[n++].access = cd_landlock_fs_read(abi);
	for (i = 0; i < p->nmounts; i++) {
		const struct cd_mount *m = &p->mounts[i];
		uint64_t acc;

		if ((m->kind == CD_MNT_BIND && (m->flags & CD_MNT_DEV)) || m->kind == CD_MNT_DEVPTS)
			acc = cd_landlock_fs_dev(abi);
		else if (((m->kind == CD_MNT_BIND || m->kind == CD_MNT_TMPFS) &&
		          (m->flags & CD_MNT_RW)) ||
		         m->kind == CD_MNT_OVERLAY)
			acc = cd_landlock_fs_read(abi) | cd_landlock_fs_write(abi);
		else
			continue;
		p->ll_paths[n].path = m->dest;
		p->ll_paths[n].access = acc;
		p->ll_paths[n++].flags = CD_LANDLOCK_OPTIONAL;
	}
	p->nll = n;
	p->landlock_abi = abi;
	p->landlock.paths = p->ll_paths;
	p->landlock.npaths = n;
	p->landlock.connect_port = (int)p->proxy_port;
	p->landlock.deny_bind = 1;
	p->landlock.scope = cd_landlock_scope_all(abi);
	p->walls |= CD_WALL_LANDLOCK;
	return 0;
}

static int build_seccomp(struct cd_plan *p, const struct cd_seccomp_profile *spec,
                         struct cd_err *err)
{
	struct cd_seccomp_opts so;
	int r;

	if (spec && (r = cd_seccomp_build_profile(spec, &p->seccomp_spec, &p->seccomp_spec_skipped,
	                                          err)) < 0)
		return r;

	memset(&so, 0, sizeof so);
	/* AF_INET stays for loopback inside the empty net namespace (and the
	 * egress proxy later); Landlock and the namespace are the walls there.
	 * In a network namespace cordon did not make (a pod's, no_inet) UDP
	 * would reach the pod's network, which Landlock does not confine. */
	so.allow_net_inet = !p->no_inet;
	so.notify = 1;
	r = cd_seccomp_build(&so, &p->seccomp, err);
	if (r < 0) {
		if (p->allow_degraded)
			return 0;
		return cd_err_prefix(err, "seccomp: ");
	}
	p->walls |= CD_WALL_SECCOMP;
	r = cd_quotas_nocg_prog(&p->seccomp, &p->seccomp_nocg);
	if (r < 0)
		return cd_err_sys(err, r, "seccomp: the program for runs without a memory cgroup");
	return 0;
}

static int build_argv(struct cd_plan *p, const struct cd_plan_opts *o, struct cd_err *err)
{
	size_t i, bytes = 0;
	int r;

	if (!o->argv || !o->argv[0] || !o->argv[0][0])
		return cd_err_set(err, -CD_E_USAGE,
		                  "no command given (cordon run -- CMD [ARG...])");
	for (i = 0; o->argv[i]; i++) {
		bytes += strlen(o->argv[i]) + 1;
		if (bytes > CD_PLAN_MAX_ARGS_BYTES)
			return cd_err_set(err, -CD_E_LIMIT, "command line longer than %lu bytes",
			                  (unsigned long)CD_PLAN_MAX_ARGS_BYTES);
		if ((r = push_str(&p->argv, &p->argc, CD_PLAN_MAX_ARGV, o->argv[i], err)) < 0)
			return r;
	}
	return 0;
}

static int add_scratch(struct cd_plan *p, const struct cd_plan_opts *o, struct cd_err *err)
{
	char host[CD_PATH_MAX];
	int r;

	if (o->scratch_host) {
		struct stat st;

		r = cd_path_canonical(o->scratch_host, host, sizeof host);
		if (r < 0)
			return cd_err_sys(err, r, "--scratch '%s'", o->scratch_host);
		if (stat(host, &st) < 0 || !S_ISDIR(st.st_mode))
			return cd_err_set(err, -CD_E_USAGE, "--scratch '%s' is not a directory",
			                  o->scratch_host);
		if ((r = check_cwd(host, err)) < 0)
			return cd_err_prefix(err, "--scratch: ");
		if (!o->allow_home &&
		    (r = cd_home_check(host, "--scratch", o->caller_home, err)) < 0)
			return r;
		p->scratch_host = strdup(host);
		if (!p->scratch_host)
			return cd_err_set(err, -ENOMEM, "out of memory");
		return add_mount(p, CD_MNT_BIND, CD_MNT_RW, host, SCRATCH_DIR, err);
	}
	if (p->limits.memory && p->limits.scratch_size > p->limits.memory)
		return cd_err_set(
		        err, -CD_E_USAGE,
		        "scratch size %llu is more than the memory limit %llu: a tmpfs is "
		        "held in memory",
		        (unsigned long long)p->limits.scratch_size,
		        (unsigned long long)p->limits.memory);
	r = add_mount(p, CD_MNT_TMPFS, CD_MNT_RW | CD_MNT_EXEC, NULL, SCRATCH_DIR, err);
	if (r == 0) {
		p->mounts[p->nmounts - 1].size = p->limits.scratch_size;
		p->mounts[p->nmounts - 1].mode = 0700;
	}
	return r;
}

/* Proposal mode: the working directory through overlayfs, the real tree
 * the read-only lower layer, the layer on a tmpfs of the caps' size that
 * the child makes inside the sandbox's user namespace: an agent that
 * writes past it gets ENOSPC, never fills the host's disk. */
static int add_overlay(struct cd_plan *p, const char *cwd, int cwd_writable, struct cd_err *err)
{
	struct cd_mount *m;
	int r;

	if (cwd_writable)
		return cd_err_set(err, -CD_E_USAGE,
		                  "proposal mode and a writable workspace exclude each other");
	if (p->limits.propose_size == 0 || p->limits.propose_size > CD_PROPOSE_SIZE_MAX)
		return cd_err_set(err, -CD_E_USAGE, "--propose-size: from 1 byte to %lluG",
		                  (unsigned long long)(CD_PROPOSE_SIZE_MAX / CD_GIB));
	if (p->limits.memory && p->limits.propose_size > p->limits.memory)
		return cd_err_set(err, -CD_E_USAGE,
		                  "--propose-size %llu is more than the memory limit %llu: the "
		                  "layer is a tmpfs, held in memory",
		                  (unsigned long long)p->limits.propose_size,
		                  (unsigned long long)p->limits.memory);
	if (p->limits.propose_inodes < 16 || p->limits.propose_inodes > CD_PROPOSE_INODES_MAX)
		return cd_err_set(err, -CD_E_USAGE, "--propose-inodes: from 16 to %d",
		                  CD_PROPOSE_INODES_MAX);
	if ((r = add_mount(p, CD_MNT_OVERLAY, CD_MNT_RW, cwd, cwd, err)) < 0)
		return r;
	m = &p->mounts[p->nmounts - 1];
	m->size = p->limits.propose_size;
	m->inodes = p->limits.propose_inodes;
	return 0;
}

/* The working directory: with an image's root and inside_cwd a path
 * inside it (nothing bound); else the host directory, resolved once and checked (the child
 * refuses it if it has turned into a symlink since), copied to `cwd`. */
static int set_cwd(struct cd_plan *p, const struct cd_plan_opts *o, char *cwd, struct cd_err *err)
{
	int r;

	if (o->rootfs && o->inside_cwd) {
		if (cd_path_normalize(o->inside_cwd, cwd, CD_PATH_MAX) < 0)
			return cd_err_set(err, -CD_E_USAGE,
			                  "working directory '%s' must be an absolute path",
			                  o->inside_cwd);
	} else {
		if (!o->host_cwd)
			return cd_err_set(err, -CD_E_USAGE, "no working directory");
		r = cd_path_canonical(o->host_cwd, cwd, CD_PATH_MAX);
		if (r < 0)
			return cd_err_sys(err, r, "working directory '%s'", o->host_cwd);
		if ((r = check_cwd(cwd, err)) < 0)
			return r;
		if (!o->allow_home &&
		    (r = cd_home_check(cwd, "working directory", o->caller_home, err)) < 0)
			return r;
	}
	p->cwd = strdup(cwd);
	if (!p->cwd)
		return cd_err_set(err, -ENOMEM, "out of memory");
	return 0;
}

static int build_once(const struct cd_plan_opts *o, struct cd_plan **ret, struct cd_err *err)
{
	char cwd[CD_PATH_MAX];
	struct cd_plan *p;
	size_t i, first_user;
	int r;

	if (o->egress && o->no_inet)
		return cd_err_set(err, -CD_E_USAGE, "egress needs AF_INET sockets (no_inet)");
	p = calloc(1, sizeof *p);
	if (!p)
		return cd_err_set(err, -ENOMEM, "out of memory");
	p->mounts = calloc(CD_PLAN_MAX_MOUNTS, sizeof *p->mounts);
	p->uid = CD_SANDBOX_UID;
	p->gid = CD_SANDBOX_GID;
	p->host_uid = o->host_uid;
	p->host_gid = o->host_gid;
	p->id_slot = o->id_slot;
	p->idmap = o->idmap;
	p->hostname = strdup(o->hostname ? o->hostname : "cordon");
	p->profile = strdup(o->profile ? o->profile : "strict");
	p->allow_degraded = o->allow_degraded;
	p->proxy_port = o->egress ? CD_PROXY_PORT : 0;
	p->no_inet = o->no_inet;
	p->tty = o->tty;
	p->walls = CD_WALL_USERNS | CD_WALL_MOUNTNS | CD_WALL_PIDNS | CD_WALL_NETNS |
	           CD_WALL_IPCNS | CD_WALL_UTSNS | CD_WALL_CGROUPNS | CD_WALL_NNP | CD_WALL_CAPS;
	if (o->limits)
		p->limits = *o->limits;
	else
		cd_limits_default(&p->limits);
	if (!p->mounts || !p->hostname || !p->profile) {
		r = cd_err_set(err, -ENOMEM, "out of memory");
		goto fail;
	}
	if ((r = build_argv(p, o, err)) < 0)
		goto fail;

	if ((r = set_cwd(p, o, cwd, err)) < 0)
		goto fail;
	if (o->rootfs) {
		if ((r = cd_plan_add_rootfs(p, o->rootfs, o->image, err)) < 0)
			goto fail;
	} else {
		for (i = 0; i < CD_ARRAY_SIZE(system_dirs); i++) {
			if ((r = add_host_entry(p, system_dirs[i], err)) < 0)
				goto fail;
		}
		if ((r = add_etc(p, err)) < 0)
			goto fail;
	}
	if ((r = add_dev(p, o->tty, err)) < 0 || (r = add_proc(p, err)) < 0 ||
	    (r = add_scratch(p, o, err)) < 0)
		goto fail;

	first_user = p->nmounts;
	if (o->rootfs && o->inside_cwd) {
		if (o->overlay || o->cwd_writable) {
			r = cd_err_set(err, -CD_E_USAGE,
			               "an image's root has no host working directory to propose "
			               "changes to or write");
			goto fail;
		}
	} else if (o->overlay) {
		if ((r = add_overlay(p, cwd, o->cwd_writable, err)) < 0)
			goto fail;
	} else if ((r = add_mount(p, CD_MNT_BIND, o->cwd_writable ? CD_MNT_RW : 0, cwd, cwd, err)) <
	           0) {
		goto fail;
	}
	if (o->cwd_writable && (r = protect_workspace(p, cwd, err)) < 0)
		goto fail;
	if ((r = add_user_binds(p, o, first_user, err)) < 0 ||
	    (r = cd_plan_add_tmpfs(p, o, first_user, err)) < 0)
		goto fail;
	if ((r = cd_plan_scan_trees(p, first_user, o, err)) < 0)
		goto fail;
	if ((r = hide_private(p, o, err)) < 0)
		goto fail;
	sort_by_depth(p, first_user);
	/* Last: the root and /dev become read-only once populated. */
	if ((r = add_mount(p, CD_MNT_REMOUNT_RO, 0, NULL, "/dev", err)) < 0 ||
	    (r = add_mount(p, CD_MNT_REMOUNT_RO, 0, NULL, "/", err)) < 0 ||
	    (r = cd_plan_check_mount_max(p, err)) < 0)
		goto fail;

	if ((r = build_env(p, o, err)) < 0 || (r = build_path_dirs(p, err)) < 0)
		goto fail;
	if ((r = build_landlock(p, err)) < 0 || (r = build_seccomp(p, o->seccomp_profile, err)) < 0)
		goto fail;
	*ret = p;
	return 0;
fail:
	cd_plan_free(p);
	return r;
}

/* A tree's top moved during the walk (-EAGAIN, tree-root.c): made again, up to 3 times. */
int cd_plan_build(const struct cd_plan_opts *o, struct cd_plan **ret, struct cd_err *err)
{
	int r, tries = 0;

	while ((r = build_once(o, ret, err)) == -EAGAIN && ++tries < 3)
		;
	return r;
}
