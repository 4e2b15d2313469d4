/* buf.c — see buf.h. */
#include "buf.h"
#include "err.h"
#include "util.h"

#include <stdio.h>

void cd_buf_init(struct cd_buf *b, size_t cap)
{
	b->data = NULL;
	b->len = 0;
	b->alloc = 0;
	b->cap = cap ? cap : 1;
}

void cd_buf_release(struct cd_buf *b)
{
	free(b->data);
	b->data = NULL;
	b->len = b->alloc = 0;
}

void cd_buf_release_secret(struct cd_buf *b)
{
	if (b->data)
		explicit_bzero(b->data, b->alloc);
	cd_buf_release(b);
}

void cd_buf_reset(struct cd_buf *b)
{
	b->len = 0;
	if (b->data)
		b->data[0] = '\0';
}

static int reserve(struct cd_buf *b, size_t extra)
{
	size_t need, want;
	char *p;

	if (cd_size_add(b->len, extra, &need) < 0 || need > b->cap)
		return -CD_E_LIMIT;
	if (need + 1 <= b->alloc)
		return 0;
	want = b->alloc ? b->alloc : 64;
	while (want < need + 1) {
		if (cd_size_mul(want, 2, &want) < 0)
			return -ENOMEM;
	}
	if (want > b->cap + 1)
		want = b->cap + 1;
	p = realloc(b->data, want);
	if (!p)
		return -ENOMEM;
	b->data = p;
	b->alloc = want;
	return 0;
}

int cd_buf_append(struct cd_buf *b, const void *p, size_t n)
{
	int r = reserve(b, n);
	if (r < 0)
		return r;
	if (n)
		memcpy(b->data + b->len, p, n);
	b->len += n;
	b->data[b->len] = '\0';
	return 0;
}

int cd_buf_puts(struct cd_buf *b, const char *s)
{
	return cd_buf_append(b, s, strlen(s));
}

int cd_buf_putc(struct cd_buf *b, char c)
{
	return cd_buf_append(b, &c, 1);
}

int cd_buf_printf(struct cd_buf *b, const char *fmt, ...)
{
	va_list ap;
	int n, r;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0)
		return -EINVAL;
	r = reserve(b, (size_t)n);
	if (r < 0)
		return r;
	va_start(ap, fmt);
	n = vsnprintf(b->data + b->len, b->alloc - b->len, fmt, ap);
	va_end(ap);
	if (n < 0)
		return -EINVAL;
	b->len += (size_t)n;
	return 0;
}

size_t cd_utf8_seq(const unsigned char *p, size_t n)
{
	unsigned c = p[0];
	size_t len, i;
	unsigned long cp;

	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf) {
		len = 2;
		cp = c & 0x1f;
	} else if (c >= 0xe0 && c <= 0xef) {
		len = 3;
		cp = c & 0x0f;
	} else if (c >= 0xf0 && c <= 0xf4) {
		len = 4;
		cp = c & 0x07;
	} else {
		return 0;
	}
	if (n < len)
		return 0;
	for (i = 1; i < len; i++) {
		if ((p[i] & 0xc0) != 0x80)
			return 0;
		cp = (cp << 6) | (p[i] & 0x3f);
	}
	if ((len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000) || cp > 0x10ffff ||
	    (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return len;
}

/* A UTF-8 sequence safe to show on a terminal: valid, and neither a C1
 * control nor a bidi override or isolate (they can rewrite a line). */
static size_t utf8_display_len(const unsigned char *p, size_t n)
{
	size_t len = cd_utf8_seq(p, n);
	unsigned long cp;

	if (len < 2)
		return len;
	cp = len == 2   ? ((p[0] & 0x1fUL) << 6 | (p[1] & 0x3f))
	     : len == 3 ? ((p[0] & 0x0fUL) << 12 | (p[1] & 0x3fUL) << 6 | (p[2] & 0x3f))
	                : 0x10000;
	if ((cp >= 0x80 && cp <= 0x9f) || (cp >= 0x202a && cp <= 0x202e) ||
	    (cp >= 0x2066 && cp <= 0x2069))
		return 0;
	return len;
}

int cd_buf_escape(struct cd_buf *b, const void *data, size_t n)
{
	const unsigned char *p = data;
	size_t i = 0;
	int r = 0;

	while (i < n && r == 0) {
		unsigned char c = p[i];
		size_t ul;

		if (c == '\\') {
			r = cd_buf_append(b, "\\\\", 2);
			i++;
		} else if (c == '\n') {
			r = cd_buf_append(b, "\\n", 2);
			i++;
		} else if (c == '\t') {
			r = cd_buf_append(b, "\\t", 2);
			i++;
		} else if (c == '\r') {
			r = cd_buf_append(b, "\\r", 2);
			i++;
		} else if (c >= 0x20 && c < 0x7f) {
			r = cd_buf_append(b, &p[i], 1);
			i++;
		} else if (c >= 0x80 && (ul = utf8_display_len(p + i, n - i)) > 1) {
			r = cd_buf_append(b, &p[i], ul);
			i += ul;
		} else {
			r = cd_buf_printf(b, "\\x%02x", c);
			i++;
		}
	}
	return r;
}

char *cd_buf_take(struct cd_buf *b)
{
	char *p = b->data;
	if (!p) {
		p = calloc(1, 1);
	}
	b->data = NULL;
	b->len = b->alloc = 0;
	return p;
}
