/* row-sign.h — approvers' signatures over shared-store rows other than
 * decisions: temporary grants (temp-grant.h) and approved MCP tool
 * definitions (mcp-pins.h).
 *
 * Every writer of a shared (PostgreSQL) store can write these rows, so a
 * row's `by` proves nothing; a signature by the key the policy pins for
 * `by` (approvers.keys) or by a console key (approvers.consoles) does.
 * The rule is the one decisions follow (approval-sign.h): an approver with
 * a pinned key must have signed; an unsigned row is taken only from a
 * local SQLite state database (the user's own 0600 file: whoever can write
 * it is already that user), never through a shared store.
 *
 * The signed message is a SHA-512 over a tag naming the kind of row and
 * length-prefixed fields, so a signature cannot be moved to another kind
 * of row, another row or another field.  Signing needs the secret key,
 * which only the gate's front ends hold (cd_approver_sign_digest). */
#ifndef CD_ROW_SIGN_H
#define CD_ROW_SIGN_H

#include "policy.h"

#include <stddef.h>

#define CD_ROW_DIGEST_LEN 64
#define CD_ROW_SIG_MAX    100 /* "ed25519:" and the base64 of 64 bytes */

struct cd_row_field {
	const char *name, *value; /* value NULL: an absent column */
};

/* The digest of the row: tag, then each field. */
void cd_row_digest(const char *tag, const struct cd_row_field *f, size_t n,
                   unsigned char out[CD_ROW_DIGEST_LEN]);

/* Signs a digest (the key is the caller's): 0, or negative. */
typedef int (*cd_row_sign_fn)(const unsigned char m[CD_ROW_DIGEST_LEN], char sig[CD_ROW_SIG_MAX],
                              void *ctx);

/* Is sig (NULL or "": unsigned) what `by` (or a console key) signed over m,
 * under policy p?  shared: the row came through a shared store.  1 with
 * the signer in signer ("alice's key", "console key 1", "unsigned"), or 0
 * with the reason in why. */
int cd_row_verify(const struct cd_policy *p, int shared, const char *by,
                  const unsigned char m[CD_ROW_DIGEST_LEN], const char *sig, char *signer,
                  size_t sn, char *why, size_t wn);

#endif
