/* proposal-store.c — proposals in the state database (proposal.h): the
 * store keeps them (store.h, store-sqlite-proposals.c). */
#include "proposal-int.h"

#include "store/state.h"

#include <errno.h>

#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void mac_str(crypto_auth_hmacsha256_state *h, const char *name, const char *v, size_t n)
{
	char head[80];
	int k = v ? snprintf(head, sizeof head, "%s %zu:", name, n)
	          : snprintf(head, sizeof head, "%s -:", name);

	crypto_auth_hmacsha256_update(h, (const unsigned char *)head, (unsigned long long)k);
	if (v && n)
		crypto_auth_hmacsha256_update(h, (const unsigned char *)v, n);
}

static void mac_num(crypto_auth_hmacsha256_state *h, const char *name, long long v)
{
	char num[24];
	int k = snprintf(num, sizeof num, "%lld", v);

	mac_str(h, name, num, (size_t)k);
}

/* What apply acts on, files in path order (cd_prop_sort). */
static void proposal_mac(const unsigned char *key, const struct cd_proposal *p, char out[65])
{
	crypto_auth_hmacsha256_state h;
	unsigned char m[crypto_auth_hmacsha256_BYTES];
	size_t i;

	crypto_auth_hmacsha256_init(&h, key, CD_PROPOSAL_KEY_LEN);
	crypto_auth_hmacsha256_update(&h, (const unsigned char *)"cordon proposal v1\n", 19);
	mac_str(&h, "id", p->id, strlen(p->id));
	mac_str(&h, "run_id", p->run_id, strlen(p->run_id));
	mac_str(&h, "agent", p->agent, p->agent ? strlen(p->agent) : 0);
	mac_str(&h, "task", p->task, p->task ? strlen(p->task) : 0);
	mac_str(&h, "tree", p->tree, p->tree ? strlen(p->tree) : 0);
	mac_str(&h, "upper", p->upper, p->upper ? strlen(p->upper) : 0);
	mac_num(&h, "created", (long long)p->created);
	mac_num(&h, "files", (long long)p->nfiles);
	for (i = 0; i < p->nfiles; i++) {
		const struct cd_prop_file *f = &p->files[i];

		mac_str(&h, "path", f->path, f->path_len);
		mac_num(&h, "op", (long long)f->op);
		mac_str(&h, "base", f->base_sha256, strlen(f->base_sha256));
		mac_str(&h, "new", f->new_sha256, strlen(f->new_sha256));
		mac_num(&h, "base_mode", (long long)f->base_mode);
		mac_num(&h, "new_mode", (long long)f->new_mode);
	}
	crypto_auth_hmacsha256_final(&h, m);
	sodium_bin2hex(out, 65, m, sizeof m);
}

int cd_proposal_save(struct cd_state *s, const unsigned char *key, const struct cd_proposal *p,
                     struct cd_err *err)
{
	struct cd_store *st = cd_state_store(s);
	struct cd_proposal q = *p;

	if (!key || sodium_init() < 0)
		return cd_err_set(err, -EINVAL, "no host key to bind the proposal with");
	cd_prop_sort(&q); /* the order load gives */
	proposal_mac(key, &q, q.mac);
	return st->ops->proposal_save(st, &q, err);
}

/* What the store cannot judge in a row it read back: a path of the wrong
 * shape refuses the whole proposal; the flag is recomputed, not trusted
 * (a hand-edited row cannot unflag a hook); the files go in the order
 * proposal.c sorts them. */
int cd_proposal_load(struct cd_state *s, const unsigned char *key, const char *id,
                     struct cd_proposal **ret, struct cd_err *err)
{
	struct cd_store *st = cd_state_store(s);
	struct cd_proposal *p = NULL;
	char want[65];
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
	if (!key || sodium_init() < 0) {
		cd_proposal_free(p);
		return cd_err_set(err, -CD_E_CORRUPT, "proposal '%s': no host key to check it with",
		                  id);
	}
	proposal_mac(key, p, want);
	if (strlen(p->mac) != 64 || sodium_memcmp(p->mac, want, 64) != 0) {
		cd_proposal_free(p);
		return cd_err_set(err, -CD_E_CORRUPT,
		                  "proposal '%s' was not stored as this host made it (its MAC "
		                  "does not verify: the row was changed, or another host or an "
		                  "older cordon made it): refused",
		                  id);
	}
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
