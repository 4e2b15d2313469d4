#!/bin/sh
# cordon mcp with the reference server-everything in its streamableHttp
# mode (the official SDK's server transport: SSE answers, resumable event
# ids, a GET stream) as the remote server, and the official SDK client on
# stdio.  That server listens on every interface, so it runs in a private
# network namespace this test creates (loopback only).  Asserted: only the
# granted tools are listed; an allowed call works; a call the policy
# denies adds no request on the server's side; an argument outside the
# grant's scope is denied; the server dying in the middle of a streamed
# call gives that call an error answer, later calls too, and the session
# still ends cleanly; DELETE ends the server's session.
# Node and Python start slowly on a loaded machine: a longer timeout.
CORDON_TEST_TIMEOUT=${CORDON_TEST_TIMEOUT:-240}
. "${CORDON_SRC:-.}/tests/lib.sh"
. "$CORDON_SRC/tests/mcp/setup.sh"

if ! mcp_setup; then
	skip "cannot install the MCP SDK and servers (npm ci)"
	done_testing
fi
if [ "$(id -u)" -ne 0 ] || ! unshare --net true 2>/dev/null; then
	skip "a private network namespace needs root (unshare --net)"
	done_testing
fi
export CORDON_STATE="$T/state.db" CORDON_AUDIT="$T/audit.db"
cat >"$T/policy.yaml" <<EOP
version: 1
agents: [{id: coder, owner: ops}]
tools:
  - id: every
    kind: mcp
    url: http://127.0.0.1:3901/mcp
    operations: {echo: read, get-sum: read, get-env: read, trigger-long-running-operation: execute}
    args: {message: value, a: value, b: value, duration: value, steps: value}
  - id: old
    kind: mcp
    url: http://127.0.0.1:3902/sse
    operations: {echo: read}
    args: {message: value}
grants:
  - {id: g-read, agent: coder, tool: every, actions: [read], scope: {args: {message: {prefix: hello}}}, owner: ops, justification: t, review_by: 2030-01-01, expires: 2030-01-01}
  - {id: g-old, agent: coder, tool: old, actions: [read], owner: ops, justification: t, review_by: 2030-01-01, expires: 2030-01-01}
  - {id: g-long, agent: coder, tool: every, actions: [execute], owner: ops, justification: t, review_by: 2030-01-01, expires: 2030-01-01}
EOP

# The whole exchange runs inside the namespace; answers go to files.
cat >"$T/inner.sh" <<'EOS'
set -u
ip link set lo up
# listens PORT: something accepts connections on 127.0.0.1:PORT (sh has
# no /dev/tcp: a connect of python's).
listens() { python3 -c 'import socket, sys; socket.create_connection(("127.0.0.1", int(sys.argv[1])), 2).close()' "$1" 2>/dev/null; }
start() {
	PORT=3901 node "$MCP_EVERYTHING_JS" streamableHttp >>"$T/srv.log" 2>&1 &
	SRV=$!
	i=0
	while ! listens 3901 && [ $i -lt 300 ]; do sleep 0.1; i=$((i + 1)); done
}
session() { # NAME OPS
	MCP_OPS="$2" timeout 90 node "$MCP_CLIENT" "$CORDON" mcp --policy "$T/policy.yaml" --agent coder --server "${3:-every}" >"$T/out-$1" 2>"$T/err-$1"
	echo $? >"$T/rc-$1"
	grep -c 'Received MCP POST request' "$T/srv.log" >"$T/posts-$1"
}
start
session pins '[{"op":"list"}]'
"$CORDON" mcp pins approve --server every --all >/dev/null
# The 2024-11-05 transport (HTTP+SSE): server-everything's sse mode.
PORT=3902 node "$MCP_EVERYTHING_JS" sse >"$T/srv-sse.log" 2>&1 &
SSE=$!
i=0
while ! listens 3902 && [ $i -lt 300 ]; do sleep 0.1; i=$((i + 1)); done
session oldpins '[{"op":"list"}]' old
"$CORDON" mcp pins approve --server old --all >/dev/null
session old '[{"op":"list"},{"op":"call","name":"echo","args":{"message":"hello old"}}]' old
kill $SSE
session a '[{"op":"list"},{"op":"call","name":"echo","args":{"message":"hello a"}}]'
session b '[{"op":"list"},{"op":"call","name":"echo","args":{"message":"hello b"}},{"op":"call","name":"get-env","args":{}},{"op":"call","name":"echo","args":{"message":"bye"}}]'
# The server dies two seconds into a ten-second streamed call (its fourth
# POST of the session: initialize, initialized, the gateway's tools/list).
base=$(grep -c 'Received MCP POST request' "$T/srv.log")
(
	i=0
	while [ "$(grep -c 'Received MCP POST request' "$T/srv.log")" -lt $((base + 4)) ] && [ $i -lt 600 ]; do sleep 0.1; i=$((i + 1)); done
	sleep 2
	kill "$SRV"
) &
session drop '[{"op":"call","name":"trigger-long-running-operation","args":{"duration":10,"steps":10}},{"op":"call","name":"echo","args":{"message":"hello after"}}]'
wait
EOS
T=$T CORDON=$CORDON MCP_CLIENT=$MCP_CLIENT MCP_EVERYTHING_JS=$MCP_EVERYTHING_JS \
	CORDON_STATE=$CORDON_STATE CORDON_AUDIT=$CORDON_AUDIT unshare --net sh "$T/inner.sh"

is "$(cat "$T/out-old" | tr '\n' ' ')" '{"tools":["echo"]} {"isError":false,"text":"Echo: hello old"} ' "a 2024-11-05 server (HTTP+SSE) is reached by the fallback, with the same decisions"
ok "... the fallback is recorded" sh -c "\"$CORDON\" log show 2>/dev/null | grep -q 'trying the HTTP+SSE transport'"
is "$(sed -n 1p "$T/out-a")" '{"tools":["echo","get-env","get-sum","trigger-long-running-operation"]}' "only the granted tools of the server's are listed"
is "$(sed -n 2p "$T/out-a")" '{"isError":false,"text":"Echo: hello a"}' "an allowed call works"
is "$(sed -n 2p "$T/out-b")" '{"isError":false,"text":"Echo: hello b"}' "... again in a second session"
case $(sed -n 3p "$T/out-b") in *'"isError":true,"text":"denied by policy:'*) r=0 ;; *) r=1 ;; esac
is "$r" 0 "a call the policy denies is refused (no argument to match the scope)"
case $(sed -n 4p "$T/out-b") in *'"isError":true,"text":"denied by policy:'*) r=0 ;; *) r=1 ;; esac
is "$r" 0 "an argument outside the grant's args scope is denied"
is "$(($(cat "$T/posts-b") - $(cat "$T/posts-a")))" "$(($(cat "$T/posts-a") - $(cat "$T/posts-pins")))" "the denied calls added no request on the server's side (b made as many POSTs as a)"
case $(sed -n 1p "$T/out-drop") in *'"error":"MCP error -32000: upstream:'*) r=0 ;; *) r=1 ;; esac
is "$r" 0 "the server dying in the middle of a streamed call: that call gets an error answer"
case $(sed -n 2p "$T/out-drop") in *'"error":"MCP error -32000: upstream:'*) r=0 ;; *) r=1 ;; esac
is "$r" 0 "... and a later call too"
is "$(cat "$T/rc-drop")" 0 "... and the session still ends cleanly"
"$CORDON" log show >"$T/log.txt" 2>/dev/null
ok "the loss is an mcp.protocol record" grep -q '"kind":"mcp.protocol".*"reason":"the event stream ended before its answer' "$T/log.txt"
is "$(grep -c 'Transport closed for session' "$T/srv.log")" 3 "DELETE ended each finished session on the server (pins, a, b)"
ok "the audit log verifies" "$CORDON" log verify
done_testing
