#!/bin/sh
# cordon mcp reloads its policy on SIGHUP (THREATS row 37): a file that
# does not load is refused and the last good policy stays in force; a good
# one takes effect for the next call; every load is a policy.load record.
. "${CORDON_SRC:-.}/tests/lib.sh"
. "$CORDON_SRC/tests/mcp/setup.sh"

if ! mcp_setup; then
	skip "cannot install the MCP SDK and servers (npm ci)"
	done_testing
fi
D=$T/r
mkdir -p "$D/data" "$D/work"
echo hello >"$D/data/hello.txt"
policy() { # $1: the read grant's paths
	cat <<EOP
version: 1
agents: [{id: coder, owner: ops}]
tools:
  - {id: fs, kind: mcp, operations: {read_text_file: read}, args: {path: path}}
profiles:
  fs-server: {timeout: 1h, ro: [$D/data, $MCP_CACHE]}
grants:
  - {id: fs-launch, agent: coder, tool: fs, actions: [execute], scope: {argv: [node, $MCP_FS_JS]}, profile: fs-server, owner: ops, justification: t, review_by: 2030-01-01, expires: 2030-01-01}
  - {id: fs-read, agent: coder, tool: fs, actions: [read], scope: {paths: [$1]}, owner: ops, justification: t, review_by: 2030-01-01, expires: 2030-01-01}
EOP
}
policy "$D/data/**" >"$D/policy.yaml"
cd "$D/work" || exit 1
"$CORDON" mcp pins approve --server fs --all >/dev/null 2>&1
calls() { "$CORDON" log export --format jsonl 2>/dev/null | grep -c '"kind":"mcp.call"'; }
waitcalls() {
	i=0
	while [ "$(calls)" -lt "$1" ] && [ $i -lt 300 ]; do sleep 0.1; i=$((i + 1)); done
}
R='{"op":"call","name":"read_text_file","args":{"path":"'"$D"'/data/hello.txt"}'
# First run: learn and approve the pins, then the real session.
MCP_OPS='[{"op":"list"}]' node "$MCP_CLIENT" "$CORDON" mcp --policy "$D/policy.yaml" --agent coder --server fs -- node "$MCP_FS_JS" "$D/data" >/dev/null 2>&1
"$CORDON" mcp pins approve --server fs --all >/dev/null 2>&1
base=$(calls)
loads() { "$CORDON" log export --format jsonl 2>/dev/null | grep -c '"kind":"policy.load"'; }
# Each reload is on the record (policy.load) before the client, waiting
# for a file (not for a time), makes its next call.
reloaded() {
	i=0
	while [ "$(loads)" -lt "$1" ] && [ $i -lt 300 ]; do sleep 0.1; i=$((i + 1)); done
	touch "$2"
}
MCP_OPS="[$R},$R,\"wait_for\":\"$D/go2\"},$R,\"wait_for\":\"$D/go3\"}]" node "$MCP_CLIENT" "$CORDON" mcp --policy "$D/policy.yaml" --agent coder --server fs -- node "$MCP_FS_JS" "$D/data" >"$D/out" 2>"$D/err" &
cpid=$!
waitcalls $((base + 1))
gw=$(pgrep -f "^$CORDON mcp --policy $D/policy.yaml" | head -1)
nloads=$(loads)
echo "grants: [[[" >"$D/policy.yaml"
kill -HUP "$gw"
reloaded $((nloads + 1)) "$D/go2"
waitcalls $((base + 2))
policy "$D/elsewhere/**" >"$D/policy.yaml"
kill -HUP "$gw"
reloaded $((nloads + 2)) "$D/go3"
wait "$cpid"
is "$(sed -n 1p "$D/out")" '{"isError":false,"text":"hello\n"}' "the first call is allowed"
is "$(sed -n 2p "$D/out")" '{"isError":false,"text":"hello\n"}' "after a broken reload the last good policy still decides"
case $(sed -n 3p "$D/out") in *'"isError":true'*"denied by policy"*) r=0 ;; *) r=1 ;; esac
is "$r" 0 "after a good reload the narrowed grant decides"
case $(cat "$D/err") in *"policy reload refused, the last good policy stays"*) r=0 ;; *) r=1 ;; esac
is "$r" 0 "the refused reload is reported on stderr"
loads=$("$CORDON" log export --format jsonl | grep '"kind":"policy.load"' | python3 -c '
import json, sys
print(" ".join(json.loads(l)["decision"] for l in sys.stdin))')
case $loads in *"allow deny allow") ok "every load is a policy.load record ($loads)" true ;;
*) nok "every load is a policy.load record ($loads)" true ;; esac
done_testing
