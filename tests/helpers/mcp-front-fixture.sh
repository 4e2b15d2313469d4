# mcp-front-fixture.sh — sourced by the tests of `cordon mcp --listen`'s
# streams (6111) and held calls over TLS (6112), after tests/lib.sh: a
# stdio MCP server in Python whose tools notify, ask the client, answer
# later or are held for approval; alice's policy and bearer token ($A);
# and the helpers front/stop_front (a front on a free port, URL in $U),
# post, init (a session, its id in $S), call, ctype and records.
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
