/* audit-checkpoint.c — Ed25519 keys and signed checkpoints (libsodium).
 *
 * A checkpoint is one line of text,
 *   cordon-checkpoint v1 LOGID SIZE HEAD TIME KEYID SIG
 * signed over everything before " SIG", so it can be copied off the host,
 * mailed, or appended to a file and checked with only the public key.
 *
 * Trust boundary: key files and checkpoint lines are read from disk and may
 * have been written by anyone; they are parsed strictly (one spelling per
 * value).  The secret key is wiped before it is freed. */
#include "audit.h"
#include "util/err.h"
#include "util/num.h"
#include "util/util.h"

#include <errno.h>
#include <fcntl.h>
#include <sodium.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#define SK_TAG "cordon-audit-secret-key v1 "
#define PK_TAG "cordon-audit-public-key v1 "
#define CP_TAG "cordon-checkpoint v1 "

struct cd_audit_key {
	unsigned char sk[crypto_sign_SECRETKEYBYTES];
	unsigned char pk[crypto_sign_PUBLICKEYBYTES];
};

static int sodium_ready(void)
{
	return sodium_init() < 0 ? -ENOSYS : 0;
}

void cd_audit_key_id(const unsigned char pk[CD_AUDIT_PK_LEN],
                     unsigned char ret[CD_AUDIT_KEY_ID_LEN])
{
	static const char tag[] = "cordon audit key id";
	unsigned char h[crypto_hash_sha256_BYTES];
	crypto_hash_sha256_state st;

	crypto_hash_sha256_init(&st);
	crypto_hash_sha256_update(&st, (const unsigned char *)tag, sizeof tag - 1);
	crypto_hash_sha256_update(&st, pk, CD_AUDIT_PK_LEN);
	crypto_hash_sha256_final(&st, h);
	memcpy(ret, h, CD_AUDIT_KEY_ID_LEN);
}

/* Write a whole small file that must not exist yet. */
static int write_new(const char *path, mode_t mode, const char *data, size_t len,
                     struct cd_err *err)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, mode);
	int r;

	if (fd < 0)
		return cd_err_sys(err, -errno, "cannot create '%s'", path);
	r = fchmod(fd, mode) < 0 ? -errno : 0;
	if (r == 0)
		r = cd_write_all(fd, data, len);
	if (r == 0 && fsync(fd) < 0)
		r = -errno;
	if (close(fd) < 0 && r == 0)
		r = -errno;
	if (r < 0) {
		unlink(path);
		return cd_err_sys(err, r, "cannot write '%s'", path);
	}
	return 0;
}

int cd_audit_keygen(const char *sk_path, const char *pk_path, struct cd_err *err)
{
	unsigned char pk[crypto_sign_PUBLICKEYBYTES], sk[crypto_sign_SECRETKEYBYTES];
	char line[sizeof SK_TAG + 2 * crypto_sign_SEEDBYTES + 2];
	char hex[2 * crypto_sign_SEEDBYTES + 1];
	int n, r;

	if (sodium_ready() < 0)
		return cd_err_set(err, -ENOSYS, "libsodium failed to initialise");
	crypto_sign_keypair(pk, sk);
	/* The secret key file holds the seed (the first half of sk). */
	cd_audit_hex(sk, crypto_sign_SEEDBYTES, hex);
	n = snprintf(line, sizeof line, SK_TAG "%s\n", hex);
	if (n < 0 || (size_t)n >= sizeof line) {
		r = cd_err_set(err, -EOVERFLOW, "key line too long");
		goto out;
	}
	r = write_new(sk_path, 0600, line, (size_t)n, err);
	if (r < 0)
		goto out;
	cd_audit_hex(pk, sizeof pk, hex);
	n = snprintf(line, sizeof line, PK_TAG "%s\n", hex);
	if (n < 0 || (size_t)n >= sizeof line) {
		r = cd_err_set(err, -EOVERFLOW, "key line too long");
		unlink(sk_path);
		goto out;
	}
	r = write_new(pk_path, 0644, line, (size_t)n, err);
	if (r < 0)
		unlink(sk_path);
out:
	sodium_memzero(sk, sizeof sk);
	sodium_memzero(line, sizeof line);
	sodium_memzero(hex, sizeof hex);
	return r;
}

/* Read a small key file: "TAG HEX\n" -> 32 bytes.  `secret` adds the
 * ownership and mode checks. */
static int read_key_file(const char *path, const char *tag, int secret, unsigned char out[32],
                         struct cd_err *err)
{
	char buf[256];
	size_t taglen = strlen(tag), len;
	struct stat st;
	ssize_t n;
	int r = 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY);

	if (fd < 0)
		return cd_err_sys(err, -errno, "cannot open key '%s'", path);
	if (fstat(fd, &st) < 0) {
		r = cd_err_sys(err, -errno, "cannot stat key '%s'", path);
		goto out;
	}
	if (!S_ISREG(st.st_mode)) {
		r = cd_err_set(err, -CD_E_PARSE, "key '%s' is not a regular file", path);
		goto out;
	}
	if (secret && (st.st_mode & 077)) {
		r = cd_err_set(err, -CD_E_DENIED,
		               "secret key '%s' is accessible by group or others (mode %03o): "
		               "chmod 600 it",
		               path, (unsigned)(st.st_mode & 0777));
		goto out;
	}
	if (secret && st.st_uid != geteuid()) {
		r = cd_err_set(err, -CD_E_DENIED, "secret key '%s' is not owned by uid %u", path,
		               (unsigned)geteuid());
		goto out;
	}
	n = read(fd, buf, sizeof buf);
	if (n < 0) {
		r = cd_err_sys(err, -errno, "cannot read key '%s'", path);
		goto out;
	}
	len = (size_t)n;
	if (len > 0 && buf[len - 1] == '\n')
		len--;
	if (len != taglen + 64 || memcmp(buf, tag, taglen) != 0 ||
	    cd_audit_unhex(buf + taglen, 64, out, 32) < 0)
		r = cd_err_set(err, -CD_E_PARSE, "key '%s' is malformed (want '%s<64 hex>')", path,
		               tag);
out:
	sodium_memzero(buf, sizeof buf);
	close(fd);
	return r;
}

int cd_audit_key_load(const char *sk_path, struct cd_audit_key **ret, struct cd_err *err)
{
	unsigned char seed[crypto_sign_SEEDBYTES];
	struct cd_audit_key *k;
	int r;

	if (sodium_ready() < 0)
		return cd_err_set(err, -ENOSYS, "libsodium failed to initialise");
	r = read_key_file(sk_path, SK_TAG, 1, seed, err);
	if (r < 0)
		return r;
	k = calloc(1, sizeof *k);
	if (!k) {
		sodium_memzero(seed, sizeof seed);
		return cd_err_set(err, -ENOMEM, "out of memory");
	}
	crypto_sign_seed_keypair(k->pk, k->sk, seed);
	sodium_memzero(seed, sizeof seed);
	*ret = k;
	return 0;
}

void cd_audit_key_free(struct cd_audit_key *k)
{
	cd_free_secret(k, sizeof *k);
}

void cd_audit_key_public(const struct cd_audit_key *k, unsigned char ret[CD_AUDIT_PK_LEN])
{
	memcpy(ret, k->pk, CD_AUDIT_PK_LEN);
}

int cd_audit_pubkey_load(const char *pk_path, unsigned char ret[CD_AUDIT_PK_LEN],
                         struct cd_err *err)
{
	unsigned char pk[CD_AUDIT_PK_LEN];
	int r;

	if (sodium_ready() < 0)
		return cd_err_set(err, -ENOSYS, "libsodium failed to initialise");
	r = read_key_file(pk_path, PK_TAG, 0, pk, err);
	if (r < 0)
		return r;
	memcpy(ret, pk, sizeof pk);
	return 0;
}

/* The signed part: the line up to and excluding " SIG". */
static int format_body(const struct cd_audit_checkpoint *cp, char *out, size_t outlen)
{
	char head[2 * CD_AUDIT_HASH_LEN + 1], kid[2 * CD_AUDIT_KEY_ID_LEN + 1];
	int n;

	if (cp->time_ns < 0 || strlen(cp->log_id) != CD_AUDIT_LOG_ID_LEN)
		return -EINVAL;
	cd_audit_hex(cp->head, sizeof cp->head, head);
	cd_audit_hex(cp->key_id, sizeof cp->key_id, kid);
	n = snprintf(out, outlen, CP_TAG "%s %llu %s %lld %s", cp->log_id,
	             (unsigned long long)cp->size, head, (long long)cp->time_ns, kid);
	if (n < 0 || (size_t)n >= outlen)
		return -CD_E_LIMIT;
	return n;
}

int cd_audit_checkpoint_sign(const struct cd_audit_key *k, struct cd_audit_checkpoint *cp)
{
	char body[CD_AUDIT_CP_LINE_MAX];
	int n;

	cd_audit_key_id(k->pk, cp->key_id);
	n = format_body(cp, body, sizeof body);
	if (n < 0)
		return n;
	crypto_sign_detached(cp->sig, NULL, (const unsigned char *)body, (size_t)n, k->sk);
	return 0;
}

int cd_audit_checkpoint_format(const struct cd_audit_checkpoint *cp, char *out, size_t outlen)
{
	char sig[2 * CD_AUDIT_SIG_LEN + 1];
	int n = format_body(cp, out, outlen), m;

	if (n < 0)
		return n;
	cd_audit_hex(cp->sig, sizeof cp->sig, sig);
	m = snprintf(out + n, outlen - (size_t)n, " %s", sig);
	if (m < 0 || (size_t)m >= outlen - (size_t)n)
		return -CD_E_LIMIT;
	return 0;
}

/* A canonical decimal: digits, no leading zero (except "0"). */
static int parse_dec(const char *s, size_t len, uint64_t max, uint64_t *ret)
{
	if (len > 1 && s[0] == '0')
		return -CD_E_PARSE;
	return cd_parse_u64(s, len, max, ret) < 0 ? -CD_E_PARSE : 0;
}

int cd_audit_checkpoint_parse(const char *line, size_t len, struct cd_audit_checkpoint *ret)
{
	struct cd_audit_checkpoint cp;
	const char *tok[6];
	size_t toklen[6], taglen = sizeof CP_TAG - 1, off, i;
	unsigned char scratch[CD_AUDIT_LOG_ID_LEN / 2];
	uint64_t v;

	if (!line || len < taglen || len > CD_AUDIT_CP_LINE_MAX || memcmp(line, CP_TAG, taglen))
		return -CD_E_PARSE;
	off = taglen;
	for (i = 0; i < 6; i++) {
		size_t start = off;
		while (off < len && line[off] != ' ')
			off++;
		tok[i] = line + start;
		toklen[i] = off - start;
		if (toklen[i] == 0)
			return -CD_E_PARSE;
		if (i < 5) {
			if (off >= len)
				return -CD_E_PARSE;
			off++; /* exactly one space */
		}
	}
	if (off != len)
		return -CD_E_PARSE;
	memset(&cp, 0, sizeof cp);
	if (toklen[0] != CD_AUDIT_LOG_ID_LEN ||
	    cd_audit_unhex(tok[0], toklen[0], scratch, sizeof scratch) < 0)
		return -CD_E_PARSE;
	memcpy(cp.log_id, tok[0], CD_AUDIT_LOG_ID_LEN);
	cp.log_id[CD_AUDIT_LOG_ID_LEN] = '\0';
	if (parse_dec(tok[1], toklen[1], UINT64_MAX, &cp.size) < 0 ||
	    cd_audit_unhex(tok[2], toklen[2], cp.head, sizeof cp.head) < 0 ||
	    parse_dec(tok[3], toklen[3], INT64_MAX, &v) < 0 ||
	    cd_audit_unhex(tok[4], toklen[4], cp.key_id, sizeof cp.key_id) < 0 ||
	    cd_audit_unhex(tok[5], toklen[5], cp.sig, sizeof cp.sig) < 0)
		return -CD_E_PARSE;
	cp.time_ns = (int64_t)v;
	*ret = cp;
	return 0;
}

int cd_audit_checkpoint_check(const struct cd_audit_checkpoint *cp,
                              const unsigned char pk[CD_AUDIT_PK_LEN])
{
	unsigned char kid[CD_AUDIT_KEY_ID_LEN];
	char body[CD_AUDIT_CP_LINE_MAX];
	int n;

	if (sodium_ready() < 0)
		return -ENOSYS;
	cd_audit_key_id(pk, kid);
	if (memcmp(kid, cp->key_id, sizeof kid) != 0)
		return -CD_E_DENIED;
	n = format_body(cp, body, sizeof body);
	if (n < 0)
		return -CD_E_DENIED;
	if (crypto_sign_verify_detached(cp->sig, (const unsigned char *)body, (size_t)n, pk) != 0)
		return -CD_E_DENIED;
	return 0;
}
