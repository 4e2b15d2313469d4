/* err.c — see err.h.  No allocation; truncation is the only failure. */
#include "err.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

const char *cd_strerror(int code)
{
	switch (code) {
	case -CD_E_USAGE:
		return "usage error";
	case -CD_E_DENIED:
		return "denied";
	case -CD_E_LIMIT:
		return "limit reached";
	case -CD_E_PARSE:
		return "parse error";
	case -CD_E_KERNEL:
		return "kernel feature missing";
	case -CD_E_CORRUPT:
		return "data corrupt";
	}
	if (code < 0 && code > -CD_E_BASE)
		return strerror(-code);
	return "unknown error";
}

static void vset(struct cd_err *err, int code, const char *fmt, va_list ap)
{
	int n = vsnprintf(err->msg, sizeof err->msg, fmt, ap);
	if (n < 0)
		err->msg[0] = '\0';
	err->code = code;
}

int cd_err_set(struct cd_err *err, int code, const char *fmt, ...)
{
	va_list ap;

	if (!err)
		return code;
	va_start(ap, fmt);
	vset(err, code, fmt, ap);
	va_end(ap);
	return code;
}

int cd_err_sys(struct cd_err *err, int code, const char *fmt, ...)
{
	va_list ap;
	size_t len;

	if (!err)
		return code;
	va_start(ap, fmt);
	vset(err, code, fmt, ap);
	va_end(ap);
	len = strlen(err->msg);
	if (len < sizeof err->msg) {
		int n = snprintf(err->msg + len, sizeof err->msg - len, ": %s", cd_strerror(code));
		if (n < 0)
			err->msg[len] = '\0';
	}
	return code;
}

int cd_err_prefix(struct cd_err *err, const char *fmt, ...)
{
	char old[CD_ERR_MSG_MAX];
	va_list ap;
	int n;
	size_t len;

	if (!err)
		return -EIO;
	memcpy(old, err->msg, sizeof old);
	va_start(ap, fmt);
	n = vsnprintf(err->msg, sizeof err->msg, fmt, ap);
	va_end(ap);
	if (n < 0)
		n = 0;
	len = strnlen(err->msg, sizeof err->msg);
	if (len < sizeof err->msg - 1) {
		n = snprintf(err->msg + len, sizeof err->msg - len, "%s", old);
		(void)n; /* truncation keeps the prefix, which is the point */
	}
	return err->code;
}

int cd_msg(char *out, size_t n, const char *fmt, ...)
{
	va_list ap;

	if (out && n) {
		va_start(ap, fmt);
		if (vsnprintf(out, n, fmt, ap) < 0)
			out[0] = '\0';
		va_end(ap);
	}
	return 0;
}
