/* userns-why.c — why a user namespace was refused (see userns-why.h). */
#include "userns-why.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

/* Where the sysctls are read: /proc, or a test's stand-in. */
static char proc_root[256] = "/proc";

int cd_userns_set_proc_root(const char *dir)
{
	int n = snprintf(proc_root, sizeof proc_root, "%s", dir);

	if (n < 0 || (size_t)n >= sizeof proc_root) {
		memcpy(proc_root, "/proc", sizeof "/proc");
		return -ENAMETOOLONG;
	}
	return 0;
}

int cd_in_chroot(void)
{
	struct stat a, b;

	if (stat("/", &a) < 0 || stat("/proc/1/root/.", &b) < 0)
		return -1;
	return a.st_dev != b.st_dev || a.st_ino != b.st_ino;
}

/* The sysctl NAME (below proc_root/sys/), first line; "" when absent. */
static void read_value(const char *name, char *buf, size_t n)
{
	char path[512];
	FILE *f;
	int r = snprintf(path, sizeof path, "%s/sys/%s", proc_root, name);

	buf[0] = '\0';
	if (r < 0 || (size_t)r >= sizeof path || !(f = fopen(path, "re")))
		return;
	if (!fgets(buf, (int)n, f))
		buf[0] = '\0';
	fclose(f);
	buf[strcspn(buf, "\n")] = '\0';
}

void cd_userns_facts_read(struct cd_userns_facts *f)
{
	f->chroot = cd_in_chroot();
	read_value("kernel/apparmor_restrict_unprivileged_userns", f->apparmor, sizeof f->apparmor);
	read_value("kernel/unprivileged_userns_clone", f->clone, sizeof f->clone);
	read_value("user/max_user_namespaces", f->max, sizeof f->max);
}

enum cd_userns_cause cd_userns_classify(const struct cd_userns_facts *f)
{
	if (f->chroot == 1)
		return CD_USERNS_CHROOT;
	if (!strcmp(f->apparmor, "1"))
		return CD_USERNS_APPARMOR;
	if (!strcmp(f->clone, "0"))
		return CD_USERNS_CLONE;
	if (!strcmp(f->max, "0"))
		return CD_USERNS_MAX;
	return CD_USERNS_UNKNOWN;
}

const char *cd_userns_hint(enum cd_userns_cause c)
{
	switch (c) {
	case CD_USERNS_CHROOT:
		return "this is a chroot, where the kernel forbids user namespaces: enter the root "
		       "with pivot_root in a new mount namespace (unshare -m, pivot_root), or run "
		       "cordon outside it";
	case CD_USERNS_APPARMOR:
		return "AppArmor restricts unprivileged user namespaces "
		       "(kernel.apparmor_restrict_unprivileged_userns=1): load cordon's AppArmor "
		       "profile, which grants them to /usr/bin/cordon and /usr/local/bin/cordon: "
		       "as root, apparmor_parser -r " CD_APPARMOR_PROFILE " (the cordon package "
		       "installs it; from a source tree, first: install -m 0644 "
		       "packaging/apparmor/cordon " CD_APPARMOR_PROFILE
		       "), or sysctl -w kernel.apparmor_restrict_unprivileged_userns=0";
	case CD_USERNS_CLONE:
		return "kernel.unprivileged_userns_clone=0: sysctl -w "
		       "kernel.unprivileged_userns_clone=1 (and in /etc/sysctl.d/ to keep it)";
	case CD_USERNS_MAX:
		return "user.max_user_namespaces=0: sysctl -w user.max_user_namespaces=15000 (and "
		       "in /etc/sysctl.d/ to keep it)";
	case CD_USERNS_UNKNOWN:
		break;
	}
	return "not a chroot, AppArmor or a sysctl: check the container or seccomp policy cordon "
	       "runs under: it refuses unshare(CLONE_NEWUSER)";
}
