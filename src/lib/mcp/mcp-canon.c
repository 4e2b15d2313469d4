/* mcp-canon.c — a canonical JSON form in the style of RFC 8785 (JCS), for
 * pinning tool definitions: object members sorted by their names' UTF-16
 * code units, no whitespace, strings with the minimal escapes, integers in
 * decimal and other numbers in the shortest form that reads back to the
 * same double (integral values without a fraction).  Two definitions that
 * differ only in key order, whitespace or number spelling hash the same.
 *
 * Trust: the value comes from a tool server (already parsed with the caps
 * of jsonrpc.c); the output is capped by the buffer it is written to. */
#include "mcp.h"

#include <errno.h>
#include <math.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Compare two UTF-8 strings by UTF-16 code units, as JCS sorts names. */
static unsigned next_unit(const unsigned char **p, const unsigned char *end, unsigned *pending)
{
	unsigned cp;
	size_t k;

	if (*pending) {
		unsigned u = *pending;
		*pending = 0;
		return u;
	}
	k = cd_utf8_seq(*p, (size_t)(end - *p));
	if (k <= 1) {
		cp = **p;
		*p += 1;
		return cp;
	}
	if (k == 2)
		cp = ((unsigned)((*p)[0] & 0x1f) << 6) | ((*p)[1] & 0x3f);
	else if (k == 3)
		cp = ((unsigned)((*p)[0] & 0x0f) << 12) | ((unsigned)((*p)[1] & 0x3f) << 6) |
		     ((*p)[2] & 0x3f);
	else
		cp = ((unsigned)((*p)[0] & 0x07) << 18) | ((unsigned)((*p)[1] & 0x3f) << 12) |
		     ((unsigned)((*p)[2] & 0x3f) << 6) | ((*p)[3] & 0x3f);
	*p += k;
	if (cp >= 0x10000) {
		cp -= 0x10000;
		*pending = 0xdc00 + (cp & 0x3ff);
		return 0xd800 + (cp >> 10);
	}
	return cp;
}

static int cmp_utf16(const char *a, size_t an, const char *b, size_t bn)
{
	const unsigned char *p = (const unsigned char *)a, *pe = p + an;
	const unsigned char *q = (const unsigned char *)b, *qe = q + bn;
	unsigned pa = 0, pb = 0;

	while ((p < pe || pa) && (q < qe || pb)) {
		unsigned x = next_unit(&p, pe, &pa), y = next_unit(&q, qe, &pb);
		if (x != y)
			return x < y ? -1 : 1;
	}
	if ((p < pe || pa))
		return 1;
	if ((q < qe || pb))
		return -1;
	return 0;
}

struct member {
	const char *key;
	size_t len;
	json_t *value;
};

static int cmp_member(const void *x, const void *y)
{
	const struct member *a = x, *b = y;
	return cmp_utf16(a->key, a->len, b->key, b->len);
}

static int put_string(struct cd_buf *b, const char *s, size_t n)
{
	static const char hex[] = "0123456789abcdef";
	size_t i;
	int r = cd_buf_putc(b, '"');

	for (i = 0; r == 0 && i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		char esc[7] = { '\\', 'u', '0', '0', 0, 0, 0 };

		switch (c) {
		case '"':
			r = cd_buf_append(b, "\\\"", 2);
			break;
		case '\\':
			r = cd_buf_append(b, "\\\\", 2);
			break;
		case '\b':
			r = cd_buf_append(b, "\\b", 2);
			break;
		case '\f':
			r = cd_buf_append(b, "\\f", 2);
			break;
		case '\n':
			r = cd_buf_append(b, "\\n", 2);
			break;
		case '\r':
			r = cd_buf_append(b, "\\r", 2);
			break;
		case '\t':
			r = cd_buf_append(b, "\\t", 2);
			break;
		default:
			if (c < 0x20) {
				esc[4] = hex[c >> 4];
				esc[5] = hex[c & 15];
				r = cd_buf_append(b, esc, 6);
			} else {
				r = cd_buf_putc(b, (char)c);
			}
		}
	}
	return r ? r : cd_buf_putc(b, '"');
}

/* The shortest %.Ng that reads back to the same double. */
static int put_real(struct cd_buf *b, double d)
{
	char tmp[40];
	int prec;

	if (!isfinite(d))
		return -CD_E_PARSE;
	if (d == 0)
		return cd_buf_putc(b, '0'); /* -0 too, as JCS does */
	if (d == floor(d) && fabs(d) < 9007199254740992.0)
		return cd_buf_printf(b, "%.0f", d);
	for (prec = 1; prec <= 17; prec++) {
		int n = snprintf(tmp, sizeof tmp, "%.*g", prec, d);
		if (n > 0 && (size_t)n < sizeof tmp && strtod(tmp, NULL) == d)
			break;
	}
	return cd_buf_puts(b, tmp);
}

static int canon(struct cd_buf *b, json_t *v, unsigned depth)
{
	size_t i, n;
	int r = 0;

	if (depth > CD_JSONRPC_DEPTH_MAX)
		return -CD_E_LIMIT;
	switch (json_typeof(v)) {
	case JSON_NULL:
		return cd_buf_puts(b, "null");
	case JSON_TRUE:
		return cd_buf_puts(b, "true");
	case JSON_FALSE:
		return cd_buf_puts(b, "false");
	case JSON_INTEGER:
		return cd_buf_printf(b, "%" JSON_INTEGER_FORMAT, json_integer_value(v));
	case JSON_REAL:
		return put_real(b, json_real_value(v));
	case JSON_STRING:
		return put_string(b, json_string_value(v), json_string_length(v));
	case JSON_ARRAY:
		r = cd_buf_putc(b, '[');
		for (i = 0; r == 0 && i < json_array_size(v); i++) {
			if (i)
				r = cd_buf_putc(b, ',');
			if (r == 0)
				r = canon(b, json_array_get(v, i), depth + 1);
		}
		return r ? r : cd_buf_putc(b, ']');
	case JSON_OBJECT: {
		struct member *m;
		const char *key;
		json_t *val;

		n = json_object_size(v);
		m = calloc(n ? n : 1, sizeof *m);
		if (!m)
			return -ENOMEM;
		i = 0;
		json_object_foreach(v, key, val)
		{
			m[i].key = key;
			m[i].len = strlen(key);
			m[i].value = val;
			i++;
		}
		qsort(m, n, sizeof *m, cmp_member);
		r = cd_buf_putc(b, '{');
		for (i = 0; r == 0 && i < n; i++) {
			if (i)
				r = cd_buf_putc(b, ',');
			if (r == 0)
				r = put_string(b, m[i].key, m[i].len);
			if (r == 0)
				r = cd_buf_putc(b, ':');
			if (r == 0)
				r = canon(b, m[i].value, depth + 1);
		}
		free(m);
		return r ? r : cd_buf_putc(b, '}');
	}
	}
	return -CD_E_PARSE;
}

int cd_mcp_canonical(json_t *v, struct cd_buf *out)
{
	return canon(out, v, 0);
}

void cd_mcp_sha256_hex(const void *p, size_t n, char out[65])
{
	unsigned char d[crypto_hash_sha256_BYTES];

	crypto_hash_sha256(d, p, n);
	sodium_bin2hex(out, 65, d, sizeof d);
}

int cd_mcp_tool_pin_form(json_t *tool, struct cd_buf *canonical, char sha256[65])
{
	json_t *copy;
	int r;

	if (!json_is_object(tool))
		return -CD_E_PARSE;
	/* `_meta` is the server's bookkeeping, not what the model reads. */
	copy = json_copy(tool);
	if (!copy)
		return -ENOMEM;
	json_object_del(copy, "_meta");
	r = cd_mcp_canonical(copy, canonical);
	json_decref(copy);
	if (r < 0)
		return r;
	cd_mcp_sha256_hex(canonical->data, canonical->len, sha256);
	return 0;
}

int cd_mcp_tool_name_valid(const char *s, size_t n)
{
	size_t i;

	if (n == 0 || n > 128)
		return 0;
	for (i = 0; i < n; i++) {
		char c = s[i];
		if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
		      c == '_' || c == '-' || c == '.'))
			return 0;
	}
	return 1;
}
