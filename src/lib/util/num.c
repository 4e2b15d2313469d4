/* num.c — see num.h. */
#include "num.h"

#include "err.h"

#include <errno.h>
#include <string.h>

int cd_parse_u64(const char *s, size_t len, uint64_t max, uint64_t *ret)
{
	uint64_t v = 0;
	size_t i;

	if (!s || len == 0 || len > 20)
		return -EINVAL;
	for (i = 0; i < len; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -EINVAL;
		if (__builtin_mul_overflow(v, 10, &v) || __builtin_add_overflow(v, s[i] - '0', &v))
			return -ERANGE;
	}
	if (v > max)
		return -ERANGE;
	*ret = v;
	return 0;
}

static size_t digits(const char *s)
{
	size_t n = 0;
	while (s[n] >= '0' && s[n] <= '9')
		n++;
	return n;
}

int cd_parse_size(const char *s, int allow_zero, uint64_t *ret)
{
	static const struct {
		const char *suffix;
		unsigned shift;
	} units[] = {
		{ "", 0 },   { "B", 0 },    { "K", 10 },   { "KiB", 10 }, { "k", 10 },
		{ "M", 20 }, { "MiB", 20 }, { "m", 20 },   { "G", 30 },   { "GiB", 30 },
		{ "g", 30 }, { "T", 40 },   { "TiB", 40 },
	};
	size_t n, i;
	uint64_t v;
	int r;

	if (!s)
		return -EINVAL;
	n = digits(s);
	r = cd_parse_u64(s, n, UINT64_MAX, &v);
	if (r < 0)
		return r;
	for (i = 0; i < sizeof units / sizeof units[0]; i++) {
		if (strcmp(s + n, units[i].suffix) == 0) {
			if (units[i].shift && v > (UINT64_MAX >> units[i].shift))
				return -ERANGE;
			v <<= units[i].shift;
			if (v == 0 && !allow_zero)
				return -EINVAL;
			*ret = v;
			return 0;
		}
	}
	return -EINVAL;
}

int cd_parse_duration_ms(const char *s, uint64_t *ret)
{
	static const struct {
		const char *suffix;
		uint64_t ms;
	} units[] = {
		{ "", 1000 }, { "ms", 1 }, { "s", 1000 }, { "m", 60000 }, { "h", 3600000 },
	};
	size_t n, i;
	uint64_t v;
	int r;

	if (!s)
		return -EINVAL;
	n = digits(s);
	r = cd_parse_u64(s, n, UINT64_MAX, &v);
	if (r < 0)
		return r;
	for (i = 0; i < sizeof units / sizeof units[0]; i++) {
		if (strcmp(s + n, units[i].suffix) == 0) {
			if (__builtin_mul_overflow(v, units[i].ms, &v))
				return -ERANGE;
			if (v == 0)
				return -EINVAL;
			*ret = v;
			return 0;
		}
	}
	return -EINVAL;
}

void cd_hex(const unsigned char *p, size_t n, char *out)
{
	static const char digits[] = "0123456789abcdef";
	size_t i;

	for (i = 0; i < n; i++) {
		out[2 * i] = digits[p[i] >> 4];
		out[2 * i + 1] = digits[p[i] & 15];
	}
	out[2 * n] = '\0';
}

static int nibble(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

int cd_unhex(const char *s, size_t slen, unsigned char *out, size_t n)
{
	size_t i;

	if (!s || slen != 2 * n)
		return -CD_E_PARSE;
	for (i = 0; i < n; i++) {
		int hi = nibble(s[2 * i]), lo = nibble(s[2 * i + 1]);
		if (hi < 0 || lo < 0)
			return -CD_E_PARSE;
		out[i] = (unsigned char)(hi << 4 | lo);
	}
	return 0;
}
