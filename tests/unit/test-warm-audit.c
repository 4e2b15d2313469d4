/* test-warm-audit.c — a log whose appends another process makes
 * (cd_audit_open_remote, the warm path's client side): records are
 * checked before they leave, the hook sees exactly what was appended,
 * and everything but appending is refused. */
#include "../tap.h"

#include "audit/audit.h"
#include "util/err.h"

#include <errno.h>
#include <string.h>

struct hook {
	int calls, closed, lazy, fail;
	size_t n;
	char kind[64];
};

static int hook_append(void *ctx, const struct cd_record *r, size_t n, int lazy, uint64_t *ret_last,
                       struct cd_err *err)
{
	struct hook *h = ctx;

	h->calls++;
	h->n = n;
	h->lazy = lazy;
	snprintf(h->kind, sizeof h->kind, "%s", r[n - 1].kind);
	if (h->fail)
		return cd_err_set(err, -EIO, "the service failed");
	if (ret_last)
		*ret_last = 41 + n;
	return 0;
}

static void hook_close(void *ctx)
{
	((struct hook *)ctx)->closed++;
}

int main(void)
{
	static const char id[] = "0123456789abcdef0123456789abcdef";
	struct hook h;
	struct cd_audit_remote rm = { hook_append, hook_close, &h };
	struct cd_audit *a = NULL;
	struct cd_record r[2];
	struct cd_err err;
	uint64_t seq = 0, size = 0;

	tap_start(30);
	memset(&h, 0, sizeof h);
	ok(cd_audit_open_remote("/x/audit.db", "0123", &rm, &a, &err) < 0 && !a,
	   "a short log id is refused");
	ok(cd_audit_open_remote("/x/audit.db", "0123456789abcdef0123456789abcdeZ", &rm, &a, &err) <
	                   0 &&
	           !a,
	   "a log id that is not hex is refused");
	ok(cd_audit_open_remote("/x/audit.db", id, NULL, &a, &err) < 0, "no hooks: refused");
	is_int(cd_audit_open_remote("/x/audit.db", id, &rm, &a, &err), 0, "a remote log opens");
	is_int(cd_audit_is_remote(a), 1, "and says it is remote");
	is_str(cd_audit_log_id(a), id, "with the service's log id");

	memset(r, 0, sizeof r);
	r[0].kind = "decision";
	r[1].kind = "run.intent";
	is_int(cd_audit_append(a, &r[0], &seq, &err), 0, "an append goes to the hook");
	ok(h.calls == 1 && h.n == 1 && !h.lazy && seq == 42, "once, one record, durable, its seq");
	is_int(cd_audit_append_many(a, r, 2, &seq, &err), 0, "two in one");
	ok(h.calls == 2 && h.n == 2 && seq == 43 && strcmp(h.kind, "run.intent") == 0,
	   "reach the hook together (seq of the last)");
	is_int(cd_audit_append_lazy(a, &r[0], &err), 0, "a lazy append");
	ok(h.calls == 3 && h.lazy == 1, "reaches the hook as lazy");

	/* Checked before they leave: the hook never sees a bad record. */
	r[0].kind = "checkpoint";
	ok(cd_audit_append(a, &r[0], NULL, &err) < 0 && h.calls == 3,
	   "a reserved kind is refused here, not sent");
	r[0].kind = "decision";
	r[0].argv_sha256 = "not-hex";
	ok(cd_audit_append(a, &r[0], NULL, &err) < 0 && h.calls == 3,
	   "a malformed hash is refused here, not sent");
	r[0].argv_sha256 = NULL;

	h.fail = 1;
	ok(cd_audit_append(a, &r[0], NULL, &err) == -EIO && strstr(err.msg, "service"),
	   "the hook's failure is the append's");
	h.fail = 0;

	/* Appends only. */
	is_int(cd_audit_size(a, &size, &err), -ENOTSUP, "size: not here");
	is_int(cd_audit_sync(a, &err), -ENOTSUP, "sync: not here");
	is_int(cd_audit_wait(a, 1), -ENOTSUP, "wait: not here");
	is_int(cd_audit_checkpoint(a, NULL, &err), -ENOKEY, "checkpoint: no key here");
	is_int(cd_audit_presize_wal(a, &err), 0, "presize: nothing to do");

	cd_audit_close(a);
	is_int(h.closed, 1, "close reaches the hook once");

	/* No log id yet: the service opens the log with the first append. */
	a = NULL;
	is_int(cd_audit_open_remote("/x/audit.db", NULL, &rm, &a, &err), 0,
	       "a remote log opens without a log id");
	is_str(cd_audit_log_id(a), "", "whose id is empty");
	r[0].kind = "run.intent";
	ok(cd_audit_append(a, &r[0], &seq, &err) == 0 && h.calls == 5 && seq == 42,
	   "and appends through the hook");
	cd_audit_close(a);
	is_int(h.closed, 2, "then closes");
	return tap_done();
}
