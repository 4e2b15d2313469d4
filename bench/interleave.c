/* interleave.c — start-to-exit times of several commands measured in turns:
 * every command once per round, round after round, the order rotated each
 * round.  On a shared machine whose load changes from minute to minute,
 * back-to-back batches of one command (hyperfine's way) measure the load
 * as much as the command; in turns, every command sees the same load.
 *
 *   cc -O2 -o interleave bench/interleave.c
 *   ./interleave ROUNDS 'CMD ARG...' 'CMD ARG...' ...
 *
 * Each command string is split on spaces (no quoting).  stdin and stdout
 * are /dev/null, stderr is kept.  Five warm-up rounds are not counted.
 * Prints min, p10, p25, the median and p99 in ms per command, and with
 * INTERLEAVE_BASE=K (0-based) the median and p99 as ratios to command K's;
 * a command that exits non-zero is reported on stderr (its time still
 * counts). */
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>

extern char **environ;

#define WARMUP  5
#define MAXARGS 64

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static int by_value(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* One run of argv: its wall time in ms, or a negative value when it could
 * not be started. */
static double run_once(char *const *argv, const posix_spawn_file_actions_t *fa)
{
	double t0 = now_ms();
	pid_t pid;
	int st;

	if (posix_spawnp(&pid, argv[0], fa, NULL, argv, environ) != 0)
		return -1;
	if (waitpid(pid, &st, 0) < 0)
		return -1;
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
		fprintf(stderr, "%s: status %d\n", argv[0], st);
	return now_ms() - t0;
}

int main(int argc, char **argv)
{
	posix_spawn_file_actions_t fa;
	int rounds, ncmd, c, i, base;
	char ***cmds;
	double **t;

	if (argc < 3 || (rounds = atoi(argv[1])) < 1) {
		fprintf(stderr, "usage: interleave ROUNDS 'CMD ARG...' ...\n");
		return 2;
	}
	ncmd = argc - 2;
	cmds = calloc((size_t)ncmd, sizeof *cmds);
	t = calloc((size_t)ncmd, sizeof *t);
	if (!cmds || !t)
		return 1;
	for (c = 0; c < ncmd; c++) {
		char *s = strdup(argv[c + 2]), *tok, *save = NULL;
		int k = 0;
		cmds[c] = calloc(MAXARGS + 1, sizeof **cmds);
		t[c] = calloc((size_t)rounds, sizeof **t);
		if (!s || !cmds[c] || !t[c])
			return 1;
		for (tok = strtok_r(s, " ", &save); tok && k < MAXARGS; tok = strtok_r(NULL, " ", &save))
			cmds[c][k++] = tok;
		if (!k) {
			fprintf(stderr, "an empty command\n");
			return 2;
		}
	}
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
	for (i = 0; i < WARMUP; i++)
		for (c = 0; c < ncmd; c++)
			run_once(cmds[c], &fa);
	for (i = 0; i < rounds; i++) {
		for (c = 0; c < ncmd; c++) {
			int k = (c + i) % ncmd; /* rotate who goes first */
			if ((t[k][i] = run_once(cmds[k], &fa)) < 0) {
				fprintf(stderr, "cannot start %s\n", cmds[k][0]);
				return 1;
			}
		}
	}
	for (c = 0; c < ncmd; c++)
		qsort(t[c], (size_t)rounds, sizeof **t, by_value);
	base = getenv("INTERLEAVE_BASE") ? atoi(getenv("INTERLEAVE_BASE")) : -1;
	for (c = 0; c < ncmd; c++) {
		int p99 = rounds * 99 / 100 < rounds ? rounds * 99 / 100 : rounds - 1;
		printf("%8.2f min %8.2f p10 %8.2f p25 %8.2f median %8.2f p99", t[c][0],
		       t[c][rounds / 10], t[c][rounds / 4], t[c][rounds / 2], t[c][p99]);
		if (base >= 0 && base < ncmd)
			printf("  %5.2fx %5.2fx", t[c][rounds / 2] / t[base][rounds / 2],
			       t[c][p99] / t[base][p99]);
		printf("  %s\n", argv[c + 2]);
	}
	return 0;
}
