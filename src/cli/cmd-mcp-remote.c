/* cmd-mcp-remote.c — `cordon mcp` in front of a remote MCP server: the
 * policy's tool names it with url: (and secret:), and the gateway speaks
 * Streamable HTTP to it (src/lib/mcp/mcp-http.c) where it would speak to
 * a launched server's pipes.  The gateway's decisions, pins, masking,
 * approvals and records are the same; this file adds what a network peer
 * needs:
 *   - the address: the url's host is decided as the egress proxy decides
 *     a destination, with an allowlist of that one host and port (naming
 *     the url is what allows it, and nothing else): a name is resolved
 *     once and refused when any address is not public, an address named
 *     outright is allowed; the vetted address is the only one libcurl may
 *     connect to.  The decision is an `egress` record, and so is each
 *     connection opened (or refused);
 *   - the credential: secret: NAME is read from cordon's environment or
 *     from the file of --secret NAME:FILE, sent as the Authorization
 *     header, never shown to the client nor written to a record, wiped at
 *     the end;
 *   - the transport's refusals and failures are mcp.protocol records.
 *
 * Trust boundary: the server's bytes reach the gateway only as messages
 * the transport has framed; the client's only through the gateway. */
#include "cli.h"

#include "cmd-mcp-int.h"
#include "egress/egress-policy.h"
#include "egress/egress-proxy.h"
#include "gate/gate-mcp.h"
#include "mcp/mcp-http.h"
#include "policy/tool-url.h"
#include "util/util.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <unistd.h>

#define REQUEST_TIMEOUT_MS (10 * 60 * 1000) /* one call and its answer */

struct mcp_remote {
	struct cd_tool_url url;
	struct cd_egress_decision dec;
	struct cd_egress_audit log;
	struct cd_mcp_http *up;
	char *auth;
	size_t auth_len;
	/* What is withheld from the server's messages: the value, and its
	 * last word when the value is "SCHEME TOKEN" (pointers into auth). */
	const char *needle[2];
};

static void record_egress(struct session *s, int allow, const char *reason,
                          const struct sockaddr_storage *connect)
{
	struct mcp_remote *r = s->remote;
	struct cd_egress_event ev;

	memset(&ev, 0, sizeof ev);
	ev.kind = "egress";
	ev.client = "cordon mcp";
	ev.method = "MCP";
	ev.host = r->url.host;
	ev.port = r->url.port;
	ev.allow = allow;
	ev.reason = reason;
	ev.rule = r->dec.rule[0] ? r->dec.rule : NULL;
	ev.addrs = r->dec.addrs;
	ev.naddrs = r->dec.naddrs < CD_EGRESS_ADDRS_MAX ? r->dec.naddrs : CD_EGRESS_ADDRS_MAX;
	ev.connect = connect;
	if (cd_egress_audit_log(&ev, &r->log) < 0)
		cli_errorf("audit: %s", r->log.err.msg);
}

static void on_connect(void *ctx, const struct sockaddr_storage *addr, int allowed)
{
	struct session *s = ctx;

	record_egress(s, allowed,
	              allowed ? "a connection to the MCP server's vetted address"
	                      : "a connection to another address than the vetted one: refused",
	              addr);
}

static void on_event(void *ctx, const char *what, const char *why)
{
	struct session *s = ctx;
	struct cd_mcp_event ev;
	struct cd_err err = { 0, "" };

	memset(&ev, 0, sizeof ev);
	ev.kind = CD_MCP_EV_PROTOCOL;
	ev.direction = "server";
	ev.method = "http";
	ev.verdict = strcmp(what, "refused") == 0 ? "deny" : "error";
	ev.reason = why;
	if (cd_gate_mcp_event(&s->gate, s->run_id, s->agent, s->task, &ev, &err) < 0)
		cli_errorf("audit: %s", err.msg);
	cli_warnf("the MCP server '%s': %s", s->server, why);
}

/* The credential must never reach the agent, even when the server sends
 * it back (a reflected header, a compromised server): each occurrence of
 * the secret's value, or of its last word ("Bearer TOKEN": TOKEN), in a
 * message is replaced before the gateway sees it, and recorded.  Only
 * needles that JSON writes as they are (printable ASCII but '"' and '\\')
 * can be found this way; read_secret() keeps only such ones. */
static size_t withhold(struct session *s, char *p, size_t n)
{
	static const char mark[] = "[withheld]";
	struct mcp_remote *r = s->remote;
	size_t k, hits = 0;

	for (k = 0; k < 2 && r->needle[k]; k++) {
		size_t nl = strlen(r->needle[k]), i = 0;
		char *hit;

		while (i + nl <= n && (hit = memmem(p + i, n - i, r->needle[k], nl))) {
			size_t at = (size_t)(hit - p);
			memmove(p + at + sizeof mark - 1, p + at + nl, n - at - nl);
			memcpy(p + at, mark, sizeof mark - 1);
			n = n - nl + sizeof mark - 1;
			i = at + sizeof mark - 1;
			hits++;
		}
	}
	if (hits)
		on_event(s, "refused",
		         "the server's message held the upstream credential: withheld");
	return n;
}

static int on_message(void *ctx, const char *line, size_t len)
{
	struct session *s = ctx;
	const char *probe;
	char *copy;
	int r;

	probe = s->remote->needle[1] ? s->remote->needle[1] : s->remote->needle[0];
	if (!probe || !memmem(line, len, probe, strlen(probe)))
		return cd_mcp_gw_from_server(s->gw, line, len) < 0 ? -1 : 0;
	/* The mark is never longer than a needle (10 bytes at least). */
	copy = malloc(len + 1);
	if (!copy)
		return -1;
	memcpy(copy, line, len);
	len = withhold(s, copy, len);
	r = cd_mcp_gw_from_server(s->gw, copy, len) < 0 ? -1 : 0;
	explicit_bzero(copy, len);
	free(copy);
	return r;
}

static int json_plain(const char *p)
{
	for (; *p; p++)
		if (*p < 0x20 || *p > 0x7e || *p == '"' || *p == '\\')
			return 0;
	return 1;
}

static void set_needles(struct mcp_remote *r)
{
	const char *sp = strrchr(r->auth, ' ');
	size_t k = 0;

	/* Shorter than 10 bytes: the mark would not fit in its place. */
	if (r->auth_len >= 10 && json_plain(r->auth))
		r->needle[k++] = r->auth;
	if (sp && strlen(sp + 1) >= 10 && json_plain(sp + 1))
		r->needle[k++] = sp + 1;
}

/* The secret's value: the file of --secret NAME:FILE, else cordon's
 * environment variable NAME.  One line; one trailing newline dropped. */
static int read_secret(struct session *s, const char *name)
{
	struct mcp_remote *r = s->remote;
	const char *opt = s->secret_opt, *v = NULL;
	size_t nl = strlen(name);
	struct cd_buf b;
	int fd = -1;

	cd_buf_init(&b, CD_SECRET_MAX);
	if (opt && !strncmp(opt, name, nl) && opt[nl] == ':') {
		char chunk[4096];
		ssize_t n;

		fd = open(opt + nl + 1, O_RDONLY | O_CLOEXEC | O_NOCTTY);
		if (fd < 0) {
			cli_errorf("--secret %s: cannot read '%s': %s", name, opt + nl + 1,
			           cd_strerror(-errno));
			return -1;
		}
		while ((n = read(fd, chunk, sizeof chunk)) > 0 &&
		       cd_buf_append(&b, chunk, (size_t)n) == 0)
			;
		explicit_bzero(chunk, sizeof chunk);
		close(fd);
		if (n != 0)
			goto bad;
		if (b.len && b.data[b.len - 1] == '\n')
			b.data[--b.len] = '\0';
	} else {
		v = getenv(name);
		if (!v) {
			cli_errorf("the MCP server '%s' needs secret '%s': set it in cordon's "
			           "environment or pass --secret %s:FILE",
			           s->server, name, name);
			return -1;
		}
		if (cd_buf_puts(&b, v) < 0)
			goto bad;
	}
	if (!b.len || memchr(b.data, '\0', b.len) || memchr(b.data, '\n', b.len) ||
	    memchr(b.data, '\r', b.len))
		goto bad;
	r->auth_len = b.len;
	r->auth = cd_buf_take(&b);
	if (!r->auth)
		return -1;
	set_needles(r);
	return 0;
bad:
	cd_buf_release_secret(&b);
	cli_errorf("secret '%s': empty, too long, or not one line", name);
	return -1;
}

/* The url's host decided as the egress proxy decides a destination. */
static int vet(struct session *s)
{
	struct mcp_remote *r = s->remote;
	struct cd_egress_policy *ep = NULL;
	struct cd_err err = { 0, "" };
	char entry[CD_HOST_MAX + 8];

	snprintf(entry, sizeof entry, "%s:%u", r->url.host, r->url.port);
	if (cd_egress_policy_new(&ep) < 0 || cd_egress_policy_add(ep, entry, &err) < 0 ||
	    cd_egress_decide(ep, r->url.host, r->url.port, &r->dec) < 0) {
		cd_egress_policy_free(ep);
		record_egress(s, 0, "no decision could be made", NULL);
		cli_errorf("the MCP server '%s' (%s): no decision could be made%s%s", s->server,
		           r->url.url, err.msg[0] ? ": " : "", err.msg);
		return -1;
	}
	cd_egress_policy_free(ep);
	record_egress(s, r->dec.allow, r->dec.reason, r->dec.allow ? &r->dec.connect : NULL);
	if (!r->dec.allow) {
		cli_errorf("the MCP server '%s' (%s) may not be reached: %s", s->server, r->url.url,
		           r->dec.reason);
		return -1;
	}
	return 0;
}

int mcp_remote_open(struct session *s)
{
	const char *url = NULL, *secret = NULL;
	struct cd_mcp_http_cfg cfg;
	struct cd_err err = { 0, "" };

	if (!cd_mcp_policy_remote(s->policy, s->server, &url, &secret))
		return 0;
	s->remote = calloc(1, sizeof *s->remote);
	if (!s->remote) {
		cli_errorf("out of memory");
		return -1;
	}
	s->remote->log.audit = s->audit;
	s->remote->log.run_id = s->run_id;
	s->remote->log.agent = s->agent;
	if (cd_tool_url_parse(url, &s->remote->url, &err) < 0) {
		cli_errorf("the MCP server '%s': %s", s->server, err.msg);
		return -1;
	}
	if (vet(s) < 0 || (secret && read_secret(s, secret) < 0))
		return -1;
	memset(&cfg, 0, sizeof cfg);
	cfg.url = &s->remote->url;
	cfg.pin = &s->remote->dec.connect;
	cfg.authorization = s->remote->auth;
	cfg.request_timeout_ms = REQUEST_TIMEOUT_MS;
	cfg.on_message = on_message;
	cfg.on_event = on_event;
	cfg.on_connect = on_connect;
	cfg.ctx = s;
	if (cd_mcp_http_new(&cfg, &s->remote->up, &err) < 0) {
		cli_errorf("the MCP server '%s': %s", s->server, err.msg);
		return -1;
	}
	return 1;
}

/* The gateway's lines for the server, each one POSTed.  A line is taken
 * out of the buffer before it is sent: sending may answer at once, and
 * the answer may queue more. */
static int send_lines(struct session *s, struct cd_buf *tos)
{
	char *nl, *line;
	size_t n;

	while (tos->len && (nl = memchr(tos->data, '\n', tos->len))) {
		n = (size_t)(nl - tos->data);
		line = malloc(n + 1);
		if (!line)
			return -1;
		memcpy(line, tos->data, n);
		line[n] = '\0';
		cd_mcp_gw_consumed(tos, n + 1);
		if (n && cd_mcp_http_send(s->remote->up, line, n) < 0) {
			free(line);
			return -1;
		}
		free(line);
	}
	return 0;
}

int mcp_remote_relay(struct session *s, int sfd)
{
	struct cd_buf *toc = cd_mcp_gw_to_client(s->gw), *tos = cd_mcp_gw_to_server(s->gw);
	struct cd_mcp_http *up = s->remote->up;
	char buf[65536];
	int client_open = 1;

	fcntl(STDIN_FILENO, F_SETFL, fcntl(STDIN_FILENO, F_GETFL) | O_NONBLOCK);
	for (;;) {
		struct pollfd p[3];
		int np = 0, ic = -1, oc = -1, timeout, r;
		ssize_t n;

		if (send_lines(s, tos) < 0)
			return -1;
		if (!client_open)
			break;
		if (cd_mcp_http_dead(up) && !toc->len && !cd_mcp_http_busy(up)) {
			cli_errorf("the server '%s' ended the session", s->server);
			break;
		}
		p[np++] = (struct pollfd){ .fd = sfd, .events = POLLIN };
		p[np] = (struct pollfd){ .fd = STDIN_FILENO, .events = POLLIN };
		ic = np++;
		if (toc->len) {
			p[np] = (struct pollfd){ .fd = STDOUT_FILENO, .events = POLLOUT };
			oc = np++;
		}
		timeout = cd_mcp_gw_held_approvals(s->gw) ? 200 : -1;
		/* Back-pressure: the server is not read while the client's
		 * output is large. */
		if (toc->len >= CD_JSONRPC_LINE_MAX)
			r = poll(p, (nfds_t)np, timeout) < 0 && errno != EINTR ? -1 : 0;
		else
			r = cd_mcp_http_run(up, p, (size_t)np, timeout);
		if (r < 0)
			return -1;
		if (cd_mcp_gw_held_approvals(s->gw) && cd_mcp_gw_poll_approvals(s->gw) < 0)
			return -1;
		if (p[0].revents) {
			struct signalfd_siginfo si;
			if (read(sfd, &si, sizeof si) == (ssize_t)sizeof si) {
				if (si.ssi_signo != SIGHUP)
					return 1;
				if (mcp_reload_policy(s) < 0)
					return -1;
			}
		}
		if (p[ic].revents) {
			n = read(STDIN_FILENO, buf, sizeof buf);
			if (n > 0) {
				if (cd_jsonrpc_feed(&s->rd_client, buf, (size_t)n,
				                    mcp_on_client_line, s) < 0)
					return -1;
			} else if (n == 0 || (errno != EAGAIN && errno != EINTR)) {
				client_open = 0; /* client EOF: the session ends */
			}
		}
		if (toc->len && (oc < 0 || p[oc].revents) && mcp_flush(STDOUT_FILENO, toc) < 0)
			return 0; /* the client is gone */
	}
	(void)mcp_flush(STDOUT_FILENO, toc);
	return 0;
}

void mcp_remote_close(struct session *s)
{
	struct mcp_remote *r = s->remote;

	if (!r)
		return;
	cd_mcp_http_close(r->up, 2000);
	if (r->auth) {
		explicit_bzero(r->auth, r->auth_len);
		free(r->auth);
	}
	free(r);
	s->remote = NULL;
}
