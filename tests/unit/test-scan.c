/* test-scan.c — the recognizers: for each, a table of text that must be
 * found (with the exact span) and text that must not; the validators on
 * their own; hostile shapes that must stay linear and in bounds. */
#include "../tap.h"

#include "scan.h"

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
static void check(struct cd_scanner *s, enum cd_scan_type type, const char *text, const char *want)
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
		if (!ok(r == 0 && found, "%s: finds '%s' in '%s'", cd_scan_type_name(type), want,
		        text))
			for (i = 0; i < g.n; i++)
				diag("got '%s'", g.spans[i]);
	} else {
		if (!ok(r == 0 && !any, "%s: nothing in '%s'", cd_scan_type_name(type), text))
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

static void test_tables(struct cd_scanner *s)
{
	size_t i;

	for (i = 0; i < sizeof cases / sizeof cases[0]; i++)
		check(s, cases[i].type, cases[i].text, cases[i].want);
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

static int count(void *ctx, const struct cd_finding *f)
{
	(void)f;
	(*(size_t *)ctx)++;
	return 0;
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
	static const char *const units[] = { "1",
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
	size_t len = 1 << 20, i, k, n;
	char *buf = malloc(len);

	for (i = 0; buf && i < sizeof units / sizeof units[0]; i++) {
		size_t ul = strlen(units[i]);
		for (k = 0; k < len; k++)
			buf[k] = units[i][k % ul];
		n = 0;
		ok(cd_scan(s, buf, len, CD_SCAN_ALL, count, &n) == 0, "1 MiB of '%s' scans",
		   units[i]);
	}
	free(buf);
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
	struct cd_scanner *s = NULL;
	struct cd_err err;

	tap_start(60);
	if (!ok(cd_scanner_new(&s, &err) == 0, "the pattern database compiles"))
		return tap_done();
	test_tables(s);
	test_validators();
	test_hostile(s);
	test_names();
	cd_scanner_free(s);
	return tap_done();
}
