/* clock-time.h — the one parser and the one formatter of wall-clock times:
 * every time a user, a policy or a record gives is read by cd_time_parse,
 * every time shown is written by cd_time_format (ISO 8601, UTC). */
#ifndef CD_CLOCK_TIME_H
#define CD_CLOCK_TIME_H

#include <stddef.h>
#include <stdint.h>

/* Parse s[0..len) into nanoseconds since the epoch:
 *   @SECONDS                               seconds since the epoch
 *   YYYY-MM-DD                             00:00:00 UTC of that day
 *   YYYY-MM-DDTHH:MM[:SS[.FRACTION]]ZONE   (T, t or a space), ZONE one of
 *                                          Z, +HH:MM, -HH:MM, +HHMM, +HH
 * so `date -u -Iseconds`, `date -Iseconds` and RFC 3339 all parse.  A time
 * of day without a zone is refused (never guessed as local or UTC), as is
 * a field out of range, a day the month lacks and a time before 1970.
 * 0 or -EINVAL. */
int cd_time_parse(const char *s, size_t len, int64_t *ret_ns);

/* t (seconds since the epoch) as "YYYY-MM-DDTHH:MM:SSZ" into out (21
 * bytes suffice).  0; -EINVAL when t is out of range (before 1970 or past
 * 9999: out holds "@SECONDS" then), -ERANGE when out is too small. */
int cd_time_format(int64_t t, char *out, size_t n);

#endif
