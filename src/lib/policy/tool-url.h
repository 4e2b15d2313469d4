/* tool-url.h — the url: of a remote MCP server in the policy's tools
 * (`kind: mcp`, `url: https://mcp.example.com/mcp`): parsed strictly, so
 * that what the operator wrote is the one origin cordon connects to.
 *
 * Trust boundary: the text comes from the policy file (the operator's),
 * but is parsed as untrusted: anything a browser or libcurl would read
 * differently is refused rather than guessed. */
#ifndef CD_TOOL_URL_H
#define CD_TOOL_URL_H

#include "match-host.h"
#include "util/err.h"

#include <stdint.h>

#define CD_URL_MAX 2048

struct cd_tool_url {
	int https;
	char host[CD_HOST_MAX]; /* normalized: a name, a dotted quad, or "[v6]" */
	uint16_t port;          /* the URL's, else 443 / 80 */
	int host_literal;       /* an IP address, not a name */
	char url[CD_URL_MAX];   /* scheme://host:port/path?query, as cordon sends it */
};

/* Parse `s`: "https://HOST[:PORT][/PATH[?QUERY]]", or "http://" with an
 * IP address as HOST (plain HTTP only to an address named outright, never
 * to a name a resolver could move).  Refused (-EINVAL, the reason in err):
 * any other scheme, user info ("user:pass@": credentials come from
 * cordon's secrets), a fragment, spaces, control bytes, backslashes,
 * percent-encoded hosts, a port outside 1..65535, a host
 * cd_host_normalize() refuses. */
int cd_tool_url_parse(const char *s, struct cd_tool_url *ret, struct cd_err *err);

#endif
