/* test-scan.c — the recognizers: for each, a table of text that must be
 * found (with the exact span) and text that must not, on the pattern
 * database built in and on one compiled at run time, which must find
 * exactly the same; a missing, damaged or foreign built-in database must
 * be refused and replaced by compiling; the validators on their own;
 * hostile shapes that must stay linear and in bounds. */
#include "../tap.h"

#include "mask/scan.h"

#include <errno.h>
#include <stdint.h>

struct got {
	char spans[16][160];
	int types[16];
	size_t n;
	const char *text;
};

static int collect(void *ctx, const struct cd_finding *f)
{
	struct got *g = ctx;
	size_t n = f->to - f->from;

	if (f->from > f->to || f->confidence < 1 || f->confidence > 100)
		return -EINVAL;
	if (g->n < 16) {
		if (n >= sizeof g->spans[0])
			n = sizeof g->spans[0] - 1;
		memcpy(g->spans[g->n], g->text + f->from, n);
		g->spans[g->n][n] = '\0';
		g->types[g->n] = (int)f->type;
		g->n++;
	}
	return 0;
}

/* Is `want` found as a span of `type` in `text` (want NULL: nothing of
 * that type is)? */
static void check(struct cd_scanner *s, const char *path, enum cd_scan_type type, const char *text,
                  const char *want)
{
	struct got g;
	size_t i;
	int found = 0, any = 0, r;

	memset(&g, 0, sizeof g);
	g.text = text;
	r = cd_scan(s, text, strlen(text), 1u << type, collect, &g);
	for (i = 0; i < g.n; i++) {
		any |= g.types[i] == (int)type;
		if (want && g.types[i] == (int)type && !strcmp(g.spans[i], want))
			found = 1;
	}
	if (want) {
		if (!ok(r == 0 && found, "%s: %s: finds '%s' in '%s'", path,
		        cd_scan_type_name(type), want, text))
			for (i = 0; i < g.n; i++)
				diag("got '%s'", g.spans[i]);
	} else {
		if (!ok(r == 0 && !any, "%s: %s: nothing in '%s'", path, cd_scan_type_name(type),
		        text))
			for (i = 0; i < g.n; i++)
				diag("got '%s'", g.spans[i]);
	}
}

static const struct {
	enum cd_scan_type type;
	const char *text, *want; /* want NULL: must not be found */
} cases[] = {
	/* emails */
	{ CD_SCAN_EMAIL, "mail alice.smith@example.com now", "alice.smith@example.com" },
	{ CD_SCAN_EMAIL, "<bob+tag@mail.example.co.uk>", "bob+tag@mail.example.co.uk" },
	{ CD_SCAN_EMAIL, "\"x_y-z%1@sub-domain.example.org\",", "x_y-z%1@sub-domain.example.org" },
	{ CD_SCAN_EMAIL, "end of sentence: carol@example.com.", "carol@example.com" },
	{ CD_SCAN_EMAIL, "user@localhost", NULL },
	{ CD_SCAN_EMAIL, "a@b.c", NULL },
	{ CD_SCAN_EMAIL, "git@github.com:org/repo", "git@github.com" },
	{ CD_SCAN_EMAIL, "x@-bad.com", NULL },
	{ CD_SCAN_EMAIL, "x@bad-.com", NULL },
	{ CD_SCAN_EMAIL, "a..b@example.com", NULL },
	{ CD_SCAN_EMAIL, "@example.com", NULL },
	{ CD_SCAN_EMAIL, "name@example.123", NULL },
	/* phones */
	{ CD_SCAN_PHONE, "call +44 20 7946 0958 today", "+44 20 7946 0958" },
	{ CD_SCAN_PHONE, "+1-202-555-0143,", "+1-202-555-0143" },
	{ CD_SCAN_PHONE, "tel:+12025550143", "+12025550143" },
	{ CD_SCAN_PHONE, "+1 (202) 555-0143", "+1 (202) 555-0143" },
	{ CD_SCAN_PHONE, "office (212) 555-0187", "(212) 555-0187" },
	{ CD_SCAN_PHONE, "office 212-555-0187", "212-555-0187" },
	{ CD_SCAN_PHONE, "london 020 7946 0958", "020 7946 0958" },
	{ CD_SCAN_PHONE, "paris 01 23 45 67 89", "01 23 45 67 89" },
	{ CD_SCAN_PHONE, "1+2 = 3", NULL },
	{ CD_SCAN_PHONE, "+123", NULL },
	{ CD_SCAN_PHONE, "+1234567890123456789", NULL },
	{ CD_SCAN_PHONE, "version 2024-01-15", NULL },
	{ CD_SCAN_PHONE, "112-555-0187", NULL }, /* area code cannot start with 1 */
	{ CD_SCAN_PHONE, "id 1212-555-0187-1", NULL },
	/* payment cards */
	{ CD_SCAN_CARD, "card 4111 1111 1111 1111 exp", "4111 1111 1111 1111" },
	{ CD_SCAN_CARD, "4111111111111111", "4111111111111111" },
	{ CD_SCAN_CARD, "amex 3782-822463-10005", "3782-822463-10005" },
	{ CD_SCAN_CARD, "mc 5555555555554444.", "5555555555554444" },
	{ CD_SCAN_CARD, "disc 6011111111111117", "6011111111111117" },
	{ CD_SCAN_CARD, "4111111111111112", NULL },        /* Luhn fails */
	{ CD_SCAN_CARD, "4111 1111-1111 1111", NULL },     /* mixed separators */
	{ CD_SCAN_CARD, "411111111111", NULL },            /* too short */
	{ CD_SCAN_CARD, "41111111111111111111111", NULL }, /* too long */
	{ CD_SCAN_CARD, "order 12345678901234", NULL },
	/* IBANs */
	{ CD_SCAN_IBAN, "DE89 3704 0044 0532 0130 00", "DE89 3704 0044 0532 0130 00" },
	{ CD_SCAN_IBAN, "pay GB82WEST12345698765432.", "GB82WEST12345698765432" },
	{ CD_SCAN_IBAN, "FR1420041010050500013M02606", "FR1420041010050500013M02606" },
	{ CD_SCAN_IBAN, "NO9386011117947", "NO9386011117947" },
	{ CD_SCAN_IBAN, "DE89 3704 0044 0532 0130 01", NULL }, /* mod-97 fails */
	{ CD_SCAN_IBAN, "GB82WEST1234569876543", NULL },       /* one short for GB */
	{ CD_SCAN_IBAN, "XX82WEST12345698765432", NULL },      /* no such country */
	{ CD_SCAN_IBAN, "DE8937040044053201300099", NULL },    /* too long for DE */
	/* SSNs */
	{ CD_SCAN_SSN, "ssn 123-45-6789.", "123-45-6789" },
	{ CD_SCAN_SSN, "ssn 524 12 3456", "524 12 3456" },
	{ CD_SCAN_SSN, "000-12-3456", NULL },
	{ CD_SCAN_SSN, "666-12-3456", NULL },
	{ CD_SCAN_SSN, "912-12-3456", NULL },
	{ CD_SCAN_SSN, "123-00-3456", NULL },
	{ CD_SCAN_SSN, "123-45-0000", NULL },
	{ CD_SCAN_SSN, "078-05-1120", NULL },
	{ CD_SCAN_SSN, "123-45 6789", NULL },
	{ CD_SCAN_SSN, "1123-45-6789", NULL },
	/* IP addresses */
	{ CD_SCAN_IPV4, "from 192.168.1.10:22", "192.168.1.10" },
	{ CD_SCAN_IPV4, "10.0.0.1", "10.0.0.1" },
	{ CD_SCAN_IPV4, "10.0.0.256", NULL },
	{ CD_SCAN_IPV4, "version 1.2.3.4.5", NULL },
	{ CD_SCAN_IPV4, "010.1.1.1", NULL },
	{ CD_SCAN_IPV6, "host 2001:db8::1 up", "2001:db8::1" },
	{ CD_SCAN_IPV6, "[fe80::1ff:fe23:4567:890a]", "fe80::1ff:fe23:4567:890a" },
	{ CD_SCAN_IPV6, "::1", "::1" },
	{ CD_SCAN_IPV6, "at 12:30:45", NULL },
	{ CD_SCAN_IPV6, "std::vector", NULL },
	{ CD_SCAN_IPV6, "1:2:3", NULL },
	/* secrets */
	{ CD_SCAN_SECRET, "AKIAIOSFODNN7EXAMPLE", "AKIAIOSFODNN7EXAMPLE" },
	{ CD_SCAN_SECRET, "key=ASIAY34FZKBOKMUTVV7A;", "ASIAY34FZKBOKMUTVV7A" },
	{ CD_SCAN_SECRET, "AKIAIOSFODNN7EXAMPLE1", NULL }, /* too long */
	{ CD_SCAN_SECRET, "AKIAIOSFODNN7EXAMPL", NULL },   /* too short */
	{ CD_SCAN_SECRET, "ghp_aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789",
	  "ghp_aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789" },
	{ CD_SCAN_SECRET, "ghp_short", NULL },
	/* Longer than the canonical 36: masked whole, not left alone. */
	{ CD_SCAN_SECRET, "token ghp_aBcDeFgHiJkLmNoPqRsTuVwXyZ01234567890 end",
	  "ghp_aBcDeFgHiJkLmNoPqRsTuVwXyZ01234567890" },
	{ CD_SCAN_SECRET, "gho_aBcDeFgHiJkLmNoPqRsTuVwXyZ012345678901.",
	  "gho_aBcDeFgHiJkLmNoPqRsTuVwXyZ012345678901" },
	{ CD_SCAN_SECRET, "ghs_aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789_x",
	  "ghs_aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789" },
	{ CD_SCAN_SECRET, "ghp_aBcDeFgHiJkLmNoPqRsTuVwXyZ012345678", NULL }, /* 35 */
	{ CD_SCAN_SECRET, "xghp_aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789", NULL },
	{ CD_SCAN_SECRET, "glpat-xYz123AbC456dEf789gH", "glpat-xYz123AbC456dEf789gH" },
	{ CD_SCAN_SECRET, "xoxb-1234567890-abcdefghij", "xoxb-1234567890-abcdefghij" },
	{ CD_SCAN_SECRET, "xoxb-123", NULL },
	{ CD_SCAN_SECRET, "sk_live_4eC39HqLyjWDarjtT1zdp7dc", "sk_live_4eC39HqLyjWDarjtT1zdp7dc" },
	{ CD_SCAN_SECRET, "pk_live_4eC39HqLyjWDarjtT1zdp7dc", NULL }, /* publishable */
	{ CD_SCAN_SECRET,
	  "Bearer eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0."
	  "dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
	  "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0."
	  "dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U" },
	{ CD_SCAN_SECRET, "eyJub3QiOiJhIGp3dCJ9.eyJzdWIiOiIxIn0.sig", NULL }, /* no alg */
	{ CD_SCAN_SECRET, "eyJhbGciOiJIUzI1NiJ9", NULL },                     /* one segment */
	{ CD_SCAN_SECRET,
	  "-----BEGIN RSA PRIVATE KEY-----\nMIIEow\n-----END RSA PRIVATE KEY-----\n",
	  "-----BEGIN RSA PRIVATE KEY-----\nMIIEow\n-----END RSA PRIVATE KEY-----" },
	{ CD_SCAN_SECRET, "-----BEGIN OPENSSH PRIVATE KEY-----\nb3Blbn", /* truncated */
	  "-----BEGIN OPENSSH PRIVATE KEY-----\nb3Blbn" },
	{ CD_SCAN_SECRET, "-----BEGIN PUBLIC KEY-----\nMIIB\n-----END PUBLIC KEY-----", NULL },
	{ CD_SCAN_SECRET, "api_key = \"Zx9kQ2mP7vL4nR8tW3yB6cF1\"", "Zx9kQ2mP7vL4nR8tW3yB6cF1" },
	{ CD_SCAN_SECRET, "{\"client_secret\": \"9f8Kq2LmZ0xWv7Tb3NcR5yHa\"}",
	  "9f8Kq2LmZ0xWv7Tb3NcR5yHa" },
	{ CD_SCAN_SECRET, "AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
	  "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY" },
	{ CD_SCAN_SECRET, "password: hunter22", "hunter22" },
	{ CD_SCAN_SECRET, "token = aaaaaaaaaaaaaaaaaaaaaaaa", NULL }, /* low entropy */
	{ CD_SCAN_SECRET, "secret: thisisjustaplainsentence", NULL },
	{ CD_SCAN_SECRET, "the token was revoked", NULL },
	{ CD_SCAN_SECRET, "password: x", NULL },
};

static void test_tables(struct cd_scanner *s, const char *path)
{
	size_t i;

	for (i = 0; i < sizeof cases / sizeof cases[0]; i++)
		check(s, path, cases[i].type, cases[i].text, cases[i].want);
}

/* Every finding of every type, in order. */
struct all {
	struct cd_finding *f;
	size_t n, cap;
};

static int record(void *ctx, const struct cd_finding *f)
{
	struct all *a = ctx;

	if (a->n == a->cap) {
		size_t cap = a->cap ? a->cap * 2 : 64;
		struct cd_finding *nf = realloc(a->f, cap * sizeof *nf);
		if (!nf)
			return -ENOMEM;
		a->f = nf;
		a->cap = cap;
	}
	a->f[a->n++] = *f;
	return 0;
}

static int count(void *ctx, const struct cd_finding *f)
{
	(void)f;
	(*(size_t *)ctx)++;
	return 0;
}

/* Do scanners a and b report the same findings (type, kind, span,
 * confidence, order) in text? */
static int same_findings(struct cd_scanner *a, struct cd_scanner *b, const char *text, size_t len)
{
	struct all fa = { 0 }, fb = { 0 };
	size_t i;
	int same;

	same = cd_scan(a, text, len, CD_SCAN_ALL, record, &fa) == 0 &&
	       cd_scan(b, text, len, CD_SCAN_ALL, record, &fb) == 0 && fa.n == fb.n;
	for (i = 0; same && i < fa.n; i++)
		same = fa.f[i].type == fb.f[i].type && !strcmp(fa.f[i].kind, fb.f[i].kind) &&
		       fa.f[i].from == fb.f[i].from && fa.f[i].to == fb.f[i].to &&
		       fa.f[i].confidence == fb.f[i].confidence;
	free(fa.f);
	free(fb.f);
	return same;
}

/* The hostile shapes of test_hostile, one MiB each. */
static const char *const hostile_units[] = { "1",
	                                     "1 ",
	                                     "a@",
	                                     "a.",
	                                     "+1",
	                                     ":",
	                                     "ab",
	                                     "eyJ",
	                                     "DE89",
	                                     "token=",
	                                     "-----BEGIN PRIVATE KEY-----" };

static char *repeat(const char *unit, size_t len)
{
	char *buf = malloc(len);
	size_t ul = strlen(unit), k;

	for (k = 0; buf && k < len; k++)
		buf[k] = unit[k % ul];
	return buf;
}

/* The built-in database and a compiled one find exactly the same, case by
 * case, in all the case texts at once, and in the hostile shapes. */
static void test_same(struct cd_scanner *built, struct cd_scanner *compiled)
{
	size_t i, n = 0, diff = 0, joined_cases = 0, found = 0, len = 1 << 20;
	int r;
	char joined[16384];

	for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		size_t l = strlen(cases[i].text);
		diff += !same_findings(built, compiled, cases[i].text, l);
		if (n + l + 1 < sizeof joined) {
			memcpy(joined + n, cases[i].text, l);
			joined[n + l] = '\n';
			n += l + 1;
			joined_cases++;
		}
	}
	is_int(diff, 0, "both databases find the same in each case text, every type asked");
	r = cd_scan(built, joined, n, CD_SCAN_ALL, count, &found);
	ok(r == 0 && found >= 40, "... %zu findings in all the case texts", found);
	ok(joined_cases == sizeof cases / sizeof cases[0] &&
	           same_findings(built, compiled, joined, n),
	   "... and in all of them at once (%zu bytes)", n);
	diff = 0;
	for (i = 0; i < sizeof hostile_units / sizeof hostile_units[0]; i++) {
		char *buf = repeat(hostile_units[i], len);
		diff += !buf || !same_findings(built, compiled, buf, len);
		free(buf);
	}
	is_int(diff, 0, "... and in 1 MiB of each hostile shape");
}

/* A scanner made from blob: it works, and its database came from where it
 * should. */
static void from_blob(const struct cd_scan_blob *blob, struct cd_scanner *ref, const char *what,
                      const char *want_why)
{
	struct cd_scanner *s = NULL;
	struct cd_err err;
	const char *why = NULL;
	enum cd_scan_db db;
	static const char text[] = "mail bob@example.com, card 4111 1111 1111 1111, "
	                           "key AKIAIOSFODNN7EXAMPLE from 10.0.0.1";

	if (!ok(cd_scanner_new_from(blob, &s, &err) == 0, "%s: a scanner is made", what)) {
		diag("%s", err.msg);
		return;
	}
	db = cd_scanner_db(s, &why);
	if (!want_why) {
		is_int(db, CD_SCAN_DB_BUILT_IN, "%s: its database is loaded", what);
		is_str(why, "", "... with no reason to compile");
	} else {
		is_int(db, CD_SCAN_DB_COMPILED, "%s: refused, the patterns are compiled", what);
		ok(why && strstr(why, want_why), "... saying why ('%s')", want_why);
		diag("why: %s", why ? why : "(null)");
	}
	ok(same_findings(s, ref, text, sizeof text - 1), "%s: ... and it finds what it should",
	   what);
	cd_scanner_free(s);
}

/* The build's database is this table's, compiled for any CPU; any other
 * is refused. */
static void test_blob(struct cd_scanner *ref)
{
	const struct cd_scan_blob *b = &cd_scan_blob;
	struct cd_scan_blob bad;
	unsigned char table[CD_SCAN_TABLE_DIGEST], *copy;
	char *bytes = NULL;
	size_t len = 0;
	struct cd_err err;

	if (!ok(b && b->len > 0, "the build made a pattern database (%zu bytes)", b ? b->len : 0))
		return;
	if (ok(cd_scan_db_serialize(&bytes, &len, table, &err) == 0, "the table serializes"))
		ok(len == b->len && !memcmp(bytes, b->bytes, len) &&
		           !memcmp(table, b->table, sizeof table),
		   "... to exactly the build's database and digest");
	free(bytes);
	from_blob(b, ref, "the build's database", NULL);
	from_blob(NULL, ref, "no database", "no pattern database was built in");

	copy = malloc(b->len);
	if (!ok(copy != NULL, "a copy to damage"))
		return;
	bad = *b;
	bad.bytes = copy;
	memcpy(copy, b->bytes, b->len);
	bad.table[0] ^= 1;
	from_blob(&bad, ref, "another table's digest", "another pattern table");
	bad.table[0] ^= 1;
	from_blob(&bad, ref, "an intact copy", NULL);
	copy[b->len / 2] ^= 0x5a;
	from_blob(&bad, ref, "a flipped byte in the middle", "damaged");
	copy[b->len / 2] ^= 0x5a;
	bad.len = b->len - 1;
	from_blob(&bad, ref, "one byte short", "built-in pattern database");
	bad.len = 64;
	from_blob(&bad, ref, "only the header", "built-in pattern database");
	bad.len = b->len;
	copy[0] ^= 0xff;
	from_blob(&bad, ref, "no vectorscan magic", "not one vectorscan reads");
	copy[0] ^= 0xff;
	/* The header's version and platform words (vectorscan 5.4's layout:
	 * magic, version, length, platform); either way it must not load. */
	copy[4] ^= 1;
	from_blob(&bad, ref, "another version", "another vectorscan version");
	copy[4] ^= 1;
	copy[16] ^= 1;
	from_blob(&bad, ref, "another platform", "another platform");
	copy[16] ^= 1;
	memset(copy, 'x', b->len);
	from_blob(&bad, ref, "not a database", "not one vectorscan reads");
	free(copy);
}

static void test_validators(void)
{
	ok(cd_scan_luhn("79927398713", 11), "luhn: valid");
	ok(!cd_scan_luhn("79927398710", 11), "luhn: invalid");
	ok(cd_scan_luhn("4111-1111-1111-1111", 19), "luhn: separators skipped");
	ok(cd_scan_iban_valid("GB82 WEST 1234 5698 7654 32", 27), "iban: valid with spaces");
	ok(!cd_scan_iban_valid("GB82 WEST 1234 5698 7654 33", 27), "iban: bad check digits");
	ok(!cd_scan_iban_valid("gb82west12345698765432", 22), "iban: lower case refused");
	ok(cd_scan_ssn_valid("123-45-6789", 11), "ssn: valid");
	ok(!cd_scan_ssn_valid("123-45-678", 10), "ssn: short");
	ok(cd_scan_entropy("aaaa", 4) == 0, "entropy of one symbol is 0");
	ok(cd_scan_entropy("abcd", 4) == 2, "entropy of four symbols is 2 bits");
}

static int stop(void *ctx, const struct cd_finding *f)
{
	(void)ctx;
	(void)f;
	return -ECANCELED;
}

/* Hostile shapes: long runs that every pattern could start in. */
static void test_hostile(struct cd_scanner *s)
{
	size_t len = 1 << 20, i, n;

	for (i = 0; i < sizeof hostile_units / sizeof hostile_units[0]; i++) {
		char *buf = repeat(hostile_units[i], len);
		n = 0;
		ok(buf && cd_scan(s, buf, len, CD_SCAN_ALL, count, &n) == 0, "1 MiB of '%s' scans",
		   hostile_units[i]);
		free(buf);
	}
	is_int(cd_scan(s, "a@example.com", 13, CD_SCAN_ALL, stop, NULL), -ECANCELED,
	       "a callback's error stops the scan");
	n = 0;
	is_int(cd_scan(s, "a@example.com", 13, 1u << CD_SCAN_CARD, count, &n), 0,
	       "types not asked for are not reported");
	is_int(n, 0, "... none");
	is_int(cd_scan(s, "", 0, CD_SCAN_ALL, count, &n), 0, "empty text");
}

static void test_names(void)
{
	enum cd_scan_type t;
	unsigned i;

	for (i = 0; i < CD_SCAN_NTYPES; i++)
		ok(cd_scan_type_parse(cd_scan_type_name((enum cd_scan_type)i), &t) == 0 && t == i,
		   "type %s round-trips", cd_scan_type_name((enum cd_scan_type)i));
	is_int(cd_scan_type_parse("Email", &t), -EINVAL, "names are exact");
	ok(cd_scan_type_name(CD_SCAN_NTYPES) == NULL, "no name past the last type");
}

int main(void)
{
	struct cd_scanner *s = NULL, *c = NULL;
	struct cd_err err;

	tap_start(60);
	if (!ok(cd_scanner_new(&s, &err) == 0, "a scanner is made"))
		return tap_done();
	is_int(cd_scanner_db(s, NULL), CD_SCAN_DB_BUILT_IN, "... on the build's pattern database");
	if (!ok(cd_scanner_new_from(NULL, &c, &err) == 0, "the pattern database compiles")) {
		cd_scanner_free(s);
		return tap_done();
	}
	is_int(cd_scanner_db(c, NULL), CD_SCAN_DB_COMPILED, "... at run time without one built in");
	test_tables(s, "built-in");
	test_tables(c, "compiled");
	test_same(s, c);
	test_blob(c);
	test_validators();
	test_hostile(s);
	test_names();
	cd_scanner_free(c);
	cd_scanner_free(s);
	return tap_done();
}
