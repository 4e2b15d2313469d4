#!/bin/sh
# cordon mcp --listen, a launched server with shared: true: six
# initializes of one agent at once start one instance (the others wait for
# it), not six; the server's notifications that answer no request
# (tools/list_changed, resources/updated) reach every session sharing it,
# each on its own stream; a progress notification goes to the session
# whose request asked for it (its progressToken restored), and to no
# other.
. "${CORDON_SRC:-.}/tests/lib.sh"

D=$T/fan
mkdir -p "$D/bin" "$D/work"
cat >"$D/bin/srv.py" <<'EOS'
import json, sys, threading, time
lock = threading.Lock()
def send(m):
    with lock:
        sys.stdout.write(json.dumps(m) + "\n")
        sys.stdout.flush()
schema = {"type": "object", "properties": {"text": {"type": "string"}}}
tools = [{"name": n, "description": n, "inputSchema": schema} for n in ("echo", "bcast", "prog")]
def call(m):
    name = m["params"]["name"]
    if name == "bcast":
        send({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"})
        send({"jsonrpc": "2.0", "method": "notifications/resources/updated", "params": {"uri": "file:///r"}})
        time.sleep(0.5)
    elif name == "prog":
        tok = m["params"].get("_meta", {}).get("progressToken")
        for i in (1, 2):
            send({"jsonrpc": "2.0", "method": "notifications/progress",
                  "params": {"progressToken": tok, "progress": i, "total": 2}})
            time.sleep(0.3)
    send({"jsonrpc": "2.0", "id": m["id"], "result": {"content": [{"type": "text", "text": "ran " + name}]}})
for line in sys.stdin:
    m = json.loads(line)
    if "id" not in m or "method" not in m:
        continue
    if m["method"] == "tools/call":
        threading.Thread(target=call, args=(m,)).start()
        continue
    if m["method"] == "initialize":
        time.sleep(1)  # a slow start: the other initializes arrive meanwhile
        r = {"protocolVersion": m["params"]["protocolVersion"], "capabilities": {"tools": {"listChanged": True}},
             "serverInfo": {"name": "t", "version": "1"}}
    elif m["method"] == "tools/list":
        r = {"tools": tools}
    else:
        r = {}
    send({"jsonrpc": "2.0", "id": m["id"], "result": r})
EOS
G='owner: ops, justification: t, review_by: 2030-01-01, expires: 2030-01-01'
cat >"$D/policy.yaml" <<EOP
version: 1
agents: [{id: alice, owner: ops}]
tools:
  - {id: t, kind: mcp, shared: true, operations: {echo: read, bcast: read, prog: read}, args: {text: value}}
profiles:
  srv: {timeout: 1h, ro: [$D/bin]}
grants:
  - {id: launch, agent: alice, tool: t, actions: [execute], scope: {argv: [python3, $D/bin/srv.py]}, profile: srv, $G}
  - {id: a-read, agent: alice, tool: t, actions: [read], $G}
EOP
cd "$D/work" || exit 1
A=$("$CORDON" mcp token add --agent alice | tail -1)
FP="" GP=""
trap '[ -z "$FP$GP" ] || { kill $FP $GP; wait $FP $GP; } 2>/dev/null; _tap_cleanup' EXIT
: >"$D/front.err"
"$CORDON" mcp --listen 127.0.0.1:0 --policy "$D/policy.yaml" -- python3 "$D/bin/srv.py" >/dev/null 2>"$D/front.err" &
FP=$!
i=0
while ! grep -q 'listening on' "$D/front.err" && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
U=$(sed -n 's/.*listening on \(http[^ ]*\)$/\1/p' "$D/front.err")

post() { # post SESSION BODY OUT: the status
	curl -s -N --max-time 30 -o "$3" -D "$3.hdr" -w '%{http_code}' -X POST "$U" -H "Authorization: Bearer $A" \
		${1:+-H "Mcp-Session-Id: $1"} -H 'Content-Type: application/json' \
		-H 'Accept: application/json, text/event-stream' --data-binary "$2"
}
init() { # init N: session N's id in $D/sid.N, the status in $D/st.N
	post "" '{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}' "$D/init.$1" >"$D/st.$1"
	sed -n 's/^[Mm]cp-[Ss]ession-[Ii]d: *\([0-9a-f]*\).*/\1/p' "$D/init.$1.hdr" >"$D/sid.$1"
	post "$(cat "$D/sid.$1")" '{"jsonrpc":"2.0","method":"notifications/initialized"}' /dev/null >/dev/null
}
children() { ps -o pid= --ppid "$FP" | wc -l | tr -d ' '; }
del() { curl -s -o /dev/null -X DELETE -H "Authorization: Bearer $A" -H "Mcp-Session-Id: $1" "$U"; }

# The tools' definitions approved first (a session reads them at its start).
init 0
post "$(cat "$D/sid.0")" '{"jsonrpc":"2.0","id":1,"method":"tools/list"}' /dev/null >/dev/null
"$CORDON" mcp pins approve --server t --all >/dev/null
del "$(cat "$D/sid.0")"
i=0
while [ "$(children)" -gt 0 ] && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
is "$(children)" 0 "the approving session's instance ended with it"

pids=""
for n in 1 2 3 4 5 6; do
	init $n &
	pids="$pids $!"
done
wait $pids
is "$(cat "$D"/st.1 "$D"/st.2 "$D"/st.3 "$D"/st.4 "$D"/st.5 "$D"/st.6 | tr -d '\n')" 200200200200200200 \
	"six initializes at once: all answered"
is "$(cat "$D"/sid.* | sort -u | grep -c .)" 7 "... seven distinct sessions in all"
is "$(children)" 1 "... by one gateway process (one shared instance)"
"$CORDON" log export --format jsonl 2>/dev/null | grep '"kind":"mcp.front"' >"$D/rec"
is "$(grep -c 'initialize (shared instance, new)' "$D/rec")" 2 "... one new instance recorded (and the approving one's before)"
is "$(grep -c '"reason":"initialize (shared instance)"' "$D/rec")" 5 "... five joined it"

# GET streams of sessions 2 to 4; session 1 calls bcast.
for n in 2 3 4; do
	curl -s -N --max-time 60 -o "$D/get.$n" -D "$D/get.$n.hdr" -H "Authorization: Bearer $A" \
		-H "Mcp-Session-Id: $(cat "$D/sid.$n")" -H 'Accept: text/event-stream' "$U" &
	GP="$GP $!"
done
i=0 # each stream open (its headers in) before the server notifies
while [ $i -lt 100 ] && ! { [ -s "$D/get.2.hdr" ] && [ -s "$D/get.3.hdr" ] && [ -s "$D/get.4.hdr" ]; }; do
	sleep 0.1
	i=$((i + 1))
done
call() { echo '{"jsonrpc":"2.0","id":'"$1"',"method":"tools/call","params":{"name":"'"$2"'","arguments":{"text":"x"}'"${3:-}"'}}'; }
is "$(post "$(cat "$D/sid.1")" "$(call 5 bcast)" "$D/b1")" 200 "session 1's call that makes the server notify answers"
ok "... its answer" grep -q 'ran bcast' "$D/b1"
ok "... its stream carries tools/list_changed" grep -q 'notifications/tools/list_changed' "$D/b1"
# Session 2 calls prog with a progress token of its own, while the GET
# streams are open.
post "$(cat "$D/sid.2")" "$(call 6 prog ',"_meta":{"progressToken":"tok-two"}')" "$D/p2" >/dev/null
sleep 1 # what the streams carry has reached them
kill $GP
wait $GP 2>/dev/null
GP=""
for n in 2 3 4; do
	ok "session $n's GET stream: tools/list_changed" grep -q 'notifications/tools/list_changed' "$D/get.$n"
	ok "... and resources/updated" grep -q 'notifications/resources/updated' "$D/get.$n"
done
ok "session 2's call: its progress on its POST stream" grep -q 'notifications/progress.*"progressToken":"tok-two"\|"progressToken":"tok-two".*notifications/progress' "$D/p2"
is "$(grep -c 'notifications/progress' "$D/p2")" 2 "... both of them"
ok "... then its answer" grep -q 'ran prog' "$D/p2"
nok "... never with cordon's prefix" grep -q 'cordon-s' "$D/p2"
nok "no other session's stream has its progress (3)" grep -q 'progress' "$D/get.3"
nok "... (4)" grep -q 'progress' "$D/get.4"
nok "... (1)" grep -q 'progress' "$D/b1"
done_testing
