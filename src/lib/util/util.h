/* util.h — small helpers shared by every module: cleanup attributes,
 * checked arithmetic, fd handling.  Header-only, no state. */
#ifndef CD_UTIL_H
#define CD_UTIL_H

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define CD_ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

static inline void cd_freep(void *p)
{
	free(*(void **)p);
}

static inline void cd_closep(int *fd)
{
	if (*fd >= 0) {
		int saved = errno;
		close(*fd);
		errno = saved;
	}
}

/* Locals freed or closed when they go out of scope; hand ownership on with
 * cd_take_ptr()/cd_take_fd(). */
#define CD_AUTOFREE  __attribute__((cleanup(cd_freep)))
#define CD_AUTOCLOSE __attribute__((cleanup(cd_closep)))

static inline void *cd_take_ptr_(void **p)
{
	void *v = *p;
	*p = NULL;
	return v;
}
#define cd_take_ptr(p) cd_take_ptr_((void **)&(p))

static inline int cd_take_fd(int *fd)
{
	int v = *fd;
	*fd = -1;
	return v;
}

/* Wipe then free: for anything that held a secret. */
static inline void cd_free_secret(void *p, size_t len)
{
	if (p) {
		explicit_bzero(p, len);
		free(p);
	}
}

/* Overflow-checked size arithmetic; return -EOVERFLOW on overflow. */
static inline int cd_size_add(size_t a, size_t b, size_t *ret)
{
	if (__builtin_add_overflow(a, b, ret))
		return -EOVERFLOW;
	return 0;
}

static inline int cd_size_mul(size_t a, size_t b, size_t *ret)
{
	if (__builtin_mul_overflow(a, b, ret))
		return -EOVERFLOW;
	return 0;
}

/* write() all of it, retrying on EINTR and short writes; -errno on error.
 * Async-signal-safe. */
static inline int cd_write_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;
	while (len > 0) {
		ssize_t n = write(fd, p, len);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

#endif
