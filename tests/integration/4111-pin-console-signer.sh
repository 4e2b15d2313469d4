#!/bin/sh
# 4111-pin-console-signer.sh — a tool approval signed with a console's key
# counts only while the person it names may approve for the agent (as
# grants do since B4 of session 9's second review): the console's key
# signs for whoever logged in to it, so the person must still be in
# approvers.people and not an agent of the policy.  Over a shared
# PostgreSQL store (signatures required).  Controls: the console-signed
# approval is shown and called while the person is an approver, and again
# once restored; an approval with the person's own pinned key is not
# affected by the console rule.
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
"$CORDON" approvals keygen --key "$T/console.key" >"$T/console.pub" 2>/dev/null
D=$T/p
mkdir -p "$D/data" "$D/work"
echo hello >"$D/data/hello.txt"
mkpol() { # PEOPLE ("": no people list: any person) EXTRA_AGENT
	people=${1:+"people: [$1]"}
	cat >"$D/policy.yaml" <<EOP
version: 1
agents: [{id: coder, owner: ops}$2]
tools:
  - {id: fs, kind: mcp, operations: {read_text_file: read, list_directory: read}, args: {path: path}}
profiles:
  fs-server: {timeout: 1h, ro: [$D/data, $MCP_CACHE]}
approvers:
  ${people:-# no people list}
  consoles: ["$(cat "$T/console.pub")"]
grants:
  - {id: fs-launch, agent: coder, tool: fs, actions: [execute], scope: {argv: [node, $MCP_FS_JS]}, profile: fs-server, owner: ops, justification: t, review_by: 2030-01-01, expires: 2030-01-01}
  - {id: fs-read, agent: coder, tool: fs, actions: [read], scope: {paths: [$D/data/**]}, owner: ops, justification: t, review_by: 2030-01-01, expires: 2030-01-01}
EOP
}
mkpol "$me, alice" ""
cd "$D/work" || exit 1
run() { MCP_OPS="$1" node "$MCP_CLIENT" "$CORDON" mcp --policy "$D/policy.yaml" --agent coder --server fs -- node "$MCP_FS_JS" "$D/data" 2>"$T/err"; }
R='{"op":"call","name":"read_text_file","args":{"path":"'"$D"'/data/hello.txt"}}'
L='{"op":"list"}'
shown() { # LABEL
	out=$(run "[$L,$R]")
	is "$(printf '%s\n' "$out" | sed -n 1p)" '{"tools":["read_text_file"]}' "$1: read_text_file is shown"
	is "$(printf '%s\n' "$out" | sed -n 2p)" '{"isError":false,"text":"hello\n"}' "$1: ... and called"
}
hidden() { # LABEL
	out=$(run "[$L,$R]")
	is "$(printf '%s\n' "$out" | sed -n 1p)" '{"tools":[]}' "$1: read_text_file stays hidden"
	case $(printf '%s\n' "$out" | sed -n 2p) in *'"isError":true'*"not approved"*) ok "$1: ... and its call is refused" true ;;
	*) nok "$1: ... and its call is refused ($(printf '%s\n' "$out" | sed -n 2p))" true ;; esac
	case $(cat "$T/err") in *"read_text_file' is not taken"*"may not approve"*) ok "$1: ... and the gateway says why" true ;;
	*) nok "$1: ... and the gateway says why ($(tail -2 "$T/err"))" true ;; esac
}
run "[$L]" >/dev/null
ok "$me approves read_text_file with the console's key" "$CORDON" mcp pins approve --server fs read_text_file --key "$T/console.key"
is "$(forge "SELECT approved_by, signature LIKE 'ed25519:%' FROM mcp_pins WHERE tool = 'read_text_file' AND state = 'approved'")" "$me|t" "... signed, by $me"
shown "control: $me is an approver"
mkpol "alice" ""
hidden "$me removed from approvers.people"
mkpol "" ""
shown "control: no approvers.people (any person)"
mkpol "" ", {id: $me, owner: ops}"
hidden "no approvers.people, $me declared an agent"
mkpol "$me, alice" ""
shown "control: $me an approver again"
done_testing
