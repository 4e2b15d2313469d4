/* row-sign.c — see row-sign.h. */
#include "row-sign.h"

#include <sodium.h>
#include <stdio.h>
#include <string.h>

void cd_row_digest(const char *tag, const struct cd_row_field *f, size_t n,
                   unsigned char out[CD_ROW_DIGEST_LEN])
{
	crypto_hash_sha512_state h;
	char head[96];
	size_t i, len;
	int k;

	crypto_hash_sha512_init(&h);
	crypto_hash_sha512_update(&h, (const unsigned char *)tag, strlen(tag));
	crypto_hash_sha512_update(&h, (const unsigned char *)"\n", 1);
	for (i = 0; i < n; i++) {
		/* An absent column and an empty one differ: '-' against a length. */
		len = f[i].value ? strlen(f[i].value) : 0;
		k = f[i].value ? snprintf(head, sizeof head, "%.64s %zu:", f[i].name, len)
		               : snprintf(head, sizeof head, "%.64s -:", f[i].name);
		crypto_hash_sha512_update(&h, (const unsigned char *)head, (unsigned long long)k);
		if (len)
			crypto_hash_sha512_update(&h, (const unsigned char *)f[i].value, len);
		crypto_hash_sha512_update(&h, (const unsigned char *)"\n", 1);
	}
	crypto_hash_sha512_final(&h, out);
}

int cd_row_verify(const struct cd_policy *p, int shared, const char *by,
                  const unsigned char m[CD_ROW_DIGEST_LEN], const char *sig, char *signer,
                  size_t sn, char *why, size_t wn)
{
	unsigned char s[crypto_sign_BYTES], pk[32];
	const char *end = NULL;
	size_t i, n = 0;
	int has_key;

	if (!p || !by || sodium_init() < 0)
		return cd_msg(why, wn, "nothing to check it against");
	has_key = cd_policy_approver_key(p, by, pk);
	if (!sig || !*sig) {
		if (has_key)
			return cd_msg(why, wn, "unsigned, but the policy pins a key for '%.64s'",
			              by);
		if (shared)
			return cd_msg(
			        why, wn,
			        "unsigned, and it came through a shared store: the policy pins no "
			        "key for '%.64s' (approvers.keys)",
			        by);
		return cd_msg(signer, sn, "unsigned") + 1;
	}
	if (strncmp(sig, "ed25519:", 8) != 0 ||
	    sodium_base642bin(s, sizeof s, sig + 8, strlen(sig + 8), NULL, &n, &end,
	                      sodium_base64_VARIANT_ORIGINAL) != 0 ||
	    n != sizeof s || !end || *end)
		return cd_msg(why, wn, "its signature is malformed");
	if (has_key && crypto_sign_verify_detached(s, m, CD_ROW_DIGEST_LEN, pk) == 0)
		return cd_msg(signer, sn, "%.64s's key", by) + 1;
	for (i = 0; cd_policy_console_key(p, i, pk); i++)
		if (crypto_sign_verify_detached(s, m, CD_ROW_DIGEST_LEN, pk) == 0)
			return cd_msg(signer, sn, "console key %zu", i + 1) + 1;
	if (has_key)
		return cd_msg(why, wn, "its signature does not verify with %.64s's key", by);
	return cd_msg(why, wn, "its signature verifies with no key of the policy");
}
