/* egress-socks.c — see egress-socks.h.
 *
 * Trust boundary: every byte is the agent's.  Lengths come from the
 * message and are checked against what was received before anything is
 * read; the target is rebuilt in the one canonical text form the policy
 * understands, never passed on as given. */
#include "egress-socks.h"

#include "egress-addr.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>

#define METHOD_NO_AUTH 0x00
#define CMD_CONNECT    0x01
#define ATYP_IPV4      0x01
#define ATYP_DOMAIN    0x03
#define ATYP_IPV6      0x04

int cd_socks_greeting(const unsigned char *p, size_t len, struct cd_err *err)
{
	size_t n, i;

	if (len < 1)
		return CD_SOCKS_MORE;
	if (p[0] != CD_SOCKS_VERSION)
		return cd_err_set(err, -CD_E_PARSE, "socks: not version 5");
	if (len < 2)
		return CD_SOCKS_MORE;
	n = p[1];
	if (n == 0)
		return cd_err_set(err, -CD_E_PARSE, "socks: no authentication methods offered");
	if (len < 2 + n)
		return CD_SOCKS_MORE;
	for (i = 0; i < n; i++)
		if (p[2 + i] == METHOD_NO_AUTH)
			return (int)(2 + n);
	return cd_err_set(err, -CD_E_DENIED, "socks: only 'no authentication' is offered here");
}

/* A domain: ASCII, no NUL, then the same checks as an HTTP target. */
static int domain(const unsigned char *d, size_t n, char *host, struct cd_err *err)
{
	size_t i;
	int lit;

	if (n == 0)
		return cd_err_set(err, -CD_E_DENIED, "socks: empty domain name");
	for (i = 0; i < n; i++)
		if (d[i] == 0 || d[i] >= 0x80)
			return cd_err_set(err, -CD_E_DENIED,
			                  "socks: domain name holds a NUL or is not ASCII");
	lit = cd_addr_literal((const char *)d, n, NULL);
	if (lit == -CD_E_DENIED)
		return cd_err_set(err, -CD_E_DENIED,
		                  "socks: host is an IP address in a non-canonical form");
	if (lit < 0 || cd_host_normalize((const char *)d, n, host, CD_HOST_MAX) < 0)
		return cd_err_set(err, -CD_E_DENIED, "socks: invalid host name");
	return 0;
}

int cd_socks_request(const unsigned char *p, size_t len, struct cd_socks_request *ret,
                     struct cd_err *err)
{
	struct cd_socks_request rq;
	char text[INET6_ADDRSTRLEN];
	size_t alen, at;
	int w;

	if (len < 1)
		return CD_SOCKS_MORE;
	if (p[0] != CD_SOCKS_VERSION)
		return cd_err_set(err, -CD_E_PARSE, "socks: request is not version 5");
	if (len < 2)
		return CD_SOCKS_MORE;
	if (p[1] != CMD_CONNECT)
		return cd_err_set(err, -ENOTSUP, "socks: only CONNECT is supported");
	if (len < 4)
		return CD_SOCKS_MORE;
	if (p[2] != 0)
		return cd_err_set(err, -CD_E_PARSE, "socks: reserved byte is not zero");
	memset(&rq, 0, sizeof rq);
	rq.atyp = p[3];
	switch (p[3]) {
	case ATYP_IPV4:
		alen = 4;
		at = 4;
		break;
	case ATYP_IPV6:
		alen = 16;
		at = 4;
		break;
	case ATYP_DOMAIN:
		if (len < 5)
			return CD_SOCKS_MORE;
		alen = p[4];
		at = 5;
		break;
	default:
		return cd_err_set(err, -EAFNOSUPPORT, "socks: unknown address type");
	}
	if (len < at + alen + 2)
		return CD_SOCKS_MORE;
	rq.port = (uint16_t)(p[at + alen] << 8 | p[at + alen + 1]);
	if (rq.port == 0)
		return cd_err_set(err, -CD_E_DENIED, "socks: port 0");
	if (p[3] == ATYP_DOMAIN) {
		if (domain(p + at, alen, rq.host, err) < 0)
			return -CD_E_DENIED;
	} else {
		if (!inet_ntop(p[3] == ATYP_IPV4 ? AF_INET : AF_INET6, p + at, text, sizeof text))
			return cd_err_set(err, -CD_E_PARSE, "socks: bad address");
		w = p[3] == ATYP_IPV4 ? snprintf(rq.host, sizeof rq.host, "%s", text)
		                      : snprintf(rq.host, sizeof rq.host, "[%s]", text);
		if (w < 0 || (size_t)w >= sizeof rq.host)
			return cd_err_set(err, -CD_E_PARSE, "socks: bad address");
	}
	*ret = rq;
	return (int)(at + alen + 2);
}

enum cd_socks_reply cd_socks_reply_for(int code)
{
	switch (code) {
	case -ENOTSUP:
		return CD_SOCKS_CMD_UNSUPPORTED;
	case -EAFNOSUPPORT:
		return CD_SOCKS_ATYP_UNSUPPORTED;
	case -CD_E_DENIED:
		return CD_SOCKS_NOT_ALLOWED;
	default:
		return CD_SOCKS_FAILURE;
	}
}

void cd_socks_reply(enum cd_socks_reply rep, unsigned char out[CD_SOCKS_REPLY_LEN])
{
	memset(out, 0, CD_SOCKS_REPLY_LEN);
	out[0] = CD_SOCKS_VERSION;
	out[1] = (unsigned char)rep;
	out[3] = ATYP_IPV4;
}
