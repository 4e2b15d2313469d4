/* test-mask.c — masking actions, keyed and stable pseudonyms, the key
 * file's checks, JSON walking and field scoping. */
#include "../tap.h"

#include "util/buf.h"
#include "mask/mask.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <sys/stat.h>

static const unsigned char key1[CD_MASK_KEY_BYTES] = { 1 };
static const unsigned char key2[CD_MASK_KEY_BYTES] = { 2 };

static char *masked(struct cd_masker *m, const struct cd_mask_rules *r, const char *in)
{
	struct cd_buf b;

	cd_buf_init(&b, 1 << 20);
	if (cd_mask_text(m, r, in, strlen(in), &b, NULL) < 0) {
		cd_buf_release(&b);
		return NULL;
	}
	return cd_buf_take(&b);
}

static void test_actions(struct cd_masker *m)
{
	struct cd_mask_rules r;
	char *s, *t;

	memset(&r, 0, sizeof r);
	r.action[CD_SCAN_EMAIL] = CD_MASK_REDACT;
	r.action[CD_SCAN_CARD] = CD_MASK_DROP;
	s = masked(m, &r, "to alice@example.com, card 4111 1111 1111 1111, ssn 123-45-6789");
	is_str(s, "to <email>, card , ssn 123-45-6789", "redact and drop; unmasked types stay");
	free(s);

	memset(&r, 0, sizeof r);
	r.action[CD_SCAN_EMAIL] = CD_MASK_PSEUDONYMIZE;
	s = masked(m, &r, "alice@example.com");
	t = masked(m, &r, "ALICE@Example.COM");
	ok(s && !strncmp(s, "<email:", 7) && strlen(s) == 16 && s[15] == '>',
	   "a pseudonym looks like <email:8 hex> (%s)", s ? s : "NULL");
	is_str(t, s, "the same address in another case has the same pseudonym");
	free(t);
	t = masked(m, &r, "bob@example.com");
	ok(s && t && strcmp(s, t), "another address has another pseudonym");
	free(s);
	free(t);

	memset(&r, 0, sizeof r);
	r.action[CD_SCAN_CARD] = CD_MASK_PSEUDONYMIZE;
	s = masked(m, &r, "4111 1111 1111 1111");
	t = masked(m, &r, "4111-1111-1111-1111");
	ok(s && t && !strcmp(s, t), "one card written two ways: one pseudonym");
	free(s);
	free(t);

	memset(&r, 0, sizeof r);
	s = masked(m, &r, "alice@example.com");
	is_str(s, "alice@example.com", "no rules: text unchanged");
	free(s);
	ok(!cd_mask_rules_active(&r), "empty rules are inactive");
	r.action[CD_SCAN_SECRET] = CD_MASK_REDACT;
	ok(cd_mask_rules_active(&r), "one type makes them active");
	s = masked(m, &r, "export TOKEN=ghp_aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789\n");
	is_str(s, "export TOKEN=<secret>\n", "a token behind a name: one span, redacted");
	free(s);
}

static void test_keyed(void)
{
	struct cd_masker *a = NULL, *b = NULL;
	char pa[CD_MASK_PSEUDONYM_MAX], pb[CD_MASK_PSEUDONYM_MAX], pc[CD_MASK_PSEUDONYM_MAX];

	ok(cd_masker_new(key1, &a, NULL) == 0 && cd_masker_new(key2, &b, NULL) == 0, "two maskers");
	cd_mask_pseudonym(a, CD_SCAN_EMAIL, "a@example.com", 13, pa);
	cd_mask_pseudonym(b, CD_SCAN_EMAIL, "a@example.com", 13, pb);
	cd_mask_pseudonym(a, CD_SCAN_SECRET, "a@example.com", 13, pc);
	ok(strcmp(pa, pb) != 0, "another key, another pseudonym (keyed, not a plain hash)");
	ok(strcmp(pa + 7, pc + 8) != 0, "another type, another pseudonym");
	cd_masker_free(a);
	cd_masker_free(b);
}

static void test_key_file(void)
{
	char dir[] = "/tmp/cordon-mask-XXXXXX", path[256];
	unsigned char k1[CD_MASK_KEY_BYTES], k2[CD_MASK_KEY_BYTES];
	struct cd_err err;
	struct stat st;

	if (!mkdtemp(dir)) {
		ok(0, "mkdtemp");
		return;
	}
	snprintf(path, sizeof path, "%s/conf/cordon/mask.key", dir);
	is_int(cd_mask_key_load(path, k1, &err), 0, "the key is created on first use");
	ok(stat(path, &st) == 0 && (st.st_mode & 0777) == 0600 && st.st_size == CD_MASK_KEY_BYTES,
	   "... 0600, %d bytes", CD_MASK_KEY_BYTES);
	is_int(cd_mask_key_load(path, k2, &err), 0, "and read back");
	ok(!memcmp(k1, k2, sizeof k1), "... the same key");
	chmod(path, 0644);
	ok(cd_mask_key_load(path, k2, &err) < 0, "a key others can read is refused");
	diag("%s", err.msg);
	chmod(path, 0600);
	ok(truncate(path, 5) == 0, "truncate the key");
	ok(cd_mask_key_load(path, k2, &err) < 0, "a short key is refused");
	unlink(path);
	ok(symlink("/etc/passwd", path) == 0, "replace the key by a symlink");
	ok(cd_mask_key_load(path, k2, &err) < 0, "a symlink is not followed");
	unlink(path);
	snprintf(path, sizeof path, "%s/conf/cordon", dir);
	rmdir(path);
	snprintf(path, sizeof path, "%s/conf", dir);
	rmdir(path);
	rmdir(dir);
}

static char *dump(json_t *v)
{
	return json_dumps(v, JSON_COMPACT | JSON_SORT_KEYS);
}

static void test_json(struct cd_masker *m)
{
	struct cd_mask_rules r;
	json_t *v;
	char *s;
	size_t n = 0;

	memset(&r, 0, sizeof r);
	r.action[CD_SCAN_EMAIL] = CD_MASK_REDACT;
	r.action[CD_SCAN_IBAN] = CD_MASK_REDACT;
	v = json_loads("{\"a\":[\"x bob@example.com y\",{\"iban\":\"DE89370400440532013000\"}],"
	               "\"n\":5,\"carol@example.com\":true}",
	               0, NULL);
	is_int(cd_mask_json(m, &r, v, &n), 0, "mask a JSON value");
	s = dump(v);
	is_str(s, "{\"<email>\":true,\"a\":[\"x <email> y\",{\"iban\":\"<iban>\"}],\"n\":5}",
	       "every string and key masked, numbers kept");
	is_int(n, 3, "three spans");
	free(s);
	json_decref(v);
}

static void test_fields(void)
{
	static const char *const l1[] = { "customer.email", "id" };
	static const char *const l2[] = { "customer", "id" };
	const char *const *lists[2] = { l1, l2 };
	size_t counts[2] = { 2, 2 };
	json_t *v;
	char *s;

	v = json_loads("{\"id\":1,\"customer\":{\"email\":\"e\",\"phone\":\"p\",\"email2\":1},"
	               "\"notes\":\"n\"}",
	               0, NULL);
	is_int(cd_mask_fields(v, lists, counts, 1), 0, "scope an object");
	s = dump(v);
	is_str(s, "{\"customer\":{\"email\":\"e\"},\"id\":1}", "only the named fields are left");
	free(s);
	json_decref(v);

	v = json_loads("[{\"id\":1,\"x\":2,\"customer\":{\"email\":\"e\",\"phone\":3}},7]", 0,
	               NULL);
	is_int(cd_mask_fields(v, lists, counts, 2), 0, "scope an array under two lists");
	s = dump(v);
	is_str(s, "[{\"customer\":{\"email\":\"e\"},\"id\":1}]",
	       "arrays are transparent; both lists must admit a field");
	free(s);
	json_decref(v);

	v = json_string("raw text");
	is_int(cd_mask_fields(v, lists, counts, 1), -CD_E_DENIED, "a scalar cannot be scoped");
	json_decref(v);
}

int main(void)
{
	struct cd_masker *m = NULL;

	tap_start(30);
	if (!ok(cd_masker_new(key1, &m, NULL) == 0, "a masker"))
		return tap_done();
	test_actions(m);
	test_keyed();
	test_key_file();
	test_json(m);
	test_fields();
	cd_masker_free(m);
	return tap_done();
}
