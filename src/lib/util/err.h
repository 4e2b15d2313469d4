/* err.h — caller-owned error messages that gather context as they rise.
 *
 * A library call that can fail in more than one way takes an optional
 * `struct cd_err *err` as its last argument.  The innermost failure writes
 * the message; each layer above may prefix context ("policy 'a.yaml': ").
 * Nothing here allocates, so errors can be reported on out-of-memory paths
 * and between fork and exec.
 */
#ifndef CD_ERR_H
#define CD_ERR_H

#include <stddef.h>

#define CD_ERR_MSG_MAX 512

/* cordon's own error codes, returned negated like -errno.  They start above
 * any errno value. */
enum {
	CD_E_BASE = 4096,
	CD_E_USAGE,   /* bad input from the caller */
	CD_E_DENIED,  /* refused by policy or by a wall */
	CD_E_LIMIT,   /* a named cap was reached */
	CD_E_PARSE,   /* malformed input */
	CD_E_KERNEL,  /* a required kernel feature is missing */
	CD_E_CORRUPT, /* stored data failed verification */
};

struct cd_err {
	int code; /* negative, as returned */
	char msg[CD_ERR_MSG_MAX];
};

/* Set the message (printf-style) and return `code` (a negative value), so
 * callers can write `return cd_err_set(err, -EINVAL, "bad '%s'", x);`.
 * `err` may be NULL. */
int cd_err_set(struct cd_err *err, int code, const char *fmt, ...)
        __attribute__((format(printf, 3, 4)));

/* Like cd_err_set, appending ": strerror(errno-ish code)". */
int cd_err_sys(struct cd_err *err, int code, const char *fmt, ...)
        __attribute__((format(printf, 3, 4)));

/* Prefix existing message with context; returns err->code (or -EIO when
 * err is NULL). */
int cd_err_prefix(struct cd_err *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Write a reason (printf-style) into out[n] when out is given (the
 * `why` buffers of the checks that answer 1 or 0); returns 0. */
int cd_msg(char *out, size_t n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* A human string for a negative code: strerror for errno values, a fixed
 * phrase for CD_E_*. Never NULL. */
const char *cd_strerror(int code);

#endif
