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

/* What apply acts on and what the approver is shown, files in path order
 * (cd_prop_sort): v2 adds each file's diff, flag (as the row holds it:
 * row 1, else the scan's), note and applied bit, and the status and
 * decider, so a writer of a shared store can neither show the approver
 * another diff, unflag a hook, hide a file from apply (applied = 1) nor
 * reopen a decided proposal.  status and by: what the row holds (or will). */
static void proposal_mac(const unsigned char *key, const struct cd_proposal *p, int row,
                         const char *status, const char *by, char out[65])
{
	crypto_auth_hmacsha256_state h;
	unsigned char m[crypto_auth_hmacsha256_BYTES];
	size_t i;

	crypto_auth_hmacsha256_init(&h, key, CD_PROPOSAL_KEY_LEN);
	crypto_auth_hmacsha256_update(&h, (const unsigned char *)"cordon proposal v2\n", 19);
	mac_str(&h, "id", p->id, strlen(p->id));
	mac_str(&h, "run_id", p->run_id, strlen(p->run_id));
	mac_str(&h, "agent", p->agent, p->agent ? strlen(p->agent) : 0);
	mac_str(&h, "task", p->task, p->task ? strlen(p->task) : 0);
	mac_str(&h, "tree", p->tree, p->tree ? strlen(p->tree) : 0);
	mac_str(&h, "upper", p->upper, p->upper ? strlen(p->upper) : 0);
	mac_num(&h, "created", (long long)p->created);
	mac_str(&h, "status", status, strlen(status));
	mac_str(&h, "by", by, by ? strlen(by) : 0);
	mac_num(&h, "files", (long long)p->nfiles);
	for (i = 0; i < p->nfiles; i++) {
		const struct cd_prop_file *f = &p->files[i];

		mac_str(&h, "path", f->path, f->path_len);
		mac_num(&h, "op", (long long)f->op);
		mac_str(&h, "base", f->base_sha256, strlen(f->base_sha256));
		mac_str(&h, "new", f->new_sha256, strlen(f->new_sha256));
		mac_num(&h, "base_mode", (long long)f->base_mode);
		mac_num(&h, "new_mode", (long long)f->new_mode);
		mac_num(&h, "flagged", (long long)!!(row ? f->flagged_row : f->flagged));
		mac_num(&h, "applied", (long long)!!f->applied);
		mac_str(&h, "note", f->note, f->note ? strlen(f->note) : 0);
		mac_str(&h, "diff", f->diff, f->diff ? f->diff_len : 0);
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
	proposal_mac(key, &q, 0, q.status, q.decided_by, q.mac);
	return st->ops->proposal_save(st, &q, err);
}

/* What the store cannot judge in a row it read back: a path of the wrong
 * shape refuses the whole proposal; the MAC covers the flag as stored and
 * the path rule is applied again on top (flag if either says so); the
 * files go in the order proposal.c sorts them. */
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
		f->flagged_row = f->flagged;
		f->flagged = f->flagged || cd_prop_flagged(f->path, f->path_len);
	}
	cd_prop_sort(p);
	if (!key || sodium_init() < 0) {
		cd_proposal_free(p);
		return cd_err_set(err, -CD_E_CORRUPT, "proposal '%s': no host key to check it with",
		                  id);
	}
	proposal_mac(key, p, 1, p->status, p->decided_by, want);
	if (strlen(p->mac) != 64 || sodium_memcmp(p->mac, want, 64) != 0) {
		cd_proposal_free(p);
		return cd_err_set(err, -CD_E_CORRUPT,
		                  "proposal '%s' was not stored as this host made it (its MAC "
		                  "does not verify: the row, its diff, flag or state was changed, "
		                  "or another host or an older cordon made it): refused",
		                  id);
	}
	memcpy(p->mac_key, key, CD_PROPOSAL_KEY_LEN);
	p->have_mac_key = 1;
	*ret = p;
	return 0;
}

int cd_proposal_list(struct cd_state *s, struct cd_proposal **ret, size_t *ret_n,
                     struct cd_err *err)
{
	struct cd_store *st = cd_state_store(s);

	return st->ops->proposal_list(st, ret, ret_n, err);
}

/* The row's new MAC covers its new status, decider and applied files:
 * only a proposal loaded with its key (cd_proposal_load) can finish. */
int cd_proposal_finish(struct cd_state *s, const struct cd_proposal *p, const char *status,
                       const char *by, int64_t now, struct cd_err *err)
{
	struct cd_store *st = cd_state_store(s);
	struct cd_proposal q = *p;

	if (!p->have_mac_key)
		return cd_err_set(err, -EINVAL, "proposal %s: no host key to bind its end with",
		                  p->id);
	proposal_mac(p->mac_key, &q, 1, status, by, q.mac);
	return st->ops->proposal_finish(st, &q, status, by, now, err);
}
