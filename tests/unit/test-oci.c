/* test-oci.c — config.json read and checked (oci-spec.c), mapped onto
 * the plan's options (oci-plan.c), and the plan built on an image's root
 * (plan-rootfs.c): nothing of the host's system directories, the image's
 * entries read-only, cordon's /proc, /dev and /tmp. */
#include "../tap.h"

#include "oci/oci-spec.h"
#include "sandbox/plan.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define NS                                                                                         \
	"\"namespaces\":[{\"type\":\"pid\"},{\"type\":\"network\"},{\"type\":\"ipc\"},"            \
	"{\"type\":\"uts\"},{\"type\":\"mount\"}]"

static int parse(const char *text, struct cd_oci_spec *s, struct cd_err *err)
{
	return cd_oci_spec_parse(text, strlen(text), "/bundle", s, err);
}

static void test_good(void)
{
	static const char text[] =
	        "{\"ociVersion\":\"1.0.2\",\"root\":{\"path\":\"rootfs\"},"
	        "\"process\":{\"args\":[\"/bin/sh\",\"-c\",\"x\"],\"env\":[\"A=1\"],\"cwd\":\"/w/"
	        "../x\","
	        "\"user\":{\"uid\":0,\"gid\":0},\"capabilities\":{\"bounding\":[\"CAP_CHOWN\","
	        "\"CAP_KILL\"]},\"rlimits\":[{\"type\":\"RLIMIT_NOFILE\",\"hard\":100,\"soft\":50}]"
	        "},"
	        "\"hostname\":\"h1\",\"mounts\":[{\"destination\":\"/proc\",\"type\":\"proc\"},"
	        "{\"destination\":\"/run\",\"type\":\"tmpfs\",\"source\":\"tmpfs\"},"
	        "{\"destination\":\"/"
	        "data\",\"type\":\"bind\",\"source\":\"vol\",\"options\":[\"rbind\","
	        "\"ro\"]}],\"linux\":{" NS ",\"resources\":{\"memory\":{\"limit\":1048576},"
	        "\"pids\":{\"limit\":10},\"cpu\":{\"quota\":50000,\"period\":100000}},"
	        "\"cgroupsPath\":\"/k/"
	        "x\"},\"annotations\":{\"cordon.agent\":\"a1\",\"other\":\"v\"}}";
	struct cd_oci_spec s;
	struct cd_err err = { 0, "" };
	struct cd_plan_opts po;
	struct cd_limits lim;
	struct cd_plan_bind *binds = NULL;
	const char **tmpfs = NULL;

	if (!ok(parse(text, &s, &err) == 0, "containerd-like spec parses (%s)", err.msg))
		return;
	is_str(s.root, "/bundle/rootfs", "root.path is taken against the bundle");
	is_str(s.cwd, "/x", "cwd is normalized");
	is_str(s.args[2], "x", "args");
	is_int((int)s.nenv, 1, "env");
	is_int((int)s.ncaps_dropped, 2, "the two capabilities asked for are counted as dropped");
	is_int((int)s.nofile, 100, "RLIMIT_NOFILE hard");
	is_str(s.hostname, "h1", "hostname");
	is_int(s.terminal, 0, "no terminal unless asked");
	is_str(s.cgroup_at, "/k/x", "cgroupsPath: where the container's cgroup is made");
	is_str(s.agent, "a1", "annotation cordon.agent");
	ok(s.policy == NULL, "no cordon.policy annotation");
	is_int((int)s.cpu_pct, 50, "cpu quota/period in percent");
	is_int((int)s.mounts[0].use, CD_OCI_MNT_CORDON, "/proc is cordon's own");
	is_int((int)s.mounts[1].use, CD_OCI_MNT_TMPFS, "/run is a tmpfs");
	is_int((int)s.mounts[2].use, CD_OCI_MNT_BIND, "/data is a bind");
	is_str(s.mounts[2].src, "/bundle/vol",
	       "a relative bind source is taken against the bundle");
	is_int(s.mounts[2].rw, 0, "ro bind");
	memset(&po, 0, sizeof po);
	is_int(cd_oci_plan_opts(&s, &po, &lim, &binds, &tmpfs, &err), 0, "plan options");
	is_int((int)po.nbinds, 1, "one bind");
	is_int(po.binds_plain, 1, "the spec's binds are plain: never idmapped to the caller");
	is_int((int)po.ntmpfs, 1, "one tmpfs");
	is_int((int)lim.memory, 1048576, "the spec's memory limit");
	is_int((int)lim.pids, 10, "the spec's pids limit");
	is_int((int)lim.nofile, 100, "RLIMIT_NOFILE: the lower of the spec's and cordon's");
	ok(lim.timeout_ms == 0 && lim.output_limit == 0, "no wall clock, no output cap");
	free(binds);
	free(tmpfs);
	cd_oci_spec_free(&s);
}

static void refused(const char *what, const char *process, const char *linux_part,
                    const char *extra, int code, const char *want)
{
	char text[4096];
	struct cd_oci_spec s;
	struct cd_err err = { 0, "" };
	int r;

	snprintf(text, sizeof text,
	         "{\"ociVersion\":\"1.0.2\",\"root\":{\"path\":\"/r\"},\"process\":{%s},"
	         "\"linux\":{%s}%s}",
	         process, linux_part, extra);
	r = parse(text, &s, &err);
	is_int(r, code, "%s: refused", what);
	ok(strstr(err.msg, want) != NULL, "%s: says '%s' (%s)", what, want, err.msg);
	if (r == 0)
		cd_oci_spec_free(&s);
}

static void test_terminal(void)
{
	static const char text[] = "{\"ociVersion\":\"1.0.2\",\"root\":{\"path\":\"r\"},"
	                           "\"process\":{\"args\":[\"sh\"],\"terminal\":true},"
	                           "\"linux\":{" NS "}}";
	struct cd_oci_spec s;
	struct cd_err err = { 0, "" };

	if (!ok(parse(text, &s, &err) == 0, "process.terminal true is accepted (%s)", err.msg))
		return;
	is_int(s.terminal, 1, "and asks for a terminal");
	cd_oci_spec_free(&s);
}

static void test_hostns(void)
{
	struct stat own, fake, file;

	if (!ok(stat("/proc/self/ns/net", &own) == 0, "own network namespace"))
		return;
	is_int(cd_oci_ns_is_host(&own, "net"), 1, "the caller's own namespace is the host's");
	fake = own;
	fake.st_ino = 0xEFFFFFF9UL;
	is_int(cd_oci_ns_is_host(&fake, "net"), 1,
	       "the kernel's fixed number of the initial network namespace is the host's");
	fake.st_ino = 0xEFFFFFFFUL;
	is_int(cd_oci_ns_is_host(&fake, "ipc"), 1, "and of the initial IPC namespace");
	if (stat("/", &file) == 0)
		ok(cd_oci_ns_is_host(&file, "net") != 1,
		   "another file is not the host's namespace");
}

static void cgroup_case(const char *path, int code, const char *want)
{
	char text[512];
	struct cd_oci_spec s;
	struct cd_err err = { 0, "" };
	int r;

	snprintf(text, sizeof text,
	         "{\"ociVersion\":\"1.0.2\",\"root\":{\"path\":\"r\"},\"process\":{\"args\":["
	         "\"x\"]},\"linux\":{" NS ",\"cgroupsPath\":\"%s\"}}",
	         path);
	r = parse(text, &s, &err);
	is_int(r, code, "cgroupsPath %s (%s)", path, err.msg);
	if (r == 0) {
		if (want)
			is_str(s.cgroup_at, want, "cgroupsPath %s is placed at %s", path, want);
		else
			ok(s.cgroup_at == NULL, "cgroupsPath %s: recorded, not placed", path);
		cd_oci_spec_free(&s);
	}
}

static void test_cgroups(void)
{
	cgroup_case("kubepods/burstable/pod-1/abc", 0, "/kubepods/burstable/pod-1/abc");
	cgroup_case("//a//b/", 0, "/a/b");
	cgroup_case("system.slice:cri-containerd:abc", 0, NULL);
	cgroup_case("/a/../b", -CD_E_DENIED, NULL);
	cgroup_case("/..", -CD_E_DENIED, NULL);
	cgroup_case("/a/./b", -CD_E_DENIED, NULL);
	cgroup_case("/a/b c", -CD_E_DENIED, NULL);
	cgroup_case("/", -CD_E_PARSE, NULL);
}

static void test_refusals(void)
{
	static const char *const P = "\"args\":[\"/bin/true\"]";

	refused("CAP_SYS_ADMIN",
	        "\"args\":[\"x\"],\"capabilities\":{\"permitted\":[\"CAP_SYS_ADMIN\"]}", NS, "",
	        -CD_E_DENIED, "CAP_SYS_ADMIN");
	refused("CAP_NET_ADMIN",
	        "\"args\":[\"x\"],\"capabilities\":{\"bounding\":[\"CAP_NET_ADMIN\"]}", NS, "",
	        -CD_E_DENIED, "refuses privileged containers: capability CAP_NET_ADMIN");
	refused("no network namespace", P,
	        "\"namespaces\":[{\"type\":\"pid\"},{\"type\":\"ipc\"},{\"type\":\"uts\"},"
	        "{\"type\":\"mount\"}]",
	        "", -CD_E_DENIED, "no network namespace");
	refused("no namespaces at all", P, "\"x\":1", "", -CD_E_PARSE, "linux.namespaces must be");
	refused("host pid namespace by path", P,
	        "\"namespaces\":[{\"type\":\"pid\",\"path\":\"/proc/self/ns/pid\"}]", "",
	        -CD_E_DENIED, "joins the host's");
	refused("a device", P, NS ",\"devices\":[{\"path\":\"/dev/mem\"}]", "", -CD_E_DENIED,
	        "device /dev/mem");
	refused("id mappings", P, NS ",\"uidMappings\":[]", "", -CD_E_DENIED, "uidMappings");
	refused("hooks", P, NS, ",\"hooks\":{\"prestart\":[]}", -CD_E_DENIED, "hooks");
	refused("terminal not a boolean", "\"args\":[\"x\"],\"terminal\":1", NS, "", -CD_E_PARSE,
	        "process.terminal");
	refused("empty args", "\"args\":[]", NS, "", -CD_E_PARSE, "process.args");
	refused("args with a NUL", "\"args\":[\"a\\u0000b\"]", NS, "", -CD_E_PARSE, "NUL");
	refused("env without '='", "\"args\":[\"x\"],\"env\":[\"NOEQ\"]", NS, "", -CD_E_PARSE,
	        "NAME=VALUE");
	refused("relative cwd", "\"args\":[\"x\"],\"cwd\":\"w\"", NS, "", -CD_E_PARSE,
	        "process.cwd");
	refused("soft rlimit above hard",
	        "\"args\":[\"x\"],\"rlimits\":[{\"type\":\"RLIMIT_NOFILE\",\"hard\":1,\"soft\":2}]",
	        NS, "", -CD_E_PARSE, "soft");
	refused("an nfs mount", P, NS,
	        ",\"mounts\":[{\"destination\":\"/m\",\"type\":\"nfs\",\"source\":\"h:/\"}]",
	        -CD_E_DENIED, "type nfs");
	refused("a mount over /", P, NS,
	        ",\"mounts\":[{\"destination\":\"/\",\"type\":\"bind\",\"source\":\"/\","
	        "\"options\":[\"rbind\"]}]",
	        -CD_E_DENIED, "over '/'");
	refused("a bind of the host's /dev", P, NS,
	        ",\"mounts\":[{\"destination\":\"/hdev\",\"type\":\"bind\",\"source\":\"/dev\","
	        "\"options\":[\"rbind\",\"rw\"]}]",
	        -CD_E_DENIED, "binds the host's /dev");
	refused("a bind under the host's /proc, by a path relative to the bundle", P, NS,
	        ",\"mounts\":[{\"destination\":\"/p\",\"source\":\"../proc/1\","
	        "\"options\":[\"bind\"]}]",
	        -CD_E_DENIED, "binds the host's /proc/1");
	refused("a bind of the host's /sys", P, NS,
	        ",\"mounts\":[{\"destination\":\"/s\",\"source\":\"/sys\","
	        "\"options\":[\"rbind\",\"ro\"]}]",
	        -CD_E_DENIED, "binds the host's /sys");
	refused("annotations not strings", P, NS, ",\"annotations\":{\"a\":1}", -CD_E_PARSE,
	        "annotations");
	refused("ociVersion 2", P, NS, ",\"ociVersion\":\"2.0\"", -CD_E_PARSE, "");
}

/* A pod's container: network, IPC and UTS by path are kept (and checked
 * when opened); no IP sockets in a network namespace not cordon's. */
static void test_pod(void)
{
	static const char text[] =
	        "{\"ociVersion\":\"1.0.2\",\"root\":{\"path\":\"/r\"},"
	        "\"process\":{\"args\":[\"x\"]},\"linux\":{\"namespaces\":[{\"type\":\"pid\"},"
	        "{\"type\":\"network\",\"path\":\"/var/run/netns/cni-1\"},{\"type\":\"ipc\","
	        "\"path\":\"/run/pod7/ipc\"},{\"type\":\"uts\",\"path\":\"/run/pod7/uts\"},"
	        "{\"type\":\"mount\"}]}}";
	struct cd_oci_spec s;
	struct cd_err err = { 0, "" };
	struct cd_plan_opts po;
	struct cd_limits lim;
	struct cd_plan_bind *binds = NULL;
	const char **tmpfs = NULL;

	if (!ok(parse(text, &s, &err) == 0, "a pod's container parses (%s)", err.msg))
		return;
	is_str(s.ns_path[CD_OCI_NS_NET], "/var/run/netns/cni-1", "the pod's network by path");
	is_str(s.ns_path[CD_OCI_NS_IPC], "/run/pod7/ipc", "the pod's IPC by path");
	is_str(s.ns_path[CD_OCI_NS_UTS], "/run/pod7/uts", "the pod's UTS by path");
	memset(&po, 0, sizeof po);
	is_int(cd_oci_plan_opts(&s, &po, &lim, &binds, &tmpfs, &err), 0, "plan options");
	is_int(po.no_inet, 1, "no IP sockets in the pod's network namespace");
	free(binds);
	free(tmpfs);
	cd_oci_spec_free(&s);
}

static void test_pod_refusals(void)
{
	static const char *const P = "\"args\":[\"/bin/true\"]";

	refused("user namespace by path", P,
	        "\"namespaces\":[{\"type\":\"user\",\"path\":\"/run/pod7/user\"}]", "",
	        -CD_E_DENIED, "never joins another's");
	refused("mount namespace by path", P,
	        "\"namespaces\":[{\"type\":\"mount\",\"path\":\"/run/pod7/mnt\"}]", "",
	        -CD_E_DENIED, "never enters another's mounts");
	refused("pid namespace by path", P,
	        "\"namespaces\":[{\"type\":\"pid\",\"path\":\"/run/pod7/pid\"}]", "", -CD_E_DENIED,
	        "shareProcessNamespace is not supported");
	refused("cgroup namespace by path", P,
	        "\"namespaces\":[{\"type\":\"cgroup\",\"path\":\"/run/pod7/cgroup\"}]", "",
	        -CD_E_DENIED, "cordon makes that namespace itself");
	refused("network namespace given twice", P,
	        "\"namespaces\":[{\"type\":\"network\",\"path\":\"/a\"},{\"type\":"
	        "\"network\",\"path\":\"/b\"}]",
	        "", -CD_E_PARSE, "without a type given twice");
	refused("a relative namespace path", P,
	        "\"namespaces\":[{\"type\":\"network\",\"path\":\"netns\"}]", "", -CD_E_PARSE,
	        "an absolute path");
	refused("the host's network namespace by path", P,
	        "\"namespaces\":[{\"type\":\"network\",\"path\":\"/proc/self/ns/net\"}]", "",
	        -CD_E_DENIED, "joins the host's");
}

/* linux.seccomp: read into a profile the sandbox stacks on cordon's. */
static void test_seccomp(void)
{
	static const char text[] =
	        "{\"ociVersion\":\"1.0.2\",\"root\":{\"path\":\"/r\"},"
	        "\"process\":{\"args\":[\"x\"]},\"linux\":{" NS ",\"seccomp\":{"
	        "\"defaultAction\":\"SCMP_ACT_ERRNO\",\"defaultErrnoRet\":38,"
	        "\"architectures\":[\"SCMP_ARCH_X86_64\"],\"syscalls\":[{\"names\":[\"read\","
	        "\"write\"],\"action\":\"SCMP_ACT_ALLOW\"},{\"names\":[\"personality\"],"
	        "\"action\":\"SCMP_ACT_ALLOW\",\"args\":[{\"index\":0,\"value\":8,\"op\":"
	        "\"SCMP_CMP_EQ\"}]},{\"names\":[\"ptrace\"],\"action\":\"SCMP_ACT_TRACE\"}]}}}";
	static const char *const P = "\"args\":[\"/bin/true\"]";
	struct cd_oci_spec s;
	struct cd_err err = { 0, "" };
	struct cd_plan_opts po;
	struct cd_limits lim;
	struct cd_plan_bind *binds = NULL;
	const char **tmpfs = NULL;

	if (!ok(parse(text, &s, &err) == 0, "a spec with a seccomp profile parses (%s)", err.msg))
		return;
	ok(s.seccomp && s.seccomp->def == CD_SCP_ERRNO && s.seccomp->def_errno == 38,
	   "default action errno 38");
	is_int(s.seccomp ? (int)s.seccomp->nrules : -1, 4, "one rule per name");
	ok(s.seccomp && s.seccomp->rules[2].nargs == 1 &&
	           s.seccomp->rules[2].args[0].op == CD_SCP_EQ &&
	           s.seccomp->rules[2].args[0].value == 8,
	   "personality's argument condition");
	ok(s.seccomp && s.seccomp->rules[3].act == CD_SCP_ERRNO &&
	           s.seccomp->rules[3].errno_ret == ENOSYS,
	   "SCMP_ACT_TRACE without a tracer: errno ENOSYS");
	memset(&po, 0, sizeof po);
	is_int(cd_oci_plan_opts(&s, &po, &lim, &binds, &tmpfs, &err), 0, "plan options");
	ok(po.seccomp_profile == s.seccomp, "the profile goes to the plan");
	free(binds);
	free(tmpfs);
	cd_oci_spec_free(&s);
	refused("SCMP_ACT_NOTIFY", P, NS ",\"seccomp\":{\"defaultAction\":\"SCMP_ACT_NOTIFY\"}", "",
	        -CD_E_DENIED, "SCMP_ACT_NOTIFY hands");
	refused("a listenerPath", P,
	        NS ",\"seccomp\":{\"defaultAction\":\"SCMP_ACT_ALLOW\",\"listenerPath\":\"/s\"}",
	        "", -CD_E_DENIED, "listenerPath");
	refused("an unknown action", P, NS ",\"seccomp\":{\"defaultAction\":\"SCMP_ACT_WIDEN\"}",
	        "", -CD_E_PARSE, "unknown action 'SCMP_ACT_WIDEN'");
	refused("an unknown operator", P,
	        NS ",\"seccomp\":{\"defaultAction\":\"SCMP_ACT_ALLOW\",\"syscalls\":[{\"names\":["
	           "\"read\"],\"action\":\"SCMP_ACT_ERRNO\",\"args\":[{\"index\":0,\"value\":1,"
	           "\"op\":\"SCMP_CMP_ANY\"}]}]}",
	        "", -CD_E_PARSE, "an SCMP_CMP_ name");
	refused("an argument index 6", P,
	        NS ",\"seccomp\":{\"defaultAction\":\"SCMP_ACT_ALLOW\",\"syscalls\":[{\"names\":["
	           "\"read\"],\"action\":\"SCMP_ACT_ERRNO\",\"args\":[{\"index\":6,\"value\":1,"
	           "\"op\":\"SCMP_CMP_EQ\"}]}]}",
	        "", -CD_E_PARSE, "index 0-5");
	refused("no default action", P, NS ",\"seccomp\":{}", "", -CD_E_PARSE, "an action name");
}

static void test_rootfs_plan(const char *dir)
{
	char root[256], path[300];
	struct cd_plan_opts o;
	struct cd_plan *p = NULL;
	struct cd_err err = { 0, "" };
	char *argv[] = { "/bin/sh", NULL };
	int host_usr = 0, img_bin = 0, proc = 0, tmp = 0, rw = 0, link = 0;
	size_t i;

	snprintf(root, sizeof root, "%s/rootfs", dir);
	mkdir(root, 0755);
	snprintf(path, sizeof path, "%s/bin", root);
	mkdir(path, 0755);
	snprintf(path, sizeof path, "%s/proc", root);
	mkdir(path, 0755);
	snprintf(path, sizeof path, "%s/lib", root);
	if (symlink("usr/lib", path) < 0 && errno != EEXIST)
		diag("symlink: %s", strerror(errno));
	memset(&o, 0, sizeof o);
	o.argv = argv;
	o.rootfs = root;
	o.inside_cwd = "/bin";
	o.host_uid = getuid();
	o.host_gid = getgid();
	o.allow_degraded = 1;
	if (!ok(cd_plan_build(&o, &p, &err) == 0, "a plan on an image's root (%s)", err.msg))
		return;
	is_str(p->cwd, "/bin", "the working directory is inside the image");
	for (i = 0; i < p->nmounts; i++) {
		const struct cd_mount *m = &p->mounts[i];

		if (m->kind == CD_MNT_BIND && strcmp(m->dest, "/usr") == 0)
			host_usr = 1;
		if (m->kind == CD_MNT_BIND && strcmp(m->dest, "/bin") == 0 &&
		    strncmp(m->src, root, strlen(root)) == 0)
			img_bin = 1;
		if (m->kind == CD_MNT_BIND && strncmp(m->src, root, strlen(root)) == 0 &&
		    (m->flags & CD_MNT_RW))
			rw = 1;
		if (m->kind == CD_MNT_SYMLINK && strcmp(m->dest, "/lib") == 0)
			link = 1;
		if (m->kind == CD_MNT_PROC)
			proc++;
		if (m->kind == CD_MNT_BIND && strcmp(m->dest, "/proc") == 0)
			proc += 10;
		if (m->kind == CD_MNT_TMPFS && strcmp(m->dest, "/tmp") == 0)
			tmp = 1;
	}
	ok(!host_usr, "nothing of the host's /usr");
	ok(img_bin, "the image's /bin is bound");
	ok(!rw, "every entry of the image is read-only");
	ok(link, "a top-level symlink is recreated");
	is_int(proc, 1, "/proc is cordon's, the image's is not bound");
	ok(tmp, "cordon's /tmp");
	ok(strcmp(p->rootfs, root) == 0, "the plan names the root");
	cd_plan_free(p);
	/* The OCI runtime's binds: plain (CD_MNT_PLAIN), the image's entries
	 * are not. */
	{
		struct cd_plan_bind b = { dir, "/vol", 1 };
		int plain_vol = 0, plain_img = 0;

		o.binds = &b;
		o.nbinds = 1;
		o.binds_plain = 1;
		if (ok(cd_plan_build(&o, &p, &err) == 0, "a plan with a plain bind (%s)",
		       err.msg)) {
			for (i = 0; i < p->nmounts; i++) {
				const struct cd_mount *m = &p->mounts[i];

				if (strcmp(m->dest, "/vol") == 0)
					plain_vol = (m->flags & (CD_MNT_PLAIN | CD_MNT_RW)) ==
					            (CD_MNT_PLAIN | CD_MNT_RW);
				else if (m->flags & CD_MNT_PLAIN)
					plain_img = 1;
			}
			ok(plain_vol, "the bind is plain and writable");
			ok(!plain_img, "nothing else is plain");
			cd_plan_free(p);
		}
		o.binds = NULL;
		o.nbinds = 0;
	}
	o.rootfs = "/";
	is_int(cd_plan_build(&o, &p, &err), -CD_E_USAGE, "the host's own root is refused");
}

int main(void)
{
	char tmpl[] = "/tmp/cordon-test-oci.XXXXXX";
	char *dir;

	tap_start(30);
	test_good();
	test_refusals();
	test_terminal();
	test_hostns();
	test_cgroups();
	test_pod();
	test_pod_refusals();
	test_seccomp();
	dir = mkdtemp(tmpl);
	if (dir) {
		static const char *const made[] = { "rootfs/bin", "rootfs/proc", "rootfs/lib",
			                            "rootfs" };
		char path[300];
		size_t i;

		test_rootfs_plan(dir);
		for (i = 0; i < sizeof made / sizeof made[0]; i++) {
			snprintf(path, sizeof path, "%s/%s", dir, made[i]);
			if (unlink(path) < 0)
				rmdir(path);
		}
		rmdir(dir);
	}
	return tap_done();
}
