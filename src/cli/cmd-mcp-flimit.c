/* cmd-mcp-flimit.c — the HTTP front's limits per agent: the agent's
 * mcp_front: entry in its token's policy (cd_policy_agent_limits), else
 * the front's flags; and the count of each agent's tool calls per minute
 * (see cmd-mcp-front.h).
 *
 * Trust: the policy is the reviewed file; the counts are kept per agent
 * named by a token, never by anything a client says. */
#include "cmd-mcp-front.h"

#include "cli.h"
#include "policy/policy.h"

#include <string.h>
#include <time.h>

/* The policy at `path` (under f->lmu): loaded once, again after SIGHUP;
 * NULL when it does not load (said once). */
static const struct cd_policy *policy_at(struct front *f, const char *path)
{
	struct cd_err err = { 0, "" };
	size_t i, slot = 0;

	for (i = 0; i < FRONT_POLICIES; i++) {
		if (f->lpol[i].path[0] && !strcmp(f->lpol[i].path, path))
			return f->lpol[i].p;
		if (!f->lpol[i].path[0])
			slot = i;
	}
	if (f->lpol[slot].path[0]) { /* full: drop one */
		cd_policy_free(f->lpol[slot].p);
		memset(&f->lpol[slot], 0, sizeof f->lpol[slot]);
	}
	if (strlen(path) >= sizeof f->lpol[slot].path)
		return NULL;
	memcpy(f->lpol[slot].path, path, strlen(path) + 1);
	if (cd_policy_load_file(path, &f->lpol[slot].p, &err) < 0) {
		cli_warnf("limits per agent: %s (the flags apply)", err.msg);
		f->lpol[slot].p = NULL;
	}
	return f->lpol[slot].p;
}

void front_limits(struct front *f, const char *policy, const char *agent, struct flimits *ret)
{
	struct cd_agent_limits l;

	pthread_mutex_lock(&f->lmu);
	cd_policy_agent_limits(policy_at(f, policy), agent, &l);
	pthread_mutex_unlock(&f->lmu);
	ret->max_sessions = l.max_sessions ? l.max_sessions : f->max_sessions;
	ret->sessions_src = l.max_sessions ? "policy" : "--max-sessions";
	ret->max_request = l.max_request ? (size_t)l.max_request : f->max_request;
	/* The HTTP server refuses above its cap before any body is read. */
	if (ret->max_request > f->ceiling)
		ret->max_request = f->ceiling;
	ret->request_src = l.max_request ? "policy" : "--max-request";
	ret->max_cpm = l.max_calls_per_minute;
}

size_t front_ceiling(struct front *f)
{
	const struct cd_policy *p;
	const char *ids[CD_AGENT_MAX_SESSIONS];
	struct cd_agent_limits l;
	size_t n, i, c = f->max_request;

	pthread_mutex_lock(&f->lmu);
	p = policy_at(f, f->policy);
	n = cd_policy_agents(p, ids, sizeof ids / sizeof ids[0]);
	for (i = 0; i < n && i < sizeof ids / sizeof ids[0]; i++)
		if (cd_policy_agent_limits(p, ids[i], &l) && l.max_request > c)
			c = (size_t)l.max_request;
	pthread_mutex_unlock(&f->lmu);
	return c;
}

void front_limits_reload(struct front *f)
{
	size_t i;

	pthread_mutex_lock(&f->lmu);
	for (i = 0; i < FRONT_POLICIES; i++) {
		cd_policy_free(f->lpol[i].p);
		memset(&f->lpol[i], 0, sizeof f->lpol[i]);
	}
	pthread_mutex_unlock(&f->lmu);
}

int front_calls_ok(struct front *f, const char *agent, unsigned n, unsigned max)
{
	int64_t now = (int64_t)time(NULL) / 60;
	size_t i, slot = FRONT_SESSIONS_MAX;
	int r = 0;

	if (!max || !n)
		return 1;
	pthread_mutex_lock(&f->lmu);
	for (i = 0; i < FRONT_SESSIONS_MAX; i++) {
		if (!strcmp(f->calls[i].agent, agent)) {
			slot = i;
			break;
		}
		if (slot == FRONT_SESSIONS_MAX && f->calls[i].window != now)
			slot = i; /* free, or an old minute's */
	}
	/* Every slot counting this minute for other agents: refused (fail
	 * closed). */
	if (slot < FRONT_SESSIONS_MAX && strlen(agent) < sizeof f->calls[slot].agent) {
		struct fcalls *c = &f->calls[slot];
		if (strcmp(c->agent, agent) || c->window != now) {
			memcpy(c->agent, agent, strlen(agent) + 1);
			c->window = now;
			c->n = 0;
		}
		if (c->n + n <= max) {
			c->n += n;
			r = 1;
		}
	}
	pthread_mutex_unlock(&f->lmu);
	return r;
}

void front_limits_free(struct front *f)
{
	front_limits_reload(f);
}
