#!/bin/sh
# bench/startup.sh — start-to-exit time of `cordon run -- /bin/true` (the
# full default profile: every wall and limit) beside plain /bin/true,
# bubblewrap, firejail and crun, in one hyperfine run; the same rootless
# (as uid 65534) for cordon and bwrap; the peak RSS of cordon and bwrap; and
# a breakdown of cordon's own startup costs.
#
#   sh bench/startup.sh [CORDON]        (default: build/cordon)
#
# Environment: RUNS (200), WARMUP (20), ROUNDS (100, the warm/cold turns),
# OUT (a directory for the hyperfine
# JSON; default a fresh temp dir, kept and printed), BREAKDOWN=0 skips the
# breakdown.  Needs hyperfine, bwrap; firejail and crun are used when they
# work here (the reason is printed when they do not).  Benchmarks only: no
# figure here is ever asserted.
set -eu
SRC=$(cd "$(dirname "$0")/.." && pwd)
CORDON=${1:-$SRC/build/cordon}
case "$CORDON" in /*) ;; *) CORDON=$(pwd)/$CORDON ;; esac
[ -x "$CORDON" ] || { echo "startup.sh: $CORDON is not executable (run make)" >&2; exit 1; }
RUNS=${RUNS:-200}
WARMUP=${WARMUP:-20}
for t in hyperfine bwrap python3; do
	command -v "$t" >/dev/null || { echo "startup.sh: $t missing (sh scripts/deps.sh bench)" >&2; exit 1; }
done

# cordon refuses /, /tmp and /root as its working directory (it exposes the
# cwd read-only), and the rootless runs need a directory uid 65534 can enter:
# run everything from a fresh world-readable directory, $W/cwd.  cordon also
# refuses to run when its own audit log lies in the directory it would
# expose: the logs (and the rootless HOME) are beside it, in $W.
W=$(mktemp -d /tmp/cordon-bench-startup.XXXXXX)
chmod 755 "$W"
mkdir -m 755 "$W/cwd"
OUT=${OUT:-$W}
mkdir -p "$OUT"
cd "$W/cwd"
cleanup() {
	# the crun bundle and the breakdown harness; the JSON stays when OUT=$W
	rm -rf "$W/oci" "$W/harness" "$SHM"
}
trap cleanup EXIT

BWRAP="bwrap --unshare-all --die-with-parent --new-session --ro-bind / / --proc /proc --dev /dev /bin/true"
FIREJAIL="firejail --quiet --noprofile --net=none --private --seccomp /bin/true"
AS_NOBODY="setpriv --reuid=65534 --regid=65534 --clear-groups"

echo "# startup benchmark: $(nproc) CPUs, kernel $(uname -r), $(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //')"
echo "# cordon: $CORDON; $(hyperfine --version); $(bwrap --version)"
echo "# runs: $RUNS (warmup $WARMUP); working dir $W"

# --- which peers work here --------------------------------------------------
# cordon writes its audit log on every run (two durable transactions): once
# with the log on disk (the working directory's filesystem) and once on
# tmpfs, so the log's share of the time is visible.
SHM=$(mktemp -d /dev/shm/cordon-bench.XXXXXX)
set -- /bin/true "$BWRAP" "$CORDON run --audit $W/audit.db -- /bin/true" \
	"$CORDON run --audit $SHM/audit.db -- /bin/true"
if ! command -v firejail >/dev/null; then
	echo "# firejail: not installed (sh scripts/deps.sh bench)"
elif why=$($FIREJAIL 2>&1); then
	set -- "$@" "$FIREJAIL"
else
	echo "# firejail: refused here: $(echo "$why" | head -2 | tr '\n' ' ')"
fi
CRUN=""
if ! command -v crun >/dev/null; then
	echo "# crun: not installed (sh scripts/deps.sh bench)"
else
	sh "$SRC/bench/oci/make-bundle.sh" "$W/oci" >/dev/null
	CRUN="crun --cgroup-manager=disabled run --bundle $W/oci cordon-bench-$$"
	if why=$($CRUN 2>&1); then
		set -- "$@" "$CRUN"
	else
		echo "# crun: refused here: $(echo "$why" | head -2 | tr '\n' ' ')"
		CRUN=""
	fi
fi

# --- as root (or whoever runs this) -----------------------------------------
echo
echo "## as $(id -un) (uid $(id -u))"
hyperfine -N --warmup "$WARMUP" --runs "$RUNS" --export-json "$OUT/startup-root.json" "$@" >/dev/null

# --- rootless: uid 65534, no capabilities -----------------------------------
# setpriv's own exec is in every command; its line is the baseline.  cordon
# appends to its audit log under $HOME/.local/state: give uid 65534 a HOME.
mkdir -p "$W/home"
chown 65534:65534 "$W/home" 2>/dev/null || true
HOME="$W/home" XDG_STATE_HOME="" XDG_CONFIG_HOME="" hyperfine -N --warmup "$WARMUP" --runs "$RUNS" --export-json "$OUT/startup-rootless.json" \
	"$AS_NOBODY /bin/true" "$AS_NOBODY $BWRAP" "$AS_NOBODY $CORDON run -- /bin/true" >/dev/null

python3 - "$OUT/startup-root.json" "$OUT/startup-rootless.json" <<'PY'
import json, statistics, sys

def load(path):
    rows = []
    for r in json.load(open(path))["results"]:
        t = r["times"]
        cmd = r["command"]
        name = ("cordon (log on tmpfs)" if " run --audit /dev/shm" in cmd else
                "cordon (log on disk)" if " run --audit " in cmd else
                "cordon" if " run -- " in cmd and "cordon" in cmd else
                "bwrap" if cmd.split()[0] == "bwrap" or " bwrap " in cmd else
                "firejail" if "firejail" in cmd else
                "crun" if cmd.startswith("crun") else "/bin/true")
        rows.append((name, cmd, statistics.median(t) * 1e3, r["mean"] * 1e3,
                     r["stddev"] * 1e3 if r["stddev"] is not None else 0.0))
    return rows

for label, path in (("as root", sys.argv[1]), ("rootless (uid 65534, via setpriv)", sys.argv[2])):
    rows = load(path)
    print(f"\n### {label}\n")
    print("| command | median ms | mean ± stddev ms |")
    print("|---|---:|---:|")
    for name, cmd, med, mean, sd in rows:
        print(f"| `{cmd}` | {med:.2f} | {mean:.2f} ± {sd:.2f} |")
    m = {name: med for name, _, med, _, _ in rows}
    base = m.get("/bin/true", 0.0)
    print()
    for c in ("cordon", "cordon (log on disk)", "cordon (log on tmpfs)"):
        for peer in ("bwrap", "firejail", "crun"):
            if peer in m and c in m:
                print(f"{c}/{peer} (medians): {m[c] / m[peer]:.2f}x;"
                      f" minus the /bin/true baseline: {(m[c] - base) / (m[peer] - base):.2f}x")
PY

# --- warm and cold, in turns ------------------------------------------------
# The warm path (a per-user `cordon service` holding the log open and
# group-committing records) against the cold one (CORDON_WARM=0: the run
# opens the log itself), log on disk and on tmpfs, beside bwrap, in turns
# (bench/interleave.c; ratios to bwrap's median and p99); then runs per
# second with 8 concurrent callers, and the service's memory.
echo
echo "## warm and cold, in turns (${ROUNDS:-100} rounds; ratios to bwrap)"
cc -O2 -o "$W/interleave" "$SRC/bench/interleave.c"
export CORDON_SERVICE_DIR="$W/svc" CORDON_SERVICE_IDLE=600
mkdir -p "$W/svc" && chmod 1777 "$W/svc"
CORDON_WARM=1 "$CORDON" run --audit "$W/warm.db" -- /bin/true
CORDON_WARM=1 "$CORDON" run --audit "$SHM/warm.db" -- /bin/true
sleep 1
INTERLEAVE_BASE=1 "$W/interleave" "${ROUNDS:-100}" "env CORDON_WARM=0 /bin/true" \
	"env CORDON_WARM=0 $BWRAP" \
	"env CORDON_WARM=0 $CORDON run --audit $W/cold.db -- /bin/true" \
	"env CORDON_WARM=1 $CORDON run --audit $W/warm.db -- /bin/true" \
	"env CORDON_WARM=0 $CORDON run --audit $SHM/cold.db -- /bin/true" \
	"env CORDON_WARM=1 $CORDON run --audit $SHM/warm.db -- /bin/true"
echo "## 8 concurrent callers, 10 runs each, log on disk: runs per second"
for w in 0 1; do
	t0=$(date +%s.%N)
	for a in 1 2 3 4 5 6 7 8; do
		(for i in 1 2 3 4 5 6 7 8 9 10; do CORDON_WARM=$w "$CORDON" run --audit "$W/conc-$w.db" -- /bin/true; done) &
	done
	wait
	echo "CORDON_WARM=$w: $(echo "$t0 $(date +%s.%N)" | awk '{ printf "%.1f", 80 / ($2 - $1) }') runs/s"
done
pid=$(cat "$W/svc/$(id -u)/service.lock")
echo "service (pid $pid, 3 logs open, no templates): $(awk '/VmRSS/ { print $2, $3 }' "/proc/$pid/status") RSS"
kill "$pid"

# --- memory -------------------------------------------------------------------
# /usr/bin/time's "Maximum resident set size" is wait4's ru_maxrss: the peak
# of the process and of the children it reaped.  For cordon that is the
# supervisor (its forked init and /bin/true are smaller); cordon's own --json
# max_rss_kb is the sandboxed command's, not cordon's.
echo
echo "## peak RSS (KiB, median of 20 runs, /usr/bin/time -v)"
rss() {
	i=0
	while [ $i -lt 20 ]; do
		/usr/bin/time -v "$@" 2>&1 >/dev/null | awk -F': ' '/Maximum resident/ { print $2 }'
		i=$((i + 1))
	done | sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'
}
if [ -x /usr/bin/time ]; then
	echo "/bin/true: $(rss /bin/true)"
	echo "bwrap:     $(rss $BWRAP)"
	echo "cordon:    $(rss "$CORDON" run --audit "$SHM/rss.db" -- /bin/true)"
	[ -z "$CRUN" ] || echo "crun:      $(rss $CRUN)"
	command -v firejail >/dev/null && $FIREJAIL >/dev/null 2>&1 && echo "firejail:  $(rss $FIREJAIL)"
	echo "rootless bwrap:  $(rss $AS_NOBODY $BWRAP)"
	echo "rootless cordon: $(HOME="$W/home" rss $AS_NOBODY "$CORDON" run -- /bin/true)"
else
	echo "(/usr/bin/time missing: apt-get install time)"
fi

# --- breakdown ----------------------------------------------------------------
# What cordon spends before the sandbox: exec and dynamic linking
# (`cordon --help`), option parsing and the plan (`--dry-run`), and, in
# process, building the seccomp BPF with libseccomp and making/removing the
# run's cgroup v1 directories (a harness linked against libcordon.a).
[ "${BREAKDOWN:-1}" = 1 ] || exit 0
echo
echo "## breakdown"
hyperfine -N --warmup "$WARMUP" --runs "$RUNS" --export-json "$OUT/startup-breakdown.json" \
	/bin/true "$CORDON --help" "$CORDON run --dry-run -- /bin/true" \
	"unshare --user --map-root-user --mount --pid --fork --ipc --uts /bin/true" \
	"unshare --user --map-root-user --mount --pid --fork --ipc --uts --net /bin/true" >/dev/null
python3 - "$OUT/startup-breakdown.json" <<'PY'
import json, statistics, sys
for r in json.load(open(sys.argv[1]))["results"]:
    print(f"{statistics.median(r['times']) * 1e3:8.2f} ms median  {r['command']}")
PY
B=$(dirname "$CORDON")
if [ -f "$B/libcordon.a" ] && command -v cc >/dev/null; then
	mkdir -p "$W/harness"
	cat >"$W/harness/h.c" <<'EOF'
#include "sandbox/cgroup.h"
#include "util/limits.h"
#include "sandbox/seccomp.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static double now_us(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}
static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}
static void report(const char *name, double *v, int n)
{
	double s = 0;
	qsort(v, n, sizeof *v, cmp);
	for (int i = 0; i < n; i++)
		s += v[i];
	printf("%8.1f us median  %8.1f us mean  %8.1f us p90  %s (n=%d)\n", v[n / 2], s / n,
	       v[n * 9 / 10], name, n);
}
int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 200;
	double *a = calloc(n, sizeof *a), *b = calloc(n, sizeof *b), *c = calloc(n, sizeof *c);
	struct cd_err err;
	struct cd_limits lim = { .memory = 512ull << 20, .pids = 256, .timeout_ms = 60000 };
	unsigned len = 0;

	for (int i = 0; i < n; i++) {
		struct cd_seccomp_opts o = { .allow_net_inet = 0, .notify = 1 };
		struct cd_seccomp_prog p;
		double t = now_us();
		memset(&p, 0, sizeof p);
		if (cd_seccomp_build(&o, &p, &err)) {
			fprintf(stderr, "cd_seccomp_build: %s\n", err.msg);
			return 1;
		}
		a[i] = now_us() - t;
		len = p.len;
		cd_seccomp_prog_release(&p);
	}
	printf("seccomp filter: %u BPF instructions\n", len);
	report("cd_seccomp_build (libseccomp, every run)", a, n);
	for (int i = 0; i < n; i++) {
		char id[64];
		struct cd_cgroup *cg = NULL;
		double t;
		snprintf(id, sizeof id, "bench-%d-%d", (int)getpid(), i);
		t = now_us();
		if (cd_cgroup_create(id, &lim, &cg, &err)) {
			fprintf(stderr, "cd_cgroup_create: %s\n", err.msg);
			return 1;
		}
		b[i] = now_us() - t;
		if (i == 0)
			printf("cgroup mechanism for memory: %s\n", cd_cgroup_mechanism(cg, "memory"));
		t = now_us();
		cd_cgroup_destroy(cg);
		c[i] = now_us() - t;
	}
	report("cd_cgroup_create (mkdir + limit writes)", b, n);
	report("cd_cgroup_destroy (rmdir)", c, n);
	return 0;
}
EOF
	# shellcheck disable=SC2046
	if cc -O2 -I"$SRC/src/lib" $(pkg-config --cflags jansson) -o "$W/harness/h" "$W/harness/h.c" \
		"$B/libcordon.a" $(make -s -C "$SRC" print-ldlibs) 2>"$W/harness/cc.log"; then
		"$W/harness/h" "$RUNS"
		if [ "$(id -u)" = 0 ]; then
			echo "rootless (no writable cgroup: rlimits):"
			chmod -R a+rX "$W/harness"
			$AS_NOBODY "$W/harness/h" "$RUNS" | grep -v '^seccomp filter' || true
		fi
	else
		echo "(harness did not build: $(head -3 "$W/harness/cc.log"))"
	fi
fi
echo
echo "# hyperfine JSON in $OUT"
