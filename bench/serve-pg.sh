#!/bin/sh
# bench/serve-pg.sh — the console's audit pages over a 1,000,000-record log
# in PostgreSQL, deep pages included: time to first byte of the newest
# page, of a page half-way back reached by its "Older records" link (the
# keyset cursor on time, host, seq), of the same page asked by seq alone
# (the old cursor, kept for links made before), and of the filtered pages.
# The log is filled with SQL (generate_series as the superuser, the
# chain's hashes placeholders: the pages do not verify), which takes
# seconds where audit-append took 26 minutes; the console makes its
# indexes at its first start (timed).
#
#   sh bench/serve-pg.sh [CORDON]   # N (records, default 1000000), RUNS (10)
# Needs root and Debian's postgresql (tests/helpers/pg-start.sh).
set -eu
CORDON=${1:-build/cordon}
case "$CORDON" in /*) ;; *) CORDON=$(pwd)/$CORDON ;; esac
CORDON_SRC=$(cd "$(dirname "$0")/.." && pwd)
N=${N:-1000000}
RUNS=${RUNS:-10}
T=$(mktemp -d /var/tmp/cordon-bench-servepg.XXXXXX)
chmod 0755 "$T"
export HOME="$T" XDG_STATE_HOME="$T/state" XDG_CONFIG_HOME="$T/cfg"
unset CORDON_AUDIT CORDON_STATE CORDON_AUDIT_KEY CORDON_AUDIT_CHECKPOINTS
serve_pid=""
cleanup() {
	[ -z "$serve_pid" ] || kill "$serve_pid" 2>/dev/null || true
	[ -z "${PG_SOCK:-}" ] || pg_stop 2>/dev/null || true
	rm -rf "$T"
}
trap cleanup EXIT
diag() { echo "# $*"; }
skip() { echo "serve-pg.sh: $*" >&2; exit 1; }
_tap_cleanup() { :; }
. "$CORDON_SRC/tests/helpers/pg-start.sh"
pg_start
trap cleanup EXIT
URI="postgresql://cordon_admin@/cordon?host=$PG_SOCK"
export PGPASSWORD="$PG_ADMIN_PW"
"$CORDON" log verify --audit "$URI" >/dev/null # the owner makes the schema

echo "# cordon serve over a $N-record PostgreSQL audit log ($(nproc) CPUs); $(uptime)"
t0=$(date +%s.%N)
# One host's chain: the rare agent's 1000 denials the oldest, then the
# busy agent's allows, a millisecond apart.
pg_sql "INSERT INTO audit_records (host, seq, time_ns, kind, agent, decision, target,
	prev_hash, hash) SELECT 'bench-host', s, 1700000000000000000 + s::bigint * 1000000, 'decision',
	CASE WHEN s <= 1000 THEN 'rare' ELSE 'busy' END,
	CASE WHEN s <= 1000 THEN 'deny' ELSE 'allow' END,
	CASE WHEN s <= 1000 THEN 'needle' ELSE NULL END,
	md5(s::text), md5((s + 1)::text) FROM generate_series(1, $N) s; ANALYZE audit_records"
t1=$(date +%s.%N)
echo "filled the log in $(echo "$t0 $t1" | awk '{ printf "%.1f", $2 - $1 }') s (SQL)"

cat >"$T/p.yaml" <<'YAML'
version: 1
agents:
  - {id: coder, owner: alice}
tools:
  - {id: shell, kind: command}
approvers:
  people: [alice]
YAML
"$CORDON" serve --listen 127.0.0.1:0 --policy "$T/p.yaml" --audit "$URI" --state "$T/state.db" \
	>"$T/link" 2>"$T/serve.err" &
serve_pid=$!
t0=$(date +%s.%N)
i=0
while [ ! -s "$T/link" ] && [ $i -lt 6000 ]; do sleep 0.05; i=$((i + 1)); done
t1=$(date +%s.%N)
echo "start (the indexes made on a log without them): $(echo "$t0 $t1" | awk '{ printf "%.2f", $2 - $1 }') s"
link=$(head -1 "$T/link")
origin=${link%%/login*}
curl -s -o /dev/null -D "$T/h" -X POST -H "Origin: $origin" --data "t=${link#*t=}" "$origin/login"
cookie=$(awk -F': ' 'tolower($1) == "set-cookie" {print $2}' "$T/h" | tr -d '\r' | sed 's/;.*//')

stats() { sort -n | awk '{ v[NR] = $1 } END { printf "median %.1f ms, max %.1f ms", v[int((NR + 1) / 2)] * 1000, v[NR] * 1000 }'; }
ttfb() { # LABEL PATH
	i=0
	: >"$T/t"
	while [ $i -lt "$RUNS" ]; do
		curl -s -o "$T/page" -w '%{time_starttransfer}\n' -H "Cookie: $cookie" "$origin$2" >>"$T/t"
		i=$((i + 1))
	done
	echo "  $1 ($2, $(grep -o '<tr id="seq-' "$T/page" | wc -l) rows): $(stats <"$T/t")"
}
mid=$((N / 2))
key=$(pg_sql "SELECT time_ns || '&bh=' || host FROM audit_records WHERE seq = $mid")
echo "PostgreSQL, time to first byte, $RUNS samples each; $(uptime)"
ttfb "newest page" "/log"
ttfb "half-way back, by the keyset cursor (Older records)" "/log?before=$mid&bt=$key"
ttfb "a quarter back, by the keyset cursor" "/log?before=$((N * 3 / 4))&bt=$(pg_sql "SELECT time_ns || '&bh=' || host FROM audit_records WHERE seq = $((N * 3 / 4))")"
ttfb "the oldest busy page, by the keyset cursor" "/log?before=1100&bt=$(pg_sql "SELECT time_ns || '&bh=' || host FROM audit_records WHERE seq = 1100")"
RUNS=3 ttfb "half-way back, by seq alone (the old cursor)" "/log?before=$mid"
ttfb "the rare agent (its records the oldest)" "/log?agent=rare"
ttfb "denials" "/log?kind=decision&decision=deny"
echo "$(uptime)"
