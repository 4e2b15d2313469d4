#!/bin/sh
# 4107-store-forged-proposals.sh — a proposal's row is bound to the host
# that made it (session 9's attacker, S4): with a shared PostgreSQL store
# any host's writer role could repoint a pending proposal's tree (or its
# layer), and the approver's `proposals apply` wrote the agent's
# authorized_keys into another directory.  The row now carries an HMAC
# under the proposing host's proposal.key over what apply acts on.
# Forged as another host's writer role: tree repointed, upper repointed, a
# file's path renamed -> show and apply refuse, nothing written anywhere;
# control: an untouched proposal applies.
: "${CORDON_TEST_TIMEOUT:=240}"
export CORDON_TEST_TIMEOUT
. "${CORDON_SRC:-.}/tests/lib.sh"
. "$CORDON_SRC/tests/helpers/pg-start.sh"

pg_start || { done_testing; exit; }
pg_two_hosts
export CORDON_STATE="$B_URI"
mkdir -p "$T/ws" "$T/victim" && cd "$T/ws" && echo hello >notes.txt
propose() {
	"$CORDON" run --propose --agent coder --task t -- sh -c 'echo "ssh-ed25519 AAAA attacker" > authorized_keys' >/dev/null 2>&1
	forge "SELECT id FROM proposals WHERE status = 'pending' ORDER BY seq DESC LIMIT 1"
}
refused() { # ID LABEL
	"$CORDON" proposals show "$1" >"$T/show" 2>&1
	rc=$?
	if [ "$rc" -ne 0 ] && grep -q "MAC does not verify" "$T/show"; then ok "$2: show refuses it" true
	else nok "$2: show refuses it (rc=$rc: $(head -3 "$T/show"))" true; fi
	"$CORDON" proposals apply "$1" --as alice >"$T/apply" 2>&1
	rc=$?
	if [ "$rc" -ne 0 ] && grep -q "MAC does not verify" "$T/apply"; then ok "$2: apply refuses it" true
	else nok "$2: apply refuses it (rc=$rc: $(tail -2 "$T/apply"))" true; fi
	is "$(ls -A "$T/victim") $(ls -A "$T/ws")" " notes.txt" "$2: nothing was written into either tree"
	is "$(forge "SELECT status FROM proposals WHERE id = '$1'")" pending "$2: the proposal stays pending"
}
id=$(propose)
case $id in pr-*) ok "a proposing run on host B over the shared store ($id)" true ;; *) nok "a proposing run ($id)" true ;; esac
is "$(forge "SELECT length(mac) FROM proposals WHERE id = '$id'")" 64 "its row carries a 64-hex MAC"
forge "UPDATE proposals SET tree = '$T/victim' WHERE id = '$id'"
refused "$id" "tree repointed by host A"
forge "UPDATE proposals SET tree = '$T/ws', upper = '$T/victim' WHERE id = '$id'"
refused "$id" "upper repointed by host A"
id2=$(propose)
forge "UPDATE proposal_files SET path = convert_to('.bashrc', 'UTF8') WHERE proposal = '$id2'"
refused "$id2" "a file renamed by host A"
forge "UPDATE proposals SET status = 'rejected' WHERE id IN ('$id', '$id2')"
id3=$(propose)
"$CORDON" proposals apply "$id3" --as alice >"$T/apply" 2>&1
is "$?" 0 "control: an untouched proposal applies ($(tail -1 "$T/apply"))"
is "$(cat authorized_keys 2>/dev/null)" "ssh-ed25519 AAAA attacker" "... into its own tree"
done_testing
