/* client-sse.c — a text/event-stream parser (the WHATWG HTML "server-sent
 * events" rules), for the event streams of MCP's Streamable HTTP.
 *
 * Trust boundary: the bytes come from a remote server and are hostile.
 * They are read as (pointer, length) views; the line being read and the
 * event's data are capped buffers, and a stream past a cap is failed for
 * good (the caller drops the connection) rather than truncated into a
 * different message. */
#include "client.h"

#include "util/bounds.h"

#include <errno.h>
#include <string.h>

void cd_sse_init(struct cd_sse *s, size_t line_max, size_t event_max)
{
	memset(s, 0, sizeof *s);
	cd_buf_init(&s->line, line_max ? line_max : 1);
	cd_buf_init(&s->data, event_max ? event_max : 1);
	s->retry_ms = -1;
}

void cd_sse_release(struct cd_sse *s)
{
	if (!s)
		return;
	cd_buf_release(&s->line);
	cd_buf_release(&s->data);
}

static int dispatch(struct cd_sse *s, cd_sse_event_fn fn, void *ctx)
{
	struct cd_sse_event ev;
	int r = 0;

	if (s->id_set) {
		memcpy(s->id, s->pending_id, sizeof s->id);
		s->id_set = 0;
	}
	if (s->has_data) {
		/* The data lines were each followed by LF: the last one goes. */
		if (s->data.len && s->data.data[s->data.len - 1] == '\n')
			s->data.data[--s->data.len] = '\0';
		ev.type = s->type[0] ? s->type : "message";
		ev.data = s->data.data ? s->data.data : "";
		ev.data_len = s->data.len;
		ev.id = s->id;
		ev.retry_ms = s->retry_ms;
		if (ev.data_len)
			r = fn(ctx, &ev);
	}
	cd_buf_reset(&s->data);
	s->type[0] = '\0';
	s->has_data = 0;
	return r;
}

static int field(struct cd_sse *s, const char *name, size_t nl, const char *v, size_t vl)
{
	if (nl == 5 && !memcmp(name, "event", 5)) {
		/* A type no consumer knows is kept as one, never truncated
		 * into a known one. */
		if (vl >= sizeof s->type)
			memcpy(s->type, "(long)", 7);
		else {
			memcpy(s->type, v, vl);
			s->type[vl] = '\0';
			if (memchr(v, '\0', vl))
				memcpy(s->type, "(nul)", 6);
		}
	} else if (nl == 4 && !memcmp(name, "data", 4)) {
		if (cd_buf_append(&s->data, v, vl) < 0 || cd_buf_putc(&s->data, '\n') < 0)
			return -CD_E_LIMIT;
		s->has_data = 1;
	} else if (nl == 2 && !memcmp(name, "id", 2)) {
		if (memchr(v, '\0', vl))
			return 0;
		if (vl > CD_SSE_ID_MAX)
			return -CD_E_LIMIT;
		memcpy(s->pending_id, v, vl);
		s->pending_id[vl] = '\0';
		s->id_set = 1;
	} else if (nl == 5 && !memcmp(name, "retry", 5)) {
		int64_t ms = 0;
		size_t i;

		if (!vl)
			return 0;
		for (i = 0; i < vl; i++) {
			if (v[i] < '0' || v[i] > '9')
				return 0;
			if (ms < CD_SSE_RETRY_MAX_MS)
				ms = ms * 10 + (v[i] - '0');
		}
		s->retry_ms = ms > CD_SSE_RETRY_MAX_MS ? CD_SSE_RETRY_MAX_MS : ms;
	}
	return 0;
}

static int line_end(struct cd_sse *s, cd_sse_event_fn fn, void *ctx)
{
	const char *l = s->line.data ? s->line.data : "";
	size_t n = s->line.len;
	const char *colon;
	int r;

	if (n == 0)
		return dispatch(s, fn, ctx);
	if (l[0] == ':') {
		r = 0; /* a comment */
	} else if ((colon = memchr(l, ':', n))) {
		size_t nl = (size_t)(colon - l), off = nl + 1;
		if (off < n && l[off] == ' ')
			off++;
		r = field(s, l, nl, l + off, n - off);
	} else {
		r = field(s, l, n, "", 0);
	}
	cd_buf_reset(&s->line);
	return r;
}

int cd_sse_feed(struct cd_sse *s, const char *p, size_t n, cd_sse_event_fn fn, void *ctx)
{
	size_t i = 0;
	int r;

	if (s->failed)
		return -CD_E_LIMIT;
	if (!s->started && n) {
		/* A UTF-8 byte order mark opens the stream at most once; it may
		 * come split, so wait for three bytes or a mismatch. */
		static const char bom[3] = { '\xef', '\xbb', '\xbf' };
		size_t have = s->line.len, k;

		for (k = 0; have + k < 3 && k < n; k++)
			if (p[k] != bom[have + k])
				break;
		if (have + k < 3 && k < n) {
			s->started = 1; /* no BOM: the held bytes are the line's */
		} else if (have + k == 3) {
			cd_buf_reset(&s->line);
			s->started = 1;
			i = k;
		} else {
			if (cd_buf_append(&s->line, p, n) < 0)
				goto fail;
			return 0;
		}
	}
	while (i < n) {
		size_t j = i;

		if (s->after_cr && p[i] == '\n') {
			s->after_cr = 0;
			i++;
			continue;
		}
		s->after_cr = 0;
		while (j < n && p[j] != '\n' && p[j] != '\r')
			j++;
		if (j > i && cd_buf_append(&s->line, p + i, j - i) < 0)
			goto fail;
		if (j == n)
			break;
		s->after_cr = p[j] == '\r';
		i = j + 1;
		r = line_end(s, fn, ctx);
		if (r == -CD_E_LIMIT)
			goto fail;
		if (r < 0)
			return r;
	}
	return 0;
fail:
	s->failed = 1;
	cd_buf_reset(&s->line);
	cd_buf_reset(&s->data);
	return -CD_E_LIMIT;
}
