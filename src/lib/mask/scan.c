/* scan.c — the scanner: the recognizers' candidate patterns
 * (scan-patterns.c) as one vectorscan database, run over the text; each
 * match goes to its pattern's validator, and what it confirms to the caller.
 *
 * Trust boundary: the scanned text is hostile.  Linear time: vectorscan is
 * an automaton; a validator either reads a window of bounded size around
 * the match or extends the span forwards/backwards, never past the end of
 * the previous span of the same pattern (`floor`), and matches ending
 * inside a span already judged are skipped.
 *
 * The database: compiling it costs ~80 ms of CPU, so the build serializes
 * it (src/gen/gen-scandb.c calls cd_scan_db_serialize) and the scanner
 * loads that copy.  It is used only when it was made from this very table
 * (SHA-256 of the patterns and flags), for this vectorscan version, and
 * vectorscan accepts it (its header, platform and CRC checks); any doubt
 * and the table is compiled as before, so a stale or damaged copy costs
 * time, never a pattern.  Loading needs only vectorscan's runtime library,
 * which opens in a fraction of the time of the whole one (hs-load.h). */
#include "scan-int.h"

#include <errno.h>
#include "hs-load.h"
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct cd_scanner {
	hs_database_t *db;
	hs_scratch_t *scratch;
	const struct cd_hs *hs;
	enum cd_scan_db source;
	char why[160]; /* why the build's database was not used */
};

static const char *const type_names[CD_SCAN_NTYPES] = {
	"email", "phone", "card", "iban", "ssn", "ipv4", "ipv6", "secret",
};

const char *cd_scan_type_name(enum cd_scan_type t)
{
	return (unsigned)t < CD_SCAN_NTYPES ? type_names[t] : NULL;
}

int cd_scan_type_parse(const char *s, enum cd_scan_type *ret)
{
	unsigned i;

	for (i = 0; s && i < CD_SCAN_NTYPES; i++) {
		if (!strcmp(s, type_names[i])) {
			*ret = (enum cd_scan_type)i;
			return 0;
		}
	}
	return -EINVAL;
}

struct scan_ctx {
	const char *t;
	size_t len;
	unsigned types;
	size_t floor[CD_SCAN_NPATTERNS]; /* end of the last span judged, per pattern */
	cd_scan_fn fn;
	void *ctx;
	int err;
};

static int on_match(unsigned int id, unsigned long long from, unsigned long long to,
                    unsigned int flags, void *vctx)
{
	struct scan_ctx *sc = vctx;
	const struct pattern *p;
	struct cand c;
	struct hit h;
	struct cd_finding f;
	int r;

	(void)flags;
	if (id >= CD_SCAN_NPATTERNS)
		return 0;
	p = &cd_scan_patterns[id];
	if (!(sc->types & (1u << p->type)) || to <= sc->floor[id] || to > sc->len)
		return 0;
	c.t = sc->t;
	c.len = sc->len;
	c.from = (size_t)from;
	c.to = (size_t)to;
	c.floor = sc->floor[id];
	if (c.from < c.floor)
		c.from = c.floor;
	memset(&h, 0, sizeof h);
	h.kind = p->kind;
	if (!p->check(&c, &h)) {
		/* Extending validators judged everything up to here. */
		if (h.judged > sc->floor[id])
			sc->floor[id] = h.judged;
		return 0;
	}
	sc->floor[id] = h.to > c.to ? h.to : c.to;
	f.type = p->type;
	f.kind = h.kind ? h.kind : p->kind;
	f.from = h.from;
	f.to = h.to;
	f.confidence = h.confidence;
	if ((r = sc->fn(sc->ctx, &f)) < 0) {
		sc->err = r;
		return 1;
	}
	return 0;
}

/* The digest that ties a serialized database to the table it came from. */
static int table_digest(unsigned char out[CD_SCAN_TABLE_DIGEST])
{
	crypto_hash_sha256_state st;
	unsigned char w[5];
	size_t i;

	if (sodium_init() < 0)
		return -EIO;
	crypto_hash_sha256_init(&st);
	crypto_hash_sha256_update(&st, (const unsigned char *)"cordon scan table 1", 20);
	for (i = 0; i < CD_SCAN_NPATTERNS; i++) {
		unsigned f = cd_scan_patterns[i].flags;
		w[0] = (unsigned char)i;
		w[1] = (unsigned char)(f >> 24);
		w[2] = (unsigned char)(f >> 16);
		w[3] = (unsigned char)(f >> 8);
		w[4] = (unsigned char)f;
		crypto_hash_sha256_update(&st, w, sizeof w);
		crypto_hash_sha256_update(&st, (const unsigned char *)cd_scan_patterns[i].re,
		                          strlen(cd_scan_patterns[i].re) + 1);
	}
	crypto_hash_sha256_final(&st, out);
	return 0;
}

static int compile(const struct cd_hs *hs, const hs_platform_info_t *platform, hs_database_t **ret,
                   struct cd_err *err)
{
	const char *exprs[CD_SCAN_NPATTERNS];
	unsigned flags[CD_SCAN_NPATTERNS], ids[CD_SCAN_NPATTERNS];
	hs_compile_error_t *cerr = NULL;
	size_t i;
	int r;

	for (i = 0; i < CD_SCAN_NPATTERNS; i++) {
		exprs[i] = cd_scan_patterns[i].re;
		flags[i] = cd_scan_patterns[i].flags;
		ids[i] = (unsigned)i;
	}
	if (hs->compile_multi(exprs, flags, ids, (unsigned)CD_SCAN_NPATTERNS, HS_MODE_BLOCK,
	                      platform, ret, &cerr) == HS_SUCCESS)
		return 0;
	r = cd_err_set(err, -EIO, "scanner: pattern %d: %s", cerr ? cerr->expression : -1,
	               cerr && cerr->message ? cerr->message : "compile failed");
	hs->free_compile_error(cerr);
	return r;
}

/* Load blob into *ret with vectorscan's runtime and return the runtime,
 * or return NULL and say in why why not. */
static const struct cd_hs *load_blob(const struct cd_scan_blob *blob, hs_database_t **ret,
                                     char *why, size_t whylen)
{
	unsigned char table[CD_SCAN_TABLE_DIGEST];
	const struct cd_hs *hs;
	struct cd_err err;
	char *info = NULL;
	hs_error_t e;

	if (!blob || !blob->bytes || !blob->len) {
		snprintf(why, whylen, "no pattern database was built in");
		return NULL;
	}
	if (table_digest(table) < 0 || memcmp(table, blob->table, sizeof table) != 0) {
		snprintf(why, whylen, "the built-in pattern database is of another pattern table");
		return NULL;
	}
	if (!(hs = cd_hs_load_runtime(&err))) {
		snprintf(why, whylen, "%.120s", err.msg);
		return NULL;
	}
	/* Its header first: the reason then names the version. */
	e = hs->serialized_database_info((const char *)blob->bytes, blob->len, &info);
	free(info);
	if (e == HS_DB_VERSION_ERROR) {
		const char *v = hs->version(); /* "5.4.9 2023-..." */
		int vl = (int)strcspn(v, " ");
		snprintf(
		        why, whylen,
		        "the built-in pattern database is for another vectorscan version than %.*s",
		        vl < 32 ? vl : 32, v);
		return NULL;
	}
	if (e != HS_SUCCESS) {
		snprintf(why, whylen, "the built-in pattern database is not one vectorscan reads");
		return NULL;
	}
	e = hs->deserialize_database((const char *)blob->bytes, blob->len, ret);
	if (e == HS_SUCCESS)
		return hs;
	*ret = NULL;
	snprintf(why, whylen, "the built-in pattern database does not load: %s",
	         e == HS_DB_VERSION_ERROR    ? "another vectorscan version"
	         : e == HS_DB_PLATFORM_ERROR ? "made for another platform"
	         : e == HS_DB_MODE_ERROR     ? "not a block-mode database"
	         : e == HS_NOMEM             ? "out of memory"
	                                     : "damaged");
	return NULL;
}

int cd_scanner_new_from(const struct cd_scan_blob *blob, struct cd_scanner **ret,
                        struct cd_err *err)
{
	struct cd_scanner *s = calloc(1, sizeof *s);
	int r;

	if (!s)
		return cd_err_set(err, -ENOMEM, "out of memory");
	s->hs = load_blob(blob, &s->db, s->why, sizeof s->why);
	s->source = CD_SCAN_DB_BUILT_IN;
	if (!s->hs) {
		s->source = CD_SCAN_DB_COMPILED;
		if (!(s->hs = cd_hs_load(err))) {
			free(s);
			return err ? err->code : -ENOENT;
		}
		if ((r = compile(s->hs, NULL, &s->db, err)) < 0) {
			free(s);
			return r;
		}
	}
	if (s->hs->alloc_scratch(s->db, &s->scratch) != HS_SUCCESS) {
		cd_scanner_free(s);
		return cd_err_set(err, -ENOMEM, "scanner: cannot allocate scratch space");
	}
	*ret = s;
	return 0;
}

int cd_scanner_new(struct cd_scanner **ret, struct cd_err *err)
{
	return cd_scanner_new_from(&cd_scan_blob, ret, err);
}

enum cd_scan_db cd_scanner_db(const struct cd_scanner *s, const char **ret_why)
{
	if (ret_why)
		*ret_why = s->why;
	return s->source;
}

int cd_scan_db_serialize(char **ret_bytes, size_t *ret_len,
                         unsigned char ret_table[CD_SCAN_TABLE_DIGEST], struct cd_err *err)
{
	/* Generic tuning and no optional CPU features: the database loads on
	 * every CPU of the architecture; vectorscan's runtime still picks its
	 * fastest scanning code for the host. */
	const hs_platform_info_t portable = { .tune = HS_TUNE_FAMILY_GENERIC, .cpu_features = 0 };
	const struct cd_hs *hs = cd_hs_load(err);
	unsigned char table[CD_SCAN_TABLE_DIGEST];
	hs_database_t *db = NULL;
	char *bytes = NULL;
	size_t len = 0;
	int r;

	if (!hs)
		return err ? err->code : -ENOENT;
	if ((r = table_digest(table)) < 0)
		return cd_err_set(err, r, "scanner: libsodium failed to initialize");
	if ((r = compile(hs, &portable, &db, err)) < 0)
		return r;
	if (hs->serialize_database(db, &bytes, &len) != HS_SUCCESS || !bytes) {
		hs->free_database(db);
		return cd_err_set(err, -ENOMEM, "scanner: cannot serialize the pattern database");
	}
	hs->free_database(db);
	*ret_bytes = bytes;
	*ret_len = len;
	memcpy(ret_table, table, sizeof table);
	return 0;
}

void cd_scanner_free(struct cd_scanner *s)
{
	if (!s)
		return;
	if (s->scratch)
		s->hs->free_scratch(s->scratch);
	if (s->db)
		s->hs->free_database(s->db);
	free(s);
}

int cd_scan(struct cd_scanner *s, const char *text, size_t len, unsigned types, cd_scan_fn fn,
            void *ctx)
{
	struct scan_ctx sc;
	hs_error_t e;

	if (!s || !fn || (!text && len))
		return -EINVAL;
	if (len > CD_SCAN_MAX_BYTES)
		return -CD_E_LIMIT;
	if (!len || !(types & CD_SCAN_ALL))
		return 0;
	memset(&sc, 0, sizeof sc);
	sc.t = text;
	sc.len = len;
	sc.types = types;
	sc.fn = fn;
	sc.ctx = ctx;
	e = s->hs->scan(s->db, text, (unsigned)len, 0, s->scratch, on_match, &sc);
	if (sc.err)
		return sc.err;
	if (e != HS_SUCCESS)
		return -EIO;
	return 0;
}
