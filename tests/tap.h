/* tap.h — the whole C test harness: TAP output for prove.
 *
 * Each unit test is one binary; it prints a plan, one "ok"/"not ok" line per
 * check and exits non-zero when any check failed.  A check that cannot run
 * on this kernel calls tap_skip(); with CORDON_TEST_MUST_WORK=1 (CI) a skip
 * is a failure.  Each binary arms an alarm so a hang fails instead of
 * stalling the whole run. */
#ifndef CD_TAP_H
#define CD_TAP_H

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int tap_n, tap_failed;

static inline void tap_vline(int pass, const char *fmt, va_list ap)
{
	tap_n++;
	if (!pass)
		tap_failed++;
	printf("%sok %d - ", pass ? "" : "not ", tap_n);
	vprintf(fmt, ap);
	printf("\n");
	fflush(stdout);
}

static inline int tap_ok_(int pass, const char *file, int line, const char *fmt, ...)
        __attribute__((format(printf, 4, 5)));
static inline int tap_ok_(int pass, const char *file, int line, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	tap_vline(pass, fmt, ap);
	va_end(ap);
	if (!pass)
		printf("#   failed at %s:%d\n", file, line);
	return pass;
}
#define ok(cond, ...) tap_ok_(!!(cond), __FILE__, __LINE__, __VA_ARGS__)

#define is_int(got, want, ...)                                                                     \
	do {                                                                                       \
		long long g_ = (long long)(got), w_ = (long long)(want);                           \
		if (!ok(g_ == w_, __VA_ARGS__))                                                    \
			printf("#   got %lld, want %lld\n", g_, w_);                               \
	} while (0)

#define is_str(got, want, ...)                                                                     \
	do {                                                                                       \
		const char *g_ = (got), *w_ = (want);                                              \
		if (!ok(g_ && w_ && strcmp(g_, w_) == 0, __VA_ARGS__))                             \
			printf("#   got '%s', want '%s'\n", g_ ? g_ : "(null)",                    \
			       w_ ? w_ : "(null)");                                                \
	} while (0)

static inline void diag(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static inline void diag(const char *fmt, ...)
{
	va_list ap;
	printf("# ");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
}

static inline int tap_must_work(void)
{
	const char *v = getenv("CORDON_TEST_MUST_WORK");
	return v && strcmp(v, "1") == 0;
}

static inline void tap_skip(const char *why)
{
	tap_n++;
	if (tap_must_work()) {
		tap_failed++;
		printf("not ok %d - skipped, but CORDON_TEST_MUST_WORK=1: %s\n", tap_n, why);
	} else {
		printf("ok %d # SKIP %s\n", tap_n, why);
	}
	fflush(stdout);
	/* Listed again at the end of `make check` (scripts/skip-banner.sh). */
	{
		const char *log = getenv("CORDON_SKIP_LOG");
		FILE *f = log && *log ? fopen(log, "ae") : NULL;
		if (f) {
			fprintf(f, "%s: %s\n", program_invocation_short_name, why);
			fclose(f);
		}
	}
}

static inline void tap_start(unsigned timeout_s)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	alarm(timeout_s ? timeout_s : 60);
}

static inline int tap_done(void)
{
	printf("1..%d\n", tap_n);
	if (tap_failed)
		printf("# %d of %d failed\n", tap_failed, tap_n);
	return tap_failed ? 1 : 0;
}

#endif
