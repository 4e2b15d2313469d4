/* approval-sign.c — see approval-sign.h. */
#include "approval-sign.h"

#include "util/fs.h"
#include "util/util.h"

#include <errno.h>
#include <fcntl.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define SK_TAG  "cordon-approver-secret-key v1 "
#define MSG_TAG "cordon approval decision v1\n"

struct cd_approver_key {
	unsigned char sk[crypto_sign_SECRETKEYBYTES];
	unsigned char pk[crypto_sign_PUBLICKEYBYTES];
};

static int sodium_ok(struct cd_err *err)
{
	return sodium_init() < 0 ? cd_err_set(err, -ENOSYS, "libsodium failed to initialise") : 0;
}

static void b64(const char *prefix, const unsigned char *v, size_t n, char *out, size_t outlen)
{
	size_t pl = strlen(prefix);

	memcpy(out, prefix, pl + 1);
	sodium_bin2base64(out + pl, outlen - pl, v, n, sodium_base64_VARIANT_ORIGINAL);
}

int cd_approver_keygen(const char *path, char pub[CD_APPROVER_PUB_MAX], struct cd_err *err)
{
	unsigned char pk[crypto_sign_PUBLICKEYBYTES], sk[crypto_sign_SECRETKEYBYTES];
	char line[sizeof SK_TAG + 2 * crypto_sign_SEEDBYTES + 2];
	int fd, r, n;

	if ((r = sodium_ok(err)) < 0 || (r = cd_mkdir_parents(path, err)) < 0)
		return r;
	crypto_sign_keypair(pk, sk);
	memcpy(line, SK_TAG, sizeof SK_TAG - 1);
	sodium_bin2hex(line + sizeof SK_TAG - 1, 2 * crypto_sign_SEEDBYTES + 1, sk,
	               crypto_sign_SEEDBYTES);
	n = (int)strlen(line);
	line[n++] = '\n';
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0) {
		r = cd_err_sys(err, -errno, "cannot create '%s'", path);
	} else {
		r = fchmod(fd, 0600) < 0 ? -errno : cd_write_all(fd, line, (size_t)n);
		if (r == 0 && fsync(fd) < 0)
			r = -errno;
		if (close(fd) < 0 && r == 0)
			r = -errno;
		if (r < 0) {
			unlink(path);
			r = cd_err_sys(err, r, "cannot write '%s'", path);
		}
	}
	if (r == 0)
		b64("ed25519:", pk, sizeof pk, pub, CD_APPROVER_PUB_MAX);
	sodium_memzero(sk, sizeof sk);
	sodium_memzero(line, sizeof line);
	return r;
}

int cd_approver_key_load(const char *path, struct cd_approver_key **ret, struct cd_err *err)
{
	unsigned char seed[crypto_sign_SEEDBYTES];
	char buf[160];
	struct stat st;
	ssize_t n = -1;
	size_t len, got = 0;
	int r, fd;

	if ((r = sodium_ok(err)) < 0)
		return r;
	if ((fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY)) < 0)
		return cd_err_sys(err, -errno, "cannot open approver key '%s'", path);
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode))
		r = cd_err_set(err, -CD_E_PARSE, "approver key '%s' is not a regular file", path);
	else if (st.st_mode & 077)
		r = cd_err_set(err, -CD_E_DENIED,
		               "approver key '%s' is accessible by group or others (mode %03o): "
		               "chmod 600 it",
		               path, (unsigned)(st.st_mode & 0777));
	else if (st.st_uid != geteuid())
		r = cd_err_set(err, -CD_E_DENIED, "approver key '%s' is not owned by uid %u", path,
		               (unsigned)geteuid());
	else if ((n = read(fd, buf, sizeof buf)) < 0)
		r = cd_err_sys(err, -errno, "cannot read approver key '%s'", path);
	close(fd);
	len = n > 0 ? (size_t)n : 0;
	if (len && buf[len - 1] == '\n')
		len--;
	if (r == 0 && (len != sizeof SK_TAG - 1 + 2 * sizeof seed ||
	               memcmp(buf, SK_TAG, sizeof SK_TAG - 1) != 0 ||
	               sodium_hex2bin(seed, sizeof seed, buf + sizeof SK_TAG - 1, 2 * sizeof seed,
	                              NULL, &got, NULL) != 0 ||
	               got != sizeof seed))
		r = cd_err_set(err, -CD_E_PARSE,
		               "approver key '%s' is malformed (cordon approvals keygen makes one)",
		               path);
	sodium_memzero(buf, sizeof buf);
	if (r == 0 && !(*ret = calloc(1, sizeof **ret)))
		r = cd_err_set(err, -ENOMEM, "out of memory");
	if (r == 0)
		crypto_sign_seed_keypair((*ret)->pk, (*ret)->sk, seed);
	sodium_memzero(seed, sizeof seed);
	return r;
}

void cd_approver_key_free(struct cd_approver_key *k)
{
	if (k)
		cd_free_secret(k, sizeof *k);
}

void cd_approver_key_public(const struct cd_approver_key *k, char pub[CD_APPROVER_PUB_MAX])
{
	b64("ed25519:", k->pk, sizeof k->pk, pub, CD_APPROVER_PUB_MAX);
}

void cd_approver_key_pk(const struct cd_approver_key *k, unsigned char pk[32])
{
	memcpy(pk, k->pk, 32);
}

/* One field of the message: its length, ':', its bytes, '\n' (any byte
 * may appear in a field; the length keeps them apart). */
static void field(crypto_hash_sha512_state *h, const char *name, const char *v)
{
	char head[64];
	size_t n = v ? strlen(v) : 0;
	int k = snprintf(head, sizeof head, "%s %zu:", name, n);

	crypto_hash_sha512_update(h, (const unsigned char *)head, (unsigned long long)k);
	if (n)
		crypto_hash_sha512_update(h, (const unsigned char *)v, n);
	crypto_hash_sha512_update(h, (const unsigned char *)"\n", 1);
}

/* The digest signed: the request's identity and call, the decision, who
 * and when. */
static void message(const struct cd_approval *a, int approve, const char *by, int64_t decided_at,
                    unsigned char out[crypto_hash_sha512_BYTES])
{
	crypto_hash_sha512_state h;
	char num[2][24];

	snprintf(num[0], sizeof num[0], "%lld", (long long)a->created);
	snprintf(num[1], sizeof num[1], "%lld", (long long)decided_at);
	crypto_hash_sha512_init(&h);
	crypto_hash_sha512_update(&h, (const unsigned char *)MSG_TAG, sizeof MSG_TAG - 1);
	field(&h, "id", a->id);
	field(&h, "run_id", a->run_id);
	field(&h, "agent", a->agent);
	field(&h, "tool", a->tool);
	field(&h, "action", a->action);
	field(&h, "args_sha256", a->args_sha256);
	field(&h, "created", num[0]);
	field(&h, "decision", approve ? "approved" : "denied");
	field(&h, "by", by);
	field(&h, "decided_at", num[1]);
	crypto_hash_sha512_final(&h, out);
}

int cd_approval_sign(const struct cd_approver_key *k, const struct cd_approval *a, int approve,
                     const char *by, int64_t decided_at, char sig[CD_APPROVAL_SIG_MAX])
{
	unsigned char m[crypto_hash_sha512_BYTES], s[crypto_sign_BYTES];

	if (!k || !a || !by || sodium_init() < 0)
		return -EINVAL;
	message(a, approve, by, decided_at, m);
	crypto_sign_detached(s, NULL, m, sizeof m, k->sk);
	b64("ed25519:", s, sizeof s, sig, CD_APPROVAL_SIG_MAX);
	return 0;
}

int cd_approval_verify(const struct cd_policy *p, int shared, const struct cd_approval *a,
                       char *signer, size_t sn, char *why, size_t wn)
{
	unsigned char m[crypto_hash_sha512_BYTES], s[crypto_sign_BYTES], pk[32];
	const char *by = a ? a->decided_by : NULL, *end = NULL;
	int has_key, approve;
	size_t i, n = 0;

	if (!p || !a || !by || !a->status || sodium_init() < 0)
		return cd_msg(why, wn, "no decision to check");
	approve = !strcmp(a->status, "approved") || !strcmp(a->status, "used");
	has_key = cd_policy_approver_key(p, by, pk);
	if (!a->signature || !*a->signature) {
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
	if (strncmp(a->signature, "ed25519:", 8) != 0 ||
	    sodium_base642bin(s, sizeof s, a->signature + 8, strlen(a->signature + 8), NULL, &n,
	                      &end, sodium_base64_VARIANT_ORIGINAL) != 0 ||
	    n != sizeof s || !end || *end)
		return cd_msg(why, wn, "its signature is malformed");
	if (a->decided_at > a->deadline || a->decided_at < a->created)
		return cd_msg(why, wn, "it says it was decided outside the request's lifetime");
	message(a, approve, by, a->decided_at, m);
	if (has_key && crypto_sign_verify_detached(s, m, sizeof m, pk) == 0)
		return cd_msg(signer, sn, "%.64s's key", by) + 1;
	for (i = 0; cd_policy_console_key(p, i, pk); i++)
		if (crypto_sign_verify_detached(s, m, sizeof m, pk) == 0)
			return cd_msg(signer, sn, "console key %zu", i + 1) + 1;
	if (has_key)
		return cd_msg(why, wn, "its signature does not verify with %.64s's key", by);
	return cd_msg(why, wn, "its signature verifies with no key of the policy");
}

int cd_approver_row_sign(const unsigned char m[64], char sig[CD_APPROVAL_SIG_MAX], void *ctx)
{
	const struct cd_approver_key *k = ctx;
	unsigned char s[crypto_sign_BYTES];

	if (!k || sodium_init() < 0)
		return -EINVAL;
	crypto_sign_detached(s, NULL, m, 64, k->sk);
	b64("ed25519:", s, sizeof s, sig, CD_APPROVAL_SIG_MAX);
	return 0;
}
