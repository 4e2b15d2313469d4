/* egress-socks.h — the SOCKS5 client messages the egress proxy accepts
 * (RFC 1928): the method greeting, and a CONNECT request for a domain
 * name, an IPv4 or an IPv6 address.  No authentication methods, no BIND,
 * no UDP ASSOCIATE.
 *
 * The target leaves this parser as the HTTP parser's does (egress-http.h):
 * a normalized name, a dotted quad, or "[IPv6]" in RFC 5952 form, so that
 * cd_egress_decide() makes the same decision whichever protocol asked.  A
 * domain that spells an address oddly ("127.1", "0x7f.1") is refused, never
 * reinterpreted; a domain must be ASCII (an internationalized name as its
 * A-labels).
 *
 * Trust boundary: the bytes come from a sandboxed agent (hostile); both
 * parsers take a (pointer, length) view, never read past it, and say
 * "more" for an incomplete message. */
#ifndef CD_EGRESS_SOCKS_H
#define CD_EGRESS_SOCKS_H

#include "util/err.h"
#include "policy/match-host.h"

#include <stddef.h>
#include <stdint.h>

#define CD_SOCKS_VERSION 5
#define CD_SOCKS_MORE    0 /* an incomplete message: read more */

/* Reply codes (RFC 1928 section 6). */
enum cd_socks_reply {
	CD_SOCKS_OK = 0x00,
	CD_SOCKS_FAILURE = 0x01,
	CD_SOCKS_NOT_ALLOWED = 0x02,
	CD_SOCKS_NET_UNREACHABLE = 0x03,
	CD_SOCKS_HOST_UNREACHABLE = 0x04,
	CD_SOCKS_REFUSED = 0x05,
	CD_SOCKS_TTL_EXPIRED = 0x06,
	CD_SOCKS_CMD_UNSUPPORTED = 0x07,
	CD_SOCKS_ATYP_UNSUPPORTED = 0x08,
};

/* The greeting: VER NMETHODS METHODS...  Returns the bytes it takes (> 0)
 * when it offers "no authentication" (0x00), CD_SOCKS_MORE, or
 * -CD_E_DENIED (no method we accept: answer 05 FF and close) or
 * -CD_E_PARSE (not SOCKS5, no methods), with a reason in err. */
int cd_socks_greeting(const unsigned char *p, size_t len, struct cd_err *err);

struct cd_socks_request {
	char host[CD_HOST_MAX]; /* as cd_http_parse_head() gives it */
	uint16_t port;          /* never 0 */
	int atyp;               /* 1 IPv4, 3 domain, 4 IPv6 */
};

/* The request: VER CMD RSV ATYP DST.ADDR DST.PORT.  Returns the bytes it
 * takes (> 0) with *ret filled, CD_SOCKS_MORE, or a negative code with a
 * one-line reason in err: -ENOTSUP (a command other than CONNECT), -EAFNOSUPPORT
 * (an unknown address type), -CD_E_DENIED (an address spelled oddly, a
 * domain that is not a valid host name, port 0), -CD_E_PARSE (anything
 * else malformed).  cd_socks_reply_for() turns the code into the reply. */
int cd_socks_request(const unsigned char *p, size_t len, struct cd_socks_request *ret,
                     struct cd_err *err);

/* The reply code for a negative code of cd_socks_request(). */
enum cd_socks_reply cd_socks_reply_for(int code);

/* The 10-byte reply: VER REP RSV ATYP=1 BND.ADDR=0.0.0.0 BND.PORT=0 (the
 * proxy does not reveal the address it connected from). */
#define CD_SOCKS_REPLY_LEN 10
void cd_socks_reply(enum cd_socks_reply rep, unsigned char out[CD_SOCKS_REPLY_LEN]);

#endif
