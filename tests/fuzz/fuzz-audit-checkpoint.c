/* fuzz-audit-checkpoint.c — the checkpoint-line parser (lines come from a
 * file that may have been edited by anyone).
 *
 * A line that parses must format back to exactly itself, and checking its
 * signature must neither crash nor accept it under an unrelated key. */
#include "audit/audit.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

const char *cd_fuzz_name = "audit-checkpoint";

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const unsigned char pk[CD_AUDIT_PK_LEN] = { 1, 2, 3 };
	struct cd_audit_checkpoint cp;
	char out[CD_AUDIT_CP_LINE_MAX];

	if (cd_audit_checkpoint_parse((const char *)data, size, &cp) < 0)
		return 0;
	if (cd_audit_checkpoint_format(&cp, out, sizeof out) < 0)
		abort();
	if (strlen(out) != size || memcmp(out, data, size) != 0)
		abort();
	if (cd_audit_checkpoint_check(&cp, pk) == 0)
		abort();
	return 0;
}
