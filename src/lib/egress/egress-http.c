/* egress-http.c — see egress-http.h.
 *
 * Trust boundary: every byte is from the sandboxed agent.  The head is
 * scanned once for its end and for bytes that have no place in it (NUL,
 * controls, non-ASCII, a CR without LF or an LF without CR), then parsed
 * line by line with a cursor.  When two readings of a request are possible
 * (which host, which body length) the request is refused. */
#include "egress-http.h"

#include "egress-addr.h"
#include "util/num.h"
#include "util/util.h"

#include <errno.h>
#include <string.h>
#include <strings.h>

struct view {
	const char *p;
	size_t len;
};

static int ieq(struct view v, const char *s)
{
	size_t n = strlen(s);
	return v.len == n && strncasecmp(v.p, s, n) == 0;
}

static int is_tchar(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       (c && strchr("!#$%&'*+-.^_`|~", c));
}

/* Find the end of the head and refuse bytes that do not belong in one.
 * Returns the head length, 0 when incomplete, or a negative code. */
static int scan(const char *p, size_t len, struct cd_err *err)
{
	size_t i, line_start = 0, lines = 0,
	          lim = len < CD_EGRESS_HEAD_MAX ? len : CD_EGRESS_HEAD_MAX;

	for (i = 0; i < lim; i++) {
		unsigned char c = (unsigned char)p[i];
		if (c == '\r') {
			if (i + 1 == lim)
				break; /* the LF may still come */
			if (p[i + 1] != '\n')
				return cd_err_set(err, -CD_E_PARSE, "bare CR in request head");
			continue;
		}
		if (c == '\n') {
			if (i == 0 || p[i - 1] != '\r')
				return cd_err_set(err, -CD_E_PARSE, "bare LF in request head");
			if (i + 1 - line_start > CD_EGRESS_LINE_MAX)
				return cd_err_set(err, -CD_E_LIMIT,
				                  "request line or header too long");
			if (i + 1 - line_start == 2)
				return (int)(i + 1); /* the blank line */
			if (++lines > CD_EGRESS_HEADERS_MAX + 1)
				return cd_err_set(err, -CD_E_LIMIT, "too many header fields");
			line_start = i + 1;
			continue;
		}
		if (c == 0)
			return cd_err_set(err, -CD_E_PARSE, "NUL byte in request head");
		if (c >= 0x80)
			return cd_err_set(err, -CD_E_PARSE, "non-ASCII byte in request head");
		if ((c < 0x20 && c != '\t') || c == 0x7f)
			return cd_err_set(err, -CD_E_PARSE, "control byte in request head");
	}
	if (i - line_start > CD_EGRESS_LINE_MAX)
		return cd_err_set(err, -CD_E_LIMIT, "request line or header too long");
	if (len >= CD_EGRESS_HEAD_MAX)
		return cd_err_set(err, -CD_E_LIMIT, "request head too large");
	return 0;
}

static int parse_port(struct view v, uint16_t *ret, struct cd_err *err)
{
	uint64_t n;

	if (v.len == 0 || v.p[0] == '0' || cd_parse_u64(v.p, v.len, 65535, &n) < 0)
		return cd_err_set(err, -CD_E_PARSE, "invalid port");
	*ret = (uint16_t)n;
	return 0;
}

/* host [":" port], host a name, a dotted quad or "[IPv6]".  *ret_port is
 * left alone when no port is given (*ret_has_port = 0). */
static int parse_authority(struct view a, char host[CD_HOST_MAX], uint16_t *ret_port,
                           int *ret_has_port, struct cd_err *err)
{
	struct view h = a, port = { NULL, 0 };
	const char *colon;
	int r;

	if (a.len == 0)
		return cd_err_set(err, -CD_E_PARSE, "empty host");
	if (memchr(a.p, '@', a.len))
		return cd_err_set(err, -CD_E_DENIED, "userinfo in request target");
	if (a.p[0] == '[') {
		const char *close = memchr(a.p, ']', a.len);
		if (!close)
			return cd_err_set(err, -CD_E_PARSE, "unterminated IPv6 address");
		h.len = (size_t)(close - a.p) + 1;
		colon = h.len < a.len ? a.p + h.len : NULL;
		if (colon && *colon != ':')
			return cd_err_set(err, -CD_E_PARSE, "junk after IPv6 address");
	} else {
		colon = memchr(a.p, ':', a.len);
		if (colon)
			h.len = (size_t)(colon - a.p);
	}
	*ret_has_port = 0;
	if (colon) {
		port.p = colon + 1;
		port.len = a.len - (size_t)(port.p - a.p);
		r = parse_port(port, ret_port, err);
		if (r < 0)
			return r;
		*ret_has_port = 1;
	}
	if (h.len == 0)
		return cd_err_set(err, -CD_E_PARSE, "empty host");
	r = cd_addr_literal(h.p, h.len, NULL);
	if (r == -CD_E_DENIED)
		return cd_err_set(err, -CD_E_DENIED,
		                  "host is an IP address in a non-canonical form");
	if (r < 0)
		return cd_err_set(err, -CD_E_PARSE, "invalid host");
	if (cd_host_normalize(h.p, h.len, host, CD_HOST_MAX) < 0)
		return cd_err_set(err, -CD_E_PARSE, "invalid host name");
	return 0;
}

static const char *const methods[] = {
	"CONNECT", "GET", "HEAD", "POST", "PUT", "DELETE", "PATCH", "OPTIONS",
};

static int parse_request_line(struct view line, struct cd_http_request *rq, struct cd_err *err)
{
	const char *sp1 = memchr(line.p, ' ', line.len), *sp2;
	struct view method, target, version;
	size_t i;
	int r, has_port;

	if (!sp1)
		return cd_err_set(err, -CD_E_PARSE, "malformed request line");
	method = (struct view){ line.p, (size_t)(sp1 - line.p) };
	sp2 = memchr(sp1 + 1, ' ', line.len - method.len - 1);
	if (!sp2)
		return cd_err_set(err, -CD_E_PARSE, "malformed request line");
	target = (struct view){ sp1 + 1, (size_t)(sp2 - sp1 - 1) };
	version = (struct view){ sp2 + 1, line.len - (size_t)(sp2 + 1 - line.p) };

	for (i = 0; i < CD_ARRAY_SIZE(methods); i++)
		if (method.len == strlen(methods[i]) &&
		    memcmp(method.p, methods[i], method.len) == 0)
			break;
	if (i == CD_ARRAY_SIZE(methods))
		return cd_err_set(err, -CD_E_PARSE, "method not supported");
	memcpy(rq->method, method.p, method.len);
	rq->method[method.len] = '\0';
	rq->is_connect = i == 0;

	if (version.len == 8 && memcmp(version.p, "HTTP/1.1", 8) == 0)
		rq->minor = 1;
	else if (version.len == 8 && memcmp(version.p, "HTTP/1.0", 8) == 0)
		rq->minor = 0;
	else
		return cd_err_set(err, -CD_E_PARSE, "unsupported HTTP version");

	if (target.len == 0)
		return cd_err_set(err, -CD_E_PARSE, "empty request target");
	for (i = 0; i < target.len; i++) {
		unsigned char c = (unsigned char)target.p[i];
		if (c <= 0x20 || c >= 0x7f)
			return cd_err_set(err, -CD_E_PARSE, "invalid byte in request target");
		if (c == '#')
			return cd_err_set(err, -CD_E_PARSE, "fragment in request target");
		if (c == '\\')
			return cd_err_set(err, -CD_E_PARSE, "backslash in request target");
	}

	if (rq->is_connect) {
		r = parse_authority(target, rq->host, &rq->port, &has_port, err);
		if (r < 0)
			return r;
		if (!has_port)
			return cd_err_set(err, -CD_E_PARSE, "CONNECT target needs a port");
		rq->path[0] = '\0';
		return 0;
	}

	{
		static const char http[] = "http://", https[] = "https://";
		struct view auth, path;
		size_t k;

		if (target.len >= sizeof https - 1 && strncasecmp(target.p, https, 8) == 0)
			return cd_err_set(err, -CD_E_PARSE,
			                  "https:// in a plain request (use CONNECT)");
		if (target.len < sizeof http - 1 || strncasecmp(target.p, http, 7) != 0)
			return cd_err_set(err, -CD_E_PARSE,
			                  "request target must be an http:// URI");
		auth.p = target.p + 7;
		for (k = 0; 7 + k < target.len && auth.p[k] != '/' && auth.p[k] != '?'; k++)
			;
		auth.len = k;
		path = (struct view){ auth.p + k, target.len - 7 - k };
		rq->port = 80;
		r = parse_authority(auth, rq->host, &rq->port, &has_port, err);
		if (r < 0)
			return r;
		k = 0;
		if (path.len == 0 || path.p[0] == '?')
			rq->path[k++] = '/';
		if (k + path.len >= sizeof rq->path)
			return cd_err_set(err, -CD_E_LIMIT, "request target too long");
		memcpy(rq->path + k, path.p, path.len);
		rq->path[k + path.len] = '\0';
	}
	return 0;
}

/* Headers that are checked here and never forwarded as they came. */
static const char *const dropped[] = {
	"host",
	"connection",
	"proxy-connection",
	"keep-alive",
	"proxy-authorization",
	"proxy-authenticate",
	"te",
	"trailer",
	"upgrade",
};

struct head_state {
	int hosts, lengths, encodings;
	uint64_t length;
};

static int check_host(struct view value, struct cd_http_request *rq, struct cd_err *err)
{
	char host[CD_HOST_MAX];
	uint16_t port = 0;
	int has_port, r;

	r = parse_authority(value, host, &port, &has_port, err);
	if (r < 0)
		return r == -CD_E_PARSE ? cd_err_set(err, -CD_E_PARSE, "invalid Host header") : r;
	if (strcmp(host, rq->host) != 0)
		return cd_err_set(err, -CD_E_DENIED,
		                  "Host header names another host than the target");
	if (has_port ? port != rq->port : (!rq->is_connect && rq->port != 80))
		return cd_err_set(err, -CD_E_DENIED,
		                  "Host header names another port than the target");
	return 0;
}

static int parse_field(const char *base, struct view line, struct cd_http_request *rq,
                       struct head_state *st, struct cd_err *err)
{
	struct view name, value;
	const char *colon;
	size_t i;
	int r;

	if (line.p[0] == ' ' || line.p[0] == '\t')
		return cd_err_set(err, -CD_E_PARSE, "obsolete line folding in header");
	colon = memchr(line.p, ':', line.len);
	if (!colon || colon == line.p)
		return cd_err_set(err, -CD_E_PARSE, "malformed header line");
	name = (struct view){ line.p, (size_t)(colon - line.p) };
	for (i = 0; i < name.len; i++)
		if (!is_tchar((unsigned char)name.p[i]))
			return cd_err_set(err, -CD_E_PARSE, "invalid header name");
	value.p = colon + 1;
	value.len = line.len - name.len - 1;
	while (value.len && (value.p[0] == ' ' || value.p[0] == '\t')) {
		value.p++;
		value.len--;
	}
	while (value.len && (value.p[value.len - 1] == ' ' || value.p[value.len - 1] == '\t'))
		value.len--;

	if (ieq(name, "host")) {
		if (++st->hosts > 1)
			return cd_err_set(err, -CD_E_DENIED, "more than one Host header");
		r = check_host(value, rq, err);
		if (r < 0)
			return r;
	} else if (ieq(name, "content-length")) {
		if (++st->lengths > 1)
			return cd_err_set(err, -CD_E_PARSE, "repeated Content-Length");
		if (cd_parse_u64(value.p, value.len, (uint64_t)1 << 62, &st->length) < 0)
			return cd_err_set(err, -CD_E_PARSE, "invalid Content-Length");
	} else if (ieq(name, "transfer-encoding")) {
		if (++st->encodings > 1)
			return cd_err_set(err, -CD_E_PARSE, "repeated Transfer-Encoding");
		if (!ieq(value, "chunked"))
			return cd_err_set(err, -CD_E_PARSE, "Transfer-Encoding other than chunked");
	}
	for (i = 0; i < CD_ARRAY_SIZE(dropped); i++)
		if (ieq(name, dropped[i]))
			return 0;
	if (rq->nfields >= CD_ARRAY_SIZE(rq->fields))
		return cd_err_set(err, -CD_E_LIMIT, "too many header fields");
	rq->fields[rq->nfields].off = (size_t)(line.p - base);
	rq->fields[rq->nfields].len = line.len;
	rq->nfields++;
	return 0;
}

int cd_http_parse_head(const char *p, size_t len, struct cd_http_request *ret, struct cd_err *err)
{
	struct cd_http_request *rq;
	struct head_state st;
	size_t pos = 0, head;
	int r, first = 1;

	if (!p || !ret)
		return cd_err_set(err, -EINVAL, "no request");
	r = scan(p, len, err);
	if (r <= 0)
		return r;
	head = (size_t)r;
	if (head == 2)
		return cd_err_set(err, -CD_E_PARSE, "empty request line");

	rq = calloc(1, sizeof *rq);
	if (!rq)
		return cd_err_set(err, -ENOMEM, "out of memory");
	memset(&st, 0, sizeof st);
	while (pos < head - 2) {
		const char *eol = memchr(p + pos, '\r', head - pos);
		struct view line = { p + pos, (size_t)(eol - (p + pos)) };
		if (first)
			r = parse_request_line(line, rq, err);
		else
			r = parse_field(p, line, rq, &st, err);
		if (r < 0)
			goto out;
		first = 0;
		pos += line.len + 2;
	}
	r = -CD_E_PARSE;
	if (st.lengths && st.encodings) {
		cd_err_set(err, r, "Content-Length together with Transfer-Encoding");
		goto out;
	}
	if (st.encodings && rq->minor == 0) {
		cd_err_set(err, r, "Transfer-Encoding in an HTTP/1.0 request");
		goto out;
	}
	if (rq->is_connect && (st.encodings || st.length > 0)) {
		cd_err_set(err, r, "CONNECT with a body");
		goto out;
	}
	if (!rq->is_connect && rq->minor == 1 && st.hosts == 0) {
		cd_err_set(err, r, "HTTP/1.1 request without Host header");
		goto out;
	}
	rq->head_len = head;
	rq->content_length = st.length;
	rq->chunked = st.encodings > 0;
	memcpy(ret, rq, sizeof *rq);
	r = (int)head;
out:
	free(rq);
	return r;
}
