#!/bin/sh
# cordon mcp --listen as uid 65534 with a HOME of its own (its tokens,
# state and audit log under $HOME/.local/state/cordon): a missing or wrong
# token gets 401; two agents through one front see different tools; a
# denied call never reaches the server (its own log says so); a server
# that notifies before answering gets an event stream carrying the
# notification, then the answer; an agent's policy limit (max_sessions)
# holds; the records are in nobody's own log.
. "${CORDON_SRC:-.}/tests/lib.sh"

if [ "$(id -u)" -ne 0 ]; then
	skip "the run as uid 65534 needs root (as_nobody)"
	done_testing
	exit
fi
D=$T/rl
mkdir -p "$D/bin" "$D/log" "$D/home" "$D/work"
chown 65534:65534 "$D/log" "$D/home" "$D/work"
cat >"$D/bin/srv.py" <<'EOS'
import json, sys
log = open(sys.argv[1], "a")
def send(m):
    sys.stdout.write(json.dumps(m) + "\n")
    sys.stdout.flush()
schema = {"type": "object", "properties": {"text": {"type": "string"}}}
tools = [{"name": n, "description": n, "inputSchema": schema} for n in ("echo", "secret", "notify")]
for line in sys.stdin:
    m = json.loads(line)
    if "id" not in m or "method" not in m:
        continue
    if m["method"] == "initialize":
        r = {"protocolVersion": m["params"]["protocolVersion"], "capabilities": {"tools": {}, "logging": {}},
             "serverInfo": {"name": "t", "version": "1"}}
    elif m["method"] == "tools/list":
        r = {"tools": tools}
    elif m["method"] == "tools/call":
        name = m["params"]["name"]
        log.write(name + "\n")
        log.flush()
        if name == "notify":
            send({"jsonrpc": "2.0", "method": "notifications/message",
                  "params": {"level": "info", "data": "before-answer"}})
        r = {"content": [{"type": "text", "text": "ran " + name}]}
    else:
        r = {}
    send({"jsonrpc": "2.0", "id": m["id"], "result": r})
EOS
G='owner: ops, justification: t, review_by: 2030-01-01, expires: 2030-01-01'
cat >"$D/policy.yaml" <<EOP
version: 1
agents:
  - {id: alice, owner: ops}
  - {id: bob, owner: ops, mcp_front: {max_sessions: 1}}
tools:
  - {id: t, kind: mcp, operations: {echo: read, notify: read}, args: {text: value}}
  - {id: t/secret, kind: mcp, operations: {secret: read}, args: {text: value}}
profiles:
  srv: {timeout: 1h, rw: [$D/log], ro: [$D/bin]}
grants:
  - {id: launch, agent: alice, tool: t, actions: [execute], scope: {argv: [python3, $D/bin/srv.py]}, profile: srv, $G}
  - {id: launch-b, agent: bob, tool: t, actions: [execute], scope: {argv: [python3, $D/bin/srv.py]}, profile: srv, $G}
  - {id: a-read, agent: alice, tool: t, actions: [read], $G}
  - {id: a-secret, agent: alice, tool: t/secret, actions: [read], $G}
  - {id: b-read, agent: bob, tool: t, actions: [read], $G}
EOP
chmod -R go+rX "$D/bin" "$D/policy.yaml"
cd "$D/work" || exit 1
# nobody with its own HOME: the default places of its state and log.
NB() { as_nobody env -u CORDON_STATE -u CORDON_AUDIT HOME="$D/home" "$@"; }
TA=$(NB "$CORDON" mcp token add --agent alice | tail -1)
TB=$(NB "$CORDON" mcp token add --agent bob | tail -1)
ok "nobody's tokens are in its own HOME" test -s "$D/home/.local/state/cordon/state.db"
FP=""
trap '[ -z "$FP" ] || { kill $FP; wait $FP; } 2>/dev/null; _tap_cleanup' EXIT
: >"$D/front.err"
# The helper itself execs into env, then the front: $! is the front.
"$CORDON_SRC/tests/helpers/as-nobody" env -u CORDON_STATE -u CORDON_AUDIT HOME="$D/home" \
	"$CORDON" mcp --listen 127.0.0.1:0 --policy "$D/policy.yaml" -- python3 "$D/bin/srv.py" "$D/log/calls" \
	>/dev/null 2>"$D/front.err" &
FP=$!
i=0
while ! grep -q 'listening on' "$D/front.err" && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
U=$(sed -n 's/.*listening on \(http:[^ ]*\)$/\1/p' "$D/front.err")
ok "the front runs as uid 65534" sh -c "[ \$(ps -o uid= -p $FP | tr -d ' ') = 65534 ]"

post() { # post TOKEN SESSION BODY: the status; body in $D/body, headers in $D/hdr
	curl -s -N --max-time 30 -o "$D/body" -D "$D/hdr" -w '%{http_code}' -X POST "$U" \
		${1:+-H "Authorization: Bearer $1"} ${2:+-H "Mcp-Session-Id: $2"} -H 'Content-Type: application/json' \
		-H 'Accept: application/json, text/event-stream' --data-binary "$3"
}
INIT='{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}'
INITED='{"jsonrpc":"2.0","method":"notifications/initialized"}'
LIST='{"jsonrpc":"2.0","id":1,"method":"tools/list"}'
call() { echo '{"jsonrpc":"2.0","id":'"$1"',"method":"tools/call","params":{"name":"'"$2"'","arguments":{"text":"x"}}}'; }
sid() { sed -n 's/^[Mm]cp-[Ss]ession-[Ii]d: *\([0-9a-f]*\).*/\1/p' "$D/hdr"; }
is "$(post "" "" "$INIT")" 401 "no token: 401"
is "$(post "cdt_0123456789abcdef0123456789abcdef" "" "$INIT")" 401 "a wrong token: 401"
post "$TA" "" "$INIT" >/dev/null
SA=$(sid)
post "$TA" "$SA" "$INITED" >/dev/null
post "$TA" "$SA" "$LIST" >/dev/null
NB "$CORDON" mcp pins approve --server t --all >/dev/null
curl -s -o /dev/null -X DELETE -H "Authorization: Bearer $TA" -H "Mcp-Session-Id: $SA" "$U"
post "$TA" "" "$INIT" >/dev/null
SA=$(sid)
post "$TA" "$SA" "$INITED" >/dev/null
is "$(post "$TB" "" "$INIT")" 200 "bob's session opens"
SB=$(sid)
post "$TB" "$SB" "$INITED" >/dev/null
is "$(post "$TB" "" "$INIT")" 429 "bob's second: 429 (his policy's max_sessions: 1)"
post "$TA" "$SA" "$LIST" >/dev/null
ok "alice's tools: secret among them" grep -q '"name":"secret"' "$D/body"
post "$TB" "$SB" "$LIST" >/dev/null
ok "bob's tools: echo" grep -q '"name":"echo"' "$D/body"
nok "... not secret" grep -q '"secret"' "$D/body"
post "$TB" "$SB" "$(call 2 secret)" >/dev/null
ok "bob's call of secret is denied" grep -q 'denied by policy' "$D/body"
is "$(post "$TA" "$SA" "$(call 3 secret)")" 200 "alice's call of secret answers"
ok "... it ran" grep -q 'ran secret' "$D/body"
is "$(post "$TA" "$SA" "$(call 4 notify)")" 200 "a call whose server notifies first answers"
ok "... as an event stream" grep -qi '^content-type: text/event-stream' "$D/hdr"
ok "... the notification, then the answer" sh -c "grep -n 'before-answer' '$D/body' | cut -d: -f1 >'$D/n1'; grep -n 'ran notify' '$D/body' | cut -d: -f1 >'$D/n2'; [ -s '$D/n1' ] && [ \$(cat '$D/n1') -lt \$(cat '$D/n2') ]"
is "$(tr '\n' ' ' <"$D/log/calls")" "secret notify " "the server saw alice's calls only (bob's denied one never reached it)"
NB "$CORDON" log export --format jsonl 2>/dev/null | grep '"kind":"mcp.front"' >"$D/rec"
ok "the records are in nobody's own log" grep -q '"agent":"bob","action":"session-refused".*max_sessions 1, policy' "$D/rec"
done_testing
