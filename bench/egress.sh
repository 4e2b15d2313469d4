#!/bin/sh
# bench/egress.sh — the egress proxy on loopback, in one run: bulk
# throughput through CONNECT vs a direct connection (ratio), the time added
# to the first byte of a connection, and CONNECT tunnels per second (each
# one two audit records).  The sink is a python3 server on 127.0.0.1; the
# proxy is `cordon proxy` with its audit log on tmpfs.  Loopback only.
#
#   sh bench/egress.sh [CORDON]        (default: build/cordon)
#
# Environment: MIB (512: bytes of each bulk transfer), ROUNDS (5: bulk
# transfers each way, the best kept), CONNS (500: connections for the
# first-byte and rate figures).  The client is python3 (recv_into one
# 1 MiB buffer), so the direct figure is python's ceiling too; the ratio
# is what matters.  Benchmarks only: no figure here is ever asserted.
set -eu
SRC=$(cd "$(dirname "$0")/.." && pwd)
CORDON=${1:-$SRC/build/cordon}
case "$CORDON" in /*) ;; *) CORDON=$(pwd)/$CORDON ;; esac
[ -x "$CORDON" ] || { echo "egress.sh: $CORDON is not executable (run make)" >&2; exit 1; }
command -v python3 >/dev/null || { echo "egress.sh: python3 missing" >&2; exit 1; }
MIB=${MIB:-512}
ROUNDS=${ROUNDS:-5}
CONNS=${CONNS:-500}
[ "$MIB" -ge 1 ] && [ "$MIB" -le 8192 ] && [ "$ROUNDS" -ge 1 ] && [ "$ROUNDS" -le 50 ] &&
	[ "$CONNS" -ge 10 ] && [ "$CONNS" -le 20000 ] ||
	{ echo "egress.sh: MIB 1..8192, ROUNDS 1..50, CONNS 10..20000" >&2; exit 1; }

W=$(mktemp -d /dev/shm/cordon-bench-egress.XXXXXX)
SINK=""
PX=""
cleanup() {
	[ -n "$PX" ] && kill "$PX" 2>/dev/null
	[ -n "$SINK" ] && kill "$SINK" 2>/dev/null
	rm -rf "$W"
}
trap cleanup EXIT INT TERM

# The sink: first byte 'B' -> MIB MiB then close; 'E' -> one byte back.
python3 -c '
import socket, sys, threading
mib = int(sys.argv[1])
blk = b"\0" * (1 << 20)
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", 0)); s.listen(512)
print(s.getsockname()[1], flush=True)
def serve(c):
    try:
        k = c.recv(1)
        if k == b"B":
            for _ in range(mib): c.sendall(blk)
        elif k == b"E":
            c.sendall(b"e")
            c.recv(1)
    except OSError:
        pass
    c.close()
while True:
    c, _ = s.accept()
    threading.Thread(target=serve, args=(c,), daemon=True).start()
' "$MIB" >"$W/sink.port" &
SINK=$!
i=0
while [ ! -s "$W/sink.port" ] && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
SP=$(cat "$W/sink.port")

"$CORDON" proxy --listen 127.0.0.1:0 --allow-host "127.0.0.1:$SP" --audit "$W/audit.db" \
	--max-conns 1024 >"$W/px.out" 2>"$W/px.err" &
PX=$!
i=0
while ! grep -q '^listening on ' "$W/px.out" 2>/dev/null && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
PP=$(sed -n 's/^listening on 127\.0\.0\.1:\([0-9]*\)$/\1/p' "$W/px.out")
[ -n "$PP" ] || { echo "egress.sh: the proxy did not start: $(cat "$W/px.err")" >&2; exit 1; }

echo "# egress benchmark: $(nproc) CPUs, kernel $(uname -r), $(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //')"
echo "# cordon: $CORDON; $(python3 --version); bulk $MIB MiB x $ROUNDS, $CONNS connections; audit log on tmpfs"
python3 -c '
import socket, statistics, sys, time
sp, pp, mib, rounds, conns = (int(x) for x in sys.argv[1:6])

def open_conn(proxy):
    if not proxy:
        return socket.create_connection(("127.0.0.1", sp))
    s = socket.create_connection(("127.0.0.1", pp))
    s.sendall(b"CONNECT 127.0.0.1:%d HTTP/1.1\r\n\r\n" % sp)
    d = b""
    while not d.endswith(b"\r\n\r\n"):
        x = s.recv(1)
        if not x:
            raise SystemExit("egress.sh: the proxy closed the tunnel")
        d += x
    if not d.startswith(b"HTTP/1.1 200"):
        raise SystemExit("egress.sh: the proxy refused: %r" % d[:80])
    return s

def bulk(proxy):
    buf = bytearray(1 << 20); mv = memoryview(buf)
    best = 0.0
    for _ in range(rounds):
        s = open_conn(proxy); s.sendall(b"B")
        t = time.perf_counter(); n = 0
        while True:
            k = s.recv_into(mv)
            if not k: break
            n += k
        dt = time.perf_counter() - t
        s.close()
        if n != mib << 20:
            raise SystemExit("egress.sh: short transfer (%d bytes)" % n)
        best = max(best, n / dt / 1e6)
    return best

def first_byte(proxy):
    out = []
    for _ in range(conns):
        t = time.perf_counter()
        s = open_conn(proxy); s.sendall(b"E")
        if s.recv(1) != b"e":
            raise SystemExit("egress.sh: no echo")
        out.append((time.perf_counter() - t) * 1000)
        s.close()
    return out

d_bw, p_bw = bulk(False), bulk(True)
t0 = time.perf_counter(); d_fb = first_byte(False); d_rate = conns / (time.perf_counter() - t0)
t0 = time.perf_counter(); p_fb = first_byte(True); p_rate = conns / (time.perf_counter() - t0)
med = statistics.median
p99 = lambda v: sorted(v)[int(len(v) * 0.99) - 1]
print()
print("| measure | direct | through cordon proxy | ratio / added |")
print("|---|---|---|---|")
print("| bulk throughput (best of %d, %d MiB) | %.0f MB/s | %.0f MB/s | %.2f |" % (rounds, mib, d_bw, p_bw, p_bw / d_bw))
print("| connect to first byte, median | %.3f ms | %.3f ms | +%.3f ms |" % (med(d_fb), med(p_fb), med(p_fb) - med(d_fb)))
print("| connect to first byte, p99 | %.3f ms | %.3f ms | +%.3f ms |" % (p99(d_fb), p99(p_fb), p99(p_fb) - p99(d_fb)))
print("| connections per second (sequential, %d) | %.0f | %.0f | %.2f |" % (conns, d_rate, p_rate, p_rate / d_rate))
' "$SP" "$PP" "$MIB" "$ROUNDS" "$CONNS"
