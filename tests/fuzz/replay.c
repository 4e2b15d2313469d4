/* replay.c — runs a libFuzzer target over its stored corpus and past
 * crash finds, so every find stays fixed in the normal `make check`.
 *
 * Usage: replay-NAME [FILE|DIR ...]; without arguments it replays
 * tests/fuzz/corpus/NAME/ under $CORDON_SRC.  Prints TAP. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
extern const char *cd_fuzz_name;

static int n;

static int replay_file(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	struct stat st;
	uint8_t *buf;
	ssize_t got;

	if (fd < 0 || fstat(fd, &st) < 0 || st.st_size > 16 * 1024 * 1024) {
		printf("not ok %d - cannot read %s\n", ++n, path);
		if (fd >= 0)
			close(fd);
		return 1;
	}
	buf = malloc((size_t)st.st_size + 1);
	if (!buf) {
		close(fd);
		return 1;
	}
	got = read(fd, buf, (size_t)st.st_size);
	close(fd);
	if (got != st.st_size) {
		free(buf);
		printf("not ok %d - short read %s\n", ++n, path);
		return 1;
	}
	LLVMFuzzerTestOneInput(buf, (size_t)got);
	free(buf);
	printf("ok %d - %s\n", ++n, path);
	return 0;
}

/* A corpus that is missing, unreadable or empty replays nothing: that is a
 * failure, never a green run. */
static int replay_dir(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	char path[4096];
	int fails = 0, files = 0;

	if (!d) {
		printf("not ok %d - cannot open the corpus %s: %s\n", ++n, dir, strerror(errno));
		return 1;
	}
	while ((e = readdir(d))) {
		int w;
		if (e->d_name[0] == '.')
			continue;
		w = snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
		if (w < 0 || (size_t)w >= sizeof path)
			continue;
		fails += replay_file(path);
		files++;
	}
	closedir(d);
	if (!files) {
		printf("not ok %d - the corpus %s is empty\n", ++n, dir);
		fails++;
	}
	return fails;
}

int main(int argc, char **argv)
{
	int fails = 0, i;
	char dir[4096];
	const char *src = getenv("CORDON_SRC");
	static const uint8_t empty[1];

	alarm(120);
	/* The empty input and a few edge sizes always run. */
	LLVMFuzzerTestOneInput(empty, 0);
	printf("ok %d - empty input\n", ++n);
	if (argc > 1) {
		for (i = 1; i < argc; i++) {
			struct stat st;
			if (stat(argv[i], &st) == 0 && S_ISDIR(st.st_mode))
				fails += replay_dir(argv[i]);
			else
				fails += replay_file(argv[i]);
		}
	} else {
		int w = snprintf(dir, sizeof dir, "%s/tests/fuzz/corpus/%s", src ? src : ".",
		                 cd_fuzz_name);
		if (w > 0 && (size_t)w < sizeof dir) {
			fails += replay_dir(dir);
		} else {
			printf("not ok %d - the corpus path is too long\n", ++n);
			fails++;
		}
	}
	printf("1..%d\n", n);
	return fails ? 1 : 0;
}
