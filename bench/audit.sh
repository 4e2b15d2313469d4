#!/bin/sh
# bench/audit.sh — the audit log's costs: durable appends (intent+result
# pairs, one transaction each, as `cordon run` writes them), bulk appends,
# verification of a 1,000,000-record log, bytes per record.
#
#   sh bench/audit.sh [BUILD_DIR] [DIR]
# BUILD_DIR defaults to ./build; DIR (where the logs go) to a fresh temp
# dir under /var/tmp (disk); pass a tmpfs path to compare.
set -eu
B=${1:-build}
B=$(cd "$B" && pwd)
CORDON="$B/cordon"
APPEND="$B/tests/tools/audit-append"
DIR=${2:-$(mktemp -d /var/tmp/cordon-bench-audit.XXXXXX)}
N_PAIRS=${N_PAIRS:-2000}
N_BULK=${N_BULK:-1000000}
[ -x "$APPEND" ] || { echo "build $APPEND first (make check builds it)" >&2; exit 1; }
export HOME="$DIR" XDG_CONFIG_HOME="$DIR/cfg"
unset XDG_STATE_HOME CORDON_AUDIT CORDON_AUDIT_KEY CORDON_AUDIT_CHECKPOINTS

now() { date +%s.%N; }
rate() { echo "$1 $2 $3" | awk '{ printf "%.0f", $1 / ($3 - $2) }'; }

echo "# audit log benchmark in $DIR ($(df -T "$DIR" | awk 'NR==2 { print $2 }'))"
"$CORDON" log keygen >/dev/null

t0=$(now)
"$APPEND" --db "$DIR/pairs.db" -n "$N_PAIRS" --pairs --key "$DIR/cfg/cordon/audit.key" \
	--every 1000 --cp-out "$DIR/pairs.db.checkpoints" >/dev/null
t1=$(now)
echo "durable appends (intent+result, one fsync'd transaction each): $(rate $((2 * N_PAIRS)) "$t0" "$t1") records/s, $(rate "$N_PAIRS" "$t0" "$t1") runs/s"

t0=$(now)
"$APPEND" --db "$DIR/bulk.db" -n "$N_BULK" --bulk >/dev/null
t1=$(now)
echo "bulk appends (1000 per transaction): $(rate "$N_BULK" "$t0" "$t1") records/s"

"$CORDON" log checkpoint --audit "$DIR/bulk.db" >/dev/null
sqlite3 "$DIR/bulk.db" 'PRAGMA wal_checkpoint(TRUNCATE)' >/dev/null 2>&1 || true
size=$(stat -c %s "$DIR/bulk.db")
echo "database size: $size bytes for $N_BULK records: $((size / N_BULK)) bytes/record"

t0=$(now)
"$CORDON" log verify --audit "$DIR/bulk.db" --pubkey "$DIR/cfg/cordon/audit.pub" >/dev/null
t1=$(now)
echo "verify $N_BULK records: $(echo "$t0 $t1" | awk '{ printf "%.2f", $2 - $1 }') s ($(rate "$N_BULK" "$t0" "$t1") records/s)"

t0=$(now)
"$CORDON" log export --audit "$DIR/bulk.db" --format jsonl | wc -l >/dev/null
t1=$(now)
echo "export jsonl $N_BULK records: $(echo "$t0 $t1" | awk '{ printf "%.2f", $2 - $1 }') s"

[ $# -ge 2 ] || rm -rf "$DIR"
