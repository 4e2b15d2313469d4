#!/bin/sh
# bench/serve.sh — the console's (cordon serve) costs: time to first byte
# of audit-log pages over a 1,000,000-record log (newest page, a page in
# the middle, a rare agent whose records are the oldest, a decision
# filter, free text), the held-calls page with held runs waiting, 100
# Server-Sent-Event clients told of a newly held call (latency, from the
# `cordon run` that is held to each client's event), and the console's
# memory (VmRSS) idle and with the 100 clients.
#
#   sh bench/serve.sh [CORDON]      # PG=1: the audit log on a local PostgreSQL too
# N (records, default 1000000), SSE (clients, default 100), RUNS (TTFB
# samples per page, default 10).  Needs root (PG=1: Debian's postgresql).
set -eu
CORDON=${1:-build/cordon}
case "$CORDON" in /*) ;; *) CORDON=$(pwd)/$CORDON ;; esac
B=$(dirname "$CORDON")
CORDON_SRC=$(cd "$(dirname "$0")/.." && pwd)
APPEND="$B/tests/tools/audit-append"
N=${N:-1000000}
SSE=${SSE:-100}
RUNS=${RUNS:-10}
[ -x "$APPEND" ] || { echo "build $APPEND first (make $APPEND)" >&2; exit 1; }
T=$(mktemp -d /var/tmp/cordon-bench-serve.XXXXXX)
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
skip() { echo "serve.sh: $*" >&2; exit 1; }
_tap_cleanup() { :; }

cat >"$T/p.yaml" <<'YAML'
version: 1
agents:
  - {id: coder, owner: alice}
tools:
  - {id: shell, kind: command}
approvers:
  people: [alice]
grants:
  - id: sleep
    agent: coder
    tool: shell
    actions: [execute]
    scope: {argv: [sleep]}
    approval: human
    owner: alice
    justification: bench
    review_by: 2099-01-01
    expires: 2099-01-01
YAML

# The log: the rare agent's 1000 denials first (the oldest), then N-1000
# allowed decisions of a busy agent.
fill() {
	"$APPEND" --db "$1" -n 1000 --bulk --agent rare --decision deny --target needle >/dev/null
	"$APPEND" --db "$1" -n $((N - 1000)) --bulk --agent busy --decision allow >/dev/null
}

# Median and max of seconds on stdin, in ms.
stats() { sort -n | awk '{ v[NR] = $1 } END { printf "median %.1f ms, max %.1f ms", v[int((NR + 1) / 2)] * 1000, v[NR] * 1000 }'; }

start_serve() { # AUDIT
	"$CORDON" serve --listen 127.0.0.1:0 --policy "$T/p.yaml" --audit "$1" \
		--state "$T/state.db" >"$T/link" 2>"$T/serve.err" &
	serve_pid=$!
	t0=$(date +%s.%N)
	i=0
	while [ ! -s "$T/link" ] && [ $i -lt 1200 ]; do sleep 0.05; i=$((i + 1)); done
	t1=$(date +%s.%N)
	link=$(head -1 "$T/link")
	origin=${link%%/login*}
	curl -s -o /dev/null -D "$T/h" -X POST -H "Origin: $origin" --data "t=${link#*t=}" "$origin/login"
	cookie=$(awk -F': ' 'tolower($1) == "set-cookie" {print $2}' "$T/h" | tr -d '\r' | sed 's/;.*//')
	echo "start (the indexes made on a log without them): $(echo "$t0 $t1" | awk '{ printf "%.2f", $2 - $1 }') s"
}
stop_serve() { kill "$serve_pid"; wait "$serve_pid" || true; serve_pid=""; }

ttfb() { # LABEL PATH
	i=0
	: >"$T/t"
	while [ $i -lt "$RUNS" ]; do
		curl -s -o "$T/page" -w '%{time_starttransfer}\n' -H "Cookie: $cookie" "$origin$2" >>"$T/t"
		i=$((i + 1))
	done
	echo "  $1 ($2, $(grep -o '<tr id="seq-' "$T/page" | wc -l) rows): $(stats <"$T/t")"
}

log_pages() {
	ttfb "newest page" "/log"
	ttfb "a page in the middle" "/log?before=$((N / 2))"
	ttfb "the rare agent (its records the oldest)" "/log?agent=rare"
	ttfb "denials" "/log?kind=decision&decision=deny"
	ttfb "the rare agent, second page" "/log?agent=rare&before=951"
	ttfb "free text found in the newest records" "/log?q=busy"
	ttfb "free text found only in the oldest" "/log?q=needle"
}

rss() { awk '/VmRSS/ { print $2 " kB" }' "/proc/$serve_pid/status"; }

echo "# cordon serve over a $N-record audit log ($(nproc) CPUs, $(df -T "$T" | awk 'NR==2 { print $2 }'))"
t0=$(date +%s.%N)
fill "$T/audit.db"
t1=$(date +%s.%N)
echo "filled the SQLite log in $(echo "$t0 $t1" | awk '{ printf "%.1f", $2 - $1 }') s"
start_serve "$T/audit.db"
echo "SQLite, time to first byte, $RUNS samples each:"
log_pages
echo "console VmRSS idle: $(rss)"

# Held calls: five runs waiting; the page's TTFB.
mkdir -p "$T/w" && cd "$T/w"
for i in 1 2 3 4 5; do
	"$CORDON" run --policy "$T/p.yaml" --agent coder --audit "$T/audit.db" \
		--state "$T/state.db" --approval-timeout 300s -- sleep 0 >/dev/null 2>&1 &
done
sleep 2
ttfb "held-calls page (5 held)" "/"

# SSE clients: each opens /events and reads its first event; then one more
# call is held; each client's delay from that run's start to its event.
cat >"$T/sse.py" <<'PY'
import socket, sys, time, select, subprocess, os
host, port = sys.argv[1].split('//')[1].split(':')
cookie, n, cmd = sys.argv[2], int(sys.argv[3]), sys.argv[4:]
socks = []
for i in range(n):
    # 14 a source address: under the console's cap of 16 per address.
    s = socket.create_connection((host, int(port)), source_address=('127.0.0.%d' % (2 + i // 14), 0))
    s.sendall(('GET /events HTTP/1.1\r\nHost: %s:%s\r\nCookie: %s\r\nAccept: text/event-stream\r\n\r\n' % (host, port, cookie)).encode())
    socks.append(s)
buf = {s: b'' for s in socks}
def wait_events(want, deadline):
    got = {}
    while len(got) < len(socks) and time.time() < deadline:
        r, _, _ = select.select([s for s in socks if s not in got], [], [], 0.5)
        for s in r:
            d = s.recv(65536)
            buf[s] += d
            if buf[s].count(b'event: held') >= want:
                got[s] = time.time()
    return got
first = wait_events(1, time.time() + 30)
print('connected', len(first), flush=True)
sys.stdout.write('ready\n'); sys.stdout.flush()
t0 = time.time()
p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
got = wait_events(2, time.time() + 30)
lat = sorted(v - t0 for v in got.values())
print('events %d of %d' % (len(got), n))
if lat:
    print('latency median %.0f ms, max %.0f ms' % (lat[len(lat) // 2] * 1000, lat[-1] * 1000))
sys.stdout.flush()
time.sleep(0.2)
print('rss-now', flush=True)
sys.stdin.readline()
p.kill()
PY
mkfifo "$T/go"
python3 "$T/sse.py" "$origin" "$cookie" "$SSE" "$CORDON" run --policy "$T/p.yaml" --agent coder \
	--audit "$T/audit.db" --state "$T/state.db" --approval-timeout 300s -- sleep 1 <"$T/go" >"$T/sse.out" &
sse_pid=$!
exec 3>"$T/go"
i=0
while ! grep -q rss-now "$T/sse.out" && [ $i -lt 1200 ]; do sleep 0.05; i=$((i + 1)); done
echo "$SSE SSE clients: $(grep -v 'ready\|rss-now' "$T/sse.out" | tr '\n' ';' | sed 's/;$//')"
echo "console VmRSS with $SSE SSE clients: $(rss)"
echo >&3
exec 3>&-
wait $sse_pid || true
stop_serve

if [ "${PG:-0}" = 1 ]; then
	. "$CORDON_SRC/tests/helpers/pg-start.sh"
	pg_start
	URI="postgresql://cordon_admin:$PG_ADMIN_PW@/cordon?host=$PG_SOCK"
	t0=$(date +%s.%N)
	fill "$URI"
	t1=$(date +%s.%N)
	echo "filled the PostgreSQL log in $(echo "$t0 $t1" | awk '{ printf "%.1f", $2 - $1 }') s"
	start_serve "$URI"
	echo "PostgreSQL, time to first byte, $RUNS samples each:"
	log_pages
	stop_serve
fi
