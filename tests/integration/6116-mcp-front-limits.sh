#!/bin/sh
# cordon mcp --listen: limits per agent from the policy (an agent's
# mcp_front: entry).  alice is held to 1 session, 4 KiB requests and 3 tool
# calls a minute: her second session gets 429, a 5 KiB request 413, her
# fourth call 429, each recorded with the limit that refused it.  bob (his
# own mcp_front: raises max_request above --max-request) is unaffected:
# two sessions, a 20 KiB request, more calls.  policy check refuses bad
# values.
. "${CORDON_SRC:-.}/tests/lib.sh"

D=$T/lim
mkdir -p "$D/bin" "$D/log" "$D/work"
cat >"$D/bin/srv.py" <<'EOS'
import json, sys
schema = {"type": "object", "properties": {"text": {"type": "string"}}}
for line in sys.stdin:
    m = json.loads(line)
    if "id" not in m or "method" not in m:
        continue
    if m["method"] == "initialize":
        r = {"protocolVersion": m["params"]["protocolVersion"], "capabilities": {"tools": {}},
             "serverInfo": {"name": "t", "version": "1"}}
    elif m["method"] == "tools/list":
        r = {"tools": [{"name": "echo", "description": "echo", "inputSchema": schema}]}
    elif m["method"] == "tools/call":
        r = {"content": [{"type": "text", "text": "len %d" % len(m["params"]["arguments"]["text"])}]}
    else:
        r = {}
    sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": m["id"], "result": r}) + "\n")
    sys.stdout.flush()
EOS
G='owner: ops, justification: t, review_by: 2030-01-01, expires: 2030-01-01'
cat >"$D/policy.yaml" <<EOP
version: 1
agents:
  - {id: alice, owner: ops, mcp_front: {max_sessions: 1, max_request: 4K, max_calls_per_minute: 3}}
  - {id: bob, owner: ops, mcp_front: {max_request: 64K}}
tools:
  - {id: t, kind: mcp, operations: {echo: read}, args: {text: value}}
profiles:
  srv: {timeout: 1h, ro: [$D/bin]}
grants:
  - {id: launch, agent: alice, tool: t, actions: [execute], scope: {argv: [python3, $D/bin/srv.py]}, profile: srv, $G}
  - {id: launch-b, agent: bob, tool: t, actions: [execute], scope: {argv: [python3, $D/bin/srv.py]}, profile: srv, $G}
  - {id: a-echo, agent: alice, tool: t, actions: [read], $G}
  - {id: b-echo, agent: bob, tool: t, actions: [read], $G}
EOP
cd "$D/work" || exit 1
A=$("$CORDON" mcp token add --agent alice | tail -1)
B=$("$CORDON" mcp token add --agent bob | tail -1)
FP=""
SID="" ST=""
trap '[ -z "$FP" ] || { kill $FP; wait $FP; } 2>/dev/null; _tap_cleanup' EXIT

"$CORDON" mcp --listen 127.0.0.1:0 --policy "$D/policy.yaml" --max-request 8K \
	-- python3 "$D/bin/srv.py" >/dev/null 2>"$D/front.err" &
FP=$!
i=0
while ! grep -q 'listening on' "$D/front.err" && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
U=$(sed -n 's/.*listening on \(http[^ ]*\)$/\1/p' "$D/front.err")

post() { # post TOKEN SESSION BODY-FILE: the status; body in $D/out
	curl -s --max-time 30 -o "$D/out" -D "$D/out.hdr" -w '%{http_code}' -X POST "$U" \
		-H "Authorization: Bearer $1" ${2:+-H "Mcp-Session-Id: $2"} -H 'Content-Type: application/json' \
		-H 'Accept: application/json, text/event-stream' --data-binary "@$3"
}
init() { # init TOKEN: the status in $ST, the session id in $SID
	echo '{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}' >"$D/init.json"
	ST=$(post "$1" "" "$D/init.json")
	SID=$(sed -n 's/^[Mm]cp-[Ss]ession-[Ii]d: *\([0-9a-f]*\).*/\1/p' "$D/out.hdr")
	if [ "$ST" = 200 ]; then
		echo '{"jsonrpc":"2.0","method":"notifications/initialized"}' >"$D/n.json"
		post "$1" "$SID" "$D/n.json" >/dev/null
	fi
}
call() { # call ID PAD-LENGTH > file (the padding in _meta: an argument has its own cap)
	printf '{"jsonrpc":"2.0","id":%s,"method":"tools/call","params":{"name":"echo","arguments":{"text":"xy"},"_meta":{"pad":"%s"}}}' \
		"$1" "$(head -c "$2" /dev/zero | tr '\0' x)"
}

# The tools' definitions approved first (a session reads them at its start).
init "$B"
echo '{"jsonrpc":"2.0","id":9,"method":"tools/list"}' >"$D/list.json"
post "$B" "$SID" "$D/list.json" >/dev/null
"$CORDON" mcp pins approve --server t --all >/dev/null
curl -s -o /dev/null -X DELETE -H "Authorization: Bearer $B" -H "Mcp-Session-Id: $SID" "$U"
init "$A"
is "$ST" 200 "alice's first session opens"
SA=$SID
init "$A"
is "$ST" 429 "her second: 429 (max_sessions: 1 in the policy)"
init "$B"
is "$ST" 200 "bob's first session opens"
SB=$SID
init "$B"
is "$ST" 200 "... and his second (the flag's default, 8, holds for him)"
call 1 10 >"$D/small.json"
is "$(post "$A" "$SA" "$D/small.json")" 200 "alice: a small call answers"
ok "... through the server" grep -q '"len 2"' "$D/out"
call 2 5120 >"$D/5k.json"
is "$(post "$A" "$SA" "$D/5k.json")" 413 "alice: a 5 KiB request gets 413 (max_request: 4K)"
is "$(post "$B" "$SB" "$D/5k.json")" 200 "bob: the same request answers"
call 3 20480 >"$D/20k.json"
is "$(post "$B" "$SB" "$D/20k.json")" 200 "bob: a 20 KiB request answers (his 64K is above --max-request 8K)"
ok "... by the server" grep -q '"id":3,.*"len 2"' "$D/out"
call 4 70000 >"$D/70k.json"
is "$(post "$B" "$SB" "$D/70k.json")" 413 "bob: 70 KB gets 413 (above his 64K)"
is "$(post "$A" "$SA" "$D/small.json")" 200 "alice: her second call answers"
is "$(post "$A" "$SA" "$D/small.json")" 200 "... her third"
is "$(post "$A" "$SA" "$D/small.json")" 429 "... her fourth within the minute: 429 (max_calls_per_minute: 3)"
ok "... a JSON-RPC error under the request's id" grep -q '"id":1,.*too many tool calls' "$D/out"
for n in 1 2 3 4; do post "$B" "$SB" "$D/small.json" >"$D/bst"; done
is "$(cat "$D/bst")" 200 "bob's calls are not counted against alice's"
"$CORDON" log export --format jsonl 2>/dev/null | grep '"kind":"mcp.front"' >"$D/rec"
ok "the records say which limit: max_sessions" grep -q '"agent":"alice".*max_sessions 1, policy' "$D/rec"
ok "... max_request" grep -q '"agent":"alice".*request too large (max_request 4096, policy)' "$D/rec"
ok "... max_calls_per_minute" grep -q '"agent":"alice".*max_calls_per_minute 3, policy' "$D/rec"
ok "... the HTTP server's cap (the largest max_request) refusing bob's 70 KB" grep -q '"agent":"bob".*request too large (over 65536, the largest max_request)' "$D/rec"
nok "... and none other of bob's" sh -c "grep '\"agent\":\"bob\".*deny' '$D/rec' | grep -v 'over 65536'"
kill $FP
wait $FP 2>/dev/null
FP=""
SID="" ST=""

# The policy side: values are checked.
for bad in 'max_sessions: 0' 'max_sessions: 300' 'max_request: 17M' 'max_request: lots' \
	'max_calls_per_minute: 0' 'max_call_per_minute: 5'; do
	sed "s/{max_request: 64K}/{$bad}/" "$D/policy.yaml" >"$D/bad.yaml"
	nok "policy lint refuses mcp_front: {$bad}" "$CORDON" policy lint "$D/bad.yaml"
done
ok "... and takes the good file (the positive control)" "$CORDON" policy lint "$D/policy.yaml"
"$CORDON" policy matrix "$D/policy.yaml" >"$D/matrix"
ok "policy matrix shows alice's limits" grep -q '^  alice: max_sessions 1, max_request 4096, max_calls_per_minute 3$' "$D/matrix"
ok "... and bob's (the flags where he sets none)" grep -q '^  bob: max_sessions (flag), max_request 65536, max_calls_per_minute none$' "$D/matrix"
done_testing
