/* test-mcp-front-limits.c — an agent's limits behind `cordon mcp --listen`
 * (mcp_front: in its policy entry, cd_policy_agent_limits): read as
 * written, sizes with suffixes; a sub-agent not declared itself has its
 * nearest declared ancestor's; an agent without the entry, or unknown,
 * has none (the flags apply); out-of-range values and unknown keys refuse
 * the whole file. */
#include "../tap.h"

#include "policy/policy.h"

#include <stdio.h>
#include <string.h>

static const char *head = "version: 1\nagents:\n";
static const char *tail = "tools:\n  - {id: t, kind: mcp, operations: {echo: read}}\n";

static struct cd_policy *load(const char *agents)
{
	char buf[2048];
	struct cd_policy *p = NULL;
	struct cd_err err = { 0, "" };
	int n = snprintf(buf, sizeof buf, "%s%s%s", head, agents, tail);

	if (n < 0 || (size_t)n >= sizeof buf ||
	    cd_policy_load_buf("t.yaml", buf, (size_t)n, &p, &err) < 0)
		return NULL;
	return p;
}

int main(void)
{
	struct cd_policy *p;
	struct cd_agent_limits l;
	static const char *const bad[] = {
		"{max_sessions: 0}",         "{max_sessions: 257}",
		"{max_sessions: -1}",        "{max_request: 0}",
		"{max_request: 17M}",        "{max_request: 1T}",
		"{max_calls_per_minute: 0}", "{max_calls_per_minute: 100001}",
		"{max_session: 2}",          "[1, 2]",
		"{max_sessions: [1]}",
	};
	size_t i;

	tap_start(30);
	p = load("  - {id: alice, owner: o, mcp_front: {max_sessions: 2, max_request: 64K, "
	         "max_calls_per_minute: 30}}\n"
	         "  - {id: alice/sub, owner: o, mcp_front: {max_sessions: 1}}\n"
	         "  - {id: bob, owner: o}\n");
	ok(p != NULL, "a policy with mcp_front: loads");
	is_int(cd_policy_agent_limits(p, "alice", &l), 1, "alice has limits");
	ok(l.max_sessions == 2 && l.max_request == 65536 && l.max_calls_per_minute == 30,
	   "... as written (64K = 65536)");
	is_int(cd_policy_agent_limits(p, "alice/x/y", &l), 1,
	       "an undeclared sub-agent: its parent's");
	ok(l.max_sessions == 2 && l.max_request == 65536, "... alice's");
	is_int(cd_policy_agent_limits(p, "alice/sub/y", &l), 1,
	       "below a declared sub-agent: its own");
	ok(l.max_sessions == 1 && l.max_request == 0 && l.max_calls_per_minute == 0,
	   "... (only max_sessions set: the rest 0, the flags)");
	is_int(cd_policy_agent_limits(p, "bob", &l), 0, "bob sets none");
	ok(!l.max_sessions && !l.max_request && !l.max_calls_per_minute, "... all zero");
	is_int(cd_policy_agent_limits(p, "carol", &l), 0, "an unknown agent: none");
	is_int(cd_policy_agent_limits(p, "alicex", &l), 0, "a name that only starts alike: none");
	is_int(cd_policy_agent_limits(NULL, "alice", &l), 0, "no policy: none");
	cd_policy_free(p);
	for (i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		char a[256];
		snprintf(a, sizeof a, "  - {id: alice, owner: o, mcp_front: %s}\n", bad[i]);
		p = load(a);
		ok(p == NULL, "refused: mcp_front: %s", bad[i]);
		cd_policy_free(p);
	}
	p = load("  - {id: alice, owner: o, mcp_front: {max_request: 16M, max_sessions: 256, "
	         "max_calls_per_minute: 100000}}\n");
	ok(p != NULL, "the largest values load (the positive control)");
	cd_policy_free(p);
	return tap_done();
}
