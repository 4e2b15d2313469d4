/* jsonrpc.c — newline-delimited JSON-RPC 2.0 frames (jsonrpc.h).
 *
 * Trust boundary: the bytes are hostile; the reader never buffers more
 * than its cap and the parser checks UTF-8 and nesting in one linear pass
 * before jansson sees the text (jansson's own depth limit is 2048, too
 * deep for a gateway that serializes what it forwards). */
#include "jsonrpc.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void cd_jsonrpc_reader_init(struct cd_jsonrpc_reader *r, size_t cap)
{
	cd_buf_init(&r->line, cap ? cap : CD_JSONRPC_LINE_MAX);
	r->discarding = 0;
	r->cap = cap ? cap : CD_JSONRPC_LINE_MAX;
}

void cd_jsonrpc_reader_release(struct cd_jsonrpc_reader *r)
{
	cd_buf_release(&r->line);
	r->discarding = 0;
}

int cd_jsonrpc_reader_pending(const struct cd_jsonrpc_reader *r)
{
	return r->line.len > 0 || r->discarding;
}

static int emit(const char *p, size_t n, cd_jsonrpc_line_fn fn, void *ctx)
{
	if (n && p[n - 1] == '\r')
		n--;
	if (n == 0)
		return 0;
	return fn(ctx, p, n, 0);
}

int cd_jsonrpc_feed(struct cd_jsonrpc_reader *r, const char *p, size_t n, cd_jsonrpc_line_fn fn,
                    void *ctx)
{
	while (n > 0) {
		const char *nl = memchr(p, '\n', n);
		size_t take = nl ? (size_t)(nl - p) : n;
		int rc = 0;

		if (r->discarding) {
			if (nl)
				r->discarding = 0;
		} else if (r->line.len == 0 && nl && take <= r->cap) {
			/* The common case: a whole line in the input, no copy. */
			rc = emit(p, take, fn, ctx);
		} else if (r->line.len + take > r->cap) {
			cd_buf_reset(&r->line);
			r->discarding = nl == NULL;
			rc = fn(ctx, NULL, 0, -CD_E_LIMIT);
		} else {
			if (cd_buf_append(&r->line, p, take) < 0)
				return -ENOMEM;
			if (nl) {
				rc = emit(r->line.data, r->line.len, fn, ctx);
				cd_buf_reset(&r->line);
			}
		}
		if (rc < 0)
			return rc;
		if (!nl)
			break;
		p = nl + 1;
		n -= take + 1;
	}
	return 0;
}

int cd_jsonrpc_precheck(const char *p, size_t n, unsigned max_depth, struct cd_err *err)
{
	const unsigned char *s = (const unsigned char *)p;
	unsigned depth = 0;
	int in_str = 0, top_array = -1;
	size_t i = 0, values = 0, top_elems = 0;

	while (i < n) {
		unsigned char c = s[i];

		if (c == 0)
			return cd_err_set(err, -CD_E_PARSE, "NUL byte at offset %zu", i);
		if (c >= 0x80) {
			size_t k = cd_utf8_seq(s + i, n - i);
			if (k == 0)
				return cd_err_set(err, -CD_E_PARSE, "invalid UTF-8 at offset %zu",
				                  i);
			i += k;
			continue;
		}
		if (in_str) {
			if (c == '\\')
				i++; /* the escaped byte is ASCII or caught by jansson */
			else if (c == '"')
				in_str = 0;
		} else if (c == '"') {
			in_str = 1;
		} else if (c == '[' || c == '{') {
			if (top_array < 0)
				top_array = c == '[';
			if (++depth > max_depth)
				return cd_err_set(err, -CD_E_PARSE,
				                  "nesting deeper than %u at offset %zu", max_depth,
				                  i);
			values++;
		} else if ((c == ']' || c == '}') && depth > 0) {
			depth--;
		} else if (c == ',') {
			/* Counted before jansson builds them: a line of 16 MiB of
			 * "{}," would otherwise cost over a GiB of memory. */
			values++;
			if (top_array == 1 && depth == 1 && ++top_elems >= CD_MCP_BATCH_MAX)
				return cd_err_set(err, -CD_E_LIMIT,
				                  "a batch holds at most %d messages",
				                  CD_MCP_BATCH_MAX);
		} else if (top_array < 0 && c > ' ') {
			top_array = 0;
		}
		if (values > CD_JSONRPC_VALUES_MAX)
			return cd_err_set(err, -CD_E_LIMIT, "more than %d values in one message",
			                  CD_JSONRPC_VALUES_MAX);
		i++;
	}
	return 0;
}

int cd_jsonrpc_idkey(const json_t *id, char out[CD_JSONRPC_IDKEY_MAX])
{
	int n;

	if (json_is_integer(id)) {
		n = snprintf(out, CD_JSONRPC_IDKEY_MAX, "i:%" JSON_INTEGER_FORMAT,
		             json_integer_value(id));
		return n > 0 && n < CD_JSONRPC_IDKEY_MAX ? 0 : -CD_E_PARSE;
	}
	if (json_is_string(id)) {
		size_t len = json_string_length(id);
		if (len > CD_JSONRPC_ID_MAX || memchr(json_string_value(id), '\0', len))
			return -CD_E_PARSE;
		out[0] = 's';
		out[1] = ':';
		memcpy(out + 2, json_string_value(id), len);
		out[len + 2] = '\0';
		return 0;
	}
	return -CD_E_PARSE;
}

static int invalid(struct cd_jsonrpc_msg *m, int code, struct cd_err *err, const char *why)
{
	m->kind = CD_JSONRPC_INVALID;
	m->code = code;
	return cd_err_set(err, -CD_E_PARSE, "%s", why);
}

static int classify(struct cd_jsonrpc_msg *m, struct cd_err *err)
{
	json_t *o = m->root, *v, *id;
	const char *key;
	int has_method, has_result, has_error;

	if (json_is_array(o)) {
		m->batch = 1;
		return invalid(m, CD_JSONRPC_INVALID_REQUEST, err,
		               "batch arrays are not supported: send one message per line");
	}
	if (!json_is_object(o))
		return invalid(m, CD_JSONRPC_INVALID_REQUEST, err, "a message must be an object");
	v = json_object_get(o, "jsonrpc");
	if (!json_is_string(v) || strcmp(json_string_value(v), "2.0") != 0)
		return invalid(m, CD_JSONRPC_INVALID_REQUEST, err, "\"jsonrpc\" must be \"2.0\"");
	json_object_foreach(o, key, v)
	{
		if (strcmp(key, "jsonrpc") && strcmp(key, "id") && strcmp(key, "method") &&
		    strcmp(key, "params") && strcmp(key, "result") && strcmp(key, "error"))
			return invalid(m, CD_JSONRPC_INVALID_REQUEST, err,
			               "unknown member in a JSON-RPC message");
	}
	id = json_object_get(o, "id");
	if (id) {
		if (cd_jsonrpc_idkey(id, m->idkey) < 0)
			return invalid(m, CD_JSONRPC_INVALID_REQUEST, err,
			               "\"id\" must be a string (at most 256 bytes) or an integer");
		m->id = id;
	}
	has_method = json_object_get(o, "method") != NULL;
	has_result = json_object_get(o, "result") != NULL;
	has_error = json_object_get(o, "error") != NULL;
	if (has_method) {
		v = json_object_get(o, "method");
		if (has_result || has_error)
			return invalid(m, CD_JSONRPC_INVALID_REQUEST, err,
			               "a message is a request or a response, not both");
		if (!json_is_string(v) || json_string_length(v) == 0 ||
		    json_string_length(v) > 256 ||
		    memchr(json_string_value(v), '\0', json_string_length(v)))
			return invalid(m, CD_JSONRPC_INVALID_REQUEST, err,
			               "\"method\" must be a non-empty string");
		m->method = json_string_value(v);
		m->params = json_object_get(o, "params");
		if (m->params && !json_is_object(m->params) && !json_is_array(m->params))
			return invalid(m, CD_JSONRPC_INVALID_REQUEST, err,
			               "\"params\" must be an object or an array");
		m->kind = id ? CD_JSONRPC_REQUEST : CD_JSONRPC_NOTIFICATION;
		return 0;
	}
	if (json_object_get(o, "params"))
		return invalid(m, CD_JSONRPC_INVALID_REQUEST, err, "\"params\" without \"method\"");
	if (!id)
		return invalid(m, CD_JSONRPC_INVALID_REQUEST, err,
		               "a response needs an id (null ids are refused)");
	if (has_result == has_error)
		return invalid(m, CD_JSONRPC_INVALID_REQUEST, err,
		               "a response has exactly one of \"result\" and \"error\"");
	if (has_result) {
		m->result = json_object_get(o, "result");
		m->kind = CD_JSONRPC_RESULT;
		return 0;
	}
	v = json_object_get(o, "error");
	if (!json_is_object(v) || !json_is_integer(json_object_get(v, "code")) ||
	    !json_is_string(json_object_get(v, "message")))
		return invalid(m, CD_JSONRPC_INVALID_REQUEST, err,
		               "\"error\" must hold an integer code and a string message");
	m->error = v;
	m->kind = CD_JSONRPC_ERROR;
	return 0;
}

int cd_jsonrpc_parse(const char *line, size_t len, struct cd_jsonrpc_msg *ret, struct cd_err *err)
{
	json_error_t je;
	int r;

	memset(ret, 0, sizeof *ret);
	if (len > CD_JSONRPC_LINE_MAX)
		return invalid(ret, CD_JSONRPC_INVALID_REQUEST, err, "message too long");
	r = cd_jsonrpc_precheck(line, len, CD_JSONRPC_DEPTH_MAX, err);
	if (r < 0) {
		ret->kind = CD_JSONRPC_INVALID;
		/* Too big to be a request (too many batch elements or
		 * values): well-formed perhaps, but refused as a request. */
		ret->code = r == -CD_E_LIMIT ? CD_JSONRPC_INVALID_REQUEST : CD_JSONRPC_PARSE_ERROR;
		return r;
	}
	ret->root = json_loadb(line, len, JSON_REJECT_DUPLICATES, &je);
	if (!ret->root) {
		ret->kind = CD_JSONRPC_INVALID;
		ret->code = CD_JSONRPC_PARSE_ERROR;
		return cd_err_set(err, -CD_E_PARSE, "not JSON: %s at offset %d", je.text,
		                  je.position);
	}
	return classify(ret, err);
}

int cd_jsonrpc_classify(json_t *v, struct cd_jsonrpc_msg *ret, struct cd_err *err)
{
	memset(ret, 0, sizeof *ret);
	ret->root = json_incref(v);
	if (json_is_array(v))
		return invalid(ret, CD_JSONRPC_INVALID_REQUEST, err,
		               "an element of a batch must be one message, not an array");
	return classify(ret, err);
}

void cd_jsonrpc_msg_release(struct cd_jsonrpc_msg *m)
{
	if (!m)
		return;
	json_decref(m->root);
	memset(m, 0, sizeof *m);
}

char *cd_jsonrpc_dump_line(const json_t *msg, size_t *ret_len)
{
	char *s = json_dumps(msg, JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(17));
	size_t n;
	char *t;

	if (!s)
		return NULL;
	n = strlen(s);
	t = realloc(s, n + 2);
	if (!t) {
		free(s);
		return NULL;
	}
	t[n] = '\n';
	t[n + 1] = '\0';
	*ret_len = n + 1;
	return t;
}

/* A message for a peer: invalid UTF-8 and control bytes become '?'. */
static json_t *safe_string(const char *s)
{
	size_t n = strlen(s), i = 0, k;
	char *t = malloc(n + 1);
	json_t *j;

	if (!t)
		return NULL;
	while (i < n) {
		unsigned char c = (unsigned char)s[i];
		k = c < 0x80 ? 1 : cd_utf8_seq((const unsigned char *)s + i, n - i);
		if (k == 0 || c < 0x20 || c == 0x7f) {
			t[i] = '?';
			i++;
			continue;
		}
		memcpy(t + i, s + i, k);
		i += k;
	}
	t[n] = '\0';
	j = json_string(t);
	free(t);
	return j;
}

char *cd_jsonrpc_error_line(const json_t *id, int code, const char *message, size_t *ret_len)
{
	json_t *o = json_object(), *e = json_object();
	char *s = NULL;

	if (!o || !e)
		goto out;
	if (json_object_set_new(o, "jsonrpc", json_string("2.0")) < 0 ||
	    json_object_set_new(o, "id", id ? json_deep_copy(id) : json_null()) < 0 ||
	    json_object_set_new(e, "code", json_integer(code)) < 0 ||
	    json_object_set_new(e, "message", safe_string(message ? message : "")) < 0 ||
	    json_object_set(o, "error", e) < 0)
		goto out;
	s = cd_jsonrpc_dump_line(o, ret_len);
out:
	json_decref(e);
	json_decref(o);
	return s;
}

char *cd_jsonrpc_result_line(const json_t *id, json_t *result, size_t *ret_len)
{
	json_t *o = json_object();
	char *s = NULL;

	if (o && json_object_set_new(o, "jsonrpc", json_string("2.0")) == 0 &&
	    json_object_set_new(o, "id", json_deep_copy(id)) == 0 &&
	    json_object_set(o, "result", result) == 0)
		s = cd_jsonrpc_dump_line(o, ret_len);
	json_decref(o);
	return s;
}
