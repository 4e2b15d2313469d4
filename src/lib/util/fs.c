/* fs.c — see fs.h. */
#include "fs.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int cd_mkdir_parents(const char *path, struct cd_err *err)
{
	char dir[4096];
	size_t len = strlen(path), i;

	while (len > 0 && path[len - 1] != '/')
		len--;
	if (len <= 1)
		return 0;
	if (len >= sizeof dir)
		return cd_err_set(err, -ENAMETOOLONG, "path too long: '%.64s...'", path);
	memcpy(dir, path, len);
	dir[len] = '\0';
	for (i = 1; i <= len; i++) {
		char c = dir[i];
		if (c != '/' && c != '\0')
			continue;
		dir[i] = '\0';
		if (mkdir(dir, 0700) < 0 && errno != EEXIST)
			return cd_err_sys(err, -errno, "cannot create directory '%s'", dir);
		dir[i] = c;
	}
	return 0;
}

int cd_create_private(const char *path, const char *what, struct cd_err *err)
{
	struct stat st;
	int fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY, 0600);

	if (fd >= 0) {
		close(fd);
		return 0;
	}
	if (errno != EEXIST)
		return cd_err_sys(err, -errno, "%s '%s'", what, path);
	/* An existing file is never opened here: closing any descriptor of a
	 * file drops every POSIX lock this process holds on it, and SQLite's
	 * locks of a connection already open in this process would go with
	 * it (a second connection then corrupts the database).  Only refuse
	 * what O_NOFOLLOW refused before: a symlink. */
	if (lstat(path, &st) < 0)
		return cd_err_sys(err, -errno, "%s '%s'", what, path);
	if (S_ISLNK(st.st_mode))
		return cd_err_set(err, -ELOOP, "%s '%s': is a symbolic link", what, path);
	return 0;
}
