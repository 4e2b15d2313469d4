/* egress-addr.c — see egress-addr.h.
 *
 * Trust boundary: target hosts are hostile bytes from an agent.  The rule
 * is the safest one: an IP literal is accepted only in its one canonical
 * spelling; every other spelling a resolver (glibc inet_aton) or a URL
 * parser (WHATWG "ends in a number") would turn into an address is
 * refused, never reinterpreted.  The tables below are the whole of the
 * classification: a range not listed is public. */
#include "egress-addr.h"

#include "util/err.h"
#include "util/util.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <string.h>

const char *cd_addr_class_name(enum cd_addr_class c)
{
	switch (c) {
	case CD_ADDR_PUBLIC:
		return "public";
	case CD_ADDR_LOOPBACK:
		return "loopback";
	case CD_ADDR_PRIVATE:
		return "private";
	case CD_ADDR_LINK_LOCAL:
		return "link-local";
	case CD_ADDR_CGNAT:
		return "cgnat";
	case CD_ADDR_MULTICAST:
		return "multicast";
	case CD_ADDR_BROADCAST:
		return "broadcast";
	case CD_ADDR_UNSPECIFIED:
		return "unspecified";
	case CD_ADDR_RESERVED:
		return "reserved";
	}
	return "reserved";
}

struct range4 {
	uint32_t net;
	unsigned bits;
	enum cd_addr_class cls;
};

/* First match wins: the more specific ranges come first. */
static const struct range4 ranges4[] = {
	{ 0x00000000u, 32, CD_ADDR_UNSPECIFIED }, /* 0.0.0.0 */
	{ 0x00000000u, 8, CD_ADDR_RESERVED },     /* "this network" */
	{ 0x0a000000u, 8, CD_ADDR_PRIVATE },      /* 10/8 */
	{ 0x64400000u, 10, CD_ADDR_CGNAT },       /* 100.64/10 */
	{ 0x7f000000u, 8, CD_ADDR_LOOPBACK },     /* 127/8 */
	{ 0xa9fe0000u, 16, CD_ADDR_LINK_LOCAL },  /* 169.254/16, metadata */
	{ 0xac100000u, 12, CD_ADDR_PRIVATE },     /* 172.16/12 */
	{ 0xc0000000u, 24, CD_ADDR_RESERVED },    /* 192.0.0/24 IETF */
	{ 0xc0000200u, 24, CD_ADDR_RESERVED },    /* 192.0.2/24 TEST-NET-1 */
	{ 0xc0586300u, 24, CD_ADDR_RESERVED },    /* 192.88.99/24 6to4 relay */
	{ 0xc0a80000u, 16, CD_ADDR_PRIVATE },     /* 192.168/16 */
	{ 0xc6120000u, 15, CD_ADDR_RESERVED },    /* 198.18/15 benchmarking */
	{ 0xc6336400u, 24, CD_ADDR_RESERVED },    /* 198.51.100/24 TEST-NET-2 */
	{ 0xcb007100u, 24, CD_ADDR_RESERVED },    /* 203.0.113/24 TEST-NET-3 */
	{ 0xe0000000u, 4, CD_ADDR_MULTICAST },    /* 224/4 */
	{ 0xffffffffu, 32, CD_ADDR_BROADCAST },   /* 255.255.255.255 */
	{ 0xf0000000u, 4, CD_ADDR_RESERVED },     /* 240/4 */
};

enum cd_addr_class cd_addr_class_v4(const unsigned char a[4])
{
	uint32_t v = (uint32_t)a[0] << 24 | (uint32_t)a[1] << 16 | (uint32_t)a[2] << 8 | a[3];
	size_t i;

	for (i = 0; i < CD_ARRAY_SIZE(ranges4); i++) {
		uint32_t mask = ranges4[i].bits ? 0xffffffffu << (32 - ranges4[i].bits) : 0;
		if ((v & mask) == ranges4[i].net)
			return ranges4[i].cls;
	}
	return CD_ADDR_PUBLIC;
}

/* How a listed IPv6 range is treated. */
enum v6_kind {
	V6_CLASS,    /* the class given */
	V6_EMBED_12, /* IPv4 in bytes 12..15 (mapped, translated, NAT64) */
	V6_COMPAT,   /* ::a.b.c.d: embedded class, else reserved */
	V6_EMBED_2,  /* 6to4: IPv4 in bytes 2..5 */
	V6_TEREDO,   /* server in bytes 4..7, client inverted in 12..15 */
};

struct range6 {
	unsigned char net[16];
	unsigned bits;
	enum v6_kind kind;
	enum cd_addr_class cls;
};

static const struct range6 ranges6[] = {
	{ { 0 }, 128, V6_CLASS, CD_ADDR_UNSPECIFIED },                             /* :: */
	{ { [15] = 1 }, 128, V6_CLASS, CD_ADDR_LOOPBACK },                         /* ::1 */
	{ { [10] = 0xff, [11] = 0xff }, 96, V6_EMBED_12, CD_ADDR_PUBLIC },         /* mapped */
	{ { [8] = 0xff, [9] = 0xff }, 96, V6_EMBED_12, CD_ADDR_PUBLIC },           /* translated */
	{ { 0 }, 96, V6_COMPAT, CD_ADDR_RESERVED },                                /* compatible */
	{ { 0x00, 0x64, 0xff, 0x9b }, 96, V6_EMBED_12, CD_ADDR_PUBLIC },           /* NAT64 */
	{ { 0x00, 0x64, 0xff, 0x9b, 0x00, 0x01 }, 48, V6_CLASS, CD_ADDR_PRIVATE }, /* local NAT64 */
	{ { 0x01, 0x00 }, 64, V6_CLASS, CD_ADDR_RESERVED },                        /* discard */
	{ { 0x20, 0x01, 0x00, 0x00 }, 32, V6_TEREDO, CD_ADDR_PUBLIC },             /* Teredo */
	{ { 0x20, 0x01, 0x0d, 0xb8 }, 32, V6_CLASS, CD_ADDR_RESERVED },            /* doc */
	{ { 0x20, 0x01 }, 23, V6_CLASS, CD_ADDR_RESERVED },                        /* IETF */
	{ { 0x20, 0x02 }, 16, V6_EMBED_2, CD_ADDR_PUBLIC },                        /* 6to4 */
	{ { 0x3f, 0xff, 0x00 }, 20, V6_CLASS, CD_ADDR_RESERVED },                  /* doc */
	{ { 0xfc }, 7, V6_CLASS, CD_ADDR_PRIVATE },                                /* ULA */
	{ { 0xfe, 0x80 }, 10, V6_CLASS, CD_ADDR_LINK_LOCAL },                      /* fe80::/10 */
	{ { 0xfe, 0xc0 }, 10, V6_CLASS, CD_ADDR_PRIVATE },                         /* site-local */
	{ { 0xff }, 8, V6_CLASS, CD_ADDR_MULTICAST },                              /* ff00::/8 */
	{ { 0x20 }, 3, V6_CLASS, CD_ADDR_PUBLIC },                                 /* 2000::/3 */
	{ { 0 }, 0, V6_CLASS, CD_ADDR_RESERVED },                                  /* the rest */
};

static int prefix_match(const unsigned char *a, const unsigned char *net, unsigned bits)
{
	unsigned full = bits / 8, rest = bits % 8;

	if (memcmp(a, net, full) != 0)
		return 0;
	if (rest == 0)
		return 1;
	return ((a[full] ^ net[full]) & (unsigned char)(0xff << (8 - rest))) == 0;
}

enum cd_addr_class cd_addr_class_v6(const unsigned char a[16])
{
	unsigned char v4[4];
	enum cd_addr_class c;
	size_t i;

	for (i = 0; i < CD_ARRAY_SIZE(ranges6); i++) {
		const struct range6 *r = &ranges6[i];
		if (!prefix_match(a, r->net, r->bits))
			continue;
		switch (r->kind) {
		case V6_CLASS:
			return r->cls;
		case V6_EMBED_12:
			return cd_addr_class_v4(a + 12);
		case V6_COMPAT:
			c = cd_addr_class_v4(a + 12);
			return c == CD_ADDR_PUBLIC ? CD_ADDR_RESERVED : c;
		case V6_EMBED_2:
			return cd_addr_class_v4(a + 2);
		case V6_TEREDO:
			c = cd_addr_class_v4(a + 4);
			if (c != CD_ADDR_PUBLIC)
				return c;
			for (int k = 0; k < 4; k++)
				v4[k] = (unsigned char)~a[12 + k];
			return cd_addr_class_v4(v4);
		}
	}
	return CD_ADDR_RESERVED;
}

int cd_addr_classify(const struct sockaddr_storage *ss)
{
	if (!ss)
		return -EINVAL;
	if (ss->ss_family == AF_INET) {
		const struct sockaddr_in *in = (const struct sockaddr_in *)ss;
		return (int)cd_addr_class_v4((const unsigned char *)&in->sin_addr);
	}
	if (ss->ss_family == AF_INET6) {
		const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)ss;
		return (int)cd_addr_class_v6(in6->sin6_addr.s6_addr);
	}
	return -EAFNOSUPPORT;
}

static int is_digit(unsigned char c)
{
	return c >= '0' && c <= '9';
}

static int is_hex(unsigned char c)
{
	return is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

/* A label a resolver or URL parser reads as a number: decimal, octal with
 * a leading 0, or hex after "0x" (also "0x" alone, which inet_aton takes
 * as 0). */
static int numeric_label(const char *s, size_t len)
{
	size_t i = 0;

	if (len == 0)
		return 0;
	if (len >= 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
		for (i = 2; i < len; i++)
			if (!is_hex((unsigned char)s[i]))
				return 0;
		return 1;
	}
	for (i = 0; i < len; i++)
		if (!is_digit((unsigned char)s[i]))
			return 0;
	return 1;
}

/* Exactly four decimal parts 0..255 without leading zeros. */
static int dotted_quad(const char *s, size_t len, unsigned char out[4])
{
	size_t i = 0;
	int parts = 0;

	while (parts < 4) {
		size_t start = i;
		unsigned v = 0;
		while (i < len && is_digit((unsigned char)s[i]) && i - start < 3) {
			v = v * 10 + (unsigned)(s[i] - '0');
			i++;
		}
		if (i == start || v > 255 || (i - start > 1 && s[start] == '0'))
			return 0;
		out[parts++] = (unsigned char)v;
		if (parts == 4)
			break;
		if (i >= len || s[i] != '.')
			return 0;
		i++;
	}
	return i == len;
}

static int literal_v6(const char *host, size_t len, struct sockaddr_storage *ret_addr)
{
	char inner[INET6_ADDRSTRLEN + 1], text[INET6_ADDRSTRLEN];
	struct in6_addr a;
	size_t n;

	if (len < 3 || host[len - 1] != ']')
		return -EINVAL;
	n = len - 2;
	if (n >= sizeof inner)
		return -EINVAL;
	memcpy(inner, host + 1, n);
	inner[n] = '\0';
	if (memchr(inner, '\0', n))
		return -EINVAL;
	if (memchr(inner, '%', n))
		return -CD_E_DENIED; /* a zone id names a host interface */
	if (inet_pton(AF_INET6, inner, &a) != 1)
		return -EINVAL;
	if (!inet_ntop(AF_INET6, &a, text, sizeof text) || strlen(text) != n ||
	    memcmp(text, inner, n) != 0)
		return -CD_E_DENIED;
	if (ret_addr) {
		struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)ret_addr;
		memset(ret_addr, 0, sizeof *ret_addr);
		in6->sin6_family = AF_INET6;
		in6->sin6_addr = a;
	}
	return CD_LIT_IPV6;
}

int cd_addr_literal(const char *host, size_t len, struct sockaddr_storage *ret_addr)
{
	unsigned char quad[4];
	size_t end, last;

	if (!host || len == 0)
		return -EINVAL;
	if (memchr(host, '\0', len))
		return -EINVAL;
	if (host[0] == '[')
		return literal_v6(host, len, ret_addr);
	if (memchr(host, ':', len)) {
		/* An unbracketed IPv6 address, or junk: neither is a name. */
		char tmp[INET6_ADDRSTRLEN + 1];
		struct in6_addr a;
		if (len < sizeof tmp) {
			memcpy(tmp, host, len);
			tmp[len] = '\0';
			if (inet_pton(AF_INET6, tmp, &a) == 1)
				return -CD_E_DENIED;
		}
		return -EINVAL;
	}
	/* WHATWG: drop one trailing dot, then look at the last label. */
	end = len;
	if (host[end - 1] == '.')
		end--;
	last = end;
	while (last > 0 && host[last - 1] != '.')
		last--;
	if (!numeric_label(host + last, end - last))
		return CD_LIT_NAME;
	if (end != len || !dotted_quad(host, len, quad))
		return -CD_E_DENIED;
	if (ret_addr) {
		struct sockaddr_in *in = (struct sockaddr_in *)ret_addr;
		memset(ret_addr, 0, sizeof *ret_addr);
		in->sin_family = AF_INET;
		memcpy(&in->sin_addr, quad, 4);
	}
	return CD_LIT_IPV4;
}

int cd_addr_format(const struct sockaddr_storage *ss, char *out, size_t outlen)
{
	char text[INET6_ADDRSTRLEN];
	size_t n;

	if (!ss || !out || outlen == 0)
		return -EINVAL;
	if (ss->ss_family == AF_INET) {
		const struct sockaddr_in *in = (const struct sockaddr_in *)ss;
		if (!inet_ntop(AF_INET, &in->sin_addr, text, sizeof text))
			return -EINVAL;
		n = strlen(text);
		if (n + 1 > outlen)
			return -ENAMETOOLONG;
		memcpy(out, text, n + 1);
		return (int)n;
	}
	if (ss->ss_family == AF_INET6) {
		const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)ss;
		if (!inet_ntop(AF_INET6, &in6->sin6_addr, text, sizeof text))
			return -EINVAL;
		n = strlen(text);
		if (n + 3 > outlen)
			return -ENAMETOOLONG;
		out[0] = '[';
		memcpy(out + 1, text, n);
		out[n + 1] = ']';
		out[n + 2] = '\0';
		return (int)n + 2;
	}
	return -EAFNOSUPPORT;
}

void cd_addr_set_port(struct sockaddr_storage *ss, uint16_t port)
{
	if (ss->ss_family == AF_INET)
		((struct sockaddr_in *)ss)->sin_port = htons(port);
	else if (ss->ss_family == AF_INET6)
		((struct sockaddr_in6 *)ss)->sin6_port = htons(port);
}

socklen_t cd_addr_len(const struct sockaddr_storage *ss)
{
	if (ss->ss_family == AF_INET)
		return sizeof(struct sockaddr_in);
	if (ss->ss_family == AF_INET6)
		return sizeof(struct sockaddr_in6);
	return 0;
}
