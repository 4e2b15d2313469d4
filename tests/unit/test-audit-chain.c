/* test-audit-chain.c — the canonical encoding and the chain hashes. */
#include "../tap.h"

#include "audit/audit.h"
#include "util/buf.h"
#include "util/err.h"

#include <string.h>

static void set(struct cd_audit_entry *e, int f, const char *s)
{
	e->str[f].p = s;
	e->str[f].len = s ? strlen(s) : 0;
}

static void base(struct cd_audit_entry *e)
{
	memset(e, 0, sizeof *e);
	e->seq = 7;
	e->time_ns = 1700000000123456789LL;
	set(e, CD_AF_HOST, "h");
	set(e, CD_AF_KIND, "run.intent");
	set(e, CD_AF_AGENT, "ab");
	set(e, CD_AF_TASK, "c");
}

static void leaf(const struct cd_audit_entry *e, unsigned char out[32])
{
	if (cd_audit_leaf(e, out) < 0)
		memset(out, 0, 32);
}

static void test_boundaries(void)
{
	struct cd_audit_entry a, b;
	unsigned char ha[32], hb[32];

	base(&a);
	leaf(&a, ha);
	/* Shift a byte across a field boundary: "ab"+"c" vs "a"+"bc". */
	base(&b);
	set(&b, CD_AF_AGENT, "a");
	set(&b, CD_AF_TASK, "bc");
	leaf(&b, hb);
	ok(memcmp(ha, hb, 32) != 0, "moving a byte between fields changes the hash");
	/* Absent vs empty. */
	base(&b);
	set(&b, CD_AF_TOOL, "");
	leaf(&b, hb);
	ok(memcmp(ha, hb, 32) != 0, "an empty field differs from an absent one");
	/* Same bytes in another field. */
	base(&b);
	set(&b, CD_AF_TASK, NULL);
	set(&b, CD_AF_TOOL, "c");
	leaf(&b, hb);
	ok(memcmp(ha, hb, 32) != 0, "the same value in another field changes the hash");
	/* Optional integers: absent vs 0. */
	base(&b);
	b.has_exit = 1;
	leaf(&b, hb);
	ok(memcmp(ha, hb, 32) != 0, "exit code 0 differs from no exit code");
	base(&b);
	b.seq = 8;
	leaf(&b, hb);
	ok(memcmp(ha, hb, 32) != 0, "seq is covered");
	base(&b);
	b.time_ns++;
	leaf(&b, hb);
	ok(memcmp(ha, hb, 32) != 0, "time is covered");
	base(&b);
	leaf(&b, hb);
	ok(memcmp(ha, hb, 32) == 0, "the same record hashes the same");
}

static void test_roundtrip(void)
{
	struct cd_audit_entry a, d;
	struct cd_buf b1, b2;
	int i, r;

	base(&a);
	a.has_exit = 1;
	a.exit_code = -9;
	a.has_duration = 1;
	a.duration_ms = 12345;
	set(&a, CD_AF_DETAILS, "{\"x\":1}");
	set(&a, CD_AF_REASON, "");
	cd_buf_init(&b1, 1 << 20);
	cd_buf_init(&b2, 1 << 20);
	is_int(cd_audit_encode(&a, &b1), 0, "encode");
	is_int(cd_audit_decode(b1.data, b1.len, &d), 0, "decode");
	is_int(cd_audit_encode(&d, &b2), 0, "re-encode");
	ok(b1.len == b2.len && memcmp(b1.data, b2.data, b1.len) == 0, "decode is the inverse");
	ok(d.seq == 7 && d.exit_code == -9 && d.duration_ms == 12345, "integers round-trip");
	for (i = 0, r = 1; i < CD_AF_NSTR; i++)
		if ((a.str[i].p == NULL) != (d.str[i].p == NULL) || a.str[i].len != d.str[i].len)
			r = 0;
	ok(r, "presence and lengths round-trip");
	is_int(cd_audit_decode(b1.data, b1.len - 1, &d), -CD_E_PARSE, "truncated input refused");
	cd_buf_putc(&b1, 'x');
	is_int(cd_audit_decode(b1.data, b1.len, &d), -CD_E_PARSE, "trailing byte refused");
	b1.data[0] = 2;
	is_int(cd_audit_decode(b1.data, b1.len - 1, &d), -CD_E_PARSE, "unknown version refused");
	cd_buf_release(&b1);
	cd_buf_release(&b2);

	/* An absent integer must be encoded as zero: one spelling only. */
	base(&a);
	cd_buf_init(&b1, 1 << 20);
	cd_audit_encode(&a, &b1);
	b1.data[25] = 1; /* low byte of exit_code, has_exit = 0 */
	is_int(cd_audit_decode(b1.data, b1.len, &d), -CD_E_PARSE, "non-zero absent value refused");
	cd_buf_release(&b1);
}

static void test_chain(void)
{
	struct cd_audit_entry a;
	unsigned char g1[32], g2[32], h1[32], h2[32], l[32], n[32];

	cd_audit_genesis("00000000000000000000000000000000", g1);
	cd_audit_genesis("00000000000000000000000000000001", g2);
	ok(memcmp(g1, g2, 32) != 0, "the genesis depends on the log id");
	base(&a);
	is_int(cd_audit_chain(g1, &a, h1), 0, "chain");
	cd_audit_chain(g2, &a, h2);
	ok(memcmp(h1, h2, 32) != 0, "the chain hash depends on the predecessor");
	cd_audit_leaf(&a, l);
	cd_audit_node(g1, l, n);
	ok(memcmp(n, h1, 32) == 0, "chain = node(prev, leaf)");
	ok(memcmp(l, h1, 32) != 0, "leaf and node hashes are domain-separated");

	base(&a);
	a.str[CD_AF_TARGET].p = "x";
	a.str[CD_AF_TARGET].len = CD_AUDIT_FIELD_MAX + 1;
	is_int(cd_audit_leaf(&a, l), -CD_E_LIMIT, "an oversized field is refused");
}

static void test_hex(void)
{
	unsigned char b[2];
	char s[5];

	is_int(cd_audit_unhex("0aff", 4, b, 2), 0, "hex parses");
	ok(b[0] == 0x0a && b[1] == 0xff, "hex value");
	cd_audit_hex(b, 2, s);
	is_str(s, "0aff", "hex formats lower case");
	is_int(cd_audit_unhex("0AFF", 4, b, 2), -CD_E_PARSE, "upper case refused (one spelling)");
	is_int(cd_audit_unhex("0af", 3, b, 2), -CD_E_PARSE, "short hex refused");
	is_int(cd_audit_unhex("0afg", 4, b, 2), -CD_E_PARSE, "non-hex refused");
}

int main(void)
{
	tap_start(30);
	test_boundaries();
	test_roundtrip();
	test_chain();
	test_hex();
	return tap_done();
}
