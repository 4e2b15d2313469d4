/* fuzz-egress-socks.c — the proxy's SOCKS5 greeting and request parsers
 * on arbitrary bytes.  Invariants: nothing is read past the length (an
 * exact-size heap copy), a request read names a normalized host or a
 * canonical address and a port other than 0, takes no more bytes than it
 * was given, and a complete answer is the same for any longer input with
 * the same start (one byte less: the same answer, or "more"). */
#include "egress/egress-addr.h"
#include "egress/egress-socks.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

const char *cd_fuzz_name = "egress-socks";

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct cd_socks_request rq, again;
	char norm[CD_HOST_MAX];
	unsigned char *copy;
	int r, r2, g, g2, lit;

	copy = calloc(1, size ? size : 1);
	if (!copy)
		return 0;
	if (size)
		memcpy(copy, data, size);
	g = cd_socks_greeting(copy, size, NULL);
	if (g > 0 && (size_t)g > size)
		abort();
	if (size > 0) {
		g2 = cd_socks_greeting(copy, size - 1, NULL);
		if (g2 != CD_SOCKS_MORE && g2 != g)
			abort();
	}
	r = cd_socks_request(copy, size, &rq, NULL);
	if (r > 0) {
		size_t hl = strlen(rq.host);
		if ((size_t)r > size || rq.port == 0 || hl == 0)
			abort();
		lit = cd_addr_literal(rq.host, hl, NULL);
		if (lit < 0)
			abort();
		if (lit == CD_LIT_NAME &&
		    (cd_host_normalize(rq.host, hl, norm, sizeof norm) != (int)hl ||
		     strcmp(norm, rq.host) != 0))
			abort();
	}
	if (size > 0) {
		r2 = cd_socks_request(copy, size - 1, &again, NULL);
		if (r2 != CD_SOCKS_MORE && r2 != r)
			abort();
		if (r2 > 0 && (strcmp(again.host, rq.host) != 0 || again.port != rq.port))
			abort();
	}
	free(copy);
	return 0;
}
