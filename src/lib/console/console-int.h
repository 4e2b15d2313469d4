/* console-int.h — shared by the console's files only. */
#ifndef CD_CONSOLE_INT_H
#define CD_CONSOLE_INT_H

#include "console.h"

#include "gate/approval.h"
#include "http/httpd.h"
#include "policy/temp-grant.h"
#include "policy/tool-url.h"

#include <pthread.h>
#include <sys/types.h>
#include <time.h>

/* A logged-in browser, as cached from the state database (console.c).
 * The cookie's secret is kept only as its SHA-256; the CSRF token is
 * derived from the secret under the console's session key. */
struct console_session {
	int used;
	unsigned char key[32];
	char person[128];
	char csrf[65];
	int64_t expires;
	int proxied; /* from a proxy's identity header: no stored row */
};

struct console_fail {
	char peer[64];
	int64_t window; /* the minute it counts */
	unsigned n;
};

/* Webhook messages waiting to be sent, at most CD_CONSOLE_NOTES_MAX. */
#define CD_CONSOLE_NOTES_MAX 256
struct console_note;

/* What the watcher has told the webhooks of already. */
#define CONSOLE_SEEN_HELD 1024
#define CONSOLE_SEEN_BG   256
struct console_seen_bg {
	char id[CD_TEMP_ID_MAX];
	int64_t uses;
};

struct cd_console {
	struct cd_console_conf conf;
	unsigned char skey[CD_CONSOLE_SESSION_KEY_LEN]; /* conf.session_key's copy */
	char operator_name[128]; /* whom the start-up link (cd_console_link) named */
	struct cd_httpd *httpd;
	int tls;
	char origin[300];
	char host_addr[300], host_origin[300];
	const char *hosts[3];

	pthread_mutex_t mu; /* everything below, and the stores */
	pthread_cond_t cv;  /* gen changed, or stopping */
	uint64_t gen;       /* bumped when the held calls change */
	unsigned char held_fp[32];
	int stopping;
	pthread_t watcher;
	int watcher_started;
	struct console_session sessions[CD_CONSOLE_MAX_SESSIONS];
	struct console_fail fails[64];
	/* The last "verify now" (console-log.c). */
	int verified, verify_failed;
	int64_t verified_at;
	char verified_by[128];
	char verify_msg[CD_ERR_MSG_MAX];
	struct cd_audit_report vrep;
	int verifying, verifier_started;
	pthread_t verifier;
	int64_t verifying_since;
	char verifying_by[128];
	/* Webhooks (console-notify.c). */
	struct cd_tool_url *urls;
	size_t nurls;
	struct console_note *notes;
	pthread_cond_t ncv; /* notes queued, or stopping */
	pthread_t notifier;
	int notifier_started;
	char seen_held[CONSOLE_SEEN_HELD][CD_APPROVAL_ID_MAX];
	size_t seen_held_next;
	struct console_seen_bg seen_bg[CONSOLE_SEEN_BG];
	int bg_seeded;
	/* The policy approver rules are described from (console-rules.c),
	 * and its file's identity when loaded. */
	struct cd_policy *rules_policy;
	struct timespec rules_mtime;
	ino_t rules_ino;
	off_t rules_size;
};

/* console-html.c */
int console_page_start(struct cd_buf *b, const char *title, const char *person, const char *csrf);
int console_page_end(struct cd_buf *b);
/* The held calls as one line of HTML (c->mu held). */
int console_render_held(struct cd_console *c, struct cd_buf *b, const char *csrf);
extern const char console_js[], console_css[];

/* console-held.c: the held-calls page, its event stream, the decisions,
 * and the watcher thread. */
int console_h_index(void *ctx, const struct cd_http_req *rq, struct cd_http_resp *rs);
int console_h_events(void *ctx, const struct cd_http_req *rq, struct cd_http_resp *rs);
int console_h_decide(void *ctx, const struct cd_http_req *rq, struct cd_http_resp *rs);
void *console_watch(void *arg);

/* console-log.c: the audit log, one run, the chain's verification. */
int console_h_log(void *ctx, const struct cd_http_req *rq, struct cd_http_resp *rs);
int console_h_run(void *ctx, const struct cd_http_req *rq, struct cd_http_resp *rs);
int console_h_verify_page(void *ctx, const struct cd_http_req *rq, struct cd_http_resp *rs);
int console_h_verify(void *ctx, const struct cd_http_req *rq, struct cd_http_resp *rs);

/* console-replay.c: a run's shell-session recording (c->mu held), the
 * asciicast the player reads, the player's script. */
int console_render_replay(struct cd_console *c, struct cd_buf *b, const char *id);
int console_h_run_cast(void *ctx, const struct cd_http_req *rq, struct cd_http_resp *rs);
int console_h_replay_js(void *ctx, const struct cd_http_req *rq, struct cd_http_resp *rs);

/* console-proposals.c: the proposals, one proposal's diffs, apply/reject. */
int console_h_proposals(void *ctx, const struct cd_http_req *rq, struct cd_http_resp *rs);
int console_h_proposal(void *ctx, const struct cd_http_req *rq, struct cd_http_resp *rs);
int console_h_proposal_decide(void *ctx, const struct cd_http_req *rq, struct cd_http_resp *rs);

/* console-notify.c: queue a webhook message (c->mu held); the thread
 * that sends them. */
void console_notify_held(struct cd_console *c, const struct cd_approval *a);
void console_notify_grant(struct cd_console *c, const struct cd_temp_grant *g, int used);
void *console_notifier(void *arg);

/* console-grants.c: the matrix, re-certification, live temporary grants
 * and their revoke. */
int console_h_grants(void *ctx, const struct cd_http_req *rq, struct cd_http_resp *rs);
int console_h_grant_revoke(void *ctx, const struct cd_http_req *rq, struct cd_http_resp *rs);
/* console-grant-new.c: the form for a new break-glass or delegated grant,
 * and its POST /grants. */
int console_grant_form(struct cd_buf *b, const char *csrf);
int console_h_grant_new(void *ctx, const struct cd_http_req *rq, struct cd_http_resp *rs);

/* console-rules.c: approver-rule outcomes of the last hour, as a table
 * for the held-calls page; what rule NAME requires, as a span (c->mu held
 * for both). */
int console_render_rules(struct cd_console *c, struct cd_buf *b);
int console_rule_requires(struct cd_console *c, struct cd_buf *b, const char *rule);

/* console-pins.c: MCP tool definitions waiting for approval. */
int console_h_pins(void *ctx, const struct cd_http_req *rq, struct cd_http_resp *rs);
int console_h_pin_approve(void *ctx, const struct cd_http_req *rq, struct cd_http_resp *rs);

/* console.c: who is asking.  console_auth copies the session of the
 * request into *ret (c->mu held): 1, or 0 with rs filled (401).  For a
 * state-changing request, console_check_post first refuses a wrong or
 * missing Origin (403), then a missing session, then a wrong CSRF token
 * (403): 1 when everything holds. */
int console_auth(struct cd_console *c, const struct cd_http_req *rq, struct cd_http_resp *rs,
                 struct console_session *ret);
int console_check_post(struct cd_console *c, const struct cd_http_req *rq, struct cd_http_resp *rs,
                       struct console_session *ret);
/* Is the cached session of slot i still stored (not logged out through
 * another console over the same store)?  1 or 0 (the slot is dropped). */
int console_session_stored(struct cd_console *c, size_t i);
/* The cache slot of a session's key (filled by the caller). */
struct console_session *console_session_slot(struct cd_console *c, const unsigned char key[32]);
/* console-proxy.c: the identity header of a reverse proxy: 1 (*ret is the
 * person's session), 0 not configured, not from loopback or absent, -1
 * refused (rs filled, recorded).  c->mu held. */
int console_proxy_auth(struct cd_console *c, const struct cd_http_req *rq, struct cd_http_resp *rs,
                       struct console_session *ret);
/* A whole page with one message (escaped). */
void console_message(struct cd_http_resp *rs, int status, const char *title, const char *msg,
                     const struct console_session *s);
/* An audit record of the console ("console.login" ...). */
void console_record(struct cd_console *c, const char *kind, const char *person, const char *reason);

#endif
