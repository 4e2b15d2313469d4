/* xchg-loop — exchange two paths (renameat2 RENAME_EXCHANGE) in a tight
 * loop, as an attacker racing cordon's checks would, until a stop file
 * exists (looked for every 256 exchanges) or 300 s have passed.  Prints
 * how many exchanges succeeded, so a test can show the race was run.
 *
 *   xchg-loop A B STOPFILE
 *
 * Exits 0, or 2 on a usage error. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#ifndef RENAME_EXCHANGE
#define RENAME_EXCHANGE (1 << 1)
#endif

int main(int argc, char **argv)
{
	unsigned long n = 0, i;
	time_t end = time(NULL) + 300;

	if (argc != 4) {
		fprintf(stderr, "usage: xchg-loop A B STOPFILE\n");
		return 2;
	}
	while (access(argv[3], F_OK) != 0 && time(NULL) < end) {
		for (i = 0; i < 256; i++)
			n += renameat2(AT_FDCWD, argv[1], AT_FDCWD, argv[2], RENAME_EXCHANGE) == 0;
	}
	printf("%lu\n", n);
	return 0;
}
