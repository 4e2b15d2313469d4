/* cmd-mcp-frec.c — the HTTP front's `mcp.front` records, with a rate
 * limit on the refusals (see cmd-mcp-front.h). */
#include "cmd-mcp-front.h"

#include "cli.h"

#include <errno.h>
#include <jansson.h>
#include <string.h>
#include <time.h>

/* One `mcp.front` record: action (session-open, session-close,
 * session-refused, request-refused, token-refused), the agent when known,
 * the decision and why; details name the peer, the token's id and the
 * session's first 8 characters (the id itself is a credential).  0 or
 * negative (the caller refuses what it was about to allow). */
int front_record(struct front *f, const struct cd_http_req *rq, const char *action,
                 const char *agent, const char *token, const char *sid, const char *decision,
                 const char *reason, unsigned suppressed)
{
	struct cd_record rec;
	struct cd_err err = { 0, "" };
	json_t *d = json_object();
	char *details = NULL;
	int r = -ENOMEM;

	if (!d)
		return r;
	if (rq)
		json_object_set_new(d, "peer", json_string(rq->peer));
	if (token && *token)
		json_object_set_new(d, "token", json_string(token));
	if (sid && *sid)
		json_object_set_new(d, "session", json_stringn(sid, 8));
	if (suppressed)
		json_object_set_new(d, "unrecorded_before", json_integer(suppressed));
	if (!(details = json_dumps(d, JSON_COMPACT)))
		goto out;
	memset(&rec, 0, sizeof rec);
	rec.kind = "mcp.front";
	rec.agent = agent;
	rec.action = action;
	rec.target = "http";
	rec.decision = decision;
	rec.reason = reason;
	rec.details_json = details;
	pthread_mutex_lock(&f->amu);
	r = cd_audit_append(f->log, &rec, NULL, &err);
	pthread_mutex_unlock(&f->amu);
	if (r < 0)
		cli_warnf("audit log: %s", err.msg);
out:
	json_decref(d);
	free(details);
	return r;
}

/* Whether a record of rate may be written now (at most
 * FRONT_AUTH_RECORDS a minute: a flood must not fill the log): 1 with
 * *sup the number not written since, or 0 (counted). */
static int rate_ok(struct front *f, struct rate *rt, unsigned *sup)
{
	int64_t now = (int64_t)time(NULL) / 60;
	int r = 0;

	pthread_mutex_lock(&f->amu);
	if (now != rt->window) {
		rt->window = now;
		rt->recorded = 0;
	}
	if (rt->recorded >= FRONT_AUTH_RECORDS) {
		rt->suppressed++;
	} else {
		rt->recorded++;
		*sup = rt->suppressed;
		rt->suppressed = 0;
		r = 1;
	}
	pthread_mutex_unlock(&f->amu);
	return r;
}

/* A 413 or 429 of an agent's, recorded at the rate of the 401s. */
void record_refused(struct front *f, const struct cd_http_req *rq, const char *action,
                    const char *agent, const char *token, const char *why)
{
	unsigned sup = 0;

	if (rate_ok(f, &f->refuse, &sup))
		front_record(f, rq, action, agent, token, cd_http_header(rq, "Mcp-Session-Id"),
		             "deny", why, sup);
}

/* A 401, recorded at the rate above. */
void record_401(struct front *f, const struct cd_http_req *rq, const char *why)
{
	unsigned sup = 0;

	if (!rate_ok(f, &f->auth, &sup))
		return;
	front_record(f, rq, "token-refused", NULL, NULL, NULL, "deny", why, sup);
}
