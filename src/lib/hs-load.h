/* hs-load.h — vectorscan, loaded when first needed.
 *
 * Only masking uses the pattern matcher, so cordon does not carry it in
 * every process: linked statically it made each start of cordon (every
 * `cordon run`) about 2 ms slower on its relocations alone.  The library
 * (Debian's libvectorscan5) is opened with dlopen on first use; if it is
 * missing, masking is unavailable and every grant that masks is refused
 * (fail closed).  The functions that read a serialized database are here
 * for the one cordon carries (built by src/gen/gen-scandb.c); the one that
 * writes it serves that generator only. */
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
	__typeof__(hs_serialize_database) *serialize_database;
	__typeof__(hs_deserialize_database) *deserialize_database;
	__typeof__(hs_serialized_database_info) *serialized_database_info;
	__typeof__(hs_version) *version;
};

/* The library's functions, or NULL with the reason in err. */
const struct cd_hs *cd_hs_load(struct cd_err *err);

#endif
