#!/bin/sh
# cordon proxy speaks SOCKS5 (RFC 1928: CONNECT, no authentication) on the
# same port as HTTP, with the same decisions and records: curl
# --socks5-hostname and --socks5 reach an allowed address; a name that is
# not allowed, an allowed name resolving to loopback, odd address
# spellings (THREATS 20, 21) are refused with reply 02; other commands,
# address types and authentication methods get their own refusals; a TLS
# server name that is not the CONNECT target closes the tunnel (row 23);
# every attempt is recorded with method SOCKS5.  Loopback only: the
# upstream is a python3 server on 127.0.0.1.  As the invoking user and as
# nobody.
. "${CORDON_SRC:-.}/tests/lib.sh"

command -v python3 >/dev/null 2>&1 || {
	skip "python3 is needed for the upstream server and the raw clients"
	done_testing
}
SYSPATH=/usr/local/bin:/usr/bin:/bin
mkdir -p "$T/www" && echo hello-through-socks >"$T/www/file.txt"
chmod -R a+rX "$T/www"

# raw.py PORT HEX...: send the greeting and whatever follows (hex), print
# the method reply and the request reply as hex, then "closed" or "open".
cat >"$T/raw.py" <<'PY'
import socket, sys
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
s.settimeout(10)
s.sendall(bytes.fromhex(sys.argv[2]))
out = []
m = s.recv(2)
out.append(m.hex())
if len(sys.argv) > 3 and m == b"\x05\x00":
    s.sendall(bytes.fromhex(sys.argv[3]))
    r = b""
    while len(r) < 10:
        x = s.recv(10 - len(r))
        if not x:
            break
        r += x
    out.append(r.hex())
    if r[:2] == b"\x05\x00" and len(sys.argv) > 4:
        import ssl
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
        ctx.check_hostname = False
        ctx.verify_mode = ssl.CERT_NONE
        try:
            ctx.wrap_socket(s, server_hostname=sys.argv[4])
            out.append("handshake")
        except (ssl.SSLError, OSError):
            out.append("closed")
print(" ".join(out))
PY
# A domain CONNECT request in hex: req NAME PORT
req() {
	python3 -c 'import sys; n = sys.argv[1].encode(); print((bytes([5, 1, 0, 3, len(n)]) + n + int(sys.argv[2]).to_bytes(2, "big")).hex())' "$1" "$2"
}

check() { # WHO
	who=$1
	W="$T/w-$who"
	mkdir -p "$W"
	[ "$who" = nobody ] && chown 65534:65534 "$W"
	$RUN_AS env PATH="$SYSPATH" sh -c 'echo $$ >"$0.pid"; exec python3 -u -m http.server 0 --bind 127.0.0.1 --directory "$1"' \
		"$W/srv" "$T/www" >"$W/srv.log" 2>&1 &
	srv_job=$!
	up=""
	for _ in $(seq 300); do
		up=$(sed -n 's/.* port \([0-9]*\) .*/\1/p' "$W/srv.log" | head -1)
		[ -n "$up" ] && break
		sleep 0.1
	done
	lp=$((up == 65535 ? 2 : up + 1))
	$RUN_AS sh -c 'echo $$ >"$0.pid"; exec "$@"' "$W/px" "$CORDON" proxy --listen 127.0.0.1:0 \
		--allow-host "127.0.0.1:$up" --allow-host "localhost:$lp" --allow-host 127.0.0.1:443 \
		--header-timeout 2s --audit "$W/audit.db" >"$W/px.out" 2>"$W/px.err" &
	px_job=$!
	for _ in $(seq 300); do grep -q '^listening on ' "$W/px.out" 2>/dev/null && break; sleep 0.1; done
	pp=$(sed -n 's/^listening on 127\.0\.0\.1:\([0-9]*\)$/\1/p' "$W/px.out")
	ok "$who: the proxy listens" test -n "$pp"

	if command -v curl >/dev/null 2>&1; then
		is "$($RUN_AS curl -s --max-time 10 --socks5-hostname "127.0.0.1:$pp" "http://127.0.0.1:$up/file.txt")" \
			hello-through-socks "$who: curl --socks5-hostname reaches the allowed address"
		is "$($RUN_AS curl -s --max-time 10 --socks5 "127.0.0.1:$pp" "http://127.0.0.1:$up/file.txt")" \
			hello-through-socks "$who: curl --socks5 (an IPv4 address) too"
		$RUN_AS curl -s --max-time 10 --socks5-hostname "127.0.0.1:$pp" "http://localhost:$lp/" >/dev/null 2>&1
		is $? 97 "$who: curl: an allowed name that resolves to loopback is refused"
		$RUN_AS curl -s --max-time 10 --socks5-hostname "127.0.0.1:$pp" "http://evil.example/" >/dev/null 2>&1
		is $? 97 "$who: curl: a name not in the allowlist is refused"
		$RUN_AS curl -s --max-time 10 --socks5-hostname "127.0.0.1:$pp" "http://127.0.0.1:$lp/" >/dev/null 2>&1
		is $? 97 "$who: curl: another port of the allowed address is refused"
	fi

	raw() { $RUN_AS env PATH="$SYSPATH" python3 "$T/raw.py" "$pp" "$@"; }
	is "$(raw 050100 "$(req 127.0.0.1 "$up")")" "0500 05000001000000000000" \
		"$who: raw: a domain that is a canonical address is allowed, reply 00"
	for name in 2130706433 0x7f.1 127.1 0177.0.0.1 127.0.0.1. "[0::1]" localhost; do
		is "$(raw 050100 "$(req "$name" "$up")")" "0500 05020001000000000000" \
			"$who: raw: domain '$name' is refused, reply 02 (not allowed)"
	done
	is "$(raw 050100 "050100040000000000000000000000000000000100$(printf %04x "$up")")" \
		"0500 05020001000000000000" "$who: raw: IPv6 ::1 (not named) is refused, reply 02"
	is "$(raw 050100 "0501000100000000$(printf %04x "$up")")" \
		"0500 05020001000000000000" "$who: raw: IPv4 0.0.0.0 is refused, reply 02"
	is "$(raw 050100 "050200017f000001$(printf %04x "$up")")" \
		"0500 05070001000000000000" "$who: raw: BIND gets 07 (command not supported)"
	is "$(raw 050100 "050300017f000001$(printf %04x "$up")")" \
		"0500 05070001000000000000" "$who: raw: UDP ASSOCIATE gets 07"
	is "$(raw 050100 "050100027f000001$(printf %04x "$up")")" \
		"0500 05080001000000000000" "$who: raw: an unknown address type gets 08"
	is "$(raw 050102)" "05ff" "$who: raw: username/password only: no acceptable method (FF)"
	is "$(raw 050100 "$(req 127.0.0.1 443)" evil.example)" "0500 05000001000000000000 closed" \
		"$who: raw: port 443 with a TLS server name for another host: the tunnel is closed"

	kill "$(cat "$W/px.pid")"
	wait "$px_job"
	is $? 0 "$who: the proxy stops cleanly"
	kill "$(cat "$W/srv.pid")" 2>/dev/null
	wait "$srv_job" 2>/dev/null

	$RUN_AS "$CORDON" log export --format jsonl --audit "$W/audit.db" >"$W/log.jsonl"
	count() {
		python3 - "$W/log.jsonl" "$@" <<'PY'
import json, sys
path, want = sys.argv[1], sys.argv[2:]
n = 0
for line in open(path):
    r = json.loads(line)
    if r["kind"] != "egress":
        continue
    d = r.get("details") or {}
    if all(str(r.get(k) if k in r else d.get(k)) == v for k, v in (w.split("=", 1) for w in want)):
        n += 1
print(n)
PY
	}
	# Allowed: the raw canonical address (+2 curl).  Refused: 7 domains,
	# ::1, 0.0.0.0, BIND, UDP, the address type, the method, the SNI (+3
	# curl).
	allowed=1
	denied=14
	if command -v curl >/dev/null 2>&1; then
		allowed=3
		denied=17
	fi
	is "$(count method=SOCKS5 decision=allow)" $allowed "$who: every allowed SOCKS5 attempt has its record"
	is "$(count method=SOCKS5 decision=deny)" $denied "$who: every refused SOCKS5 attempt has its record"
	ok "$who: a refused odd spelling is recorded with its raw request" \
		grep -q '"method":"SOCKS5","request":"' "$W/log.jsonl"
	ok "$who: the SNI mismatch is recorded with both names" \
		grep -q "\"reason\":\"tls sni 'evil.example' differs from the CONNECT target '127.0.0.1'\"" "$W/log.jsonl"
	ok "$who: the loopback answer is recorded with its reason" \
		grep -q "\"target\":\"localhost:$lp\".*is loopback and not named in the allowlist" "$W/log.jsonl"
}
for_each_user check

done_testing
