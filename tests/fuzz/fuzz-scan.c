/* fuzz-scan.c — the scanner on arbitrary bytes.  Checks invariants: every
 * finding lies inside the text with a sane confidence, and the scan never
 * fails on any input. */
#include "scan.h"

#include <stdint.h>
#include <stdlib.h>

const char *cd_fuzz_name = "scan";

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static size_t limit;

static int check(void *ctx, const struct cd_finding *f)
{
	(void)ctx;
	if (f->from > f->to || f->to > limit || f->confidence < 1 || f->confidence > 100 ||
	    !cd_scan_type_name(f->type) || !f->kind)
		abort();
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct cd_scanner *s;
	unsigned types;

	if (!s && cd_scanner_new(&s, NULL) < 0)
		abort();
	limit = size;
	/* The first byte picks the types, as grants do. */
	types = size ? data[0] : 0;
	if (cd_scan(s, (const char *)data, size, CD_SCAN_ALL, check, NULL) != 0)
		abort();
	if (cd_scan(s, (const char *)data, size, types, check, NULL) != 0)
		abort();
	return 0;
}
