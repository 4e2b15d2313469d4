/* homes.c — the home-directory check of the plan (plan-int.h).
 *
 * A home directory holds the user's credentials wherever the tools of the
 * day put them (.netrc, .git-credentials, .config/gh, a cloud CLI's
 * directory), so a sandbox must not see one by accident: looking for
 * marker directories (.ssh, .aws) misses every new user's home.  The
 * homes are taken from /etc/passwd: every login account's (uid >=
 * UID_MIN of /etc/login.defs, 1000 when unset), root's, and the caller's
 * $HOME.  A path that is one of them, or an ancestor of one, is refused;
 * a directory below a home (~/project) is fine.
 */
#include "plan-int.h"

#include "util/bounds.h"
#include "util/path.h"

#include <ctype.h>
#include <errno.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define UID_MIN_DEFAULT 1000

/* UID_MIN from /etc/login.defs ("UID_MIN <number>"), else 1000. */
static unsigned long uid_min(void)
{
	char line[256];
	unsigned long v = UID_MIN_DEFAULT;
	FILE *f = fopen("/etc/login.defs", "re");

	if (!f)
		return v;
	while (fgets(line, sizeof line, f)) {
		char *s = line, *end;
		unsigned long n;

		while (isspace((unsigned char)*s))
			s++;
		if (strncmp(s, "UID_MIN", 7) != 0 || !isspace((unsigned char)s[7]))
			continue;
		s += 7;
		while (isspace((unsigned char)*s))
			s++;
		errno = 0;
		n = strtoul(s, &end, 10);
		if (errno == 0 && end != s && (*end == '\0' || isspace((unsigned char)*end)))
			v = n;
	}
	fclose(f);
	return v;
}

/* 1 when `path` is `home` (resolved) or one of its ancestors. */
static int covers(const char *path, const char *home)
{
	char canon[CD_PATH_MAX];

	if (!home || home[0] != '/' || cd_path_canonical(home, canon, sizeof canon) < 0)
		return 0; /* no such directory: nothing to expose */
	return cd_path_is_under(canon, path);
}

static int refuse(const char *path, const char *what, const char *home, const char *whose,
                  struct cd_err *err)
{
	return cd_err_set(err, -CD_E_USAGE,
	                  "%s '%s' is or contains the home directory '%s' (%s), whose "
	                  "credentials the sandbox would see; use a project directory below it, "
	                  "or pass --allow-home to hand it over anyway",
	                  what, path, home, whose);
}

int cd_home_check(const char *path, const char *what, const char *caller_home, struct cd_err *err)
{
	unsigned long min = uid_min();
	struct passwd *pw;
	FILE *f;
	int r = 0;

	if (covers(path, caller_home))
		return refuse(path, what, caller_home, "$HOME", err);
	/* fgetpwent: the local accounts, parsed by libc, no NSS modules. */
	f = fopen("/etc/passwd", "re");
	if (!f)
		return cd_err_sys(err, -errno, "cannot read /etc/passwd to find home directories");
	while (r == 0 && (pw = fgetpwent(f))) {
		char whose[96];

		if (pw->pw_uid != 0 && pw->pw_uid < min)
			continue;
		if (!covers(path, pw->pw_dir))
			continue;
		if (snprintf(whose, sizeof whose, "of user %s", pw->pw_name) < 0)
			whose[0] = '\0';
		r = refuse(path, what, pw->pw_dir, whose, err);
	}
	fclose(f);
	return r;
}
