/* audit-format.c — records as JSON lines, and times in and out.
 *
 * The jsonl export is what a SIEM ingests, so its field names are stable
 * (docs/cordon-log.md).  Fields are untrusted bytes: strings are written
 * with every control character escaped, and bytes that are not valid UTF-8
 * are written as \u00XX (their Latin-1 reading), so each line is valid JSON
 * and a record cannot break out of its line.
 * Trust boundary: time strings come from the command line. */
#include "audit.h"
#include "util/buf.h"
#include "util/clock-time.h"
#include "util/err.h"
#include "util/num.h"

#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int json_str(struct cd_buf *b, const char *s, size_t n)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t i = 0, start;
	int r = cd_buf_putc(b, '"');

	while (r == 0 && i < n) {
		unsigned char c = p[i];
		size_t ul;

		start = i;
		while (i < n && p[i] >= 0x20 && p[i] < 0x7f && p[i] != '"' && p[i] != '\\')
			i++;
		if (i > start) {
			r = cd_buf_append(b, p + start, i - start);
			continue;
		}
		if (c == '"' || c == '\\') {
			char esc[2] = { '\\', (char)c };
			r = cd_buf_append(b, esc, 2);
			i++;
		} else if (c == '\n') {
			r = cd_buf_append(b, "\\n", 2);
			i++;
		} else if (c == '\t') {
			r = cd_buf_append(b, "\\t", 2);
			i++;
		} else if (c >= 0x80 && (ul = cd_utf8_seq(p + i, n - i)) > 0) {
			r = cd_buf_append(b, p + i, ul);
			i += ul;
		} else {
			r = cd_buf_printf(b, "\\u%04x", c);
			i++;
		}
	}
	if (r == 0)
		r = cd_buf_putc(b, '"');
	return r;
}

int cd_audit_time_format(int64_t ns, char *out, size_t outlen)
{
	time_t sec = (time_t)(ns / 1000000000);
	long frac = (long)(ns % 1000000000);
	struct tm tm;
	int n;

	if (frac < 0) {
		frac += 1000000000;
		sec--;
	}
	if (!gmtime_r(&sec, &tm))
		return -EINVAL;
	n = snprintf(out, outlen, "%04d-%02d-%02dT%02d:%02d:%02d.%09ldZ", tm.tm_year + 1900,
	             tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, frac);
	if (n < 0 || (size_t)n >= outlen)
		return -CD_E_LIMIT;
	return 0;
}

static int put_hex_field(struct cd_buf *b, const char *name, const unsigned char *h)
{
	char hex[2 * CD_AUDIT_HASH_LEN + 1];
	cd_audit_hex(h, CD_AUDIT_HASH_LEN, hex);
	return cd_buf_printf(b, ",\"%s\":\"%s\"", name, hex);
}

int cd_audit_entry_json(const struct cd_audit_entry *e, struct cd_buf *out)
{
	char t[64];
	int r, i;

	if (cd_audit_time_format(e->time_ns, t, sizeof t) < 0)
		t[0] = '\0';
	r = cd_buf_printf(out, "{\"seq\":%llu,\"time\":\"%s\",\"time_ns\":%lld",
	                  (unsigned long long)e->seq, t, (long long)e->time_ns);
	for (i = 0; r == 0 && i < CD_AF_NSTR; i++) {
		const struct cd_audit_str *s = &e->str[i];
		if (!s->p)
			continue;
		if (i == CD_AF_DETAILS) {
			/* Embedded as an object when it is one, re-serialised
			 * on one line; kept as a string otherwise (a tampered
			 * row), so the line stays valid JSON either way. */
			json_t *j = json_loadb(s->p, s->len, JSON_REJECT_DUPLICATES, NULL);
			char *d = j && json_is_object(j) ? json_dumps(j, JSON_COMPACT) : NULL;
			json_decref(j);
			if (d) {
				r = cd_buf_printf(out, ",\"details\":%s", d);
				free(d);
				continue;
			}
		}
		r = cd_buf_printf(out, ",\"%s\":", cd_audit_field_names[i]);
		if (r == 0)
			r = json_str(out, s->p, s->len);
	}
	if (r == 0 && e->has_exit)
		r = cd_buf_printf(out, ",\"exit_code\":%lld", (long long)e->exit_code);
	if (r == 0 && e->has_duration)
		r = cd_buf_printf(out, ",\"duration_ms\":%llu", (unsigned long long)e->duration_ms);
	if (r == 0)
		r = put_hex_field(out, "prev_hash", e->prev);
	if (r == 0)
		r = put_hex_field(out, "hash", e->hash);
	if (r == 0)
		r = cd_buf_putc(out, '}');
	return r;
}

int cd_audit_time_parse(const char *s, int64_t now_ns, int64_t *ret_ns)
{
	uint64_t v;
	size_t len;

	if (!s || !*s)
		return -EINVAL;
	len = strlen(s);
	if (s[0] == '@' || (len >= 10 && s[4] == '-'))
		return cd_time_parse(s, len, ret_ns);
	/* A duration ago: 30s, 10m, 2h, 1d, 500ms. */
	if (len >= 2 && s[len - 1] == 'd' && cd_parse_u64(s, len - 1, 100000, &v) == 0) {
		*ret_ns = now_ns - (int64_t)v * 86400 * 1000000000;
		return 0;
	}
	if (cd_parse_duration_ms(s, &v) < 0 || v > (uint64_t)INT64_MAX / 1000000)
		return -EINVAL;
	*ret_ns = now_ns - (int64_t)v * 1000000;
	return 0;
}
