/* fuzz-egress-http.c — the egress proxy's request-head parser and the IP
 * literal recogniser on arbitrary bytes.  Checks invariants: an accepted
 * head parses the same from exactly its own bytes, its host is normalized
 * and no IP literal in an odd spelling, its port is not 0, and every
 * forwarded field lies inside the head; nothing reads past the length. */
#include "egress/egress-addr.h"
#include "egress/egress-http.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

const char *cd_fuzz_name = "egress-http";

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct cd_http_request rq, again;
	char norm[CD_HOST_MAX];
	char *copy;
	size_t i;
	int r, r2;

	/* An exact-size heap copy so that a read past the end is caught. */
	copy = calloc(1, size ? size : 1);
	if (!copy)
		return 0;
	if (size)
		memcpy(copy, data, size);
	r = cd_http_parse_head(copy, size, &rq, NULL);
	if (r > 0) {
		if ((size_t)r > size || (size_t)r != rq.head_len || rq.port == 0)
			abort();
		r2 = cd_http_parse_head(copy, (size_t)r, &again, NULL);
		if (r2 != r || strcmp(again.host, rq.host) != 0 || again.port != rq.port ||
		    strcmp(again.path, rq.path) != 0)
			abort();
		r2 = cd_host_normalize(rq.host, strlen(rq.host), norm, sizeof norm);
		if (r2 < 0 || strcmp(norm, rq.host) != 0)
			abort();
		if (cd_addr_literal(rq.host, strlen(rq.host), NULL) < 0)
			abort();
		for (i = 0; i < rq.nfields; i++)
			if (rq.fields[i].off + rq.fields[i].len > (size_t)r)
				abort();
		if (!rq.is_connect && rq.path[0] != '/')
			abort();
	} else if (r == 0 && size >= CD_EGRESS_HEAD_MAX) {
		abort(); /* a full buffer never waits for more */
	}
	(void)cd_addr_literal(copy, size, NULL);
	free(copy);
	return 0;
}
