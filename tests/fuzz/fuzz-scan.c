/* fuzz-scan.c — the scanner and the masker on arbitrary bytes.  Checks
 * invariants: every finding lies inside the text with a sane confidence,
 * the scan never fails on any input, and masking never fails and leaves
 * no finding of a masked type behind. */
#include "mask/mask.h"
#include "mask/scan.h"

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
	{
		static const unsigned char key[CD_MASK_KEY_BYTES] = { 1 };
		static struct cd_masker *m;
		struct cd_mask_rules r;
		struct cd_buf out;
		unsigned i;

		if (!m && cd_masker_new(key, &m, NULL) < 0)
			abort();
		for (i = 0; i < CD_SCAN_NTYPES; i++)
			r.action[i] = (unsigned char)(((types >> i) & 1) ? 1 + (size % 3) : 0);
		cd_buf_init(&out, 64u << 20);
		if (cd_mask_text(m, &r, (const char *)data, size, &out, NULL) != 0)
			abort();
		cd_buf_release(&out);
	}
	return 0;
}
