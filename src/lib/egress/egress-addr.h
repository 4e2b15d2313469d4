/* egress-addr.h — destination addresses for the egress proxy: recognise IP
 * literals in a target host (refusing every odd spelling), and classify a
 * resolved address as public or as one of the ranges an agent must not
 * reach unless the allowlist names it (THREATS rows 20 and 21).
 *
 * Trust boundary: the host given to cd_addr_literal() comes from an agent
 * (a request target) and is read as a (pointer, length) view; addresses
 * given to the classifiers come from the resolver or from that parser. */
#ifndef CD_EGRESS_ADDR_H
#define CD_EGRESS_ADDR_H

#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

/* The class of an address.  Everything but CD_ADDR_PUBLIC is refused by
 * the egress policy unless an allowlist entry names the address or a range
 * holding it. */
enum cd_addr_class {
	CD_ADDR_PUBLIC = 0,
	CD_ADDR_LOOPBACK,    /* 127/8, ::1 */
	CD_ADDR_PRIVATE,     /* 10/8, 172.16/12, 192.168/16, fc00::/7, fec0::/10,
	                        64:ff9b:1::/48 */
	CD_ADDR_LINK_LOCAL,  /* 169.254/16 (cloud metadata), fe80::/10 */
	CD_ADDR_CGNAT,       /* 100.64/10 */
	CD_ADDR_MULTICAST,   /* 224/4, ff00::/8 */
	CD_ADDR_BROADCAST,   /* 255.255.255.255 */
	CD_ADDR_UNSPECIFIED, /* 0.0.0.0, :: */
	CD_ADDR_RESERVED,    /* 0/8, 192.0.0/24, documentation, benchmarking,
	                        240/4, 2001::/23 but Teredo, 2001:db8::/32,
	                        3fff::/20, 100::/64, IPv6 outside 2000::/3,
	                        IPv4-compatible ::a.b.c.d */
};

/* "public", "loopback", "private", "link-local", "cgnat", "multicast",
 * "broadcast", "unspecified", "reserved"; never NULL. */
const char *cd_addr_class_name(enum cd_addr_class c);

/* Classify 4 bytes of IPv4 or 16 bytes of IPv6 (network order).  An IPv6
 * address that embeds an IPv4 address (mapped ::ffff:0:0/96, translated
 * ::ffff:0:0:0/96, compatible ::/96, NAT64 64:ff9b::/96, 6to4 2002::/16,
 * Teredo 2001::/32 — server and client) takes the embedded address's class
 * when that is not public. */
enum cd_addr_class cd_addr_class_v4(const unsigned char a[4]);
enum cd_addr_class cd_addr_class_v6(const unsigned char a[16]);

/* Classify a socket address (AF_INET or AF_INET6).  Returns the class
 * (>= 0), or -EAFNOSUPPORT for any other family, -EINVAL for NULL. */
int cd_addr_classify(const struct sockaddr_storage *ss);

/* What a target host is. */
enum cd_host_literal {
	CD_LIT_NAME = 0, /* not an IP literal: a name for the resolver */
	CD_LIT_IPV4,     /* a canonical dotted quad: "192.0.2.1" */
	CD_LIT_IPV6,     /* a bracketed IPv6 address in RFC 5952 form: "[::1]" */
};

/* Recognise an IP literal in `len` bytes of a target host (no port).
 *   - "a.b.c.d" of four decimal parts 0..255 without leading zeros, no
 *     trailing dot: CD_LIT_IPV4;
 *   - "[" IPv6 "]" exactly as inet_ntop writes it (lower case, RFC 5952):
 *     CD_LIT_IPV6;
 *   - any other spelling a resolver or URL parser would read as an
 *     address is refused with -CD_E_DENIED: a last label that is a number
 *     ("2130706433", "127.1", "0177.0.0.1", "0x7f.1", "1.0x7f",
 *     "127.0.0.1."), an IPv6 address in another spelling ("[0::1]",
 *     "[::FFFF:7f00:1]") or with a zone id, an unbracketed IPv6 address;
 *   - a bracketed host that is no IPv6 address, or a NUL: -EINVAL;
 *   - anything else: CD_LIT_NAME (still to be normalized by
 *     cd_host_normalize()).
 * For an address, *ret_addr (may be NULL) is filled with family and
 * address, port 0.  Never reads past `len`. */
int cd_addr_literal(const char *host, size_t len, struct sockaddr_storage *ret_addr);

/* The address without port, "192.0.2.1" or "[2001:db8::1]", into out.
 * Returns the length, -EAFNOSUPPORT, or -ENAMETOOLONG (64 bytes is always
 * enough). */
int cd_addr_format(const struct sockaddr_storage *ss, char *out, size_t outlen);

/* Set the port of an AF_INET or AF_INET6 address; the length to hand to
 * connect() or bind() (0 for another family). */
void cd_addr_set_port(struct sockaddr_storage *ss, uint16_t port);
socklen_t cd_addr_len(const struct sockaddr_storage *ss);

#endif
