/* proposal-store.c — proposals in the state database (proposal.h): the
 * store keeps them (store.h, store-sqlite-proposals.c). */
#include "proposal-int.h"

#include "store/state.h"

#include <stdlib.h>

int cd_proposal_save(struct cd_state *s, const struct cd_proposal *p, struct cd_err *err)
{
	struct cd_store *st = cd_state_store(s);

	return st->ops->proposal_save(st, p, err);
}

/* What the store cannot judge in a row it read back: a path of the wrong
 * shape refuses the whole proposal; the flag is recomputed, not trusted
 * (a hand-edited row cannot unflag a hook); the files go in the order
 * proposal.c sorts them. */
int cd_proposal_load(struct cd_state *s, const char *id, struct cd_proposal **ret,
                     struct cd_err *err)
{
	struct cd_store *st = cd_state_store(s);
	struct cd_proposal *p = NULL;
	size_t i;
	int r;

	if ((r = st->ops->proposal_load(st, id, &p, err)) < 0)
		return r;
	for (i = 0; i < p->nfiles; i++) {
		struct cd_prop_file *f = &p->files[i];

		if (!cd_prop_path_ok(f->path, f->path_len)) {
			cd_proposal_free(p);
			return cd_err_set(err, -CD_E_CORRUPT, "proposal '%s': damaged file row",
			                  id);
		}
		f->flagged = f->flagged || cd_prop_flagged(f->path, f->path_len);
	}
	cd_prop_sort(p);
	*ret = p;
	return 0;
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
