/* scan-int.h — shared between the scanner's files only (not a public
 * API): the pattern table of the recognizers (scan-patterns.c), which the
 * scanner (scan.c) compiles into one vectorscan database and whose
 * validators it calls on each match. */
#ifndef CD_SCAN_INT_H
#define CD_SCAN_INT_H

#include "scan.h"

#include <stddef.h>

/* What a validator sees: the text, the match, and the end of the previous
 * span it judged (a span never starts before it). */
struct cand {
	const char *t;
	size_t len, from, to, floor;
};

struct hit {
	size_t from, to;
	size_t judged; /* a rejecting validator read up to here: skip matches before */
	const char *kind;
	int confidence;
};

typedef int (*validate_fn)(const struct cand *c, struct hit *h);

struct pattern {
	const char *re;
	unsigned flags;
	enum cd_scan_type type;
	validate_fn check;
	const char *kind;
};

/* The table: a pattern's index is its vectorscan id. */
#define CD_SCAN_NPATTERNS 21
extern const struct pattern cd_scan_patterns[CD_SCAN_NPATTERNS];

#endif
