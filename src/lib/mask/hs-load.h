/* hs-load.h — vectorscan, loaded when first needed.
 *
 * Only masking uses the pattern matcher, so cordon does not carry it in
 * every process: linked statically it made each start of cordon (every
 * `cordon run`) about 2 ms slower on its relocations alone.  The library
 * (Debian's libvectorscan5) is opened with dlopen on first use; if it is
 * missing, masking is unavailable and every grant that masks is refused
 * (fail closed).
 *
 * It comes in two parts.  The runtime (libhs_runtime.so.5: scanning and
 * serialized databases, C only) is all a scanner needs to load the pattern
 * database cordon carries (built by src/gen/gen-scandb.c); the whole
 * library (libhs.so.5, which adds the compiler and pulls in the C++
 * runtime, several times slower to load) is opened only to compile. */
#ifndef CD_HS_LOAD_H
#define CD_HS_LOAD_H

#include "util/err.h"

#include <hs/hs.h>

struct cd_hs {
	__typeof__(hs_compile_multi) *compile_multi;           /* NULL in the runtime */
	__typeof__(hs_free_compile_error) *free_compile_error; /* NULL in the runtime */
	__typeof__(hs_alloc_scratch) *alloc_scratch;
	__typeof__(hs_free_scratch) *free_scratch;
	__typeof__(hs_free_database) *free_database;
	__typeof__(hs_scan) *scan;
	__typeof__(hs_serialize_database) *serialize_database;
	__typeof__(hs_deserialize_database) *deserialize_database;
	__typeof__(hs_serialized_database_info) *serialized_database_info;
	__typeof__(hs_version) *version;
};

/* The whole library's functions, or NULL with the reason in err.  Loaded
 * once per process; the table is static. */
const struct cd_hs *cd_hs_load(struct cd_err *err);

/* The runtime's functions (compile_multi and free_compile_error NULL), or
 * NULL with the reason in err.  A database must be scanned and freed
 * through the table that made or loaded it. */
const struct cd_hs *cd_hs_load_runtime(struct cd_err *err);

#endif
