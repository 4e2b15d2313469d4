/* fuzz-egress-tls.c — the proxy's ClientHello SNI reader on arbitrary
 * bytes.  Invariants: nothing is read past the length (an exact-size heap
 * copy), a name found is normalized, a complete answer is the same for
 * any longer input with the same start, and a refusal stays a refusal. */
#include "egress/egress-tls.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

const char *cd_fuzz_name = "egress-tls";

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char name[CD_HOST_MAX], norm[CD_HOST_MAX], again[CD_HOST_MAX];
	unsigned char *copy;
	int r, r2;

	copy = calloc(1, size ? size : 1);
	if (!copy)
		return 0;
	if (size)
		memcpy(copy, data, size);
	r = cd_tls_client_hello_sni(copy, size, name, sizeof name, NULL);
	if (r == CD_TLS_SNI) {
		if (cd_host_normalize(name, strlen(name), norm, sizeof norm) < 0 ||
		    strcmp(norm, name) != 0)
			abort();
	}
	if (size > 0) {
		/* One byte less: the same answer, or "more", never another one. */
		r2 = cd_tls_client_hello_sni(copy, size - 1, again, sizeof again, NULL);
		if (r2 != CD_TLS_MORE && r2 != r)
			abort();
		if (r2 == CD_TLS_SNI && strcmp(again, name) != 0)
			abort();
	}
	if (r == CD_TLS_MORE && size >= CD_TLS_RECORD_MAX)
		abort(); /* a full record never waits for more */
	free(copy);
	return 0;
}
