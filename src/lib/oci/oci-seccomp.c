/* oci-seccomp.c — the spec's linux.seccomp read into a profile that the
 * sandbox stacks on cordon's own filter (seccomp.h): it can only narrow.
 */
#include "oci-int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static const struct {
	const char *name;
	enum cd_seccomp_act act;
	int errno_ret; /* the default errno of that action */
} actions[] = {
	{ "SCMP_ACT_ALLOW", CD_SCP_ALLOW, 0 },
	{ "SCMP_ACT_ERRNO", CD_SCP_ERRNO, EPERM },
	{ "SCMP_ACT_KILL", CD_SCP_KILL_THREAD, 0 },
	{ "SCMP_ACT_KILL_THREAD", CD_SCP_KILL_THREAD, 0 },
	{ "SCMP_ACT_KILL_PROCESS", CD_SCP_KILL_PROCESS, 0 },
	{ "SCMP_ACT_TRAP", CD_SCP_TRAP, 0 },
	{ "SCMP_ACT_LOG", CD_SCP_LOG, 0 },
	{ "SCMP_ACT_TRACE", CD_SCP_ERRNO, ENOSYS },
};

static const char *const ops[] = {
	"SCMP_CMP_NE", "SCMP_CMP_LT", "SCMP_CMP_LE",        "SCMP_CMP_EQ",
	"SCMP_CMP_GE", "SCMP_CMP_GT", "SCMP_CMP_MASKED_EQ",
};

static int bad(struct cd_err *err, const char *field, const char *want)
{
	return cd_err_set(err, -CD_E_PARSE, "config.json: linux.seccomp%s must be %s", field, want);
}

/* The action named by `a` with errnoRet `e` (may be NULL). */
static int parse_action(json_t *a, json_t *e, const char *field, enum cd_seccomp_act *act,
                        int *errno_ret, struct cd_err *err)
{
	size_t i;

	if (!json_is_string(a))
		return bad(err, field, "an action name");
	if (strcmp(json_string_value(a), "SCMP_ACT_NOTIFY") == 0)
		return cd_err_set(err, -CD_E_DENIED,
		                  "linux.seccomp: SCMP_ACT_NOTIFY hands the container's calls to "
		                  "another program: cordon's supervisor answers them itself");
	for (i = 0; i < sizeof actions / sizeof actions[0]; i++) {
		if (strcmp(json_string_value(a), actions[i].name) == 0)
			break;
	}
	if (i == sizeof actions / sizeof actions[0])
		return cd_err_set(err, -CD_E_PARSE,
		                  "config.json: linux.seccomp: unknown action '%s'",
		                  json_string_value(a));
	*act = actions[i].act;
	*errno_ret = actions[i].errno_ret;
	if (e && *act == CD_SCP_ERRNO && actions[i].errno_ret == EPERM) {
		if (!json_is_integer(e) || json_integer_value(e) < 0 ||
		    json_integer_value(e) > 4095)
			return bad(err, " errnoRet", "an integer 0-4095");
		*errno_ret = (int)json_integer_value(e);
	}
	return 0;
}

static int parse_args(json_t *a, struct cd_seccomp_rule *r, struct cd_err *err)
{
	size_t i, k;
	json_t *e;

	if (!a)
		return 0;
	if (!json_is_array(a) || json_array_size(a) > 6)
		return bad(err, ".syscalls[].args", "an array of at most 6");
	json_array_foreach(a, i, e)
	{
		json_t *ix = json_object_get(e, "index"), *v = json_object_get(e, "value"),
		       *v2 = json_object_get(e, "valueTwo"), *op = json_object_get(e, "op");

		if (!json_is_integer(ix) || json_integer_value(ix) < 0 ||
		    json_integer_value(ix) > 5 || !json_is_integer(v) ||
		    (v2 && !json_is_integer(v2)) || !json_is_string(op))
			return bad(
			        err, ".syscalls[].args[]",
			        "objects with an index 0-5, an integer value and valueTwo, an op");
		for (k = 0; k < sizeof ops / sizeof ops[0]; k++) {
			if (strcmp(json_string_value(op), ops[k]) == 0)
				break;
		}
		if (k == sizeof ops / sizeof ops[0])
			return bad(err, ".syscalls[].args[].op", "an SCMP_CMP_ name");
		r->args[i].index = (unsigned)json_integer_value(ix);
		r->args[i].op = (enum cd_seccomp_cmp)(CD_SCP_NE + (int)k);
		/* jansson holds integers as signed 64 bits: a mask with the top
		 * bit set comes negative and means the same bits. */
		r->args[i].value = (uint64_t)json_integer_value(v);
		r->args[i].value2 = v2 ? (uint64_t)json_integer_value(v2) : 0;
	}
	r->nargs = (unsigned)json_array_size(a);
	return 0;
}

static int parse_syscalls(json_t *a, struct cd_seccomp_profile *p, struct cd_err *err)
{
	struct cd_seccomp_rule tmpl;
	size_t i, j, total = 0;
	json_t *e, *n;
	int r;

	if (!a)
		return 0;
	if (!json_is_array(a))
		return bad(err, ".syscalls", "an array");
	json_array_foreach(a, i, e)
	{
		n = json_object_get(e, "names");
		if (!json_is_object(e) || !json_is_array(n) || json_array_size(n) == 0)
			return bad(err, ".syscalls[]", "objects with a non-empty names array");
		total += json_array_size(n);
	}
	if (total > CD_SECCOMP_PROFILE_MAX_RULES)
		return bad(err, ".syscalls", "at most 4096 names in all");
	p->rules = calloc(total ? total : 1, sizeof *p->rules);
	if (!p->rules)
		return cd_err_set(err, -ENOMEM, "out of memory");
	json_array_foreach(a, i, e)
	{
		memset(&tmpl, 0, sizeof tmpl);
		if ((r = parse_action(json_object_get(e, "action"), json_object_get(e, "errnoRet"),
		                      ".syscalls[].action", &tmpl.act, &tmpl.errno_ret, err)) < 0 ||
		    (r = parse_args(json_object_get(e, "args"), &tmpl, err)) < 0)
			return r;
		json_array_foreach(json_object_get(e, "names"), j, n)
		{
			if (!json_is_string(n) || json_string_length(n) == 0 ||
			    json_string_length(n) > 64)
				return bad(err, ".syscalls[].names[]", "system call names");
			p->rules[p->nrules] = tmpl;
			p->rules[p->nrules].name = strdup(json_string_value(n));
			if (!p->rules[p->nrules++].name)
				return cd_err_set(err, -ENOMEM, "out of memory");
		}
	}
	return 0;
}

int cd_oci_parse_seccomp(json_t *sc, struct cd_seccomp_profile **ret, struct cd_err *err)
{
	struct cd_seccomp_profile *p;
	json_t *lp;
	int r;

	*ret = NULL;
	if (!sc || json_is_null(sc))
		return 0;
	if (!json_is_object(sc))
		return bad(err, "", "an object");
	lp = json_object_get(sc, "listenerPath");
	if (lp && (!json_is_string(lp) || json_string_length(lp) > 0))
		return cd_err_set(
		        err, -CD_E_DENIED,
		        "linux.seccomp.listenerPath hands the container's calls to another "
		        "program: cordon's supervisor answers them itself");
	p = calloc(1, sizeof *p);
	if (!p)
		return cd_err_set(err, -ENOMEM, "out of memory");
	r = parse_action(json_object_get(sc, "defaultAction"),
	                 json_object_get(sc, "defaultErrnoRet"), ".defaultAction", &p->def,
	                 &p->def_errno, err);
	if (r == 0)
		r = parse_syscalls(json_object_get(sc, "syscalls"), p, err);
	if (r < 0) {
		cd_oci_seccomp_free(p);
		return r;
	}
	*ret = p;
	return 0;
}

void cd_oci_seccomp_free(struct cd_seccomp_profile *p)
{
	size_t i;

	if (!p)
		return;
	for (i = 0; i < p->nrules; i++)
		free(p->rules[i].name);
	free(p->rules);
	free(p);
}
