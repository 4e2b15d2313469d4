#!/bin/sh
# bench/pool.sh — issue 21, measured before building a pool of pre-spawned
# one-use sandboxes: in turns (bench/interleave.c), as root and as uid
# 65534, log on disk: /bin/true, bwrap, `cordon --help` (exec and dynamic
# linking), `cordon run --dry-run` (options, policy, plan: what a pooled
# run's client still does), cordon warm and cold, and bench/pool-probe.c's
# crude pooled path (a service holding one sandbox fully built ahead;
# client exec, argv and stdio over SCM_RIGHTS, an intent and a result
# fdatasync'd, the command spawned in the built sandbox) with its log on
# disk and on tmpfs, and bench/pool-park.c's (cordon's own sandbox, every
# wall up, parked where `cordon run` waits for its intent; log on disk).
# Ratios to bwrap's median and p99; then the estimates of a pooled
# `cordon run`: dry-run + (prototype - /bin/true), i.e. the client's own
# work plus the hand-off.
#
#   sh bench/pool.sh [CORDON]       ROUNDS (60)
#
# Prints `uptime` before and after each table: the machine is shared.
# Benchmarks only: no figure here is ever asserted.
set -eu
SRC=$(cd "$(dirname "$0")/.." && pwd)
CORDON=${1:-$SRC/build/cordon}
case "$CORDON" in /*) ;; *) CORDON=$(pwd)/$CORDON ;; esac
[ -x "$CORDON" ] || { echo "pool.sh: $CORDON is not executable (run make)" >&2; exit 1; }
ROUNDS=${ROUNDS:-60}
command -v bwrap >/dev/null || { echo "pool.sh: bwrap missing (sh scripts/deps.sh bench)" >&2; exit 1; }

W=$(mktemp -d /tmp/cordon-bench-pool.XXXXXX)
SHM=$(mktemp -d /dev/shm/cordon-bench-pool.XXXXXX)
PIDS=""
cleanup() {
	# the prototypes' services, then the warm services this run started
	# (each writes its pid in its lock file)
	for p in $PIDS $(cat "$W"/svc/*/service.lock 2>/dev/null); do
		kill "$p" 2>/dev/null || true
	done
	rm -rf "$W" "$SHM"
}
trap cleanup EXIT
chmod 755 "$W" "$SHM"
mkdir -m 755 "$W/cwd" "$W/nobody" "$SHM/nobody"
chown 65534:65534 "$W/nobody" "$SHM/nobody" 2>/dev/null || true
cc -O2 -o "$W/interleave" "$SRC/bench/interleave.c"
cc -O2 -o "$W/pool-probe" "$SRC/bench/pool-probe.c"
# pool-park links the library beside CORDON, else this tree's
LIBCORDON=$(dirname "$CORDON")/libcordon.a
[ -f "$LIBCORDON" ] || LIBCORDON=$SRC/build/libcordon.a
[ -f "$LIBCORDON" ] || { echo "pool.sh: no libcordon.a (run make)" >&2; exit 1; }
# shellcheck disable=SC2046
cc -O2 -I"$SRC/src/lib" -o "$W/pool-park" "$SRC/bench/pool-park.c" "$LIBCORDON" \
	$(make -s -C "$SRC" print-ldlibs)
cd "$W/cwd"
export CORDON_SERVICE_DIR="$W/svc" CORDON_SERVICE_IDLE=600
mkdir -p "$W/svc" && chmod 1777 "$W/svc"
BWRAP="bwrap --unshare-all --die-with-parent --new-session --ro-bind / / --proc /proc --dev /dev /bin/true"

# probe services: $1 prefix (setpriv or empty), $2 socket, $3 log
probe_serve() {
	setsid $1 "$W/pool-probe" serve "$2" "$3" </dev/null >/dev/null 2>"$W/probe.err" &
	PIDS="$PIDS $!"
	i=0
	while [ ! -S "$2" ] && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
}

# one table: $1 label, $2 prefix of every command, $3 a directory for the
# logs and sockets on disk, $4 one on tmpfs (both writable by the user)
table() {
	label=$1 pre=$2 d=$3
	probe_serve "$pre" "$d/probe-disk.sock" "$d/probe.log"
	probe_serve "$pre" "$d/probe-shm.sock" "$4/probe.log"
	setsid $pre "$W/pool-park" serve "$d/park.sock" "$d/park.log" </dev/null >/dev/null 2>>"$W/probe.err" &
	PIDS="$PIDS $!"
	sleep 1
	$pre CORDON_WARM=1 "$CORDON" run --audit "$d/warm.db" -- /bin/true
	echo
	echo "## $label, $ROUNDS rounds in turns; load before: $(uptime | sed 's/.*load/load/')"
	INTERLEAVE_BASE=1 "$W/interleave" "$ROUNDS" "$pre /bin/true" "$pre $BWRAP" \
		"$pre $CORDON --help" "$pre $CORDON run --dry-run -- /bin/true" \
		"$pre CORDON_WARM=1 $CORDON run --audit $d/warm.db -- /bin/true" \
		"$pre CORDON_WARM=0 $CORDON run --audit $d/cold.db -- /bin/true" \
		"$pre $W/pool-probe run $d/probe-disk.sock /bin/true" \
		"$pre $W/pool-probe run $d/probe-shm.sock /bin/true" \
		"$pre $W/pool-park run $d/park.sock" >"$W/out"
	echo "# load after: $(uptime | sed 's/.*load/load/')"
	awk '
	{ med[NR] = $7; p10[NR] = $3 }
	{ n = split("/bin/true|bwrap|cordon --help|cordon run --dry-run|cordon warm, log on disk|cordon cold, log on disk|pool-probe, log on disk|pool-probe, log on tmpfs|pool-park (cordon sandbox parked), log on disk", name, "|")
	  printf "| %s | %.1f | %.1f | %.1f | %s / %s |\n", name[NR], $3, $7, $9, $11, $12 }
	END {
	  est = med[4] + med[7] - med[1]; e10 = p10[4] + p10[7] - p10[1]
	  printf "| pooled cordon, estimated: dry-run + (probe on disk - /bin/true) | %.1f | %.1f | | %.2fx / |\n", e10, est, est / med[2]
	  est = med[4] + med[9] - med[1]; e10 = p10[4] + p10[9] - p10[1]
	  printf "| pooled cordon, estimated: dry-run + (pool-park - /bin/true) | %.1f | %.1f | | %.2fx / |\n", e10, est, est / med[2]
	}' "$W/out" | sed '1i| command | p10 ms | median ms | p99 ms | median / p99, to bwrap |\n|---|---:|---:|---:|---:|'
}

echo "# $(nproc) CPUs, kernel $(uname -r); cordon $CORDON"
table "as $(id -un)" "env" "$W" "$SHM"
if [ "$(id -u)" = 0 ]; then
	table "uid 65534" "setpriv --reuid=65534 --regid=65534 --clear-groups env HOME=$W/nobody" \
		"$W/nobody" "$SHM/nobody"
fi
