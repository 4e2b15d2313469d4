#!/bin/sh
# bench/scan.sh — what the walk of the bound trees costs at start-up:
# `cordon run -- /bin/true` from an empty directory and from a generated
# working tree of 50,000 small files (2,500 directories of 20, plus one
# nested git repository), in the default profile and in workspace-write
# (which also checks for planted files after the run), one hyperfine run
# per directory.  With a second binary (BEFORE), both are measured side by
# side, interleaved by hyperfine's command order.
#
#   sh bench/scan.sh [CORDON [BEFORE]]
#
# As root, the same tree is measured a third time through a nosuid bind
# (the walk skips its per-file setuid check there).  With NOBODY=1, root
# runs the whole benchmark as uid 65534 instead (a rootless caller, whose
# sandbox the setuid check leaves out).
#
# Each directory is measured with the warm path's tree watcher on (the
# default: the walk and the child's check look only at the directories
# it names as changed) and off (CORDON_WATCH=0); WATCH="1" or "0" picks
# one.  Environment: RUNS (40), WARMUP (5).  The audit log is on tmpfs
# (/dev/shm), so the disk's fsync does not drown the walk; so is the state
# directory, fresh each time, with the walk's cache (the warm-up fills it).  Prints wall
# time and the CPU time (user + system) hyperfine measured; on a shared
# machine compare the CPU times.  Benchmarks only: nothing is asserted.
set -eu
if [ "${NOBODY:-}" = 1 ] && [ "$(id -u)" -eq 0 ]; then
	exec setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all \
		env NOBODY= HOME=/tmp sh "$0" "$@"
fi
SRC=$(cd "$(dirname "$0")/.." && pwd)
CORDON=${1:-$SRC/build/cordon}
BEFORE=${2:-}
RUNS=${RUNS:-40}
WARMUP=${WARMUP:-5}
for t in hyperfine python3 git; do
	command -v "$t" >/dev/null || { echo "scan.sh: $t missing" >&2; exit 1; }
done
W=$(mktemp -d /tmp/cordon-bench-scan.XXXXXX)
chmod 755 "$W"
mkdir -m 755 "$W/empty"
python3 - "$W/tree" <<'EOF'
import os, sys
root = sys.argv[1]
for d in range(2500):
    p = "%s/d%02d/s%03d" % (root, d // 100, d)
    os.makedirs(p)
    for f in range(20):
        with open("%s/f%02d.txt" % (p, f), "w") as fh:
            fh.write("x\n")
EOF
git init -q "$W/tree/nested"
# the state directory of its own: the walk's cache (scan/) is kept there
SD=$(mktemp -d /dev/shm/cordon-bench-scan.XXXXXX)
CORDON_AUDIT=$SD/audit.db
CORDON_STATE=$SD/state.db
export CORDON_AUDIT CORDON_STATE
dirs="empty tree"
if [ "$(id -u)" -eq 0 ] && mkdir "$W/tree-nosuid" && mount --bind "$W/tree" "$W/tree-nosuid" &&
	mount -o remount,bind,nosuid "$W/tree-nosuid"; then
	dirs="$dirs tree-nosuid"
fi
# (`|| :`: under set -e a failed umount, nothing mounted as nobody, would
# end the trap before the rm)
trap 'cd / && umount "$W/tree-nosuid" 2>/dev/null || :; rm -rf "$W" "$SD"' EXIT

echo "# scan benchmark as uid $(id -u): $(nproc) CPUs, kernel $(uname -r), load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "# tree: $(find "$W/tree" -type f | wc -l) files in $(find "$W/tree" -type d | wc -l) directories"
# the warm path's tree watcher on (the default) and off (CORDON_WATCH=0):
# a private service directory, its service stopped at the end
SVC=$(mktemp -d /dev/shm/cordon-bench-svc.XXXXXX)
chmod 755 "$SVC"
CORDON_SERVICE_DIR=$SVC CORDON_WARM=1
export CORDON_SERVICE_DIR CORDON_WARM
for watch in ${WATCH:-1 0}; do
CORDON_WATCH=$watch
export CORDON_WATCH
echo "# CORDON_WATCH=$watch"
for dir in $dirs; do
	cd "$W/$dir"
	set --
	for bin in ${BEFORE:+"$BEFORE"} "$CORDON"; do
		set -- "$@" -n "$(basename "$(dirname "$(dirname "$bin")")") strict" "$bin run -- /bin/true"
		set -- "$@" -n "$(basename "$(dirname "$(dirname "$bin")")") workspace-write" \
			"$bin run --profile workspace-write -- /bin/true"
	done
	hyperfine -N --warmup "$WARMUP" --runs "$RUNS" --export-json "$W/$dir.json" "$@" >/dev/null
	echo "## from the $dir directory: median wall ms, mean user+system ms"
	python3 - "$W/$dir.json" <<'EOF'
import json, sys
for r in json.load(open(sys.argv[1]))["results"]:
    print("%-40s %8.1f %8.1f" % (r["command"], r["median"] * 1000, (r["user"] + r["system"]) * 1000))
EOF
done
done
kill "$(cat "$SVC/$(id -u)/service.lock" 2>/dev/null)" 2>/dev/null || :
rm -rf "$SVC"
