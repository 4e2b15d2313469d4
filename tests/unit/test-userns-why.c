/* test-userns-why.c — the namespace refusal names its cause: a chroot
 * first, then AppArmor's restriction, then the two sysctls, each by name;
 * and this machine (not a chroot) is read as one; a test's stand-in for
 * /proc is read instead of it (an Ubuntu host, restricted). */
#include "../tap.h"

#include "sandbox/userns-why.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static void facts(struct cd_userns_facts *f, int chroot, const char *apparmor, const char *clone,
                  const char *max)
{
	memset(f, 0, sizeof *f);
	f->chroot = chroot;
	snprintf(f->apparmor, sizeof f->apparmor, "%s", apparmor);
	snprintf(f->clone, sizeof f->clone, "%s", clone);
	snprintf(f->max, sizeof f->max, "%s", max);
}

static void test_order(void)
{
	struct cd_userns_facts f;

	facts(&f, 1, "1", "0", "0");
	is_int(cd_userns_classify(&f), CD_USERNS_CHROOT, "a chroot is named before any sysctl");
	facts(&f, 0, "1", "0", "0");
	is_int(cd_userns_classify(&f), CD_USERNS_APPARMOR, "then AppArmor's restriction");
	facts(&f, -1, "1", "", "");
	is_int(cd_userns_classify(&f), CD_USERNS_APPARMOR, "an unknown root is not a chroot");
	facts(&f, 0, "0", "0", "0");
	is_int(cd_userns_classify(&f), CD_USERNS_CLONE, "then unprivileged_userns_clone=0");
	facts(&f, 0, "", "1", "0");
	is_int(cd_userns_classify(&f), CD_USERNS_MAX, "then max_user_namespaces=0");
	facts(&f, 0, "", "", "15000");
	is_int(cd_userns_classify(&f), CD_USERNS_UNKNOWN, "none of them: unknown");
	facts(&f, 0, "0", "1", "15000");
	is_int(cd_userns_classify(&f), CD_USERNS_UNKNOWN, "permissive values: unknown");
}

static void test_hints(void)
{
	ok(strstr(cd_userns_hint(CD_USERNS_CHROOT), "chroot, where the kernel forbids user "
	                                            "namespaces") != NULL,
	   "the chroot hint says a chroot forbids user namespaces");
	ok(strstr(cd_userns_hint(CD_USERNS_CHROOT), "AppArmor") == NULL &&
	           strstr(cd_userns_hint(CD_USERNS_CHROOT), "sysctl") == NULL,
	   "and blames neither AppArmor nor a sysctl");
	ok(strstr(cd_userns_hint(CD_USERNS_APPARMOR),
	          "kernel.apparmor_restrict_unprivileged_userns=1") != NULL,
	   "the AppArmor hint names the restriction");
	ok(strstr(cd_userns_hint(CD_USERNS_APPARMOR),
	          "apparmor_parser -r /etc/apparmor.d/cordon") &&
	           strstr(cd_userns_hint(CD_USERNS_APPARMOR),
	                  "install -m 0644 packaging/apparmor/cordon /etc/apparmor.d/cordon"),
	   "and the profile: where it is, how to install and load it");
	ok(strstr(cd_userns_hint(CD_USERNS_CLONE), "kernel.unprivileged_userns_clone=0") != NULL,
	   "the clone hint names the sysctl");
	ok(strstr(cd_userns_hint(CD_USERNS_MAX), "user.max_user_namespaces=0") != NULL,
	   "the limit hint names the sysctl");
	ok(strstr(cd_userns_hint(CD_USERNS_UNKNOWN), "seccomp") != NULL,
	   "the unknown hint points at the container or seccomp policy");
}

static void test_this_machine(void)
{
	struct cd_userns_facts f;

	cd_userns_facts_read(&f);
	ok(f.chroot == 0 || f.chroot == -1,
	   "this machine is not read as a chroot (%d; -1 where pid 1's root is hidden)", f.chroot);
	ok(strchr(f.max, '\n') == NULL, "values are read without their newline");
}

static void put(const char *dir, const char *name, const char *value)
{
	char p[512];
	FILE *f;

	snprintf(p, sizeof p, "%s/%s", dir, name);
	f = fopen(p, "w");
	if (f) {
		fputs(value, f);
		fclose(f);
	}
}

static void test_proc_root(void)
{
	static const char *const tree[] = {
		"sys/kernel/apparmor_restrict_unprivileged_userns",
		"sys/user/max_user_namespaces",
		"sys/kernel",
		"sys/user",
		"sys",
		"",
	};
	char dir[] = "/tmp/test-userns-why.XXXXXX", sub[128], big[300];
	struct cd_userns_facts f;

	if (!mkdtemp(dir)) {
		ok(0, "mkdtemp");
		return;
	}
	snprintf(sub, sizeof sub, "%s/sys", dir);
	mkdir(sub, 0755);
	snprintf(sub, sizeof sub, "%s/sys/kernel", dir);
	mkdir(sub, 0755);
	snprintf(sub, sizeof sub, "%s/sys/user", dir);
	mkdir(sub, 0755);
	put(dir, "sys/kernel/apparmor_restrict_unprivileged_userns", "1\n");
	put(dir, "sys/user/max_user_namespaces", "0\n");
	is_int(cd_userns_set_proc_root(dir), 0, "a stand-in for /proc is taken");
	cd_userns_facts_read(&f);
	is_str(f.apparmor, "1", "its AppArmor restriction is read");
	is_str(f.clone, "", "a sysctl it lacks reads as absent");
	is_int(cd_userns_classify(&f), CD_USERNS_APPARMOR, "and named first");
	memset(big, 'a', sizeof big - 1);
	big[sizeof big - 1] = '\0';
	is_int(cd_userns_set_proc_root(big), -ENAMETOOLONG, "a stand-in too long is refused");
	cd_userns_facts_read(&f);
	ok(strcmp(f.max, "0") != 0, "and /proc is read again (max_user_namespaces '%s')", f.max);
	put(dir, "sys/kernel/apparmor_restrict_unprivileged_userns", "0\n");
	cd_userns_set_proc_root(dir);
	cd_userns_facts_read(&f);
	is_int(cd_userns_classify(&f), CD_USERNS_MAX, "0 there: the next cause is named");
	cd_userns_set_proc_root("/proc");
	for (size_t i = 0; i < sizeof tree / sizeof tree[0]; i++) {
		snprintf(sub, sizeof sub, "%s/%s", dir, tree[i]);
		if (unlink(sub) < 0)
			rmdir(sub);
	}
}

int main(void)
{
	tap_start(30);
	test_order();
	test_hints();
	test_this_machine();
	test_proc_root();
	return tap_done();
}
