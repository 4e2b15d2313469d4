/* state.c — see state.h.  The handle over the store's connection; what
 * the database holds is the backend's (store-sqlite-state.c). */
#include "state.h"

#include <errno.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>

struct cd_state {
	struct cd_store *store;
};

int cd_state_open(const char *path, struct cd_state **ret, struct cd_err *err)
{
	struct cd_state *s;
	int r;

	if (!path || !*path)
		return cd_err_set(err, -EINVAL, "no state database path");
	s = calloc(1, sizeof *s);
	if (!s)
		return cd_err_set(err, -ENOMEM, "state database: out of memory");
	if ((r = cd_store_state_open(path, &s->store, err)) < 0) {
		free(s);
		return r;
	}
	*ret = s;
	return 0;
}

void cd_state_close(struct cd_state *s)
{
	if (!s)
		return;
	s->store->ops->close(s->store);
	free(s);
}

struct cd_store *cd_state_store(struct cd_state *s)
{
	return s->store;
}

int cd_state_begin(struct cd_state *s, struct cd_err *err)
{
	return s->store->ops->begin(s->store, err);
}

int cd_state_commit(struct cd_state *s, struct cd_err *err)
{
	return s->store->ops->commit(s->store, err);
}

void cd_state_rollback(struct cd_state *s)
{
	s->store->ops->rollback(s->store);
}

int cd_state_wait(struct cd_state *s, unsigned timeout_ms)
{
	return s->store->ops->wait_change(s->store, timeout_ms);
}

void cd_state_random_id(const char *prefix, char *out, size_t outlen)
{
	unsigned char b[8];
	char hex[2 * sizeof b + 1];

	randombytes_buf(b, sizeof b);
	sodium_bin2hex(hex, sizeof hex, b, sizeof b);
	snprintf(out, outlen, "%s%s", prefix, hex);
}
