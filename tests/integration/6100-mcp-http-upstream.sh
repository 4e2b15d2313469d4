#!/bin/sh
# cordon mcp in front of a remote MCP server (the policy tool's url:),
# with the real SDK client on stdio and a small Streamable HTTP server on
# loopback (tests/mcp/http-upstream.py) that records what reaches it:
# only granted tools are listed; a denied call (unscoped argument, action
# not granted) never reaches the server; the session id, the negotiated
# protocol version and the secret: as Authorization go on every request,
# DELETE ends the session; the secret appears in no output and no record;
# the connection is an egress record.  As root and as nobody.
# Node and Python start slowly on a loaded machine: a longer timeout.
CORDON_TEST_TIMEOUT=${CORDON_TEST_TIMEOUT:-240}
. "${CORDON_SRC:-.}/tests/lib.sh"
. "$CORDON_SRC/tests/mcp/setup.sh"
. "$CORDON_SRC/tests/helpers/mcp-upstream.sh"

if ! mcp_setup; then
	skip "cannot install the MCP SDK (npm ci)"
	done_testing
fi
TOKEN="Bearer tok-6100-$$-q7Zx"
chmod 0755 "$T"

case_user() {
	u=$1
	D=$T/$u
	mkdir -p "$D/work" "$D/st"
	[ "$u" = nobody ] && chown -R 65534:65534 "$D"
	start_upstream "$D" good
	ok "$u: the upstream listens" test -n "$port"
	upstream_policy "$D" "http://127.0.0.1:$port/mcp"
	cd "$D/work" || return
	gw() { $RUN_AS env CORDON_STATE="$D/st/state.db" CORDON_AUDIT="$D/st/audit.db" UP_TOKEN="$TOKEN" "$@"; }
	mcp() { gw env MCP_OPS="$1" node "$MCP_CLIENT" "$CORDON" mcp --policy "$D/policy.yaml" --agent coder 2>"$D/stderr"; }
	logs() { gw "$CORDON" log show 2>/dev/null; }

	out=$(mcp '[{"op":"list"}]')
	is "$out" '{"tools":[]}' "$u: before the pins are approved no tool is shown"
	ok "$u: pins approve --all" gw "$CORDON" mcp pins approve --server up --all
	: >"$D/up.log"
	out=$(mcp '[{"op":"list"},{"op":"call","name":"echo","args":{"message":"hello there"}},{"op":"call","name":"echo","args":{"message":"bye"}},{"op":"call","name":"wipe","args":{}}]')
	is "$(printf '%s\n' "$out" | sed -n 1p)" '{"tools":["echo"]}' "$u: only the granted tool is listed"
	is "$(printf '%s\n' "$out" | sed -n 2p)" '{"isError":false,"text":"echo: hello there"}' "$u: an allowed call reaches the server and answers"
	case $(printf '%s\n' "$out" | sed -n 3p) in *'"isError":true,"text":"denied by policy:'*) r=0 ;; *) r=1 ;; esac
	is "$r" 0 "$u: an argument outside the grant's args scope is denied"
	case $(printf '%s\n' "$out" | sed -n 4p) in *'"isError":true,"text":"denied by policy:'*) r=0 ;; *) r=1 ;; esac
	is "$r" 0 "$u: a tool whose action is not granted is denied"
	is "$(grep -c '"method": "tools/call"' "$D/up.log")" 1 "$u: exactly one call reached the server"
	is "$(grep '"method": "tools/call"' "$D/up.log" | grep -c '"arguments": {"message": "hello there"}, .*"tool": "echo"')" 1 "$u: ... the allowed one: the denied ones never did"
	is "$(grep -c '"auth": "'"$TOKEN"'"' "$D/up.log")" "$(wc -l <"$D/up.log" | tr -d ' ')" "$u: every request carried the secret as Authorization"
	is "$(grep '"method": "initialize"' "$D/up.log" | grep -c '"session": null')" 1 "$u: initialize went without a session id"
	is "$(grep -v '"method": "initialize"' "$D/up.log" | grep -vc '"session": "sess-0123456789".*"version": "2025-06-18"')" 0 "$u: every later request carried Mcp-Session-Id and MCP-Protocol-Version"
	is "$(grep -c '"http": "DELETE", .*"session": "sess-0123456789"' "$D/up.log")" 1 "$u: DELETE ended the session"
	nok "$u: the secret is in no answer to the client" sh -c 'printf "%s" "$1" | grep -qF "tok-6100"' - "$out"
	nok "$u: ... nor on stderr" grep -qF "tok-6100" "$D/stderr"
	logs >"$D/log.txt"
	nok "$u: ... nor in any record" grep -qF "tok-6100" "$D/log.txt"
	is "$(grep -c '"kind":"egress".*"target":"127.0.0.1:'"$port"'","decision":"allow"' "$D/log.txt")" "$(grep -c '"kind":"egress"' "$D/log.txt")" "$u: the egress records are allows to the url's address"
	ok "$u: ... the decision and each connection are recorded" test "$(grep -c '"kind":"egress"' "$D/log.txt")" -ge 2
	is "$(grep -c '"kind":"mcp.call"' "$D/log.txt")" 3 "$u: every call is an mcp.call record"
	# A server that sends the credential back: it never reaches the agent.
	out=$(mcp '[{"op":"call","name":"echo","args":{"message":"hello reflect"}}]')
	is "$out" '{"isError":false,"text":"header [withheld] token [withheld]"}' "$u: a credential the server sends back is withheld from the agent"
	ok "$u: ... and recorded" sh -c "$RUN_AS env CORDON_AUDIT=$D/st/audit.db $CORDON log show 2>/dev/null | grep -q '\"kind\":\"mcp.protocol\".*held the upstream credential'"
	ok "$u: the audit log verifies" gw "$CORDON" log verify
	stop_upstream
	cd "$T" || return
}
for_each_user case_user

done_testing
