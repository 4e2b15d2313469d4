/* console.c — the console's server (console.h): start and stop, the
 * routes, login links, sessions, CSRF tokens, the Origin check and the
 * login rate limit.  The held-calls page is console-held.c, the HTML
 * console-html.c.
 *
 * Trust boundary: console.h.  Secrets (login links, session cookies) are
 * 32 random bytes; only their SHA-256 is kept, and they are compared in
 * constant time. */
#include "console-int.h"

#include <errno.h>
#include <sodium.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#define SESSION_COOKIE     "cordon_session"
#define SESSION_COOKIE_TLS "__Host-cordon_session"
#define SECRET_HEX         64

static int64_t now_s(void)
{
	return (int64_t)time(NULL);
}

int cd_console_make_origin(const char *addr, uint16_t port, int tls, char *out, size_t outlen)
{
	int v6 = strchr(addr, ':') != NULL;
	int n = snprintf(out, outlen, "%s://%s%s%s:%u", tls ? "https" : "http", v6 ? "[" : "", addr,
	                 v6 ? "]" : "", (unsigned)port);
	return n < 0 || (size_t)n >= outlen ? -CD_E_LIMIT : 0;
}

/* A 64-digit lower-case hex string? */
static int is_secret(const char *s)
{
	size_t i;

	for (i = 0; i < SECRET_HEX; i++)
		if (!s[i] || !((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return 0;
	return s[SECRET_HEX] == '\0';
}

static void sha256_hex(const char *s, char out[65])
{
	unsigned char h[32];

	crypto_hash_sha256(h, (const unsigned char *)s, strlen(s));
	sodium_bin2hex(out, 65, h, sizeof h);
}

static void new_secret(char out[SECRET_HEX + 1])
{
	unsigned char b[32];

	randombytes_buf(b, sizeof b);
	sodium_bin2hex(out, SECRET_HEX + 1, b, sizeof b);
	sodium_memzero(b, sizeof b);
}

/* A login link's row is MACed under the console's session key over its
 * hash, person and expiry: any writer of a shared store can insert a row,
 * only the console's own user (who holds console-session.key) can make
 * one that logs anyone in. */
static void login_mac(const unsigned char key[CD_CONSOLE_SESSION_KEY_LEN], const char *hash,
                      const char *person, int64_t expires, char out[65])
{
	crypto_auth_hmacsha256_state st;
	unsigned char m[crypto_auth_hmacsha256_BYTES];
	char e[24];

	snprintf(e, sizeof e, "%lld", (long long)expires);
	crypto_auth_hmacsha256_init(&st, key, CD_CONSOLE_SESSION_KEY_LEN);
	crypto_auth_hmacsha256_update(&st, (const unsigned char *)"cordon-login\n", 13);
	crypto_auth_hmacsha256_update(&st, (const unsigned char *)hash, strlen(hash) + 1);
	crypto_auth_hmacsha256_update(&st, (const unsigned char *)person, strlen(person) + 1);
	crypto_auth_hmacsha256_update(&st, (const unsigned char *)e, strlen(e) + 1);
	crypto_auth_hmacsha256_final(&st, m);
	sodium_bin2hex(out, 65, m, sizeof m);
}

int cd_console_login_link(struct cd_state *s, const unsigned char *key, const char *origin,
                          const char *person, int64_t now, int64_t ttl_s, char *out, size_t outlen,
                          struct cd_err *err)
{
	struct cd_store *st = cd_state_store(s);
	char secret[SECRET_HEX + 1], hash[65], mac[65];
	int64_t expires = now + (ttl_s > 0 ? ttl_s : CD_CONSOLE_LOGIN_TTL_S);
	int r, n;

	if (sodium_init() < 0)
		return cd_err_set(err, -EIO, "libsodium failed to start");
	if (!person || !*person || strlen(person) >= sizeof((struct console_session *)0)->person)
		return cd_err_set(err, -EINVAL, "no person or a name too long");
	new_secret(secret);
	sha256_hex(secret, hash);
	n = snprintf(out, outlen, "%s/login?t=%s", origin, secret);
	sodium_memzero(secret, sizeof secret);
	if (n < 0 || (size_t)n >= outlen)
		return cd_err_set(err, -CD_E_LIMIT, "login link too long");
	if (!key)
		return cd_err_set(err, -EINVAL, "no session key to MAC the link with");
	login_mac(key, hash, person, expires, mac);
	r = st->ops->console_login_add(st, hash, person, mac, now, expires, err);
	if (r < 0)
		sodium_memzero(out, outlen);
	return r;
}

int cd_console_link(struct cd_console *c, const char *person, int64_t ttl_s, char *out,
                    size_t outlen, struct cd_err *err)
{
	int r;

	pthread_mutex_lock(&c->mu);
	snprintf(c->operator_name, sizeof c->operator_name, "%s", person);
	r = cd_console_login_link(c->conf.state, c->skey, c->origin, person, now_s(), ttl_s, out,
	                          outlen, err);
	pthread_mutex_unlock(&c->mu);
	return r;
}

/* ---- sessions ----------------------------------------------------- */

/* A session lives in the state database as the SHA-256 of its cookie's
 * secret, its person, its expiry and a MAC under the console's session key
 * over those three: a row copied under another hash, another person or a
 * later expiry does not verify.  The CSRF token is a MAC of the secret
 * itself, never stored.  c->sessions caches the rows seen, for the event
 * streams; every request asks the store again, so a logout ends the
 * session at once here and in any console over the same store. */

static void session_mac(const struct cd_console *c, const char *hash, const char *person,
                        int64_t expires, char out[65])
{
	crypto_auth_hmacsha256_state st;
	unsigned char m[crypto_auth_hmacsha256_BYTES];
	char e[24];

	snprintf(e, sizeof e, "%lld", (long long)expires);
	crypto_auth_hmacsha256_init(&st, c->skey, sizeof c->skey);
	crypto_auth_hmacsha256_update(&st, (const unsigned char *)"cordon-session\n", 15);
	crypto_auth_hmacsha256_update(&st, (const unsigned char *)hash, strlen(hash) + 1);
	crypto_auth_hmacsha256_update(&st, (const unsigned char *)person, strlen(person) + 1);
	crypto_auth_hmacsha256_update(&st, (const unsigned char *)e, strlen(e) + 1);
	crypto_auth_hmacsha256_final(&st, m);
	sodium_bin2hex(out, 65, m, sizeof m);
}

static void session_csrf(const struct cd_console *c, const char *secret, char out[65])
{
	crypto_auth_hmacsha256_state st;
	unsigned char m[crypto_auth_hmacsha256_BYTES];

	crypto_auth_hmacsha256_init(&st, c->skey, sizeof c->skey);
	crypto_auth_hmacsha256_update(&st, (const unsigned char *)"cordon-csrf\n", 12);
	crypto_auth_hmacsha256_update(&st, (const unsigned char *)secret, SECRET_HEX);
	crypto_auth_hmacsha256_final(&st, m);
	sodium_bin2hex(out, 65, m, sizeof m);
}

/* The cache slot of key, or a slot to fill (free, expired, else the one
 * that expires first: a cache, the row stays). */
struct console_session *console_session_slot(struct cd_console *c, const unsigned char key[32])
{
	struct console_session *s = NULL, *oldest = NULL;
	int64_t now = now_s();
	size_t i;

	for (i = 0; i < CD_CONSOLE_MAX_SESSIONS; i++) {
		struct console_session *x = &c->sessions[i];
		if (x->used && x->expires <= now)
			memset(x, 0, sizeof *x);
		if (x->used && sodium_memcmp(x->key, key, 32) == 0)
			return x;
		if (!x->used && !s)
			s = x;
		if (x->used && (!oldest || x->expires < oldest->expires))
			oldest = x;
	}
	s = s ? s : oldest;
	memset(s, 0, sizeof *s);
	return s;
}

static void session_drop(struct cd_console *c, const unsigned char key[32])
{
	size_t i;

	for (i = 0; i < CD_CONSOLE_MAX_SESSIONS; i++)
		if (c->sessions[i].used && !sodium_memcmp(c->sessions[i].key, key, 32))
			memset(&c->sessions[i], 0, sizeof c->sessions[i]);
}

int console_session_stored(struct cd_console *c, size_t i)
{
	struct cd_store *st = cd_state_store(c->conf.state);
	struct console_session *s = &c->sessions[i];
	char hash[65], person[sizeof s->person], mac[80];
	int64_t expires;

	if (s->proxied)
		return 1;
	sodium_bin2hex(hash, sizeof hash, s->key, sizeof s->key);
	if (st->ops->console_session_get(st, hash, now_s(), person, sizeof person, mac, sizeof mac,
	                                 &expires, NULL) < 0) {
		memset(s, 0, sizeof *s);
		return 0;
	}
	return 1;
}

static struct console_session *session_find(struct cd_console *c, const char *cookie)
{
	struct cd_store *st = cd_state_store(c->conf.state);
	struct cd_err err = { 0, "" };
	struct console_session *s;
	unsigned char key[32];
	char hash[65], person[sizeof s->person], mac[80], want[65];
	int64_t expires = 0;

	if (!cookie || !is_secret(cookie))
		return NULL;
	crypto_hash_sha256(key, (const unsigned char *)cookie, SECRET_HEX);
	sodium_bin2hex(hash, sizeof hash, key, sizeof key);
	if (st->ops->console_session_get(st, hash, now_s(), person, sizeof person, mac, sizeof mac,
	                                 &expires, &err) < 0) {
		session_drop(c, key);
		return NULL;
	}
	session_mac(c, hash, person, expires, want);
	if (strlen(mac) != 64 || sodium_memcmp(mac, want, 64) != 0) {
		/* Forged, or made under another key: it goes (recorded once). */
		session_drop(c, key);
		(void)st->ops->console_session_end(st, hash, now_s(), NULL);
		console_record(c, "console.session", person,
		               "refused: a stored session whose MAC does not verify");
		return NULL;
	}
	s = console_session_slot(c, key);
	memcpy(s->key, key, sizeof key);
	snprintf(s->person, sizeof s->person, "%s", person);
	session_csrf(c, cookie, s->csrf);
	s->expires = expires;
	s->used = 1;
	return s;
}

/* A new session for person, stored; its cookie secret into secret.  NULL
 * when the store refuses it. */
static struct console_session *session_new(struct cd_console *c, const char *person,
                                           char secret[SECRET_HEX + 1])
{
	struct cd_store *st = cd_state_store(c->conf.state);
	struct cd_err err = { 0, "" };
	struct console_session *s;
	unsigned char key[32];
	char hash[65], mac[65];
	int64_t now = now_s(),
	        expires = now + (c->conf.session_ttl_s > 0 ? c->conf.session_ttl_s
	                                                   : CD_CONSOLE_SESSION_TTL_S);

	new_secret(secret);
	crypto_hash_sha256(key, (const unsigned char *)secret, SECRET_HEX);
	sodium_bin2hex(hash, sizeof hash, key, sizeof key);
	session_mac(c, hash, person, expires, mac);
	(void)st->ops->console_session_end(st, NULL, now, NULL); /* the expired ones */
	if (st->ops->console_session_add(st, hash, person, mac, now, expires, &err) < 0) {
		sodium_memzero(secret, SECRET_HEX + 1);
		return NULL;
	}
	s = console_session_slot(c, key);
	memcpy(s->key, key, sizeof key);
	session_csrf(c, secret, s->csrf);
	snprintf(s->person, sizeof s->person, "%s", person);
	s->expires = expires;
	s->used = 1;
	return s;
}

static const char *cookie_name(const struct cd_console *c)
{
	return c->tls ? SESSION_COOKIE_TLS : SESSION_COOKIE;
}

void console_message(struct cd_http_resp *rs, int status, const char *title, const char *msg,
                     const struct console_session *s)
{
	int r;

	rs->status = status;
	rs->ctype = "text/html; charset=utf-8";
	cd_buf_reset(&rs->body);
	r = console_page_start(&rs->body, title, s ? s->person : NULL, s ? s->csrf : NULL);
	r = r ?: cd_buf_puts(&rs->body, "<p class=\"message\">");
	r = r ?: cd_console_html_escape(&rs->body, msg, strlen(msg));
	r = r ?: cd_buf_puts(&rs->body, "</p><p><a href=\"/\">Back to the held calls</a></p>");
	if (r || console_page_end(&rs->body))
		cd_http_resp_text(rs, status, msg);
}

int console_auth(struct cd_console *c, const struct cd_http_req *rq, struct cd_http_resp *rs,
                 struct console_session *ret)
{
	struct console_session *s;
	int p = console_proxy_auth(c, rq, rs, ret);

	if (p)
		return p > 0;
	s = session_find(c, cd_http_cookie(rq, cookie_name(c)));
	if (!s) {
		console_message(rs, 401, "Log in",
		                "You are not logged in.  Ask the operator for a login link: "
		                "cordon serve login NAME prints one.",
		                NULL);
		return 0;
	}
	*ret = *s;
	return 1;
}

/* The Origin of a state-changing request must be the console's own: a
 * page elsewhere cannot post here even with the user's cookie. */
static int origin_ok(const struct cd_console *c, const struct cd_http_req *rq)
{
	const char *o = cd_http_header(rq, "Origin");

	return o && !strcmp(o, c->origin);
}

int console_check_post(struct cd_console *c, const struct cd_http_req *rq, struct cd_http_resp *rs,
                       struct console_session *ret)
{
	char token[SECRET_HEX + 2];

	if (!origin_ok(c, rq)) {
		cd_http_resp_text(rs, 403, "forbidden: the request's Origin is not this console\n");
		return 0;
	}
	if (!console_auth(c, rq, rs, ret))
		return 0;
	if (cd_http_form_get(rq->body, rq->body_len, "csrf", token, sizeof token) < 0 ||
	    strlen(token) != SECRET_HEX || sodium_memcmp(token, ret->csrf, SECRET_HEX) != 0) {
		cd_http_resp_text(rs, 403, "forbidden: missing or wrong CSRF token\n");
		return 0;
	}
	return 1;
}

void console_record(struct cd_console *c, const char *kind, const char *person, const char *reason)
{
	struct cd_record rec;
	struct cd_err err = { 0, "" };

	if (!c->conf.audit)
		return;
	memset(&rec, 0, sizeof rec);
	rec.kind = kind;
	rec.tool = "console";
	rec.target = person;
	rec.reason = reason;
	(void)cd_audit_append(c->conf.audit, &rec, NULL, &err);
}

/* ---- login -------------------------------------------------------- */

/* Count a failed login of peer; 1 when it is over the limit. */
static int login_limited(struct cd_console *c, const char *peer, int fail)
{
	int64_t minute = now_s() / 60;
	struct console_fail *f = NULL, *free_slot = NULL;
	size_t i;

	for (i = 0; i < sizeof c->fails / sizeof c->fails[0]; i++) {
		struct console_fail *x = &c->fails[i];
		if (x->window != minute)
			memset(x, 0, sizeof *x);
		if (x->n && !strcmp(x->peer, peer))
			f = x;
		else if (!x->n && !free_slot)
			free_slot = x;
	}
	if (!f && fail && free_slot) {
		f = free_slot;
		snprintf(f->peer, sizeof f->peer, "%s", peer);
		f->window = minute;
	}
	if (!f)
		return fail && !free_slot; /* every slot busy: refuse */
	if (fail)
		f->n++;
	return f->n > CD_CONSOLE_LOGIN_FAILS;
}

/* GET /login?t=SECRET: a page with a button that posts the secret, so a
 * link preview fetching the URL does not spend it. */
static int h_login_page(void *ctx, const struct cd_http_req *rq, struct cd_http_resp *rs)
{
	const char *t = cd_http_query(rq, "t");
	int r;
	(void)ctx;

	if (!t || !is_secret(t)) {
		console_message(rs, 400, "Log in", "This is not a login link.", NULL);
		return 0;
	}
	rs->ctype = "text/html; charset=utf-8";
	r = console_page_start(&rs->body, "Log in", NULL, NULL);
	r = r
	            ?: cd_buf_printf(
	                       &rs->body,
	                       "<form method=\"post\" action=\"/login\"><input type=\"hidden\" "
	                       "name=\"t\" value=\"%s\"><button id=\"login\">Log "
	                       "in</button></form>",
	                       t);
	return r ?: console_page_end(&rs->body);
}

/* May the link just taken log `person` in?  Its MAC must be the one
 * this console's session key makes (else a writer of the store minted it);
 * and, with --policy, the person must still be an approver of the policy
 * as it is now (the operator the start-up link named: unless an agent). */
static int login_allowed(struct cd_console *c, const char *hash, const char *person,
                         const char *mac, int64_t expires, char *why, size_t wn)
{
	struct cd_policy *p = NULL;
	struct cd_err err = { 0, "" };
	char want[65], no[256];
	int ok;

	login_mac(c->skey, hash, person, expires, want);
	if (strlen(mac) != 64 || sodium_memcmp(mac, want, 64) != 0) {
		snprintf(why, wn,
		         "This login link was not made by this console's operator (its MAC "
		         "does not verify).  Ask for a new one.");
		return 0;
	}
	if (!c->conf.policy)
		return 1;
	if (cd_policy_load_file(c->conf.policy, &p, &err) < 0) {
		snprintf(why, wn, "cannot check the approver: policy: %s", err.msg);
		return 0;
	}
	ok = cd_policy_approver_person(p, person, "", no, sizeof no) ||
	     (c->operator_name[0] && !strcmp(person, c->operator_name) &&
	      !cd_policy_is_agent(p, person));
	cd_policy_free(p);
	if (!ok)
		snprintf(why, wn, "refused: %s", no);
	return ok;
}

static int h_login(void *ctx, const struct cd_http_req *rq, struct cd_http_resp *rs)
{
	struct cd_console *c = ctx;
	struct cd_store *st = cd_state_store(c->conf.state);
	struct cd_err err = { 0, "" };
	struct console_session *s;
	char t[SECRET_HEX + 2], hash[65], person[128], secret[SECRET_HEX + 1], cookie[256];
	char mac[80], why[512];
	int64_t expires = 0;
	int r;

	if (!origin_ok(c, rq)) {
		cd_http_resp_text(rs, 403, "forbidden: the request's Origin is not this console\n");
		return 0;
	}
	pthread_mutex_lock(&c->mu);
	if (login_limited(c, rq->peer, 0)) {
		pthread_mutex_unlock(&c->mu);
		cd_http_resp_text(rs, 429,
		                  "too many failed logins from this address: wait a minute\n");
		return 0;
	}
	if (cd_http_form_get(rq->body, rq->body_len, "t", t, sizeof t) < 0 || !is_secret(t)) {
		login_limited(c, rq->peer, 1);
		pthread_mutex_unlock(&c->mu);
		console_message(rs, 400, "Log in", "This is not a login link.", NULL);
		return 0;
	}
	sha256_hex(t, hash);
	sodium_memzero(t, sizeof t);
	r = st->ops->console_login_take(st, hash, now_s(), person, sizeof person, mac, sizeof mac,
	                                &expires, &err);
	if (r < 0) {
		login_limited(c, rq->peer, 1);
		pthread_mutex_unlock(&c->mu);
		console_message(rs, r == -ENOENT ? 403 : 500, "Log in",
		                r == -ENOENT ? "This login link was used already, has expired, or "
		                               "never existed.  Ask for a new one."
		                             : err.msg,
		                NULL);
		return 0;
	}
	if (!login_allowed(c, hash, person, mac, expires, why, sizeof why)) {
		login_limited(c, rq->peer, 1);
		console_record(c, "console.login.refused", person, why);
		pthread_mutex_unlock(&c->mu);
		console_message(rs, 403, "Log in", why, NULL);
		return 0;
	}
	if (!(s = session_new(c, person, secret))) {
		pthread_mutex_unlock(&c->mu);
		cd_http_resp_text(rs, 503, "the session could not be stored\n");
		return 0;
	}
	snprintf(cookie, sizeof cookie, "%s=%s; Path=/; HttpOnly; SameSite=Strict%s",
	         cookie_name(c), secret, c->tls ? "; Secure" : "");
	sodium_memzero(secret, sizeof secret);
	console_record(c, "console.login", person, "logged in with a one-time link");
	pthread_mutex_unlock(&c->mu);
	cd_http_resp_header(rs, "Set-Cookie", cookie);
	sodium_memzero(cookie, sizeof cookie);
	cd_http_resp_header(rs, "Location", "/");
	cd_http_resp_text(rs, 303, "logged in\n");
	return 0;
}

static int h_logout(void *ctx, const struct cd_http_req *rq, struct cd_http_resp *rs)
{
	struct cd_console *c = ctx;
	struct cd_store *st = cd_state_store(c->conf.state);
	struct cd_err err = { 0, "" };
	struct console_session s;
	char cookie[128], hash[65];

	pthread_mutex_lock(&c->mu);
	if (console_check_post(c, rq, rs, &s)) {
		/* The row goes: the cookie is worth nothing from now on, here
		 * and after a restart. */
		sodium_bin2hex(hash, sizeof hash, s.key, sizeof s.key);
		if (st->ops->console_session_end(st, hash, now_s(), &err) < 0) {
			pthread_mutex_unlock(&c->mu);
			cd_http_resp_text(rs, 500,
			                  "logout failed: the session could not be ended\n");
			return 0;
		}
		session_drop(c, s.key);
		console_record(c, "console.logout", s.person, "logged out");
		snprintf(cookie, sizeof cookie,
		         "%s=; Path=/; HttpOnly; SameSite=Strict; Max-Age=0%s", cookie_name(c),
		         c->tls ? "; Secure" : "");
		cd_http_resp_header(rs, "Set-Cookie", cookie);
		cd_http_resp_header(rs, "Location", "/");
		cd_http_resp_text(rs, 303, "logged out\n");
	}
	pthread_mutex_unlock(&c->mu);
	return 0;
}

static int h_js(void *ctx, const struct cd_http_req *rq, struct cd_http_resp *rs)
{
	(void)ctx;
	(void)rq;
	rs->ctype = "text/javascript; charset=utf-8";
	return cd_buf_puts(&rs->body, console_js);
}

static int h_css(void *ctx, const struct cd_http_req *rq, struct cd_http_resp *rs)
{
	(void)ctx;
	(void)rq;
	rs->ctype = "text/css; charset=utf-8";
	return cd_buf_puts(&rs->body, console_css);
}

static const struct cd_http_route routes[] = {
	{ "GET", "/", console_h_index },
	{ "GET", "/events", console_h_events },
	{ "POST", "/calls/*", console_h_decide },
	{ "GET", "/log", console_h_log },
	{ "GET", "/run", console_h_run },
	{ "GET", "/run/cast", console_h_run_cast },
	{ "GET", "/static/replay.js", console_h_replay_js },
	{ "GET", "/verify", console_h_verify_page },
	{ "POST", "/verify", console_h_verify },
	{ "GET", "/proposals", console_h_proposals },
	{ "GET", "/proposal", console_h_proposal },
	{ "POST", "/proposals/*", console_h_proposal_decide },
	{ "GET", "/grants", console_h_grants },
	{ "POST", "/grants/*", console_h_grant_revoke },
	{ "POST", "/grants", console_h_grant_new },
	{ "GET", "/pins", console_h_pins },
	{ "POST", "/pins", console_h_pin_approve },
	{ "GET", "/login", h_login_page },
	{ "POST", "/login", h_login },
	{ "POST", "/logout", h_logout },
	{ "GET", "/static/console.js", h_js },
	{ "GET", "/static/console.css", h_css },
};

/* ---- start and stop ----------------------------------------------- */

/* The Host values browsers send: ADDR:PORT, and the origin's host. */
static int set_hosts(struct cd_console *c, uint16_t port)
{
	const char *h = strstr(c->origin, "://");
	int v6 = strchr(c->conf.addr, ':') != NULL;
	int n = snprintf(c->host_addr, sizeof c->host_addr, "%s%s%s:%u", v6 ? "[" : "",
	                 c->conf.addr, v6 ? "]" : "", (unsigned)port);

	if (n < 0 || (size_t)n >= sizeof c->host_addr || !h)
		return -CD_E_LIMIT;
	snprintf(c->host_origin, sizeof c->host_origin, "%s", h + 3);
	c->hosts[0] = c->host_addr;
	c->hosts[1] = c->host_origin;
	c->hosts[2] = NULL;
	return 0;
}

/* Parse the webhooks' URLs (as strictly as a policy's url: tools) and
 * start the thread that sends to them. */
static int webhooks_start(struct cd_console *c, struct cd_err *err)
{
	size_t i;
	int r;

	if (!c->conf.nwebhooks)
		return 0;
	if (c->conf.nwebhooks > CD_CONSOLE_WEBHOOKS_MAX || !c->conf.webhook_key)
		return cd_err_set(err, -EINVAL, "at most %d webhooks, and a key to sign with",
		                  CD_CONSOLE_WEBHOOKS_MAX);
	if (!(c->urls = calloc(c->conf.nwebhooks, sizeof *c->urls)))
		return cd_err_set(err, -ENOMEM, "out of memory");
	for (i = 0; i < c->conf.nwebhooks; i++, c->nurls++) {
		struct cd_err e = { 0, "" };
		if ((r = cd_tool_url_parse(c->conf.webhooks[i], &c->urls[i], &e)) < 0)
			return cd_err_set(err, r, "--notify-webhook %zu: %s", i + 1, e.msg);
	}
	if (pthread_create(&c->notifier, NULL, console_notifier, c) != 0)
		return cd_err_set(err, -EAGAIN, "cannot start the console's webhook thread");
	c->notifier_started = 1;
	return 0;
}

int cd_console_start(const struct cd_console_conf *conf, struct cd_console **ret,
                     struct cd_err *err)
{
	struct cd_console *c;
	struct cd_httpd_conf hc;
	int r;

	if (sodium_init() < 0)
		return cd_err_set(err, -EIO, "libsodium failed to start");
	if (!conf->state)
		return cd_err_set(err, -EINVAL, "the console needs the state database");
	if (!(c = calloc(1, sizeof *c)))
		return cd_err_set(err, -ENOMEM, "out of memory");
	c->conf = *conf;
	c->tls = conf->tls_cert != NULL;
	if (conf->session_key)
		memcpy(c->skey, conf->session_key, sizeof c->skey);
	else
		randombytes_buf(c->skey, sizeof c->skey);
	pthread_mutex_init(&c->mu, NULL);
	pthread_cond_init(&c->cv, NULL);
	pthread_cond_init(&c->ncv, NULL);
	memset(&hc, 0, sizeof hc);
	hc.addr = conf->addr;
	hc.port = conf->port;
	hc.tls_cert = conf->tls_cert;
	hc.tls_key = conf->tls_key;
	hc.hosts = c->hosts;
	hc.routes = routes;
	hc.nroutes = sizeof routes / sizeof routes[0];
	hc.ctx = c;
	/* Every browser keeps an event stream open: room for a team's. */
	hc.max_conns = CD_CONSOLE_MAX_CONNS;
	/* The Host list is filled once the port is known; until then no
	 * Host matches (hosts[0] is NULL), so nothing is served early. */
	if ((r = cd_httpd_start(&hc, &c->httpd, err)) < 0)
		goto fail;
	if (conf->origin) {
		if (snprintf(c->origin, sizeof c->origin, "%s", conf->origin) >=
		    (int)sizeof c->origin)
			r = -CD_E_LIMIT;
	} else {
		r = cd_console_make_origin(conf->addr, cd_httpd_port(c->httpd), c->tls, c->origin,
		                           sizeof c->origin);
	}
	if (r < 0 || (r = set_hosts(c, cd_httpd_port(c->httpd))) < 0) {
		cd_err_set(err, r, "the console's origin is too long");
		goto fail;
	}
	if ((r = webhooks_start(c, err)) < 0)
		goto fail;
	if (pthread_create(&c->watcher, NULL, console_watch, c) != 0) {
		r = cd_err_set(err, -EAGAIN, "cannot start the console's watcher thread");
		goto fail;
	}
	c->watcher_started = 1;
	*ret = c;
	return 0;
fail:
	cd_console_stop(c);
	return r;
}

const char *cd_console_origin(const struct cd_console *c)
{
	return c->origin;
}

void cd_console_stop(struct cd_console *c)
{
	if (!c)
		return;
	pthread_mutex_lock(&c->mu);
	__atomic_store_n(&c->stopping, 1, __ATOMIC_RELEASE);
	pthread_cond_broadcast(&c->cv);
	pthread_cond_broadcast(&c->ncv);
	pthread_mutex_unlock(&c->mu);
	cd_httpd_stop(c->httpd);
	if (c->watcher_started)
		pthread_join(c->watcher, NULL);
	if (c->notifier_started)
		pthread_join(c->notifier, NULL);
	if (c->verifier_started)
		pthread_join(c->verifier, NULL);
	free(c->urls);
	cd_policy_free(c->rules_policy);
	sodium_memzero(c->sessions, sizeof c->sessions);
	sodium_memzero(c->skey, sizeof c->skey);
	pthread_cond_destroy(&c->cv);
	pthread_cond_destroy(&c->ncv);
	pthread_mutex_destroy(&c->mu);
	free(c);
}
