/* egress-tls.h — the one thing the egress proxy reads from a TLS stream:
 * the server_name (SNI) of the client's first ClientHello, so that a
 * CONNECT to one allowed host cannot carry a TLS session for another
 * (THREATS row 23).
 *
 * Strict: the ClientHello must be whole in the first record (one record of
 * at most CD_TLS_RECORD_BODY_MAX bytes, content type handshake, version
 * 3.x), every length must agree with its container, a server_name
 * extension holds exactly one host_name entry and appears once.  Anything else is refused rather than guessed at.
 *
 * Trust boundary: the bytes come from the sandboxed agent; they are a
 * (pointer, length) view and nothing is read past `len`. */
#ifndef CD_EGRESS_TLS_H
#define CD_EGRESS_TLS_H

#include "util/bounds.h"
#include "util/err.h"
#include "policy/match-host.h"

#include <stddef.h>

enum {
	CD_TLS_MORE = 0,   /* the record is not complete yet */
	CD_TLS_SNI = 1,    /* a server_name was found and written */
	CD_TLS_NO_SNI = 2, /* a valid ClientHello without server_name */
};

/* Look at the first TLS record at the start of (p, len).
 * Returns CD_TLS_MORE when more bytes are needed (nothing seen so far is
 * wrong), CD_TLS_SNI with the name normalized (cd_host_normalize) in
 * ret_name (at least CD_HOST_MAX bytes), CD_TLS_NO_SNI, or
 *   -CD_E_LIMIT  the record announces more than CD_TLS_RECORD_BODY_MAX;
 *   -CD_E_PARSE  not a ClientHello, a length that disagrees, a malformed
 *                or repeated extension, two names, a name that does not
 *                normalize.
 * On failure `err` (may be NULL) holds a one-line reason that never quotes
 * the peer's bytes.  ret_name is written only for CD_TLS_SNI. */
int cd_tls_client_hello_sni(const unsigned char *p, size_t len, char *ret_name, size_t namelen,
                            struct cd_err *err);

#endif
