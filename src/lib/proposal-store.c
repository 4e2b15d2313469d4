/* proposal-store.c — proposals in the state database (proposal.h): the
 * store keeps them (store.h, store-sqlite-proposals.c). */
#include "proposal-int.h"

#include "state.h"

#include <stdlib.h>

int cd_proposal_save(struct cd_state *s, const struct cd_proposal *p, struct cd_err *err)
{
	struct cd_store *st = cd_state_store(s);

	return st->ops->proposal_save(st, p, err);
}

int cd_proposal_load(struct cd_state *s, const char *id, struct cd_proposal **ret,
                     struct cd_err *err)
{
	struct cd_store *st = cd_state_store(s);

	return st->ops->proposal_load(st, id, ret, err);
}

int cd_proposal_list(struct cd_state *s, struct cd_proposal **ret, size_t *ret_n,
                     struct cd_err *err)
{
	struct cd_store *st = cd_state_store(s);

	return st->ops->proposal_list(st, ret, ret_n, err);
}

int cd_proposal_finish(struct cd_state *s, const struct cd_proposal *p, const char *status,
                       const char *by, int64_t now, struct cd_err *err)
{
	struct cd_store *st = cd_state_store(s);

	return st->ops->proposal_finish(st, p, status, by, now, err);
}
