#!/bin/sh
# cordon mcp --listen with a launched server whose tool says shared: true:
# the sessions of one agent (same policy) share one gateway and server
# instance, another agent gets its own; the same request id from two
# sessions at once comes back to each with its own answer (the front
# rewrites ids); a second session is answered initialize without a new
# process; the instance lives while one of its sessions does and ends
# with the last.  Without shared: (the positive control) each session has
# its own instance.  shared: on a url: server is refused; policy diff
# counts turning it on as widening.
. "${CORDON_SRC:-.}/tests/lib.sh"

D=$T/sh
mkdir -p "$D/bin" "$D/log" "$D/work"
cat >"$D/bin/srv.py" <<'EOS'
import json, os, sys, threading, time
log = open(sys.argv[1], "a")
lock = threading.Lock()
inst = os.urandom(8).hex()  # the pid is the same in every sandbox
schema = {"type": "object", "properties": {"text": {"type": "string"}}}
tools = [{"name": "echo", "description": "echo", "inputSchema": schema}]
def answer(m):
    if m["params"]["arguments"]["text"].startswith("slow"):  # an event, later the answer
        with lock:
            sys.stdout.write(json.dumps({"jsonrpc": "2.0", "method": "notifications/message",
                                         "params": {"level": "info", "data": "working"}}) + "\n")
            sys.stdout.flush()
        time.sleep(1.5)
    time.sleep(0.5)
    with lock:
        log.write("%s %s\n" % (inst, m["params"]["arguments"]["text"]))
        log.flush()
        sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": m["id"], "result": {
            "content": [{"type": "text", "text": "echo " + m["params"]["arguments"]["text"]}]}}) + "\n")
        sys.stdout.flush()
for line in sys.stdin:
    m = json.loads(line)
    if "id" not in m or "method" not in m:
        continue
    if m["method"] == "tools/call":
        threading.Thread(target=answer, args=(m,)).start()
        continue
    if m["method"] == "initialize":
        r = {"protocolVersion": m["params"]["protocolVersion"], "capabilities": {"tools": {}},
             "serverInfo": {"name": "t", "version": "1"}}
    elif m["method"] == "tools/list":
        r = {"tools": tools}
    else:
        r = {}
    with lock:
        sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": m["id"], "result": r}) + "\n")
        sys.stdout.flush()
EOS
G='owner: ops, justification: t, review_by: 2030-01-01, expires: 2030-01-01'
policy() { # policy FILE SHARED
	cat >"$1" <<EOP
version: 1
agents: [{id: alice, owner: ops}, {id: bob, owner: ops}]
tools:
  - {id: t, kind: mcp, shared: $2, operations: {echo: read}, args: {text: value}}
profiles:
  srv: {timeout: 1h, rw: [$D/log], ro: [$D/bin]}
grants:
  - {id: launch, agent: alice, tool: t, actions: [execute], scope: {argv: [python3, $D/bin/srv.py]}, profile: srv, $G}
  - {id: launch-b, agent: bob, tool: t, actions: [execute], scope: {argv: [python3, $D/bin/srv.py]}, profile: srv, $G}
  - {id: a-echo, agent: alice, tool: t, actions: [read], $G}
  - {id: b-echo, agent: bob, tool: t, actions: [read], $G}
EOP
}
policy "$D/shared.yaml" true
policy "$D/own.yaml" false
cd "$D/work" || exit 1
A=$("$CORDON" mcp token add --agent alice | tail -1)
B=$("$CORDON" mcp token add --agent bob | tail -1)
FP=""
trap '[ -z "$FP" ] || { kill $FP; wait $FP; } 2>/dev/null; _tap_cleanup' EXIT

front() { # front NAME POLICY
	"$CORDON" mcp --listen 127.0.0.1:0 --policy "$2" -- python3 "$D/bin/srv.py" "$D/log/calls" >/dev/null 2>"$D/$1.err" &
	FP=$!
	i=0
	while ! grep -q 'listening on' "$D/$1.err" && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
	U=$(sed -n 's/.*listening on \(http[^ ]*\)$/\1/p' "$D/$1.err")
}
post() { # post TOKEN SESSION BODY OUT: the status
	curl -s --max-time 20 -o "$4" -D "$4.hdr" -w '%{http_code}' -X POST "$U" -H "Authorization: Bearer $1" \
		${2:+-H "Mcp-Session-Id: $2"} -H 'Content-Type: application/json' \
		-H 'Accept: application/json, text/event-stream' --data-binary "$3"
}
init() { # init TOKEN [VERSION]: a session id on stdout
	post "$1" "" '{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"'"${2:-2025-06-18}"'","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}' "$D/init" >/dev/null
	sid=$(sed -n 's/^[Mm]cp-[Ss]ession-[Ii]d: *\([0-9a-f]*\).*/\1/p' "$D/init.hdr")
	post "$1" "$sid" '{"jsonrpc":"2.0","method":"notifications/initialized"}' /dev/null >/dev/null
	echo "$sid"
}
batch() { echo '[{"jsonrpc":"2.0","id":"'"$1"'","method":"tools/call","params":{"name":"echo","arguments":{"text":"'"$2"'"}}}]'; }
echo_call() { echo '{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"echo","arguments":{"text":"'"$1"'"}}}'; }
pids() { cut -d' ' -f1 "$D/log/calls" | sort -u | wc -l | tr -d ' '; }
children() { ps -o pid= --ppid "$FP" | wc -l | tr -d ' '; }

front f1 "$D/shared.yaml"
S=$(init "$A")
post "$A" "$S" '{"jsonrpc":"2.0","id":1,"method":"tools/list"}' /dev/null >/dev/null
"$CORDON" mcp pins approve --server t --all >/dev/null
curl -s -o /dev/null -X DELETE -H "Authorization: Bearer $A" -H "Mcp-Session-Id: $S" "$U"
: >"$D/log/calls"
S1=$(init "$A")
S2=$(init "$A")
ok "shared: two sessions of alice's" test ${#S1} -eq 64 -a ${#S2} -eq 64 -a "$S1" != "$S2"
ok "... the second was answered initialize" grep -q '"protocolVersion":"2025-06-18"' "$D/init"
is "$(children)" 1 "... by the one gateway process of the first"
post "$A" "$S1" "$(echo_call one)" "$D/o1" >/dev/null &
p1=$!
post "$A" "$S2" "$(echo_call two)" "$D/o2" >/dev/null &
p2=$!
wait $p1 $p2
ok "the same id from both sessions at once: each gets its own answer (one)" grep -q '"id":7,.*echo one\|echo one.*"id":7' "$D/o1"
ok "... (two)" grep -q '"id":7,.*echo two\|echo two.*"id":7' "$D/o2"
is "$(pids)" 1 "... both ran in one server instance"
SB=$(init "$B")
post "$B" "$SB" "$(echo_call bob)" "$D/ob" >/dev/null
ok "bob's call answers" grep -q 'echo bob' "$D/ob"
is "$(pids)" 2 "... in an instance of his own"
curl -s -o /dev/null -X DELETE -H "Authorization: Bearer $A" -H "Mcp-Session-Id: $S1" "$U"
is "$(post "$A" "$S2" "$(echo_call three)" "$D/o3")" 200 "the first session ended: the second goes on"
ok "... on the same instance" sh -c "[ \$(grep -c . '$D/log/calls') -eq 4 ] && [ \$(cut -d' ' -f1 '$D/log/calls' | sort -u | wc -l) -eq 2 ]"
S3=$(init "$A")
is "$(children)" 2 "a third session of alice's joins it (two processes: alice's, bob's)"
curl -s -o /dev/null -X DELETE -H "Authorization: Bearer $A" -H "Mcp-Session-Id: $S2" "$U"
curl -s -o /dev/null -X DELETE -H "Authorization: Bearer $A" -H "Mcp-Session-Id: $S3" "$U"
i=0
while [ "$(children)" -gt 1 ] && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
is "$(children)" 1 "alice's last session ended: her instance ended (bob's remains)"
# Batches (2025-03-26) on a shared instance: each session's own, one
# session's abandoned batch neither blocks another's nor answers it.
B1=$(init "$A" 2025-03-26)
B2=$(init "$A" 2025-03-26)
post "$A" "$B1" "$(batch x one)" "$D/b1" >"$D/b1.st" &
p1=$!
post "$A" "$B2" "$(batch x two)" "$D/b2" >"$D/b2.st" &
p2=$!
wait $p1 $p2
is "$(cat "$D/b1.st") $(cat "$D/b2.st")" "200 200" "two sessions' batches at once (same id): both served"
ok "... each its own answer (one)" grep -q '"id":"x".*echo one' "$D/b1"
ok "... (two)" grep -q '"id":"x".*echo two' "$D/b2"
curl -s --max-time 0.5 -o "$D/b1" -X POST "$U" -H "Authorization: Bearer $A" -H "Mcp-Session-Id: $B1" \
	-H 'Content-Type: application/json' -H 'Accept: application/json, text/event-stream' \
	--data-binary "$(batch A-private slow-secret)"
is "$(post "$A" "$B2" "$(batch B-own mine)" "$D/b2")" 200 "batch: one session's in flight (abandoned), another's is served"
ok "... with its own answer" grep -q '"id":"B-own".*echo mine\|echo mine.*"id":"B-own"' "$D/b2"
nok "... never the other session's" grep -q 'A-private\|secret' "$D/b2"
curl -s -o /dev/null -X DELETE -H "Authorization: Bearer $A" -H "Mcp-Session-Id: $B1" "$U"
curl -s -o /dev/null -X DELETE -H "Authorization: Bearer $A" -H "Mcp-Session-Id: $B2" "$U"
"$CORDON" log export --format jsonl 2>/dev/null | grep '"kind":"mcp.front"' >"$D/rec"
ok "the records say which sessions share an instance" grep -q '"reason":"initialize (shared instance)"' "$D/rec"
kill $FP
wait $FP 2>/dev/null

# The positive control: without shared: each session its own instance.
front f2 "$D/own.yaml"
: >"$D/log/calls"
S1=$(init "$A")
S2=$(init "$A")
post "$A" "$S1" "$(echo_call one)" "$D/o1" >/dev/null
post "$A" "$S2" "$(echo_call two)" "$D/o2" >/dev/null
ok "not shared: both answer" grep -q 'echo two' "$D/o2"
is "$(pids)" 2 "... each in its own instance"
is "$(children)" 2 "... two gateway processes"
kill $FP
wait $FP 2>/dev/null
FP=""

# The policy side.
sed 's/{id: t, kind: mcp, shared: true,/{id: t, kind: mcp, shared: true, url: "http:\/\/127.0.0.1:9\/mcp",/' "$D/shared.yaml" >"$D/bad.yaml"
nok "shared: on a url: server is refused" "$CORDON" policy lint "$D/bad.yaml"
sed 's/shared: true/shared: yes/' "$D/shared.yaml" >"$D/bad2.yaml"
nok "shared: must be true or false" "$CORDON" policy lint "$D/bad2.yaml"
ok "... the good file lints (the positive control)" "$CORDON" policy lint "$D/shared.yaml"
"$CORDON" policy diff "$D/own.yaml" "$D/shared.yaml" >"$D/diff" 2>&1
ok "policy diff: shared turned on is reported" grep -q 'shared' "$D/diff"
done_testing
