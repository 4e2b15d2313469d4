/* scan-patterns.c — the recognizers: the table of candidate patterns (all
 * bounded, compiled for leftmost start of match; scan.c makes them one
 * vectorscan database), a validator per pattern that confirms the
 * candidate and fixes its span, and the checks they rest on (Luhn,
 * mod-97, SSN ranges, entropy; public in scan.h).
 *
 * Trust boundary: the scanned text is hostile.  Linear time: a validator
 * either reads a window of bounded size around the match or extends the
 * span forwards/backwards, never past the end of the previous span of the
 * same pattern (`floor`). */
#include "scan-int.h"

#include "hs-load.h"

#include <arpa/inet.h>
#include <math.h>
#include <string.h>

/* ---- character classes ---------------------------------------------- */

static int is_digit(int c)
{
	return c >= '0' && c <= '9';
}
static int is_upper(int c)
{
	return c >= 'A' && c <= 'Z';
}
static int is_alpha(int c)
{
	return is_upper(c) || (c >= 'a' && c <= 'z');
}
static int is_alnum(int c)
{
	return is_alpha(c) || is_digit(c);
}
static int is_word(int c)
{
	return is_alnum(c) || c == '_';
}
static int is_hex(int c)
{
	return is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}
static int is_local(int c) /* an email's local part (the common subset) */
{
	return is_alnum(c) || c == '.' || c == '_' || c == '%' || c == '+' || c == '-';
}
static int is_domain(int c)
{
	return is_alnum(c) || c == '.' || c == '-';
}
static int is_b64url(int c)
{
	return is_alnum(c) || c == '-' || c == '_';
}
static int is_token(int c)
{
	return is_alnum(c) || c == '-' || c == '_';
}
static int is_value(int c) /* a secret's value behind a key-like name */
{
	return is_alnum(c) || c == '+' || c == '/' || c == '=' || c == '_' || c == '-' ||
	       c == '.' || c == '~';
}

/* ---- validators ------------------------------------------------------ */

int cd_scan_luhn(const char *s, size_t n)
{
	unsigned sum = 0, k = 0;
	size_t i;

	for (i = n; i-- > 0;) {
		unsigned d;
		if (!is_digit((unsigned char)s[i]))
			continue;
		d = (unsigned)(s[i] - '0');
		if (k++ & 1) {
			d *= 2;
			if (d > 9)
				d -= 9;
		}
		sum += d;
	}
	return k >= 2 && sum % 10 == 0;
}

/* IBAN lengths by country (ISO 13616 registry). */
static const struct {
	char cc[3];
	unsigned char len;
} iban_len[] = {
	{ "AD", 24 }, { "AE", 23 }, { "AL", 28 }, { "AT", 20 }, { "AZ", 28 }, { "BA", 20 },
	{ "BE", 16 }, { "BG", 22 }, { "BH", 22 }, { "BR", 29 }, { "BY", 28 }, { "CH", 21 },
	{ "CR", 22 }, { "CY", 28 }, { "CZ", 24 }, { "DE", 22 }, { "DK", 18 }, { "DO", 28 },
	{ "EE", 20 }, { "EG", 29 }, { "ES", 24 }, { "FI", 18 }, { "FO", 18 }, { "FR", 27 },
	{ "GB", 22 }, { "GE", 22 }, { "GI", 23 }, { "GL", 18 }, { "GR", 27 }, { "GT", 28 },
	{ "HR", 21 }, { "HU", 28 }, { "IE", 22 }, { "IL", 23 }, { "IQ", 23 }, { "IS", 26 },
	{ "IT", 27 }, { "JO", 30 }, { "KW", 30 }, { "KZ", 20 }, { "LB", 28 }, { "LC", 32 },
	{ "LI", 21 }, { "LT", 20 }, { "LU", 20 }, { "LV", 21 }, { "MC", 27 }, { "MD", 24 },
	{ "ME", 22 }, { "MK", 19 }, { "MR", 27 }, { "MT", 31 }, { "MU", 30 }, { "NL", 18 },
	{ "NO", 15 }, { "PK", 24 }, { "PL", 28 }, { "PS", 29 }, { "PT", 25 }, { "QA", 29 },
	{ "RO", 24 }, { "RS", 22 }, { "SA", 24 }, { "SC", 31 }, { "SE", 24 }, { "SI", 19 },
	{ "SK", 24 }, { "SM", 27 }, { "ST", 25 }, { "SV", 28 }, { "TL", 23 }, { "TN", 24 },
	{ "TR", 26 }, { "UA", 29 }, { "VA", 22 }, { "VG", 24 }, { "XK", 20 },
};

static unsigned iban_country_len(const char *cc)
{
	size_t i;

	for (i = 0; i < sizeof iban_len / sizeof iban_len[0]; i++)
		if (iban_len[i].cc[0] == cc[0] && iban_len[i].cc[1] == cc[1])
			return iban_len[i].len;
	return 0;
}

int cd_scan_iban_valid(const char *s, size_t n)
{
	char c[34];
	unsigned len = 0, want, rem = 0, i;
	size_t k;

	for (k = 0; k < n; k++) {
		if (s[k] == ' ')
			continue;
		if (!is_upper((unsigned char)s[k]) && !is_digit((unsigned char)s[k]))
			return 0;
		if (len == sizeof c)
			return 0;
		c[len++] = s[k];
	}
	if (len < 15 || !is_upper((unsigned char)c[0]) || !is_upper((unsigned char)c[1]) ||
	    !is_digit((unsigned char)c[2]) || !is_digit((unsigned char)c[3]))
		return 0;
	want = iban_country_len(c);
	if (!want || want != len)
		return 0;
	/* The first four characters move to the end; letters count 10..35. */
	for (i = 0; i < len; i++) {
		char ch = c[(i + 4) % len];
		if (is_digit((unsigned char)ch))
			rem = (rem * 10 + (unsigned)(ch - '0')) % 97;
		else
			rem = (rem * 100 + (unsigned)(ch - 'A' + 10)) % 97;
	}
	return rem == 1;
}

int cd_scan_ssn_valid(const char *s, size_t n)
{
	unsigned area, group, serial;
	size_t i;

	if (n != 11 || (s[3] != '-' && s[3] != ' ') || s[6] != s[3])
		return 0;
	for (i = 0; i < n; i++)
		if (i != 3 && i != 6 && !is_digit((unsigned char)s[i]))
			return 0;
	area = (unsigned)((s[0] - '0') * 100 + (s[1] - '0') * 10 + (s[2] - '0'));
	group = (unsigned)((s[4] - '0') * 10 + (s[5] - '0'));
	serial = (unsigned)((s[7] - '0') * 1000 + (s[8] - '0') * 100 + (s[9] - '0') * 10 +
	                    (s[10] - '0'));
	/* Never issued: area 000, 666 and 900-999, group 00, serial 0000;
	 * and the two numbers published in advertising. */
	if (area == 0 || area == 666 || area >= 900 || group == 0 || serial == 0)
		return 0;
	if ((area == 78 && group == 5 && serial == 1120) ||
	    (area == 219 && group == 9 && serial == 9999))
		return 0;
	return 1;
}

double cd_scan_entropy(const char *s, size_t n)
{
	unsigned counts[256] = { 0 };
	double h = 0;
	size_t i;

	if (!n)
		return 0;
	for (i = 0; i < n; i++)
		counts[(unsigned char)s[i]]++;
	for (i = 0; i < 256; i++) {
		if (counts[i]) {
			double p = (double)counts[i] / (double)n;
			h -= p * log2(p);
		}
	}
	return h;
}

/* ---- the patterns ---------------------------------------------------- */

static int before_is(const struct cand *c, size_t at, int (*cls)(int))
{
	return at > 0 && cls((unsigned char)c->t[at - 1]);
}
static int after_is(const struct cand *c, size_t at, int (*cls)(int))
{
	return at < c->len && cls((unsigned char)c->t[at]);
}

static int v_email(const struct cand *c, struct hit *h)
{
	size_t at = c->from + 1, s = at, e = at + 1, label = 0, i, dots = 0, tld = 0;

	while (s > c->floor && is_local((unsigned char)c->t[s - 1]))
		s--;
	while (e < c->len && is_domain((unsigned char)c->t[e]))
		e++;
	h->judged = e;
	while (e > at + 1 && (c->t[e - 1] == '.' || c->t[e - 1] == '-'))
		e--;
	while (s < at && c->t[s] == '.')
		s++;
	if (at - s < 1 || at - s > 64 || e - at - 1 > 253 || c->t[at - 1] == '.')
		return 0;
	for (i = s; i + 1 < at; i++)
		if (c->t[i] == '.' && c->t[i + 1] == '.')
			return 0;
	for (i = at + 1; i <= e; i++) {
		if (i == e || c->t[i] == '.') {
			if (label == 0 || label > 63 || c->t[i - 1] == '-' ||
			    c->t[i - label] == '-')
				return 0;
			if (i < e)
				dots++;
			tld = label;
			label = 0;
		} else {
			label++;
		}
	}
	if (!dots || tld < 2)
		return 0;
	for (i = e - tld; i < e; i++)
		if (!is_alpha((unsigned char)c->t[i]))
			return 0;
	h->from = s;
	h->to = e;
	h->confidence = 95;
	return 1;
}

static size_t count_digits(const char *s, size_t n)
{
	size_t i, k = 0;

	for (i = 0; i < n; i++)
		k += is_digit((unsigned char)s[i]);
	return k;
}

static int is_plus(int c)
{
	return c == '+';
}

static int phone_sep(int c)
{
	return c == ' ' || c == '-' || c == '.' || c == '(' || c == ')';
}

/* +CC then digits with single separators; 8 to 15 digits in all. */
static int v_e164(const struct cand *c, struct hit *h)
{
	size_t e = c->from + 1, digits = 0, run = 0;

	if (before_is(c, c->from, is_word) || before_is(c, c->from, is_plus))
		return 0;
	while (e < c->len && digits < 16) {
		int ch = (unsigned char)c->t[e];
		if (is_digit(ch)) {
			digits++;
			run = 0;
		} else if (phone_sep(ch) && run < 2 && e + 1 < c->len) {
			run++;
		} else {
			break;
		}
		e++;
	}
	while (e > c->from && !is_digit((unsigned char)c->t[e - 1]) && c->t[e - 1] != ')')
		e--;
	if (digits < 8 || digits > 15 || after_is(c, e, is_digit) || after_is(c, e, is_alpha))
		return 0;
	h->from = c->from;
	h->to = e;
	h->confidence = 90;
	return 1;
}

/* A national number as written: not inside a longer number or word. */
static int v_national(const struct cand *c, struct hit *h)
{
	size_t d = count_digits(c->t + c->from, c->to - c->from);

	if (before_is(c, c->from, is_alnum) || after_is(c, c->to, is_alnum) || d < 9 || d > 11)
		return 0;
	if (c->from >= 1 &&
	    (c->t[c->from - 1] == '-' || c->t[c->from - 1] == '.' || c->t[c->from - 1] == '+'))
		return 0;
	if (c->to < c->len &&
	    (c->t[c->to] == '-' || (c->t[c->to] == '.' && after_is(c, c->to + 1, is_digit))))
		return 0;
	h->from = c->from;
	h->to = c->to;
	h->confidence = 70;
	return 1;
}

static int v_card(const struct cand *c, struct hit *h)
{
	const char *s = c->t + c->from;
	size_t n = c->to - c->from, d = count_digits(s, n), i;
	char sep = 0, p[7] = { 0 };
	unsigned k = 0, p2, p4, p6;

	if (d < 13 || d > 19 || !cd_scan_luhn(s, n))
		return 0;
	/* One kind of separator, never at an end. */
	for (i = 0; i < n; i++) {
		if (is_digit((unsigned char)s[i])) {
			if (k < 6)
				p[k++] = s[i];
			continue;
		}
		if (sep && s[i] != sep)
			return 0;
		sep = s[i];
	}
	if (c->from >= 2 && (c->t[c->from - 1] == '-' || c->t[c->from - 1] == ' ') &&
	    is_digit((unsigned char)c->t[c->from - 2]) && sep)
		return 0; /* a group of a longer grouped number */
	p2 = (unsigned)strtoul((char[3]){ p[0], p[1], 0 }, NULL, 10);
	p4 = (unsigned)strtoul((char[5]){ p[0], p[1], p[2], p[3], 0 }, NULL, 10);
	p6 = (unsigned)strtoul(p, NULL, 10);
	h->kind = NULL;
	if (p[0] == '4' && (d == 13 || d == 16 || d == 19))
		h->kind = "visa";
	else if (((p2 >= 51 && p2 <= 55) || (p4 >= 2221 && p4 <= 2720)) && d == 16)
		h->kind = "mastercard";
	else if ((p2 == 34 || p2 == 37) && d == 15)
		h->kind = "amex";
	else if ((p4 == 6011 || p2 == 65 || (p6 >= 644000 && p6 <= 649999) ||
	          (p6 >= 622126 && p6 <= 622925)) &&
	         d >= 16)
		h->kind = "discover";
	else if (p4 >= 3528 && p4 <= 3589 && d >= 16)
		h->kind = "jcb";
	else if ((p2 == 36 || p2 == 38 || (p4 >= 3000 && p4 <= 3059)) && d >= 14)
		h->kind = "diners";
	else if (p2 == 62 && d >= 16)
		h->kind = "unionpay";
	else if ((p2 == 50 || (p2 >= 56 && p2 <= 69)) && d >= 12)
		h->kind = "maestro";
	h->from = c->from;
	h->to = c->to;
	h->confidence = h->kind ? 95 : 60;
	if (!h->kind)
		h->kind = "card";
	return 1;
}

/* The country's length of characters from `from`, spaces allowed only
 * between groups of four. */
static int v_iban(const struct cand *c, struct hit *h)
{
	unsigned want = iban_country_len(c->t + c->from), got = 0;
	size_t e = c->from;

	if (!want || before_is(c, c->from, is_alnum))
		return 0;
	while (e < c->len && got < want) {
		int ch = (unsigned char)c->t[e];
		if (ch == ' ' && got % 4 == 0 && got && e + 1 < c->len &&
		    is_alnum((unsigned char)c->t[e + 1])) {
			e++;
			continue;
		}
		if (!is_upper(ch) && !is_digit(ch))
			break;
		got++;
		e++;
	}
	if (got != want || after_is(c, e, is_alnum) ||
	    !cd_scan_iban_valid(c->t + c->from, e - c->from))
		return 0;
	h->from = c->from;
	h->to = e;
	h->confidence = 95;
	return 1;
}

static int v_ssn(const struct cand *c, struct hit *h)
{
	if (!cd_scan_ssn_valid(c->t + c->from, c->to - c->from) ||
	    before_is(c, c->from, is_alnum) || after_is(c, c->to, is_alnum))
		return 0;
	if (c->from > 0 && (c->t[c->from - 1] == '-' || c->t[c->from - 1] == '.'))
		return 0;
	if (c->to < c->len && c->t[c->to] == '-')
		return 0;
	h->from = c->from;
	h->to = c->to;
	h->confidence = 85;
	return 1;
}

static int v_ipv4(const struct cand *c, struct hit *h)
{
	const char *s = c->t + c->from;
	size_t n = c->to - c->from, i;
	unsigned v = 0, len = 0;

	if (before_is(c, c->from, is_alnum) || after_is(c, c->to, is_alnum))
		return 0;
	/* Not part of a longer dotted number (a version, an OID). */
	if (c->from >= 2 && c->t[c->from - 1] == '.' && is_digit((unsigned char)c->t[c->from - 2]))
		return 0;
	if (c->to + 1 < c->len && c->t[c->to] == '.' && is_digit((unsigned char)c->t[c->to + 1]))
		return 0;
	for (i = 0; i <= n; i++) {
		if (i == n || s[i] == '.') {
			if (!len || v > 255 || (len > 1 && s[i - len] == '0'))
				return 0;
			v = len = 0;
		} else {
			v = v * 10 + (unsigned)(s[i] - '0');
			len++;
		}
	}
	h->from = c->from;
	h->to = c->to;
	h->confidence = 80;
	return 1;
}

static int ip6_char(int c)
{
	return is_hex(c) || c == ':' || c == '.';
}

static int v_ipv6(const struct cand *c, struct hit *h)
{
	size_t s = c->to, e = c->to, colons = 0, i;
	char buf[48];
	unsigned char addr[16];

	while (s > c->floor && ip6_char((unsigned char)c->t[s - 1]))
		s--;
	while (e < c->len && ip6_char((unsigned char)c->t[e]))
		e++;
	h->judged = e;
	while (e > s && c->t[e - 1] == '.')
		e--;
	if (e - s < 2 || e - s >= sizeof buf || before_is(c, s, is_alnum) ||
	    after_is(c, e, is_alnum))
		return 0;
	for (i = s; i < e; i++)
		colons += c->t[i] == ':';
	if (colons < 2)
		return 0;
	memcpy(buf, c->t + s, e - s);
	buf[e - s] = '\0';
	if (inet_pton(AF_INET6, buf, addr) != 1)
		return 0;
	h->from = s;
	h->to = e;
	h->confidence = 80;
	return 1;
}

/* A token of a fixed prefix: the match, extended over token characters. */
static int v_token_ext(const struct cand *c, struct hit *h, size_t maxlen, int conf)
{
	size_t e = c->to;

	while (e < c->len && is_token((unsigned char)c->t[e]) && e - c->from < maxlen)
		e++;
	if (after_is(c, e, is_token))
		return 0;
	h->from = c->from;
	h->to = e;
	h->confidence = conf;
	return 1;
}

static int v_fixed(const struct cand *c, struct hit *h)
{
	if (before_is(c, c->from, is_word) || after_is(c, c->to, is_word))
		return 0;
	h->from = c->from;
	h->to = c->to;
	h->confidence = 95;
	return 1;
}

/* A GitHub token: ghp_ (gho_, ghu_, ghs_, ghr_) and at least the canonical
 * 36 characters.  Keyed on a well-known prefix, it errs toward masking:
 * longer ones are masked whole (up to 255 after the prefix, as secret
 * scanners accept), and what follows is not required to end a word. */
static int v_github(const struct cand *c, struct hit *h)
{
	size_t e = c->to;

	if (before_is(c, c->from, is_word))
		return 0;
	while (e < c->len && is_alnum((unsigned char)c->t[e]) && e - c->from < 4 + 255)
		e++;
	h->from = c->from;
	h->to = e;
	h->confidence = 95;
	return 1;
}

static int v_gitlab(const struct cand *c, struct hit *h)
{
	return v_token_ext(c, h, 96, 90);
}

static int v_slack(const struct cand *c, struct hit *h)
{
	return v_token_ext(c, h, 256, 90);
}

static int v_stripe(const struct cand *c, struct hit *h)
{
	return v_token_ext(c, h, 255, 95);
}

static int v_slack_hook(const struct cand *c, struct hit *h)
{
	size_t e = c->to;

	while (e < c->len && (is_alnum((unsigned char)c->t[e]) || c->t[e] == '/') &&
	       e - c->from < 200)
		e++;
	h->from = c->from;
	h->to = e;
	h->confidence = 90;
	return 1;
}

static int b64url_val(int c)
{
	if (is_upper(c))
		return c - 'A';
	if (c >= 'a' && c <= 'z')
		return c - 'a' + 26;
	if (is_digit(c))
		return c - '0' + 52;
	return c == '-' ? 62 : c == '_' ? 63 : -1;
}

/* JWT: three base64url segments; the header decodes to a JSON object
 * naming "alg". */
static int v_jwt(const struct cand *c, struct hit *h)
{
	size_t e = c->from, seg = 0, segstart = c->from, hdr_end = 0, i;
	unsigned char dec[384];
	size_t nd = 0;
	unsigned acc = 0, bits = 0;

	if (before_is(c, c->from, is_b64url))
		return 0;
	for (;;) {
		while (e < c->len && is_b64url((unsigned char)c->t[e]) && e - segstart < 16384)
			e++;
		if (seg == 0)
			hdr_end = e;
		if (seg < 2 && e < c->len && c->t[e] == '.' && (seg == 1 || e > segstart)) {
			seg++;
			segstart = ++e;
			continue;
		}
		break;
	}
	h->judged = hdr_end;
	if (seg != 2 || hdr_end - c->from < 10 || segstart - hdr_end < 5)
		return 0;
	for (i = c->from; i < hdr_end && nd < sizeof dec; i++) {
		acc = (acc << 6) | (unsigned)b64url_val((unsigned char)c->t[i]);
		bits += 6;
		if (bits >= 8) {
			bits -= 8;
			dec[nd++] = (unsigned char)(acc >> bits);
			acc &= (1u << bits) - 1;
		}
	}
	if (nd < 8 || dec[0] != '{' || !memmem(dec, nd, "\"alg\"", 5))
		return 0;
	h->from = c->from;
	h->to = e;
	h->confidence = 95;
	return 1;
}

/* From BEGIN to the matching END line; to the end of the text when there
 * is none (a truncated key is still a key). */
static int v_pem(const struct cand *c, struct hit *h)
{
	const char *end = memmem(c->t + c->to, c->len - c->to, "-----END ", 9);
	size_t e = c->len;

	if (end) {
		const char *close = memmem(end + 9, (size_t)(c->t + c->len - end - 9), "-----", 5);
		e = close ? (size_t)(close - c->t) + 5 : c->len;
	}
	h->from = c->from;
	h->to = e;
	h->confidence = 99;
	return 1;
}

static int ci_has(const char *s, size_t n, const char *w)
{
	size_t wl = strlen(w), i, k;

	for (i = 0; i + wl <= n; i++) {
		for (k = 0; k < wl; k++)
			if ((s[i + k] | 0x20) != w[k])
				break;
		if (k == wl)
			return 1;
	}
	return 0;
}

/* The value after `name = ` / `"name": "`: a password of any shape, or a
 * high-entropy string behind another key-like name. */
static int v_keyvalue(const struct cand *c, struct hit *h)
{
	size_t v = c->to, e, n, i, classes = 0;
	int lo = 0, up = 0, dg = 0, pw;
	double ent;

	while (v < c->len && v - c->to < 8 &&
	       (c->t[v] == ' ' || c->t[v] == '"' || c->t[v] == '\'' || c->t[v] == '\t'))
		v++;
	e = v;
	while (e < c->len && is_value((unsigned char)c->t[e]) && e - v < 1024)
		e++;
	h->judged = e;
	while (e > v && c->t[e - 1] == '.')
		e--;
	n = e - v;
	pw = ci_has(c->t + c->from, c->to - c->from, "pass") ||
	     ci_has(c->t + c->from, c->to - c->from, "pwd");
	if (n < (pw ? 6u : 16u) || n >= 1024)
		return 0;
	for (i = v; i < e; i++) {
		int ch = (unsigned char)c->t[i];
		lo |= ch >= 'a' && ch <= 'z';
		up |= is_upper(ch);
		dg |= is_digit(ch);
	}
	classes = (size_t)lo + (size_t)up + (size_t)dg;
	ent = cd_scan_entropy(c->t + v, n);
	h->from = v;
	h->to = e;
	h->kind = pw ? "password" : "high-entropy";
	if (pw) {
		h->confidence = 80;
		return 1;
	}
	if (ent < 3.5 || classes < 2)
		return 0;
	h->confidence = ent >= 4.0 ? 90 : 75;
	return 1;
}

#define SOM HS_FLAG_SOM_LEFTMOST

const struct pattern cd_scan_patterns[] = {
	{ "[A-Za-z0-9._%+\\-]@[A-Za-z0-9\\-]{1,63}\\.[A-Za-z]", SOM, CD_SCAN_EMAIL, v_email,
	  "email" },
	{ "\\+[1-9]", SOM, CD_SCAN_PHONE, v_e164, "e164" },
	{ "(?:\\([2-9][0-9]{2}\\) ?|[2-9][0-9]{2}[.\\- ])[2-9][0-9]{2}[.\\- ][0-9]{4}", SOM,
	  CD_SCAN_PHONE, v_national, "nanp" },
	{ "0[1-9][0-9]{1,3}[ \\-/][0-9]{3,4}[ \\-]?[0-9]{3,4}", SOM, CD_SCAN_PHONE, v_national,
	  "national" },
	{ "0[1-9](?:[ .][0-9]{2}){4}", SOM, CD_SCAN_PHONE, v_national, "national" },
	{ "\\b[0-9](?:[ \\-]?[0-9]){12,18}\\b", SOM, CD_SCAN_CARD, v_card, "card" },
	{ "[A-Z]{2}[0-9]{2} ?[A-Z0-9]{4}", SOM, CD_SCAN_IBAN, v_iban, "iban" },
	{ "[0-9]{3}-[0-9]{2}-[0-9]{4}|[0-9]{3} [0-9]{2} [0-9]{4}", SOM, CD_SCAN_SSN, v_ssn, "ssn" },
	{ "[0-9]{1,3}\\.[0-9]{1,3}\\.[0-9]{1,3}\\.[0-9]{1,3}", SOM, CD_SCAN_IPV4, v_ipv4, "ipv4" },
	{ "[0-9A-Fa-f]{0,4}:[0-9A-Fa-f]{0,4}:", 0, CD_SCAN_IPV6, v_ipv6, "ipv6" },
	{ "(?:AKIA|ASIA|ABIA|ACCA|AIDA|AROA|AIPA|ANPA|ANVA|AGPA)[A-Z2-7]{16}", SOM, CD_SCAN_SECRET,
	  v_fixed, "aws-access-key" },
	{ "gh[pousr]_[A-Za-z0-9]{36}", SOM, CD_SCAN_SECRET, v_github, "github-token" },
	{ "github_pat_[A-Za-z0-9]{22}_[A-Za-z0-9]{59}", SOM, CD_SCAN_SECRET, v_fixed,
	  "github-token" },
	{ "gl(?:pat|dt|rt|ptt)-[A-Za-z0-9_\\-]{20}", SOM, CD_SCAN_SECRET, v_gitlab,
	  "gitlab-token" },
	{ "xox[abposr]-[A-Za-z0-9\\-]{10}", SOM, CD_SCAN_SECRET, v_slack, "slack-token" },
	{ "https://hooks\\.slack\\.com/services/T[A-Z0-9]{6}", SOM, CD_SCAN_SECRET, v_slack_hook,
	  "slack-webhook" },
	{ "(?:sk|rk)_(?:live|test)_[0-9A-Za-z]{16}", SOM, CD_SCAN_SECRET, v_stripe, "stripe-key" },
	{ "whsec_[0-9A-Za-z]{16}", SOM, CD_SCAN_SECRET, v_stripe, "stripe-key" },
	{ "eyJ[A-Za-z0-9_\\-]{7}", SOM, CD_SCAN_SECRET, v_jwt, "jwt" },
	{ "-----BEGIN (?:[A-Z0-9]{1,16} ){0,3}PRIVATE KEY(?: BLOCK)?-----", SOM, CD_SCAN_SECRET,
	  v_pem, "private-key" },
	{ "(?:api[_\\-]?key|secret|token|passw(?:or)?d|pwd|access[_\\-]?key|auth[_\\-]?key|"
	  "credentials?|private[_\\-]?key)[A-Za-z0-9_\\-]{0,16}[\"']?[ \\t]{0,4}(?::|=|:=|=>)",
	  SOM | HS_FLAG_CASELESS, CD_SCAN_SECRET, v_keyvalue, "high-entropy" },
};

_Static_assert(sizeof cd_scan_patterns / sizeof cd_scan_patterns[0] == CD_SCAN_NPATTERNS,
               "CD_SCAN_NPATTERNS is the size of the table");
