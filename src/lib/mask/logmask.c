/* logmask.c — masked arguments and keyed commitments in audit records
 * (logmask.h).
 *
 * Trust boundary: the record's strings are the agent's and the tools'
 * (hostile); the mask key is the operator's.  Every failure leaves the
 * record withheld rather than raw: a member that cannot be masked is
 * replaced by a note, never kept. */
#include "logmask.h"

#include "util/buf.h"
#include "scan.h"

#include <errno.h>
#include <sodium.h>
#include <string.h>

/* Value commitments kept per record; more are counted, not kept (the
 * details column is capped at CD_AUDIT_DETAILS_MAX). */
#define LOGMASK_VALUES_MAX 2000

#define WITHHELD_NOKEY "[withheld by cordon: the grant masks it and the mask key is unavailable]"
#define WITHHELD_FAIL  "[withheld by cordon: it could not be masked]"
#define WITHHELD_BYTES "[withheld by cordon: not text, cannot be masked]"

const char *const cd_logmask_hash_names[] = { "argv", "code",      "stdin",  "stdout", "stderr",
	                                      "args", "arguments", "result", NULL };

/* The members of details that carry what the agent sent (and "error",
 * a run's setup or exec failure, which may quote it; "host" and
 * "request", an egress attempt's name and request line). */
static const char *const arg_members[] = { "argv",  "args", "arguments", "attributes",
	                                   "error", "host", "request",   NULL };

struct lm {
	struct cd_masker *m;
	unsigned char salt[CD_MASK_SALT_BYTES];
	json_t *values;
	const char *in; /* the member being masked */
	size_t dropped;
};

static int witness(void *ctx, enum cd_scan_type t, const char *v, size_t n)
{
	struct lm *lm = ctx;
	char c[65];
	int r;

	if (json_array_size(lm->values) >= LOGMASK_VALUES_MAX) {
		lm->dropped++;
		return 0;
	}
	if ((r = cd_mask_commit(lm->m, lm->salt, cd_scan_type_name(t), v, n, c)) < 0)
		return r;
	if (json_array_append_new(lm->values, json_pack("{s:s,s:s,s:s}", "in", lm->in, "type",
	                                                cd_scan_type_name(t), "commit", c)) < 0)
		return -ENOMEM;
	return 0;
}

/* argv elements that were not UTF-8 are stored hex-encoded ({"hex": ..}
 * in run records, "hex:..." in approval arguments); the scanner cannot see
 * into them, so under masking they are withheld.  0 or -ENOMEM. */
static int withhold_hex(json_t *argv)
{
	size_t i;

	for (i = 0; json_is_array(argv) && i < json_array_size(argv); i++) {
		json_t *v = json_array_get(argv, i);
		if (json_is_object(v) ||
		    (json_is_string(v) && !strncmp(json_string_value(v), "hex:", 4)))
			if (json_array_set_new(argv, i, json_string(WITHHELD_BYTES)) < 0)
				return -ENOMEM;
	}
	return 0;
}

/* A member replaced by a note; when even that fails, removed: a member
 * that could not be masked never stays. */
static int withhold(json_t *details, const char *name, const char *note)
{
	if (json_object_set_new(details, name, json_string(note)) == 0)
		return 0;
	json_object_del(details, name);
	return json_object_get(details, name) ? -ENOMEM : 0;
}

static int mask_members(struct lm *lm, const struct cd_mask_rules *r, json_t *details)
{
	size_t i;
	int rc;

	for (i = 0; arg_members[i]; i++) {
		json_t *v = json_object_get(details, arg_members[i]);
		if (!v)
			continue;
		if (!lm->m) {
			if ((rc = withhold(details, arg_members[i], WITHHELD_NOKEY)) < 0)
				return rc;
			continue;
		}
		rc = withhold_hex(!strcmp(arg_members[i], "argv") ? v : json_object_get(v, "argv"));
		lm->in = arg_members[i];
		if (rc < 0 || cd_mask_json(lm->m, r, v, NULL) < 0)
			if ((rc = withhold(details, arg_members[i], WITHHELD_FAIL)) < 0)
				return rc;
	}
	return 0;
}

/* A text column masked; the masked copy is kept in `keep` under `name`
 * and the column points at it. */
static int mask_column(struct lm *lm, const struct cd_mask_rules *r, const char **col,
                       const char *name, json_t *keep)
{
	struct cd_buf b;
	json_t *s;
	int rc = 0;

	if (!*col)
		return 0;
	cd_buf_init(&b, CD_AUDIT_FIELD_MAX);
	lm->in = name;
	if (!lm->m)
		s = json_string(WITHHELD_NOKEY);
	else if (cd_mask_text(lm->m, r, *col, strlen(*col), &b, NULL) == 0 &&
	         cd_buf_append(&b, "", 1) == 0 && memchr(b.data, '\0', b.len) == b.data + b.len - 1)
		s = json_string(b.data);
	else
		s = json_string(WITHHELD_FAIL);
	cd_buf_release(&b);
	/* json_string refuses invalid UTF-8 in the masked copy. */
	if (!s)
		s = json_string(WITHHELD_FAIL);
	if (!s || json_object_set_new(keep, name, s) < 0)
		rc = -ENOMEM;
	else
		*col = json_string_value(json_object_get(keep, name));
	return rc;
}

/* A plain SHA-256 (hex) replaced by the keyed commitment of its bytes. */
static int commit_hash(struct lm *lm, json_t *hashes, const char *name, const char *hex)
{
	unsigned char h[32];
	size_t n = 0;
	char c[65];
	int r;

	if (!lm->m)
		return 0; /* no key: the hash is dropped, nothing committed */
	if (sodium_hex2bin(h, sizeof h, hex, strlen(hex), NULL, &n, NULL) != 0 || n != sizeof h)
		return json_object_set_new(hashes, name, json_string("unreadable")) < 0 ? -ENOMEM
		                                                                        : 0;
	if ((r = cd_mask_commit(lm->m, lm->salt, name, h, sizeof h, c)) < 0)
		return r;
	return json_object_set_new(hashes, name, json_string(c)) < 0 ? -ENOMEM : 0;
}

static int commit_hashes(struct lm *lm, struct cd_record *rec, json_t *details, json_t *hashes)
{
	const char **cols[] = { &rec->argv_sha256, &rec->code_sha256, &rec->stdin_sha256,
		                &rec->stdout_sha256, &rec->stderr_sha256 };
	static const char *const members[][2] = { { "args_sha256", "args" },
		                                  { "arguments_sha256", "arguments" },
		                                  { "result_sha256", "result" } };
	size_t i;
	int r;

	for (i = 0; i < sizeof cols / sizeof cols[0]; i++) {
		if (!*cols[i])
			continue;
		if ((r = commit_hash(lm, hashes, cd_logmask_hash_names[i], *cols[i])) < 0)
			return r;
		*cols[i] = NULL;
	}
	for (i = 0; i < sizeof members / sizeof members[0]; i++) {
		json_t *v = json_object_get(details, members[i][0]);
		if (!v)
			continue;
		if (json_is_string(v) &&
		    (r = commit_hash(lm, hashes, members[i][1], json_string_value(v))) < 0)
			return r;
		json_object_del(details, members[i][0]);
	}
	return 0;
}

int cd_logmask_record(struct cd_masker *m, const struct cd_mask_rules *r, struct cd_record *rec,
                      json_t *details, json_t **ret_keep)
{
	struct lm lm;
	json_t *keep, *hashes, *c;
	char salt[2 * CD_MASK_SALT_BYTES + 1];
	int rc;

	*ret_keep = NULL;
	if (!cd_mask_rules_active(r))
		return 0;
	if (!details)
		return -EINVAL;
	memset(&lm, 0, sizeof lm);
	lm.m = m;
	randombytes_buf(lm.salt, sizeof lm.salt);
	keep = json_object();
	hashes = json_object();
	lm.values = json_array();
	if (!keep || !hashes || !lm.values) {
		rc = -ENOMEM;
		goto fail;
	}
	cd_masker_witness(m, witness, &lm);
	rc = mask_members(&lm, r, details);
	if (rc == 0)
		rc = mask_column(&lm, r, &rec->target, "target", keep);
	if (rc == 0)
		rc = mask_column(&lm, r, &rec->reason, "reason", keep);
	if (rc == 0)
		rc = commit_hashes(&lm, rec, details, hashes);
	cd_masker_witness(m, NULL, NULL);
	if (rc < 0)
		goto fail;
	sodium_bin2hex(salt, sizeof salt, lm.salt, sizeof lm.salt);
	c = m ? json_pack("{s:i,s:s,s:o,s:o}", "v", 1, "salt", salt, "values", lm.values, "hashes",
	                  hashes)
	      : json_pack("{s:i,s:s}", "v", 1, "withheld", "the mask key is unavailable");
	if (!m) {
		json_decref(lm.values);
		json_decref(hashes);
	}
	lm.values = hashes = NULL;
	if (!c) {
		rc = -ENOMEM;
		goto fail;
	}
	if (lm.dropped)
		json_object_set_new(c, "values_not_kept", json_integer((json_int_t)lm.dropped));
	if (json_object_set_new(details, "commitments", c) < 0) {
		rc = -ENOMEM;
		goto fail;
	}
	*ret_keep = keep;
	return 0;
fail:
	cd_masker_witness(m, NULL, NULL);
	json_decref(keep);
	json_decref(hashes);
	json_decref(lm.values);
	return rc;
}

char *cd_logmask_text(struct cd_masker *m, const struct cd_mask_rules *r, const char *s)
{
	struct cd_buf b;
	char *out;

	if (!s)
		return NULL;
	if (!cd_mask_rules_active(r))
		return strdup(s);
	if (!m)
		return strdup(WITHHELD_NOKEY);
	cd_buf_init(&b, CD_AUDIT_FIELD_MAX);
	if (cd_mask_text(m, r, s, strlen(s), &b, NULL) < 0 || cd_buf_append(&b, "", 1) < 0 ||
	    memchr(b.data, '\0', b.len) != b.data + b.len - 1) {
		cd_buf_release(&b);
		return strdup(WITHHELD_FAIL);
	}
	out = cd_buf_take(&b);
	return out ? out : strdup(WITHHELD_FAIL);
}

json_t *cd_logmask_rules_json(const struct cd_mask_rules *r)
{
	json_t *o = json_object();
	unsigned i;

	for (i = 0; o && i < CD_SCAN_NTYPES; i++)
		if (r->action[i] != CD_MASK_NONE &&
		    json_object_set_new(o, cd_scan_type_name((enum cd_scan_type)i),
		                        json_string(cd_mask_action_name(
		                                (enum cd_mask_action)r->action[i]))) < 0) {
			json_decref(o);
			return NULL;
		}
	return o;
}

int cd_logmask_rules_parse(const json_t *j, struct cd_mask_rules *ret)
{
	const char *k;
	json_t *v;

	memset(ret, 0, sizeof *ret);
	if (!json_is_object(j))
		return -CD_E_PARSE;
	json_object_foreach((json_t *)j, k, v)
	{
		enum cd_scan_type t;
		enum cd_mask_action a;
		if (cd_scan_type_parse(k, &t) < 0 ||
		    cd_mask_action_parse(json_string_value(v), &a) < 0)
			return -CD_E_PARSE;
		ret->action[t] = (unsigned char)a;
	}
	return 0;
}

int cd_logmask_confirm(struct cd_masker *m, const json_t *details, const char *value, size_t n,
                       const char *hash_name, cd_logmask_match_fn fn, void *ctx)
{
	const json_t *c = json_object_get(details, "commitments");
	const char *salthex = json_string_value(json_object_get(c, "salt"));
	unsigned char salt[CD_MASK_SALT_BYTES];
	size_t sn = 0, i;
	char mine[65];
	int matches = 0, r;

	if (!salthex ||
	    sodium_hex2bin(salt, sizeof salt, salthex, strlen(salthex), NULL, &sn, NULL) != 0 ||
	    sn != sizeof salt)
		return -CD_E_PARSE;
	if (hash_name) {
		const char *want =
		        json_string_value(json_object_get(json_object_get(c, "hashes"), hash_name));
		if (!want || strlen(want) != 64)
			return 0;
		if ((r = cd_mask_commit(m, salt, hash_name, value, n, mine)) < 0)
			return r;
		if (sodium_memcmp(mine, want, 64) == 0) {
			fn(ctx, hash_name, NULL);
			matches++;
		}
		return matches;
	}
	for (i = 0; i < json_array_size(json_object_get(c, "values")); i++) {
		const json_t *v = json_array_get(json_object_get(c, "values"), i);
		const char *type = json_string_value(json_object_get(v, "type"));
		const char *want = json_string_value(json_object_get(v, "commit"));
		enum cd_scan_type t;
		if (!type || !want || strlen(want) != 64 || cd_scan_type_parse(type, &t) < 0)
			continue;
		if ((r = cd_mask_commit(m, salt, type, value, n, mine)) < 0)
			return r;
		if (sodium_memcmp(mine, want, 64) == 0) {
			fn(ctx, json_string_value(json_object_get(v, "in")), type);
			matches++;
		}
	}
	return matches;
}
