/* console.h — the web console of `cordon serve`: the people in the loop
 * (approvers.people of the policy) see the calls held for approval, live,
 * and approve or deny them in a browser, through the same gate function
 * as `cordon approvals approve|deny` (cd_gate_approval_decide).
 *
 * Who gets in: a one-time login link (its secret's SHA-256 kept in the
 * state database, short-lived, taken once) becomes a session cookie
 * (HttpOnly, SameSite=Strict, Secure and __Host- under TLS).  Every
 * state-changing request needs the session, its CSRF token and an Origin
 * header equal to the console's own; logins are rate-limited per address.
 * Every piece of agent-controlled text is escaped (console-html.c).
 *
 * Trust boundary: the browser's requests (through http/httpd.h) and the
 * rows of the state database (written by agents' calls: their arguments
 * are hostile text).  The console never exits or prints; it refuses with
 * an HTTP status and a one-line reason. */
#ifndef CD_CONSOLE_H
#define CD_CONSOLE_H

#include "audit/audit.h"
#include "store/state.h"
#include "util/buf.h"
#include "util/err.h"

#include <stddef.h>
#include <stdint.h>

struct cd_console;

struct cd_approver_key;
struct cd_console_conf {
	const char *addr; /* IP literal to listen on */
	uint16_t port;    /* 0: any free port */
	const char *tls_cert, *tls_key;
	/* The origin browsers see ("https://console.example:8750"), when a
	 * proxy or a name stands in front; NULL: scheme://ADDR:PORT. */
	const char *origin;
	/* The policy approvers are checked against; NULL: the one that made
	 * each request (as `cordon approvals approve` without --policy). */
	const char *policy;
	/* The state database and the audit log; the caller keeps and closes
	 * them after cd_console_stop.  The console serves every request
	 * through this one connection, under its lock. */
	struct cd_state *state;
	struct cd_audit *audit;
	/* The log's path or URI: "verify now" opens it read-only on a thread
	 * of its own (NULL: no verify now). */
	const char *audit_path;
	/* The `cordon shell` recordings (sessions/ next to a local audit
	 * log): shown on a run's page (NULL: none). */
	const char *sessions_dir;
	int64_t session_ttl_s; /* 0: CD_CONSOLE_SESSION_TTL_S */
	/* What "verify now" checks against, as `cordon log verify`: the
	 * public key (CD_AUDIT_PK_LEN bytes) and the checkpoint file; NULL:
	 * none. */
	const unsigned char *audit_pubkey;
	const char *checkpoint_path;
	/* Webhooks (console-notify.c): URLs posted to when a call is held and
	 * when a break-glass grant is made or used, each message signed with
	 * webhook_key (CD_CONSOLE_WEBHOOK_KEY_LEN bytes; required with any
	 * URL). */
	const char *const *webhooks;
	size_t nwebhooks;
	const unsigned char *webhook_key;
	/* Signs every decision made here (approval-sign.h): a console key the
	 * policy lists under approvers.consoles, which then trusts this host
	 * to have authenticated the person.  NULL: decisions unsigned (refused
	 * for an approver with a key, and through a shared store). */
	const struct cd_approver_key *sign_key;
	/* CD_CONSOLE_SESSION_KEY_LEN bytes: the MAC key of the sessions kept
	 * in the state database (they outlive a restart) and of their CSRF
	 * tokens.  NULL: a random key, so sessions end with the process. */
	const unsigned char *session_key;
	/* CD_PROPOSAL_KEY_LEN bytes: this host's proposal key (proposal.h),
	 * which every proposal shown or decided here must verify under.  NULL:
	 * no proposal is shown or decided. */
	const unsigned char *proposal_key;
	/* An identity header set by a reverse proxy in front ("X-Forwarded-
	 * User"): honoured only from a loopback peer, for a person of
	 * approvers.people (console-proxy.c).  NULL: never. */
	const char *proxy_header;
};

#define CD_CONSOLE_SESSION_KEY_LEN 32

#define CD_CONSOLE_WEBHOOKS_MAX    8
#define CD_CONSOLE_WEBHOOK_KEY_LEN 32

#define CD_CONSOLE_SESSION_TTL_S (8 * 3600)
#define CD_CONSOLE_LOGIN_TTL_S   600
#define CD_CONSOLE_MAX_SESSIONS  256
/* Connections at once (the server's per-address cap still holds). */
#define CD_CONSOLE_MAX_CONNS 512
/* Failed logins allowed per address per minute, then 429. */
#define CD_CONSOLE_LOGIN_FAILS 10

/* Start serving.  Free with cd_console_stop. */
int cd_console_start(const struct cd_console_conf *c, struct cd_console **ret, struct cd_err *err);
void cd_console_stop(struct cd_console *c);

/* The console's origin ("http://127.0.0.1:8750"). */
const char *cd_console_origin(const struct cd_console *c);

/* Make a login link for `person` valid for ttl_s seconds (0:
 * CD_CONSOLE_LOGIN_TTL_S): a random secret whose SHA-256 goes into the
 * state database with a MAC under key (CD_CONSOLE_SESSION_KEY_LEN bytes:
 * the console's session key, console-session.key) over the hash, person
 * and expiry; out gets ORIGIN/login?t=SECRET.  The caller checks that the
 * person may log in; the console checks the MAC, and the person against
 * its policy again, when the link is used. */
int cd_console_login_link(struct cd_state *s, const unsigned char *key, const char *origin,
                          const char *person, int64_t now, int64_t ttl_s, char *out, size_t outlen,
                          struct cd_err *err);

/* The same, for the running console's own origin and state connection
 * (taken under its lock: the connection is shared with its threads). */
int cd_console_link(struct cd_console *c, const char *person, int64_t ttl_s, char *out,
                    size_t outlen, struct cd_err *err);

/* "http://ADDR:PORT" or "https://[V6]:PORT" into out.  0 or -CD_E_LIMIT. */
int cd_console_make_origin(const char *addr, uint16_t port, int tls, char *out, size_t outlen);

/* ---- HTML (console-html.c) ----------------------------------------- */

/* Append untrusted text for an HTML text node or a quoted attribute:
 * & < > " ' as entities; control bytes, DEL and invalid UTF-8 as visible
 * \xNN; C1 controls, bidirectional overrides and isolates, zero-width and
 * BOM characters as visible \uNNNN.  0 or -CD_E_LIMIT. */
int cd_console_html_escape(struct cd_buf *b, const char *s, size_t n);

#endif
