/* test-audit-checkpoint.c — keys and signed checkpoint lines. */
#include "../tap.h"

#include "audit/audit.h"
#include "util/err.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>

static char dir[] = "/tmp/cordon-test-cp.XXXXXX";

static void path(char *out, size_t n, const char *name)
{
	snprintf(out, n, "%s/%s", dir, name);
}

static void write_file(const char *p, const char *s, mode_t mode)
{
	int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, mode);
	if (fd >= 0) {
		if (write(fd, s, strlen(s)) < 0)
			perror("write");
		fchmod(fd, mode);
		close(fd);
	}
}

static void test_keys(char *sk, char *pk, size_t n)
{
	struct cd_audit_key *k = NULL;
	unsigned char pub[32], pub2[32];
	char bad[512];
	struct cd_err err;
	struct stat st;

	path(sk, n, "audit.key");
	path(pk, n, "audit.pub");
	is_int(cd_audit_keygen(sk, pk, &err), 0, "keygen");
	ok(stat(sk, &st) == 0 && (st.st_mode & 0777) == 0600, "secret key is 0600");
	ok(cd_audit_keygen(sk, pk, &err) < 0, "keygen never overwrites a key");
	is_int(cd_audit_key_load(sk, &k, &err), 0, "secret key loads");
	is_int(cd_audit_pubkey_load(pk, pub, &err), 0, "public key loads");
	if (k) {
		cd_audit_key_public(k, pub2);
		ok(memcmp(pub, pub2, 32) == 0, "the pair matches");
		cd_audit_key_free(k);
	}
	chmod(sk, 0644);
	k = NULL;
	is_int(cd_audit_key_load(sk, &k, &err), -CD_E_DENIED,
	       "a world-readable secret key is refused");
	ok(strstr(err.msg, "chmod 600") != NULL, "and the message says what to do");
	chmod(sk, 0600);

	path(bad, sizeof bad, "bad.key");
	write_file(bad, "cordon-audit-secret-key v1 1234\n", 0600);
	is_int(cd_audit_key_load(bad, &k, &err), -CD_E_PARSE, "a short key is refused");
	write_file(bad,
	           "cordon-audit-public-key v1 "
	           "0000000000000000000000000000000000000000000000000000000000000000\n",
	           0600);
	is_int(cd_audit_key_load(bad, &k, &err), -CD_E_PARSE, "a public key is not a secret key");
	is_int(cd_audit_pubkey_load(sk, pub2, &err), -CD_E_PARSE,
	       "a secret key is not a public key");
	is_int(cd_audit_key_load("/nonexistent/key", &k, &err), -ENOENT, "a missing key fails");
	path(bad, sizeof bad, "link.key");
	if (symlink(sk, bad) == 0)
		ok(cd_audit_key_load(bad, &k, &err) < 0, "a symlinked key is refused");
}

static void test_lines(const char *sk, const char *pk)
{
	struct cd_audit_checkpoint cp, back;
	struct cd_audit_key *k = NULL;
	unsigned char pub[32], other[32];
	char line[CD_AUDIT_CP_LINE_MAX], mut[CD_AUDIT_CP_LINE_MAX];
	struct cd_err err;
	size_t len, i;
	int bad;

	if (cd_audit_key_load(sk, &k, &err) < 0 || cd_audit_pubkey_load(pk, pub, &err) < 0) {
		ok(0, "load keys: %s", err.msg);
		return;
	}
	memset(&cp, 0, sizeof cp);
	memcpy(cp.log_id, "0123456789abcdef0123456789abcdef", 33);
	cp.size = 42;
	memset(cp.head, 0xab, sizeof cp.head);
	cp.time_ns = 1700000000000000000LL;
	is_int(cd_audit_checkpoint_sign(k, &cp), 0, "sign");
	is_int(cd_audit_checkpoint_format(&cp, line, sizeof line), 0, "format");
	ok(strncmp(line, "cordon-checkpoint v1 0123456789abcdef0123456789abcdef 42 ", 57) == 0,
	   "line starts with tag, log id and size");
	len = strlen(line);
	is_int(cd_audit_checkpoint_parse(line, len, &back), 0, "parse");
	ok(memcmp(&back, &cp, sizeof cp) == 0, "parse is the inverse of format");
	is_int(cd_audit_checkpoint_check(&back, pub), 0, "signature verifies");

	/* Any one-byte change is either unparseable or unsigned. */
	for (i = 0, bad = 0; i < len; i++) {
		memcpy(mut, line, len);
		mut[i] = mut[i] == '1' ? '2' : '1';
		if (cd_audit_checkpoint_parse(mut, len, &back) == 0 &&
		    cd_audit_checkpoint_check(&back, pub) == 0)
			bad++;
	}
	is_int(bad, 0, "no single-byte change of a line keeps a valid signature");

	memcpy(other, pub, 32);
	other[0] ^= 1;
	cd_audit_checkpoint_parse(line, len, &back);
	is_int(cd_audit_checkpoint_check(&back, other), -CD_E_DENIED, "another key is refused");

	static const char *const malformed[] = {
		"",
		"cordon-checkpoint v1",
		"cordon-checkpoint v2 0123456789abcdef0123456789abcdef 1 "
		"abababababababababababababababababababababababababababababababab 1 "
		"0011223344556677 "
		"00",
		"cordon-checkpoint v1 0123456789abcdef0123456789abcdef 01 "
		"abababababababababababababababababababababababababababababababab 1 "
		"0011223344556677 "
		"0000000000000000000000000000000000000000000000000000000000000000000000000000000000"
		"0000"
		"000000000000000000000000000000000000000000",
	};
	for (i = 0; i < sizeof malformed / sizeof malformed[0]; i++)
		is_int(cd_audit_checkpoint_parse(malformed[i], strlen(malformed[i]), &back),
		       -CD_E_PARSE, "malformed line %zu refused", i);
	memcpy(mut, line, len);
	mut[len] = ' ';
	is_int(cd_audit_checkpoint_parse(mut, len + 1, &back), -CD_E_PARSE,
	       "trailing space refused");
	mut[len] = '\r';
	is_int(cd_audit_checkpoint_parse(mut, len + 1, &back), -CD_E_PARSE, "trailing CR refused");
	cd_audit_key_free(k);
}

int main(void)
{
	char sk[512], pk[512];

	tap_start(30);
	if (!mkdtemp(dir)) {
		ok(0, "mkdtemp");
		return tap_done();
	}
	test_keys(sk, pk, sizeof sk);
	test_lines(sk, pk);
	{
		char cmd[600];
		snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
		if (system(cmd) != 0)
			diag("cleanup failed");
	}
	return tap_done();
}
