#!/bin/sh
# bench/mask.sh — the masking scanner: throughput (MB/s) over 8 MiB corpora
# of clean text (prose, code, JSON, log lines with no personal data) and of
# mixed text (the same with an e-mail, phone, card, IBAN, SSN, IP or token
# every ~400 bytes), scanning for every type; masking throughput on the
# mixed corpus; the added latency of minimizing a 1 MB tools/call result
# (JSON text block, every type masked) as the gateway does; the one-time
# cost of making a scanner, with the database serialized at build time and
# compiled at run time (the first in a process also loads vectorscan); and,
# when BUILD_DIR/cordon exists, the startup a masking grant adds to a
# `cordon run` and to a `cordon mcp` session (same policy without `mask:`
# as the baseline; CPU time and wall time).  Median of 9 runs each (21 for
# the sessions).
#
# Usage: sh bench/mask.sh [BUILD_DIR]   (needs BUILD_DIR/libcordon.a)
# CORDON=path times the sessions of another cordon binary (an older build).
set -eu
SRC=$(cd "$(dirname "$0")/.." && pwd)
B=$(cd "${1:-$SRC/build}" && pwd)
W=$(mktemp -d /tmp/cordon-bench-mask.XXXXXX)
trap '[ -n "${KEEP:-}" ] || rm -rf "$W"' EXIT

cat >"$W/bench.c" <<'EOF'
#include "mask/logmask.h"
#include "mask/mask.h"
#include "mcp/mcp.h"
#include "mask/scan.h"
#include <fcntl.h>
#include <jansson.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>

extern char **environ;

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

/* One run of argv (stdio on /dev/null): 0 with its wall time and CPU time
 * (cordon's and its reaped children's), -1 when it fails. */
static int session(char *const argv[], double *wall, double *cpu)
{
	posix_spawn_file_actions_t fa;
	struct rusage ru;
	double t0 = now_s();
	int st, r = -1;
	pid_t pid;

	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
	posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
	if (posix_spawn(&pid, argv[0], &fa, NULL, argv, environ) == 0 &&
	    wait4(pid, &st, 0, &ru) == pid && WIFEXITED(st) && WEXITSTATUS(st) == 0) {
		*wall = now_s() - t0;
		*cpu = (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
		       (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
		r = 0;
	}
	posix_spawn_file_actions_destroy(&fa);
	return r;
}

/* The startup a masking grant adds: the same command under a policy that
 * masks and under one that does not, interleaved run by run.  CPU time is
 * the steadier figure on a shared machine. */
static void sessions(char *cordon, char *dir)
{
	enum { N = 21 };
	char p0[4096], p1[4096];
	char *run1[] = { cordon, "run", "--policy", p1, "--agent", "a", "--task", "t", "--",
		         "/bin/true", NULL };
	char *run0[] = { cordon, "run", "--policy", p0, "--agent", "a", "--", "/bin/true", NULL };
	char *mcp1[] = { cordon, "mcp", "--policy", p1, "--agent", "a", "--task", "t",
		         "--server", "fs", "--", "/bin/true", NULL };
	char *mcp0[] = { cordon, "mcp", "--policy", p0, "--agent", "a", "--server", "fs", "--",
		         "/bin/true", NULL };
	char *const *cmds[2][2] = { { run0, run1 }, { mcp0, mcp1 } };
	const char *names[2] = { "cordon run", "cordon mcp" };
	double w[2][N], u[2][N], wm[2], um[2];
	int c, k, i;

	snprintf(p0, sizeof p0, "%s/plain.yaml", dir);
	snprintf(p1, sizeof p1, "%s/masked.yaml", dir);
	for (c = 0; c < 2; c++) {
		for (i = -1; i < N; i++) /* run -1 warms up and checks */
			for (k = 0; k < 2; k++)
				if (session(cmds[c][k], &w[k][i < 0 ? 0 : i], &u[k][i < 0 ? 0 : i]) < 0) {
					printf("%s session: did not run (skipped)\n", names[c]);
					goto next;
				}
		for (k = 0; k < 2; k++) {
			wm[k] = median(w[k], N) * 1e3;
			um[k] = median(u[k], N) * 1e3;
		}
		printf("%s, startup added by a masking grant: %.1f ms CPU, %.1f ms wall "
		       "(masked %.1f/%.1f, plain %.1f/%.1f ms CPU/wall)\n",
		       names[c], um[1] - um[0], wm[1] - wm[0], um[1], wm[1], um[0], wm[0]);
	next:;
	}
}

int main(int argc, char **argv)
{
	enum { RUNS = 9 };
	const size_t len = 8u << 20;
	unsigned char key[CD_MASK_KEY_BYTES] = { 1 };
	struct cd_scanner *s;
	struct cd_masker *m;
	struct cd_mask_rules all;
	double t[RUNS], tl[RUNS * 20], t0;
	size_t found = 0;
	int i;
	char *cl = corpus(len, 0), *mx = corpus(len, 1);

	for (i = 0; i < RUNS; i++) {
		t0 = now_s();
		if (cd_scanner_new(&s, NULL) < 0)
			return 1;
		t[i] = now_s() - t0;
		if (i == 0)
			printf("first scanner in a process (loads vectorscan, %s database): %.2f ms\n",
			       cd_scanner_db(s, NULL) == CD_SCAN_DB_BUILT_IN ? "built-in" : "compiled",
			       t[0] * 1e3);
		cd_scanner_free(s);
	}
	printf("scanner creation, database from the build: %.2f ms\n",
	       median(t + 1, RUNS - 1) * 1e3);
	for (i = 0; i < RUNS; i++) {
		t0 = now_s();
		if (cd_scanner_new_from(NULL, &s, NULL) < 0)
			return 1;
		t[i] = now_s() - t0;
		cd_scanner_free(s);
	}
	printf("scanner creation, database compiled at run time: %.2f ms\n",
	       median(t, RUNS) * 1e3);
	cd_scanner_new(&s, NULL);
	{
		/* The build's database is made for any CPU; one compiled here is
		 * tuned for this one.  Run by run, so that both see the same load. */
		struct cd_scanner *host;
		double th[RUNS];
		if (cd_scanner_new_from(NULL, &host, NULL) < 0)
			return 1;
		for (i = 0; i < RUNS; i++) {
			found = 0;
			t0 = now_s();
			cd_scan(s, cl, len, CD_SCAN_ALL, nop, &found);
			t[i] = now_s() - t0;
			t0 = now_s();
			cd_scan(host, cl, len, CD_SCAN_ALL, nop, &found);
			th[i] = now_s() - t0;
		}
		cd_scanner_free(host);
		printf("scan, clean text:  %7.0f MB/s (%s database; %.0f MB/s compiled for this CPU)\n",
		       len / median(t, RUNS) / 1e6,
		       cd_scanner_db(s, NULL) == CD_SCAN_DB_BUILT_IN ? "built-in" : "compiled",
		       len / median(th, RUNS) / 1e6);
	}
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
	{
		/* One audit record of a masked call minimized (logmask.c): the
		 * arguments of a typical tools/call with an address in them,
		 * masked, each value and hash committed. */
		static const char sha[] =
		        "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";
		for (i = 0; i < RUNS * 20; i++) {
			struct cd_record rec;
			json_t *d = json_pack("{s:{s:s,s:s,s:i},s:{s:[s]},s:s}", "arguments", "path",
			                      "/srv/crm/customers/carol@example.com.json", "note",
			                      "ticket 4711 from dave@example.org", "head", 20,
			                      "attributes", "paths",
			                      "/srv/crm/customers/carol@example.com.json",
			                      "arguments_sha256", sha),
			       *keep = NULL;
			memset(&rec, 0, sizeof rec);
			rec.target = "tools/call";
			t0 = now_s();
			cd_logmask_record(m, &all, &rec, d, &keep);
			tl[i] = now_s() - t0;
			json_decref(keep);
			json_decref(d);
		}
		printf("audit record of a masked call minimized (3 values, 1 hash): %.1f us\n",
		       median(tl, RUNS * 20) * 1e6);
	}
	cd_masker_free(m);
	cd_scanner_free(s);
	if (argc == 3)
		sessions(argv[1], argv[2]);
	return 0;
}
EOF
# The pattern database serialized at build time, as cordon links it (without
# it every scanner compiles its database).
gen=
[ -f "$B/gen/scan-db.o" ] && gen=$B/gen/scan-db.o
cc -O2 -std=gnu11 -D_GNU_SOURCE -I"$SRC/src/lib" -o "$W/bench" "$W/bench.c" ${gen:+"$gen"} \
	"$B/libcordon.a" $(make -s -C "$SRC" print-ldlibs)
C=${CORDON:-$B/cordon}
case "$C" in /*) ;; *) C=$(pwd)/$C ;; esac
[ -x "$C" ] || exec "$W/bench"

# Two policies alike but for `mask:`; state, audit log and key outside the
# working directory, as cordon requires.
for m in plain masked; do
	mask=
	[ "$m" = masked ] && mask='mask: {email: pseudonymize, card: redact, secret: drop}, '
	cat >"$W/$m.yaml" <<EOP
version: 1
agents: [{id: a, owner: ops}]
tools:
  - {id: fs, kind: mcp, operations: {read_text_file: read}}
  - {id: shell, kind: command}
profiles:
  p: {timeout: 10s}
grants:
  - {id: launch, agent: a, tool: fs, actions: [execute], scope: {argv: [/bin/true]}, profile: p, owner: ops, justification: t, review_by: 2030-01-01, expires: 2030-06-30}
  - {id: read, agent: a, tool: fs, actions: [read], ${mask}owner: ops, justification: t, review_by: 2030-01-01, expires: 2030-06-30}
  - {id: run, agent: a, tool: shell, actions: [execute], scope: {argv: [/bin/true]}, profile: p, ${mask}owner: ops, justification: t, review_by: 2030-01-01, expires: 2030-06-30}
EOP
done
mkdir -p "$W/state" "$W/work"
cd "$W/work"
CORDON_AUDIT="$W/state/audit.db" CORDON_STATE="$W/state/state.db" \
	CORDON_MASK_KEY="$W/state/mask.key" "$W/bench" "$C" "$W"
