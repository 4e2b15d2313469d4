/* match-host.c — see match-host.h.
 *
 * Trust boundary: the input host is hostile (agent, tool server, HTTP
 * client).  Everything is checked byte by byte within `len`; the result is
 * either a host in one canonical spelling or a refusal, never a guess.
 * Unicode goes through libidn2 (IDNA2008, RFC 5891: no UTS #46 mapping,
 * so full-width letters, upper-case Unicode and symbols are refused, not
 * folded onto ASCII); only its ASCII result is checked and returned, by
 * the same rules as any other name.  A look-alike ("\u0430pple.com",
 * Cyrillic a) becomes its own A-label ("xn--pple-43d.com") and can only
 * ever match an entry for that A-label. */
#include "match-host.h"

#include "util/err.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <idn2.h>
#include <libpsl.h>
#include <stdint.h>
#include <string.h>

static int is_digit(unsigned char c)
{
	return c >= '0' && c <= '9';
}

static int is_ldh(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || is_digit(c) || c == '-';
}

/* A dotted quad of exactly four decimal parts without leading zeros. */
static int ipv4_valid(const char *s, size_t len)
{
	size_t i = 0;
	int parts = 0;

	while (i <= len) {
		size_t start = i;
		unsigned v = 0;
		while (i < len && is_digit((unsigned char)s[i])) {
			v = v * 10 + (unsigned)(s[i] - '0');
			if (v > 255)
				return 0;
			i++;
		}
		if (i == start || (i - start > 1 && s[start] == '0'))
			return 0;
		parts++;
		if (i == len)
			break;
		if (s[i] != '.')
			return 0;
		i++;
	}
	return parts == 4;
}

static int ipv6_normalize(const char *in, size_t len, char *out, size_t outlen)
{
	char tmp[INET6_ADDRSTRLEN + 1];
	unsigned char addr[16];
	char text[INET6_ADDRSTRLEN];
	size_t n;

	/* "[" addr "]" ; no zone ids (they name a host interface). */
	if (len < 4 || in[len - 1] != ']' || len - 2 >= sizeof tmp)
		return -EINVAL;
	memcpy(tmp, in + 1, len - 2);
	tmp[len - 2] = '\0';
	if (memchr(tmp, '\0', len - 2) || inet_pton(AF_INET6, tmp, addr) != 1)
		return -EINVAL;
	if (!inet_ntop(AF_INET6, addr, text, sizeof text))
		return -EINVAL;
	n = strlen(text);
	if (n + 3 > outlen)
		return -ENAMETOOLONG;
	out[0] = '[';
	memcpy(out + 1, text, n);
	out[n + 1] = ']';
	out[n + 2] = '\0';
	return (int)(n + 2);
}

/* 1 when the name needs IDNA: a byte outside ASCII, or a label that
 * starts with "xn--" (an A-label, which must be a valid one). */
static int needs_idna(const char *in, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++) {
		unsigned char c = (unsigned char)in[i];
		if (c >= 0x80)
			return 1;
		if ((i == 0 || in[i - 1] == '.') && len - i >= 4 && (in[i] | 0x20) == 'x' &&
		    (in[i + 1] | 0x20) == 'n' && in[i + 2] == '-' && in[i + 3] == '-')
			return 1;
	}
	return 0;
}

/* IDNA2008 lookup (RFC 5891, no UTS #46 mapping): ASCII letters lowered
 * here first, the rest must already be lower case; the input is put in
 * NFC; every U-label becomes its A-label and every A-label must decode
 * to a valid U-label that encodes back to it.  Writes ASCII to out. */
static int idna_to_ascii(const char *in, size_t len, char *out, size_t outlen)
{
	char buf[CD_HOST_UTF8_MAX + 1];
	uint8_t *res = NULL;
	size_t i, n;
	int r;

	if (len > CD_HOST_UTF8_MAX)
		return -EINVAL;
	for (i = 0; i < len; i++) {
		unsigned char c = (unsigned char)in[i];
		if (c == '\0')
			return -EINVAL;
		buf[i] = (char)(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
	}
	buf[len] = '\0';
	r = idn2_lookup_u8((const uint8_t *)buf, &res, IDN2_NFC_INPUT | IDN2_NO_TR46);
	if (r != IDN2_OK || !res) {
		idn2_free(res);
		return -EINVAL;
	}
	n = strlen((const char *)res);
	if (n + 1 > outlen) {
		idn2_free(res);
		return -EINVAL;
	}
	memcpy(out, res, n + 1);
	idn2_free(res);
	return (int)n;
}

int cd_host_normalize(const char *in, size_t len, char *out, size_t outlen)
{
	char name[CD_HOST_MAX], ascii[CD_HOST_MAX];
	size_t i, label = 0;
	int all_digits = 1;

	if (!in || !out || outlen == 0)
		return -EINVAL;
	if (len > 0 && in[0] == '[')
		return ipv6_normalize(in, len, out, outlen);
	if (len > 0 && in[len - 1] == '.')
		len--;
	if (len > 0 && needs_idna(in, len)) {
		int r = idna_to_ascii(in, len, ascii, sizeof ascii);
		if (r < 0)
			return r;
		in = ascii;
		len = (size_t)r;
	}
	if (len == 0 || len > 253)
		return -EINVAL;
	for (i = 0; i < len; i++) {
		unsigned char c = (unsigned char)in[i];
		if (c >= 'A' && c <= 'Z')
			c = (unsigned char)(c - 'A' + 'a');
		if (c == '.') {
			/* Empty label, or one that starts or ends with '-'. */
			if (label == 0 || name[i - 1] == '-')
				return -EINVAL;
			label = 0;
			all_digits = 1;
		} else {
			if (!is_ldh(c))
				return -EINVAL;
			if (label == 0 && c == '-')
				return -EINVAL;
			if (++label > 63)
				return -EINVAL;
			if (!is_digit(c))
				all_digits = 0;
		}
		name[i] = (char)c;
	}
	if (label == 0 || name[len - 1] == '-')
		return -EINVAL;
	/* A numeric last label is an address, and only the dotted quad is one
	 * we accept: the odd spellings are refused, not reinterpreted. */
	if (all_digits && !ipv4_valid(name, len))
		return -EINVAL;
	/* inet_aton reads a last label of "0x" and hex digits as a number too
	 * ("0x7f000001", "1.0x7f" are 127.0.0.1 to glibc): refused likewise. */
	{
		const char *last = memrchr(name, '.', len);
		size_t at = last ? (size_t)(last - name) + 1 : 0, k;

		if (len - at >= 2 && name[at] == '0' && name[at + 1] == 'x') {
			for (k = at + 2; k < len && isxdigit((unsigned char)name[k]); k++)
				;
			if (k == len)
				return -EINVAL;
		}
	}
	if (len + 1 > outlen)
		return -ENAMETOOLONG;
	memcpy(out, name, len);
	out[len] = '\0';
	return (int)len;
}

/* A Unicode pattern is in normal form when it is what its A-labels
 * decode to: lower case, NFC, no trailing dot. */
static int unicode_form(const char *pattern, size_t len, const char *alabels)
{
	char *back = NULL;
	int same;

	if (idn2_to_unicode_8z8z(alabels, &back, 0) != IDN2_OK || !back) {
		idn2_free(back);
		return 0;
	}
	same = strlen(back) == len && memcmp(back, pattern, len) == 0;
	idn2_free(back);
	return same;
}

int cd_host_pattern_normalize(const char *pattern, char *out, size_t outlen)
{
	char norm[CD_HOST_MAX];
	size_t len, skip = 0;
	int r;

	if (!pattern || !out)
		return -EINVAL;
	len = strnlen(pattern, CD_HOST_UTF8_MAX + 3);
	if (len > CD_HOST_UTF8_MAX + 2)
		return -EINVAL;
	if (len > 2 && pattern[0] == '*' && pattern[1] == '.') {
		skip = 2;
		/* A wildcard over a single label ("*.com") or an address is
		 * refused. */
		if (!memchr(pattern + 2, '.', len - 2) || pattern[2] == '[')
			return -EINVAL;
	}
	r = cd_host_normalize(pattern + skip, len - skip, norm, sizeof norm);
	if (r < 0)
		return -EINVAL;
	/* Already normalized: as it is (ASCII), or as the Unicode its
	 * A-labels decode to. */
	if (!((size_t)r == len - skip && memcmp(norm, pattern + skip, len - skip) == 0) &&
	    !(needs_idna(pattern + skip, len - skip) && pattern[skip] != '[' &&
	      unicode_form(pattern + skip, len - skip, norm)))
		return -EINVAL;
	if (skip && ipv4_valid(norm, (size_t)r))
		return -EINVAL;
	/* "*.co.uk" or "*.github.io" would cover every registrant under a
	 * public suffix: refused, by libpsl's built-in list (compiled into
	 * the library, so no data package is needed). */
	if (skip && psl_is_public_suffix2(psl_builtin(), norm, PSL_TYPE_ANY))
		return -CD_E_DENIED;
	if (skip + (size_t)r + 1 > outlen)
		return -ENAMETOOLONG;
	memmove(out, pattern, skip);
	memcpy(out + skip, norm, (size_t)r + 1);
	return (int)skip + r;
}

int cd_host_pattern_valid(const char *pattern)
{
	char norm[CD_HOST_MAX];

	int r = cd_host_pattern_normalize(pattern, norm, sizeof norm);

	return r == -CD_E_DENIED ? r : r < 0 ? -EINVAL : 0;
}

int cd_host_match(const char *pattern, const char *host)
{
	char norm[CD_HOST_MAX], pat[CD_HOST_MAX];
	size_t plen, hlen;
	int r;

	if (!pattern || !host || cd_host_pattern_normalize(pattern, pat, sizeof pat) < 0)
		return 0;
	r = cd_host_normalize(host, strnlen(host, CD_HOST_UTF8_MAX + 1), norm, sizeof norm);
	if (r < 0)
		return 0;
	hlen = (size_t)r;
	if (pat[0] == '*') {
		const char *suffix = pat + 1; /* ".example.com" */
		plen = strlen(suffix);
		/* At least one non-empty label before the suffix. */
		if (hlen <= plen || norm[0] == '[')
			return 0;
		return memcmp(norm + hlen - plen, suffix, plen) == 0;
	}
	return strcmp(pat, norm) == 0;
}
