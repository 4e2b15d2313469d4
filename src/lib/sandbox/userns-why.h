/* userns-why.h — why this machine refuses a user namespace, named in the
 * order a user can act on it: a chroot (the kernel forbids user namespaces
 * there), Ubuntu's AppArmor restriction, the Debian sysctl, the limit.
 *
 * Trust boundary: reads /proc only (or a test's stand-in for its sysctls);
 * what it reads picks a message, never a path or a decision. */
#ifndef CD_USERNS_WHY_H
#define CD_USERNS_WHY_H

#include <stddef.h>

/* Where cordon's AppArmor profile is installed (packaging/apparmor/cordon
 * in the source tree): it grants user namespaces to the installed binary. */
#define CD_APPARMOR_PROFILE "/etc/apparmor.d/cordon"

enum cd_userns_cause {
	CD_USERNS_UNKNOWN,  /* none of the below: a container or seccomp policy */
	CD_USERNS_CHROOT,   /* / is not pid 1's root */
	CD_USERNS_APPARMOR, /* kernel.apparmor_restrict_unprivileged_userns=1 */
	CD_USERNS_CLONE,    /* kernel.unprivileged_userns_clone=0 */
	CD_USERNS_MAX,      /* user.max_user_namespaces=0 */
};

/* What the classifier looks at; the sysctls as read ("" when absent). */
struct cd_userns_facts {
	int chroot; /* 1, 0, or -1 unknown (pid 1's root unreadable) */
	char apparmor[16];
	char clone[16];
	char max[16];
};

/* Whether / is not the root of pid 1 (a chroot): 1, 0, or -1 unknown. */
int cd_in_chroot(void);

/* Read the sysctls below DIR/sys instead of /proc/sys (tests stand in for
 * a restricting host this way; a message is all it changes): 0, or
 * -ENAMETOOLONG and /proc kept.  The chroot check always reads /proc. */
int cd_userns_set_proc_root(const char *dir);

/* Read the facts from this machine. */
void cd_userns_facts_read(struct cd_userns_facts *f);

/* The first cause that holds, in the order of the header comment. */
enum cd_userns_cause cd_userns_classify(const struct cd_userns_facts *f);

/* One clause: the cause and how to fix it, for after "cannot create ...: ". */
const char *cd_userns_hint(enum cd_userns_cause c);

#endif
