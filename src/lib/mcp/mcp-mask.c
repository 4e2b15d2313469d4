/* mcp-mask.c — data minimization of MCP tool results: field scoping and
 * masking of everything the agent reads back from a tool.
 *
 * Trust boundary: the result comes from the tool server and is hostile;
 * it may hide data anywhere a string can go.  Every string is masked, not
 * only the fields MCP defines; what cannot be scanned (binary content) is
 * removed; any failure is returned so the gateway withholds the result. */
#include "mcp.h"

#include <errno.h>
#include <string.h>

#define BINARY_NOTICE "[binary content withheld by cordon: the grant masks this tool's results]"

void cd_mcp_minimize_from(struct cd_mcp_minimize *mz, const struct cd_decision *d)
{
	size_t i;

	memset(mz, 0, sizeof *mz);
	mz->mask = d->mask;
	for (i = 0; i < d->nfield_lists && i < CD_DECISION_MAX_FIELD_LISTS; i++) {
		mz->field_lists[i] = d->field_lists[i];
		mz->field_counts[i] = d->field_counts[i];
	}
	mz->nfield_lists = i;
}

int cd_mcp_minimize_active(const struct cd_mcp_minimize *mz)
{
	return mz && (mz->nfield_lists || cd_mask_rules_active(&mz->mask));
}

/* Scope the JSON held in a text string; the string is replaced by the
 * scoped JSON. */
static int scope_text(const struct cd_mcp_minimize *mz, json_t *str, const char **why)
{
	json_t *doc;
	char *out;
	int r;

	doc = json_loadb(json_string_value(str), json_string_length(str), 0, NULL);
	if (!doc) {
		*why = "the grant scopes fields, and a text result is not JSON";
		return -CD_E_DENIED;
	}
	r = cd_mask_fields(doc, mz->field_lists, mz->field_counts, mz->nfield_lists);
	if (r < 0) {
		json_decref(doc);
		*why = "the grant scopes fields, and the result is not a JSON object or array";
		return r;
	}
	out = json_dumps(doc, JSON_COMPACT | JSON_ENCODE_ANY);
	json_decref(doc);
	if (!out) {
		*why = "out of memory";
		return -ENOMEM;
	}
	r = json_string_set(str, out);
	free(out);
	if (r < 0) {
		*why = "out of memory";
		return -ENOMEM;
	}
	return 0;
}

static int is_type(json_t *block, const char *t)
{
	const char *v = json_string_value(json_object_get(block, "type"));

	return v && !strcmp(v, t);
}

/* One content block: replaced by a notice when binary, scoped when text
 * and fields apply. */
static int block(const struct cd_mcp_minimize *mz, json_t *content, size_t i, const char **why)
{
	json_t *b = json_array_get(content, i), *res, *text;

	if (!json_is_object(b)) {
		*why = "a content block is not an object";
		return -CD_E_PARSE;
	}
	res = json_object_get(b, "resource");
	if (is_type(b, "image") || is_type(b, "audio") ||
	    (is_type(b, "resource") && json_object_get(res, "blob"))) {
		json_t *notice = json_pack("{s:s,s:s}", "type", "text", "text", BINARY_NOTICE);
		if (!notice || json_array_set_new(content, i, notice) < 0) {
			*why = "out of memory";
			return -ENOMEM;
		}
		return 0;
	}
	if (!mz->nfield_lists)
		return 0;
	text = is_type(b, "text")       ? json_object_get(b, "text")
	       : is_type(b, "resource") ? json_object_get(res, "text")
	                                : NULL;
	if (json_is_string(text))
		return scope_text(mz, text, why);
	return 0;
}

int cd_mcp_minimize(struct cd_masker *m, const struct cd_mcp_minimize *mz, json_t *v, int error,
                    size_t *ret_count, const char **ret_why)
{
	const char *why = "masking failed";
	json_t *content, *sc;
	size_t i;
	int r;

	*ret_why = why;
	if (!cd_mcp_minimize_active(mz))
		return 0;
	if (!json_is_object(v)) {
		*ret_why = error ? "the server's error is not an object"
		                 : "the result is not an object";
		return -CD_E_PARSE;
	}
	if (cd_mask_rules_active(&mz->mask) && !m) {
		*ret_why = "the grant masks results and no masker is available";
		return -EINVAL;
	}
	if (!error) {
		content = json_object_get(v, "content");
		if (content && !json_is_array(content)) {
			*ret_why = "content is not a list";
			return -CD_E_PARSE;
		}
		for (i = 0; i < json_array_size(content); i++)
			if ((r = block(mz, content, i, &why)) < 0) {
				*ret_why = why;
				return r;
			}
		sc = json_object_get(v, "structuredContent");
		if (sc && mz->nfield_lists &&
		    (r = cd_mask_fields(sc, mz->field_lists, mz->field_counts, mz->nfield_lists)) <
		            0) {
			*ret_why =
			        "the grant scopes fields, and structuredContent is not an object";
			return r;
		}
	}
	if (cd_mask_rules_active(&mz->mask) && (r = cd_mask_json(m, &mz->mask, v, ret_count)) < 0) {
		*ret_why = r == -ENOMEM ? "out of memory while masking" : "masking failed";
		return r;
	}
	return 0;
}
