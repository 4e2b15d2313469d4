/* logmask.h — what the audit log keeps of a call whose grants mask data
 * (SPEC: "arguments (masked where required, plus a keyed commitment to the
 * raw value)"; issue 9 item 5).
 *
 * Under active mask rules a record is minimized before it is appended:
 *  - the members of its details that carry the agent's arguments (argv,
 *    args, arguments, attributes) and its target are masked as the
 *    agent's output would be, and each value replaced leaves a keyed
 *    commitment (cd_mask_commit) with its type and the member it was in;
 *  - every plain SHA-256 of raw data (the argv, code, stdin, stdout,
 *    stderr columns; args_sha256, arguments_sha256, result_sha256 in the
 *    details) is replaced by a keyed commitment of that hash, because a
 *    plain hash of a short value is confirmed by anyone who guesses it.
 * The commitments go to details.commitments = {"v": 1, "salt": hex,
 * "values": [{"in", "type", "commit"}...], "hashes": {"argv": commit,
 * ...}}.  An investigator holding the mask key confirms a value with
 * `cordon log confirm`; the log alone reveals nothing.
 *
 * Without a masker (the key could not be used) the members are replaced
 * by a "withheld" note and the hashes dropped: fail closed, the record is
 * still written.  Nothing here prints, exits or reads the environment. */
#ifndef CD_LOGMASK_H
#define CD_LOGMASK_H

#include "audit/audit.h"
#include "mask.h"

#include <jansson.h>

/* Minimize `rec` and its details in place under rules `r` (no-op when no
 * rule is active).  Strings of rec that change (target, hashes) point
 * into *ret_keep afterwards, which the caller frees after the append
 * (json_decref).  0, or -ENOMEM / -EIO (the kernel's random source). */
int cd_logmask_record(struct cd_masker *m, const struct cd_mask_rules *r, struct cd_record *rec,
                      json_t *details, json_t **ret_keep);

/* A free-text field (a reason, a person's comment) under rules `r`: a new
 * string, masked; a "withheld" note when m is NULL or masking fails; a
 * copy when no rule is active.  NULL only when out of memory. */
char *cd_logmask_text(struct cd_masker *m, const struct cd_mask_rules *r, const char *s);

/* The rules as JSON ({"email": "redact", ...}) and back (unknown types or
 * actions: -CD_E_PARSE). */
json_t *cd_logmask_rules_json(const struct cd_mask_rules *r);
int cd_logmask_rules_parse(const json_t *j, struct cd_mask_rules *ret);

/* The names of the hashes a record may hold: "argv", "code", "stdin",
 * "stdout", "stderr" (columns) and "args", "arguments", "result"
 * (details). */
extern const char *const cd_logmask_hash_names[];

/* What `cordon log confirm` checks.  Given a record's details and the
 * masker of the deployment's key: calls fn for every commitment the
 * candidate matches — a value (its type taken from each commitment) or,
 * with `hash_name`, the SHA-256 (32 bytes) of raw data committed under
 * that name.  Returns the number of matches, or -CD_E_PARSE (no
 * commitments in the record) / -ENOMEM. */
typedef void (*cd_logmask_match_fn)(void *ctx, const char *in, const char *type);
int cd_logmask_confirm(struct cd_masker *m, const json_t *details, const char *value, size_t n,
                       const char *hash_name, cd_logmask_match_fn fn, void *ctx);

#endif
