/* tool-url.c — the url: of a remote MCP server; see tool-url.h. */
#include "tool-url.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

static int bad(struct cd_err *err, const char *why)
{
	return cd_err_set(err, -EINVAL, "url: %s", why);
}

int cd_tool_url_parse(const char *s, struct cd_tool_url *ret, struct cd_err *err)
{
	struct cd_tool_url u;
	const char *p, *auth, *aend, *hend, *path;
	size_t n = strlen(s), i;
	unsigned long port = 0;
	int k;

	memset(&u, 0, sizeof u);
	if (n >= CD_URL_MAX)
		return bad(err, "too long");
	for (i = 0; i < n; i++) {
		unsigned char ch = (unsigned char)s[i];
		if (ch <= 0x20 || ch >= 0x7f || ch == '\\' || ch == '#')
			return bad(err,
			           "spaces, control bytes, non-ASCII, '\\' and '#' are refused");
	}
	if (!strncmp(s, "https://", 8)) {
		u.https = 1;
		auth = s + 8;
	} else if (!strncmp(s, "http://", 7)) {
		auth = s + 7;
	} else {
		return bad(err, "the scheme must be https:// (or http:// to an IP address)");
	}
	aend = auth + strcspn(auth, "/?");
	path = aend;
	if (memchr(auth, '@', (size_t)(aend - auth)))
		return bad(err, "user info is refused: credentials come from secret:");
	if (memchr(auth, '%', (size_t)(aend - auth)))
		return bad(err, "a percent-encoded host is refused");
	if (auth < aend && auth[0] == '[') {
		hend = memchr(auth, ']', (size_t)(aend - auth));
		if (!hend)
			return bad(err, "an unclosed '['");
		hend++;
	} else {
		hend = memchr(auth, ':', (size_t)(aend - auth));
		if (!hend)
			hend = aend;
	}
	if (hend == auth)
		return bad(err, "no host");
	if (hend < aend) {
		if (*hend != ':' || hend + 1 == aend)
			return bad(err, "a bad port");
		for (p = hend + 1; p < aend; p++) {
			if (*p < '0' || *p > '9' || port > 65535)
				return bad(err, "a bad port");
			port = port * 10 + (unsigned long)(*p - '0');
		}
		if (port == 0 || port > 65535 || hend[1] == '0')
			return bad(err, "a port from 1 to 65535, without leading zeros");
	} else {
		port = u.https ? 443 : 80;
	}
	u.port = (uint16_t)port;
	if (cd_host_normalize(auth, (size_t)(hend - auth), u.host, sizeof u.host) < 0)
		return bad(err, "the host is not a valid name or address");
	u.host_literal = u.host[0] == '[' || strspn(u.host, "0123456789.") == strlen(u.host);
	if (!u.https && !u.host_literal)
		return bad(err, "http:// only to an IP address (a name could be moved by its "
		                "resolver): use https://");
	k = snprintf(u.url, sizeof u.url, "%s://%s:%u%s%s", u.https ? "https" : "http", u.host,
	             u.port, *path == '/' ? "" : "/", path);
	if (k < 0 || (size_t)k >= sizeof u.url)
		return bad(err, "too long");
	*ret = u;
	return 0;
}
