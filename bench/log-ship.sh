#!/bin/sh
# bench/log-ship.sh — `cordon log ship`: records per second copied from a
# local SQLite log (N records, bulk-written, a checkpoint every 1000) into
# a local PostgreSQL (Unix socket, SCRAM, fsync and synchronous_commit on),
# as the host's writer role; then a second ship (nothing new: the local
# walk and the head check alone) and `verify` of the shipped chain.
#
#   N=1000000 sh bench/log-ship.sh [BUILD_DIR]
# Needs root (the server runs as uid 65534) and Debian's postgresql-15.
set -eu
B=${1:-build}
B=$(cd "$B" && pwd)
CORDON="$B/cordon"
APPEND="$B/tests/tools/audit-append"
CORDON_SRC=$(cd "$(dirname "$0")/.." && pwd)
N=${N:-1000000}
T=$(mktemp -d /var/tmp/cordon-bench-ship.XXXXXX)
chmod 0755 "$T"
skip() { echo "log-ship.sh: $*" >&2; exit 1; }
diag() { echo "# $*"; }
_tap_cleanup() { rm -rf "$T"; }
. "$CORDON_SRC/tests/helpers/pg-start.sh"
pg_start
export HOME="$T" XDG_CONFIG_HOME="$T/cfg"
unset XDG_STATE_HOME CORDON_AUDIT CORDON_AUDIT_KEY CORDON_AUDIT_CHECKPOINTS
now() { date +%s.%N; }
rate() { echo "$1 $2 $3" | awk '{ printf "%.0f", $1 / ($3 - $2) }'; }
ADMIN="postgresql://cordon_admin@/cordon?host=$PG_SOCK"
env PGPASSWORD="$PG_ADMIN_PW" "$CORDON" log verify --audit "$ADMIN" >/dev/null
pg_sql "$(cat "$CORDON_SRC/docs/postgresql-roles.sql")
CREATE ROLE host_a LOGIN PASSWORD 'pw-a' IN ROLE cordon_writer;
INSERT INTO audit_writers VALUES ('host_a', '$(hostname)');"
"$CORDON" log keygen >/dev/null
"$APPEND" --db "$T/l.db" -n "$N" --bulk --key "$T/cfg/cordon/audit.key" --every 1000 >/dev/null
total=$(sqlite3 "$T/l.db" "SELECT max(seq) FROM records")
TO="postgresql://host_a@/cordon?host=$PG_SOCK"
t0=$(now)
PGPASSWORD=pw-a "$CORDON" log ship --from "$T/l.db" --to "$TO" >/dev/null
t1=$(now)
echo "ship $total records: $(echo "$t0 $t1" | awk '{ printf "%.1f", $2 - $1 }') s ($(rate "$total" "$t0" "$t1") records/s)"
t0=$(now)
PGPASSWORD=pw-a "$CORDON" log ship --from "$T/l.db" --to "$TO" >/dev/null
t1=$(now)
echo "ship again (nothing new): $(echo "$t0 $t1" | awk '{ printf "%.1f", $2 - $1 }') s"
t0=$(now)
env PGPASSWORD="$PG_ADMIN_PW" "$CORDON" log verify --audit "$ADMIN" --pubkey "$T/cfg/cordon/audit.pub" >/dev/null
t1=$(now)
echo "verify the shipped chain: $(echo "$t0 $t1" | awk '{ printf "%.1f", $2 - $1 }') s ($(rate "$total" "$t0" "$t1") records/s)"
