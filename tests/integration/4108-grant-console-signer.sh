#!/bin/sh
# Session 9's second review, B4: a temporary grant signed with a console's
# key (approvers.consoles: it signs for whoever logged in to that console)
# was honoured whatever person it named — one removed from
# approvers.people, or the grantee agent itself.  Now the person a
# break-glass grant names must still be one who may approve for that
# agent, whoever signed.  Local SQLite state (a console key counts there
# too), as root and as nobody; control: the same key signing for alice.
: "${CORDON_TEST_TIMEOUT:=240}"
export CORDON_TEST_TIMEOUT
. "${CORDON_SRC:-.}/tests/lib.sh"

K=$T/keys
mkdir -p "$K" && chmod 0755 "$K"
"$CORDON" approvals keygen --key "$K/console.key" >"$K/console.pub" 2>/dev/null
ok "a console key is made" grep -q '^ed25519:' "$K/console.pub"
P=$T/p.yaml
policy() { # PEOPLE
	cat >"$P" <<YAML
version: 1
agents:
  - {id: coder, owner: alice}
tools:
  - {id: shell, kind: command}
profiles:
  ws: {workspace: write}
approvers:
  people: [$1]
  consoles: ["$(grep '^ed25519:' "$K/console.pub")"]
grants:
  - {id: ls, agent: coder, tool: shell, actions: [execute], scope: {argv: [ls]}, profile: ws, owner: alice, justification: tests, review_by: 2099-01-01, expires: 2099-01-01}
YAML
	chmod 0644 "$P"
}

signer() {
	who=$1
	W=$T/st-$who
	mkdir -p "$W" "$W/ws" && chmod 0777 "$W" "$W/ws" && cd "$W/ws" || exit 1
	E="env CORDON_STATE=$W/state.db"
	# the console's secret key, the caller's own 0600 file
	cp "$K/console.key" "$W/console.key" && chmod 0600 "$W/console.key"
	[ -n "$RUN_AS" ] && chown 65534:65534 "$W/console.key"
	grant() { # BY TICKET
		$RUN_AS $E "$CORDON" grant break-glass --agent coder --tool shell --actions execute \
			--scope argv=rm --ticket "$2" --ttl 10m --by "$1" --key "$W/console.key" 2>"$T/gerr-$who" | cut -f1
	}
	try() { # LABEL EXPECT(0|125)
		touch victim && chmod 0666 victim
		$RUN_AS $E "$CORDON" run --policy "$P" --agent coder -- rm victim >"$T/out-$who" 2>&1
		rc=$?
		if [ "$2" = 0 ]; then
			if [ "$rc" -eq 0 ] && [ ! -e victim ]; then ok "$who: $1" true
			else nok "$who: $1 (rc=$rc: $(tail -2 "$T/out-$who"))" true; fi
		elif [ "$rc" -eq 125 ] && [ -e victim ]; then ok "$who: $1" true
		else nok "$who: $1 (rc=$rc victim=$(test -e victim && echo present || echo gone))" true; fi
	}
	revoke_all() { for g in $($RUN_AS $E "$CORDON" grant list 2>/dev/null | cut -f1); do $RUN_AS $E "$CORDON" grant revoke "$g" >/dev/null 2>&1; done; }
	policy "alice, carol"
	id=$(grant alice INC-1)
	case $id in bg-*) ok "$who: a console-signed grant by alice is made" true ;; *) nok "$who: a console-signed grant by alice is made" true ;; esac
	try "control: alice's console-signed grant lets rm run" 0
	revoke_all
	id=$(grant coder INC-2)
	try "a console-signed grant naming the grantee agent itself as 'by' is left out" 125
	grep -q "may not grant it" "$T/out-$who" && ok "$who: ... and the run says why" true ||
		nok "$who: ... and the run says why ($(cat "$T/out-$who"))" true
	revoke_all
	id=$(grant carol INC-3)
	try "control: carol's console-signed grant works while carol is an approver" 0
	revoke_all
	id=$(grant carol INC-4)
	policy "alice"
	try "after carol is removed from approvers.people, her console-signed grant is left out" 125
	cd "$T" || exit 1
}
for_each_user signer
done_testing
