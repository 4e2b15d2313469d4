/* num.h — the one checked number parser.  Every number that comes from a
 * user, a file or a peer goes through here: decimal digits only, no sign,
 * no whitespace, overflow refused.  And hex, both ways. */
#ifndef CD_NUM_H
#define CD_NUM_H

#include <stddef.h>
#include <stdint.h>

/* Parse exactly `len` bytes of decimal digits.  -EINVAL for anything else
 * (empty, sign, space, trailing junk), -ERANGE past `max`. */
int cd_parse_u64(const char *s, size_t len, uint64_t max, uint64_t *ret);

/* A NUL-terminated size with an optional binary suffix: "512", "64K",
 * "512M", "2G" (also "KiB", "MiB", "GiB").  0 is refused unless allow_zero. */
int cd_parse_size(const char *s, int allow_zero, uint64_t *ret);

/* A NUL-terminated duration: "250ms", "30s", "5m", "2h"; a bare number is
 * seconds.  Result in milliseconds. */
int cd_parse_duration_ms(const char *s, uint64_t *ret);

/* Lower-case hex of n bytes into out (2n+1 bytes). */
void cd_hex(const unsigned char *p, size_t n, char *out);
/* Exactly 2n lower-case hex characters -> n bytes; -CD_E_PARSE otherwise. */
int cd_unhex(const char *s, size_t slen, unsigned char *out, size_t n);

#endif
