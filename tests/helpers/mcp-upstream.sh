# mcp-upstream.sh — the remote MCP server of the url: tests (6100, 6101,
# 6102, 6110, 6114), sourced after tests/lib.sh:
#   start_upstream DIR MODE  tests/mcp/http-upstream.py in MODE on an
#                     ephemeral loopback port: what reaches it in DIR/up.log,
#                     its stderr in DIR/up.err; waits up to 30 s for its
#                     port, in $port (empty if it did not start); pid up_pid
#   stop_upstream     ends it (also on exit)
#   upstream_policy DIR URL  DIR/policy.yaml: agent coder, the mcp tool up
#                     at URL (secret UP_TOKEN; echo: read, wipe: delete),
#                     granted read when the message starts with hello
# A test that starts more than the upstream sets its own trap (calling
# stop_upstream too).
up_pid=""
start_upstream() {
	rm -f "$1/up.log" "$1/up.log.port"
	python3 "$CORDON_SRC/tests/mcp/http-upstream.py" 0 "$2" "$1/up.log" 2>"$1/up.err" &
	up_pid=$!
	_i=0
	while [ ! -s "$1/up.log.port" ] && [ $_i -lt 300 ]; do sleep 0.1; _i=$((_i + 1)); done
	port=$(cat "$1/up.log.port" 2>/dev/null)
}
stop_upstream() {
	[ -n "$up_pid" ] && kill "$up_pid" 2>/dev/null
	wait "$up_pid" 2>/dev/null
	up_pid=""
}
trap 'stop_upstream; _tap_cleanup' EXIT

upstream_policy() {
	cat >"$1/policy.yaml" <<EOP
version: 1
agents: [{id: coder, owner: ops}]
tools:
  - id: up
    kind: mcp
    url: $2
    secret: UP_TOKEN
    operations: {echo: read, wipe: delete}
    args: {message: value}
grants:
  - {id: g-echo, agent: coder, tool: up, actions: [read], scope: {args: {message: {prefix: hello}}}, owner: ops, justification: t, review_by: 2030-01-01, expires: 2030-01-01}
EOP
}
