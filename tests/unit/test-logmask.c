/* test-logmask.c — audit records of masked calls: arguments masked, every
 * masked value and plain hash kept only as a salted keyed commitment that
 * the key's holder can confirm; without the key the arguments are
 * withheld, never kept raw. */
#include "../tap.h"

#include "mask/logmask.h"

#include <errno.h>
#include <jansson.h>
#include <sodium.h>

static const unsigned char key1[CD_MASK_KEY_BYTES] = { 7 };
static const unsigned char key2[CD_MASK_KEY_BYTES] = { 8 };

static const char argv_hex[] = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";

struct hits {
	int n;
	char in[64], type[32];
};

static void hit(void *ctx, const char *in, const char *type)
{
	struct hits *h = ctx;

	h->n++;
	snprintf(h->in, sizeof h->in, "%s", in ? in : "");
	snprintf(h->type, sizeof h->type, "%s", type ? type : "");
}

static struct cd_mask_rules email_card(void)
{
	struct cd_mask_rules r;

	memset(&r, 0, sizeof r);
	r.action[CD_SCAN_EMAIL] = CD_MASK_PSEUDONYMIZE;
	r.action[CD_SCAN_CARD] = CD_MASK_REDACT;
	return r;
}

static json_t *details(void)
{
	return json_pack("{s:[s,s,s],s:{s:s},s:s,s:s}", "argv", "mail", "bob@example.com",
	                 "card 4111 1111 1111 1111", "attributes", "to", "Bob@Example.com",
	                 "arguments_sha256", argv_hex, "policy", "p.yaml");
}

static void test_inactive(struct cd_masker *m)
{
	struct cd_mask_rules none;
	struct cd_record rec;
	json_t *d = details(), *keep = (json_t *)1;
	char *before = json_dumps(d, JSON_SORT_KEYS), *after;

	memset(&none, 0, sizeof none);
	memset(&rec, 0, sizeof rec);
	rec.argv_sha256 = argv_hex;
	rec.target = "/work/bob@example.com";
	is_int(cd_logmask_record(m, &none, &rec, d, &keep), 0, "no rules: nothing to do");
	after = json_dumps(d, JSON_SORT_KEYS);
	is_str(after, before, "... the details are as given");
	ok(keep == NULL && rec.argv_sha256 == argv_hex, "... and so are the columns");
	free(before);
	free(after);
	json_decref(d);
}

static void test_masked(struct cd_masker *m, struct cd_masker *other)
{
	struct cd_mask_rules r = email_card();
	struct cd_record rec;
	struct hits h;
	json_t *d = details(), *d2 = details(), *keep = NULL, *keep2 = NULL, *c;
	char *s;
	unsigned char raw[32];
	size_t n;
	const char *salt1, *salt2;

	memset(&rec, 0, sizeof rec);
	rec.argv_sha256 = argv_hex;
	rec.stdout_sha256 = argv_hex;
	rec.target = "/work/bob@example.com";
	rec.reason = "no grant covers bob@example.com";
	is_int(cd_logmask_record(m, &r, &rec, d, &keep), 0, "masked record");
	s = json_dumps(d, JSON_SORT_KEYS | JSON_COMPACT);
	ok(s && !strstr(s, "bob@") && !strstr(s, "Bob@") && !strstr(s, "4111"),
	   "no raw address or card in the details");
	ok(s && strstr(s, "\"card <card>\"") && strstr(s, "<email:"), "masked in place: %s",
	   s ? s : "");
	ok(!json_object_get(d, "arguments_sha256"), "the plain argument hash is gone");
	free(s);
	ok(rec.target && !strstr(rec.target, "bob@") && strstr(rec.target, "<email:"),
	   "the target column is masked (%s)", rec.target ? rec.target : "");
	ok(rec.reason && !strstr(rec.reason, "bob@"), "the reason is masked");
	ok(!rec.argv_sha256 && !rec.stdout_sha256, "plain hash columns are cleared");
	c = json_object_get(d, "commitments");
	is_int((int)json_array_size(json_object_get(c, "values")), 5,
	       "one commitment per value masked (argv, attributes, target, reason)");
	ok(json_string_length(json_object_get(json_object_get(c, "hashes"), "argv")) == 64 &&
	           json_string_length(json_object_get(json_object_get(c, "hashes"), "stdout")) ==
	                   64 &&
	           json_string_length(json_object_get(json_object_get(c, "hashes"), "arguments")) ==
	                   64,
	   "every plain hash became a commitment");

	memset(&h, 0, sizeof h);
	is_int(cd_logmask_confirm(m, d, "BOB@example.com", 15, NULL, hit, &h), 4,
	       "the key's holder confirms the address (any case): argv, attributes, target, "
	       "reason");
	memset(&h, 0, sizeof h);
	is_int(cd_logmask_confirm(m, d, "4111-1111-1111-1111", 19, NULL, hit, &h), 1,
	       "... the card, written another way");
	is_str(h.type, "card", "... naming the type");
	is_str(h.in, "argv", "... and where it was");
	is_int(cd_logmask_confirm(m, d, "eve@example.com", 15, NULL, hit, &h), 0,
	       "another address does not match");
	is_int(cd_logmask_confirm(other, d, "bob@example.com", 15, NULL, hit, &h), 0,
	       "another deployment's key confirms nothing");
	sodium_hex2bin(raw, sizeof raw, argv_hex, 64, NULL, &n, NULL);
	is_int(cd_logmask_confirm(m, d, (const char *)raw, 32, "argv", hit, &h), 1,
	       "a hash is confirmed by the raw data's SHA-256");
	raw[0] ^= 1;
	is_int(cd_logmask_confirm(m, d, (const char *)raw, 32, "argv", hit, &h), 0,
	       "... and refuted by another");

	memset(&rec, 0, sizeof rec);
	is_int(cd_logmask_record(m, &r, &rec, d2, &keep2), 0, "the same record again");
	salt1 = json_string_value(json_object_get(c, "salt"));
	salt2 = json_string_value(json_object_get(json_object_get(d2, "commitments"), "salt"));
	ok(salt1 && salt2 && strcmp(salt1, salt2) != 0, "each record has its own salt");
	ok(strcmp(json_string_value(json_object_get(json_array_get(json_object_get(c, "values"), 0),
	                                            "commit")),
	          json_string_value(json_object_get(
	                  json_array_get(
	                          json_object_get(json_object_get(d2, "commitments"), "values"), 0),
	                  "commit"))) != 0,
	   "... so one value in two records does not link them");
	json_decref(keep);
	json_decref(keep2);
	json_decref(d);
	json_decref(d2);
}

static void test_withheld(void)
{
	struct cd_mask_rules r = email_card();
	struct cd_record rec;
	json_t *d = details(), *keep = NULL;
	char *s;

	memset(&rec, 0, sizeof rec);
	rec.argv_sha256 = argv_hex;
	rec.target = "/work/bob@example.com";
	is_int(cd_logmask_record(NULL, &r, &rec, d, &keep), 0, "no masker: still recorded");
	s = json_dumps(d, JSON_COMPACT);
	ok(s && !strstr(s, "bob@") && !strstr(s, "Bob@") && !strstr(s, "4111") &&
	           strstr(s, "withheld"),
	   "... the arguments withheld, not raw: %s", s ? s : "");
	ok(rec.target && !strstr(rec.target, "bob@"), "... the target withheld");
	ok(!rec.argv_sha256, "... and no plain hash kept");
	free(s);
	json_decref(keep);
	json_decref(d);
}

static void test_hex_argv(struct cd_masker *m)
{
	struct cd_mask_rules r = email_card();
	struct cd_record rec;
	json_t *d = json_pack("{s:[s,{s:s}]}", "argv", "cat", "hex",
	                      "626f62406578616d706c652e636f6dff"),
	       *keep = NULL;
	char *s;

	memset(&rec, 0, sizeof rec);
	is_int(cd_logmask_record(m, &r, &rec, d, &keep), 0,
	       "an argv with bytes that are not UTF-8");
	s = json_dumps(d, JSON_COMPACT);
	ok(s && !strstr(s, "626f6240") && strstr(s, "withheld"),
	   "... hex-encoded elements are withheld (the scanner cannot see into them)");
	free(s);
	json_decref(keep);
	json_decref(d);
}

int main(void)
{
	struct cd_masker *m = NULL, *other = NULL;

	tap_start(30);
	if (!ok(cd_masker_new(key1, &m, NULL) == 0 && cd_masker_new(key2, &other, NULL) == 0,
	        "two maskers"))
		return tap_done();
	test_inactive(m);
	test_masked(m, other);
	test_withheld();
	test_hex_argv(m);
	cd_masker_free(m);
	cd_masker_free(other);
	return tap_done();
}
