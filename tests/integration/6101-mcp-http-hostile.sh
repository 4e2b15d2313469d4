#!/bin/sh
# cordon mcp with a hostile remote server (tests/mcp/http-upstream.py,
# one MODE each): an event past 16 MiB, a body that is not JSON, a session
# id that changes or holds a control byte, a redirect to another host, an
# HTML answer, a stream that drops before its answer.  Each is refused or
# failed with an error answer the client gets (never a hang, never a
# crash), an mcp.protocol record says why, and the session goes on (the
# next call is answered too).  A stream that drops after numbered events
# is resumed with GET and Last-Event-ID, and the call succeeds.
# Node and Python start slowly on a loaded machine: a longer timeout.
CORDON_TEST_TIMEOUT=${CORDON_TEST_TIMEOUT:-240}
. "${CORDON_SRC:-.}/tests/lib.sh"
. "$CORDON_SRC/tests/mcp/setup.sh"
. "$CORDON_SRC/tests/helpers/mcp-upstream.sh"

if ! mcp_setup; then
	skip "cannot install the MCP SDK (npm ci)"
	done_testing
fi
export CORDON_STATE="$T/state.db" CORDON_AUDIT="$T/audit.db"

# run_mode MODE: the server in MODE, a session of list and two calls;
# its answers in $out, the records in $T/log-MODE.
start_upstream "$T" good
run_mode() {
	: >"$T/up.log"
	cat >"$T/policy.yaml" <<EOP
version: 1
agents: [{id: coder, owner: ops}]
tools:
  - {id: up, kind: mcp, url: "http://127.0.0.1:$port/$1/mcp", operations: {echo: read}, args: {message: value}}
grants:
  - {id: g-echo, agent: coder, tool: up, actions: [read], owner: ops, justification: t, review_by: 2030-01-01, expires: 2030-01-01}
EOP
	[ -f "$T/approved" ] || { MCP_OPS='[{"op":"list"}]' node "$MCP_CLIENT" "$CORDON" mcp --policy "$T/policy.yaml" --agent coder >/dev/null 2>&1; "$CORDON" mcp pins approve --server up --all >/dev/null && touch "$T/approved"; }
	: >"$T/seq0"
	"$CORDON" log show 2>/dev/null | wc -l >"$T/seq0"
	out=$(MCP_OPS='[{"op":"list"},{"op":"call","name":"echo","args":{"message":"one"}},{"op":"call","name":"echo","args":{"message":"two"}}]' \
		timeout 60 node "$MCP_CLIENT" "$CORDON" mcp --policy "$T/policy.yaml" --agent coder 2>"$T/stderr-$1")
	rc=$?
	"$CORDON" log show 2>/dev/null | tail -n +"$(($(cat "$T/seq0") + 1))" >"$T/log-$1"
}

# hostile MODE REASON: both calls get an error naming REASON, recorded.
hostile() {
	run_mode "$1"
	is "$rc" 0 "$1: the client's session ends normally (no hang)"
	is "$(printf '%s\n' "$out" | grep -c "\"error\":\"MCP error -32000: upstream: .*$2")" 2 "$1: both calls get an error answer saying: $2"
	is "$(grep -c "\"kind\":\"mcp.protocol\".*$2" "$T/log-$1")" 2 "$1: ... and each refusal is an mcp.protocol record"
}

run_mode good
is "$(printf '%s\n' "$out" | sed -n 2p)" '{"isError":false,"text":"echo: one"}' "good: a call is answered (positive control)"
hostile big "an event or a line past 16 MiB"
hostile badjson "the server's answer did not come"
ok "badjson: the line that is not JSON is an mcp.protocol record" grep -q '"kind":"mcp.protocol".*"from":"server"' "$T/log-badjson"
hostile redirect "a redirect (to 'http://203.0.113.9/mcp'): never followed"
hostile ctype "a content type ('text/html') that is neither JSON nor an event stream"
hostile drop "the event stream ended before its answer"

run_mode sidchange
is "$(grep -c '"kind":"mcp.protocol".*the server changed the session id' "$T/log-sidchange")" "$(grep -c '"kind":"mcp.protocol"' "$T/log-sidchange")" "sidchange: a changed session id is refused and recorded"
ok "sidchange: ... at least once" grep -q 'the server changed the session id' "$T/log-sidchange"
case $out in *'"isError":false'*) r=1 ;; *) r=0 ;; esac
is "$r" 0 "sidchange: no answer under another session id reaches the client"

run_mode sidbad
case $out in *"connect: MCP error -32000: upstream: a session id that is not 1-256 visible ASCII bytes"*) r=0 ;; *) r=1 ;; esac
is "$r" 0 "sidbad: a session id with a control byte fails the handshake"
ok "sidbad: ... recorded" grep -q '"kind":"mcp.protocol".*a session id that is not 1-256 visible ASCII bytes' "$T/log-sidbad"

run_mode legacyevil
case $out in *"connect: MCP error -32000: upstream: an HTTP+SSE endpoint ('http://203.0.113.9/message?s=1') off the server's origin"*) r=0 ;; *) r=1 ;; esac
is "$r" 0 "legacyevil: an HTTP+SSE endpoint on another host is refused"
ok "legacyevil: ... recorded" grep -q '"kind":"mcp.protocol".*off the server' "$T/log-legacyevil"
is "$(grep -c '"http": "POST"' "$T/up.log")" 1 "legacyevil: ... and nothing more was sent (the one refused initialize)"

run_mode resume
is "$(printf '%s\n' "$out" | sed -n 2,3p | tr '\n' ' ')" '{"isError":false,"text":"echo: one"} {"isError":false,"text":"echo: two"} ' "resume: a dropped stream with event ids is resumed and the calls answered"
is "$(grep -c '"http": "GET", "last_event_id": "ev-1"' "$T/up.log")" 2 "resume: ... by GET with Last-Event-ID"
ok "resume: the resumption is recorded" grep -q '"kind":"mcp.protocol".*resumed (attempt 1)' "$T/log-resume"
ok "the audit log verifies" "$CORDON" log verify
done_testing
