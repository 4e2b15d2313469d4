#!/bin/sh
# cordon proxy, CONNECT to port 443: the TLS ClientHello's server_name must
# name the CONNECT target (THREATS row 23).  The proxy answers 200, reads
# the hello and closes the tunnel on a mismatch before anything leaves; no
# SNI is allowed and logged.  Loopback only: nothing listens on
# 127.0.0.1:443, so even an allowed tunnel goes nowhere.
. "${CORDON_SRC:-.}/tests/lib.sh"

command -v python3 >/dev/null 2>&1 || {
	skip "python3 is needed for the TLS client"
	done_testing
}
export CORDON_AUDIT="$T/audit.db"
"$CORDON" proxy --listen 127.0.0.1:0 --allow-host 127.0.0.1:443 --header-timeout 2s \
	>"$T/px.out" 2>"$T/px.err" &
PX=$!
for _ in $(seq 300); do
	grep -q '^listening on ' "$T/px.out" 2>/dev/null && break
	sleep 0.1
done
PP=$(sed -n 's/^listening on 127\.0\.0\.1:\([0-9]*\)$/\1/p' "$T/px.out")
ok "the proxy listens" test -n "$PP"

# hello.py PORT SNI|-|raw: CONNECT 127.0.0.1:443, then a TLS hello with
# that name (- : none) or plain text; prints the status line, then
# "closed" when the proxy ends the tunnel.
cat >"$T/hello.py" <<'PY'
import socket, ssl, sys
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
s.settimeout(10)
s.sendall(b"CONNECT 127.0.0.1:443 HTTP/1.1\r\nHost: 127.0.0.1:443\r\n\r\n")
d = b""
while b"\r\n\r\n" not in d:
    x = s.recv(1)
    if not x:
        break
    d += x
print(d.split(b"\r\n")[0].decode())
if sys.argv[2] == "raw":
    s.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
    print("closed" if s.recv(100) == b"" else "open")
    sys.exit(0)
ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
ctx.check_hostname = False
ctx.verify_mode = ssl.CERT_NONE
try:
    t = ctx.wrap_socket(s, server_hostname=None if sys.argv[2] == "-" else sys.argv[2])
    print("handshake")
except (ssl.SSLError, OSError):
    print("closed")
PY
out=$(python3 "$T/hello.py" "$PP" evil.example)
is "$out" "HTTP/1.1 200 Connection established
closed" "an SNI naming another host: 200, then the tunnel is closed"
out=$(python3 "$T/hello.py" "$PP" raw)
is "$out" "HTTP/1.1 200 Connection established
closed" "plain text instead of a ClientHello: closed"
out=$(python3 "$T/hello.py" "$PP" -)
is "$out" "HTTP/1.1 200 Connection established
closed" "no SNI: allowed (nothing listens on 127.0.0.1:443, so it ends there)"
kill "$PX"
wait "$PX" 2>/dev/null

"$CORDON" log export --format jsonl >"$T/log.jsonl"
ok "the mismatch is a deny record with both names" \
	grep -q "\"decision\":\"deny\".*\"reason\":\"tls sni 'evil.example' differs from the CONNECT target '127.0.0.1'\"" "$T/log.jsonl"
ok "the plain text is a deny record" \
	grep -q '"decision":"deny".*"reason":"tls client hello: not a TLS handshake record"' "$T/log.jsonl"
ok "no SNI is allowed and says so" \
	grep -q '"decision":"allow".*"reason":"[^"]*; no tls sni"' "$T/log.jsonl"
ok "the log verifies" "$CORDON" log verify
done_testing
