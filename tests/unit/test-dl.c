/* test-dl.c — libraries loaded on first use: a table fills, a missing
 * symbol or library is an error naming it and leaves no slot set. */
#include "../tap.h"

#include "util/dl.h"
#include "util/err.h"

#include <math.h>
#include <string.h>

static __typeof__(cos) *p_cos;
static __typeof__(sqrt) *p_sqrt;
static void *p_no_such_symbol_here;

static void test_loads(void)
{
	struct cd_err err = { 0 };
	const struct cd_dl_sym syms[] = { CD_DL_SYM(cos), CD_DL_SYM(sqrt) };

	is_int(cd_dl_load("libm.so.6", NULL, syms, 2, &err), 0, "libm loads");
	ok(p_cos && p_cos(0.0) == 1.0, "cos resolved and callable");
	ok(p_sqrt && p_sqrt(4.0) == 2.0, "sqrt resolved and callable");
	is_int(cd_dl_load("libm.so.6", NULL, syms, 2, &err), 0, "a second load is a no-op");
}

static void test_missing(void)
{
	struct cd_err err = { 0 };
	void *p_cos2 = NULL;
	const struct cd_dl_sym bad[] = { { "cos", &p_cos2 }, CD_DL_SYM(no_such_symbol_here) };

	is_int(cd_dl_load("libm.so.6", NULL, bad, 2, &err), -CD_E_KERNEL, "a missing symbol fails");
	ok(strstr(err.msg, "no_such_symbol_here") != NULL, "the message names the symbol");
	ok(p_cos2 == NULL, "no half-filled table is left");

	void *p_x = NULL;
	const struct cd_dl_sym one[] = { { "x", &p_x } };
	is_int(cd_dl_load("libcordon-absent.so.9", "cordon-absent", one, 1, &err), -CD_E_KERNEL,
	       "a missing library fails");
	ok(strstr(err.msg, "libcordon-absent.so.9") && strstr(err.msg, "cordon-absent"),
	   "the message names the library and its package");
}

int main(void)
{
	tap_start(30);
	test_loads();
	test_missing();
	return tap_done();
}
