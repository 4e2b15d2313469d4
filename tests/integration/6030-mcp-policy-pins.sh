#!/bin/sh
# Tool definitions pinned in the policy file (tools[].pins: {TOOL: SHA256},
# issue 8): a pinned definition is approved by the file without 'cordon
# mcp pins approve'; any other definition of that tool is blocked, whatever
# the state database says.
. "${CORDON_SRC:-.}/tests/lib.sh"
. "$CORDON_SRC/tests/mcp/setup.sh"

if ! mcp_setup; then
	skip "cannot install the MCP SDK and servers (npm ci)"
	done_testing
fi
D=$T/p
mkdir -p "$D/data" "$D/work"
echo hello >"$D/data/hello.txt"
policy() { # $1: the pins mapping
	cat <<EOP
version: 1
agents: [{id: coder, owner: ops}]
tools:
  - {id: fs, kind: mcp, operations: {read_text_file: read, list_directory: read}, args: {path: path}, pins: $1}
profiles:
  fs-server: {timeout: 1h, ro: [$D/data, $MCP_CACHE]}
grants:
  - {id: fs-launch, agent: coder, tool: fs, actions: [execute], scope: {argv: [node, $MCP_FS_JS]}, profile: fs-server, owner: ops, justification: t, review_by: 2030-01-01, expires: 2030-01-01}
  - {id: fs-read, agent: coder, tool: fs, actions: [read], scope: {paths: [$D/data/**]}, owner: ops, justification: t, review_by: 2030-01-01, expires: 2030-01-01}
EOP
}
cd "$D/work" || exit 1
run() { MCP_OPS="$1" node "$MCP_CLIENT" "$CORDON" mcp --policy "$D/policy.yaml" --agent coder --server fs -- node "$MCP_FS_JS" "$D/data" 2>/dev/null; }
R='{"op":"call","name":"read_text_file","args":{"path":"'"$D"'/data/hello.txt"}}'
policy "{}" >"$D/policy.yaml"
run '[{"op":"list"}]' >/dev/null
sha=$("$CORDON" mcp pins list --server fs --json | python3 -c '
import json, sys
print([r["sha256"] for r in json.load(sys.stdin) if r["tool"] == "read_text_file"][0])')
is "${#sha}" 64 "the server's definition of read_text_file is known ($sha)"
policy "{read_text_file: $sha}" >"$D/policy.yaml"
out=$(run "[{\"op\":\"list\"},$R]")
is "$(printf '%s\n' "$out" | sed -n 1p)" '{"tools":["read_text_file"]}' "a tool pinned in the policy is shown without 'pins approve'; the unpinned one is not"
is "$(printf '%s\n' "$out" | sed -n 2p)" '{"isError":false,"text":"hello\n"}' "... and its calls work"
"$CORDON" mcp pins approve --server fs --all >/dev/null
policy "{read_text_file: $(printf '%064d' 0)}" >"$D/policy.yaml"
out=$(run "[{\"op\":\"list\"},$R]")
is "$(printf '%s\n' "$out" | sed -n 1p)" '{"tools":["list_directory"]}' "a pin for another definition blocks the tool even when the state database approved it"
case $(printf '%s\n' "$out" | sed -n 2p) in *'"isError":true'*) r=0 ;; *) r=1 ;; esac
is "$r" 0 "... and its calls are refused"
# --server may be left out when the policy names one MCP server.
policy "{read_text_file: $sha}" >"$D/policy.yaml"
out=$(MCP_OPS="[$R]" node "$MCP_CLIENT" "$CORDON" mcp --policy "$D/policy.yaml" --agent coder -- node "$MCP_FS_JS" "$D/data" 2>"$D/err")
is "$out" '{"isError":false,"text":"hello\n"}' "without --server: the policy's one MCP server (fs)"
sed 's/^tools:$/tools:\n  - {id: other, kind: mcp, operations: {x: read}}/' "$D/policy.yaml" >"$D/two.yaml"
"$CORDON" mcp --policy "$D/two.yaml" --agent coder -- node "$MCP_FS_JS" "$D/data" </dev/null >/dev/null 2>"$D/err"
is "$?" 125 "... a policy naming two MCP servers needs --server"
ok "... saying so" grep -q 'several MCP servers' "$D/err"
# A launch grant that masks would hold every answer until the session
# ends: refused, pointing at the tools' grants.
policy "{}" | sed 's/^  - {id: fs-launch, \(.*\)profile: fs-server,/  - {id: fs-launch, \1profile: fs-server, mask: [email],/' >"$D/masked.yaml"
grep -q 'mask: \[email\]' "$D/masked.yaml"
is "$?" 0 "(a launch grant with mask:)"
"$CORDON" mcp --policy "$D/masked.yaml" --agent coder -- node "$MCP_FS_JS" "$D/data" </dev/null >/dev/null 2>"$D/err"
is "$?" 125 "a launch grant that masks output is refused"
ok "... saying where masking belongs" grep -q 'grants of its tools' "$D/err"
policy "{read_text_file: NOTHEX}" >"$D/policy.yaml"
nok "a malformed pin is a load error" "$CORDON" policy lint "$D/policy.yaml"
done_testing
