/* test-match.c — the typed matchers: hosts (THREATS row 24), paths and
 * globs (row 34), argv prefixes, ports, named arguments.  Table-driven. */
#include "../tap.h"

#include "util/err.h"
#include "policy/match-host.h"
#include "util/match.h"

#include <errno.h>

static void test_host_normalize(void)
{
	static const struct {
		const char *in;
		int ret; /* >= 0: expect `want` */
		const char *want;
	} cases[] = {
		{ "example.com", 11, "example.com" },
		{ "EXAMPLE.COM.", 11, "example.com" },
		{ "Api.GitHub.com", 14, "api.github.com" },
		{ "xn--bcher-kva.example", 21, "xn--bcher-kva.example" },
		{ "a-b.c", 5, "a-b.c" },
		{ "1.2.3.4", 7, "1.2.3.4" },
		{ "[::1]", 5, "[::1]" },
		{ "[0:0:0:0:0:0:0:1]", 5, "[::1]" },
		{ "[::FFFF:127.0.0.1]", 18, "[::ffff:127.0.0.1]" },
		{ "", -EINVAL, NULL },
		{ ".", -EINVAL, NULL },
		{ "example..com", -EINVAL, NULL },
		{ "example.com..", -EINVAL, NULL },
		{ "-example.com", -EINVAL, NULL },
		{ "example-.com", -EINVAL, NULL },
		{ "exa_mple.com", -EINVAL, NULL },
		{ "exa mple.com", -EINVAL, NULL },
		{ "*.example.com", -EINVAL, NULL },
		/* IDNA2008 (no UTS #46 mapping): U-labels become A-labels,
		 * A-labels must be valid, nothing is folded onto ASCII. */
		{ "b\xc3\xbc"
		  "cher.example",
		  21, "xn--bcher-kva.example" },
		{ "b\xc3\xbc"
		  "cher.example.",
		  21, "xn--bcher-kva.example" },
		{ "Api.b\xc3\xbc"
		  "cher.example",
		  25, "api.xn--bcher-kva.example" },
		{ "XN--BCHER-KVA.example", 21, "xn--bcher-kva.example" },
		{ "u\xcc\x88"
		  "ber.example",
		  19, "xn--ber-goa.example" },                  /* decomposed: put in NFC */
		{ "fa\xc3\x9f.de", 13, "xn--fa-hia.de" },       /* IDNA2008: sharp s kept */
		{ "\xd0\xb0pple.com", 16, "xn--pple-43d.com" }, /* Cyrillic a: its own name */
		{ "B\xc3\x9c"
		  "CHER.example",
		  -EINVAL, NULL }, /* upper-case Unicode */
		{ "\xef\xbd\x85\xef\xbd\x98\xef\xbd\x81mple.com", -EINVAL, NULL }, /* full-width */
		{ "\xef\xbc\x91\xef\xbc\x92\xef\xbc\x97.0.0.1", -EINVAL,
		  NULL },                            /* full-width 127 */
		{ "xn--zz.example", -EINVAL, NULL }, /* bad punycode */
		{ "xn--.example", -EINVAL, NULL },
		{ "xn--a-ecp.ru", -EINVAL,
		  NULL }, /* decodes to "a\u2014" (em dash): not a U-label */
		{ "\xff.example", -EINVAL, NULL }, /* not UTF-8 */
		{ "\xc3.example", -EINVAL, NULL }, /* truncated UTF-8 */
		{ "a\xe2\x80\x8d"
		  "b.example",
		  -EINVAL, NULL }, /* zero-width joiner between Latin letters */
		{ "ex\xc3\xa4mple_.com", -EINVAL, NULL },
		{ "2130706433", -EINVAL, NULL },
		{ "0177.0.0.1", -EINVAL, NULL },
		{ "0x7f000001", -EINVAL, NULL },
		{ "1.0x7f", -EINVAL, NULL },
		{ "0x7f.1", -EINVAL, NULL },
		{ "0xdead.example.com", 18, "0xdead.example.com" },
		{ "127.1", -EINVAL, NULL },
		{ "256.1.1.1", -EINVAL, NULL },
		{ "1.2.3.4.5", -EINVAL, NULL },
		{ "[::1%eth0]", -EINVAL, NULL },
		{ "[::1", -EINVAL, NULL },
		{ "[]", -EINVAL, NULL },
	};
	char out[CD_HOST_MAX];
	size_t i;

	for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		int r = cd_host_normalize(cases[i].in, strlen(cases[i].in), out, sizeof out);
		is_int(r, cases[i].ret, "host_normalize '%s'", cases[i].in);
		if (cases[i].want && r >= 0)
			is_str(out, cases[i].want, "host_normalize '%s' result", cases[i].in);
	}
	/* The length is honoured: a NUL inside is refused, bytes past len are
	 * never read. */
	is_int(cd_host_normalize("a.com\0evil", 10, out, sizeof out), -EINVAL,
	       "NUL inside refused");
	is_int(cd_host_normalize("a.comXXXX", 5, out, sizeof out), 5, "only len bytes read");
	is_int(cd_host_normalize("example.com", 11, out, 5), -ENAMETOOLONG, "small out refused");
	{
		char big[300];
		memset(big, 'a', sizeof big);
		is_int(cd_host_normalize(big, 64, out, sizeof out), -EINVAL, "label of 64 refused");
		is_int(cd_host_normalize(big, 63, out, sizeof out), 63, "label of 63 accepted");
	}
}

static void test_host_match(void)
{
	static const struct {
		const char *pattern, *host;
		int want;
	} cases[] = {
		{ "*.example.com", "a.example.com", 1 },
		{ "*.example.com", "a.b.example.com", 1 },
		{ "*.example.com", "A.EXAMPLE.COM.", 1 },
		{ "*.example.com", "example.com", 0 },
		{ "*.example.com", "evilexample.com", 0 },
		{ "*.example.com", "example.com.evil.net", 0 },
		{ "*.example.com", ".example.com", 0 },
		{ "example.com", "EXAMPLE.COM.", 1 },
		{ "example.com", "example.com", 1 },
		{ "example.com", "a.example.com", 0 },
		{ "example.com", "example.co", 0 },
		{ "example.com", "ex\xd0\xb0mple.com", 0 },
		/* IDNA: a U-label pattern and its A-label are one name. */
		{ "b\xc3\xbc"
		  "cher.example",
		  "xn--bcher-kva.example", 1 },
		{ "xn--bcher-kva.example",
		  "b\xc3\xbc"
		  "cher.example",
		  1 },
		{ "*.b\xc3\xbc"
		  "cher.example",
		  "www.xn--bcher-kva.example", 1 },
		{ "*.xn--bcher-kva.example",
		  "www.b\xc3\xbc"
		  "cher.example",
		  1 },
		{ "*.b\xc3\xbc"
		  "cher.example",
		  "xn--bcher-kva.example", 0 },
		{ "apple.com", "\xd0\xb0pple.com", 0 },
		{ "apple.com", "xn--pple-43d.com", 0 },
		{ "example.com", "\xef\xbd\x85xample.com", 0 },
		{ "B\xc3\x9c"
		  "CHER.example",
		  "xn--bcher-kva.example", 0 }, /* pattern not normalized */
		{ "u\xcc\x88"
		  "ber.example",
		  "xn--ber-goa.example", 0 }, /* pattern not in NFC */
		{ "XN--BCHER-KVA.example", "xn--bcher-kva.example", 0 },
		{ "EXAMPLE.COM", "example.com", 0 }, /* pattern not normalized: never */
		{ "*.com", "example.com", 0 },       /* wildcard over a TLD refused */
		{ "*example.com", "aexample.com", 0 },
		{ "*.1.2.3", "4.1.2.3", 0 },
		{ "1.2.3.4", "1.2.3.4", 1 },
		{ "[::1]", "[0::1]", 1 },
		{ "example.com", "", 0 },
	};
	size_t i;

	for (i = 0; i < sizeof cases / sizeof cases[0]; i++)
		is_int(cd_host_match(cases[i].pattern, cases[i].host), cases[i].want,
		       "host_match '%s' '%s'", cases[i].pattern, cases[i].host);
	is_int(cd_host_pattern_valid("*.example.com"), 0, "wildcard pattern valid");
	is_int(cd_host_pattern_valid("example.com."), -EINVAL, "trailing dot pattern invalid");
	is_int(cd_host_pattern_valid("a.*.com"), -EINVAL, "inner wildcard invalid");
	/* Wildcards over public suffixes (libpsl's built-in list): refused
	 * with their own error; a registrable domain under one is fine. */
	{
		static const char *const suffixes[] = { "*.co.uk", "*.github.io", "*.com.au",
			                                "*.s3.amazonaws.com",
			                                "*.xn--80au.xn--90a3ac" };
		for (i = 0; i < sizeof suffixes / sizeof suffixes[0]; i++)
			is_int(cd_host_pattern_valid(suffixes[i]), -CD_E_DENIED,
			       "wildcard over public suffix '%s' refused", suffixes[i]);
		is_int(cd_host_pattern_valid("*.example.co.uk"), 0,
		       "wildcard under a registrable domain of co.uk valid");
		is_int(cd_host_pattern_valid("*.alice.github.io"), 0,
		       "wildcard under a github.io site valid");
		is_int(cd_host_match("*.co.uk", "bbc.co.uk"), 0, "'*.co.uk' matches nothing");
		is_int(cd_host_match("*.example.co.uk", "www.example.co.uk"), 1,
		       "'*.example.co.uk' matches www.example.co.uk");
	}
	{
		char out[CD_HOST_MAX];
		is_int(cd_host_pattern_normalize("*.b\xc3\xbc"
		                                 "cher.example",
		                                 out, sizeof out),
		       23, "a Unicode wildcard pattern normalizes");
		is_str(out, "*.xn--bcher-kva.example", "  to its A-labels");
		is_int(cd_host_pattern_normalize("example.com", out, 5), -ENAMETOOLONG,
		       "pattern_normalize: small out refused");
		is_int(cd_host_pattern_normalize("*.xn--zz.example", out, sizeof out), -EINVAL,
		       "pattern_normalize: a bad A-label is refused");
	}
}

static void test_path_canon(void)
{
	static const struct {
		const char *in;
		int ret;
		const char *want;
	} cases[] = {
		{ "/", 1, "/" },
		{ "//", 1, "/" },
		{ "/a/b", 4, "/a/b" },
		{ "/a//b/", 4, "/a/b" },
		{ "/a/./b/.", 4, "/a/b" },
		{ "/a/b/../c", 4, "/a/c" },
		{ "/a/b/../../c", 2, "/c" },
		{ "/a/..", 1, "/" },
		{ "/..", -EPERM, NULL },
		{ "/a/../..", -EPERM, NULL },
		{ "/a/../../etc/passwd", -EPERM, NULL },
		{ "a/b", -EINVAL, NULL },
		{ "", -EINVAL, NULL },
		{ "/a/...", 6, "/a/..." },
		{ "/A/b", 4, "/A/b" },
	};
	char out[64];
	size_t i;

	for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		int r = cd_path_canon(cases[i].in, strlen(cases[i].in), out, sizeof out);
		is_int(r, cases[i].ret, "path_canon '%s'", cases[i].in);
		if (cases[i].want && r >= 0)
			is_str(out, cases[i].want, "path_canon '%s' result", cases[i].in);
	}
	is_int(cd_path_canon("/a\0b", 4, out, sizeof out), -EINVAL, "NUL in a path refused");
	is_int(cd_path_canon("/abcdefgh", 9, out, 5), -ENAMETOOLONG, "too long refused");
}

static void test_glob(void)
{
	static const struct {
		const char *glob;
		int valid;
	} v[] = {
		{ "/", 1 },         { "/repo/**", 1 },   { "/repo/*.c", 1 },   { "/a/?/b", 1 },
		{ "/**", 1 },       { "/a/**/b/**", 1 }, { "repo/**", 0 },     { "/repo/", 0 },
		{ "/repo//x", 0 },  { "/repo/../x", 0 }, { "/repo/./x", 0 },   { "/repo/**x", 0 },
		{ "/repo/a**", 0 }, { "/repo/[ab]", 0 }, { "/repo/{a,b}", 0 }, { "/re\\po", 0 },
		{ "", 0 },
	};
	static const struct {
		const char *glob, *path;
		int want;
	} m[] = {
		{ "/repo/**", "/repo", 1 },
		{ "/repo/**", "/repo/a", 1 },
		{ "/repo/**", "/repo/a/b/c", 1 },
		{ "/repo/**", "/repox", 0 },
		{ "/repo/**", "/repox/a", 0 },
		{ "/repo/**", "/", 0 },
		{ "/repo/**", "/Repo/a", 0 },
		{ "/repo/**", "/r\xd0\xb5po/a", 0 }, /* Cyrillic e */
		{ "/repo/*", "/repo/a", 1 },
		{ "/repo/*", "/repo/a/b", 0 },
		{ "/repo/*", "/repo", 0 },
		{ "/repo/*.c", "/repo/x.c", 1 },
		{ "/repo/*.c", "/repo/x.h", 0 },
		{ "/repo/*.c", "/repo/.c", 1 },
		{ "/repo/*.c", "/repo/d/x.c", 0 },
		{ "/repo/**/*.c", "/repo/x.c", 1 },
		{ "/repo/**/*.c", "/repo/a/b/x.c", 1 },
		{ "/repo/**/*.c", "/repo/a/b/x.cc", 0 },
		{ "/a/**/b/**/c", "/a/b/c", 1 },
		{ "/a/**/b/**/c", "/a/x/b/y/z/c", 1 },
		{ "/a/**/b/**/c", "/a/x/y/c", 0 },
		{ "/a/?", "/a/b", 1 },
		{ "/a/?", "/a/bc", 0 },
		{ "/**", "/", 1 },
		{ "/**", "/anything/at/all", 1 },
		{ "/", "/", 1 },
		{ "/", "/a", 0 },
		{ "/a/*b*c", "/a/xbyc", 1 },
		{ "/a/*b*c", "/a/xbycd", 0 },
		{ "/work/payments/**", "/work/payments-old/x", 0 },
	};
	size_t i;

	for (i = 0; i < sizeof v / sizeof v[0]; i++)
		is_int(cd_glob_valid(v[i].glob, NULL) == 0, v[i].valid, "glob_valid '%s'",
		       v[i].glob);
	for (i = 0; i < sizeof m / sizeof m[0]; i++)
		is_int(cd_glob_match(m[i].glob, m[i].path), m[i].want, "glob_match '%s' '%s'",
		       m[i].glob, m[i].path);
	{
		/* Pathological: many "**" against a long path stays fast (the
		 * alarm of tap_start catches a blow-up). */
		char glob[512], path[2048];
		size_t o = 0;
		for (i = 0; i < 40; i++)
			o += (size_t)snprintf(glob + o, sizeof glob - o, "/**");
		(void)snprintf(glob + o, sizeof glob - o, "/z");
		o = 0;
		for (i = 0; i < 500; i++)
			o += (size_t)snprintf(path + o, sizeof path - o, "/a");
		is_int(cd_glob_match(glob, path), 0,
		       "many '**' against a long path: no match, fast");
	}
}

static void test_argv(void)
{
	const char *git_status[] = { "git", "status" };
	const char *a1[] = { "git", "status", "-s" };
	const char *a2[] = { "git", "statusx" };
	const char *a3[] = { "git", "push" };
	const char *a4[] = { "git" };
	const char *a5[] = { "git status" };
	const char *a6[] = { "/usr/bin/git", "status" };

	is_int(cd_argv_prefix_match(git_status, 2, a1, 3), 1, "git status matches git status -s");
	is_int(cd_argv_prefix_match(git_status, 2, git_status, 2), 1, "exact argv matches");
	is_int(cd_argv_prefix_match(git_status, 2, a2, 2), 0, "git statusx does not match");
	is_int(cd_argv_prefix_match(git_status, 2, a3, 2), 0, "git push does not match");
	is_int(cd_argv_prefix_match(git_status, 2, a4, 1), 0, "shorter argv does not match");
	is_int(cd_argv_prefix_match(git_status, 2, a5, 1), 0, "one token 'git status' does not");
	is_int(cd_argv_prefix_match(git_status, 2, a6, 2), 0, "another argv[0] does not match");
	is_int(cd_argv_prefix_match(git_status, 0, a1, 3), 0, "empty prefix never matches");
}

static void test_ports_args(void)
{
	static const struct {
		const char *s;
		int ok;
		unsigned lo, hi;
	} pr[] = {
		{ "443", 1, 443, 443 }, { "8000-8080", 1, 8000, 8080 },
		{ "0", 0, 0, 0 },       { "65536", 0, 0, 0 },
		{ "80-79", 0, 0, 0 },   { "-80", 0, 0, 0 },
		{ "80-", 0, 0, 0 },     { "+80", 0, 0, 0 },
		{ " 80", 0, 0, 0 },     { "65535", 1, 65535, 65535 },
	};
	struct cd_port_range r[2];
	size_t i;
	char *vals_eq[] = { "main" }, *vals_pre[] = { "agent/" }, *vals_enum[] = { "a", "b" };
	struct cd_arg_rule eq = { "branch", CD_ARG_EQ, vals_eq, 1 };
	struct cd_arg_rule pre = { "ref", CD_ARG_PREFIX, vals_pre, 1 };
	struct cd_arg_rule en = { "mode", CD_ARG_ENUM, vals_enum, 2 };

	for (i = 0; i < sizeof pr / sizeof pr[0]; i++) {
		int got = cd_port_range_parse(pr[i].s, strlen(pr[i].s), &r[0]);
		is_int(got == 0, pr[i].ok, "port range '%s'", pr[i].s);
		if (pr[i].ok && got == 0)
			ok(r[0].lo == pr[i].lo && r[0].hi == pr[i].hi, "port range '%s' bounds",
			   pr[i].s);
	}
	r[0] = (struct cd_port_range){ 443, 443 };
	r[1] = (struct cd_port_range){ 8000, 8080 };
	is_int(cd_port_match(r, 2, 443), 1, "443 in");
	is_int(cd_port_match(r, 2, 444), 0, "444 out");
	is_int(cd_port_match(r, 2, 8080), 1, "8080 in (inclusive)");
	is_int(cd_port_match(r, 2, 8081), 0, "8081 out");
	is_int(cd_port_match(r, 2, -1), 0, "no port is not in");
	is_int(cd_port_match(r, 2, 65536 + 443), 0, "port past 65535 is not wrapped");

	is_int(cd_arg_rule_match(&eq, "main"), 1, "eq main");
	is_int(cd_arg_rule_match(&eq, "mainx"), 0, "eq mainx");
	is_int(cd_arg_rule_match(&eq, "Main"), 0, "eq Main");
	is_int(cd_arg_rule_match(&pre, "agent/fix"), 1, "prefix agent/fix");
	is_int(cd_arg_rule_match(&pre, "agent"), 0, "prefix agent (shorter)");
	is_int(cd_arg_rule_match(&pre, "main"), 0, "prefix main");
	is_int(cd_arg_rule_match(&en, "b"), 1, "enum b");
	is_int(cd_arg_rule_match(&en, "c"), 0, "enum c");
	is_int(cd_arg_rule_match(&en, NULL), 0, "NULL value never matches");
}

/* A profile's cover_files globs: the forms that would load and match
 * nothing are refused (s12 review F3). */
static void test_cover_glob(void)
{
	static const struct {
		const char *g;
		int valid;
	} v[] = {
		{ "*.tok", 1 },
		{ "conf/prod.yml", 1 },
		{ "conf/*.key.yml", 1 },
		{ ".env.local", 1 },
		{ "..x", 1 },
		{ "a.b/c", 1 },
		{ "[{]x", 0 }, /* braces refused even inside a bracket */
		{ "", 0 },
		{ "/abs/conf/prod.yml", 0 },
		{ "/conf/prod.yml", 0 },
		{ "./conf/prod.yml", 0 },
		{ "conf/./prod.yml", 0 },
		{ "../conf/prod.yml", 0 },
		{ "conf/..", 0 },
		{ ".", 0 },
		{ "conf/{prod,dev}.yml", 0 },
		{ "conf/", 0 },
		{ "conf//prod.yml", 0 },
		{ "/", 0 },
		{ "secrets/**", 0 },
	};
	size_t i;

	for (i = 0; i < sizeof v / sizeof v[0]; i++)
		is_int(cd_cover_glob_valid(v[i].g, strlen(v[i].g), NULL) == 0, v[i].valid,
		       "cover_glob_valid '%s'", v[i].g);
	is_int(cd_cover_glob_valid("a\0b", 3, NULL), -EINVAL, "cover_glob_valid: a NUL inside");
}

int main(void)
{
	tap_start(30);
	test_cover_glob();
	test_host_normalize();
	test_host_match();
	test_path_canon();
	test_glob();
	test_argv();
	test_ports_args();
	return tap_done();
}
