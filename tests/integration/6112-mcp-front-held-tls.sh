#!/bin/sh
# cordon mcp --listen: a call held for approval through the front (the
# SDK's StreamableHTTPClientTransport), approved with `cordon approvals
# approve` after 11 s, reaches the client (the answer then comes as an
# event stream, kept alive); TLS with --tls-cert/--tls-key (a client that
# trusts the certificate connects; plain HTTP and an untrusting client do
# not); off loopback without TLS the front does not start.
. "${CORDON_SRC:-.}/tests/lib.sh"

D=$T/fs
mkdir -p "$D/bin" "$D/log" "$D/work"
cat >"$D/bin/srv.py" <<'EOS'
import json, sys, threading, time
log = open(sys.argv[1], "a")
out_lock = threading.Lock()
def send(m):
    with out_lock:
        sys.stdout.write(json.dumps(m) + "\n")
        sys.stdout.flush()
schema = {"type": "object", "properties": {"text": {"type": "string"}}}
tools = [{"name": n, "description": n, "inputSchema": schema}
         for n in ("echo", "notify", "ask", "later", "held")]
def later():
    time.sleep(0.5)
    send({"jsonrpc": "2.0", "method": "notifications/message",
          "params": {"level": "info", "data": "later-event"}})
for line in sys.stdin:
    m = json.loads(line)
    if "method" not in m:
        continue
    if "id" not in m:
        continue
    meth, r = m["method"], {}
    if meth == "initialize":
        r = {"protocolVersion": m["params"]["protocolVersion"],
             "capabilities": {"tools": {}, "logging": {}}, "serverInfo": {"name": "t", "version": "1"}}
    elif meth == "tools/list":
        r = {"tools": tools}
    elif meth == "tools/call":
        name = m["params"]["name"]
        log.write(name + "\n")
        log.flush()
        text = "ran " + name
        if name == "notify":
            send({"jsonrpc": "2.0", "method": "notifications/message",
                  "params": {"level": "info", "data": "before-answer"}})
        elif name == "ask":
            send({"jsonrpc": "2.0", "id": "srv-1", "method": "elicitation/create",
                  "params": {"message": "ok?", "requestedSchema": {"type": "object", "properties": {}}}})
            for l2 in sys.stdin:
                a = json.loads(l2)
                if a.get("id") == "srv-1" and "method" not in a:
                    text = "client said " + a.get("result", {}).get("action", "?")
                    break
        elif name == "later":
            threading.Thread(target=later).start()
        r = {"content": [{"type": "text", "text": text}]}
    send({"jsonrpc": "2.0", "id": m["id"], "result": r})
EOS
G='owner: ops, justification: t, review_by: 2030-01-01, expires: 2030-01-01'
cat >"$D/policy.yaml" <<EOP
version: 1
agents: [{id: alice, owner: ops}]
tools:
  - {id: t, kind: mcp, operations: {echo: read, notify: read, ask: read, later: read}, args: {text: value}}
  - {id: t/held, kind: mcp, operations: {held: update}, args: {text: value}}
profiles:
  srv: {timeout: 1h, rw: [$D/log], ro: [$D/bin]}
grants:
  - {id: launch, agent: alice, tool: t, actions: [execute], scope: {argv: [python3, $D/bin/srv.py]}, profile: srv, $G}
  - {id: a-read, agent: alice, tool: t, actions: [read], $G}
  - {id: a-held, agent: alice, tool: t/held, actions: [update], approval: human, $G}
EOP
cd "$D/work" || exit 1
SRV="python3 $D/bin/srv.py $D/log/calls"
A=$("$CORDON" mcp token add --agent alice | tail -1)
tid=$("$CORDON" mcp token list | sed -n 1p | cut -f1)
FP=""
BG=""
trap '[ -z "$FP$BG" ] || { kill $FP $BG; wait $FP $BG; } 2>/dev/null; _tap_cleanup' EXIT

# front NAME [options]: start a front; $U is its URL.
front() {
	n=$1
	shift
	"$CORDON" mcp --listen 127.0.0.1:0 --policy "$D/policy.yaml" "$@" -- $SRV >/dev/null 2>"$D/$n.err" &
	FP=$!
	i=0
	while ! grep -q 'listening on' "$D/$n.err" && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
	U=$(sed -n 's/.*listening on \(http[^ ]*\)$/\1/p' "$D/$n.err")
}
stop_front() {
	kill $FP
	wait $FP 2>/dev/null
	FP=""
}
# post SESSION BODY [curl args]: the status; body in $D/body, headers in $D/hdr.
post() {
	sid=$1 body=$2
	shift 2
	curl -s -N -o "$D/body" -D "$D/hdr" -w '%{http_code}' -X POST "$U" -H "Authorization: Bearer $A" \
		${sid:+-H "Mcp-Session-Id: $sid"} -H 'Content-Type: application/json' \
		-H 'Accept: application/json, text/event-stream' "$@" --data-binary "$body"
}
init() { # init VERSION: a session; its id in $S
	post "" '{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"'"$1"'","capabilities":{"elicitation":{}},"clientInfo":{"name":"t","version":"1"}}}' >/dev/null
	S=$(sed -n 's/^[Mm]cp-[Ss]ession-[Ii]d: *\([0-9a-f]*\).*/\1/p' "$D/hdr")
	post "$S" '{"jsonrpc":"2.0","method":"notifications/initialized"}' >/dev/null
}
call() { echo '{"jsonrpc":"2.0","id":'"$1"',"method":"tools/call","params":{"name":"'"$2"'","arguments":{"text":"x"}}}'; }
ctype() { sed -n 's/^[Cc]ontent-[Tt]ype: *\([a-z/-]*\).*/\1/p' "$D/hdr"; }
records() { "$CORDON" log export --format jsonl 2>/dev/null | grep '"kind":"mcp.front"'; }

# A call held for approval through the front: the SDK client waits, a
# person approves, the result reaches it (after 10 s: as an event stream).
. "$CORDON_SRC/tests/mcp/setup.sh"
if mcp_setup; then
	front f2
	mkdir -p "$D/sdk"
	cp "$CORDON_SRC/tests/mcp/http-client.mjs" "$D/sdk/"
	ln -s "$MCP_CACHE/node_modules" "$D/sdk/node_modules"
	init 2025-06-18
	post "$S" '{"jsonrpc":"2.0","id":1,"method":"tools/list"}' >/dev/null
	"$CORDON" mcp pins approve --server t --all >/dev/null
	: >"$D/log/calls"
	MCP_URL=$U MCP_TOKEN=$A MCP_OPS='[{"op":"call","name":"held","args":{"text":"h"}}]' \
		node "$D/sdk/http-client.mjs" >"$D/held.out" 2>"$D/sdk.err" &
	BG=$!
	aid=""
	i=0
	while [ -z "$aid" ] && [ $i -lt 150 ]; do
		sleep 0.1
		i=$((i + 1))
		aid=$("$CORDON" approvals list 2>/dev/null | awk '$2 == "pending" {print $1; exit}')
	done
	ok "the held call is queued ($aid)" test -n "$aid"
	sleep 11
	is "$(cat "$D/log/calls")" "" "... and has not reached the server after 11 s"
	ok "a person approves" "$CORDON" approvals approve "$aid" --as bob
	wait $BG
	BG=""
	is "$(cat "$D/held.out")" '{"isError":false,"text":"ran held"}' "the SDK client gets the result"
	is "$(cat "$D/log/calls")" held "... the server ran it once"
	stop_front
else
	skip "cannot install the MCP SDK (npm ci)"
fi

# TLS: --tls-cert/--tls-key; a client that trusts the certificate
# connects, plain HTTP to it does not.
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2 -subj /CN=127.0.0.1 -addext subjectAltName=IP:127.0.0.1 \
	-keyout "$D/key.pem" -out "$D/cert.pem" 2>/dev/null
front f3 --tls-cert "$D/cert.pem" --tls-key "$D/key.pem"
case $U in https://127.0.0.1:*) r=0 ;; *) r=1 ;; esac
is "$r" 0 "TLS: the front says https ($U)"
is "$(post "" '{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}' --cacert "$D/cert.pem")" 200 "TLS: initialize over https"
H=$(echo "$U" | sed 's/^https/http/')
st=$(curl -s -o /dev/null -w '%{http_code}' --max-time 5 -X POST "$H" -H "Authorization: Bearer $A" --data-binary '{}')
nok "TLS: plain http to it gets no answer ($st)" test "$st" = 200
st=$(curl -s -o /dev/null -w '%{http_code}' --max-time 5 -X POST "$U" -H "Authorization: Bearer $A" --data-binary '{}')
is "$st" 000 "TLS: a client that does not trust the certificate does not connect"
stop_front
"$CORDON" mcp --listen 0.0.0.0:0 --policy "$D/policy.yaml" -- $SRV >/dev/null 2>"$D/f4.err"
r=$?
nok "off loopback without TLS: refused at start ($r)" test "$r" = 0
ok "... saying why" grep -q 'tls-cert' "$D/f4.err"
done_testing
