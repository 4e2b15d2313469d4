#!/bin/sh
# bench/policy.sh — grant-matrix load time and decision latency (median and
# p99) for generated policies of 10, 1,000 and 10,000 grants, in one run.
#
# Two shapes per size:
#   spread  N/10 agents x 2 tools: each agent holds 10 grants (a realistic
#           matrix; the (agent, tool) index keeps decisions flat)
#   skewed  all N grants on one (agent, tool) pair (the worst case: every
#           decision scans every grant of the pair)
#
# Usage: sh bench/policy.sh [BUILD_DIR]   (needs BUILD_DIR/libcordon.a)
set -eu
SRC=$(cd "$(dirname "$0")/.." && pwd)
B=${1:-$SRC/build}
W=$(mktemp -d /tmp/cordon-bench-policy.XXXXXX)
trap 'rm -rf "$W"' EXIT

cat >"$W/bench.c" <<'EOF'
#include "policy/policy.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_us(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
	struct cd_policy *p = NULL;
	struct cd_err err;
	long ngrants = strtol(argv[2], NULL, 10), nagents = strtol(argv[3], NULL, 10);
	long iters = 200000, i, allowed = 0;
	double t0, load_ms, *lat;
	char agent[64], path[128];
	const char *paths[1] = { path };
	struct cd_request q;
	struct cd_decision d;

	(void)argc;
	t0 = now_us();
	if (cd_policy_load_file(argv[1], &p, &err) < 0) {
		fprintf(stderr, "%s\n", err.msg);
		return 1;
	}
	load_ms = (now_us() - t0) / 1000;
	lat = malloc(sizeof *lat * (size_t)iters);
	srand48(42);
	for (i = 0; i < iters; i++) {
		long g = lrand48() % ngrants;
		long a = g % nagents;
		snprintf(agent, sizeof agent, "agent%ld", a);
		/* Three in four requests hit a grant; one in four is just outside. */
		if (i % 4)
			snprintf(path, sizeof path, "/data/g%ld/sub/file.txt", g);
		else
			snprintf(path, sizeof path, "/data/g%ldx/file.txt", g);
		cd_request_init(&q);
		q.agent = agent;
		q.tool = (g / nagents) % 2 ? "fs" : "db";
		q.action = CD_ACTION_READ;
		q.paths = paths;
		q.npaths = 1;
		q.now = 1800000000;
		t0 = now_us();
		cd_policy_decide(p, &q, &d, NULL);
		lat[i] = now_us() - t0;
		allowed += d.verdict == CD_VERDICT_ALLOW;
	}
	qsort(lat, (size_t)iters, sizeof *lat, cmp);
	printf("%8.1f ms load   %6.2f us median   %6.2f us p99   (%ld of %ld allowed)\n", load_ms,
	       lat[iters / 2], lat[iters * 99 / 100], allowed, iters);
	free(lat);
	cd_policy_free(p);
	return 0;
}
EOF
${CC:-cc} -O2 -std=gnu11 -D_GNU_SOURCE -I"$SRC/src/lib" -o "$W/bench" "$W/bench.c" \
	"$B/libcordon.a" $(make -s -C "$SRC" print-ldlibs)

gen() { # N AGENTS FILE
	python3 - "$1" "$2" >"$3" <<'EOF'
import sys
n, na = int(sys.argv[1]), int(sys.argv[2])
out = ["version: 1", "agents:"]
out += ["  - {id: agent%d, owner: ops}" % a for a in range(na)]
out += ["tools:", "  - {id: fs, kind: mcp}", "  - {id: db, kind: mcp}", "grants:"]
for g in range(n):
    a = g % na
    tool = "fs" if (g // na) % 2 else "db"
    out.append("  - {id: g%d, agent: agent%d, tool: %s, actions: [read, update], "
               "scope: {paths: [/data/g%d/**]}, owner: ops, justification: bench, "
               "review_by: 2030-01-01, expires: 2030-01-01}" % (g, a, tool, g))
print("\n".join(out))
EOF
}

echo "cordon policy benchmark ($(uname -m), $(nproc) cpus)"
for n in 10 1000 10000; do
	na=$((n / 10))
	[ "$na" -ge 1 ] || na=1
	gen "$n" "$na" "$W/spread.yaml"
	printf '%6d grants, spread (%5d agents): ' "$n" "$na"
	"$W/bench" "$W/spread.yaml" "$n" "$na"
	gen "$n" 1 "$W/skewed.yaml"
	printf '%6d grants, skewed (    1 agent ): ' "$n"
	"$W/bench" "$W/skewed.yaml" "$n" 1
done
