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

/* Longest Unicode (UTF-8) host accepted before IDNA conversion. */
#define CD_HOST_UTF8_MAX 1024

/* Normalize a host name: ASCII letters lower-cased, one trailing dot
 * dropped, Unicode converted to IDNA A-labels, then checked strictly:
 *   - a DNS name: labels of 1..63 bytes of [a-z0-9-], no leading or
 *     trailing '-', at most 253 bytes in all; a name whose last label is
 *     all digits must be a dotted-quad IPv4 address;
 *   - IDNA (IDNA2008 lookup, RFC 5891, through libidn2, without UTS #46
 *     mapping): a name with bytes outside ASCII must be UTF-8 whose
 *     labels are valid U-labels once ASCII letters are lowered and the
 *     whole is put in NFC ("b\xc3\xbccher.example" becomes
 *     "xn--bcher-kva.example"); upper-case Unicode, full-width forms and
 *     symbols are refused, never folded onto ASCII; an "xn--" label must
 *     be a valid A-label (it decodes to a U-label that encodes back to it);
 *   - an IPv4 address: exactly four decimal parts 0..255 without leading
 *     zeros (so "2130706433", "0177.0.0.1", "127.1" are refused);
 *   - an IPv6 address in brackets ("[::1]"): rewritten to its RFC 5952 form.
 * Anything else is refused: '_', '*', spaces, empty labels, NUL bytes,
 * invalid UTF-8, more than CD_HOST_UTF8_MAX bytes.
 * Writes the result (ASCII) and its NUL to `out`.  Returns the length of
 * the result, -EINVAL for a host that is not valid, -ENAMETOOLONG when it
 * does not fit `outlen`. */
int cd_host_normalize(const char *in, size_t len, char *out, size_t outlen);

/* A pattern as it may appear in a policy or an allowlist: a normalized
 * host, or "*." followed by a normalized DNS name of at least two labels.
 * "Normalized" is what cd_host_normalize() returns, or, for a name with
 * Unicode, the U-labels its A-labels decode to (lower case, NFC):
 * "b\xc3\xbccher.example" and "xn--bcher-kva.example" are both valid and
 * the same pattern; "B\xc3\x9cCHER.example" is not.  Writes the pattern's
 * ASCII form ("*." kept) to out and returns its length; -EINVAL for a
 * pattern that is not valid, -CD_E_DENIED for a wildcard over a public
 * suffix ("*.co.uk", "*.github.io": libpsl's built-in list),
 * -ENAMETOOLONG when out is too small. */
int cd_host_pattern_normalize(const char *pattern, char *out, size_t outlen);

/* 0 when cd_host_pattern_normalize() accepts the pattern,
 * -CD_E_DENIED for a wildcard over a public suffix, -EINVAL otherwise. */
int cd_host_pattern_valid(const char *pattern);

/* 1 when `host` matches `pattern`, else 0.  Both are normalized first (a
 * host that does not normalize, or a pattern that is not valid, never
 * matches), so a U-label pattern matches its A-label and the reverse.  A
 * pattern "*.example.com" matches any name with one or more labels before
 * ".example.com"; it matches neither "example.com" nor "evilexample.com".
 * Any other pattern matches exactly one host, label by label. */
int cd_host_match(const char *pattern, const char *host);

#endif
