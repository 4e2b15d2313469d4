#!/bin/sh
# cordon mcp with a remote server (url:): the url is decided as the egress
# proxy decides a destination (a name that resolves to loopback is refused
# and recorded, nothing is sent), and the policy refuses urls that could
# reach elsewhere than written.
. "${CORDON_SRC:-.}/tests/lib.sh"
. "$CORDON_SRC/tests/mcp/setup.sh"
. "$CORDON_SRC/tests/helpers/mcp-upstream.sh"

if ! mcp_setup; then
	skip "cannot install the MCP SDK (npm ci)"
	done_testing
fi
TOKEN="Bearer tok-6100-$$-q7Zx"
chmod 0755 "$T"

# The url is decided as the egress proxy decides: a name that resolves to
# loopback is refused (only an address named outright may be private), and
# the refusal is an egress record; nothing is sent.
D=$T/vet
mkdir -p "$D"
start_upstream "$D" good
upstream_policy "$D" "https://localhost:$port/mcp"
out=$(cd "$D" && env UP_TOKEN=x MCP_OPS='[{"op":"list"}]' node "$MCP_CLIENT" "$CORDON" mcp --policy "$D/policy.yaml" --agent coder 2>"$D/stderr")
case $(cat "$D/stderr") in *localhost*"may not be reached"*loopback*) r=0 ;; *) r=1 ;; esac
is "$r" 0 "a url whose name resolves to loopback is refused"
nok "... and nothing reached the server" test -s "$D/up.log"
is "$("$CORDON" log show 2>/dev/null | grep -c '"kind":"egress".*"target":"localhost:'"$port"'","decision":"deny"')" 1 "... and the refusal is an egress record"
stop_upstream

# The policy refuses what could reach elsewhere than written.
for bad in "http://localhost:1/mcp" "https://user:pw@example.com/mcp" "ftp://example.com/" \
	"https://example.com:0/mcp" "https://exa%6dple.com/mcp" "https://example.com/mcp#x"; do
	upstream_policy "$D" "$bad"
	nok "policy lint refuses url $bad" "$CORDON" policy lint "$D/policy.yaml"
done
upstream_policy "$D" "https://example.com/mcp"
ok "policy lint takes an https url (positive control)" "$CORDON" policy lint "$D/policy.yaml"
done_testing
