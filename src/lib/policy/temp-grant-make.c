/* temp-grant-make.c — making a break-glass or delegated grant from what a
 * person asked for (temp-grant.h, struct cd_temp_req): the grant mapping
 * the policy loader reads, checked against the policy (a break-glass
 * grant by the loader and the policy's max_ttl, a delegation by
 * cd_policy_delegation_check), stored with its audit record in one step.
 * `cordon grant break-glass`, `cordon delegate` and the console's grants
 * page all make grants here, so the rules are the same in each.
 *
 * Trust boundary: every field of the request is the asker's text.  Values
 * go into the mapping as double-quoted YAML scalars with every byte
 * outside printable ASCII escaped, so no value changes its structure;
 * ports are digits and '-' only. */
#include "temp-grant.h"

#include "util/buf.h"
#include "util/num.h"
#include "util/util.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A double-quoted YAML scalar. */
static int yq(struct cd_buf *b, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	int r = cd_buf_append(b, "\"", 1);

	for (; r == 0 && *p; p++) {
		if (*p == '"' || *p == '\\')
			r = cd_buf_printf(b, "\\%c", *p);
		else if (*p < 0x20 || *p >= 0x7f)
			r = cd_buf_printf(b, "\\x%02x", *p);
		else
			r = cd_buf_append(b, (const char *)p, 1);
	}
	return r ? r : cd_buf_append(b, "\"", 1);
}

static int yq_key(struct cd_buf *b, const char *key, const char *val)
{
	int r = cd_buf_printf(b, ", %s: ", key);
	return r ? r : yq(b, val);
}

/* One list of the scope ("paths", "hosts" ...): the values of every
 * scope item KEY=... with that key, in order. */
static int scope_list(struct cd_buf *b, const struct cd_temp_req *q, const char *key,
                      const char *plural, int plain, int *first, struct cd_err *err)
{
	size_t i, kl = strlen(key), pl = strlen(plural), n = 0;
	int r = 0;

	for (i = 0; r == 0 && i < q->nscope; i++) {
		const char *s = q->scope[i], *v;
		if (strncmp(s, key, kl) == 0 && s[kl] == '=')
			v = s + kl + 1;
		else if (strncmp(s, plural, pl) == 0 && s[pl] == '=')
			v = s + pl + 1;
		else
			continue;
		if (n++ == 0)
			r = cd_buf_printf(b, "%s%s: [", *first ? "" : ", ", plural);
		else
			r = cd_buf_append(b, ", ", 2);
		*first = 0;
		if (r)
			break;
		if (plain) {
			/* Ports: digits and one '-' only, written plain (the loader
			 * wants numbers, not strings). */
			if (!*v || strspn(v, "0123456789-") != strlen(v))
				return cd_err_set(err, -EINVAL, "bad port '%.64s' in the scope", v);
			r = cd_buf_append(b, v, strlen(v));
		} else if (!strcmp(key, "argv")) {
			/* argv='git status': one token per word. */
			CD_AUTOFREE char *copy = strdup(v);
			char *save = NULL, *tok;
			int t = 0;
			if (!copy)
				return cd_err_set(err, -ENOMEM, "out of memory");
			n--;
			for (tok = strtok_r(copy, " \t", &save); r == 0 && tok;
			     tok = strtok_r(NULL, " \t", &save)) {
				if (t++ || n)
					r = cd_buf_append(b, ", ", 2);
				if (r == 0)
					r = yq(b, tok);
				n++;
			}
		} else {
			r = yq(b, v);
		}
	}
	if (r == 0 && n)
		r = cd_buf_append(b, "]", 1);
	return r;
}

/* arg:NAME=VALUE and arg:NAME^=PREFIX into "args: {NAME: {eq: V}, ...}". */
static int scope_args(struct cd_buf *b, const struct cd_temp_req *q, int *first, struct cd_err *err)
{
	size_t i, n = 0;
	int r = 0;

	for (i = 0; r == 0 && i < q->nscope; i++) {
		const char *s = q->scope[i], *eq;
		CD_AUTOFREE char *name = NULL;
		int prefix;
		if (strncmp(s, "arg:", 4) != 0)
			continue;
		eq = strchr(s + 4, '=');
		if (!eq || eq == s + 4)
			return cd_err_set(err, -EINVAL,
			                  "bad scope '%.64s' (arg:NAME=VALUE or arg:NAME^=PREFIX)",
			                  s);
		prefix = eq[-1] == '^';
		if (!(name = strndup(s + 4, (size_t)(eq - s - 4 - prefix))))
			return cd_err_set(err, -ENOMEM, "out of memory");
		r = cd_buf_printf(b, "%s", n++ ? ", " : *first ? "args: {" : ", args: {");
		*first = 0;
		r = r ?: yq(b, name);
		r = r ?: cd_buf_printf(b, ": {%s: ", prefix ? "prefix" : "eq");
		r = r ?: yq(b, eq + 1);
		r = r ?: cd_buf_append(b, "}", 1);
	}
	if (r == 0 && n)
		r = cd_buf_append(b, "}", 1);
	return r;
}

int cd_temp_req_check(const struct cd_temp_req *q, struct cd_err *err)
{
	static const char *const keys[] = { "path=",  "paths=", "host=",  "hosts=", "port=",
		                            "ports=", "argv=",  "field=", "fields=" };
	size_t i, k;

	if (q->nscope > CD_TEMP_MAX_SCOPE)
		return cd_err_set(err, -EINVAL, "more than %d scope items", CD_TEMP_MAX_SCOPE);
	for (i = 0; i < q->nscope; i++) {
		int ok = strncmp(q->scope[i], "arg:", 4) == 0;
		for (k = 0; !ok && k < CD_ARRAY_SIZE(keys); k++)
			ok = strncmp(q->scope[i], keys[k], strlen(keys[k])) == 0;
		if (!ok)
			return cd_err_set(
			        err, -EINVAL,
			        "unknown scope '%.64s' (path=, host=, port=, argv=, field=, "
			        "arg:NAME=)",
			        q->scope[i]);
	}
	if (q->approval && strcmp(q->approval, "human") && strcmp(q->approval, "none"))
		return cd_err_set(err, -EINVAL, "the approval is human or none");
	return 0;
}

int cd_temp_parse_ttl(const char *s, int64_t *ret, struct cd_err *err)
{
	uint64_t ms;

	if (!s || !*s)
		return cd_err_set(err, -EINVAL, "a time to live is required (e.g. 30m)");
	if (cd_parse_duration_ms(s, &ms) < 0 || ms < 1000 ||
	    ms > (uint64_t)CD_BREAK_GLASS_CEILING_TTL * 1000 * 52)
		return cd_err_set(err, -EINVAL, "bad time to live '%.32s' (e.g. 30m, 4h)", s);
	*ret = (int64_t)(ms / 1000);
	return 0;
}

/* mask email=pseudonymize,card into "mask: {"email": "pseudonymize",
 * "card": "redact"}" and fields a,b.c into "fields: ["a", "b.c"]"; the
 * loader checks the names.  A comma-separated list, empty items refused. */
static int minimize_yaml(struct cd_buf *b, const struct cd_temp_req *q, struct cd_err *err)
{
	const char *const lists[2] = { q->mask, q->fields };
	unsigned l;
	int r = 0;

	for (l = 0; r == 0 && l < 2; l++) {
		CD_AUTOFREE char *copy = NULL;
		char *save = NULL, *tok;
		int n = 0;
		if (!lists[l])
			continue;
		if (!(copy = strdup(lists[l])))
			return cd_err_set(err, -ENOMEM, "out of memory");
		r = cd_buf_printf(b, l ? ", fields: [" : ", mask: {");
		for (tok = strtok_r(copy, ",", &save); r == 0 && tok;
		     tok = strtok_r(NULL, ",", &save)) {
			char *eq = l ? NULL : strchr(tok, '=');
			if (eq)
				*eq = '\0';
			if (!*tok || (eq && !eq[1]))
				break;
			if (n++)
				r = cd_buf_append(b, ", ", 2);
			r = r ?: yq(b, tok);
			if (r == 0 && !l)
				r = cd_buf_append(b, ": ", 2);
			if (r == 0 && !l)
				r = yq(b, eq ? eq + 1 : "redact");
		}
		if (r == 0 && (n == 0 || tok))
			return cd_err_set(err, -EINVAL, "bad %s '%.64s'", l ? "fields" : "mask",
			                  lists[l]);
		r = r ?: cd_buf_append(b, l ? "]" : "}", 1);
	}
	if (r == 0 && q->require_task)
		r = cd_buf_printf(b, ", require_task: true");
	return r;
}

static int scope_yaml(struct cd_buf *b, const struct cd_temp_req *q, struct cd_err *err)
{
	int r, first = 1;

	if (!q->nscope)
		return 0;
	r = cd_buf_printf(b, ", scope: {");
	r = r ?: scope_list(b, q, "path", "paths", 0, &first, err);
	r = r ?: scope_list(b, q, "host", "hosts", 0, &first, err);
	r = r ?: scope_list(b, q, "port", "ports", 1, &first, err);
	r = r ?: scope_list(b, q, "argv", "argv", 0, &first, err);
	r = r ?: scope_list(b, q, "field", "fields", 0, &first, err);
	r = r ?: scope_args(b, q, &first, err);
	return r ?: cd_buf_append(b, "}", 1);
}

/* The grant mapping for the loader into *ret (the caller frees). */
static int grant_yaml(const struct cd_temp_req *q, const struct cd_temp_grant *g,
                      const char *approval, const char *profile, const char *justification,
                      char **ret, struct cd_err *err)
{
	struct cd_buf b;
	CD_AUTOFREE char *acts = strdup(q->actions ? q->actions : "");
	char *save = NULL, *tok;
	int r, n = 0;

	if (!acts)
		return cd_err_set(err, -ENOMEM, "out of memory");
	cd_buf_init(&b, 1 << 20);
	r = cd_buf_puts(&b, "{id: ");
	r = r ?: yq(&b, g->id);
	r = r ?: yq_key(&b, "agent", g->agent);
	if (r == 0 && q->task)
		r = yq_key(&b, "task", q->task);
	r = r ?: yq_key(&b, "tool", q->tool);
	r = r ?: cd_buf_printf(&b, ", actions: [");
	for (tok = strtok_r(acts, ", ", &save); r == 0 && tok; tok = strtok_r(NULL, ", ", &save)) {
		if (n++)
			r = cd_buf_append(&b, ", ", 2);
		r = r ?: yq(&b, tok);
	}
	r = r ?: cd_buf_append(&b, "]", 1);
	r = r ?: scope_yaml(&b, q, err);
	r = r ?: minimize_yaml(&b, q, err);
	if (r == 0 && approval)
		r = yq_key(&b, "approval", approval);
	if (r == 0 && profile)
		r = yq_key(&b, "profile", profile);
	r = r ?: yq_key(&b, "owner", g->by);
	r = r ?: yq_key(&b, "justification", justification);
	r = r
	            ?: cd_buf_printf(&b, ", review_by: \"@%lld\", expires: \"@%lld\"}",
	                             (long long)g->expires, (long long)g->expires);
	if (r) {
		cd_buf_release(&b);
		if (err && !err->code)
			cd_err_set(err, r, "cannot build the grant: %s", cd_strerror(r));
		return err && err->code ? err->code : r;
	}
	*ret = b.data;
	return 0;
}

/* Sign g with q's signer (none: unsigned) and check that the gate will
 * take it (row-sign.h): a grant nobody would honour is refused now, not
 * left out silently at every use.  *sig (freed by the caller) holds the
 * signature g->signature points to. */
static int sign(struct cd_state *s, const struct cd_policy *p, const struct cd_temp_req *q,
                struct cd_temp_grant *g, char **sig, struct cd_err *err)
{
	unsigned char m[CD_ROW_DIGEST_LEN];
	char why[256];

	*sig = NULL;
	g->signature = NULL;
	cd_temp_digest(g, m);
	if (q->sign) {
		if (!(*sig = calloc(1, CD_ROW_SIG_MAX)))
			return cd_err_set(err, -ENOMEM, "out of memory");
		if (q->sign(m, *sig, q->sign_ctx) < 0)
			return cd_err_set(err, -EIO, "cannot sign the grant");
		g->signature = *sig;
	}
	if (p &&
	    !cd_row_verify(p, cd_temp_shared(s), g->by, m, g->signature, NULL, 0, why, sizeof why))
		return cd_err_set(err, -CD_E_DENIED,
		                  "refused: the gate would not take this grant: %s (sign with the "
		                  "key the policy pins: --key FILE, made by 'cordon approvals "
		                  "keygen')",
		                  why);
	return 0;
}

/* Store g and its record: the row is committed only once the record is
 * durable, so a grant never exists without its record. */
static int store(struct cd_state *s, struct cd_audit *audit, const struct cd_policy *p,
                 const struct cd_temp_req *q, struct cd_temp_grant *g, const char *kind,
                 const char *reason, struct cd_err *err)
{
	CD_AUTOFREE char *sig = NULL;
	int r;

	if ((r = sign(s, p, q, g, &sig, err)) < 0 || (r = cd_state_begin(s, err)) < 0) {
		g->signature = NULL;
		return r;
	}
	if ((r = cd_temp_add(s, g, err)) < 0 ||
	    (r = cd_temp_record(audit, kind, g, g->by, reason, err)) < 0 ||
	    (r = cd_state_commit(s, err)) < 0) {
		cd_state_rollback(s);
		g->signature = NULL;
		return r < 0 ? r : -EIO;
	}
	g->signature = NULL;
	return 0;
}

/* "refused: " before the checker's message. */
static int refused(int code, struct cd_err *err)
{
	char msg[sizeof err->msg];

	snprintf(msg, sizeof msg, "%s", err->msg);
	return cd_err_set(err, code, "refused: %s", msg);
}

static int make_break_glass(struct cd_state *s, struct cd_audit *audit, struct cd_policy *p,
                            const struct cd_temp_req *q, struct cd_temp_grant *g,
                            struct cd_err *err)
{
	CD_AUTOFREE char *yaml = NULL;
	char just[512];
	int64_t cap = cd_policy_break_glass_max_ttl(p);
	int r;

	if (!q->ticket || !*q->ticket)
		return cd_err_set(err, -EINVAL, "a break-glass grant names a ticket");
	if (q->ttl_s > cap)
		return cd_err_set(
		        err, -CD_E_DENIED,
		        "the time to live of %lld s is longer than the break-glass cap of "
		        "%lld s%s",
		        (long long)q->ttl_s, (long long)cap,
		        p ? " (the policy's break_glass max_ttl)" : "");
	g->ticket = q->ticket;
	snprintf(just, sizeof just, "break-glass, ticket %s%s%s", q->ticket,
	         q->reason && *q->reason ? ": " : "", q->reason ? q->reason : "");
	if ((r = grant_yaml(q, g, q->approval && !strcmp(q->approval, "human") ? "human" : NULL,
	                    NULL, just, &yaml, err)) < 0)
		return r;
	g->grant_json = yaml;
	/* Checked now against the policy when there is one; at every use in
	 * any case. */
	if (p && cd_policy_add_temp(p, g->kind, g->id, NULL, yaml, g->created, err) < 0)
		r = refused(-CD_E_DENIED, err);
	else
		r = store(s, audit, p, q, g, "grant.break-glass", just, err);
	g->grant_json = NULL;
	return r;
}

static int make_delegated(struct cd_state *s, struct cd_audit *audit, struct cd_policy *p,
                          const struct cd_temp_req *q, struct cd_temp_grant *g, struct cd_err *err)
{
	CD_AUTOFREE char *probe = NULL, *yaml = NULL;
	const char *approval = NULL, *profile = NULL;
	char just[512];
	int r;

	if (!p)
		return cd_err_set(err, -EINVAL, "a delegation is checked against a policy");
	g->parent = q->agent;
	snprintf(just, sizeof just, "delegated by %s%s%s", q->agent,
	         q->reason && *q->reason ? ": " : "", q->reason ? q->reason : "");
	/* First the bare grant, to learn what the parent's covering grants
	 * require; then the grant the child really gets, carrying it. */
	if ((r = grant_yaml(q, g, "human", NULL, just, &probe, err)) < 0)
		return r;
	r = cd_policy_delegation_check(p, q->agent, g->id, probe, g->created, g->expires, &approval,
	                               &profile, err);
	if (r < 0)
		return refused(r == -CD_E_PARSE ? -CD_E_DENIED : r, err);
	if ((r = grant_yaml(q, g, approval, profile, just, &yaml, err)) < 0)
		return r == -EINVAL ? -EIO : r;
	g->grant_json = yaml;
	r = store(s, audit, p, q, g, "grant.delegated", just, err);
	g->grant_json = NULL;
	return r;
}

int cd_temp_make(struct cd_state *s, struct cd_audit *audit, struct cd_policy *p,
                 const struct cd_temp_req *q, int64_t now, struct cd_temp_grant *g,
                 struct cd_err *err)
{
	int bg = q->kind == CD_TEMP_BREAK_GLASS;
	int r;

	memset(g, 0, sizeof *g);
	if ((r = cd_temp_req_check(q, err)) < 0)
		return r;
	if (!q->agent || !*q->agent || !q->tool || !*q->tool || !q->actions || !*q->actions ||
	    !q->by || !*q->by || (!bg && (!q->to || !*q->to)))
		return cd_err_set(
		        err, -EINVAL, "%s",
		        bg ? "a break-glass grant names an agent, a tool and actions"
		           : "a delegation names a parent, a sub-agent, a tool and actions");
	if (q->ttl_s <= 0)
		return cd_err_set(err, -EINVAL, "a time to live is required (e.g. 30m)");
	g->kind = q->kind;
	cd_state_random_id(bg ? "bg-" : "dg-", g->id, sizeof g->id);
	g->agent = bg ? q->agent : q->to;
	g->task = q->task;
	g->tool = q->tool;
	g->by = q->by;
	g->created = now;
	g->expires = now + q->ttl_s;
	g->policy_sha256 = p ? cd_policy_sha256(p) : NULL;
	return bg ? make_break_glass(s, audit, p, q, g, err)
	          : make_delegated(s, audit, p, q, g, err);
}
