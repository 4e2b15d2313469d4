#!/bin/sh
# cordon mcp --listen, the streams: a call during which the server sends a
# notification and a request to the client is answered as an event stream
# carrying them first, then the answer; the client's answer to the
# server's request (a POST) reaches the server; messages after the answer
# go to the GET stream (one per session: a new one replaces it), with
# ids; Last-Event-ID replays them.  Batches only under 2025-03-26.
# mcp.front records: session opening and closing, refused tokens,
# sessions over --max-sessions (429), requests over --max-request (413).
. "${CORDON_SRC:-.}/tests/lib.sh"

. "$CORDON_SRC/tests/helpers/mcp-front-fixture.sh"

front f1 --max-sessions 2 --max-request 4096
ok "the front listens ($U)" test -n "$U"
init 2025-06-18
post "$S" '{"jsonrpc":"2.0","id":1,"method":"tools/list"}' >/dev/null
"$CORDON" mcp pins approve --server t --all >/dev/null
curl -s -o /dev/null -X DELETE -H "Authorization: Bearer $A" -H "Mcp-Session-Id: $S" "$U"
init 2025-06-18
ok "a session ($S)" test ${#S} -eq 64

# A plain call: application/json (positive control for the streams).
is "$(post "$S" "$(call 2 echo)")" 200 "echo: 200"
is "$(ctype)" application/json "... answered as application/json"
# A notification before the answer: an event stream, the notification
# first, the answer last.
is "$(post "$S" "$(call 3 notify)")" 200 "notify: 200"
is "$(ctype)" text/event-stream "... answered as an event stream"
is "$(grep '^data:' "$D/body" | sed 's/.*"data": *"\([a-z-]*\)".*/\1/; s/.*"id": *3,.*/answer/; s/.*"id":3,.*/answer/')" "before-answer
answer" "... the server's notification, then the answer"
ok "... the answer is the call's result" grep -q 'ran notify' "$D/body"
# A request of the server's to the client (elicitation) on the call's
# stream; the client answers with a POST; the call's answer follows.
post "$S" "$(call 4 ask)" >/dev/null &
BG=$!
i=0
while ! grep -q 'elicitation/create' "$D/body" 2>/dev/null && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
ok "ask: the server's elicitation/create reaches the client on the call's stream" grep -q '"method": *"elicitation/create"' "$D/body"
eid=$(sed -n 's/.*"id": *\("[^"]*"\|[0-9]*\).*"method": *"elicitation\/create".*/\1/p; s/.*"method": *"elicitation\/create".*"id": *\("[^"]*"\|[0-9]*\).*/\1/p' "$D/body" | head -1)
ok "... with an id ($eid)" test -n "$eid"
cp "$D/body" "$D/ask-stream"
st=$(curl -s -o /dev/null -w '%{http_code}' -X POST "$U" -H "Authorization: Bearer $A" -H "Mcp-Session-Id: $S" \
	-H 'Content-Type: application/json' --data-binary '{"jsonrpc":"2.0","id":'"$eid"',"result":{"action":"accept","content":{}}}')
is "$st" 202 "the client's answer to it: 202"
wait $BG
BG=""
ok "... it reached the server: the call's answer says so" grep -q 'client said accept' "$D/body"

# The GET stream: what comes after the answer, with event ids.
curl -s -N -o "$D/get1" -H "Authorization: Bearer $A" -H "Mcp-Session-Id: $S" -H 'Accept: text/event-stream' "$U" &
BG=$!
sleep 0.5
is "$(post "$S" "$(call 5 later)")" 200 "later: answered at once"
is "$(ctype)" application/json "... as application/json"
i=0
while ! grep -q 'later-event' "$D/get1" && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
ok "the notification after the answer comes on the GET stream" grep -q 'later-event' "$D/get1"
lid=$(grep -B2 'later-event' "$D/get1" | sed -n 's/^id: *\([0-9]*\)/\1/p' | tail -1)
ok "... with an event id ($lid)" test -n "$lid"
# The client reconnects (the old connection not yet seen gone): the new
# stream replaces the old one, which ends.
curl -s -N -o "$D/get2" --max-time 2 -H "Authorization: Bearer $A" -H "Mcp-Session-Id: $S" -H "Last-Event-ID: $((lid - 1))" "$U"
ok "Last-Event-ID: a new GET stream replays it" grep -q 'later-event' "$D/get2"
i=0
while kill -0 $BG 2>/dev/null && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
nok "... and the stream it replaced has ended" kill -0 $BG
wait $BG 2>/dev/null
BG=""
curl -s -N -o "$D/get3" --max-time 2 -H "Authorization: Bearer $A" -H "Mcp-Session-Id: $S" -H "Last-Event-ID: $lid" "$U"
nok "... and not what came before the id given" grep -q 'later-event' "$D/get3"

# Batches: only under 2025-03-26.
is "$(post "$S" "[$(call 6 echo),$(call 7 echo)]")" 400 "a batch under 2025-06-18: 400"
ok "... a -32600 error" grep -q '"code": *-32600' "$D/body"
SO=$S
init 2025-03-26
is "$(post "$S" "[$(call 8 echo),$(call 9 notify)]")" 200 "a batch under 2025-03-26: 200"
ok "... one array answering both" sh -c "grep -o '\"id\": *[89]' '$D/body' | wc -l | grep -qx 2"
is "$(post "$S" '[{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":99}}]')" 202 "a batch of notifications only: 202"

# Limits with records.
is "$(post "" '{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}')" 429 "a third session of alice's (--max-sessions 2): 429"
big=$(head -c 5000 /dev/zero | tr '\0' a)
is "$(post "$S" '{"jsonrpc":"2.0","id":10,"method":"tools/call","params":{"name":"echo","arguments":{"text":"'"$big"'"}}}')" 413 "a request over --max-request: 413"
i=0
while [ $i -lt 60 ]; do # a flood of 413s: recorded as the 401s are, 20 a minute
	echo "$(post "$S" '{"jsonrpc":"2.0","id":11,"method":"tools/call","params":{"name":"echo","arguments":{"text":"'"$big"'"}}}')" >>"$D/flood"
	i=$((i + 1))
done
is "$(sort -u "$D/flood")" 413 "60 more requests over --max-request: 413 each"
is "$(curl -s -o /dev/null -w '%{http_code}' -X POST "$U" -H 'Authorization: Bearer cdt_nothing-of-ours' --data-binary '{}')" 401 "a wrong token: 401"
is "$(curl -s -o /dev/null -X DELETE -w '%{http_code}' -H "Authorization: Bearer $A" -H "Mcp-Session-Id: $SO" "$U")" 200 "DELETE a session"
records >"$D/rec"
ok "record: a session opened, naming alice and her token" grep -q '"agent":"alice","action":"session-open",.*"decision":"allow".*"token":"'"$tid"'"' "$D/rec"
ok "record: the session closed by DELETE" grep -q '"action":"session-close",.*"reason":"DELETE".*"session":"'"$(echo "$SO" | cut -c1-8)"'"' "$D/rec"
ok "record: the 429" grep -q '"agent":"alice","action":"session-refused",.*"decision":"deny","reason":"too many sessions for this agent (max_sessions 2, --max-sessions)"' "$D/rec"
ok "record: the 413" grep -q '"agent":"alice","action":"request-refused",.*"reason":"request too large (' "$D/rec"
n=$(grep -c '"action":"\(request\|session\)-refused"' "$D/rec")
ok "... the 62 refusals left at most 20 records a minute ($n; two minutes at most)" test "$n" -ge 20 -a "$n" -le 40
ok "record: the 401" grep -q '"action":"token-refused",.*"decision":"deny","reason":"no token in force"' "$D/rec"
lacks "no record holds a whole session id" "$S" "$D/rec"
stop_front
ok "record: the front's stop closes the open session" sh -c "'$CORDON' log export --format jsonl 2>/dev/null | grep -q '\"action\":\"session-close\",.*\"reason\":\"the front stopped\"'"

done_testing
