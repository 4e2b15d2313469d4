/* test-userns-why.c — the namespace refusal names its cause: a chroot
 * first, then AppArmor's restriction, then the two sysctls, each by name;
 * and this machine (not a chroot) is read as one. */
#include "../tap.h"

#include "userns-why.h"

#include <string.h>

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

int main(void)
{
	tap_start(30);
	test_order();
	test_hints();
	test_this_machine();
	return tap_done();
}
