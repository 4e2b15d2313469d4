/* mcp-map.c — an MCP tools/call onto a policy request (mcp.h).
 *
 * The policy's inventory is the only source of meaning: the operation's
 * action class and each argument's kind (path, host, port, record, value)
 * come from it, never from the server's tool metadata.  An argument the
 * inventory does not type is a refusal, since it could carry a path or a
 * host the policy would never see.
 *
 * Trust: arguments come from the agent and are hostile; sizes are capped
 * by CD_REQ_MAX_* and every string is copied with its length. */
#include "mcp.h"

#include "util/bounds.h"
#include "policy/policy-int.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const struct cd_named *find_tool(const struct cd_policy *p, const char *id)
{
	size_t i;

	for (i = 0; i < p->ntools; i++)
		if (strcmp(p->tools[i].id, id) == 0)
			return &p->tools[i];
	return NULL;
}

static const struct cd_named *inventory(const struct cd_policy *p, const char *server,
                                        const char *tool, enum cd_action *ret_action)
{
	char id[512];
	const struct cd_named *t = NULL;
	size_t i;
	int n = snprintf(id, sizeof id, "%s/%s", server, tool);

	if (n > 0 && (size_t)n < sizeof id)
		t = find_tool(p, id);
	if (!t)
		t = find_tool(p, server);
	if (!t || !t->kind || strcmp(t->kind, "mcp") != 0)
		return NULL;
	for (i = 0; i < t->nops; i++) {
		if (strcmp(t->op_names[i], tool) == 0) {
			*ret_action = (enum cd_action)t->op_actions[i];
			return t;
		}
	}
	return NULL;
}

int cd_mcp_inventory(const struct cd_policy *p, const char *server, const char *tool,
                     const char **ret_id, enum cd_action *ret_action, struct cd_err *err)
{
	enum cd_action a;
	const struct cd_named *t;

	if (!p || !server || !tool)
		return cd_err_set(err, -EINVAL, "no policy");
	t = inventory(p, server, tool, &a);
	if (!t)
		return cd_err_set(err, -ENOENT,
		                  "tool '%s/%s' is not in the policy's inventory (a tool '%s' or "
		                  "'%s/%s' of kind mcp listing operation '%s')",
		                  server, tool, server, server, tool, tool);
	*ret_id = t->id;
	*ret_action = a;
	return 0;
}

static const char *arg_kind(const struct cd_named *t, const char *name)
{
	size_t i;

	for (i = 0; i < t->nargkinds; i++)
		if (strcmp(t->arg_names[i], name) == 0)
			return t->arg_kinds[i];
	return NULL;
}

static int add_path(struct cd_mcp_request *r, const char *s, size_t n, cd_mcp_resolve_fn resolve,
                    void *rctx, struct cd_err *err)
{
	char real[CD_PATH_MAX];

	if (r->npaths + 2 > CD_REQ_MAX_PATHS)
		return cd_err_set(err, -CD_E_LIMIT, "more than %d paths in one call",
		                  CD_REQ_MAX_PATHS / 2);
	if (n == 0 || n >= CD_PATH_MAX || memchr(s, '\0', n))
		return cd_err_set(err, -CD_E_DENIED,
		                  "a path argument is empty, too long or holds NUL");
	r->paths[r->npaths] = strndup(s, n);
	if (!r->paths[r->npaths])
		return -ENOMEM;
	r->npaths++;
	/* What the server would really open: decided too, so a symlink in a
	 * granted directory cannot lead outside it. */
	if (resolve && s[0] == '/' &&
	    resolve(rctx, r->paths[r->npaths - 1], real, sizeof real) == 0 &&
	    strcmp(real, r->paths[r->npaths - 1]) != 0) {
		r->paths[r->npaths] = strdup(real);
		if (!r->paths[r->npaths])
			return -ENOMEM;
		r->npaths++;
	}
	return 0;
}

/* host, or http(s)://[host]:port/...: the host and, for a URL, the port. */
static int set_host(struct cd_mcp_request *r, const char *name, const char *s, size_t n,
                    struct cd_err *err)
{
	const char *h = s, *end = s + n, *colon = NULL, *q;
	long port = -1;

	if (r->host)
		return cd_err_set(err, -CD_E_DENIED, "more than one host argument in one call");
	if (n > 8 && !strncmp(s, "https://", 8)) {
		h = s + 8;
		port = 443;
	} else if (n > 7 && !strncmp(s, "http://", 7)) {
		h = s + 7;
		port = 80;
	} else if (memchr(s, ':', n) && memchr(s, '/', n)) {
		return cd_err_set(err, -CD_E_DENIED,
		                  "argument '%s': only http and https URLs are understood", name);
	}
	if (port >= 0) {
		for (q = h; q < end && *q != '/' && *q != '?' && *q != '#'; q++)
			;
		end = q;
		if (memchr(h, '@', (size_t)(end - h)))
			return cd_err_set(err, -CD_E_DENIED,
			                  "argument '%s': a URL with user information is refused",
			                  name);
		if (h < end && *h == '[') {
			q = memchr(h, ']', (size_t)(end - h));
			if (!q)
				return cd_err_set(err, -CD_E_DENIED, "argument '%s': bad URL",
				                  name);
			colon = q + 1 < end && q[1] == ':' ? q + 1 : NULL;
			if (!colon && q + 1 != end)
				return cd_err_set(err, -CD_E_DENIED, "argument '%s': bad URL",
				                  name);
		} else {
			colon = memchr(h, ':', (size_t)(end - h));
		}
		if (colon) {
			const char *d;
			port = 0;
			if (colon + 1 == end || end - colon > 6)
				return cd_err_set(err, -CD_E_DENIED, "argument '%s': bad port",
				                  name);
			for (d = colon + 1; d < end; d++) {
				if (*d < '0' || *d > '9')
					return cd_err_set(err, -CD_E_DENIED,
					                  "argument '%s': bad port", name);
				port = port * 10 + (*d - '0');
			}
			if (port > 65535)
				return cd_err_set(err, -CD_E_DENIED, "argument '%s': bad port",
				                  name);
			end = colon;
		}
		if (r->req.port >= 0 && r->req.port != port)
			return cd_err_set(err, -CD_E_DENIED, "two different ports in one call");
		r->req.port = port;
	}
	if (h == end || memchr(h, '\0', (size_t)(end - h)))
		return cd_err_set(err, -CD_E_DENIED, "argument '%s': empty host", name);
	r->host = strndup(h, (size_t)(end - h));
	return r->host ? 0 : -ENOMEM;
}

static int set_port(struct cd_mcp_request *r, const char *name, json_t *v, struct cd_err *err)
{
	long port = -1;

	if (json_is_integer(v) && json_integer_value(v) >= 0 && json_integer_value(v) <= 65535)
		port = (long)json_integer_value(v);
	if (port < 0)
		return cd_err_set(err, -CD_E_DENIED, "argument '%s' (a port) must be 0-65535",
		                  name);
	if (r->req.port >= 0 && r->req.port != port)
		return cd_err_set(err, -CD_E_DENIED, "two different ports in one call");
	r->req.port = port;
	return 0;
}

static int add_arg(struct cd_mcp_request *r, const char *name, json_t *v, struct cd_err *err)
{
	struct cd_buf b;
	char *n, *val;

	if (r->nargs >= CD_REQ_MAX_ARGS)
		return cd_err_set(err, -CD_E_LIMIT, "too many argument values");
	cd_buf_init(&b, CD_POLICY_MAX_SCALAR);
	if (json_is_string(v)) {
		if (memchr(json_string_value(v), '\0', json_string_length(v)) ||
		    cd_buf_append(&b, json_string_value(v), json_string_length(v)) < 0) {
			cd_buf_release(&b);
			return cd_err_set(err, -CD_E_DENIED,
			                  "argument '%s' is too long or holds NUL", name);
		}
	} else if (cd_mcp_canonical(v, &b) < 0) {
		cd_buf_release(&b);
		return cd_err_set(err, -CD_E_DENIED, "argument '%s' is too long to decide on",
		                  name);
	}
	val = cd_buf_take(&b);
	n = strdup(name);
	if (!val || !n) {
		free(val);
		free(n);
		return -ENOMEM;
	}
	r->argbuf[2 * r->nargs] = n;
	r->argbuf[2 * r->nargs + 1] = val;
	r->args[r->nargs].name = n;
	r->args[r->nargs].value = val;
	r->nargs++;
	return 0;
}

static int strings_of(json_t *v, const char *name, const char *kind, struct cd_err *err)
{
	size_t i;

	if (json_is_string(v))
		return 1;
	if (!json_is_array(v) || json_array_size(v) == 0)
		return cd_err_set(err, -CD_E_DENIED,
		                  "argument '%s' (%s) must be a string or a list of strings", name,
		                  kind);
	for (i = 0; i < json_array_size(v); i++)
		if (!json_is_string(json_array_get(v, i)))
			return cd_err_set(
			        err, -CD_E_DENIED,
			        "argument '%s' (%s) must be a string or a list of strings", name,
			        kind);
	return (int)json_array_size(v);
}

static json_t *item(json_t *v, size_t i)
{
	return json_is_array(v) ? json_array_get(v, i) : v;
}

static int map_one(struct cd_mcp_request *r, const char *name, const char *kind, json_t *v,
                   cd_mcp_resolve_fn resolve, void *rctx, struct cd_err *err)
{
	int n, k, rc;

	if (!strcmp(kind, "path") || !strcmp(kind, "record")) {
		if ((n = strings_of(v, name, kind, err)) < 0)
			return n;
		for (k = 0; k < n; k++) {
			json_t *s = item(v, (size_t)k);
			if (kind[0] == 'p') {
				rc = add_path(r, json_string_value(s), json_string_length(s),
				              resolve, rctx, err);
			} else if (r->nfields >= CD_REQ_MAX_ARGS) {
				rc = cd_err_set(err, -CD_E_LIMIT, "too many record fields");
			} else {
				r->fields[r->nfields] = strdup(json_string_value(s));
				rc = r->fields[r->nfields++] ? 0 : -ENOMEM;
			}
			if (rc < 0)
				return rc;
		}
		return 0;
	}
	if (!strcmp(kind, "host")) {
		if (!json_is_string(v))
			return cd_err_set(err, -CD_E_DENIED,
			                  "argument '%s' (a host) must be a string", name);
		return set_host(r, name, json_string_value(v), json_string_length(v), err);
	}
	if (!strcmp(kind, "port"))
		return set_port(r, name, v, err);
	if (json_is_array(v)) {
		size_t i;
		for (i = 0; i < json_array_size(v); i++)
			if ((rc = add_arg(r, name, json_array_get(v, i), err)) < 0)
				return rc;
		return json_array_size(v) ? 0 : add_arg(r, name, v, err);
	}
	return add_arg(r, name, v, err);
}

static json_t *stored_form(const struct cd_mcp_request *r)
{
	json_t *o = json_object(), *a;
	size_t i;

	if (!o)
		return NULL;
	if (r->npaths) {
		a = json_array();
		for (i = 0; a && i < r->npaths; i++)
			json_array_append_new(a, json_string(r->paths[i]));
		json_object_set_new(o, "paths", a);
	}
	if (r->host)
		json_object_set_new(o, "host", json_string(r->host));
	if (r->req.port >= 0)
		json_object_set_new(o, "port", json_integer(r->req.port));
	if (r->nargs) {
		a = json_object();
		for (i = 0; a && i < r->nargs; i++)
			json_object_set_new(a, r->args[i].name, json_string(r->args[i].value));
		json_object_set_new(o, "args", a);
	}
	if (r->nfields) {
		a = json_array();
		for (i = 0; a && i < r->nfields; i++)
			json_array_append_new(a, json_string(r->fields[i]));
		json_object_set_new(o, "fields", a);
	}
	return o;
}

int cd_mcp_map_call(const struct cd_policy *p, const char *agent, const char *task,
                    const char *server, const char *tool, json_t *arguments, int64_t now,
                    cd_mcp_resolve_fn resolve, void *rctx, struct cd_mcp_request *ret,
                    struct cd_err *err)
{
	const struct cd_named *t;
	enum cd_action action;
	const char *key, *kind;
	json_t *v;
	int rc;

	memset(ret, 0, sizeof *ret);
	cd_request_init(&ret->req);
	if (!p || !agent || !server || !tool)
		return cd_err_set(err, -CD_E_DENIED, "incomplete call");
	t = inventory(p, server, tool, &action);
	if (!t)
		return cd_err_set(err, -CD_E_DENIED,
		                  "tool '%s/%s' is not in the policy's inventory", server, tool);
	if (arguments && !json_is_object(arguments))
		return cd_err_set(err, -CD_E_DENIED, "arguments must be an object");
	json_object_foreach(arguments, key, v)
	{
		kind = arg_kind(t, key);
		if (!kind)
			return cd_err_set(err, -CD_E_DENIED,
			                  "argument '%s' of '%s/%s' is not typed in the policy's "
			                  "inventory (tool '%s', args)",
			                  key, server, tool, t->id);
		if ((rc = map_one(ret, key, kind, v, resolve, rctx, err)) < 0)
			return rc;
	}
	ret->req.agent = agent;
	ret->req.task = task;
	ret->req.tool = t->id;
	ret->req.action = action;
	ret->req.paths = (const char *const *)ret->paths;
	ret->req.npaths = ret->npaths;
	ret->req.host = ret->host;
	ret->req.args = ret->args;
	ret->req.nargs = ret->nargs;
	ret->req.fields = (const char *const *)ret->fields;
	ret->req.nfields = ret->nfields;
	ret->req.now = now;
	ret->stored = stored_form(ret);
	return ret->stored ? 0 : -ENOMEM;
}

void cd_mcp_request_release(struct cd_mcp_request *r)
{
	size_t i;

	if (!r)
		return;
	for (i = 0; i < r->npaths; i++)
		free(r->paths[i]);
	for (i = 0; i < 2 * r->nargs; i++)
		free(r->argbuf[i]);
	for (i = 0; i < r->nfields; i++)
		free(r->fields[i]);
	free(r->host);
	json_decref(r->stored);
	memset(r, 0, sizeof *r);
}

int cd_mcp_tool_granted(const struct cd_policy *p, const char *agent, const char *task,
                        const char *server, const char *tool, int64_t now)
{
	const struct cd_named *t;
	enum cd_action action;
	unsigned bit;
	size_t i;
	int granted = 0;

	if (!p || !agent || !server || !tool)
		return 0;
	t = inventory(p, server, tool, &action);
	if (!t)
		return 0;
	bit = 1u << action;
	for (i = 0; i < p->ngrants + p->nforbids; i++) {
		const struct cd_rule *g = &p->rules[i];

		if (!(g->actions & bit))
			continue;
		if (strcmp(g->tool, t->id) && !(g->forbid && !strcmp(g->tool, "*")))
			continue;
		if (strcmp(g->agent, agent) && !(g->forbid && !strcmp(g->agent, "*")))
			continue;
		if (g->task && (!task || strcmp(g->task, task)))
			continue;
		if (g->forbid) {
			if (!g->has_scope)
				return 0; /* forbidden whatever the arguments */
			continue;
		}
		/* A launch grant (argv) never covers a call. */
		if (g->nargv || g->expires <= now)
			continue;
		granted = 1;
	}
	return granted;
}

size_t cd_mcp_policy_operations(const struct cd_policy *p, const char *server,
                                void (*fn)(const char *tool, enum cd_action a, void *ctx),
                                void *ctx)
{
	size_t i, j, n = 0, sl;

	if (!p || !server)
		return 0;
	sl = strlen(server);
	for (i = 0; i < p->ntools; i++) {
		const struct cd_named *t = &p->tools[i];
		if (!t->kind || strcmp(t->kind, "mcp") != 0)
			continue;
		if (strcmp(t->id, server) != 0 && (strncmp(t->id, server, sl) || t->id[sl] != '/'))
			continue;
		for (j = 0; j < t->nops; j++, n++)
			if (fn)
				fn(t->op_names[j], (enum cd_action)t->op_actions[j], ctx);
	}
	return n;
}

int cd_mcp_policy_server(const struct cd_policy *p, char *out, size_t outlen)
{
	size_t i, sl, found = 0;

	for (i = 0; p && i < p->ntools; i++) {
		const char *id = p->tools[i].id;
		if (!p->tools[i].kind || strcmp(p->tools[i].kind, "mcp") != 0)
			continue;
		sl = strcspn(id, "/"); /* "SERVER/TOOL" belongs to SERVER */
		if (found && (strlen(out) != sl || strncmp(out, id, sl) != 0))
			return -EEXIST;
		if (sl >= outlen)
			return -ENAMETOOLONG;
		memcpy(out, id, sl);
		out[sl] = '\0';
		found = 1;
	}
	return found ? 0 : -ENOENT;
}

const char *cd_mcp_policy_pin(const struct cd_policy *p, const char *server, const char *tool)
{
	char id[512];
	const struct cd_named *t[2];
	size_t i, k;
	int n;

	if (!p || !server || !tool)
		return NULL;
	n = snprintf(id, sizeof id, "%s/%s", server, tool);
	t[0] = n > 0 && (size_t)n < sizeof id ? find_tool(p, id) : NULL;
	t[1] = find_tool(p, server);
	for (k = 0; k < 2; k++)
		for (i = 0; t[k] && i < t[k]->npins; i++)
			if (!strcmp(t[k]->pin_names[i], tool))
				return t[k]->pin_shas[i];
	return NULL;
}

int cd_mcp_policy_remote(const struct cd_policy *p, const char *server, const char **ret_url,
                         const char **ret_secret)
{
	const struct cd_named *t = p && server ? find_tool(p, server) : NULL;

	if (!t || !t->url || !t->kind || strcmp(t->kind, "mcp") != 0)
		return 0;
	*ret_url = t->url;
	*ret_secret = t->secret;
	return 1;
}

int cd_mcp_policy_shared(const struct cd_policy *p, const char *server)
{
	const struct cd_named *t = p && server ? find_tool(p, server) : NULL;

	return t && t->shared;
}
