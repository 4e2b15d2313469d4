/* fuzz-policy-host.c — the host normalizer, host matcher, path
 * canonicalizer and glob matcher on arbitrary bytes.  Checks invariants:
 * a normalized host normalizes to itself and is ASCII (IDNA), a valid
 * pattern matches its own normalization, a canonical path is a fixed
 * point, and neither ever reads past its length. */
#include "policy/match-host.h"
#include "util/match.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

const char *cd_fuzz_name = "policy-host";

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char out[CD_HOST_MAX], again[CD_HOST_MAX], path[4096], path2[4096];
	char *copy;
	const char *split;
	int r, r2;

	r = cd_host_normalize((const char *)data, size, out, sizeof out);
	if (r >= 0) {
		r2 = cd_host_normalize(out, (size_t)r, again, sizeof again);
		if (r2 != r || memcmp(out, again, (size_t)r) != 0)
			abort();
		if (!cd_host_match(out, out))
			abort();
		/* An IDNA result is ASCII; a valid pattern matches what it
		 * normalizes to (a U-label pattern its A-label). */
		for (r2 = 0; r2 < r; r2++)
			if ((unsigned char)out[r2] >= 0x80)
				abort();
		copy = malloc(size + 1);
		if (!copy)
			return 0;
		memcpy(copy, data, size);
		copy[size] = '\0';
		if (strlen(copy) == size && cd_host_pattern_valid(copy) == 0 &&
		    !cd_host_match(copy, out))
			abort();
		free(copy);
	}
	r = cd_path_canon((const char *)data, size, path, sizeof path);
	if (r >= 0) {
		r2 = cd_path_canon(path, (size_t)r, path2, sizeof path2);
		if (r2 != r || memcmp(path, path2, (size_t)r) != 0)
			abort();
	}
	/* "glob\npath": match the two halves. */
	copy = malloc(size + 1);
	if (!copy)
		return 0;
	memcpy(copy, data, size);
	copy[size] = '\0';
	split = memchr(copy, '\n', size);
	if (split) {
		copy[split - copy] = '\0';
		if (cd_glob_valid(copy, NULL) == 0)
			(void)cd_glob_match(copy, split + 1);
		(void)cd_host_match(copy, split + 1);
	}
	free(copy);
	return 0;
}
