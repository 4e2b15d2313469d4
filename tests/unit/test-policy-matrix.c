/* test-policy-matrix.c — agents x tools for review: letters per action
 * class, approval in upper case, forbid rules outright ('!') or narrowing,
 * task-bound grants, the first expiry, expired grants absent at the
 * boundary second, --agent, and grant rows sorted. */
#include "../tap.h"

#include "policy/policy-matrix.h"
#include "policy/policy.h"

#include <errno.h>

static const char policy[] =
        "version: 1\n"
        "agents:\n"
        "  - {id: zed, owner: z}\n"
        "  - {id: coder, owner: alice}\n"
        "tasks: [{id: T1}]\n"
        "tools:\n"
        "  - {id: sh, kind: command}\n"
        "  - {id: fs, kind: mcp, operations: {read_file: read, rm: delete}}\n"
        "  - {id: web, kind: http}\n"
        "grants:\n"
        "  - {id: b-read, agent: coder, tool: fs, actions: [read, update],\n"
        "     scope: {paths: [/r/**]}, owner: o, justification: j, review_by: 2030-01-01,\n"
        "     expires: 2030-06-01}\n"
        "  - {id: a-del, agent: coder, tool: fs, actions: [delete, update], approval: human,\n"
        "     scope: {paths: [/r/tmp/**]}, owner: o, justification: j, review_by: 2030-01-01,\n"
        "     expires: 2030-03-01T12:00:00Z}\n"
        "  - {id: c-task, agent: coder, task: T1, tool: fs, actions: [create],\n"
        "     scope: {paths: [/r/**]}, owner: o, justification: j, review_by: 2030-01-01,\n"
        "     expires: 2031-01-01}\n"
        "  - {id: run, agent: coder, tool: sh, actions: [execute], scope: {argv: [make]},\n"
        "     owner: o, justification: j, review_by: 2030-01-01, expires: 2029-01-01}\n"
        "  - {id: net, agent: zed, tool: web, actions: [read, network],\n"
        "     scope: {hosts: [a.example.com]}, owner: o, justification: j,\n"
        "     review_by: 2030-01-01, expires: 2030-01-01}\n"
        "forbid:\n"
        "  - {id: no-net, agent: zed, tool: web, actions: [network], reason: r}\n"
        "  - {id: no-env, tool: fs, scope: {paths: [/r/.env]}, reason: r}\n";

static const struct cd_matrix_cell *cell(const struct cd_matrix *m, const char *agent,
                                         const char *tool)
{
	size_t r, c;
	for (r = 0; r < m->nagents; r++)
		for (c = 0; c < m->ntools; c++)
			if (!strcmp(m->agents[r], agent) && !strcmp(m->tools[c].id, tool))
				return cd_matrix_cell(m, r, c);
	return NULL;
}

static void mask_is(const struct cd_matrix *m, const char *agent, const char *tool,
                    const char *want)
{
	const struct cd_matrix_cell *c = cell(m, agent, tool);
	char got[7] = "?";

	if (c)
		cd_matrix_cell_mask(c, got);
	is_str(got, want, "%s x %s is %s", agent, tool, want);
}

int main(void)
{
	struct cd_policy *p = NULL;
	struct cd_matrix *m = NULL;
	struct cd_err err = { 0 };
	const struct cd_matrix_cell *c;
	int64_t at, t;

	tap_start(30);
	ok(cd_policy_load_buf("m.yaml", policy, sizeof policy - 1, &p, &err) == 0, "loads: %s",
	   err.msg);
	if (!p)
		return tap_done();
	cd_policy_parse_time("2029-06-01", 10, &at);
	ok(cd_policy_matrix(p, NULL, at, &m) == 0 && m, "matrix builds");
	if (!m)
		return tap_done();

	/* Rows and columns sorted by id, every declared one present. */
	is_int(m->nagents, 2, "two agents");
	is_int(m->ntools, 3, "three tools");
	is_str(m->agents[0], "coder", "rows sorted: coder first");
	is_str(m->tools[0].id, "fs", "columns sorted: fs first");
	is_int(m->tools[0].nops, 2, "fs: its two operations");
	is_str(m->tools[0].kind, "mcp", "fs: its kind");

	/* read/update allowed (update also by an approval grant: no approval
	 * wins), create only within a task, delete only with approval. */
	mask_is(m, "coder", "fs", "rcuD--");
	c = cell(m, "coder", "fs");
	is_int(c->ngrants, 3, "coder x fs: three grants in force");
	is_int(c->task_only, 1u << CD_ACTION_CREATE, "create is task-only");
	ok(c->narrowed == 0x3f && c->forbidden == 0, "a scoped forbid rule narrows, no '!'");
	cd_policy_parse_time("2030-03-01T12:00:00Z", 20, &t);
	is_int(c->expires, t, "first expiry is the earliest grant's");
	/* An expired grant is absent, and counted. */
	mask_is(m, "coder", "sh", "------");
	is_int(cell(m, "coder", "sh")->nexpired, 1, "coder x sh: one expired grant");
	is_int(cell(m, "coder", "sh")->expires, CD_MATRIX_NEVER, "no expiry without grants");
	/* A forbid rule without scope wins outright. */
	mask_is(m, "zed", "web", "r----!");
	ok(cell(m, "zed", "web")->forbidden == 1u << CD_ACTION_NETWORK, "network forbidden");
	mask_is(m, "zed", "fs", "------");
	mask_is(m, "coder", "web", "------");

	/* Grant rows: by agent, tool, id; expired ones flagged. */
	is_int(m->ngrants, 5, "every grant listed");
	is_str(m->grants[0].id, "a-del", "rows sorted by agent, tool, id");
	is_str(m->grants[2].id, "c-task", "the task-bound grant third");
	is_str(m->grants[3].id, "run", "then coder x sh");
	ok(m->grants[3].expired && !m->grants[0].expired, "expired rows are flagged");
	cd_matrix_free(m);
	m = NULL;

	/* The boundary second: at `expires` the grant is absent. */
	cd_policy_parse_time("2030-03-01T12:00:00Z", 20, &t);
	ok(cd_policy_matrix(p, NULL, t - 1, &m) == 0, "one second before expiry");
	mask_is(m, "coder", "fs", "rcuD--");
	cd_matrix_free(m);
	ok(cd_policy_matrix(p, NULL, t, &m) == 0, "at the expiry second");
	mask_is(m, "coder", "fs", "rcu---");
	cd_matrix_free(m);
	m = NULL;

	/* One agent only; an unknown agent is an error, not an empty table. */
	ok(cd_policy_matrix(p, "zed", at, &m) == 0 && m->nagents == 1, "--agent: one row");
	is_int(m ? m->ngrants : 0, 1, "--agent: only its grants");
	cd_matrix_free(m);
	m = NULL;
	is_int(cd_policy_matrix(p, "ghost", at, &m), -ENOENT, "unknown agent: -ENOENT");
	ok(m == NULL, "and nothing returned");
	is_int(cd_policy_matrix(NULL, NULL, at, &m), -EINVAL, "NULL policy: -EINVAL");
	ok(cd_action_letter(CD_ACTION_EXECUTE) == 'x' && cd_action_letter(CD_ACTION_COUNT) == '?',
	   "action letters");
	cd_matrix_free(NULL);
	cd_policy_free(p);
	return tap_done();
}
