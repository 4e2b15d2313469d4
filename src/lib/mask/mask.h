/* mask.h — data minimization on what an agent reads: personal data and
 * secrets found by the scanner are redacted, pseudonymized or dropped as
 * the deciding grants say, and JSON results are cut down to the fields a
 * grant names.
 *
 * Pseudonyms are keyed: the first 32 bits of HMAC-SHA256 under a
 * per-deployment key (never a plain hash, which a dictionary reverses), so
 * the same value masks the same way across calls and sessions of one
 * deployment ("<email:7f3a9c1e>") and differently in another.
 *
 * Trust boundary: the text and JSON are hostile tool output.  Every
 * function fails closed: on any error the caller must withhold the output,
 * never pass it on raw.  Nothing here prints, exits or reads the
 * environment. */
#ifndef CD_MASK_H
#define CD_MASK_H

#include "util/buf.h"
#include "util/err.h"
#include "scan.h"

#include <stddef.h>

/* What happens to a finding.  Ordered by strictness: when several grants
 * decide, the strictest action per type wins. */
enum cd_mask_action {
	CD_MASK_NONE = 0,
	CD_MASK_PSEUDONYMIZE, /* <email:7f3a9c1e> */
	CD_MASK_REDACT,       /* <email> */
	CD_MASK_DROP,         /* removed */
};

/* "none", "pseudonymize", "redact", "drop"; parse is exact.  0/-EINVAL. */
const char *cd_mask_action_name(enum cd_mask_action a);
int cd_mask_action_parse(const char *s, enum cd_mask_action *ret);

/* Findings below this confidence (percent) are left alone. */
#define CD_MASK_MIN_CONFIDENCE 50

#define CD_MASK_KEY_BYTES 32

/* The action per type (enum cd_scan_type); all CD_MASK_NONE: no masking. */
struct cd_mask_rules {
	unsigned char action[CD_SCAN_NTYPES];
};

/* 1 when any type is masked. */
int cd_mask_rules_active(const struct cd_mask_rules *r);
/* Merge b into a, the stricter action winning per type. */
void cd_mask_rules_merge(struct cd_mask_rules *a, const struct cd_mask_rules *b);

/* The per-deployment key at `path`: read it (a regular file of exactly
 * CD_MASK_KEY_BYTES bytes, owned by us, no group or other access), or
 * create it with mode 0600 (and its directory, 0700) when absent.  Any
 * other state is an error: a key others can read is no key.  0, or
 * -errno / -CD_E_CORRUPT with the reason in err. */
int cd_mask_key_load(const char *path, unsigned char ret_key[CD_MASK_KEY_BYTES],
                     struct cd_err *err);
/* The same checks, never creating it (a new key confirms nothing):
 * -ENOENT when absent. */
int cd_mask_key_read(const char *path, unsigned char ret_key[CD_MASK_KEY_BYTES],
                     struct cd_err *err);

struct cd_masker;

/* A masker holding a copy of the key; its scanner is made with the first
 * text to mask (or by cd_masker_prepare).  The key is wiped on free.
 * 0, -ENOMEM, -EIO. */
int cd_masker_new(const unsigned char key[CD_MASK_KEY_BYTES], struct cd_masker **ret,
                  struct cd_err *err);
/* Make the scanner now, so that a front end that will mask refuses at
 * once, with the reason, when it cannot.  0, or -EIO / -ENOMEM. */
int cd_masker_prepare(struct cd_masker *m, struct cd_err *err);
void cd_masker_free(struct cd_masker *m);

/* The pseudonym of `value` as type t: "<TYPE:8 hex digits>", written NUL
 * terminated into out (at least CD_MASK_PSEUDONYM_MAX bytes).  Values are
 * normalized first (emails lower-cased; separators dropped from numbers),
 * so one card written two ways has one pseudonym. */
#define CD_MASK_PSEUDONYM_MAX 32
int cd_mask_pseudonym(const struct cd_masker *m, enum cd_scan_type t, const char *value, size_t n,
                      char out[CD_MASK_PSEUDONYM_MAX]);

/* Mask in[0, n) into out (appended) under rules.  Overlapping findings:
 * the earliest, then the longest, wins.  *ret_count (may be NULL) is the
 * number of spans replaced.  0, -ENOMEM, -CD_E_LIMIT (out's cap), -EIO. */
int cd_mask_text(struct cd_masker *m, const struct cd_mask_rules *r, const char *in, size_t n,
                 struct cd_buf *out, size_t *ret_count);

/* Called for every span cd_mask_text replaces, with the raw value: the
 * audit log keeps a keyed commitment of each (logmask.h).  A negative
 * return fails the masking.  NULL: no witness. */
typedef int (*cd_mask_witness_fn)(void *ctx, enum cd_scan_type t, const char *value, size_t n);
void cd_masker_witness(struct cd_masker *m, cd_mask_witness_fn fn, void *ctx);

/* Keyed commitments (SPEC: "a keyed commitment to the raw value").  The
 * commitment key is derived from the deployment's mask key (domain
 * separated from the pseudonyms); each record has its own random salt,
 * so one value committed in two records gives two unrelated commitments
 * and the log links nothing.  Whoever holds the mask key can confirm a
 * guessed value against a record (cordon log confirm); the log alone
 * cannot.  `label` names what is committed ("email", "argv", ...); the
 * value is normalized first as for pseudonyms when label is a type name.
 * Output: 64 lower-case hex digits and a NUL. */
#define CD_MASK_SALT_BYTES 16
int cd_mask_commit(const struct cd_masker *m, const unsigned char salt[CD_MASK_SALT_BYTES],
                   const char *label, const void *value, size_t n, char out[65]);

struct json_t;

/* Mask every string of a JSON value in place (object keys too), adding
 * the number of spans replaced to *ret_count (may be NULL).  0, or
 * negative: then v is in an unspecified state and must be discarded. */
int cd_mask_json(struct cd_masker *m, const struct cd_mask_rules *r, struct json_t *v,
                 size_t *ret_count);

/* Field scoping: keep only the members of v (in place) whose dotted path
 * ("customer.email"; arrays are transparent) is named in every one of the
 * `nlists` lists, or lies under a named path.  An object member that lies
 * above a named path is kept and scoped in turn; everything else is
 * removed; a scalar in an array takes the array's path.  A result that is
 * neither an object nor an array cannot be scoped: -CD_E_DENIED.
 * 0, -ENOMEM, -CD_E_DENIED. */
int cd_mask_fields(struct json_t *v, const char *const *const *lists, const size_t *counts,
                   size_t nlists);

#endif
