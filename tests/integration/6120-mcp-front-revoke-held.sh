#!/bin/sh
# cordon mcp --listen, a `shared: true` instance (attacker F3, M12): token
# A1's session holds a call for approval; revoking A1 ends that POST with
# no result, the front tells the shared gateway the request is cancelled,
# and the gateway withdraws the approval (status withdrawn, recorded): an
# approver approving it later runs nothing.  Token A2's session on the same
# instance is unaffected (its own held call, approved, runs: the positive
# control).  Control, `shared: false`: the revoked session's POST ends and
# the server never runs the call either.
. "${CORDON_SRC:-.}/tests/lib.sh"

D=$T/front
mkdir -p "$D/bin" "$D/log" "$D/work"
cat >"$D/bin/srv.py" <<'EOS'
import json, sys
log = open(sys.argv[1], "a")
schema = {"type": "object", "properties": {"text": {"type": "string"}}}
tools = [{"name": n, "description": n, "inputSchema": schema} for n in ("echo", "held")]
for line in sys.stdin:
    m = json.loads(line)
    if "method" not in m or "id" not in m:
        continue
    meth, r = m["method"], {}
    if meth == "initialize":
        r = {"protocolVersion": m["params"]["protocolVersion"], "capabilities": {"tools": {}},
             "serverInfo": {"name": "t", "version": "1"}}
    elif meth == "tools/list":
        r = {"tools": tools}
    elif meth == "tools/call":
        log.write(m["params"]["name"] + " " + m["params"]["arguments"]["text"] + "\n")
        log.flush()
        r = {"content": [{"type": "text", "text": "ran " + m["params"]["arguments"]["text"]}]}
    sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": m["id"], "result": r}) + "\n")
    sys.stdout.flush()
EOS
G='owner: ops, justification: t, review_by: 2030-01-01, expires: 2030-01-01'
for sh in true false; do
	cat >"$D/policy-$sh.yaml" <<EOP
version: 1
agents: [{id: alice, owner: ops}]
tools:
  - {id: t, kind: mcp, shared: $sh, operations: {echo: read}, args: {text: value}}
  - {id: t/held, kind: mcp, operations: {held: update}, args: {text: value}}
profiles:
  srv: {timeout: 1h, rw: [$D/log], ro: [$D/bin]}
grants:
  - {id: launch, agent: alice, tool: t, actions: [execute], scope: {argv: [python3, $D/bin/srv.py]}, profile: srv, $G}
  - {id: a-read, agent: alice, tool: t, actions: [read], $G}
  - {id: a-held, agent: alice, tool: t/held, actions: [update], approval: human, $G}
EOP
done
cd "$D/work" || exit 1

FP= CP= CP2=
trap 'kill $FP $CP $CP2 2>/dev/null; wait $FP $CP $CP2 2>/dev/null; _tap_cleanup' EXIT
# start SHARED: a front; its URL in $U.
start() {
	"$CORDON" mcp --listen 127.0.0.1:0 --policy "$D/policy-$1.yaml" -- python3 "$D/bin/srv.py" "$D/log/calls" >/dev/null 2>"$D/front-$1.err" &
	FP=$!
	i=0
	while ! grep -q 'listening on' "$D/front-$1.err" && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
	U=$(sed -n 's/.*listening on \(http:[^ ]*\)$/\1/p' "$D/front-$1.err")
}
post() {
	tk=$1 sid=$2 body=$3
	curl -s -o "$D/body" -D "$D/hdr" -w '%{http_code}' -X POST "$U" \
		-H "Authorization: Bearer $tk" ${sid:+-H "Mcp-Session-Id: $sid"} \
		-H 'Content-Type: application/json' -H 'Accept: application/json, text/event-stream' \
		--data-binary "$body"
}
INIT='{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-03-26","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}'
INITED='{"jsonrpc":"2.0","method":"notifications/initialized"}'
LIST='{"jsonrpc":"2.0","id":1,"method":"tools/list"}'
# init TOKEN: a session in $S (protocol 2025-03-26: batches too).
init() {
	post "$1" "" "$INIT" >/dev/null
	S=$(sed -n 's/^[Mm]cp-[Ss]ession-[Ii]d: *\([0-9a-f]*\).*/\1/p' "$D/hdr")
	post "$1" "$S" "$INITED" >/dev/null
}
# held TOKEN SID TEXT OUT: a held call in the background (pid in $!).
held() {
	curl -s -N --max-time 60 -o "$4" -X POST "$U" -H "Authorization: Bearer $1" -H "Mcp-Session-Id: $2" \
		-H 'Content-Type: application/json' -H 'Accept: application/json, text/event-stream' \
		--data-binary '{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"held","arguments":{"text":"'"$3"'"}}}' &
}
# pending [NOT]: the id of the newest pending approval (not NOT), waiting
# up to 20 s.
pending() {
	i=0 aid=
	while [ -z "$aid" ] && [ $i -lt 100 ]; do
		sleep 0.2
		aid=$("$CORDON" approvals list 2>/dev/null | awk -v n="${1:-}" '$2 == "pending" && $1 != n {a = $1} END {print a}')
		i=$((i + 1))
	done
	echo "$aid"
}
# gone PID SECONDS: PID ends within SECONDS.
gone() {
	i=0
	while kill -0 "$1" 2>/dev/null && [ $i -lt $(($2 * 5)) ]; do sleep 0.2; i=$((i + 1)); done
	! kill -0 "$1" 2>/dev/null
}
status_of() { "$CORDON" approvals list --all 2>/dev/null | awk -v a="$1" '$1 == a {print $2}'; }

A1=$("$CORDON" mcp token add --agent alice | tail -1)
id1=$("$CORDON" mcp token list | sed -n 1p | cut -f1)
A2=$("$CORDON" mcp token add --agent alice | tail -1)
A3=$("$CORDON" mcp token add --agent alice | tail -1)
id3=$("$CORDON" mcp token list | sed -n 3p | cut -f1)

start true
ok "the front listens ($U)" test -n "$U"
init "$A1"
S1=$S
init "$A2"
S2=$S
init "$A3"
S3=$S
post "$A1" "$S1" "$LIST" >/dev/null
"$CORDON" mcp pins approve --server t --all >/dev/null 2>&1
"$CORDON" mcp pins approve --server t/held --all >/dev/null 2>&1
is "$(post "$A1" "$S1" "$LIST")" 200 "S1 (A1) lists the tools"
ok "... after the pins are approved" grep -q '"held"' "$D/body"

held "$A1" "$S1" by-revoked-token "$D/held1.out"
CP=$!
ap1=$(pending)
ok "A1's call is held for approval ($ap1)" test -n "$ap1"
ok "A1's POST is open while held" kill -0 $CP
# S3 (A3): the same call in a batch.
curl -s -N --max-time 60 -o "$D/held3.out" -X POST "$U" -H "Authorization: Bearer $A3" -H "Mcp-Session-Id: $S3" \
	-H 'Content-Type: application/json' -H 'Accept: application/json, text/event-stream' \
	--data-binary '[{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"held","arguments":{"text":"by-revoked-batch"}}}]' &
CP2=$!
ap3=$(pending "$ap1")
ok "A3's batched call is held too ($ap3)" test -n "$ap3"
ok "revoke A1 ($id1)" "$CORDON" mcp token revoke "$id1"
ok "revoke A3 ($id3)" "$CORDON" mcp token revoke "$id3"
ok "the revoked session's held POST ends within the sweep (12 s)" gone $CP 12
ok "... the batch's too" gone $CP2 5
wait $CP $CP2 2>/dev/null
CP= CP2=
ok "... with no result" sh -c '! grep -q "\"result\"" "$1" "$2"' _ "$D/held1.out" "$D/held3.out"
ok "... but cordon's error" grep -q 'cordon: the session' "$D/held1.out"
i=0
while [ "$(status_of "$ap1")$(status_of "$ap3")" != withdrawnwithdrawn ] && [ $i -lt 25 ]; do sleep 0.2; i=$((i + 1)); done
is "$(status_of "$ap1")" withdrawn "the gateway withdrew the approval"
is "$(status_of "$ap3")" withdrawn "... and the batched call's"
nok "approving the withdrawn approval is refused" "$CORDON" approvals approve "$ap1" --as bob
nok "... the batched one's too" "$CORDON" approvals approve "$ap3" --as bob

# Positive control: A2's session on the same instance, its own held call.
held "$A2" "$S2" by-valid-token "$D/held2.out"
CP2=$!
ap2=$(pending)
ok "A2's call is held too ($ap2)" test -n "$ap2" -a "$ap2" != "$ap1"
ok "... approved by bob" "$CORDON" approvals approve "$ap2" --as bob
ok "... A2's POST gets its answer" gone $CP2 20
wait $CP2 2>/dev/null
CP2=
ok "... the result" grep -q '"ran by-valid-token"' "$D/held2.out"
ok "the server ran A2's call" grep -qx 'held by-valid-token' "$D/log/calls"
ok "the server never ran the revoked tokens' calls" sh -c '! grep -q by-revoked "$1"' _ "$D/log/calls"
is "$(post "$A2" "$S2" '{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"echo","arguments":{"text":"s2"}}}')" 200 "S2 still calls tools"
ok "... and gets the result" grep -q '"ran s2"' "$D/body"
"$CORDON" log export --format jsonl >"$D/rec" 2>/dev/null
ok "record: approval.withdrawn" grep -q '"kind":"approval.withdrawn".*'"$ap1" "$D/rec"
ok "record: the held call denied, cancelled" grep -q '"kind":"mcp.call".*"decision":"deny".*the client cancelled the call ('"$ap1"' withdrawn)' "$D/rec"
kill $FP
wait $FP 2>/dev/null
FP=

# Control, shared: false: the session's own process stops with it.
B1=$("$CORDON" mcp token add --agent alice | tail -1)
idb=$("$CORDON" mcp token list | sed -n 4p | cut -f1)
start false
init "$B1"
SB=$S
held "$B1" "$SB" by-revoked-unshared "$D/held4.out"
CP=$!
ap4=$(pending)
ok "shared false: the call is held ($ap4)" test -n "$ap4" -a "$ap4" != "$ap2"
ok "... revoke the token ($idb)" "$CORDON" mcp token revoke "$idb"
ok "... its POST ends within 12 s" gone $CP 12
wait $CP 2>/dev/null
CP=
ok "... with no result" sh -c '! grep -q "\"result\"" "$1"' _ "$D/held4.out"
"$CORDON" approvals approve "$ap4" --as bob >/dev/null 2>&1
sleep 2
ok "... the server never ran it" sh -c '! grep -q by-revoked-unshared "$1"' _ "$D/log/calls"
done_testing
