/* test-mcp-http-url.c — the url: of a remote MCP server
 * (policy/tool-url.c): what is taken, in the one form cordon sends, and
 * every spelling that could reach elsewhere than written, refused. */
#include "../tap.h"

#include "policy/tool-url.h"

#include <string.h>

int main(void)
{
	static const struct {
		const char *in, *url, *host;
		unsigned port;
		int literal;
	} good[] = {
		{ "https://mcp.example.com/mcp", "https://mcp.example.com:443/mcp",
		  "mcp.example.com", 443, 0 },
		{ "https://MCP.Example.com:8443", "https://mcp.example.com:8443/",
		  "mcp.example.com", 8443, 0 },
		{ "https://mcp.example.com?x=1", "https://mcp.example.com:443/?x=1",
		  "mcp.example.com", 443, 0 },
		{ "http://127.0.0.1:3901/mcp", "http://127.0.0.1:3901/mcp", "127.0.0.1", 3901, 1 },
		{ "http://[::1]:80/m", "http://[::1]:80/m", "[::1]", 80, 1 },
		{ "https://10.0.0.5/mcp", "https://10.0.0.5:443/mcp", "10.0.0.5", 443, 1 },
	};
	static const char *const bad[] = {
		"http://localhost:3901/mcp",       /* http to a name */
		"http://mcp.example.com/mcp",      /* http to a name */
		"https://user:pw@example.com/",    /* user info */
		"https://example.com@evil.com/",   /* user info */
		"ftp://example.com/",              /* scheme */
		"HTTPS://example.com/",            /* scheme spelling */
		"https://example.com:0/",          /* port 0 */
		"https://example.com:65536/",      /* port */
		"https://example.com:080/",        /* leading zero */
		"https://example.com:/",           /* empty port */
		"https://exa%6dple.com/",          /* percent-encoded host */
		"https://example.com/a#frag",      /* fragment */
		"https://example.com/a b",         /* space */
		"https://example.com\\@evil.com/", /* backslash */
		"https://2130706433/",             /* a number for an address */
		"http://127.1/",                   /* a short address */
		"https://[::1/",                   /* unclosed */
		"https:///mcp",                    /* no host */
		"https://ex_ample.com/",           /* not a host name */
	};
	struct cd_tool_url u;
	struct cd_err err;
	size_t i;

	for (i = 0; i < sizeof good / sizeof good[0]; i++) {
		memset(&u, 0, sizeof u);
		is_int(cd_tool_url_parse(good[i].in, &u, &err), 0, "taken: %s", good[i].in);
		is_str(u.url, good[i].url, "... in the form cordon sends");
		is_str(u.host, good[i].host, "... its host normalized");
		is_int(u.port, good[i].port, "... port %u", good[i].port);
		is_int(u.host_literal, good[i].literal, "... an address: %d", good[i].literal);
	}
	for (i = 0; i < sizeof bad / sizeof bad[0]; i++)
		is_int(cd_tool_url_parse(bad[i], &u, &err), -EINVAL, "refused: %s", bad[i]);
	printf("1..%d\n", tap_n);
	return tap_failed ? 1 : 0;
}
