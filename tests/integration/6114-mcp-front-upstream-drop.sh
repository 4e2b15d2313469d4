#!/bin/sh
# cordon mcp --listen in front of a remote (url:) server whose event
# stream drops mid-answer (tests/mcp/http-upstream.py): without event ids
# the call gets an error answer through the front and the session goes on
# (its next call is answered too, the front serves other sessions); with
# event ids the session's gateway resumes the stream (GET, Last-Event-ID)
# and the call is answered.
. "${CORDON_SRC:-.}/tests/lib.sh"
. "$CORDON_SRC/tests/helpers/mcp-upstream.sh"

export CORDON_STATE="$T/state.db" CORDON_AUDIT="$T/audit.db"
FP=""
trap '[ -z "$FP" ] || kill $FP; wait $FP 2>/dev/null; stop_upstream; _tap_cleanup' EXIT
start_upstream "$T" good
G='owner: ops, justification: t, review_by: 2030-01-01, expires: 2030-01-01'
for m in good drop resume; do
	cat >"$T/$m.yaml" <<EOP
version: 1
agents: [{id: coder, owner: ops}]
tools:
  - {id: up, kind: mcp, url: "http://127.0.0.1:$port/$m/mcp", operations: {echo: read}, args: {message: value}}
grants:
  - {id: g-echo, agent: coder, tool: up, actions: [read], $G}
EOP
done
TG=$("$CORDON" mcp token add --agent coder --policy "$T/good.yaml" | tail -1)
TD=$("$CORDON" mcp token add --agent coder --policy "$T/drop.yaml" | tail -1)
TR=$("$CORDON" mcp token add --agent coder --policy "$T/resume.yaml" | tail -1)
"$CORDON" mcp --listen 127.0.0.1:0 --policy "$T/good.yaml" >/dev/null 2>"$T/front.err" &
FP=$!
i=0
while ! grep -q 'listening on' "$T/front.err" && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
U=$(sed -n 's/.*listening on \(http[^ ]*\)$/\1/p' "$T/front.err")

post() { # post TOKEN SESSION BODY: the status; the body in $T/body
	curl -s --max-time 60 -o "$T/body" -D "$T/hdr" -w '%{http_code}' -X POST "$U" -H "Authorization: Bearer $1" \
		${2:+-H "Mcp-Session-Id: $2"} -H 'Content-Type: application/json' \
		-H 'Accept: application/json, text/event-stream' --data-binary "$3"
}
init() {
	post "$1" "" '{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}' >/dev/null
	S=$(sed -n 's/^[Mm]cp-[Ss]ession-[Ii]d: *\([0-9a-f]*\).*/\1/p' "$T/hdr")
	post "$1" "$S" '{"jsonrpc":"2.0","method":"notifications/initialized"}' >/dev/null
}
call() { echo '{"jsonrpc":"2.0","id":'"$1"',"method":"tools/call","params":{"name":"echo","arguments":{"message":"'"$2"'"}}}'; }

init "$TG"
post "$TG" "$S" '{"jsonrpc":"2.0","id":1,"method":"tools/list"}' >/dev/null
"$CORDON" mcp pins approve --server up --all >/dev/null
init "$TG"
post "$TG" "$S" "$(call 2 one)" >/dev/null
ok "good: a call through the front is answered (positive control)" grep -q 'echo: one' "$T/body"

init "$TD"
is "$(post "$TD" "$S" "$(call 2 one)")" 200 "drop: the call is answered (no hang)"
ok "... with an error saying the stream ended" grep -q 'the event stream ended before its answer' "$T/body"
nok "... and no result" grep -q '"isError":false' "$T/body"
post "$TD" "$S" "$(call 3 two)" >/dev/null
ok "drop: the session goes on: its next call is answered too" grep -q 'the event stream ended before its answer' "$T/body"
"$CORDON" log export --format jsonl 2>/dev/null >"$T/log.jsonl"
ok "drop: each is an mcp.protocol record" sh -c "[ \$(grep -c '\"kind\":\"mcp.protocol\".*the event stream ended before its answer' '$T/log.jsonl') -ge 2 ]"

init "$TR"
post "$TR" "$S" "$(call 2 one)" >/dev/null
ok "resume: a dropped stream with event ids is resumed, the call answered" grep -q 'echo: one' "$T/body"
ok "... by GET with Last-Event-ID" grep -q '"http": "GET", "last_event_id": "ev-1"' "$T/up.log"

init "$TG"
post "$TG" "$S" "$(call 2 three)" >/dev/null
ok "the front still serves a good session" grep -q 'echo: three' "$T/body"
done_testing
