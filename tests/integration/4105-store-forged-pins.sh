#!/bin/sh
# 4105-store-forged-pins.sh — an MCP tool definition counts as approved
# only with its approver's signature (session 9's attacker, S3): with a
# shared PostgreSQL store any host's writer role could UPDATE mcp_pins SET
# state='approved', and the gateway showed and ran a tool no person
# approved (the rug-pull defence off fleet-wide).  Forged as another
# host's writer role: approved unsigned, approved with a signature
# replayed from another tool's approval, approved with another key's
# signature -> the tool stays hidden and its call is refused, with a
# warning; approved by `cordon mcp pins approve --key` with the key the
# policy pins -> shown and called.
: "${CORDON_TEST_TIMEOUT:=300}"
export CORDON_TEST_TIMEOUT
. "${CORDON_SRC:-.}/tests/lib.sh"
. "$CORDON_SRC/tests/helpers/pg-start.sh"
. "$CORDON_SRC/tests/mcp/setup.sh"

if ! mcp_setup; then
	skip "cannot install the MCP SDK and servers (npm ci)"
	done_testing
	exit
fi
pg_start || { done_testing; exit; }
pg_two_hosts
export CORDON_STATE="$B_URI"
me=$(id -un)
for n in me mallory; do "$CORDON" approvals keygen --key "$T/$n.key" >"$T/$n.pub" 2>/dev/null; done
D=$T/p
mkdir -p "$D/data" "$D/work"
echo hello >"$D/data/hello.txt"
cat >"$D/policy.yaml" <<EOP
version: 1
agents: [{id: coder, owner: ops}]
tools:
  - {id: fs, kind: mcp, operations: {read_text_file: read, list_directory: read}, args: {path: path}}
profiles:
  fs-server: {timeout: 1h, ro: [$D/data, $MCP_CACHE]}
approvers:
  people: [$me]
  keys:
    $me: "$(cat "$T/me.pub")"
grants:
  - {id: fs-launch, agent: coder, tool: fs, actions: [execute], scope: {argv: [node, $MCP_FS_JS]}, profile: fs-server, owner: ops, justification: t, review_by: 2030-01-01, expires: 2030-01-01}
  - {id: fs-read, agent: coder, tool: fs, actions: [read], scope: {paths: [$D/data/**]}, owner: ops, justification: t, review_by: 2030-01-01, expires: 2030-01-01}
EOP
cd "$D/work" || exit 1
run() { MCP_OPS="$1" node "$MCP_CLIENT" "$CORDON" mcp --policy "$D/policy.yaml" --agent coder --server fs -- node "$MCP_FS_JS" "$D/data" 2>"$T/err"; }
R='{"op":"call","name":"read_text_file","args":{"path":"'"$D"'/data/hello.txt"}}'
L='{"op":"list"}'
hidden() { # LABEL [SHOWN]: SHOWN the tools that are listed (none by default)
	out=$(run "[$L,$R]")
	is "$(printf '%s\n' "$out" | sed -n 1p)" "{\"tools\":[${2:-}]}" "$1: read_text_file stays hidden"
	case $(printf '%s\n' "$out" | sed -n 2p) in *'"isError":true'*"not approved"*) ok "$1: ... and its call is refused" true ;;
	*) nok "$1: ... and its call is refused ($(printf '%s\n' "$out" | sed -n 2p))" true ;; esac
}
hidden "before: a new definition"
now=$(date +%s)
ok "host A's writer role marks read_text_file approved (unsigned, by $me)" forge \
	"UPDATE mcp_pins SET state = 'approved', approved_by = '$me', approved_at = $now WHERE tool = 'read_text_file'"
hidden "an unsigned approval"
case $(cat "$T/err") in *"read_text_file' is not taken"*unsigned*) ok "... and the gateway warns why" true ;;
*) nok "... and the gateway warns why ($(cat "$T/err"))" true ;; esac
forge "UPDATE mcp_pins SET state = 'pending', approved_by = NULL, approved_at = NULL"
# A real approval of list_directory; its signature replayed onto read_text_file.
"$CORDON" mcp pins approve --server fs list_directory --key "$T/me.key" >/dev/null
forge "UPDATE mcp_pins t SET state = 'approved', approved_by = o.approved_by, approved_at = o.approved_at,
 signature = o.signature FROM mcp_pins o WHERE t.tool = 'read_text_file' AND o.tool = 'list_directory'"
is "$(forge "SELECT signature LIKE 'ed25519:%' FROM mcp_pins WHERE tool = 'read_text_file'")" t "host A copied list_directory's signed approval onto read_text_file"
hidden "a signature replayed from another tool" '"list_directory"'
forge "UPDATE mcp_pins SET state = 'pending', approved_by = NULL, approved_at = NULL, signature = NULL WHERE tool = 'read_text_file'"
"$CORDON" mcp pins approve --server fs read_text_file --key "$T/mallory.key" >/dev/null
hidden "approved with a key the policy does not pin" '"list_directory"'
forge "UPDATE mcp_pins SET state = 'pending', signature = NULL WHERE tool = 'read_text_file'"
# The honest path.
ok "$me approves read_text_file with the pinned key" "$CORDON" mcp pins approve --server fs read_text_file --key "$T/me.key"
out=$(run "[$L,$R]")
is "$(printf '%s\n' "$out" | sed -n 1p)" '{"tools":["list_directory","read_text_file"]}' "control: both signed approvals are shown"
is "$(printf '%s\n' "$out" | sed -n 2p)" '{"isError":false,"text":"hello\n"}' "control: ... and the call works"
# Rug pull: the signed approval's row re-pointed at another definition digest.
forge "UPDATE mcp_pins SET approved_at = approved_at + 1 WHERE tool = 'read_text_file' AND state = 'approved'"
hidden "a signed approval whose time was changed" '"list_directory"'
done_testing
