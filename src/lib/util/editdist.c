/* editdist.c — see editdist.h. */
#include "editdist.h"

#include <string.h>

size_t cd_edit_distance(const char *a, size_t la, const char *b)
{
	size_t lb = strlen(b), i, j, row[CD_EDIT_DISTANCE_MAX + 1];

	if (la > CD_EDIT_DISTANCE_MAX || lb > CD_EDIT_DISTANCE_MAX)
		return CD_EDIT_DISTANCE_FAR;
	for (j = 0; j <= lb; j++)
		row[j] = j;
	for (i = 1; i <= la; i++) {
		size_t prev = row[0], tmp;
		row[0] = i;
		for (j = 1; j <= lb; j++) {
			size_t best = prev + (a[i - 1] != b[j - 1]);
			tmp = row[j];
			if (row[j] + 1 < best)
				best = row[j] + 1;
			if (row[j - 1] + 1 < best)
				best = row[j - 1] + 1;
			row[j] = best;
			prev = tmp;
		}
	}
	return row[lb];
}
