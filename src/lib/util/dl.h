/* dl.h — libraries only some commands need, loaded on first use.
 *
 * libpq, libcurl and libmicrohttpd bring about thirty shared objects with
 * them; linking them into the binary made every `cordon run` pay ~25 ms to
 * map and relocate what it never calls.  A module that needs one names the
 * symbols it calls in a table and loads them here, once, when a command
 * first needs them (the PostgreSQL store, the console, an HTTP upstream).
 * A missing library or symbol is an error that names it, never a crash.
 */
#ifndef CD_DL_H
#define CD_DL_H

#include <stddef.h>

#include "err.h"

/* One symbol to resolve: its name and where to store its address. */
struct cd_dl_sym {
	const char *name;
	void **slot;
};

/* Define a table row for function `fn` stored in the pointer `p_fn`
 * (declared `static __typeof__(fn) *p_fn;`). */
#define CD_DL_SYM(fn)                                                                              \
	{                                                                                          \
#fn, (void **)&p_##fn                                                              \
	}

/* Open `soname` (e.g. "libpq.so.5") with RTLD_NOW|RTLD_LOCAL and fill every
 * slot of `syms`.  Idempotent per table: once every slot is set it returns 0
 * at once.  Thread-safe.  -CD_E_KERNEL with "libpq.so.5: not installed
 * (apt-get install libpq5)" style messages when `pkg` is given. */
int cd_dl_load(const char *soname, const char *pkg, const struct cd_dl_sym *syms, size_t n,
               struct cd_err *err);

#endif
