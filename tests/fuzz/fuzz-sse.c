/* fuzz-sse.c — the event-stream parser (http/client-sse.c) on arbitrary
 * bytes.  Invariants: nothing is read past the length (an exact-size heap
 * copy), every event has data within the cap and NUL-terminated, an id
 * within CD_SSE_ID_MAX, a retry within 0..CD_SSE_RETRY_MAX_MS or -1; and
 * the same bytes fed whole or split in two give the same events. */
#include "http/client.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

const char *cd_fuzz_name = "sse";

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define EV_MAX 256

struct seen {
	uint64_t hash;
	size_t n;
};

static int check(void *ctx, const struct cd_sse_event *ev)
{
	struct seen *s = ctx;
	size_t i;

	if (!ev->data_len || ev->data_len > EV_MAX || ev->data[ev->data_len] != '\0' ||
	    strlen(ev->id) > CD_SSE_ID_MAX || ev->retry_ms < -1 ||
	    ev->retry_ms > CD_SSE_RETRY_MAX_MS || !ev->type[0])
		abort();
	for (i = 0; i < ev->data_len; i++)
		s->hash = s->hash * 1099511628211ULL + (unsigned char)ev->data[i];
	for (i = 0; ev->id[i]; i++)
		s->hash = s->hash * 31 + (unsigned char)ev->id[i];
	s->n++;
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct cd_sse a, b;
	struct seen x = { 0, 0 }, y = { 0, 0 };
	char *copy = malloc(size ? size : 1);
	size_t cut = size ? data[0] % size : 0;
	int ra, rb;

	if (!copy)
		return 0;
	if (size)
		memcpy(copy, data, size);
	cd_sse_init(&a, 512, EV_MAX);
	cd_sse_init(&b, 512, EV_MAX);
	ra = cd_sse_feed(&a, copy, size, check, &x);
	rb = cd_sse_feed(&b, copy, cut, check, &y);
	if (rb == 0)
		rb = cd_sse_feed(&b, copy + cut, size - cut, check, &y);
	if (ra != rb || (ra == 0 && (x.n != y.n || x.hash != y.hash)))
		abort();
	cd_sse_release(&a);
	cd_sse_release(&b);
	free(copy);
	return 0;
}
