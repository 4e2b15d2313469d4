/* test-fs.c — cd_create_private: a missing file is made 0600, a symlink is
 * refused, and an existing file is never opened, so the POSIX locks this
 * process holds on it (SQLite's, for a connection already open) survive. */
#include "../tap.h"

#include "util/err.h"
#include "util/fs.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

/* 1 when another process sees a write lock on byte 0 of path. */
static int locked_elsewhere(const char *path)
{
	pid_t pid = fork();
	int status;

	if (pid == 0) {
		struct flock fl = {
			.l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = 0, .l_len = 1
		};
		int fd = open(path, O_RDWR);
		if (fd < 0 || fcntl(fd, F_GETLK, &fl) < 0)
			_exit(2);
		_exit(fl.l_type == F_UNLCK ? 0 : 1);
	}
	if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
		return -1;
	return WEXITSTATUS(status);
}

int main(void)
{
	char dir[] = "/tmp/cordon-test-fs.XXXXXX", path[64], link[64];
	struct cd_err err = { 0 };
	struct stat st;

	tap_start(30);
	if (!mkdtemp(dir))
		return 1;
	snprintf(path, sizeof path, "%s/db", dir);
	snprintf(link, sizeof link, "%s/link", dir);

	is_int(cd_create_private(path, "test", &err), 0, "a missing file is created");
	ok(stat(path, &st) == 0 && (st.st_mode & 0777) == 0600, "... mode 0600");

	int fd = open(path, O_RDWR);
	struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = 0, .l_len = 1 };
	ok(fd >= 0 && fcntl(fd, F_SETLK, &fl) == 0, "this process locks the file");
	is_int(locked_elsewhere(path), 1, "another process sees the lock");
	is_int(cd_create_private(path, "test", &err), 0, "an existing file is accepted");
	is_int(locked_elsewhere(path), 1, "... and this process's lock survives it");

	ok(symlink(path, link) == 0, "a symlink to it");
	is_int(cd_create_private(link, "test", &err), -ELOOP, "a symlink is refused");

	close(fd);
	unlink(link);
	unlink(path);
	rmdir(dir);
	return tap_done();
}
