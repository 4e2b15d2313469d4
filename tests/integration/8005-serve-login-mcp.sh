#!/bin/sh
# cordon serve (issue 18): `serve login NAME` finds the running console
# through the state database (STATE.console, written at start, removed at
# stop) with no --listen; and a call held by an MCP session (cordon mcp
# with the reference filesystem server) shows on the held-calls page with
# its tool, action and path, and goes through the moment it is approved in
# the console; the server's tool definitions are approved on the MCP
# tools page first (an approver of the policy, Origin and CSRF checked,
# recorded as mcp.pin).  (Root only: the console is the operator's.)
# Slow on a loaded box (each step a process and an HTTP round trip).
CORDON_TEST_TIMEOUT=${CORDON_TEST_TIMEOUT:-300}
. "${CORDON_SRC:-.}/tests/lib.sh"
. "$CORDON_SRC/tests/mcp/setup.sh"
. "$CORDON_SRC/tests/helpers/serve-start.sh"

if ! mcp_setup; then
	skip "cannot install the MCP SDK and servers (npm ci)"
	done_testing
fi
D=$T/m
mkdir -p "$D/data/held" "$D/work" "$T/state"
export CORDON_STATE="$T/state/state.db"
cat >"$D/policy.yaml" <<EOP
version: 1
agents: [{id: coder, owner: ops}]
tools:
  - id: fs
    kind: mcp
    operations: {read_text_file: read, write_file: update}
    args: {path: path, head: value, tail: value, content: value}
profiles:
  fs-server: {timeout: 1h, output_limit: 1G, rw: [$D/data], ro: [$MCP_CACHE]}
approvers:
  people: [alice]
grants:
  - {id: fs-launch, agent: coder, tool: fs, actions: [execute], scope: {argv: [node, $MCP_FS_JS]}, profile: fs-server, owner: ops, justification: t, review_by: 2030-01-01, expires: 2030-01-01}
  - {id: fs-write-held, agent: coder, tool: fs, actions: [update], scope: {paths: [$D/data/held/**]}, approval: human, owner: ops, justification: t, review_by: 2030-01-01, expires: 2030-01-01}
EOP
P="$D/policy.yaml"
cd "$D/work" || exit 1

out=$("$CORDON" serve login alice --policy "$P" 2>&1)
is "$?" 125 "serve login without a running console and without --listen fails"
case $out in *"no console is serving this state database"*--listen*) ok "... saying so, and how to fix it" true ;;
*) nok "... saying so, and how to fix it ($out)" true ;; esac

trap 'stop_bg $serve_pid $cpid; _tap_cleanup' EXIT
serve_start --listen 127.0.0.1:0 --policy "$P"
ok "serve starts ($origin)" test -n "$origin"
i=0
while [ ! -s "$CORDON_STATE.console" ] && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
is "$(sed -n 1p "$CORDON_STATE.console")" "$origin" \
	"... and leaves its origin beside the state database"
is "$(stat -c %a "$CORDON_STATE.console")" 600 "... readable by its owner only"
al=$("$CORDON" serve login alice --policy "$P")
is "$?" 0 "serve login alice, no --listen: finds the console"
is "${al%%/login*}" "$origin" "... the link is for the running console's origin"
nok "serve login still refuses a name the policy does not list" "$CORDON" serve login mallory --policy "$P"

sess=$(login "$al")
ok "alice logs in with that link" test -n "$sess"

# The MCP session: pins approved, then a write that needs a person.
env MCP_OPS='[{"op":"list"}]' node "$MCP_CLIENT" "$CORDON" mcp --policy "$P" --agent coder --server fs -- node "$MCP_FS_JS" "$D/data" >/dev/null 2>&1
# The definitions the server showed wait for a person: approved on the
# console's MCP tools page, as `cordon mcp pins approve` approves them.
isb "$(code -H "Cookie: $sess" "$origin/pins")" 200 "the MCP tools page"
python3 - "$T/body" >"$T/pins" <<'PY'
import html, re, sys
b = open(sys.argv[1]).read()
for f in re.findall(r'<form class="decide" method="post" action="/pins">(.*?)</form>', b):
    v = dict(re.findall(r'name="(\w+)" value="([^"]*)"', f))
    print(html.unescape(v['tool']), v['sha256'])
PY
ok "... lists the pending definitions of fs ($(cut -d' ' -f1 "$T/pins" | tr '\n' ' '))" \
	sh -c "grep -q '^write_file [0-9a-f]\{64\}$' '$T/pins' && grep -q '^read_text_file ' '$T/pins'"
csrf=$(csrf_in_body)
wsha=$(sed -n 's/^write_file //p' "$T/pins")
isb "$(code -X POST -H "Cookie: $sess" -H "Origin: http://evil.example" \
	--data "csrf=$csrf&server=fs&tool=write_file&sha256=$wsha" "$origin/pins")" 403 \
	"an approval from another Origin is refused"
isb "$(code -X POST -H "Cookie: $sess" -H "Origin: $origin" \
	--data "csrf=$csrf&server=fs&tool=write_file&sha256=abc" "$origin/pins")" 400 \
	"an approval without a full SHA-256 is refused"
op=$(head -1 "$T/link")
osess=$(login "$op")
code -H "Cookie: $osess" "$origin/pins" >/dev/null
ocsrf=$(csrf_in_body)
isb "$(code -X POST -H "Cookie: $osess" -H "Origin: $origin" \
	--data "csrf=$ocsrf&server=fs&tool=write_file&sha256=$wsha" "$origin/pins")" 403 \
	"the operator, not in approvers.people, may not approve a definition"
"$CORDON" mcp pins list --server fs 2>/dev/null | grep write_file | grep -q pending
is "$?" 0 "... write_file stays pending"
n=0
while read -r tool sha; do
	[ "$(code -X POST -H "Cookie: $sess" -H "Origin: $origin" \
		--data "csrf=$csrf&server=fs&tool=$tool&sha256=$sha" "$origin/pins")" = 303 ] && n=$((n + 1))
done <"$T/pins"
is "$n" "$(wc -l <"$T/pins")" "alice approves each definition"
"$CORDON" mcp pins list --server fs 2>/dev/null | grep -c pending | grep -qx 0
is "$?" 0 "... none is pending any more"
"$CORDON" log export --format jsonl | grep '"kind":"mcp.pin"' | grep '"decision":"approved"' |
	grep '"agent":"alice"' | grep -q '"tool":"fs/write_file"'
is "$?" 0 "... each recorded as mcp.pin, approved, naming alice"
env MCP_OPS='[{"op":"call","name":"write_file","args":{"path":"'"$D"'/data/held/a.txt","content":"A"}}]' \
	node "$MCP_CLIENT" "$CORDON" mcp --policy "$P" --agent coder --server fs -- node "$MCP_FS_JS" "$D/data" \
	>"$D/held.out" 2>"$D/held.err" &
cpid=$!
id=""
i=0
while [ -z "$id" ] && [ $i -lt 150 ]; do
	sleep 0.1
	i=$((i + 1))
	code -H "Cookie: $sess" "$origin/" >/dev/null
	id=$(sed -n 's/.*<article class="call" data-id="\(ap-[0-9a-f]*\)".*/\1/p' "$T/body" | head -1)
done
ok "the MCP session's held call is on the page ($id)" test -n "$id"
grep -q '<dd class="tool">fs/write_file</dd>' "$T/body"
is "$?" 0 "... its tool"
grep -q '<dd class="action">update</dd>' "$T/body"
is "$?" 0 "... its action"
grep -q "held/a.txt" "$T/body"
is "$?" 0 "... and its path"
nok "... the file is not written while it waits" test -e "$D/data/held/a.txt"
csrf=$(csrf_in_body)
isb "$(code -X POST -H "Cookie: $sess" -H "Origin: $origin" --data "csrf=$csrf&decision=approve&comment=mcp+ok" \
	"$origin/calls/$id")" 303 "alice approves it in the console"
wait $cpid
is "$(cut -c1-16 "$D/held.out")" '{"isError":false' "... the MCP call goes through"
is "$(cat "$D/data/held/a.txt" 2>/dev/null)" A "... and writes its file"

serve_stop
nok "a stopped console removes its file" test -e "$CORDON_STATE.console"

# A file someone else left there (a state directory others may write):
# never trusted, or the printed link would be a working login for the
# planter's server.  Positive control: this user's own 0600 file.
planted() { # planted OWNER MODE: a file naming the planter's server, pid alive
	printf 'http://127.0.0.1:9\n%s\n' $$ >"$CORDON_STATE.console"
	chown "$1" "$CORDON_STATE.console"
	chmod "$2" "$CORDON_STATE.console"
	"$CORDON" serve login alice --policy "$P" 2>&1
}
out=$(planted 65534:65534 600)
case $out in *"not this user's own 0600 file: not trusted"*) ok "another user's STATE.console is refused" true ;;
*) nok "another user's STATE.console is refused ($out)" true ;; esac
out=$(planted 0:0 644)
case $out in *"not trusted"*) ok "a STATE.console others may read is refused" true ;;
*) nok "a STATE.console others may read is refused ($out)" true ;; esac
rm -f "$CORDON_STATE.console"
printf 'http://127.0.0.1:9\n%s\n' $$ >"$T/elsewhere"
chmod 600 "$T/elsewhere"
ln -s "$T/elsewhere" "$CORDON_STATE.console"
out=$("$CORDON" serve login alice --policy "$P" 2>&1)
case $out in *"no console is serving"*) ok "a symlinked STATE.console is not followed" true ;;
*) nok "a symlinked STATE.console is not followed ($out)" true ;; esac
rm -f "$CORDON_STATE.console"
out=$(planted 0:0 600)
case $out in "http://127.0.0.1:9/login?t="*) ok "control: this user's own 0600 file is used" true ;;
*) nok "control: this user's own 0600 file is used ($out)" true ;; esac
rm -f "$CORDON_STATE.console"
done_testing
