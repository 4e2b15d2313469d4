/* match-host.h — host name normalization and allowlist matching, shared by
 * the grant matrix and the egress proxy.
 *
 * Trust boundary: the host given to cd_host_normalize() comes from an agent,
 * a tool or the network; it is a (pointer, length) view and is never read
 * past `len`.  Patterns come from a policy file that was loaded strictly and
 * are already normalized. */
#ifndef CD_MATCH_HOST_H
#define CD_MATCH_HOST_H

#include <stddef.h>

/* Longest normalized host, with its NUL (253 for a DNS name; an IPv6
 * literal in brackets fits). */
#define CD_HOST_MAX 256

/* Normalize a host name: ASCII letters lower-cased, one trailing dot
 * dropped, then checked strictly:
 *   - a DNS name: labels of 1..63 bytes of [a-z0-9-], no leading or
 *     trailing '-', at most 253 bytes in all; A-labels ("xn--...") pass as
 *     they are; a name whose last label is all digits must be a dotted-quad
 *     IPv4 address;
 *   - an IPv4 address: exactly four decimal parts 0..255 without leading
 *     zeros (so "2130706433", "0177.0.0.1", "127.1" are refused);
 *   - an IPv6 address in brackets ("[::1]"): rewritten to its RFC 5952 form.
 * Anything else is refused: non-ASCII (Unicode must be given as its IDNA
 * A-label), '_', '*', spaces, empty labels, NUL bytes.
 * Writes the result and its NUL to `out`.  Returns the length of the
 * result, -EINVAL for a host that is not valid, -ENAMETOOLONG when it does
 * not fit `outlen`. */
int cd_host_normalize(const char *in, size_t len, char *out, size_t outlen);

/* Check a pattern as it may appear in a policy: a normalized host, or "*."
 * followed by a normalized DNS name of at least two labels.  0 when valid,
 * -EINVAL otherwise. */
int cd_host_pattern_valid(const char *pattern);

/* 1 when `host` matches `pattern`, else 0.  The host is normalized first (a
 * host that does not normalize never matches).  A pattern "*.example.com"
 * matches any name with one or more labels before ".example.com"; it
 * matches neither "example.com" nor "evilexample.com".  Any other pattern
 * matches exactly one host, label by label.  An invalid pattern never
 * matches. */
int cd_host_match(const char *pattern, const char *host);

#endif
