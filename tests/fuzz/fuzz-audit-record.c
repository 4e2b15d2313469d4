/* fuzz-audit-record.c — the canonical record decoder and the jsonl writer.
 *
 * Any input that decodes must re-encode to exactly the same bytes (the
 * encoding has one spelling per record) and hash without error; its JSON
 * form must be one line of valid JSON whatever bytes the fields hold. */
#include "audit/audit.h"
#include "util/buf.h"

#include <jansson.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

const char *cd_fuzz_name = "audit-record";

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct cd_audit_entry e;
	struct cd_buf b;
	unsigned char h[CD_AUDIT_HASH_LEN];
	json_t *j;

	if (cd_audit_decode(data, size, &e) < 0)
		return 0;
	cd_buf_init(&b, 64 * 1024 * 1024);
	if (cd_audit_encode(&e, &b) < 0 || b.len != size || memcmp(b.data, data, size) != 0)
		abort();
	if (cd_audit_leaf(&e, h) < 0)
		abort();
	cd_buf_reset(&b);
	if (cd_audit_entry_json(&e, &b) < 0)
		abort();
	if (memchr(b.data, '\n', b.len))
		abort();
	j = json_loadb(b.data, b.len, JSON_ALLOW_NUL, NULL);
	if (!j || !json_is_object(j))
		abort();
	json_decref(j);
	cd_buf_release(&b);
	return 0;
}
