/* editdist.h — how far apart two short names are, for "did you mean"
 * hints (unknown policy keys, unknown command-line options).
 *
 * Trust boundary: both names may come from a user; only their lengths
 * bound the work (names longer than CD_EDIT_DISTANCE_MAX are "far"). */
#ifndef CD_EDITDIST_H
#define CD_EDITDIST_H

#include <stddef.h>

#define CD_EDIT_DISTANCE_MAX 64 /* longer names are never suggested */
#define CD_EDIT_DISTANCE_FAR 99 /* the distance reported for them */

/* The Levenshtein distance between a[0..la) and the string b, or
 * CD_EDIT_DISTANCE_FAR when either is longer than CD_EDIT_DISTANCE_MAX. */
size_t cd_edit_distance(const char *a, size_t la, const char *b);

#endif
