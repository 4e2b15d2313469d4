/* clock-time.c — the one parser and the one formatter of wall-clock times
 * (see clock-time.h).  Input comes from users (--since, --at), policy files
 * and records; every field is range-checked and a time without a zone is
 * refused rather than guessed. */
#include "clock-time.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "num.h"

/* Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant). */
static int64_t days_from_civil(int64_t y, unsigned m, unsigned d)
{
	int64_t era;
	unsigned yoe, doy, doe;

	y -= m <= 2;
	era = (y >= 0 ? y : y - 399) / 400;
	yoe = (unsigned)(y - era * 400);
	doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
	doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
	return era * 146097 + (int64_t)doe - 719468;
}

/* Exactly n digits at s[at..], within len, at most max. */
static int num_at(const char *s, size_t len, size_t at, size_t n, uint64_t max, uint64_t *ret)
{
	if (at + n > len)
		return -EINVAL;
	return cd_parse_u64(s + at, n, max, ret);
}

/* The zone at s[i..len): Z, +HH:MM, +HHMM or +HH (or -); seconds east. */
static int parse_zone(const char *s, size_t len, size_t i, int64_t *ret_east)
{
	uint64_t zh, zm = 0;
	int sign;

	if (len - i == 1 && (s[i] == 'Z' || s[i] == 'z')) {
		*ret_east = 0;
		return 0;
	}
	if (s[i] != '+' && s[i] != '-')
		return -EINVAL;
	sign = s[i] == '-' ? -1 : 1;
	if (num_at(s, len, i + 1, 2, 23, &zh) < 0)
		return -EINVAL;
	i += 3;
	if (i < len && s[i] == ':')
		i++;
	if (i < len && (num_at(s, len, i, 2, 59, &zm) < 0 || (i += 2) != len))
		return -EINVAL;
	if (i != len)
		return -EINVAL;
	*ret_east = sign * (int64_t)(zh * 3600 + zm * 60);
	return 0;
}

/* HH:MM[:SS[.fraction]] then the zone, from s[11]. */
static int parse_clock(const char *s, size_t len, int64_t *ret_sec, int64_t *ret_frac)
{
	uint64_t h, mi, se = 0, frac = 0;
	int64_t east;
	size_t i = 16, nd;

	if (s[13] != ':' || num_at(s, len, 11, 2, 23, &h) < 0 || num_at(s, len, 14, 2, 59, &mi) < 0)
		return -EINVAL;
	if (i < len && s[i] == ':') {
		if (num_at(s, len, 17, 2, 60, &se) < 0)
			return -EINVAL;
		i = 19;
		if (i < len && (s[i] == '.' || s[i] == ',')) {
			for (nd = 0;
			     i + 1 + nd < len && s[i + 1 + nd] >= '0' && s[i + 1 + nd] <= '9'; nd++)
				;
			if (nd == 0 || nd > 9 || cd_parse_u64(s + i + 1, nd, UINT64_MAX, &frac) < 0)
				return -EINVAL;
			i += 1 + nd;
			for (; nd < 9; nd++)
				frac *= 10;
		}
	}
	if (i >= len || parse_zone(s, len, i, &east) < 0)
		return -EINVAL; /* a time of day without a zone is not guessed */
	*ret_sec = (int64_t)(h * 3600 + mi * 60 + se) - east;
	*ret_frac = (int64_t)frac;
	return 0;
}

int cd_time_parse(const char *s, size_t len, int64_t *ret_ns)
{
	static const unsigned mdays[] = { 31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31 };
	uint64_t y, mo, d, v;
	int64_t sec = 0, frac = 0, t;

	if (!s || !ret_ns || len == 0)
		return -EINVAL;
	if (s[0] == '@') {
		if (len < 2 || cd_parse_u64(s + 1, len - 1, (uint64_t)1 << 40, &v) < 0)
			return -EINVAL;
		*ret_ns = (int64_t)v * 1000000000;
		return 0;
	}
	if (len < 10 || num_at(s, len, 0, 4, 9999, &y) < 0 || s[4] != '-' ||
	    num_at(s, len, 5, 2, 12, &mo) < 0 || s[7] != '-' || num_at(s, len, 8, 2, 31, &d) < 0)
		return -EINVAL;
	if (y < 1970 || mo == 0 || d == 0 || d > mdays[mo - 1])
		return -EINVAL;
	if (mo == 2 && d == 29 && !((y % 4 == 0 && y % 100 != 0) || y % 400 == 0))
		return -EINVAL;
	if (len > 10) {
		if ((s[10] != 'T' && s[10] != 't' && s[10] != ' ') || len < 17 ||
		    parse_clock(s, len, &sec, &frac) < 0)
			return -EINVAL;
	}
	t = days_from_civil((int64_t)y, (unsigned)mo, (unsigned)d) * 86400 + sec;
	if (t < 0)
		return -EINVAL;
	*ret_ns = t * 1000000000 + frac;
	return 0;
}

int cd_time_format(int64_t t, char *out, size_t n)
{
	time_t tt = (time_t)t;
	struct tm tm;
	int w;

	if (t < 0 || !gmtime_r(&tt, &tm) || tm.tm_year + 1900 > 9999) {
		w = snprintf(out, n, "@%lld", (long long)t);
		return w < 0 || (size_t)w >= n ? -ERANGE : -EINVAL;
	}
	w = snprintf(out, n, "%04d-%02d-%02dT%02d:%02d:%02dZ", tm.tm_year + 1900, tm.tm_mon + 1,
	             tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec);
	return w < 0 || (size_t)w >= n ? -ERANGE : 0;
}
