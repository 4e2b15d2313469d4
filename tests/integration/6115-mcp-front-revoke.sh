#!/bin/sh
# cordon mcp --listen: a session belongs to the token that opened it
# (another token of the same agent gets 404 on POST, GET and DELETE);
# revoking the token ends its open GET stream within the front's sweep
# (5 s) and closes the session with a session-close record saying why;
# a session without requests or streams for --session-idle is closed.
. "${CORDON_SRC:-.}/tests/lib.sh"

D=$T/front
mkdir -p "$D/bin" "$D/log" "$D/work"
cat >"$D/bin/srv.py" <<'EOS'
import json, sys
for line in sys.stdin:
    m = json.loads(line)
    if "id" not in m or "method" not in m:
        continue
    r = {}
    if m["method"] == "initialize":
        r = {"protocolVersion": m["params"]["protocolVersion"], "capabilities": {"tools": {}},
             "serverInfo": {"name": "t", "version": "1"}}
    elif m["method"] == "tools/list":
        r = {"tools": []}
    sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": m["id"], "result": r}) + "\n")
    sys.stdout.flush()
EOS
G='owner: ops, justification: t, review_by: 2030-01-01, expires: 2030-01-01'
cat >"$D/policy.yaml" <<EOP
version: 1
agents: [{id: alice, owner: ops}]
tools:
  - {id: t, kind: mcp, operations: {echo: read}, args: {text: value}}
profiles:
  srv: {timeout: 1h, rw: [$D/log], ro: [$D/bin]}
grants:
  - {id: launch, agent: alice, tool: t, actions: [execute], scope: {argv: [python3, $D/bin/srv.py]}, profile: srv, $G}
EOP
cd "$D/work" || exit 1

A=$("$CORDON" mcp token add --agent alice | tail -1)
A2=$("$CORDON" mcp token add --agent alice | tail -1)
aid=$("$CORDON" mcp token list | sed -n 1p | cut -f1)

FP= FP2= CP=
trap 'kill $FP $FP2 $CP 2>/dev/null; wait $FP $FP2 $CP 2>/dev/null; _tap_cleanup' EXIT
# start FILE [options]: a front; its URL in $U.
start() {
	err=$1
	shift
	"$CORDON" mcp --listen 127.0.0.1:0 --policy "$D/policy.yaml" "$@" -- python3 "$D/bin/srv.py" >/dev/null 2>"$err" &
	i=0
	while ! grep -q 'listening on' "$err" && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
	U=$(sed -n 's/.*listening on \(http:[^ ]*\)$/\1/p' "$err")
}
post() {
	tk=$1 sid=$2 body=$3
	curl -s -o "$D/body" -D "$D/hdr" -w '%{http_code}' -X POST "$U" \
		-H "Authorization: Bearer $tk" ${sid:+-H "Mcp-Session-Id: $sid"} \
		-H 'Content-Type: application/json' -H 'Accept: application/json, text/event-stream' \
		--data-binary "$body"
}
req() { curl -s --max-time 5 -o /dev/null -w '%{http_code}' -X "$1" -H "Authorization: Bearer $2" -H "Mcp-Session-Id: $3" "$U"; }
INIT='{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}'
INITED='{"jsonrpc":"2.0","method":"notifications/initialized"}'
LIST='{"jsonrpc":"2.0","id":1,"method":"tools/list"}'
sid_of() { sed -n 's/^[Mm]cp-[Ss]ession-[Ii]d: *\([0-9a-f]*\).*/\1/p' "$D/hdr"; }

start "$D/front.err"
FP=$!
ok "the front listens ($U)" test -n "$U"
is "$(post "$A" "" "$INIT")" 200 "token 1 opens a session"
S1=$(sid_of)
post "$A" "$S1" "$INITED" >/dev/null
is "$(post "$A" "$S1" "$LIST")" 200 "token 1 uses its session (control)"
is "$(post "$A2" "$S1" "$LIST")" 404 "another token of the same agent cannot POST to it"
is "$(req GET "$A2" "$S1")" 404 "... nor open its GET stream"
is "$(req DELETE "$A2" "$S1")" 404 "... nor end it"
is "$(post "$A" "$S1" "$LIST")" 200 "... which still works for token 1"

# An open GET stream of token 1, then its revocation.
t0=$(date +%s)
curl -s -N --max-time 45 -o "$D/stream" -H "Authorization: Bearer $A" -H "Mcp-Session-Id: $S1" "$U" &
CP=$!
sleep 1
ok "the GET stream is open" kill -0 $CP
ok "token revoke $aid" "$CORDON" mcp token revoke "$aid"
wait $CP
CP=
el=$(($(date +%s) - t0))
ok "revoking ends the open GET stream within 20 s (took ${el}s)" test "$el" -le 20
is "$(post "$A" "$S1" "$LIST")" 401 "the revoked token: 401"
# the close is recorded as the session is torn down, which may be just
# after the stream's end reached curl (a quiet machine: ~1 s): wait for it
i=0
while [ $i -lt 20 ]; do
	"$CORDON" log export --format jsonl >"$D/rec" 2>/dev/null
	grep -q '"action":"session-close"' "$D/rec" && break
	sleep 0.5
	i=$((i + 1))
done
ok "record: the session closed because its token was revoked" grep -q '"action":"session-close",.*"reason":"the session'"'"'s token is revoked or expired".*"session":"'"$(echo "$S1" | cut -c1-8)"'"' "$D/rec"
kill $FP
wait $FP 2>/dev/null
FP=

# --session-idle: a session nobody uses is closed.
start "$D/front2.err" --session-idle 3s
FP2=$!
ok "a front with --session-idle 3s listens" test -n "$U"
is "$(post "$A2" "" "$INIT")" 200 "a session opens"
S2=$(sid_of)
is "$(post "$A2" "$S2" "$INITED")" 202 "... and is used (control)"
# Until its close is recorded (the front forgets a session before it
# records its close), 10 s at most; asking the front would keep it in use.
idle_rec='"action":"session-close",.*"reason":"idle (--session-idle)".*"session":"'"$(echo "$S2" | cut -c1-8)"'"'
t1=$(($(date +%s) + 10))
while ! "$CORDON" log export --format jsonl 2>/dev/null | grep -q "$idle_rec" && [ "$(date +%s)" -lt $t1 ]; do
	sleep 0.2
done
is "$(post "$A2" "$S2" "$LIST")" 404 "... idle 10 s: gone"
"$CORDON" log export --format jsonl >"$D/rec" 2>/dev/null
ok "record: the idle session closed" grep -q "$idle_rec" "$D/rec"
done_testing
