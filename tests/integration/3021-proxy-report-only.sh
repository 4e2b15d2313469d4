#!/bin/sh
# cordon proxy --report-only: what enforcement would refuse is let through
# and logged as decision=report-only-deny with the reason; malformed heads
# are still refused; a sandbox's own proxy (--listen-fd) cannot use it.
# Loopback only: the upstream is a python3 server on 127.0.0.1.
. "${CORDON_SRC:-.}/tests/lib.sh"

command -v python3 >/dev/null 2>&1 || {
	skip "python3 is needed for the upstream server and the client"
	done_testing
}
export CORDON_AUDIT="$T/audit.db"
mkdir -p "$T/www" && echo reported-not-refused >"$T/www/f.txt"
python3 -u -m http.server 0 --bind 127.0.0.1 --directory "$T/www" >"$T/srv.log" 2>&1 &
SRV=$!
UP=""
for _ in $(seq 300); do
	UP=$(sed -n 's/.* port \([0-9]*\) .*/\1/p' "$T/srv.log" | head -1)
	[ -n "$UP" ] && break
	sleep 0.1
done
"$CORDON" proxy --listen 127.0.0.1:0 --report-only --allow-host api.example.com \
	>"$T/px.out" 2>"$T/px.err" &
PX=$!
for _ in $(seq 300); do
	grep -q '^listening on ' "$T/px.out" 2>/dev/null && break
	sleep 0.1
done
PP=$(sed -n 's/^listening on 127\.0\.0\.1:\([0-9]*\)$/\1/p' "$T/px.out")
ok "the proxy listens" test -n "$PP"

cat >"$T/get.py" <<'PY'
import socket, sys
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
s.settimeout(10)
s.sendall(sys.argv[2].encode().decode("unicode_escape").encode("latin-1"))
d = b""
while True:
    x = s.recv(65536)
    if not x:
        break
    d += x
print(d.split(b"\r\n")[0].decode(), d.rsplit(b"\n", 2)[-2].decode() if d.count(b"\n") > 1 else "")
PY
is "$(python3 "$T/get.py" "$PP" "GET http://127.0.0.1:$UP/f.txt HTTP/1.1\r\nHost: 127.0.0.1:$UP\r\n\r\n")" \
	"HTTP/1.0 200 OK reported-not-refused" "a loopback target outside the allowlist is let through"
out=$(python3 "$T/get.py" "$PP" "GET http://127.0.0.1:$UP/f.txt HTTP/1.1\r\nHost: evil.example\r\n\r\n")
is "${out%% *}" "HTTP/1.1" "a Host mismatch ..."
is "$(echo "$out" | cut -d' ' -f2)" 403 "  ... is still refused (the target is not known)"
out=$(python3 "$T/get.py" "$PP" "GET http://127.0.0.1:$UP/\x01 HTTP/1.1\r\n\r\n")
is "$(echo "$out" | cut -d' ' -f2)" 400 "a malformed head is still refused"
kill "$PX"
wait "$PX" 2>/dev/null
kill "$SRV" 2>/dev/null

"$CORDON" log export --format jsonl >"$T/log.jsonl"
ok "the let-through attempt is logged as report-only-deny with the reason" \
	grep -q '"decision":"report-only-deny".*"reason":"host is not in the allowlist"' "$T/log.jsonl"
is "$(grep -c '"decision":"allow"' "$T/log.jsonl")" 0 "nothing is logged as a plain allow"
ok "the log verifies" "$CORDON" log verify

"$CORDON" proxy --report-only --listen-fd 0 </dev/null >"$T/o" 2>&1
is $? 2 "--report-only with --listen-fd (cordon run's proxy) is a usage error"
"$CORDON" run --report-only -- true >"$T/o" 2>&1
rc=$?
ok "cordon run has no --report-only" test "$rc" -ne 0
done_testing
