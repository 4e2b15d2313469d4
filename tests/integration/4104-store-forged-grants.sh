#!/bin/sh
# 4104-store-forged-grants.sh — a temporary grant counts only when signed
# (session 9's attacker, S2): with a shared PostgreSQL store any host's
# writer role can INSERT a temp_grants row; before this, every host's gate
# honoured it (a denied rm ran).  Forged as another host's writer role:
# unsigned and naming an approver with a pinned key, unsigned and naming
# one without, signed with another key, a signed row whose grant was
# rewritten -> each left out (the run denied, one warning naming the row);
# a grant `cordon grant --key` signs with the pinned key -> it runs.  On
# a local SQLite state: an unsigned grant by a person with a pinned key is
# refused at creation and left out at use; by a person without one it
# works (the user's own database), as root and as uid 65534.
: "${CORDON_TEST_TIMEOUT:=240}"
export CORDON_TEST_TIMEOUT
. "${CORDON_SRC:-.}/tests/lib.sh"
. "$CORDON_SRC/tests/helpers/pg-start.sh"

pg_start || { done_testing; exit; }
pg_two_hosts

K=$T/keys
mkdir -p "$K" && chmod 0755 "$K"
for n in alice mallory; do "$CORDON" approvals keygen --key "$K/$n.key" >"$K/$n.pub" 2>/dev/null; done
P=$T/p.yaml
cat >"$P" <<YAML
version: 1
agents:
  - {id: coder, owner: alice}
tools:
  - {id: shell, kind: command}
profiles:
  ws: {workspace: write}
approvers:
  people: [alice, bob]
  keys:
    alice: "$(cat "$K/alice.pub")"
grants:
  - {id: ls, agent: coder, tool: shell, actions: [execute], scope: {argv: [ls]}, profile: ws, owner: alice, justification: tests, review_by: 2099-01-01, expires: 2099-01-01}
YAML
chmod 0644 "$P"
W=$T/ws
mkdir -p "$W" && chmod 0777 "$W" && cd "$W" || exit 1
B="env CORDON_STATE=$B_URI"

# try LABEL: host B's coder runs rm victim; it must be denied.
denied() {
	touch victim
	$B "$CORDON" run --policy "$P" --agent coder -- rm victim >"$T/out" 2>&1
	rc=$?
	if [ "$rc" -eq 125 ] && [ -e victim ]; then ok "$1: denied (rc 125, victim kept)" true
	else nok "$1: denied (rc=$rc victim=$(test -e victim && echo present || echo gone): $(tail -2 "$T/out"))" true; fi
}
row() { # ID BY GRANT_JSON_ARGV [SIGNATURE]
	now=$(date +%s)
	forge "INSERT INTO temp_grants (id, kind, agent, tool, grant_json, ticket, by_whom, created, expires${4:+, signature})
	VALUES ('$1', 'break-glass', 'coder', 'shell',
	'{\"id\": \"$1\", \"agent\": \"coder\", \"tool\": \"shell\", \"actions\": [\"execute\"], \"scope\": {\"argv\": [\"$3\"]}, \"profile\": \"ws\", \"owner\": \"$2\", \"justification\": \"INC-0\", \"review_by\": \"2099-01-01\", \"expires\": \"2099-01-01\"}',
	'INC-0', '$2', $now, $((now + 3600))${4:+, '$4'})"
}
end_all() { forge "UPDATE temp_grants SET ended = 'revoked', ended_at = 1 WHERE ended IS NULL"; }

denied "before: no grant"
ok "host A's writer role inserts a grant row 'by alice' (unsigned)" row bg-forged00000001 alice rm
denied "an unsigned row naming alice (a pinned key)"
case $(cat "$T/out") in *bg-forged00000001*"left out"*"unsigned"*) ok "... and the run says it left that row out, unsigned" true ;;
*) nok "... and the run says it left that row out ($(cat "$T/out"))" true ;; esac
end_all
row bg-forged00000002 bob rm
denied "an unsigned row naming bob (no key) through the shared store"
case $(cat "$T/out") in *bg-forged00000002*"shared store"*) ok "... and says: unsigned through a shared store" true ;;
*) nok "... and says: unsigned through a shared store ($(cat "$T/out"))" true ;; esac
end_all
row bg-forged00000003 alice rm "ed25519:$(head -c 64 /dev/urandom | base64 -w0)"
denied "a row with a random signature"
end_all
# Signed with mallory's key in alice's name (no --policy: nothing checks it at creation).
id=$($B "$CORDON" grant break-glass --agent coder --tool shell --actions execute --scope argv=rm \
	--ticket INC-1 --ttl 10m --by alice --key "$K/mallory.key" 2>/dev/null | cut -f1)
case $id in bg-*) ok "a grant signed with mallory's key in alice's name is stored ($id)" true ;;
*) nok "a grant signed with mallory's key is stored" true ;; esac
denied "a grant signed with another key"
case $(cat "$T/out") in *"$id"*"does not verify with alice's key"*) ok "... and says whose key it fails" true ;;
*) nok "... and says whose key it fails ($(cat "$T/out"))" true ;; esac
end_all
# alice signs a grant for cat; host A rewrites it into rm.
id=$($B "$CORDON" grant break-glass --policy "$P" --agent coder --tool shell --actions execute \
	--scope argv=cat --ticket INC-2 --ttl 10m --by alice --key "$K/alice.key" | cut -f1)
forge "UPDATE temp_grants SET grant_json = replace(grant_json, '\"cat\"', '\"rm\"') WHERE id = '$id'"
is "$(forge "SELECT grant_json LIKE '%\"rm\"%' FROM temp_grants WHERE id = '$id'")" t "host A rewrote alice's signed grant into rm"
denied "a signed grant rewritten"
forge "UPDATE temp_grants SET grant_json = replace(grant_json, '\"rm\"', '\"cat\"'), expires = expires + 86400 WHERE id = '$id'"
out=$($B "$CORDON" run --policy "$P" --agent coder -- cat /dev/null 2>&1)
is "$?" 125 "a signed grant whose expiry was moved is left out too ($out)"
end_all
nok "cordon grant refuses an unsigned grant the gate would not take (shared store, --policy)" \
	$B "$CORDON" grant break-glass --policy "$P" --agent coder --tool shell --actions execute \
	--scope argv=rm --ticket INC-3 --ttl 10m --by bob
# The honest path: alice signs with her pinned key.
touch victim
id=$($B "$CORDON" grant break-glass --policy "$P" --agent coder --tool shell --actions execute \
	--scope argv=rm --ticket INC-4 --ttl 10m --by alice --key "$K/alice.key" | cut -f1)
case $id in bg-*) ok "alice's signed grant is made ($id)" true ;; *) nok "alice's signed grant is made" true ;; esac
$B "$CORDON" run --policy "$P" --agent coder -- rm victim >"$T/out" 2>&1
rc=$?
if [ "$rc" -eq 0 ] && [ ! -e victim ]; then ok "control: alice's signed grant lets rm run on host B" true
else nok "control: alice's signed grant lets rm run (rc=$rc: $(tail -2 "$T/out"))" true; fi
is "$(forge "SELECT signature LIKE 'ed25519:%' FROM temp_grants WHERE id = '$id'")" t "the row carries its signature"
# A revocation stays: the signature cannot cover the end a revoker writes
# later, so the database refuses to clear it (session 9's second review, B1:
# host A's UPDATE ... SET ended = NULL brought a revoked grant back).
$B "$CORDON" grant revoke "$id" >/dev/null 2>&1
denied "alice's signed grant, revoked"
nok "host A's writer role cannot clear the revocation (ended = NULL)" \
	forge "UPDATE temp_grants SET ended = NULL, ended_at = NULL, ended_by = NULL WHERE id = '$id'"
is "$(forge "SELECT ended FROM temp_grants WHERE id = '$id'")" revoked "the row still says revoked"
nok "... nor lower its use count" forge "UPDATE temp_grants SET uses = 0 WHERE id = '$id'"
denied "alice's signed grant, after host A's tries"
# The same for a tool definition's approval (B6): once superseded, a writer
# role cannot make it approved again (its old signature would verify).
forge "INSERT INTO mcp_pins (server, tool, sha256, definition, state, first_seen, last_seen, approved_at, approved_by, signature)
	VALUES ('srv', 'tool9', '$(printf %064d 0)', '{}', 'superseded', 1, 1, 1, 'alice', 'ed25519:AAAA')"
nok "host A's writer role cannot set a superseded tool approval approved again" \
	forge "UPDATE mcp_pins SET state = 'approved' WHERE tool = 'tool9'"
is "$(forge "SELECT state FROM mcp_pins WHERE tool = 'tool9'")" superseded "the pin still says superseded"

# The local SQLite state (the default), as root and as nobody.
local_sqlite() {
	who=$1
	H="$T/h-$who"
	mkdir -p "$H/ws" && chmod 0777 "$H" "$H/ws" && cd "$H/ws" || exit 1
	E="env HOME=$H XDG_STATE_HOME=$H/state XDG_CONFIG_HOME=$H/config"
	nok "$who: sqlite: an unsigned grant by alice (pinned key) is refused at creation" \
		$RUN_AS $E "$CORDON" grant break-glass --policy "$P" --agent coder --tool shell \
		--actions execute --scope argv=rm --ticket INC-5 --ttl 10m --by alice
	$RUN_AS $E "$CORDON" grant break-glass --agent coder --tool shell --actions execute \
		--scope argv=rm --ticket INC-6 --ttl 10m --by alice >/dev/null 2>&1
	$RUN_AS touch victim
	$RUN_AS $E "$CORDON" run --policy "$P" --agent coder -- rm victim >"$T/out-$who" 2>&1
	rc=$?
	if [ "$rc" -eq 125 ] && [ -e victim ] && grep -q "unsigned, but the policy pins a key for 'alice'" "$T/out-$who"; then
		ok "$who: sqlite: ... and one made without --policy is left out at use" true
	else nok "$who: sqlite: ... left out at use (rc=$rc: $(tail -2 "$T/out-$who"))" true; fi
	$RUN_AS $E "$CORDON" grant revoke "$($RUN_AS $E "$CORDON" grant list | cut -f1 | head -1)" >/dev/null 2>&1
	$RUN_AS $E "$CORDON" grant break-glass --policy "$P" --agent coder --tool shell --actions execute \
		--scope argv=rm --ticket INC-7 --ttl 10m --by bob >/dev/null
	$RUN_AS $E "$CORDON" run --policy "$P" --agent coder -- rm victim >"$T/out-$who" 2>&1
	rc=$?
	if [ "$rc" -eq 0 ] && [ ! -e victim ]; then ok "$who: sqlite: bob's unsigned grant (no pinned key) works on the user's own state" true
	else nok "$who: sqlite: bob's unsigned grant works (rc=$rc: $(tail -2 "$T/out-$who"))" true; fi
}
for_each_user local_sqlite
done_testing
