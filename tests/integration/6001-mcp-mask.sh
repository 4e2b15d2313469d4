#!/bin/sh
# Data minimization through cordon mcp with the real SDK client and the
# reference filesystem server: a file holding e-mail addresses, a card
# number and an API token comes back masked as the grant says (keyed
# pseudonyms for addresses, stable across calls and sessions; the card and
# the token redacted); the raw values never reach the client; the key is
# created private on first use; a grant with require_task denies calls
# without a task; the audit log records the results as minimized.  As root
# and as nobody.
. "${CORDON_SRC:-.}/tests/lib.sh"
. "$CORDON_SRC/tests/mcp/setup.sh"

if ! mcp_setup; then
	skip "cannot install the MCP SDK and servers (npm ci)"
	done_testing
fi

case_user() {
	u=$1
	D=$T/mask-$u
	mkdir -p "$D/data/crm" "$D/work" "$D/conf" "$T/.state-$u"
	printf 'name: Alice\nemail: alice@example.com\ncard: 4111 1111 1111 1111\nkey: ghp_aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789\n' >"$D/data/crm/alice.txt"
	printf 'contact ALICE@example.com or bob@example.org\n' >"$D/data/crm/notes.txt"
	[ "$u" = nobody ] && chown -R 65534:65534 "$D" "$T/.state-$u"
	cat >"$D/policy.yaml" <<EOP
version: 1
agents: [{id: support, owner: ops}]
tools:
  - id: fs
    kind: mcp
    operations: {read_text_file: read, list_directory: read}
    args: {path: path, head: value, tail: value}
profiles:
  fs-server: {timeout: 1h, output_limit: 1G, ro: [$MCP_CACHE, $D/data]}
grants:
  - {id: fs-launch, agent: support, tool: fs, actions: [execute], scope: {argv: [node, $MCP_FS_JS]}, profile: fs-server, owner: ops, justification: t, review_by: 2030-01-01, expires: 2030-01-01}
  - id: crm-read
    agent: support
    tool: fs
    actions: [read]
    scope: {paths: [$D/data/crm/**]}
    mask: {email: pseudonymize, card: redact, secret: redact}
    require_task: true
    owner: ops
    justification: support tickets read customer files
    review_by: 2030-01-01
    expires: 2030-01-01
EOP
	export CORDON_STATE="$T/.state-$u/state.db"
	KEY=$D/conf/cordon/mask.key
	cd "$D/work" || return
	gw() { $RUN_AS env CORDON_STATE="$CORDON_STATE" CORDON_MASK_KEY="$KEY" "$@"; }
	mcp() { gw env MCP_OPS="$1" node "$MCP_CLIENT" "$CORDON" mcp --policy "$D/policy.yaml" --agent support $2 --server fs -- node "$MCP_FS_JS" "$D/data" 2>"$D/stderr"; }
	mcp '[{"op":"list"}]' "--task TICKET-0" >/dev/null
	ok "$u: pins approve --all" gw "$CORDON" mcp pins approve --server fs --all

	read_alice='{"op":"call","name":"read_text_file","args":{"path":"'"$D"'/data/crm/alice.txt"}}'
	read_notes='{"op":"call","name":"read_text_file","args":{"path":"'"$D"'/data/crm/notes.txt"}}'
	out=$(mcp "[$read_alice,$read_notes,$read_alice]" "--task TICKET-1")
	printf '%s\n' "$out" >"$D/out1"
	l1=$(sed -n 1p "$D/out1")
	case $l1 in *'"isError":false'*'email: <email:'*'card: <card>'*'key: <secret>'*) r=0 ;; *) r=1 ;; esac
	is "$r" 0 "$u: the file comes back masked"
	[ "$r" -eq 0 ] || diag "got: $l1 $(cat "$D/stderr")"
	nok "$u: ... no raw address, card or token reaches the client" grep -qE 'alice@|4111|ghp_' "$D/out1"
	p1=$(printf '%s' "$l1" | grep -o '<email:[0-9a-f]*>' | head -1)
	p2=$(sed -n 2p "$D/out1" | grep -o '<email:[0-9a-f]*>' | head -1)
	p3=$(sed -n 3p "$D/out1" | grep -o '<email:[0-9a-f]*>' | head -1)
	case $p1 in '<email:'????????'>') r=0 ;; *) r=1 ;; esac
	is "$r" 0 "$u: an address becomes a keyed pseudonym ($p1)"
	is "$p2" "$p1" "$u: the same address (in another case, another file) has the same pseudonym"
	is "$p3" "$p1" "$u: ... and the same in a later call"
	is "$(sed -n 2p "$D/out1" | grep -o '<email:[0-9a-f]*>' | sort -u | wc -l | tr -d ' ')" 2 "$u: another address has another pseudonym"
	is "$(stat -c %a "$KEY" 2>/dev/null)" 600 "$u: the deployment key was created 0600"

	out=$(mcp "[$read_alice]" "--task TICKET-2")
	p4=$(printf '%s' "$out" | grep -o '<email:[0-9a-f]*>' | head -1)
	is "$p4" "$p1" "$u: pseudonyms are stable across sessions"

	out=$(mcp "[$read_alice]" "")
	case $out in *'"isError":true'*'requires a task'*) r=0 ;; *) r=1 ;; esac
	is "$r" 0 "$u: without a task the call is denied (require_task)"
	nok "$u: ... and nothing of the file is shown" sh -c "printf '%s' '$out' | grep -q Alice"

	logs() { $RUN_AS env CORDON_STATE="$CORDON_STATE" "$CORDON" log show 2>/dev/null; }
	is "$(logs | grep '"kind":"mcp.result"' | grep -c 'minimized: ')" 4 "$u: each masked result is recorded as minimized"
	is "$(logs | grep '"kind":"mcp.call"' | grep -c '"task":"TICKET-1"')" 3 "$u: the task is on the call records"
	$RUN_AS env CORDON_STATE="$CORDON_STATE" "$CORDON" log export --format jsonl >"$T/export-$u" 2>&1
	lacks "$u: the audit log holds no raw address" 'alice@example\.com' "$T/export-$u" '"kind":"mcp.result"'

	# Arguments in the log (issue 9 item 5): masked as the grant masks
	# results, each masked value kept as a keyed commitment that only the
	# key's holder can check; no plain hash of them either.
	printf 'hi\n' >"$D/data/crm/carol@example.com"
	[ "$u" = nobody ] && chown 65534:65534 "$D/data/crm/carol@example.com"
	carol_args='{"path":"'"$D"'/data/crm/carol@example.com"}'
	read_carol='{"op":"call","name":"read_text_file","args":'"$carol_args"'}'
	read_dave='{"op":"call","name":"read_text_file","args":{"path":"'"$D"'/data/dave@example.com"}}'
	mcp "[$read_carol,$read_dave]" "--task TICKET-4" >"$D/out4"
	grep -q 'isError":false' "$D/out4"
	is "$?" 0 "$u: a path with an address in it is read"
	gw "$CORDON" log export --format jsonl >"$D/log4" 2>/dev/null
	nok "$u: the log holds neither address from the arguments" grep -qE 'carol@example|dave@example' "$D/log4"
	c4=$(grep '"kind":"mcp.call"' "$D/log4" | grep '"task":"TICKET-4"' | grep '"decision":"allow"')
	case $c4 in *'"arguments":{"path":"'*'<email:'*'"}'*'"attributes":'*'<email:'*) r=0 ;; *) r=1 ;; esac
	is "$r" 0 "$u: the call record keeps the arguments and attributes, masked"
	[ "$r" -eq 0 ] || diag "record: $c4"
	case $c4 in *arguments_sha256*) r=1 ;; *'"hashes":{"arguments":"'*) r=0 ;; *) r=1 ;; esac
	is "$r" 0 "$u: ... the plain argument hash became a keyed commitment"
	d4=$(grep '"kind":"mcp.call"' "$D/log4" | grep '"task":"TICKET-4"' | grep '"decision":"deny"')
	case $d4 in *'"commitments":'*'<email:'*|*'<email:'*'"commitments":'*) r=0 ;; *) r=1 ;; esac
	is "$r" 0 "$u: a refused call's arguments are masked too"
	seq4=$(printf '%s\n' "$c4" | head -1 | sed 's/^{"seq":\([0-9]*\),.*/\1/')
	out=$(gw "$CORDON" log confirm "$seq4" Carol@Example.com)
	is "$?" 0 "$u: log confirm: the key's holder confirms the raw address ($out)"
	case $out in *'email in '*) r=0 ;; *) r=1 ;; esac
	is "$r" 0 "$u: ... naming its type and where it was"
	nok "$u: ... and refutes another" gw "$CORDON" log confirm "$seq4" mallory@example.com
	ok "$u: ... confirms the whole arguments object" gw "$CORDON" log confirm "$seq4" --arguments "$carol_args"
	nok "$u: ... and refutes other arguments" gw "$CORDON" log confirm "$seq4" --arguments '{"path":"/x"}'
	nok "$u: ... without the key nothing can be confirmed" $RUN_AS env CORDON_STATE="$CORDON_STATE" CORDON_MASK_KEY="$D/nokey" "$CORDON" log confirm "$seq4" carol@example.com
	r4=$(grep '"kind":"mcp.result"' "$D/log4" | grep '"task":"TICKET-4"' | head -1)
	case $r4 in *result_sha256*|*stdout_sha256*) r=1 ;; *'"hashes":{'*'"result":"'*) r=0 ;; *) r=1 ;; esac
	is "$r" 0 "$u: a masked result's raw hash is kept only as a commitment"
	ok "$u: the log still verifies" gw "$CORDON" log verify

	# A key others can read is refused: the session does not start.
	chmod 0644 "$KEY"
	out=$(mcp "[$read_alice]" "--task TICKET-3")
	case $out in *'alice@'*) r=1 ;; *) r=0 ;; esac
	is "$r" 0 "$u: with a readable key nothing unmasked is served"
	grep -q 'mode 0600' "$D/stderr"
	is "$?" 0 "$u: ... and cordon says why"
	chmod 0600 "$KEY"
	cd "$T" || return
}

for_each_user case_user
done_testing
