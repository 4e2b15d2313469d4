/* test-egress-tls.c — the ClientHello SNI reader (THREATS row 23): valid
 * hellos read, every truncation waits or is refused, lengths that overflow
 * their container, no SNI, two names, not a handshake.  The hellos are
 * built here, field by field. */
#include "../tap.h"

#include "egress/egress-tls.h"

#include <errno.h>

static size_t put16(unsigned char *o, size_t v)
{
	o[0] = (unsigned char)(v >> 8);
	o[1] = (unsigned char)v;
	return 2;
}

/* A server_name extension with n host_name entries (the same name). */
static size_t sni_ext(unsigned char *o, const char *name, int n)
{
	size_t nl = strlen(name), i = 0, k;
	int e;

	i += put16(o + i, 0);
	i += put16(o + i, 2 + (size_t)n * (3 + nl));
	i += put16(o + i, (size_t)n * (3 + nl));
	for (e = 0; e < n; e++) {
		o[i++] = 0;
		i += put16(o + i, nl);
		for (k = 0; k < nl; k++)
			o[i++] = (unsigned char)name[k];
	}
	return i;
}

/* A whole record: header, ClientHello, the given extensions block. */
static size_t hello(unsigned char *o, const unsigned char *ext, size_t extlen, int has_exts)
{
	size_t i = 0, body, hs;

	o[i++] = 22;
	o[i++] = 3;
	o[i++] = 1;
	body = i;
	i += 2;
	o[i++] = 1; /* ClientHello */
	hs = i;
	i += 3;
	o[i++] = 3;
	o[i++] = 3;
	memset(o + i, 0xab, 32);
	i += 32;
	o[i++] = 0;           /* session id */
	i += put16(o + i, 4); /* two suites */
	o[i++] = 0x13;
	o[i++] = 0x01;
	o[i++] = 0x13;
	o[i++] = 0x02;
	o[i++] = 1; /* compression: null */
	o[i++] = 0;
	if (has_exts) {
		i += put16(o + i, extlen);
		memcpy(o + i, ext, extlen);
		i += extlen;
	}
	put16(o + body, i - body - 2);
	o[hs] = 0;
	put16(o + hs + 1, i - hs - 3);
	return i;
}

static unsigned char buf[CD_TLS_RECORD_MAX + 64], ext[CD_TLS_RECORD_MAX];

static void test_valid(void)
{
	char name[CD_HOST_MAX];
	size_t n, e = 0;

	/* Another extension first (supported_versions), then the name. */
	e += put16(ext + e, 43);
	e += put16(ext + e, 3);
	ext[e++] = 2;
	e += put16(ext + e, 0x0304);
	e += sni_ext(ext + e, "API.Example.com", 1);
	n = hello(buf, ext, e, 1);
	is_int(cd_tls_client_hello_sni(buf, n, name, sizeof name, NULL), CD_TLS_SNI,
	       "a valid hello with a name");
	is_str(name, "api.example.com", "the name is normalized");
	/* The bytes after the record (the rest of the stream) do not matter. */
	is_int(cd_tls_client_hello_sni(buf, n + 10, name, sizeof name, NULL), CD_TLS_SNI,
	       "bytes after the record are left alone");

	n = hello(buf, ext, 0, 1);
	is_int(cd_tls_client_hello_sni(buf, n, name, sizeof name, NULL), CD_TLS_NO_SNI,
	       "empty extensions: no SNI");
	n = hello(buf, ext, 0, 0);
	is_int(cd_tls_client_hello_sni(buf, n, name, sizeof name, NULL), CD_TLS_NO_SNI,
	       "no extensions block: no SNI");
	e = put16(ext, 43);
	e += put16(ext + e, 0);
	n = hello(buf, ext, e, 1);
	is_int(cd_tls_client_hello_sni(buf, n, name, sizeof name, NULL), CD_TLS_NO_SNI,
	       "other extensions only: no SNI");
}

/* Every proper prefix of a valid hello waits for more, never refuses,
 * never reads past its length (ASan). */
static void test_truncated(void)
{
	char name[CD_HOST_MAX];
	size_t n, i, e, bad = 0;
	unsigned char *copy;

	e = sni_ext(ext, "example.com", 1);
	n = hello(buf, ext, e, 1);
	for (i = 0; i < n; i++) {
		copy = malloc(i ? i : 1);
		memcpy(copy, buf, i);
		if (cd_tls_client_hello_sni(copy, i, name, sizeof name, NULL) != CD_TLS_MORE)
			bad++;
		free(copy);
	}
	is_int((int)bad, 0, "each of the %zu prefixes waits for more", n);
}

static void test_refused(void)
{
	char name[CD_HOST_MAX];
	struct cd_err err;
	size_t n, e;

	e = sni_ext(ext, "example.com", 2);
	n = hello(buf, ext, e, 1);
	is_int(cd_tls_client_hello_sni(buf, n, name, sizeof name, &err), -CD_E_PARSE,
	       "two host names refused (%s)", err.msg);
	e = sni_ext(ext, "example.com", 1);
	e += sni_ext(ext + e, "evil.example", 1);
	n = hello(buf, ext, e, 1);
	is_int(cd_tls_client_hello_sni(buf, n, name, sizeof name, &err), -CD_E_PARSE,
	       "two server_name extensions refused (%s)", err.msg);
	e = sni_ext(ext, "exa\\mple.com", 1);
	n = hello(buf, ext, e, 1);
	is_int(cd_tls_client_hello_sni(buf, n, name, sizeof name, &err), -CD_E_PARSE,
	       "a name that does not normalize refused");
	e = sni_ext(ext,
	            "b\xc3\xbc"
	            "cher.example",
	            1);
	n = hello(buf, ext, e, 1);
	is_int(cd_tls_client_hello_sni(buf, n, name, sizeof name, &err), -CD_E_PARSE,
	       "a UTF-8 name refused: SNI is ASCII, A-labels (%s)", err.msg);
	e = sni_ext(ext, "xn--zz.example", 1);
	n = hello(buf, ext, e, 1);
	is_int(cd_tls_client_hello_sni(buf, n, name, sizeof name, &err), -CD_E_PARSE,
	       "an invalid A-label refused");
	e = sni_ext(ext, "XN--BCHER-KVA.example", 1);
	n = hello(buf, ext, e, 1);
	is_int(cd_tls_client_hello_sni(buf, n, name, sizeof name, &err), CD_TLS_SNI,
	       "an A-label is read");
	is_str(name, "xn--bcher-kva.example", "  and normalized");
	e = sni_ext(ext, "", 1);
	n = hello(buf, ext, e, 1);
	is_int(cd_tls_client_hello_sni(buf, n, name, sizeof name, &err), -CD_E_PARSE,
	       "an empty name refused");
	e = sni_ext(ext, "a.example", 1);
	ext[6] = 1; /* name_type */
	n = hello(buf, ext, e, 1);
	is_int(cd_tls_client_hello_sni(buf, n, name, sizeof name, &err), -CD_E_PARSE,
	       "a name type other than host_name refused");

	/* Lengths overflowing their container, one field at a time. */
	e = sni_ext(ext, "example.com", 1);
	n = hello(buf, ext, e, 1);
	{
		static const struct {
			size_t off; /* from the start of the extensions block (-1: absolute) */
			unsigned char v;
			const char *what;
		} cases[] = {
			{ 0, 0xff, "extensions block length" },
			{ 4, 0xff, "extension length" },
			{ 6, 0xff, "server_name list length" },
			{ 9, 0xff, "host_name length" },
		};
		size_t base = n - e - 2, i;
		for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
			unsigned char save = buf[base + cases[i].off];
			buf[base + cases[i].off] = cases[i].v;
			is_int(cd_tls_client_hello_sni(buf, n, name, sizeof name, &err),
			       -CD_E_PARSE, "%s too long refused", cases[i].what);
			buf[base + cases[i].off] = save;
		}
		buf[8] = 0xff; /* handshake length (low byte of three) */
		is_int(cd_tls_client_hello_sni(buf, n, name, sizeof name, &err), -CD_E_PARSE,
		       "handshake length past the record refused");
		buf[8] = (unsigned char)(n - 9);
		buf[43] = 33; /* session id length */
		is_int(cd_tls_client_hello_sni(buf, n, name, sizeof name, &err), -CD_E_PARSE,
		       "session id longer than 32 refused");
		buf[43] = 0;
		buf[45] = 3; /* odd cipher suites length */
		is_int(cd_tls_client_hello_sni(buf, n, name, sizeof name, &err), -CD_E_PARSE,
		       "odd cipher suites length refused");
		buf[45] = 4;
		is_int(cd_tls_client_hello_sni(buf, n, name, sizeof name, &err), CD_TLS_SNI,
		       "the restored hello reads again");
	}

	/* The record itself. */
	n = hello(buf, ext, e, 1);
	buf[0] = 23;
	is_int(cd_tls_client_hello_sni(buf, 1, name, sizeof name, &err), -CD_E_PARSE,
	       "an application-data record refused from its first byte");
	memcpy(buf, "GET / HTTP/1.1\r\n", 16);
	is_int(cd_tls_client_hello_sni(buf, 16, name, sizeof name, &err), -CD_E_PARSE,
	       "plain text refused");
	n = hello(buf, ext, e, 1);
	buf[1] = 2;
	is_int(cd_tls_client_hello_sni(buf, n, name, sizeof name, &err), -CD_E_PARSE,
	       "SSL 2 record version refused");
	n = hello(buf, ext, e, 1);
	buf[5] = 2; /* ServerHello */
	is_int(cd_tls_client_hello_sni(buf, n, name, sizeof name, &err), -CD_E_PARSE,
	       "a handshake other than ClientHello refused");
	n = hello(buf, ext, e, 1);
	put16(buf + 3, CD_TLS_RECORD_BODY_MAX + 1);
	is_int(cd_tls_client_hello_sni(buf, 5, name, sizeof name, &err), -CD_E_LIMIT,
	       "a record over 16 KiB refused from its header");
	/* A hello split over two records (bytes after it in the first). */
	n = hello(buf, ext, e, 1);
	put16(buf + 3, n - 5 + 1);
	buf[n] = 0;
	is_int(cd_tls_client_hello_sni(buf, n + 1, name, sizeof name, &err), -CD_E_PARSE,
	       "bytes after the ClientHello in its record refused");
}

static void test_biggest(void)
{
	char name[CD_HOST_MAX];
	size_t e, n;

	/* A padding extension filling the record to exactly 16 KiB. */
	e = sni_ext(ext, "example.com", 1);
	n = hello(buf, ext, e, 1);
	{
		size_t pad = CD_TLS_RECORD_MAX - n - 4;
		e += put16(ext + e, 21);
		e += put16(ext + e, pad);
		memset(ext + e, 0, pad);
		e += pad;
	}
	n = hello(buf, ext, e, 1);
	is_int((int)n, CD_TLS_RECORD_MAX, "a record of the largest size");
	is_int(cd_tls_client_hello_sni(buf, n, name, sizeof name, NULL), CD_TLS_SNI, "... is read");
}

int main(void)
{
	tap_start(30);
	test_valid();
	test_truncated();
	test_refused();
	test_biggest();
	return tap_done();
}
