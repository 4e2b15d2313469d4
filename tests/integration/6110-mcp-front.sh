#!/bin/sh
# cordon mcp --listen: MCP over Streamable HTTP for many agents, each named
# by its bearer token (cordon mcp token).  A request without a token in
# force (none, wrong, revoked, expired) gets 401 and nothing else; a
# foreign Origin 403; two agents with different grants through one front
# see different tools; a denied call never reaches the server (its own log
# says so); a session is bound to its agent; records name the token's
# agent; DELETE ends a session; a GET stream only on one's own session;
# a token's own policy with a url: upstream; the SDK's HTTP client; as
# root and as uid 65534.
. "${CORDON_SRC:-.}/tests/lib.sh"
. "$CORDON_SRC/tests/helpers/mcp-upstream.sh"

D=$T/front
mkdir -p "$D/bin" "$D/log" "$D/work"
cat >"$D/bin/srv.py" <<'EOS'
import json, sys
log = open(sys.argv[1], "a")
schema = {"type": "object", "properties": {"text": {"type": "string"}}}
tools = [{"name": n, "description": n, "inputSchema": schema} for n in ("echo", "secret")]
for line in sys.stdin:
    m = json.loads(line)
    if "id" not in m or "method" not in m:
        continue
    if m["method"] == "initialize":
        r = {"protocolVersion": m["params"]["protocolVersion"], "capabilities": {"tools": {}},
             "serverInfo": {"name": "t", "version": "1"}}
    elif m["method"] == "tools/list":
        r = {"tools": tools}
    elif m["method"] == "tools/call":
        log.write(m["params"]["name"] + "\n")
        log.flush()
        r = {"content": [{"type": "text", "text": "ran " + m["params"]["name"]}]}
    else:
        r = {}
    sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": m["id"], "result": r}) + "\n")
    sys.stdout.flush()
EOS
G='owner: ops, justification: t, review_by: 2030-01-01, expires: 2030-01-01'
cat >"$D/policy.yaml" <<EOP
version: 1
agents: [{id: alice, owner: ops}, {id: bob, owner: ops}]
tools:
  - {id: t, kind: mcp, operations: {echo: read}, args: {text: value}}
  - {id: t/secret, kind: mcp, operations: {secret: read}, args: {text: value}}
profiles:
  srv: {timeout: 1h, rw: [$D/log], ro: [$D/bin]}
grants:
  - {id: launch, agent: alice, tool: t, actions: [execute], scope: {argv: [python3, $D/bin/srv.py]}, profile: srv, $G}
  - {id: launch-b, agent: bob, tool: t, actions: [execute], scope: {argv: [python3, $D/bin/srv.py]}, profile: srv, $G}
  - {id: a-echo, agent: alice, tool: t, actions: [read], $G}
  - {id: a-secret, agent: alice, tool: t/secret, actions: [read], $G}
  - {id: b-echo, agent: bob, tool: t, actions: [read], $G}
EOP
cd "$D/work" || exit 1
SRV="python3 $D/bin/srv.py $D/log/calls"

# Tokens: printed once as the last line; only the hash is stored.
A=$("$CORDON" mcp token add --agent alice | tail -1)
B=$("$CORDON" mcp token add --agent bob | tail -1)
case $A in cdt_????????????????????????????????????????????????????????????????) r=0 ;; *) r=1 ;; esac
is "$r" 0 "token add prints the token as the last line"
lacks "... the state database never holds it" "${A#cdt_}" "$CORDON_STATE"
R=$("$CORDON" mcp token add --agent alice | tail -1)
rid=$("$CORDON" mcp token list | sed -n 3p | cut -f1)
ok "token revoke $rid" "$CORDON" mcp token revoke "$rid"
E=$("$CORDON" mcp token add --agent alice --expires 1s | tail -1)
"$CORDON" mcp token list >"$D/list"
ok "token list shows the revoked one" grep -q "^$rid	alice	revoked" "$D/list"

"$CORDON" mcp --listen 127.0.0.1:0 --policy "$D/policy.yaml" -- $SRV >/dev/null 2>"$D/front.err" &
FP=$!
trap 'kill $FP 2>/dev/null; wait $FP 2>/dev/null; stop_upstream; _tap_cleanup' EXIT
i=0
while ! grep -q 'listening on' "$D/front.err" && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
U=$(sed -n 's/.*listening on \(http:[^ ]*\)$/\1/p' "$D/front.err")
ok "the front listens ($U)" test -n "$U"
O=${U%/mcp}

# post TOKEN SESSION BODY [curl args]: the status; the body in $D/body,
# the headers in $D/hdr.
post() {
	tk=$1 sid=$2 body=$3
	shift 3
	curl -s -o "$D/body" -D "$D/hdr" -w '%{http_code}' -X POST "$U" \
		${tk:+-H "Authorization: Bearer $tk"} ${sid:+-H "Mcp-Session-Id: $sid"} \
		-H 'Content-Type: application/json' -H 'Accept: application/json, text/event-stream' \
		"$@" --data-binary "$body"
}
INIT='{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}'
INITED='{"jsonrpc":"2.0","method":"notifications/initialized"}'
LIST='{"jsonrpc":"2.0","id":1,"method":"tools/list"}'
CALL_SECRET='{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"secret","arguments":{"text":"x"}}}'
sid_of() { sed -n 's/^[Mm]cp-[Ss]ession-[Ii]d: *\([0-9a-f]*\).*/\1/p' "$D/hdr"; }

is "$(post "" "" "$INIT")" 401 "no token: 401"
is "$(cat "$D/body")" unauthorized "... and nothing else"
is "$(post "cdt_$(printf '%064d' 0)" "" "$INIT")" 401 "a wrong token: 401"
is "$(post "$R" "" "$INIT")" 401 "a revoked token: 401"
sleep 1.2
is "$(post "$E" "" "$INIT")" 401 "an expired token: 401"
is "$(post "$A" "" "$INIT" -H 'Origin: http://evil.example')" 403 "a foreign Origin: 403"
is "$(post "$A" "" "$INIT" -H "Origin: $O")" 200 "the front's own Origin is accepted"
SA=$(sid_of)
ok "... with a session id" test ${#SA} -eq 64
is "$(post "$A" "$SA" "$INITED")" 202 "a notification: 202"
# A first listing records the definitions as pending: approve them.
post "$A" "$SA" "$LIST" >/dev/null
"$CORDON" mcp pins approve --server t --all >/dev/null
is "$(post "$A" "" "$INIT")" 200 "alice: a session without Origin (as SDK clients send)"
SA=$(sid_of)
post "$A" "$SA" "$INITED" >/dev/null
is "$(post "$A" "$SA" "$LIST")" 200 "alice lists"
is "$(grep -o '"name":"[a-z]*"' "$D/body" | tr '\n' ' ')" '"name":"echo" "name":"secret" ' "... echo and secret"
is "$(post "$B" "" "$INIT")" 200 "bob: a session through the same front"
SB=$(sid_of)
post "$B" "$SB" "$INITED" >/dev/null
post "$B" "$SB" "$LIST" >/dev/null
is "$(grep -o '"name":"[a-z]*"' "$D/body" | tr '\n' ' ')" '"name":"echo" ' "bob sees echo only"
is "$(post "$B" "$SA" "$LIST")" 404 "bob cannot use alice's session"
is "$(post "" "$SA" "$LIST")" 401 "... nor can anyone without a token"
is "$(post "$A" "" "$LIST")" 400 "a request without a session: 400"
: >"$D/log/calls"
is "$(post "$B" "$SB" "$CALL_SECRET")" 200 "bob calls secret"
ok "... denied by policy" grep -q '"isError":true.*denied by policy\|denied by policy.*"isError":true' "$D/body"
is "$(wc -c <"$D/log/calls" | tr -d ' ')" 0 "... and the server never saw the call"
is "$(post "$A" "$SA" "$CALL_SECRET")" 200 "alice calls secret"
ok "... it ran" grep -q 'ran secret' "$D/body"
is "$(cat "$D/log/calls")" secret "... on the server (positive control)"
"$CORDON" log export --format jsonl >"$D/log.jsonl" 2>/dev/null
ok "the record of bob's denied call names bob" grep -q '"kind":"mcp.call",.*"agent":"bob","tool":"t/secret",.*"decision":"deny"' "$D/log.jsonl"
ok "the record of alice's call names alice" grep -q '"kind":"mcp.call",.*"agent":"alice","tool":"t/secret",.*"decision":"allow"' "$D/log.jsonl"
st=$(curl -s -o /dev/null -w '%{http_code}' -H "Authorization: Bearer $A" "$U")
is "$st" 400 "GET without a session: 400"
st=$(curl -s -o /dev/null -w '%{http_code}' -H "Authorization: Bearer $B" -H "Mcp-Session-Id: $SA" "$U")
is "$st" 404 "GET on another agent's session: 404"
st=$(curl -s -o /dev/null -w '%{http_code}' -X DELETE -H "Authorization: Bearer $B" -H "Mcp-Session-Id: $SA" "$U")
is "$st" 404 "bob cannot end alice's session"
st=$(curl -s -o /dev/null -w '%{http_code}' -X DELETE -H "Authorization: Bearer $A" -H "Mcp-Session-Id: $SA" "$U")
is "$st" 200 "DELETE ends alice's session"
is "$(post "$A" "$SA" "$LIST")" 404 "... which is gone"
# Revocation takes effect on the next request of an open session.
bid=$("$CORDON" mcp token list | grep '	bob	active' | cut -f1)
"$CORDON" mcp token revoke "$bid" >/dev/null
is "$(post "$B" "$SB" "$LIST")" 401 "a token revoked mid-session: 401 on its next request"
# SIGHUP: each open session reloads its policy (a policy.load record
# each); the front goes on.
loads() { "$CORDON" log export --format jsonl 2>/dev/null | grep -c '"kind":"policy.load"'; }
n0=$(loads)
kill -HUP $FP
i=0
while [ "$(loads)" -le "$n0" ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
ok "SIGHUP: the open session reloaded its policy" test "$(loads)" -gt "$n0"
is "$(post "$A" "" "$INIT")" 200 "... and the front goes on"
# The official SDK's StreamableHTTPClientTransport through the same front.
. "$CORDON_SRC/tests/mcp/setup.sh"
if mcp_setup; then
	mkdir -p "$D/sdk"
	cp "$CORDON_SRC/tests/mcp/http-client.mjs" "$D/sdk/"
	ln -s "$MCP_CACHE/node_modules" "$D/sdk/node_modules"
	sdk() { MCP_URL=$U MCP_TOKEN=$1 MCP_OPS=$2 node "$D/sdk/http-client.mjs" 2>>"$D/sdk.err"; }
	: >"$D/log/calls"
	out=$(sdk "$A" '[{"op":"list"},{"op":"call","name":"secret","args":{"text":"y"}}]')
	is "$out" '{"tools":["echo","secret"]}
{"isError":false,"text":"ran secret"}' "SDK client: alice lists both tools and calls secret"
	C=$("$CORDON" mcp token add --agent bob | tail -1)
	out=$(sdk "$C" '[{"op":"list"},{"op":"call","name":"secret","args":{"text":"y"}}]')
	case $out in '{"tools":["echo"]}'*'"isError":true'*'denied by policy'*) r=0 ;; *) r=1 ;; esac
	is "$r" 0 "SDK client: bob sees echo only, and his call of secret is denied"
	[ "$r" -eq 0 ] || diag "got: $out $(cat "$D/sdk.err")"
	is "$(cat "$D/log/calls")" secret "... the server ran alice's call only"
	out=$(sdk "cdt_wrong" '[{"op":"list"}]')
	case $out in *'connect:'*unauthorized*) r=0 ;; *) r=1 ;; esac
	is "$r" 0 "SDK client: a wrong token cannot connect (401 unauthorized)"
	[ "$r" -eq 0 ] || diag "got: $out"
else
	skip "cannot install the MCP SDK (npm ci)"
fi
lacks "the tokens never reach the front's stderr" "${A#cdt_}" "$D/front.err"
kill $FP
wait $FP 2>/dev/null

# A remote upstream (url:) behind the front: each session its own
# connection; the denied call never reaches it.
mkdir -p "$D/up"
start_upstream "$D/up" good
cat >"$D/url.yaml" <<EOP
version: 1
agents: [{id: coder, owner: ops}]
tools:
  - {id: up, kind: mcp, url: "http://127.0.0.1:$port/mcp", secret: UP_TOKEN, operations: {echo: read, wipe: delete}, args: {message: value}}
grants:
  - {id: g-echo, agent: coder, tool: up, actions: [read], $G}
EOP
K=$("$CORDON" mcp token add --agent coder --policy "$D/url.yaml" | tail -1)
UP_TOKEN="Bearer up-6110" "$CORDON" mcp --listen 127.0.0.1:0 --policy "$D/policy.yaml" >/dev/null 2>"$D/frontu.err" &
FP=$!
i=0
while ! grep -q 'listening on' "$D/frontu.err" && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
U=$(sed -n 's/.*listening on \(http:[^ ]*\)$/\1/p' "$D/frontu.err")
post "$K" "" "$INIT" >/dev/null
SK=$(sid_of)
post "$K" "$SK" "$INITED" >/dev/null
post "$K" "$SK" "$LIST" >/dev/null
"$CORDON" mcp pins approve --server up --all >/dev/null
is "$(post "$K" "" "$INIT")" 200 "url: upstream: a session (the token's own policy)"
SK=$(sid_of)
post "$K" "$SK" "$INITED" >/dev/null
post "$K" "$SK" "$LIST" >/dev/null
is "$(grep -o '"name":"[a-z]*"' "$D/body" | tr '\n' ' ')" '"name":"echo" ' "url: upstream: the granted tool only"
: >"$D/up/up.log"
post "$K" "$SK" '{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"echo","arguments":{"message":"hello"}}}' >/dev/null
ok "url: upstream: an allowed call answers" grep -q 'echo: hello' "$D/body"
post "$K" "$SK" '{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"wipe","arguments":{}}}' >/dev/null
ok "url: upstream: wipe is denied" grep -q 'denied by policy' "$D/body"
is "$(grep -c '"method": "tools/call"' "$D/up/up.log")" 1 "url: upstream: only the allowed call reached it"
kill $FP
wait $FP 2>/dev/null
stop_upstream

# As uid 65534 (cordon is rootless first): its own state, tokens and front.
if [ "$(id -u)" -eq 0 ]; then
	mkdir -p "$D/logn"
	chown 65534:65534 "$D/logn"
	sed "s|rw: \[$D/log\]|rw: [$D/logn]|" "$D/policy.yaml" >"$D/policyn.yaml"
	NA=$(as_nobody "$CORDON" mcp token add --agent alice | tail -1)
	NB=$(as_nobody "$CORDON" mcp token add --agent bob | tail -1)
	# The helper itself (not the function, whose subshell $! would name)
	# execs into the front: $! is the front.
	"$CORDON_SRC/tests/helpers/as-nobody" "$CORDON" mcp --listen 127.0.0.1:0 --policy "$D/policyn.yaml" -- python3 "$D/bin/srv.py" "$D/logn/calls" >/dev/null 2>"$D/frontn.err" &
	FP=$!
	i=0
	while ! grep -q 'listening on' "$D/frontn.err" && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
	U=$(sed -n 's/.*listening on \(http:[^ ]*\)$/\1/p' "$D/frontn.err")
	ok "nobody: the front listens ($U)" test -n "$U"
	is "$(post "" "" "$INIT")" 401 "nobody: no token: 401"
	is "$(post "$A" "" "$INIT")" 401 "nobody: root's token is not nobody's: 401"
	post "$NA" "" "$INIT" >/dev/null
	SA=$(sid_of)
	post "$NA" "$SA" "$INITED" >/dev/null
	post "$NA" "$SA" "$LIST" >/dev/null
	as_nobody "$CORDON" mcp pins approve --server t --all >/dev/null
	post "$NA" "" "$INIT" >/dev/null
	SA=$(sid_of)
	post "$NA" "$SA" "$INITED" >/dev/null
	post "$NB" "" "$INIT" >/dev/null
	SB=$(sid_of)
	post "$NB" "$SB" "$INITED" >/dev/null
	post "$NB" "$SB" "$CALL_SECRET" >/dev/null
	ok "nobody: bob's call of secret is denied" grep -q 'denied by policy' "$D/body"
	is "$(post "$NA" "$SA" "$CALL_SECRET")" 200 "nobody: alice calls secret"
	ok "... it ran" grep -q 'ran secret' "$D/body"
	is "$(cat "$D/logn/calls" 2>/dev/null)" secret "nobody: the server saw alice's call only"
	kill $FP
	wait $FP 2>/dev/null
else
	skip "the half as uid 65534 needs root"
fi
done_testing
