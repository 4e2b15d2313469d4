/* dl.c — load a library and its symbols on first use; see dl.h. */
#include "dl.h"

#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>

static pthread_mutex_t dl_lock = PTHREAD_MUTEX_INITIALIZER;

static int all_set(const struct cd_dl_sym *syms, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!*syms[i].slot)
			return 0;
	return 1;
}

static int load_locked(const char *soname, const char *pkg, const struct cd_dl_sym *syms, size_t n,
                       struct cd_err *err)
{
	/* The handle is kept for the life of the process: the slots point
	 * into it.  dlopen of an already-loaded object only counts a ref. */
	void *h = dlopen(soname, RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		if (pkg)
			return cd_err_set(err, -CD_E_KERNEL,
			                  "%s: cannot load (%s); install the Debian package %s",
			                  soname, dlerror(), pkg);
		return cd_err_set(err, -CD_E_KERNEL, "%s: cannot load (%s)", soname, dlerror());
	}
	for (size_t i = 0; i < n; i++) {
		void *p = dlsym(h, syms[i].name);
		if (!p) {
			/* Leave no half-filled table behind. */
			for (size_t j = 0; j < n; j++)
				*syms[j].slot = NULL;
			return cd_err_set(err, -CD_E_KERNEL, "%s: has no symbol %s (too old?)",
			                  soname, syms[i].name);
		}
		*syms[i].slot = p;
	}
	return 0;
}

int cd_dl_load(const char *soname, const char *pkg, const struct cd_dl_sym *syms, size_t n,
               struct cd_err *err)
{
	pthread_mutex_lock(&dl_lock);
	int r = all_set(syms, n) ? 0 : load_locked(soname, pkg, syms, n, err);
	pthread_mutex_unlock(&dl_lock);
	return r;
}
