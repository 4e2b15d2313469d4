/* test-buf.c — the capped buffer, the escaper, the number parser and the
 * one time parser and formatter. */
#include "../tap.h"

#include "util/buf.h"
#include "util/clock-time.h"
#include "util/err.h"
#include "util/num.h"

#include <errno.h>

static void test_cap(void)
{
	struct cd_buf b;

	cd_buf_init(&b, 8);
	is_int(cd_buf_puts(&b, "abcd"), 0, "append under the cap");
	is_int(cd_buf_puts(&b, "efgh"), 0, "append up to the cap");
	is_int(cd_buf_putc(&b, 'x'), -CD_E_LIMIT, "append past the cap fails");
	is_int(b.len, 8, "a failed append keeps what was there");
	is_str(b.data, "abcdefgh", "contents intact and NUL-terminated");
	is_int(cd_buf_printf(&b, "%d", 1), -CD_E_LIMIT, "printf past the cap fails");
	cd_buf_release(&b);
}

static void test_escape(void)
{
	static const struct {
		const char *in;
		size_t len;
		const char *want;
	} cases[] = {
		{ "plain", 5, "plain" },
		{ "a\nb\tc\\", 6, "a\\nb\\tc\\\\" },
		{ "\x1b[2J", 4, "\\x1b[2J" },
		{ "caf\xc3\xa9", 5, "caf\xc3\xa9" },
		{ "\xc3", 1, "\\xc3" },
		{ "\xc0\xaf", 2, "\\xc0\\xaf" },          /* overlong '/' */
		{ "\xed\xa0\x80", 3, "\\xed\\xa0\\x80" }, /* surrogate */
		{ "\xc2\x9b", 2, "\\xc2\\x9b" },          /* C1 CSI */
		{ "\xe2\x80\xae", 3, "\\xe2\\x80\\xae" }, /* RTL override */
		{ "a\0b", 3, "a\\x00b" },
		{ "\x7f", 1, "\\x7f" },
	};
	size_t i;

	for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		struct cd_buf b;
		cd_buf_init(&b, 256);
		cd_buf_escape(&b, cases[i].in, cases[i].len);
		is_str(b.data, cases[i].want, "escape case %zu", i);
		cd_buf_release(&b);
	}
}

static void test_num(void)
{
	uint64_t v = 0;

	is_int(cd_parse_u64("123", 3, 1000, &v), 0, "u64 parses");
	is_int(v, 123, "u64 value");
	is_int(cd_parse_u64("-1", 2, 1000, &v), -EINVAL, "sign refused");
	is_int(cd_parse_u64(" 1", 2, 1000, &v), -EINVAL, "space refused");
	is_int(cd_parse_u64("1001", 4, 1000, &v), -ERANGE, "above max refused");
	is_int(cd_parse_u64("99999999999999999999", 20, UINT64_MAX, &v), -ERANGE,
	       "overflow refused");
	is_int(cd_parse_u64("", 0, 10, &v), -EINVAL, "empty refused");
	is_int(cd_parse_size("512M", 0, &v), 0, "size 512M");
	is_int(v, 512ULL << 20, "512M value");
	is_int(cd_parse_size("2GiB", 0, &v), 0, "size 2GiB");
	is_int(v, 2ULL << 30, "2GiB value");
	is_int(cd_parse_size("0", 0, &v), -EINVAL, "size 0 refused");
	is_int(cd_parse_size("12X", 0, &v), -EINVAL, "bad suffix refused");
	is_int(cd_parse_size("99999999999T", 0, &v), -ERANGE, "size overflow refused");
	is_int(cd_parse_duration_ms("30s", &v), 0, "duration 30s");
	is_int(v, 30000, "30s value");
	is_int(cd_parse_duration_ms("250ms", &v), 0, "duration 250ms");
	is_int(v, 250, "250ms value");
	is_int(cd_parse_duration_ms("5", &v), 0, "bare duration is seconds");
	is_int(v, 5000, "5 value");
	is_int(cd_parse_duration_ms("1.5s", &v), -EINVAL, "fractions refused");
}

/* Every form a user, `date` or a policy writes; -1 for refused. */
static void test_time(void)
{
	static const struct {
		const char *in;
		long long want; /* seconds; -1: refused */
	} cases[] = {
		{ "2030-01-01", 1893456000 },
		{ "2030-01-01T00:00:00Z", 1893456000 },
		{ "2030-01-01t00:00:00z", 1893456000 },
		{ "2030-01-01 00:00:00Z", 1893456000 },
		{ "2030-01-01T00:00:00+00:00", 1893456000 }, /* date -u -Iseconds */
		{ "2030-01-01T01:00:00+01:00", 1893456000 }, /* date -Iseconds */
		{ "2029-12-31T19:00:00-05:00", 1893456000 },
		{ "2030-01-01T05:30:00+0530", 1893456000 },
		{ "2030-01-01T02:00:00+02", 1893456000 },
		{ "2030-01-01T00:00Z", 1893456000 },
		{ "2030-01-01T00:00:00.5Z", 1893456000 },
		{ "2030-01-01T00:00:00,25+00:00", 1893456000 },
		{ "@1893456000", 1893456000 },
		{ "@0", 0 },
		{ "2024-02-29", 1709164800 },
		{ "2030-01-01T00:00:00", -1 }, /* no zone: not guessed */
		{ "2030-01-01T00:00:00+", -1 },
		{ "2030-01-01T00:00:00+24:00", -1 },
		{ "2030-01-01T00:00:00+01:60", -1 },
		{ "2030-01-01T00:00:00+01:00x", -1 },
		{ "2030-01-01T24:00:00Z", -1 },
		{ "2030-01-01T00:00:00.Z", -1 },
		{ "2023-02-29", -1 },
		{ "2030-04-31", -1 },
		{ "1969-12-31", -1 },
		{ "1970-01-01T00:00:00+01:00", -1 }, /* before the epoch */
		{ "2030-1-01", -1 },
		{ "@", -1 },
		{ "@-1", -1 },
		{ "", -1 },
		{ "tomorrow", -1 },
	};
	char out[32];
	size_t i;

	for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		int64_t ns = -1;
		int r = cd_time_parse(cases[i].in, strlen(cases[i].in), &ns);
		if (cases[i].want < 0)
			is_int(r, -EINVAL, "time '%s' refused", cases[i].in);
		else
			ok(r == 0 && ns / 1000000000 == cases[i].want, "time '%s' = @%lld",
			   cases[i].in, cases[i].want);
	}
	is_int(cd_time_format(1893456000, out, sizeof out), 0, "format a time");
	is_str(out, "2030-01-01T00:00:00Z", "formatted as ISO 8601 UTC");
	is_int(cd_time_format(1893456000, out, 20), -ERANGE, "too small a buffer is refused");
	is_int(cd_time_format(-1, out, sizeof out), -EINVAL, "a time before 1970 is not formatted");
}

int main(void)
{
	tap_start(30);
	test_cap();
	test_escape();
	test_num();
	test_time();
	return tap_done();
}
