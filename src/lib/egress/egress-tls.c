/* egress-tls.c — see egress-tls.h.  A cursor over a (pointer, length)
 * view: every read checks what is left first, every nested length is
 * checked against its container, and a container must be used up exactly. */
#include "egress-tls.h"

#include <errno.h>
#include <stdint.h>
#include <string.h>

struct cur {
	const unsigned char *p;
	size_t left;
};

static int take(struct cur *c, size_t n, const unsigned char **ret)
{
	if (n > c->left)
		return -1;
	if (ret)
		*ret = c->p;
	c->p += n;
	c->left -= n;
	return 0;
}

static int u8(struct cur *c, size_t *ret)
{
	const unsigned char *b;

	if (take(c, 1, &b) < 0)
		return -1;
	*ret = b[0];
	return 0;
}

static int u16(struct cur *c, size_t *ret)
{
	const unsigned char *b;

	if (take(c, 2, &b) < 0)
		return -1;
	*ret = ((size_t)b[0] << 8) | b[1];
	return 0;
}

static int u24(struct cur *c, size_t *ret)
{
	const unsigned char *b;

	if (take(c, 3, &b) < 0)
		return -1;
	*ret = ((size_t)b[0] << 16) | ((size_t)b[1] << 8) | b[2];
	return 0;
}

/* A sub-cursor over the next n bytes of c. */
static int sub(struct cur *c, size_t n, struct cur *ret)
{
	const unsigned char *b;

	if (take(c, n, &b) < 0)
		return -1;
	ret->p = b;
	ret->left = n;
	return 0;
}

static int bad(struct cd_err *err, const char *why)
{
	return cd_err_set(err, -CD_E_PARSE, "tls client hello: %s", why);
}

/* The server_name extension body: a list holding one host_name. */
static int server_name(struct cur *ext, char *ret_name, size_t namelen, struct cd_err *err)
{
	struct cur list;
	const unsigned char *name;
	size_t n, type, nlen;

	if (u16(ext, &n) < 0 || sub(ext, n, &list) < 0 || ext->left != 0)
		return bad(err, "server_name list length disagrees with its extension");
	if (u8(&list, &type) < 0 || u16(&list, &nlen) < 0 || take(&list, nlen, &name) < 0)
		return bad(err, "server_name entry is truncated");
	if (type != 0)
		return bad(err, "server_name entry is not a host_name");
	if (list.left != 0)
		return bad(err, "more than one server_name entry");
	if (nlen == 0 || memchr(name, '\0', nlen))
		return bad(err, "server_name is empty or holds a NUL");
	/* RFC 6066: ASCII, an internationalized name as its A-labels. */
	for (n = 0; n < nlen; n++)
		if (name[n] >= 0x80)
			return bad(err, "server_name is not ASCII");
	if (namelen < CD_HOST_MAX ||
	    cd_host_normalize((const char *)name, nlen, ret_name, namelen) < 0)
		return bad(err, "server_name is not a valid host name");
	return CD_TLS_SNI;
}

int cd_tls_client_hello_sni(const unsigned char *p, size_t len, char *ret_name, size_t namelen,
                            struct cd_err *err)
{
	char name[CD_HOST_MAX];
	struct cur rec, body, hello, exts;
	size_t v, n, major, rlen, hlen, seen = 0;
	int found = 0, r;

	rec.p = p;
	rec.left = len;
	/* The record header: byte by byte, so that a short prefix that is
	 * already wrong is refused at once. */
	if (u8(&rec, &v) < 0)
		return CD_TLS_MORE;
	if (v != 22)
		return bad(err, "not a TLS handshake record");
	if (u8(&rec, &major) < 0)
		return CD_TLS_MORE;
	if (major != 3)
		return bad(err, "record version is not 3.x");
	if (take(&rec, 1, NULL) < 0 || u16(&rec, &rlen) < 0)
		return CD_TLS_MORE;
	if (rlen > CD_TLS_RECORD_BODY_MAX)
		return cd_err_set(err, -CD_E_LIMIT, "tls client hello: record longer than %d bytes",
		                  CD_TLS_RECORD_BODY_MAX);
	if (rlen < 4)
		return bad(err, "record too short for a handshake");
	if (sub(&rec, rlen, &body) < 0)
		return CD_TLS_MORE;

	/* One ClientHello, whole in this record. */
	if (u8(&body, &v) < 0 || v != 1)
		return bad(err, "first handshake message is not a ClientHello");
	if (u24(&body, &hlen) < 0 || sub(&body, hlen, &hello) < 0)
		return bad(err, "ClientHello does not fit in its record");
	if (body.left != 0)
		return bad(err, "bytes after the ClientHello in its record");
	if (u8(&hello, &major) < 0 || major != 3 || take(&hello, 1 + 32, NULL) < 0)
		return bad(err, "ClientHello version or random is missing");
	if (u8(&hello, &n) < 0 || n > 32 || take(&hello, n, NULL) < 0)
		return bad(err, "session id is malformed");
	if (u16(&hello, &n) < 0 || n < 2 || n % 2 || take(&hello, n, NULL) < 0)
		return bad(err, "cipher suites are malformed");
	if (u8(&hello, &n) < 0 || n < 1 || take(&hello, n, NULL) < 0)
		return bad(err, "compression methods are malformed");
	if (hello.left == 0)
		return CD_TLS_NO_SNI; /* no extensions at all */
	if (u16(&hello, &n) < 0 || sub(&hello, n, &exts) < 0 || hello.left != 0)
		return bad(err, "extensions length disagrees with the ClientHello");
	while (exts.left > 0) {
		struct cur ext;
		size_t type;
		if (u16(&exts, &type) < 0 || u16(&exts, &n) < 0 || sub(&exts, n, &ext) < 0)
			return bad(err, "an extension is truncated");
		if (type == 0) {
			if (seen++)
				return bad(err, "server_name extension appears twice");
			r = server_name(&ext, name, sizeof name, err);
			if (r < 0)
				return r;
			found = 1;
		}
	}
	if (!found)
		return CD_TLS_NO_SNI;
	if (namelen < CD_HOST_MAX)
		return cd_err_set(err, -EINVAL, "tls client hello: name buffer too small");
	memcpy(ret_name, name, CD_HOST_MAX);
	return CD_TLS_SNI;
}
