/* hs-load.h — vectorscan, loaded when first needed.
 *
 * Only masking uses the pattern matcher, so cordon does not carry it in
 * every process: linked statically it made each start of cordon (every
 * `cordon run`) about 2 ms slower on its relocations alone.  The library
 * (Debian's libvectorscan5) is opened with dlopen on first use; if it is
 * missing, masking is unavailable and every grant that masks is refused
 * (fail closed). */
#ifndef CD_HS_LOAD_H
#define CD_HS_LOAD_H

#include "err.h"

#include <hs/hs.h>

struct cd_hs {
	__typeof__(hs_compile_multi) *compile_multi;
	__typeof__(hs_free_compile_error) *free_compile_error;
	__typeof__(hs_alloc_scratch) *alloc_scratch;
	__typeof__(hs_free_scratch) *free_scratch;
	__typeof__(hs_free_database) *free_database;
	__typeof__(hs_scan) *scan;
};

/* The library's functions, or NULL with the reason in err. */
const struct cd_hs *cd_hs_load(struct cd_err *err);

#endif
