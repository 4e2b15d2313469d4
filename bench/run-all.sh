#!/bin/sh
# bench/run-all.sh CORDON — run every bench/*.sh but this one, in name order,
# each with CORDON (the path of the cordon binary) as $1.  `make bench` calls
# `sh bench/run-all.sh $(abspath build/cordon)`.  A script whose usage names
# BUILD_DIR as its argument (audit.sh and policy.sh at the time of writing)
# is given CORDON's directory instead, which is the build directory.  A failing benchmark is
# reported and the others still run; the exit status is 1 if any failed.
set -u
[ $# -ge 1 ] || { echo "usage: sh bench/run-all.sh CORDON" >&2; exit 2; }
CORDON=$1
case "$CORDON" in /*) ;; *) CORDON=$(pwd)/$CORDON ;; esac
[ -x "$CORDON" ] || { echo "run-all.sh: $CORDON is not executable (run make)" >&2; exit 2; }
HERE=$(cd "$(dirname "$0")" && pwd)
failed=""
for b in "$HERE"/*.sh; do
	[ "$(basename "$b")" = run-all.sh ] && continue
	echo "==> bench/$(basename "$b")"
	arg=$CORDON
	grep -q '^#.*sh bench/[a-z-]*\.sh \[*BUILD_DIR' "$b" && arg=$(dirname "$CORDON")
	if ! sh "$b" "$arg"; then
		echo "==> bench/$(basename "$b") FAILED" >&2
		failed="$failed $(basename "$b")"
	fi
	echo
done
[ -z "$failed" ] || { echo "run-all.sh: failed:$failed" >&2; exit 1; }
