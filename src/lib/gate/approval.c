/* approval.c — the approval queue (approval.h): what a request must be
 * and what a decision or a use checks; the store keeps the rows (store.h,
 * store-sqlite-approvals.c). */
#include "approval.h"

#include <errno.h>
#include <sodium.h>
#include <string.h>

void cd_approval_hash(const char *tool, const char *action, const char *args_json, char out[65])
{
	crypto_hash_sha256_state st;
	unsigned char h[crypto_hash_sha256_BYTES];

	crypto_hash_sha256_init(&st);
	crypto_hash_sha256_update(&st, (const unsigned char *)tool, strlen(tool) + 1);
	crypto_hash_sha256_update(&st, (const unsigned char *)action, strlen(action) + 1);
	crypto_hash_sha256_update(&st, (const unsigned char *)args_json, strlen(args_json));
	crypto_hash_sha256_final(&st, h);
	sodium_bin2hex(out, 65, h, sizeof h);
}

int cd_approval_request(struct cd_state *s, struct cd_approval *a, struct cd_err *err)
{
	struct cd_store *st = cd_state_store(s);
	int r;

	if (!a->agent || !a->tool || !a->action || !a->args_json || !a->approval)
		return cd_err_set(err, -EINVAL, "approval request: missing fields");
	if (a->deadline <= a->created)
		return cd_err_set(err, -EINVAL, "approval request: deadline before creation");
	cd_state_random_id("ap-", a->id, sizeof a->id);
	cd_approval_hash(a->tool, a->action, a->args_json, a->args_sha256);
	if ((r = st->ops->approval_add(st, a, err)) < 0)
		return r;
	a->status = "pending";
	return 0;
}

int cd_approval_get(struct cd_state *s, const char *id, cd_approval_fn fn, void *ctx,
                    struct cd_err *err)
{
	struct cd_store *st = cd_state_store(s);

	return st->ops->approval_get(st, id, fn, ctx, err);
}

int cd_approval_list(struct cd_state *s, const char *status, int64_t since, cd_approval_fn fn,
                     void *ctx, struct cd_err *err)
{
	struct cd_store *st = cd_state_store(s);

	return st->ops->approval_list(st, status, since, fn, ctx, err);
}

/* What a change checks, with the row read inside the store's transaction:
 * its status and deadline, for a use the hash, then the caller's fn. */
struct change {
	const char *id;
	const char *from;
	int64_t now;
	const char *args_sha256; /* consume: must match */
	cd_approval_fn fn;
	void *ctx;
	struct cd_err *err;
};

static int check_row(const struct cd_approval *a, void *ctx)
{
	const struct change *c = ctx;
	struct cd_err *err = c->err;
	char check[65];
	int r;

	if (strcmp(a->status, c->from) != 0)
		return cd_err_set(err, c->args_sha256 ? -EPERM : -ESTALE,
		                  "approval request '%s' is %s, not %s", c->id, a->status, c->from);
	if (c->now >= a->deadline)
		return cd_err_set(err, c->args_sha256 ? -EPERM : -ESTALE,
		                  "approval request '%s' is past its deadline", c->id);
	if (c->args_sha256) {
		/* The row must describe exactly the call being made: its stored
		 * hash, recomputed from its stored parts, equals ours. */
		cd_approval_hash(a->tool, a->action, a->args_json, check);
		if (strcmp(check, a->args_sha256) != 0 ||
		    strcmp(a->args_sha256, c->args_sha256) != 0)
			return cd_err_set(
			        err, -EPERM,
			        "approval '%s' was given for other arguments than this call's",
			        c->id);
	}
	if (c->fn && (r = c->fn(a, c->ctx)) != 0)
		return r < 0 ? r : -EPERM;
	return 0;
}

int cd_approval_decide(struct cd_state *s, const char *id, int approve, const char *by,
                       const char *comment, const char *signature, int64_t now, cd_approval_fn fn,
                       void *ctx, struct cd_err *err)
{
	struct cd_store *st = cd_state_store(s);
	struct change c = { id, "pending", now, NULL, fn, ctx, err };
	struct cd_store_approval_move m = { id,        "pending", approve ? "approved" : "denied",
		                            now,       by,        comment,
		                            signature, check_row, &c };

	if (!id || !by || !*by)
		return cd_err_set(err, -EINVAL, "an approval names its request and its approver");
	return st->ops->approval_move(st, &m, err);
}

int cd_approval_consume(struct cd_state *s, const char *id, const char *args_sha256, int64_t now,
                        cd_approval_fn fn, void *ctx, struct cd_err *err)
{
	struct cd_store *st = cd_state_store(s);
	struct change c = { id, "approved", now, args_sha256, fn, ctx, err };
	struct cd_store_approval_move m = { id,   "approved", "used",    now, NULL,
		                            NULL, NULL,       check_row, &c };

	if (!id || !args_sha256)
		return cd_err_set(err, -EINVAL, "no approval to use");
	return st->ops->approval_move(st, &m, err);
}

int cd_approval_withdraw(struct cd_state *s, const char *id, const char *by, const char *why,
                         int64_t now, cd_approval_fn fn, void *ctx, struct cd_err *err)
{
	static const char *const from[] = { "pending", "approved" };
	struct cd_store *st = cd_state_store(s);
	size_t i;
	int r = -ESTALE;

	if (!id || !by || !*by)
		return cd_err_set(err, -EINVAL,
		                  "a withdrawal names its request and who withdraws it");
	/* The update names the status it read: an approval given meanwhile
	 * is withdrawn on the second try, one used meanwhile is not. */
	for (i = 0; i < sizeof from / sizeof from[0] && r == -ESTALE; i++) {
		struct change c = { id, from[i], now, NULL, fn, ctx, err };
		struct cd_store_approval_move m = { id,  from[i], "withdrawn", now, by,
			                            why, NULL,    check_row,   &c };
		r = st->ops->approval_move(st, &m, err);
	}
	return r;
}

int cd_approval_expire(struct cd_state *s, int64_t now, cd_approval_fn fn, void *ctx, size_t *ret_n,
                       struct cd_err *err)
{
	struct cd_store *st = cd_state_store(s);

	return st->ops->approval_expire(st, now, fn, ctx, ret_n, err);
}

int cd_approval_sample(struct cd_state *s, size_t n, int64_t since, const char *by, int64_t now,
                       cd_approval_fn fn, void *ctx, size_t *ret_n, struct cd_err *err)
{
	struct cd_store *st = cd_state_store(s);

	return st->ops->approval_sample(st, n, since, by, now, fn, ctx, ret_n, err);
}
