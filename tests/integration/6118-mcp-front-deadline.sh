#!/bin/sh
# cordon mcp --listen --request-deadline: a client that sends a byte now
# and then (each under the 10 s idle timeout) cannot hold a connection
# longer than the deadline, whether it drips its headers or its body; the
# cut is recorded (capped as 413s are).  The positive control: a normal
# upload of 1 MB, in pieces over more than a second, is read whole and
# answered; a quick request after a kept-alive connection's earlier one
# is not cut either.
. "${CORDON_SRC:-.}/tests/lib.sh"

D=$T/dl
mkdir -p "$D"
cat >"$D/policy.yaml" <<EOP
version: 1
agents: [{id: alice, owner: ops}]
tools:
  - {id: t, kind: mcp, operations: {echo: read}}
EOP
cd "$D" || exit 1
A=$("$CORDON" mcp token add --agent alice | tail -1)
FP=""
trap '[ -z "$FP" ] || { kill $FP; wait $FP; } 2>/dev/null; _tap_cleanup' EXIT
: >"$D/front.err"
"$CORDON" mcp --listen 127.0.0.1:0 --policy "$D/policy.yaml" --request-deadline 3s -- true >/dev/null 2>"$D/front.err" &
FP=$!
i=0
while ! grep -q 'listening on' "$D/front.err" && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
PORT=$(sed -n 's/.*listening on http:\/\/127.0.0.1:\([0-9]*\)\/mcp$/\1/p' "$D/front.err")

cat >"$D/client.py" <<'EOS'
import socket, sys, time
port, mode, tok = int(sys.argv[1]), sys.argv[2], sys.argv[3]
s = socket.create_connection(("127.0.0.1", port))
t0 = time.monotonic()
head = "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nAuthorization: Bearer %s\r\nContent-Type: application/json\r\n" % (port, tok)
def held(chunks, pause):
    # Send each chunk after `pause`; the seconds until the server closes.
    s.settimeout(0.05)
    for c in chunks:
        try:
            s.sendall(c)
        except OSError:
            return time.monotonic() - t0
        end = time.monotonic() + pause
        while time.monotonic() < end:
            try:
                if s.recv(4096) == b"":
                    return time.monotonic() - t0
            except socket.timeout:
                pass
            except OSError:
                return time.monotonic() - t0
    return -1  # never cut
if mode == "headers":  # the header lines a byte a second
    print("%.1f" % held([bytes([b]) for b in b"X-Slow: " + b"a" * 40], 1.0))
elif mode == "body":  # whole headers, then the body a byte a second
    s.sendall((head + "Content-Length: 60\r\n\r\n").encode())
    print("%.1f" % held([b"{"] + [b" "] * 59, 1.0))
else:  # 1 MB in 16 pieces over ~1.6 s, then the answer's status
    body = b'{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"pad":"' + b"x" * 999900 + b'"}}'
    s.sendall((head + "Content-Length: %d\r\n\r\n" % len(body)).encode())
    n = len(body) // 16 + 1
    for i in range(16):
        s.sendall(body[i * n:(i + 1) * n])
        time.sleep(0.1)
    s.settimeout(10)
    print(s.recv(64).split(b"\r\n")[0].decode(), "%.1f" % (time.monotonic() - t0))
EOS
python3 "$D/client.py" "$PORT" headers "$A" >"$D/h" &
hp=$!
python3 "$D/client.py" "$PORT" body "$A" >"$D/b" &
bp=$!
python3 "$D/client.py" "$PORT" upload "$A" >"$D/u"
wait $hp $bp
h=$(cat "$D/h") b=$(cat "$D/b")
ok "a client dripping its headers is cut after the deadline (3 s; at ${h}s)" awk -v t="$h" 'BEGIN { exit !(t >= 2.5 && t < 8) }'
ok "... one dripping its body too (at ${b}s)" awk -v t="$b" 'BEGIN { exit !(t >= 2.5 && t < 8) }'
ok "a 1 MB upload in pieces is read whole and answered ($(cat "$D/u"))" grep -q '^HTTP/1.1 400 ' "$D/u"
is "$(curl -s -o /dev/null -w '%{http_code}' -X POST "http://127.0.0.1:$PORT/mcp" -H "Authorization: Bearer $A" \
	-H 'Content-Type: application/json' --data-binary '{"jsonrpc":"2.0","id":1,"method":"tools/list"}' \
	--next -s -o /dev/null -w ' %{http_code}' -X POST "http://127.0.0.1:$PORT/mcp" -H "Authorization: Bearer $A" \
	-H 'Content-Type: application/json' --data-binary '{"jsonrpc":"2.0","id":2,"method":"tools/list"}')" "400 400" \
	"two quick requests on one connection: both answered"
sleep 1.5
"$CORDON" log export --format jsonl 2>/dev/null | grep '"kind":"mcp.front"' >"$D/rec"
is "$(grep -c '"reason":"request not complete within 3s (--request-deadline)"' "$D/rec")" 2 "both cuts recorded, with the peer"
ok "... naming the peer" grep -q '"peer":"127.0.0.1"' "$D/rec"
nok "--request-deadline 0 is refused" "$CORDON" mcp --listen 127.0.0.1:0 --policy "$D/policy.yaml" --request-deadline 0 -- true
done_testing
