#!/bin/sh
# bench/startup-turns.sh — start-to-exit of `cordon run -- /bin/true` beside
# /bin/true and bubblewrap, measured in turns (bench/interleave.c: every
# command once per round, the order rotated), as root with the log on tmpfs
# and on disk, and rootless (uid 65534).  On a shared machine this is the
# comparison to trust: every command sees the same load.  startup.sh has
# the hyperfine run, firejail, crun, memory and the breakdown.
#
#   sh bench/startup-turns.sh [CORDON]      ROUNDS (120)
set -eu
SRC=$(cd "$(dirname "$0")/.." && pwd)
CORDON=${1:-$SRC/build/cordon}
case "$CORDON" in /*) ;; *) CORDON=$(pwd)/$CORDON ;; esac
[ -x "$CORDON" ] || { echo "startup-turns.sh: $CORDON is not executable (run make)" >&2; exit 1; }
ROUNDS=${ROUNDS:-120}
command -v bwrap >/dev/null || { echo "startup-turns.sh: bwrap missing (sh scripts/deps.sh bench)" >&2; exit 1; }

# As in startup.sh: a fresh world-readable working directory; the logs
# (and the rootless HOME) beside it, never inside what cordon exposes.
W=$(mktemp -d /tmp/cordon-bench-turns.XXXXXX)
SHM=$(mktemp -d /dev/shm/cordon-bench-turns.XXXXXX)
trap 'rm -rf "$W" "$SHM"' EXIT
chmod 755 "$W" "$SHM"
mkdir -m 755 "$W/cwd" "$W/nobody"
chown 65534:65534 "$W/nobody" 2>/dev/null || true
cc -O2 -o "$W/interleave" "$SRC/bench/interleave.c"
cd "$W/cwd"
BWRAP="bwrap --unshare-all --die-with-parent --new-session --ro-bind / / --proc /proc --dev /dev /bin/true"
AS_NOBODY="setpriv --reuid=65534 --regid=65534 --clear-groups env HOME=$W/nobody"
echo "# $(nproc) CPUs, kernel $(uname -r), load $(cut -d' ' -f1-3 /proc/loadavg); $ROUNDS rounds"
"$W/interleave" "$ROUNDS" /bin/true "$BWRAP" \
	"$CORDON run --audit $SHM/audit.db -- /bin/true" \
	"$CORDON run --audit $W/audit.db -- /bin/true"
if [ "$(id -u)" = 0 ]; then
	echo "# rootless (uid 65534)"
	"$W/interleave" "$ROUNDS" "$AS_NOBODY $BWRAP" \
		"$AS_NOBODY $CORDON run --audit $W/nobody/audit.db -- /bin/true"
fi
