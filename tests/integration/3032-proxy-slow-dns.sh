#!/bin/sh
# cordon proxy with slow and hostile clients (THREATS row 25, issue 17): a
# name whose lookup takes seconds stalls only the request that named it,
# never the others (decisions are made off the event loop); one client
# address with many slow lookups holds at most its share of the resolver
# threads; and at the connection cap, request heads held open (slowloris)
# are closed to admit a prompt client instead of turning it away with 503.
# Order of completion is asserted, never a duration.
#
# Everything runs in a network and mount namespace this test makes
# (unshare -r -n -m, rootless): its own loopback, a test resolver on its
# 127.0.0.1:53 that delays answers for slow*.test, /etc/resolv.conf
# bind-mounted over in that namespace alone.  As the invoking user and as
# nobody.
. "${CORDON_SRC:-.}/tests/lib.sh"

command -v python3 >/dev/null 2>&1 || {
	skip "python3 is needed for the test resolver and servers"
	done_testing
}
if ! unshare -r -n -m true 2>/dev/null; then
	skip "unshare -r -n -m: no user namespaces here"
	done_testing
fi

# The resolver: slow*.test answer 127.0.0.2 after 6 s, or as soon as the
# file RELEASE appears (the test makes it once the order it checks is
# settled), fast.x.test at once; each query is answered on its own
# thread, so a slow one holds nothing.
cat >"$T/dns.py" <<'PY'
import os, socket, struct, sys, threading, time
log = open(sys.argv[1], "a", buffering=1)
release = sys.argv[2]
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind(("127.0.0.1", 53))
print("ready", flush=True)
def answer(q, peer):
    i, labels = 12, []
    while i < len(q) and q[i]:
        labels.append(q[i + 1:i + 1 + q[i]].decode("ascii", "replace"))
        i += 1 + q[i]
    name = ".".join(labels).lower()
    qtype = struct.unpack("!H", q[i + 1:i + 3])[0]
    log.write("%d %s\n" % (qtype, name))
    if name.startswith("slow"):
        end = time.time() + 6
        while time.time() < end and not os.path.exists(release):
            time.sleep(0.05)
    ans = [socket.inet_aton("127.0.0.2")] if qtype == 1 and name.endswith(".test") else []
    out = q[:2] + struct.pack("!HHHHH", 0x8580, 1, len(ans), 0, 0) + q[12:i + 5]
    for rd in ans:
        out += struct.pack("!HHHIH", 0xC00C, 1, 1, 0, 4) + rd
    s.sendto(out, peer)
while True:
    q, peer = s.recvfrom(512)
    if len(q) >= 17:
        threading.Thread(target=answer, args=(q, peer), daemon=True).start()
PY

cat >"$T/upstream.py" <<'PY'
import socket, threading
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.2", 8080))
s.listen(64)
print("ready", flush=True)
def serve(c):
    try:
        c.recv(4096)
        c.sendall(b"HTTP/1.0 200 OK\r\nContent-Length: 2\r\n\r\nok")
    except OSError:
        pass
    c.close()
while True:
    c, _ = s.accept()
    threading.Thread(target=serve, args=(c,), daemon=True).start()
PY

# One request through the proxy from source address SRC; appends
# "LABEL STATUS" to RESULTS when it ends.
cat >"$T/get.py" <<'PY'
import os, socket, sys, time
port, src, host, label, results = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5]
if len(sys.argv) > 6:  # started early, sent when this file appears
    while not os.path.exists(sys.argv[6]):
        time.sleep(0.01)
s = socket.create_connection(("127.0.0.1", port), source_address=(src, 0))
s.settimeout(20)
s.sendall(("GET http://%s:8080/ HTTP/1.1\r\nHost: %s:8080\r\n\r\n" % (host, host)).encode())
d = b""
try:
    while True:
        x = s.recv(65536)
        if not x:
            break
        d += x
except OSError:
    pass
status = d.split(b" ")[1].decode() if d.startswith(b"HTTP/") else "none"
open(results, "a").write("%s %s\n" % (label, status))
PY

# Holds N connections with an unfinished request head until killed.
cat >"$T/loris.py" <<'PY'
import socket, sys, time
port, n, ready = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
socks = []
for _ in range(n):
    c = socket.create_connection(("127.0.0.1", port))
    c.sendall(b"GET http://fast.x.test:8080/ HTTP/1.1\r\nHost: fa")
    socks.append(c)
open(ready, "w").write("%d\n" % len(socks))
time.sleep(60)
PY

cat >"$T/inner.sh" <<'SH'
set -u
W=$1
ip link set lo up || exit 1
printf 'nameserver 127.0.0.1\noptions attempts:1 timeout:9\n' >"$W/resolv.conf"
mount --bind "$W/resolv.conf" /etc/resolv.conf || exit 1
waitfor() { for _ in $(seq 100); do [ -s "$1" ] && return 0; sleep 0.1; done; return 1; }
python3 -u "$T/dns.py" "$W/queries" "$W/release" >"$W/dns.out" 2>&1 &
DNS=$!
python3 -u "$T/upstream.py" >"$W/up.out" 2>&1 &
UP=$!
waitfor "$W/dns.out" && waitfor "$W/up.out" || exit 1
"$CORDON" proxy --listen 127.0.0.1:0 --audit "$W/audit.db" --max-conns 16 \
	--allow-host '*.x.test:8080' --allow-host 127.0.0.2:8080 >"$W/px.out" 2>"$W/px.err" &
PX=$!
waitfor "$W/px.out" || exit 1
PP=$(sed -n 's/^listening on 127\.0\.0\.1:\([0-9]*\)$/\1/p' "$W/px.out")
R=$W/results

# 1. Ten slow lookups from 127.0.0.1, then one quick one from 127.0.0.3:
# the quick one ends before any slow one (its lookup never waits behind
# theirs, on the loop or in the threads: 127.0.0.1 holds 4 of the 8).
# 127.0.0.1's own quick one then waits its turn behind its slow ones.
# The quick client is started first (a loaded machine may take seconds to
# start python) and sends when told.  The slow answers wait 6 s, or only
# until the quick one has ended: a proxy that made it wait behind them
# still has it end after them.
python3 "$T/get.py" "$PP" 127.0.0.3 fast.x.test fast-other "$R" "$W/go" &
pids="$!"
for i in 1 2 3 4 5 6 7 8 9 10; do
	python3 "$T/get.py" "$PP" 127.0.0.1 "slow$i.x.test" slow "$R" &
	pids="$pids $!"
done
# Until four slow names are being looked up (127.0.0.1's share).
for _ in $(seq 200); do
	[ "$(sed -n 's/^1 \(slow.*\)/\1/p' "$W/queries" 2>/dev/null | sort -u | wc -l)" -ge 4 ] && break
	sleep 0.05
done
: >"$W/go"
python3 "$T/get.py" "$PP" 127.0.0.1 fast.x.test fast-same "$R" &
pids="$pids $!"
for _ in $(seq 300); do
	grep -q '^fast-other ' "$R" 2>/dev/null && break
	sleep 0.05
done
: >"$W/release"
wait $pids

# 2. Slowloris: 16 heads held open (the cap), then a prompt client.
python3 "$T/loris.py" "$PP" 16 "$W/loris.ready" &
LORIS=$!
waitfor "$W/loris.ready" || exit 1
sleep 1.2 # older than the eviction age (1 s)
python3 "$T/get.py" "$PP" 127.0.0.1 fast.x.test after-loris "$R"
kill "$LORIS" 2>/dev/null
wait "$LORIS" 2>/dev/null
kill "$PX"
wait "$PX"
echo "proxy-exit $?" >>"$R"
"$CORDON" log export --json --audit "$W/audit.db" >"$W/log.jsonl"
kill "$DNS" "$UP" 2>/dev/null
exit 0
SH

check() { # WHO
	who=$1
	W="$T/w-$who"
	mkdir -p "$W"
	[ "$who" = nobody ] && chown 65534:65534 "$W"
	$RUN_AS env T="$T" CORDON="$CORDON" unshare -r -n -m sh "$T/inner.sh" "$W" >"$W/inner.log" 2>&1
	is $? 0 "$who: the namespaces, the resolver, the upstream and the proxy start"
	first=$(sed -n 1p "$W/results" 2>/dev/null)
	is "$first" "fast-other 200" \
		"$who: a quick lookup from another client ends before ten slow ones that came first"
	is "$(grep -c '^fast-same 200$' "$W/results" 2>/dev/null)" 1 \
		"$who: the slow client's own quick request waits its turn, and is served"
	is "$(grep -c '^slow 200$' "$W/results" 2>/dev/null)" 10 "$who: the ten slow ones are answered too"
	is "$(sed -n 's/^after-loris //p' "$W/results" 2>/dev/null)" 200 \
		"$who: at the cap with 16 request heads held open, a prompt client is served"
	n=$(grep -c 'request head too slow while the proxy is full' "$W/log.jsonl" 2>/dev/null)
	case $n in '' | 0) r=1 ;; *) r=0 ;; esac
	is "$r" 0 "$who: the evicted heads are in the log with the reason ($n)"
	is "$(sed -n 's/^proxy-exit //p' "$W/results" 2>/dev/null)" 0 "$who: the proxy stops cleanly"
	[ -s "$W/results" ] || sed 's/^/#   /' "$W/inner.log" "$W/px.err" | head -20
	[ "$first" = "fast-other 200" ] ||
		grep -o '"reason":"[^"]*"' "$W/log.jsonl" | sort | uniq -c | sed 's/^/#   /' | head -5
}
for_each_user check

done_testing
