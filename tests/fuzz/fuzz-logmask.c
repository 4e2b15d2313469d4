/* fuzz-logmask.c — audit-record minimization and `cordon log confirm` on
 * arbitrary details JSON (a record read back from the log is untrusted).
 * Checks invariants: minimizing never fails on a JSON object, leaves no
 * plain hash member behind, always attaches commitments, and its output
 * is JSON that the confirm reader walks without error; the confirm reader
 * accepts any JSON without crashing. */
#include "mask/logmask.h"

#include <jansson.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

const char *cd_fuzz_name = "logmask";

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void none(void *ctx, const char *in, const char *type)
{
	(void)ctx;
	(void)in;
	(void)type;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const unsigned char key[CD_MASK_KEY_BYTES] = { 3 };
	static struct cd_masker *m;
	struct cd_mask_rules r;
	struct cd_record rec;
	json_t *d, *keep = NULL;
	unsigned i, types;
	char *s;

	if (!m && cd_masker_new(key, &m, NULL) < 0)
		abort();
	d = json_loadb((const char *)data, size, JSON_DECODE_ANY, NULL);
	if (!d)
		return 0;
	/* The reader first: any JSON at all, as a record's details. */
	(void)cd_logmask_confirm(m, d, "bob@example.com", 15, NULL, none, NULL);
	(void)cd_logmask_confirm(m, d, "0123456789abcdef0123456789abcdef", 32, "argv", none, NULL);
	if (!json_is_object(d)) {
		json_decref(d);
		return 0;
	}
	types = size ? data[size - 1] : 0;
	for (i = 0; i < CD_SCAN_NTYPES; i++)
		r.action[i] = (unsigned char)(((types >> i) & 1) ? 1 + (size % 3) : 0);
	r.action[CD_SCAN_EMAIL] = CD_MASK_REDACT; /* always active */
	memset(&rec, 0, sizeof rec);
	rec.target = json_string_value(json_object_get(d, "target"));
	rec.argv_sha256 = json_string_value(json_object_get(d, "argv_sha256"));
	if (cd_logmask_record(m, &r, &rec, d, &keep) != 0)
		abort();
	if (!json_object_get(d, "commitments") || json_object_get(d, "args_sha256") ||
	    json_object_get(d, "arguments_sha256") || json_object_get(d, "result_sha256") ||
	    rec.argv_sha256)
		abort();
	s = json_dumps(d, JSON_COMPACT);
	if (!s)
		abort();
	if (cd_logmask_confirm(m, d, "x", 1, NULL, none, NULL) < 0)
		abort();
	free(s);
	json_decref(keep);
	json_decref(d);
	return 0;
}
