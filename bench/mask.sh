#!/bin/sh
# bench/mask.sh — the masking scanner: throughput (MB/s) over 8 MiB corpora
# of clean text (prose, code, JSON, log lines with no personal data) and of
# mixed text (the same with an e-mail, phone, card, IBAN, SSN, IP or token
# every ~400 bytes), scanning for every type; masking throughput on the
# mixed corpus; the added latency of minimizing a 1 MB tools/call result
# (JSON text block, every type masked) as the gateway does; and the
# one-time cost of compiling the pattern database.  Median of 9 runs each.
#
# Usage: sh bench/mask.sh [BUILD_DIR]   (needs BUILD_DIR/libcordon.a)
set -eu
SRC=$(cd "$(dirname "$0")/.." && pwd)
B=${1:-$SRC/build}
W=$(mktemp -d /tmp/cordon-bench-mask.XXXXXX)
trap 'rm -rf "$W"' EXIT

cat >"$W/bench.c" <<'EOF'
#include "mask.h"
#include "mcp.h"
#include "scan.h"
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int cmpd(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static const char *const clean[] = {
	"The quarterly report shows steady growth in the northern region, with ",
	"several new accounts opened after the spring campaign. ",
	"static int parse(const char *s, size_t n) { return n > 0 && s[0] == '{'; }\n",
	"{\"status\": \"ok\", \"count\": 42, \"items\": [\"alpha\", \"beta\"], \"ratio\": 0.75}\n",
	"2026-11-30T12:00:01Z INFO request handled in 12 ms path=/api/v1/orders\n",
	"Version 3.14 was released on 2025-01-15; see the changelog for details.\n",
	"for (i = 0; i < 100; i++) total += price[i] * qty[i];\n",
	"Please review the attached draft and send comments before Friday. ",
};
static const char *const pii[] = {
	"Contact: jane.doe@example.com ", "Phone +44 20 7946 0958 ", "card 4111 1111 1111 1111 ",
	"IBAN DE89 3704 0044 0532 0130 00 ", "ssn 123-45-6789 ", "from 192.168.10.20 ",
	"token ghp_aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789 ", "api_key=Zx9kQ2mP7vL4nR8tW3yB6cF1 ",
};

static char *corpus(size_t len, int mixed)
{
	char *b = malloc(len + 1);
	size_t at = 0, k = 0, since = 0;
	while (b && at < len) {
		const char *s;
		if (mixed && since >= 400) {
			s = pii[(k / 3) % 8];
			since = 0;
		} else {
			s = clean[k % 8];
		}
		k++;
		size_t n = strlen(s);
		if (n > len - at)
			n = len - at;
		memcpy(b + at, s, n);
		at += n;
		since += n;
	}
	if (b)
		b[len] = '\0';
	return b;
}

static int nop(void *ctx, const struct cd_finding *f)
{
	(*(size_t *)ctx)++;
	(void)f;
	return 0;
}

static double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof *v, cmpd);
	return v[n / 2];
}

int main(void)
{
	enum { RUNS = 9 };
	const size_t len = 8u << 20;
	unsigned char key[CD_MASK_KEY_BYTES] = { 1 };
	struct cd_scanner *s;
	struct cd_masker *m;
	struct cd_mask_rules all;
	double t[RUNS], t0;
	size_t found = 0;
	int i;
	char *cl = corpus(len, 0), *mx = corpus(len, 1);

	for (i = 0; i < RUNS; i++) {
		t0 = now_s();
		if (cd_scanner_new(&s, NULL) < 0)
			return 1;
		t[i] = now_s() - t0;
		cd_scanner_free(s);
	}
	printf("pattern database compile: %.2f ms (once per session that masks)\n",
	       median(t, RUNS) * 1e3);
	cd_scanner_new(&s, NULL);
	for (i = 0; i < RUNS; i++) {
		found = 0;
		t0 = now_s();
		cd_scan(s, cl, len, CD_SCAN_ALL, nop, &found);
		t[i] = now_s() - t0;
	}
	printf("scan, clean text:  %7.0f MB/s (%zu findings in 8 MiB)\n", len / median(t, RUNS) / 1e6,
	       found);
	for (i = 0; i < RUNS; i++) {
		found = 0;
		t0 = now_s();
		cd_scan(s, mx, len, CD_SCAN_ALL, nop, &found);
		t[i] = now_s() - t0;
	}
	printf("scan, mixed text:  %7.0f MB/s (%zu findings in 8 MiB)\n", len / median(t, RUNS) / 1e6,
	       found);
	cd_masker_new(key, &m, NULL);
	memset(&all, CD_MASK_PSEUDONYMIZE, sizeof all);
	for (i = 0; i < RUNS; i++) {
		struct cd_buf out;
		cd_buf_init(&out, 64u << 20);
		t0 = now_s();
		cd_mask_text(m, &all, mx, len, &out, NULL);
		t[i] = now_s() - t0;
		cd_buf_release(&out);
	}
	printf("mask (pseudonymize every type), mixed text: %7.0f MB/s\n",
	       len / median(t, RUNS) / 1e6);
	{
		const size_t one = 1u << 20;
		struct cd_mcp_minimize mz;
		char *c1 = corpus(one, 0), *m1 = corpus(one, 1);
		const char *texts[2] = { c1, m1 }, *names[2] = { "clean", "mixed" };
		int k;
		memset(&mz, 0, sizeof mz);
		mz.mask = all;
		for (k = 0; k < 2; k++) {
			for (i = 0; i < RUNS; i++) {
				json_t *res = json_pack("{s:[{s:s,s:s}]}", "content", "type", "text",
				                        "text", texts[k]);
				size_t cnt = 0;
				const char *why;
				t0 = now_s();
				cd_mcp_minimize(m, &mz, res, 0, &cnt, &why);
				t[i] = now_s() - t0;
				json_decref(res);
			}
			printf("added latency, 1 MB tools/call result (%s): %.2f ms\n", names[k],
			       median(t, RUNS) * 1e3);
		}
	}
	cd_masker_free(m);
	cd_scanner_free(s);
	return 0;
}
EOF
cc -O2 -std=gnu11 -D_GNU_SOURCE -I"$SRC/src/lib" -o "$W/bench" "$W/bench.c" \
	"$B/libcordon.a" $(make -s -C "$SRC" print-ldlibs)
"$W/bench"
