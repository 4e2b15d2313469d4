/* match-host.c — see match-host.h.
 *
 * Trust boundary: the input host is hostile (agent, tool server, HTTP
 * client).  Everything is checked byte by byte within `len`; the result is
 * either a host in one canonical spelling or a refusal, never a guess. */
#include "match-host.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
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

int cd_host_normalize(const char *in, size_t len, char *out, size_t outlen)
{
	char name[CD_HOST_MAX];
	size_t i, label = 0;
	int all_digits = 1;

	if (!in || !out || outlen == 0)
		return -EINVAL;
	if (len > 0 && in[0] == '[')
		return ipv6_normalize(in, len, out, outlen);
	if (len > 0 && in[len - 1] == '.')
		len--;
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

int cd_host_pattern_valid(const char *pattern)
{
	char norm[CD_HOST_MAX];
	size_t len;
	int r, wild = 0;

	if (!pattern)
		return -EINVAL;
	len = strnlen(pattern, CD_HOST_MAX);
	if (len >= CD_HOST_MAX)
		return -EINVAL;
	if (len > 2 && pattern[0] == '*' && pattern[1] == '.') {
		pattern += 2;
		len -= 2;
		wild = 1;
		/* A wildcard over a single label ("*.com") or an address is
		 * refused. */
		if (!memchr(pattern, '.', len) || pattern[0] == '[')
			return -EINVAL;
	}
	r = cd_host_normalize(pattern, len, norm, sizeof norm);
	if (r < 0)
		return -EINVAL;
	if ((size_t)r != len || memcmp(norm, pattern, len) != 0)
		return -EINVAL;
	if (wild && ipv4_valid(norm, (size_t)r))
		return -EINVAL;
	return 0;
}

int cd_host_match(const char *pattern, const char *host)
{
	char norm[CD_HOST_MAX];
	size_t plen, hlen;
	int r;

	if (!pattern || !host || cd_host_pattern_valid(pattern) < 0)
		return 0;
	r = cd_host_normalize(host, strnlen(host, CD_HOST_MAX), norm, sizeof norm);
	if (r < 0)
		return 0;
	hlen = (size_t)r;
	if (pattern[0] == '*') {
		const char *suffix = pattern + 1; /* ".example.com" */
		plen = strlen(suffix);
		/* At least one non-empty label before the suffix. */
		if (hlen <= plen || norm[0] == '[')
			return 0;
		return memcmp(norm + hlen - plen, suffix, plen) == 0;
	}
	return strcmp(pattern, norm) == 0;
}
