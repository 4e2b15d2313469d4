/* scan.h — find personal data and secrets in text: vectorscan finds
 * candidates in one linear pass over the bytes (many patterns at once, no
 * backtracking), and a validator in C confirms each one (Luhn, mod-97,
 * number ranges, base64url headers, entropy) and fixes its span.
 *
 * Trust boundary: the text is hostile (tool results, command output).
 * Scanning is linear in its length: every validator reads a bounded window
 * or extends a span only past the end of the previous one of its kind, so
 * no byte is read more than a constant number of times per recognizer.
 * Nothing here prints, exits or reads the environment. */
#ifndef CD_SCAN_H
#define CD_SCAN_H

#include "util/err.h"

#include <stddef.h>

/* The kinds of data a grant can mask.  Keep the order: it is the order of
 * the names (cd_scan_type_name) and of bits in a type mask. */
enum cd_scan_type {
	CD_SCAN_EMAIL,
	CD_SCAN_PHONE,
	CD_SCAN_CARD,
	CD_SCAN_IBAN,
	CD_SCAN_SSN,
	CD_SCAN_IPV4,
	CD_SCAN_IPV6,
	CD_SCAN_SECRET, /* API keys, tokens, private keys, high-entropy values */
	CD_SCAN_NTYPES
};

#define CD_SCAN_ALL ((1u << CD_SCAN_NTYPES) - 1)

/* The largest text one call scans (vectorscan takes an unsigned int). */
#define CD_SCAN_MAX_BYTES (256u * 1024 * 1024)

/* "email", "phone", "card", "iban", "ssn", "ipv4", "ipv6", "secret";
 * NULL when out of range. */
const char *cd_scan_type_name(enum cd_scan_type t);
/* Parse a type name (exact, lower case); 0 or -EINVAL. */
int cd_scan_type_parse(const char *s, enum cd_scan_type *ret);

struct cd_finding {
	enum cd_scan_type type;
	const char *kind; /* finer name: "e164", "visa", "aws-access-key", ... (static) */
	size_t from, to;  /* the span [from, to) in the scanned text */
	int confidence;   /* percent, 1..100 */
};

struct cd_scanner;

/* The pattern database serialized at build time by src/gen/gen-scandb.c,
 * compiled for any CPU of the architecture (generic tuning, no optional
 * features).  Linked into the cordon binary and the unit tests; a weak
 * reference elsewhere (the generator itself, benchmarks, fuzz targets),
 * whose scanners compile the database at run time. */
#define CD_SCAN_TABLE_DIGEST 32
struct cd_scan_blob {
	const unsigned char *bytes;
	size_t len; /* 0: none was built */
	/* SHA-256 of the pattern table the database was compiled from. */
	unsigned char table[CD_SCAN_TABLE_DIGEST];
};
extern const struct cd_scan_blob cd_scan_blob __attribute__((weak));

/* Where a scanner's database came from. */
enum cd_scan_db {
	CD_SCAN_DB_BUILT_IN, /* the build's serialized database: ~0.1 ms to load */
	CD_SCAN_DB_COMPILED, /* compiled at run time: ~80 ms of CPU */
};

/* A scanner with its pattern database and scratch space.  One scanner is
 * for one thread at a time.  The database is the build's (cd_scan_blob)
 * when it was made from this pattern table and loads in this vectorscan on
 * this CPU, and compiled from the table otherwise.  0, -ENOENT (no
 * vectorscan), -ENOMEM, or -EIO when vectorscan refuses the patterns
 * (message in err). */
int cd_scanner_new(struct cd_scanner **ret, struct cd_err *err);
/* The same with `blob` in place of the build's (NULL: none).  For tests,
 * which hand it damaged or foreign databases that must be refused. */
int cd_scanner_new_from(const struct cd_scan_blob *blob, struct cd_scanner **ret,
                        struct cd_err *err);
void cd_scanner_free(struct cd_scanner *s);

/* Where s's database came from; *ret_why (optional, owned by s) says why
 * the build's was not used, "" when it was. */
enum cd_scan_db cd_scanner_db(const struct cd_scanner *s, const char **ret_why);

/* For the build-time generator: the database compiled for any CPU of this
 * architecture and serialized (*ret_bytes is the caller's, free() it), and
 * the digest of the pattern table.  0, -ENOENT, -ENOMEM or -EIO. */
int cd_scan_db_serialize(char **ret_bytes, size_t *ret_len,
                         unsigned char ret_table[CD_SCAN_TABLE_DIGEST], struct cd_err *err);

/* Called for each finding of the requested types, in order of discovery
 * (roughly by end offset; spans of different kinds may overlap).  A
 * negative return stops the scan and is returned by cd_scan. */
typedef int (*cd_scan_fn)(void *ctx, const struct cd_finding *f);

/* Scan text[0, len) for the types in `types` (bits 1 << enum
 * cd_scan_type).  0, -CD_E_LIMIT (len past CD_SCAN_MAX_BYTES), the
 * callback's negative value, or -EIO when vectorscan fails. */
int cd_scan(struct cd_scanner *s, const char *text, size_t len, unsigned types, cd_scan_fn fn,
            void *ctx);

/* The validators, exposed for tests: 1 valid, 0 not.  Digits may be
 * separated by spaces or dashes where noted. */
int cd_scan_luhn(const char *s, size_t n);       /* digits, separators skipped */
int cd_scan_iban_valid(const char *s, size_t n); /* spaces skipped */
int cd_scan_ssn_valid(const char *s, size_t n);  /* AAA-GG-SSSS or AAA GG SSSS */
double cd_scan_entropy(const char *s, size_t n); /* Shannon, bits per byte */

#endif
