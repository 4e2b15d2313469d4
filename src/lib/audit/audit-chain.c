/* audit-chain.c — the canonical encoding of a record and the hash chain.
 *
 * Encoding (all integers big-endian):
 *   u8  version (1)
 *   u64 seq
 *   u64 time_ns (two's complement)
 *   u8  has_exit      u64 exit_code   (0 when absent)
 *   u8  has_duration  u64 duration_ms (0 when absent)
 *   CD_AF_NSTR times: u32 length (0xffffffff: absent), bytes
 * Every field has a fixed place and an explicit length, so no two records
 * share an encoding (cd_audit_decode is its exact inverse).
 *
 * Hashes, domain-separated as RFC 9162 separates leaves from nodes:
 *   genesis = SHA-256(0x02 || "cordon audit v1" || log_id)
 *   leaf    = SHA-256(0x00 || encoding)
 *   head_n  = SHA-256(0x01 || head_{n-1} || leaf_n)
 * Trust boundary: the input of decode is untrusted bytes. */
#include "audit.h"
#include "util/buf.h"
#include "util/err.h"

#include <errno.h>
#include <sodium.h>
#include <string.h>

#define ENC_VERSION 1
#define ABSENT      0xffffffffu

const char *const cd_audit_field_names[CD_AF_NSTR] = {
	[CD_AF_HOST] = "host",
	[CD_AF_KIND] = "kind",
	[CD_AF_RUN_ID] = "run_id",
	[CD_AF_AGENT] = "agent",
	[CD_AF_TASK] = "task",
	[CD_AF_TOOL] = "tool",
	[CD_AF_ACTION] = "action",
	[CD_AF_TARGET] = "target",
	[CD_AF_DECISION] = "decision",
	[CD_AF_GRANT_IDS] = "grant_ids",
	[CD_AF_REASON] = "reason",
	[CD_AF_ARGV_SHA256] = "argv_sha256",
	[CD_AF_CODE_SHA256] = "code_sha256",
	[CD_AF_STDIN_SHA256] = "stdin_sha256",
	[CD_AF_STDOUT_SHA256] = "stdout_sha256",
	[CD_AF_STDERR_SHA256] = "stderr_sha256",
	[CD_AF_DETAILS] = "details",
};

static void put64(unsigned char *p, uint64_t v)
{
	int i;
	for (i = 7; i >= 0; i--) {
		p[i] = (unsigned char)(v & 0xff);
		v >>= 8;
	}
}

static uint64_t get64(const unsigned char *p)
{
	uint64_t v = 0;
	int i;
	for (i = 0; i < 8; i++)
		v = (v << 8) | p[i];
	return v;
}

static size_t field_cap(int i)
{
	return i == CD_AF_DETAILS ? CD_AUDIT_DETAILS_MAX : CD_AUDIT_FIELD_MAX;
}

/* The encoder writes through a sink so that hashing streams the record
 * without building a copy (verify hashes a million records). */
struct sink {
	struct cd_buf *buf;
	crypto_hash_sha256_state *st;
};

static int emit(struct sink *k, const void *p, size_t n)
{
	if (k->st) {
		crypto_hash_sha256_update(k->st, p, n);
		return 0;
	}
	return cd_buf_append(k->buf, p, n);
}

static int encode(const struct cd_audit_entry *e, struct sink *k)
{
	unsigned char hdr[1 + 8 + 8 + 9 + 9];
	int i, r;

	hdr[0] = ENC_VERSION;
	put64(hdr + 1, e->seq);
	put64(hdr + 9, (uint64_t)e->time_ns);
	hdr[17] = e->has_exit ? 1 : 0;
	put64(hdr + 18, e->has_exit ? (uint64_t)e->exit_code : 0);
	hdr[26] = e->has_duration ? 1 : 0;
	put64(hdr + 27, e->has_duration ? e->duration_ms : 0);
	r = emit(k, hdr, sizeof hdr);
	for (i = 0; r == 0 && i < CD_AF_NSTR; i++) {
		const struct cd_audit_str *s = &e->str[i];
		unsigned char l[4];
		uint32_t n;

		if (s->p && s->len > field_cap(i))
			return -CD_E_LIMIT;
		n = s->p ? (uint32_t)s->len : ABSENT;
		l[0] = (unsigned char)(n >> 24);
		l[1] = (unsigned char)(n >> 16);
		l[2] = (unsigned char)(n >> 8);
		l[3] = (unsigned char)n;
		r = emit(k, l, 4);
		if (r == 0 && s->p && s->len)
			r = emit(k, s->p, s->len);
	}
	return r;
}

int cd_audit_encode(const struct cd_audit_entry *e, struct cd_buf *out)
{
	struct sink k = { out, NULL };
	size_t old = out->len;
	int r = encode(e, &k);

	if (r < 0) {
		out->len = old;
		if (out->data)
			out->data[old] = '\0';
	}
	return r;
}

int cd_audit_decode(const void *data, size_t len, struct cd_audit_entry *e)
{
	const unsigned char *p = data;
	size_t off = 35;
	int i;

	if (!p || len < off || p[0] != ENC_VERSION || p[17] > 1 || p[26] > 1)
		return -CD_E_PARSE;
	memset(e, 0, sizeof *e);
	e->seq = get64(p + 1);
	e->time_ns = (int64_t)get64(p + 9);
	e->has_exit = p[17];
	e->exit_code = (int64_t)get64(p + 18);
	e->has_duration = p[26];
	e->duration_ms = get64(p + 27);
	/* An absent value must be encoded as 0, or two encodings would mean
	 * the same record. */
	if ((!e->has_exit && e->exit_code != 0) || (!e->has_duration && e->duration_ms != 0))
		return -CD_E_PARSE;
	/* The store holds SQLite integers: nothing past INT64_MAX. */
	if (e->seq > INT64_MAX || e->duration_ms > INT64_MAX)
		return -CD_E_PARSE;
	for (i = 0; i < CD_AF_NSTR; i++) {
		uint32_t n;

		if (len - off < 4)
			return -CD_E_PARSE;
		n = (uint32_t)p[off] << 24 | (uint32_t)p[off + 1] << 16 |
		    (uint32_t)p[off + 2] << 8 | p[off + 3];
		off += 4;
		if (n == ABSENT)
			continue;
		if (n > field_cap(i) || n > len - off)
			return -CD_E_PARSE;
		e->str[i].p = (const char *)p + off;
		e->str[i].len = n;
		off += n;
	}
	return off == len ? 0 : -CD_E_PARSE;
}

void cd_audit_genesis(const char *log_id, unsigned char ret[CD_AUDIT_HASH_LEN])
{
	static const unsigned char tag[] = "\x02"
	                                   "cordon audit v1";
	crypto_hash_sha256_state st;

	crypto_hash_sha256_init(&st);
	crypto_hash_sha256_update(&st, tag, sizeof tag - 1);
	crypto_hash_sha256_update(&st, (const unsigned char *)log_id, strlen(log_id));
	crypto_hash_sha256_final(&st, ret);
}

/* A fixed buffer that turns into a hash stream when a record outgrows it:
 * most records are a few hundred bytes, and one SHA-256 call over them is
 * much faster than forty small updates (verify hashes a million records). */
#define LEAF_BUF 4096

int cd_audit_leaf(const struct cd_audit_entry *e, unsigned char ret[CD_AUDIT_HASH_LEN])
{
	unsigned char buf[LEAF_BUF];
	crypto_hash_sha256_state st;
	struct sink k = { NULL, &st };
	size_t need = 1 + 35 + 4 * CD_AF_NSTR;
	int i, r;

	buf[0] = 0x00;
	for (i = 0; i < CD_AF_NSTR; i++)
		if (e->str[i].p)
			need += e->str[i].len;
	if (need <= sizeof buf) {
		struct cd_buf b = { (char *)buf, 1, sizeof buf, sizeof buf - 1 };
		struct sink kb = { &b, NULL };

		/* cd_buf over the stack array: never grows (need fits), so
		 * it never reallocates. */
		r = encode(e, &kb);
		if (r == 0)
			crypto_hash_sha256(ret, buf, b.len);
		return r;
	}
	crypto_hash_sha256_init(&st);
	crypto_hash_sha256_update(&st, buf, 1);
	r = encode(e, &k);
	if (r == 0)
		crypto_hash_sha256_final(&st, ret);
	return r;
}

void cd_audit_node(const unsigned char prev[CD_AUDIT_HASH_LEN],
                   const unsigned char leaf[CD_AUDIT_HASH_LEN],
                   unsigned char ret[CD_AUDIT_HASH_LEN])
{
	unsigned char m[1 + 2 * CD_AUDIT_HASH_LEN];

	m[0] = 0x01;
	memcpy(m + 1, prev, CD_AUDIT_HASH_LEN);
	memcpy(m + 1 + CD_AUDIT_HASH_LEN, leaf, CD_AUDIT_HASH_LEN);
	crypto_hash_sha256(ret, m, sizeof m);
}

int cd_audit_chain(const unsigned char prev[CD_AUDIT_HASH_LEN], const struct cd_audit_entry *e,
                   unsigned char ret[CD_AUDIT_HASH_LEN])
{
	unsigned char leaf[CD_AUDIT_HASH_LEN];
	int r = cd_audit_leaf(e, leaf);

	if (r < 0)
		return r;
	cd_audit_node(prev, leaf, ret);
	return 0;
}
