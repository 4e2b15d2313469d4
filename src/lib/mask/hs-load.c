/* hs-load.c — see hs-load.h. */
#include "hs-load.h"

#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

struct lib {
	const char *soname;
	int compiler; /* has the compiler's functions */
	struct cd_hs hs;
	char error[256];
	int ok;
};

static struct lib full = { .soname = "libhs.so.5", .compiler = 1 };
static struct lib runtime = { .soname = "libhs_runtime.so.5", .compiler = 0 };
static pthread_once_t full_once = PTHREAD_ONCE_INIT, runtime_once = PTHREAD_ONCE_INIT;

static int sym(struct lib *l, void *h, void **field, const char *name)
{
	*field = dlsym(h, name);
	if (!*field) {
		snprintf(l->error, sizeof l->error, "%s lacks %s", l->soname, name);
		return -1;
	}
	return 0;
}

static void load(struct lib *l)
{
	void *h = dlopen(l->soname, RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
	struct cd_hs *hs = &l->hs;
	const char *e;

	if (!h) {
		e = dlerror();
		snprintf(l->error, sizeof l->error,
		         "masking needs vectorscan (%s, Debian package libvectorscan5): %s",
		         l->soname, e ? e : "not found");
		return;
	}
#define SYM(field, name)                                                                           \
	do {                                                                                       \
		if (sym(l, h, (void **)&hs->field, name) < 0)                                      \
			return;                                                                    \
	} while (0)
	if (l->compiler) {
		SYM(compile_multi, "hs_compile_multi");
		SYM(free_compile_error, "hs_free_compile_error");
	}
	SYM(alloc_scratch, "hs_alloc_scratch");
	SYM(free_scratch, "hs_free_scratch");
	SYM(free_database, "hs_free_database");
	SYM(scan, "hs_scan");
	SYM(serialize_database, "hs_serialize_database");
	SYM(deserialize_database, "hs_deserialize_database");
	SYM(serialized_database_info, "hs_serialized_database_info");
	SYM(version, "hs_version");
#undef SYM
	l->ok = 1;
}

static void load_full(void)
{
	load(&full);
}

static void load_runtime(void)
{
	load(&runtime);
}

static const struct cd_hs *loaded(const struct lib *l, struct cd_err *err)
{
	if (!l->ok) {
		cd_err_set(err, -ENOENT, "%s", l->error[0] ? l->error : "vectorscan did not load");
		return NULL;
	}
	return &l->hs;
}

const struct cd_hs *cd_hs_load(struct cd_err *err)
{
	pthread_once(&full_once, load_full);
	return loaded(&full, err);
}

const struct cd_hs *cd_hs_load_runtime(struct cd_err *err)
{
	pthread_once(&runtime_once, load_runtime);
	return loaded(&runtime, err);
}
