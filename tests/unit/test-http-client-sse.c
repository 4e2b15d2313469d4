/* test-http-client-sse.c — the event-stream parser (client-sse.c): the
 * WHATWG rules for lines, fields, ids and retry, every split of the same
 * bytes giving the same events, and the caps failing the stream for good. */
#include "../tap.h"

#include "http/client.h"

#include <stdlib.h>
#include <string.h>

struct got {
	char text[4096];
	size_t n;
};

static int collect(void *ctx, const struct cd_sse_event *ev)
{
	struct got *g = ctx;
	int k = snprintf(g->text + strlen(g->text), sizeof g->text - strlen(g->text),
	                 "[%s|%s|%s|%lld]", ev->type, ev->data, ev->id, (long long)ev->retry_ms);
	g->n++;
	return k > 0 ? 0 : -1;
}

/* Feed `in` whole, then split at every point, then byte by byte: the same
 * events each time. */
static void check(const char *name, const char *in, const char *want)
{
	struct cd_sse s;
	struct got whole = { "", 0 };
	size_t len = strlen(in), cut, i;
	int same = 1;

	cd_sse_init(&s, 1024, 1024);
	ok(cd_sse_feed(&s, in, len, collect, &whole) == 0, "%s: parses", name);
	cd_sse_release(&s);
	is_str(whole.text, want, "%s: events", name);
	for (cut = 0; cut <= len; cut++) {
		struct got g = { "", 0 };
		cd_sse_init(&s, 1024, 1024);
		cd_sse_feed(&s, in, cut, collect, &g);
		cd_sse_feed(&s, in + cut, len - cut, collect, &g);
		cd_sse_release(&s);
		same &= !strcmp(g.text, whole.text);
	}
	{
		struct got g = { "", 0 };
		cd_sse_init(&s, 1024, 1024);
		for (i = 0; i < len; i++)
			cd_sse_feed(&s, in + i, 1, collect, &g);
		cd_sse_release(&s);
		same &= !strcmp(g.text, whole.text);
	}
	ok(same, "%s: the same events at every split", name);
}

static int stop(void *ctx, const struct cd_sse_event *ev)
{
	(void)ctx;
	(void)ev;
	return -42;
}

int main(void)
{
	struct cd_sse s;
	struct got g = { "", 0 };
	char big[3000];

	check("one event", "event: message\ndata: {\"a\":1}\n\n", "[message|{\"a\":1}||-1]");
	check("default type, id", "id: 7\ndata: x\n\n", "[message|x|7|-1]");
	check("CRLF and CR", "data: a\r\ndata: b\rdata:c\r\n\r\n", "[message|a\nb\nc||-1]");
	check("comment and unknown field", ": hi\nfoo: bar\ndata\n\ndata: y\n\n",
	      "[message|y||-1]");
	check("no data: not dispatched, the id stays", "id: 5\n\nevent: x\n\ndata: z\n\n",
	      "[message|z|5|-1]");
	check("retry digits only", "retry: 1500\ndata: a\n\nretry: 9x\ndata: b\n\n",
	      "[message|a||1500][message|b||1500]");
	check("retry capped", "retry: 99999999999999999999\ndata: a\n\n", "[message|a||30000]");
	check("BOM skipped once",
	      "\xef\xbb\xbf"
	      "data: a\n\n",
	      "[message|a||-1]");
	check("no space after colon kept", "data:  two\n\n", "[message| two||-1]");
	check("an unfinished event is not dispatched", "data: a\n\ndata: b\n", "[message|a||-1]");
	check("event type", "event: endpoint\ndata: /m?s=1\n\n", "[endpoint|/m?s=1||-1]");
	check("empty id resets", "id: 3\ndata: a\n\nid\ndata: b\n\n",
	      "[message|a|3|-1][message|b||-1]");

	/* Caps: a line or an event past them fails the stream, for good. */
	memset(big, 'x', sizeof big);
	memcpy(big, "data: ", 6);
	cd_sse_init(&s, 1024, 1024);
	is_int(cd_sse_feed(&s, big, sizeof big, collect, &g), -CD_E_LIMIT, "a line past its cap");
	is_int(cd_sse_feed(&s, "data: a\n\n", 9, collect, &g), -CD_E_LIMIT,
	       "... and the stream stays failed");
	is_int(g.n, 0, "... with nothing dispatched");
	cd_sse_release(&s);
	cd_sse_init(&s, 1024, 1024);
	memset(&g, 0, sizeof g);
	{
		int r = 0;
		for (int i = 0; i < 40 && r == 0; i++)
			r = cd_sse_feed(&s, "data: 0123456789012345678901234567890123456789\n", 47,
			                collect, &g);
		is_int(r, -CD_E_LIMIT, "an event's data past its cap (in many lines)");
	}
	is_int(g.n, 0, "... nothing dispatched");
	cd_sse_release(&s);
	cd_sse_init(&s, 1024, 1024);
	memset(big, 'i', 300);
	memcpy(big, "id: ", 4);
	big[300] = '\n';
	is_int(cd_sse_feed(&s, big, 301, collect, &g), -CD_E_LIMIT, "an id past CD_SSE_ID_MAX");
	cd_sse_release(&s);
	cd_sse_init(&s, 1024, 1024);
	is_int(cd_sse_feed(&s, "data: a\n\n", 9, stop, NULL), -42, "the callback's code stops it");
	cd_sse_release(&s);
	printf("1..%d\n", tap_n);
	return tap_failed ? 1 : 0;
}
