#!/bin/sh
# bench/store-pg.sh — what the shared store costs: the added latency of
# `cordon run -- /bin/true` with state and audit on a local PostgreSQL
# (Unix socket, SCRAM, fsync and synchronous_commit on) against the SQLite
# default on the same disk, and durable appends per second from 8
# concurrent writers (one chain, the advisory lock) on each.
#
#   sh bench/store-pg.sh [CORDON]
# Needs root (the server runs as uid 65534) and Debian's postgresql-15.
set -eu
CORDON=${1:-build/cordon}
case "$CORDON" in /*) ;; *) CORDON=$(pwd)/$CORDON ;; esac
B=$(dirname "$CORDON")
CORDON_SRC=$(cd "$(dirname "$0")/.." && pwd)
T=$(mktemp -d /var/tmp/cordon-bench-pg.XXXXXX)
chmod 0755 "$T"
skip() { echo "store-pg.sh: $*" >&2; exit 1; }
diag() { echo "# $*"; }
_tap_cleanup() { rm -rf "$T"; }
. "$CORDON_SRC/tests/helpers/pg-start.sh"
pg_start
URI="postgresql://cordon_admin:$PG_ADMIN_PW@/cordon?host=$PG_SOCK"
export HOME="$T" XDG_STATE_HOME="$T/state"
unset CORDON_AUDIT_KEY CORDON_AUDIT_CHECKPOINTS
mkdir -p "$T/work" && cd "$T/work"
echo "# cordon run -- /bin/true: SQLite files in $T vs PostgreSQL on a local socket"
CORDON_AUDIT="$T/audit.db" CORDON_STATE="$T/state.db" "$CORDON" run -- /bin/true
CORDON_AUDIT="$URI" CORDON_STATE="$URI" "$CORDON" run -- /bin/true
hyperfine -N --warmup 3 --runs "${RUNS:-40}" --export-markdown "$T/run.md" \
	-n sqlite "env CORDON_AUDIT=$T/audit.db CORDON_STATE=$T/state.db $CORDON run -- /bin/true" \
	-n postgresql "env CORDON_AUDIT=$URI CORDON_STATE=$URI $CORDON run -- /bin/true" |
	sed "s/$PG_ADMIN_PW/***/g"
APPEND="$B/tests/tools/audit-append"
# A stale tool speaks an older schema and the store refuses it: rebuild it.
[ "$B" != "$CORDON_SRC/build" ] || make -s -C "$CORDON_SRC" build/tests/tools/audit-append >/dev/null 2>&1 || true
if [ -x "$APPEND" ]; then
	for db in "$T/w.db" "$URI"; do
		t0=$(date +%s.%N)
		pids=""
		for i in 1 2 3 4 5 6 7 8; do
			"$APPEND" --db "$db" -n "${N:-250}" --agent "w$i" >/dev/null &
			pids="$pids $!"
		done
		for p in $pids; do wait "$p"; done
		t1=$(date +%s.%N)
		echo "8 writers, durable appends: $(echo "$t0 $t1 ${N:-250}" | awk '{ printf "%.0f", 8 * $3 / ($2 - $1) }') records/s ($(case $db in postgres*) echo postgresql ;; *) echo sqlite ;; esac))"
	done
fi
# An MCP call through `cordon mcp` with the store in SQLite and in
# PostgreSQL (bench/mcp.sh: the official SDK client, server-filesystem).
if [ "${MCP:-1}" = 1 ]; then
	echo "# tools/call through cordon mcp, SQLite files:"
	ROUNDS=${MCP_ROUNDS:-2} sh "$CORDON_SRC/bench/mcp.sh" "$CORDON" 2>&1 | grep -E "median|added" || true
	echo "# tools/call through cordon mcp, PostgreSQL:"
	CORDON_BENCH_STORE="$URI" ROUNDS=${MCP_ROUNDS:-2} sh "$CORDON_SRC/bench/mcp.sh" "$CORDON" 2>&1 |
		grep -E "median|added" | sed "s/$PG_ADMIN_PW/***/g" || true
fi
