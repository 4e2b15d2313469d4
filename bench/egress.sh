#!/bin/sh
# bench/egress.sh — the egress proxy on loopback, side by side with the
# forward proxies Debian ships (tinyproxy, squid: each when installed), in
# one run: bulk throughput through CONNECT vs a direct connection (ratio),
# the time added to the first byte of a connection, and CONNECT tunnels
# per second.  The sink is a python3 server on 127.0.0.1; cordon writes
# its two audit records per connection to a log on tmpfs, the peers log
# nothing.  Loopback only.
#
#   sh bench/egress.sh [CORDON]        (default: build/cordon)
#
# Environment: MIB (512: bytes of each bulk transfer), ROUNDS (5: bulk
# transfers each way, the best kept), CONNS (500: connections for the
# first-byte and rate figures), PEERS ("tinyproxy squid": which peers to
# run when installed; "" for none).  Every target is measured in turn,
# round after round, so that the load of a shared machine falls on all of
# them alike.  The client is python3 (recv_into one 1 MiB buffer), so the
# direct figure is python's ceiling too; the ratios are what matter.
# Benchmarks only: no figure here is ever asserted.
set -eu
SRC=$(cd "$(dirname "$0")/.." && pwd)
CORDON=${1:-$SRC/build/cordon}
case "$CORDON" in /*) ;; *) CORDON=$(pwd)/$CORDON ;; esac
[ -x "$CORDON" ] || { echo "egress.sh: $CORDON is not executable (run make)" >&2; exit 1; }
command -v python3 >/dev/null || { echo "egress.sh: python3 missing" >&2; exit 1; }
MIB=${MIB:-512}
ROUNDS=${ROUNDS:-5}
CONNS=${CONNS:-500}
PEERS=${PEERS-tinyproxy squid}
[ "$MIB" -ge 1 ] && [ "$MIB" -le 8192 ] && [ "$ROUNDS" -ge 1 ] && [ "$ROUNDS" -le 50 ] &&
	[ "$CONNS" -ge 10 ] && [ "$CONNS" -le 20000 ] ||
	{ echo "egress.sh: MIB 1..8192, ROUNDS 1..50, CONNS 10..20000" >&2; exit 1; }

W=$(mktemp -d /dev/shm/cordon-bench-egress.XXXXXX)
chmod 0755 "$W"
PIDS=""
cleanup() {
	for p in $PIDS; do kill "$p" 2>/dev/null || :; done
	[ -s "$W/squid/squid.pid" ] && kill "$(cat "$W/squid/squid.pid")" 2>/dev/null
	for p in $PIDS; do wait "$p" 2>/dev/null || :; done
	rm -rf "$W"
}
trap cleanup EXIT INT TERM

# A free loopback port: bind port 0, read it, close (the peers want one in
# their configuration).
free_port() {
	python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}
# wait_port PORT: until something accepts on 127.0.0.1:PORT (5 s at most).
wait_port() {
	python3 -c '
import socket, sys, time
for _ in range(100):
    try:
        socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=1).close()
        sys.exit(0)
    except OSError:
        time.sleep(0.05)
sys.exit(1)' "$1"
}

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
PIDS="$PIDS $!"
i=0
while [ ! -s "$W/sink.port" ] && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
SP=$(cat "$W/sink.port")

TARGETS=""
VERSIONS=""

"$CORDON" proxy --listen 127.0.0.1:0 --allow-host "127.0.0.1:$SP" --audit "$W/audit.db" \
	--max-conns 1024 >"$W/px.out" 2>"$W/px.err" &
PIDS="$PIDS $!"
i=0
while ! grep -q '^listening on ' "$W/px.out" 2>/dev/null && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
PP=$(sed -n 's/^listening on 127\.0\.0\.1:\([0-9]*\)$/\1/p' "$W/px.out")
[ -n "$PP" ] || { echo "egress.sh: the proxy did not start: $(cat "$W/px.err")" >&2; exit 1; }
TARGETS="cordon=$PP"

for peer in $PEERS; do
	case $peer in
	tinyproxy)
		command -v tinyproxy >/dev/null 2>&1 || { echo "# tinyproxy: not installed (apt-get install tinyproxy)"; continue; }
		port=$(free_port)
		# Quiet, no filtering, every port open to CONNECT (none listed).
		cat >"$W/tinyproxy.conf" <<-EOF
			User nobody
			Group nogroup
			Port $port
			Listen 127.0.0.1
			Timeout 600
			MaxClients 1024
			Allow 127.0.0.1
			LogLevel Critical
		EOF
		tinyproxy -d -c "$W/tinyproxy.conf" >"$W/tinyproxy.log" 2>&1 &
		PIDS="$PIDS $!"
		wait_port "$port" || { echo "# tinyproxy: did not start: $(head -3 "$W/tinyproxy.log")"; continue; }
		TARGETS="$TARGETS tinyproxy=$port"
		VERSIONS="$VERSIONS $(tinyproxy -v 2>&1 | head -1)"
		;;
	squid)
		command -v squid >/dev/null 2>&1 || { echo "# squid: not installed (apt-get install squid)"; continue; }
		port=$(free_port)
		mkdir -p "$W/squid"
		chmod 0777 "$W/squid" # squid drops to its own user
		# No cache, no access log, no ICMP pinger, every port open to CONNECT.
		cat >"$W/squid.conf" <<-EOF
			http_port 127.0.0.1:$port
			acl lo src 127.0.0.1/32
			http_access allow lo
			http_access deny all
			cache deny all
			cache_mem 0 MB
			access_log none
			pinger_enable off
			cache_log $W/squid/cache.log
			pid_filename $W/squid/squid.pid
			coredump_dir $W/squid
			shutdown_lifetime 0 seconds
		EOF
		squid -N -f "$W/squid.conf" >"$W/squid.out" 2>&1 &
		PIDS="$PIDS $!"
		wait_port "$port" || { echo "# squid: did not start: $(tail -3 "$W/squid/cache.log" 2>/dev/null)"; continue; }
		TARGETS="$TARGETS squid=$port"
		VERSIONS="$VERSIONS, squid $(squid -v | sed -n '1s/.*Version //p')"
		;;
	*) echo "egress.sh: unknown peer '$peer' (tinyproxy, squid)" >&2; exit 1 ;;
	esac
done

echo "# egress benchmark: $(nproc) CPUs, kernel $(uname -r), $(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //')"
echo "# cordon: $CORDON; $(python3 --version);$VERSIONS"
echo "# bulk $MIB MiB x $ROUNDS, $CONNS connections; cordon's audit log on tmpfs"
# shellcheck disable=SC2086
python3 -c '
import socket, statistics, sys, time
sp, mib, rounds, conns = (int(x) for x in sys.argv[1:5])
targets = [("direct", 0)] + [(t.split("=")[0], int(t.split("=")[1])) for t in sys.argv[5:]]

def open_conn(port):
    if not port:
        return socket.create_connection(("127.0.0.1", sp))
    s = socket.create_connection(("127.0.0.1", port))
    s.sendall(b"CONNECT 127.0.0.1:%d HTTP/1.1\r\nHost: 127.0.0.1:%d\r\n\r\n" % (sp, sp))
    d = b""
    while not d.endswith(b"\r\n\r\n"):
        x = s.recv(1)
        if not x:
            raise SystemExit("egress.sh: the proxy closed the tunnel")
        d += x
    if d.split(b" ")[1] != b"200":
        raise SystemExit("egress.sh: the proxy refused: %r" % d[:80])
    return s

buf = bytearray(1 << 20); mv = memoryview(buf)
def bulk(port):
    s = open_conn(port); s.sendall(b"B")
    t = time.perf_counter(); n = 0
    while True:
        k = s.recv_into(mv)
        if not k: break
        n += k
    dt = time.perf_counter() - t
    s.close()
    if n != mib << 20:
        raise SystemExit("egress.sh: short transfer (%d bytes)" % n)
    return n / dt / 1e6

def first_byte(port):
    t = time.perf_counter()
    s = open_conn(port); s.sendall(b"E")
    if s.recv(1) != b"e":
        raise SystemExit("egress.sh: no echo")
    dt = (time.perf_counter() - t) * 1000
    s.close()
    return dt

bw = {n: 0.0 for n, _ in targets}
for _ in range(rounds):
    for n, p in targets:
        bw[n] = max(bw[n], bulk(p))
fb = {n: [] for n, _ in targets}
el = {n: 0.0 for n, _ in targets}
blocks = 10
for _ in range(blocks):
    for n, p in targets:
        t0 = time.perf_counter()
        fb[n] += [first_byte(p) for _ in range(conns // blocks)]
        el[n] += time.perf_counter() - t0
med = statistics.median
p99 = lambda v: sorted(v)[int(len(v) * 0.99) - 1]
names = [n for n, _ in targets]
print()
print("| measure | " + " | ".join(names) + " |")
print("|---|" + "---|" * len(names))
def row(label, f):
    print("| " + label + " | " + " | ".join(f(n) for n in names) + " |")
row("bulk throughput (best of %d, %d MiB), MB/s" % (rounds, mib), lambda n: "%.0f" % bw[n])
row("  ratio to direct", lambda n: "%.2f" % (bw[n] / bw["direct"]))
row("connect to first byte, median, ms", lambda n: "%.3f" % med(fb[n]))
row("  added to direct, ms", lambda n: "-" if n == "direct" else "+%.3f" % (med(fb[n]) - med(fb["direct"])))
row("connect to first byte, p99, ms", lambda n: "%.3f" % p99(fb[n]))
row("connections per second (sequential, %d)" % (conns // blocks * blocks), lambda n: "%.0f" % (len(fb[n]) / el[n]))
' "$SP" "$MIB" "$ROUNDS" "$CONNS" $TARGETS
