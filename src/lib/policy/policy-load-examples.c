/* policy-load-examples.c — the inline examples of a policy being loaded
 * (policy-load.c): each a request and the decision it must get.
 *
 * Trust boundary: the same as policy-load.c's; the examples are checked
 * against the loaded matrix before the policy is returned. */
#include "policy-load-int.h"

#include "util/num.h"

/* ---- examples ---- */

static int load_request(struct lctx *c, const struct cd_ynode *m, const struct cd_rule *of,
                        int expect_allow, struct cd_example *ex)
{
	static const struct keyspec spec[] = {
		{ "agent", 0 },  { "task", 0 }, { "tool", 0 }, { "action", 0 }, { "path", 0 },
		{ "paths", 0 },  { "host", 0 }, { "port", 0 }, { "argv", 0 },   { "args", 0 },
		{ "fields", 0 }, { "at", 0 },   { NULL, 0 },
	};
	struct cd_request *q = &ex->req;
	const struct cd_ynode *v;
	uint64_t port;
	int r;

	if ((r = cd_pl_expect(c, m, CD_Y_MAP, "an example")) < 0 ||
	    (r = cd_pl_check_keys(c, m, spec, "an example")) < 0)
		return r;
	cd_request_init(q);
	ex->mark = m->mark;
	ex->of = of;
	ex->expect_allow = expect_allow;
	if (of) {
		q->agent = of->agent;
		q->task = of->task;
		q->tool = of->tool;
		q->action = (enum cd_action)__builtin_ctz(of->actions);
	}
	if ((v = cd_pl_map_get(m, "agent")) && (r = cd_pl_get_str(c, v, "agent", &q->agent)) < 0)
		return r;
	if ((v = cd_pl_map_get(m, "task")) && (r = cd_pl_get_str(c, v, "task", &q->task)) < 0)
		return r;
	if ((v = cd_pl_map_get(m, "tool")) && (r = cd_pl_get_str(c, v, "tool", &q->tool)) < 0)
		return r;
	if ((v = cd_pl_map_get(m, "action"))) {
		if (v->type != CD_Y_SCALAR || cd_action_parse(v->s, &q->action) < 0)
			return cd_pl_lfail(c, v, "read, create, update, delete, execute or network",
			                   "unknown action class in example");
	} else if (!of) {
		return cd_pl_lfail(c, m, NULL, "missing required key 'action' in an example");
	}
	if (!q->agent || !q->tool)
		return cd_pl_lfail(c, m, NULL, "an example outside a grant names agent and tool");
	if ((v = cd_pl_map_get(m, "path"))) {
		const char **one = cd_arena_alloc(&c->p->arena, sizeof *one);
		if (!one)
			return cd_pl_oom(c);
		if ((r = cd_pl_expect(c, v, CD_Y_SCALAR, "path")) < 0)
			return r;
		one[0] = v->s;
		q->paths = one;
		q->npaths = 1;
	}
	if ((v = cd_pl_map_get(m, "paths"))) {
		const char **list;
		if (q->npaths)
			return cd_pl_lfail(c, v, NULL, "use path or paths, not both");
		if ((r = cd_pl_get_str_list(c, v, "paths", &list, &q->npaths)) < 0)
			return r;
		q->paths = list;
	}
	if ((v = cd_pl_map_get(m, "host")) && (r = cd_pl_expect(c, v, CD_Y_SCALAR, "host")) == 0)
		q->host = v->s;
	if (r < 0)
		return r;
	if ((v = cd_pl_map_get(m, "port"))) {
		if (v->type != CD_Y_SCALAR || !v->plain ||
		    cd_parse_u64(v->s, v->len, 65535, &port) < 0)
			return cd_pl_lfail(c, v, "0..65535", "bad port in example");
		q->port = (long)port;
	}
	if ((v = cd_pl_map_get(m, "argv"))) {
		const char **list;
		if ((r = cd_pl_get_str_list(c, v, "argv", &list, &q->argc)) < 0)
			return r;
		q->argv = list;
	}
	if ((v = cd_pl_map_get(m, "args"))) {
		const struct cd_ynode *k;
		struct cd_req_arg *args;
		size_t i = 0;
		if ((r = cd_pl_expect(c, v, CD_Y_MAP, "args")) < 0)
			return r;
		args = cd_arena_alloc(&c->p->arena, (v->n / 2 + 1) * sizeof *args);
		if (!args)
			return cd_pl_oom(c);
		for (k = v->child; k; k = k->next->next, i++) {
			if ((r = cd_pl_expect(c, k->next, CD_Y_SCALAR, "an argument value")) < 0)
				return r;
			args[i].name = k->s;
			args[i].value = k->next->s;
		}
		q->args = args;
		q->nargs = i;
	}
	if ((v = cd_pl_map_get(m, "fields"))) {
		const char **list;
		if ((r = cd_pl_get_str_list(c, v, "fields", &list, &q->nfields)) < 0)
			return r;
		q->fields = list;
	}
	if ((v = cd_pl_map_get(m, "at"))) {
		if ((r = cd_pl_get_time(c, v, "at", &q->now)) < 0)
			return r;
		ex->has_at = 1;
	}
	return 0;
}

int cd_pl_load_examples(struct lctx *c, const struct cd_ynode *v, const struct cd_rule *of)
{
	static const struct keyspec spec[] = { { "allow", 0 }, { "deny", 0 }, { NULL, 0 } };
	struct cd_policy *p = c->p;
	const struct cd_ynode *list, *it;
	size_t add = 0, pass;
	int r;

	if ((r = cd_pl_expect(c, v, CD_Y_MAP, "examples")) < 0 ||
	    (r = cd_pl_check_keys(c, v, spec, "examples")) < 0)
		return r;
	for (pass = 0; pass < 2; pass++) {
		list = cd_pl_map_get(v, pass ? "deny" : "allow");
		if (!list)
			continue;
		if ((r = cd_pl_expect(c, list, CD_Y_SEQ,
		                      pass ? "examples.deny" : "examples.allow")) < 0)
			return r;
		add += list->n;
	}
	if (add == 0)
		return cd_pl_lfail(c, v, "list requests under allow: and deny:", "empty examples");
	/* Room was counted by count_examples() before any was loaded. */
	if (p->nexamples + add > c->examples_cap)
		return cd_pl_lfail(c, v, NULL, "too many examples");
	for (pass = 0; pass < 2; pass++) {
		list = cd_pl_map_get(v, pass ? "deny" : "allow");
		for (it = list ? list->child : NULL; it; it = it->next) {
			r = load_request(c, it, of, !pass, &p->examples[p->nexamples]);
			if (r < 0)
				return r;
			p->nexamples++;
		}
	}
	return 0;
}
