/* approval-sign.h — approvers' Ed25519 keys and signed decisions.
 *
 * A decision on a held call is stored in the state database, which every
 * writer of it can change (with a shared PostgreSQL store: every host).
 * The name a decision carries proves nothing; a signature by the key the
 * policy pins for that name (approvers.keys) does.  The signed message
 * binds the request (its id, run, agent, tool and the SHA-256 of the call),
 * the decision, the approver's name and the time it was made, so a
 * signature cannot be moved to another request, another call, another
 * person or the other answer.
 *
 * The waiting run checks it against its own policy (cd_approval_verify):
 * an approver with a key must have signed; a decision by someone without
 * a key is taken only from a local (SQLite) state database, never through
 * a shared store.  A console key (approvers.consoles) signs for any
 * approver the console authenticated: the console host is then trusted
 * to have done that.
 *
 * Trust boundary: the secret key file is the approver's (0600, their
 * uid), under their config directory, which no sandbox sees; the row and
 * its signature come from the shared store and are untrusted. */
#ifndef CD_APPROVAL_SIGN_H
#define CD_APPROVAL_SIGN_H

#include "policy/policy.h"
#include "store/store-rows.h"
#include "util/err.h"

#include <stddef.h>
#include <stdint.h>

/* "ed25519:" and the base64 of 32 bytes (a key) or 64 (a signature). */
#define CD_APPROVER_PUB_MAX 64
#define CD_APPROVAL_SIG_MAX 100

struct cd_approver_key;

/* A new key: the secret seed written to `path` (created 0600, never over
 * an existing file; missing parents 0700), the public key into pub. */
int cd_approver_keygen(const char *path, char pub[CD_APPROVER_PUB_MAX], struct cd_err *err);

/* Load a secret key (a regular file of this uid, mode 0600 or stricter). */
int cd_approver_key_load(const char *path, struct cd_approver_key **ret, struct cd_err *err);
void cd_approver_key_free(struct cd_approver_key *k);
void cd_approver_key_public(const struct cd_approver_key *k, char pub[CD_APPROVER_PUB_MAX]);
void cd_approver_key_pk(const struct cd_approver_key *k, unsigned char pk[32]);

/* Sign the decision on request a (approve 1 / deny 0) by `by` at
 * decided_at: sig = "ed25519:BASE64".  0 or -EINVAL. */
int cd_approval_sign(const struct cd_approver_key *k, const struct cd_approval *a, int approve,
                     const char *by, int64_t decided_at, char sig[CD_APPROVAL_SIG_MAX]);

/* Is the decision stored in row a (approved or denied, by a->decided_by
 * at a->decided_at, a->signature) what its approver signed, under policy
 * p?  `shared`: the row came from a store other hosts write (an unsigned
 * decision is then refused even for an approver without a key).  1 with
 * who signed in signer ("alice's key", "console key 1", "unsigned"), or 0
 * with the reason in why. */
int cd_approval_verify(const struct cd_policy *p, int shared, const struct cd_approval *a,
                       char *signer, size_t sn, char *why, size_t wn);

/* Sign the digest of a shared-store row (policy/row-sign.h) with k, which
 * is ctx: a cd_row_sign_fn.  0 or -EINVAL. */
int cd_approver_row_sign(const unsigned char m[64], char sig[CD_APPROVAL_SIG_MAX], void *ctx);

#endif
