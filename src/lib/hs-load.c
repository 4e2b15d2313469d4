/* hs-load.c — see hs-load.h. */
#include "hs-load.h"

#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#define HS_SONAME "libhs.so.5"

static struct cd_hs hs;
static char hs_error[256];
static int hs_ok;
static pthread_once_t hs_once = PTHREAD_ONCE_INIT;

static void load(void)
{
	void *h = dlopen(HS_SONAME, RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
	const char *e;

	if (!h) {
		e = dlerror();
		snprintf(hs_error, sizeof hs_error,
		         "masking needs vectorscan (%s, Debian package libvectorscan5): %s",
		         HS_SONAME, e ? e : "not found");
		return;
	}
#define SYM(field, name)                                                                           \
	do {                                                                                       \
		*(void **)&hs.field = dlsym(h, name);                                              \
		if (!hs.field) {                                                                   \
			snprintf(hs_error, sizeof hs_error, "%s lacks %s", HS_SONAME, name);       \
			return;                                                                    \
		}                                                                                  \
	} while (0)
	SYM(compile_multi, "hs_compile_multi");
	SYM(free_compile_error, "hs_free_compile_error");
	SYM(alloc_scratch, "hs_alloc_scratch");
	SYM(free_scratch, "hs_free_scratch");
	SYM(free_database, "hs_free_database");
	SYM(scan, "hs_scan");
	SYM(serialize_database, "hs_serialize_database");
	SYM(deserialize_database, "hs_deserialize_database");
	SYM(serialized_database_info, "hs_serialized_database_info");
	SYM(version, "hs_version");
#undef SYM
	hs_ok = 1;
}

const struct cd_hs *cd_hs_load(struct cd_err *err)
{
	pthread_once(&hs_once, load);
	if (!hs_ok) {
		cd_err_set(err, -ENOENT, "%s", hs_error[0] ? hs_error : "vectorscan did not load");
		return NULL;
	}
	return &hs;
}
