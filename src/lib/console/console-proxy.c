/* console-proxy.c — the identity header of a reverse proxy
 * (--trust-proxy-header NAME, conf.proxy_header): for single sign-on
 * through an existing auth proxy that authenticates the person and sets
 * NAME: PERSON on the requests it forwards.
 *
 * The header is honoured only when configured and only on a connection
 * whose TCP peer is loopback (the proxy on the same host); from any other
 * peer it is ignored and the cookie decides.  The person must be listed in
 * the policy's approvers.people (a console without --policy honours no
 * one): otherwise 403 and a "console.proxy" record.  Such a request is a
 * session of its own: its CSRF token is a MAC of the person under the
 * console's session key, so a state-changing request still needs the
 * page's token and the console's Origin (console_check_post).
 *
 * Trust boundary: the header's value is the proxy's (or, on a host where
 * others reach loopback, anyone's there: see cordon-serve(1)); it is
 * checked for length and shape before it is compared, and a request
 * carrying it more than once is refused (a proxy that appends rather than
 * replaces would pass the client's own copy first). */
#include "console-int.h"

#include <sodium.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

/* Printable ASCII, no spaces or quotes: a person's name as the policy
 * may list it. */
static int tame(const char *s)
{
	size_t n = strlen(s), i;

	if (!n || n >= sizeof((struct console_session *)0)->person)
		return 0;
	for (i = 0; i < n; i++)
		if (s[i] <= ' ' || s[i] >= 0x7f || s[i] == '"' || s[i] == '\'' || s[i] == '<' ||
		    s[i] == '>' || s[i] == '&')
			return 0;
	return 1;
}

static int listed(struct cd_console *c, const char *person, char *why, size_t wn)
{
	struct cd_policy *p = NULL;
	struct cd_err err = { 0, "" };
	const char *x;
	size_t i;
	int ok = 0;

	if (!c->conf.policy) {
		snprintf(why, wn, "this console has no --policy: no one is an approver");
		return 0;
	}
	if (cd_policy_load_file(c->conf.policy, &p, &err) < 0) {
		snprintf(why, wn, "policy: %s", err.msg);
		return 0;
	}
	for (i = 0; (x = cd_policy_approver_listed(p, i)) != NULL && !ok; i++)
		ok = !strcmp(x, person);
	if (!ok)
		snprintf(why, wn, "'%s' is not among the policy's approvers.people", person);
	else /* and never an agent */
		ok = cd_policy_approver_person(p, person, "", why, wn);
	cd_policy_free(p);
	return ok;
}

int console_proxy_auth(struct cd_console *c, const struct cd_http_req *rq, struct cd_http_resp *rs,
                       struct console_session *ret)
{
	const char *who;
	char why[300], msg[400];
	unsigned char key[crypto_auth_hmacsha256_BYTES];
	crypto_auth_hmacsha256_state st;
	struct console_session *s;

	if (!c->conf.proxy_header || !rq->peer_loopback ||
	    !(who = cd_http_header(rq, c->conf.proxy_header)))
		return 0;
	if (cd_http_header_count(rq, c->conf.proxy_header) != 1) {
		/* A proxy that appends its header after the client's copy
		 * instead of replacing it: the first value would be the
		 * client's.  Which one is the proxy's cannot be known. */
		snprintf(why, sizeof why, "the %s header appears more than once",
		         c->conf.proxy_header);
		who = "?";
	} else if (!tame(who)) {
		snprintf(why, sizeof why, "the %s header is not a person's name",
		         c->conf.proxy_header);
		who = "?";
	} else if (listed(c, who, why, sizeof why)) {
		/* The session's key and CSRF token: MACs of the person. */
		crypto_auth_hmacsha256_init(&st, c->skey, sizeof c->skey);
		crypto_auth_hmacsha256_update(&st, (const unsigned char *)"cordon-proxy\n", 13);
		crypto_auth_hmacsha256_update(&st, (const unsigned char *)who, strlen(who) + 1);
		crypto_auth_hmacsha256_final(&st, key);
		s = console_session_slot(c, key);
		memcpy(s->key, key, sizeof s->key);
		snprintf(s->person, sizeof s->person, "%s", who);
		crypto_auth_hmacsha256_init(&st, c->skey, sizeof c->skey);
		crypto_auth_hmacsha256_update(&st, (const unsigned char *)"cordon-proxy-csrf\n",
		                              18);
		crypto_auth_hmacsha256_update(&st, (const unsigned char *)who, strlen(who) + 1);
		crypto_auth_hmacsha256_final(&st, key);
		sodium_bin2hex(s->csrf, sizeof s->csrf, key, sizeof key);
		s->expires = (int64_t)time(NULL) + 300;
		s->proxied = 1;
		s->used = 1;
		*ret = *s;
		return 1;
	}
	snprintf(msg, sizeof msg, "refused: %s", why);
	console_record(c, "console.proxy", who, msg);
	console_message(rs, 403, "Refused", msg, NULL);
	return -1;
}
