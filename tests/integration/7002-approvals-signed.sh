#!/bin/sh
# 7002-approvals-signed.sh — approver-signed decisions (issue 19): a writer
# of the state (with a shared PostgreSQL store: any host's writer role) can
# write an answer in an approver's name; the waiting run takes it only when
# it is signed with the key its own policy pins for that name.  Forged in
# the store with the writer role: unsigned, signed with another key,
# a signature replayed from another approval, a signature over another
# call's hash -> each refused (exit 125, the reason on stderr, an
# approval.refused record); signed properly -> it runs.  An approver
# without a key: never through the shared store; on a local SQLite state
# (the default) as before.  Root and uid 65534.
: "${CORDON_TEST_TIMEOUT:=240}"
export CORDON_TEST_TIMEOUT
. "${CORDON_SRC:-.}/tests/lib.sh"
. "$CORDON_SRC/tests/helpers/pg-start.sh"

pg_start || { done_testing; exit; }
ok "the owner's first connection makes the schema" env PGPASSWORD="$PG_ADMIN_PW" \
	"$CORDON" log verify --audit "postgresql://cordon_admin@/cordon?host=$PG_SOCK"
pg_sql "$(cat "$CORDON_SRC/docs/postgresql-roles.sql")
CREATE ROLE host_a LOGIN PASSWORD 'pw-a' IN ROLE cordon_writer;" ||
	nok "the roles of docs/postgresql-roles.sql are made" false
PGURI="postgresql://host_a@/cordon?host=$PG_SOCK"
# What the compromised host does: SQL with its writer role.
forge() { env PGPASSWORD=pw-a psql -X -v ON_ERROR_STOP=1 -qAt -h "$PG_SOCK" -U host_a -d cordon -c "$1"; }

# sig ID: the signature column of request ID.
sig() { forge "SELECT coalesce(signature, '') FROM approvals WHERE id = '$1'"; }

signed() {
	who=$1
	K="$T/k-$who"
	W="$T/w-$who"
	mkdir -p "$K" "$W" && chmod 0777 "$K" "$W" && cd "$W" || exit 1
	for n in alice mallory; do
		$RUN_AS "$CORDON" approvals keygen --key "$K/$n.key" >"$K/$n.pub" 2>/dev/null
	done
	is "$(stat -c %a "$K/alice.key")" 600 "$who: keygen writes the secret key 0600"
	case $(cat "$K/alice.pub") in ed25519:*) ok "$who: ... and prints the public key" true ;;
	*) nok "$who: ... and prints the public key ($(cat "$K/alice.pub"))" true ;; esac
	cat >"$T/p-$who.yaml" <<-YAML
		version: 1
		agents:
		  - {id: coder, owner: alice}
		tools:
		  - {id: shell, kind: command}
		approvers:
		  people: [alice, carol]
		  keys:
		    alice: "$(cat "$K/alice.pub")"
		profiles:
		  ws: {workspace: write}
		grants:
		  - id: rm
		    profile: ws
		    agent: coder
		    tool: shell
		    actions: [execute]
		    scope: {argv: [rm]}
		    approval: human
		    owner: alice
		    justification: tests
		    review_by: 2099-01-01
		    expires: 2099-01-01
	YAML
	# The forger's own copy names mallory's key as alice's.
	sed "s|$(cat "$K/alice.pub")|$(cat "$K/mallory.pub")|" "$T/p-$who.yaml" >"$T/evil-$who.yaml"
	chmod 0644 "$T/p-$who.yaml" "$T/evil-$who.yaml"
	P="$T/p-$who.yaml"
	PG="env PGPASSWORD=pw-a CORDON_STATE=$PGURI"
	touch v1 v2 v3 v4 v5 v6 v7 && chmod 0666 v1 v2 v3 v4 v5 v6 v7

	# hold FILE: rm FILE held for approval in the background; then
	# id=$(held FILE): its id.
	hold() {
		($RUN_AS $PG "$CORDON" run --policy "$P" --agent coder --approval-timeout 60s -- rm "$1" \
			>"$T/o-$1-$who" 2>&1; echo $? >"$T/rc-$1-$who") &
		bg_pids="$!"
	}
	held() {
		_i=0
		while [ $_i -lt 150 ]; do
			_id=$(forge "SELECT id FROM approvals WHERE status = 'pending' AND args_json LIKE '%\"$1\"%'")
			[ -n "$_id" ] && { echo "$_id"; return 0; }
			sleep 0.1
			_i=$((_i + 1))
		done
		return 1
	}
	# refused_run FILE WHY DESC: the held run ended 125 saying WHY; FILE is still there.
	refused_run() {
		wait $bg_pids
		is "$(cat "$T/rc-$1-$who")" 125 "$who: $3: not used (125)"
		grep -q "$2" "$T/o-$1-$who"
		is "$?" 0 "$who: ... saying why ($(tail -1 "$T/o-$1-$who" | cut -c1-200))"
		[ -e "$1" ]
		is "$?" 0 "$who: ... and nothing ran"
	}

	# Positive control: alice signs with her key, the call runs; the row
	# holds the signature.
	hold v1
	id1=$(held v1)
	[ -n "$id1" ] || diag "no request: $(cat "$T/o-v1-$who")"
	ok "$who: alice approves with her key" $RUN_AS $PG "$CORDON" approvals approve "$id1" \
		--as alice --key "$K/alice.key" --policy "$P"
	wait $bg_pids
	is "$(cat "$T/rc-v1-$who")" 0 "$who: the signed approval is used: the call ran"
	[ ! -e v1 ]
	is "$?" 0 "$who: ... and removed the file"
	case $(sig "$id1") in ed25519:*) ok "$who: the signature is stored with the decision" true ;;
	*) nok "$who: the signature is stored with the decision" true ;; esac

	# Unsigned, in alice's name, written with the writer role.
	hold v2
	id2=$(held v2)
	forge "UPDATE approvals SET status = 'approved', decided_by = 'alice', decided_at = $(date +%s) WHERE id = '$id2'"
	refused_run v2 "not alice's decision: unsigned, but the policy pins a key" "an unsigned answer in alice's name"

	# Signed with another key (cordon itself, fed a policy naming
	# mallory's key as alice's).
	hold v3
	id3=$(held v3)
	refused "$who: cordon will not sign for alice with a key that is not hers" "not the one the policy pins" \
		$RUN_AS $PG "$CORDON" approvals approve "$id3" --as alice --key "$K/mallory.key" --policy "$P"
	ok "$who: ... but a forger's own policy lets it write one" $RUN_AS $PG "$CORDON" approvals approve "$id3" \
		--as alice --key "$K/mallory.key" --policy "$T/evil-$who.yaml"
	refused_run v3 "does not verify with alice's key" "an answer signed with mallory's key"

	# alice's real signature, replayed from request 1 onto request 4: as
	# it was (decided before request 4 existed), then with a time inside
	# request 4's life.  Request 4 is made a second after request 1 was
	# decided (times are in seconds: within the same one, the replayed
	# time lies inside request 4's life, and the signature check, not
	# the lifetime check, refuses it, as it did on a quiet machine).
	sleep 1.1
	hold v4
	id4=$(held v4)
	forge "UPDATE approvals SET (status, decided_by, decided_at, signature) = (SELECT 'approved', decided_by, decided_at, signature FROM approvals WHERE id = '$id1') WHERE id = '$id4'"
	refused_run v4 "decided outside the request's lifetime" "alice's signature replayed from another approval"
	hold v4
	id4=$(held v4)
	forge "UPDATE approvals SET (status, decided_by, decided_at, signature) = (SELECT 'approved', decided_by, (SELECT created FROM approvals WHERE id = '$id4'), signature FROM approvals WHERE id = '$id1') WHERE id = '$id4'"
	refused_run v4 "does not verify with alice's key" "... and with its time moved into the request's life"

	# alice's real signature over another call's hash: the row showed her
	# another hash when she signed, then was put back.
	hold v5
	id5=$(held v5)
	# The waiting run is stopped meanwhile (it would read the row at once).
	runner=$(ps -o pid= --ppid "$bg_pids" | tr -d ' ')
	kill -STOP $runner
	h5=$(forge "SELECT args_sha256 FROM approvals WHERE id = '$id5'")
	forge "UPDATE approvals SET args_sha256 = '$(printf '%064d' 7)' WHERE id = '$id5'"
	$RUN_AS $PG "$CORDON" approvals approve "$id5" --as alice --key "$K/alice.key" --policy "$P" >/dev/null 2>&1
	forge "UPDATE approvals SET args_sha256 = '$h5' WHERE id = '$id5'"
	kill -CONT $runner
	refused_run v5 "does not verify with alice's key" "alice's signature over another call's hash"

	# carol has no key: nothing through the shared store in her name.
	hold v6
	id6=$(held v6)
	refused "$who: carol (no key) cannot approve through the shared store" "must be signed" \
		$RUN_AS $PG "$CORDON" approvals approve "$id6" --as carol --policy "$P"
	forge "UPDATE approvals SET status = 'approved', decided_by = 'carol', decided_at = $(date +%s) WHERE id = '$id6'"
	refused_run v6 "came through a shared store" "an unsigned answer in carol's name (shared store)"

	# A local SQLite state: carol (no key) approves unsigned as before
	# (positive control of the rule); an unsigned answer in alice's name
	# is still refused.
	run_local() {
		($RUN_AS "$CORDON" run --policy "$P" --agent coder --approval-timeout 60s -- rm "$1" \
			>"$T/o-$1-$who" 2>&1; echo $? >"$T/rc-$1-$who") &
		bg_pids="$!"
	}
	local_id() {
		_i=0
		while [ $_i -lt 150 ]; do
			_id=$($RUN_AS "$CORDON" approvals list | awk -v w="\"$1\"" 'index($0, w) {print $1; exit}')
			[ -n "$_id" ] && { echo "$_id"; return 0; }
			sleep 0.1
			_i=$((_i + 1))
		done
	}
	run_local v7
	id7=$(local_id v7)
	[ -n "$id7" ] || diag "no local request: $(cat "$T/o-v7-$who")"
	ok "$who: local state: carol approves unsigned" $RUN_AS "$CORDON" approvals approve "$id7" --as carol --policy "$P"
	wait $bg_pids
	is "$(cat "$T/rc-v7-$who")" 0 "$who: ... and the call ran"
	touch v7 && chmod 0666 v7
	run_local v7
	id8=$(local_id v7)
	state=${CORDON_STATE}
	[ -n "$RUN_AS" ] && state="$S/.state-nobody/state.db"
	sqlite3 "$state" "UPDATE approvals SET status = 'approved', decided_by = 'alice', decided_at = $(date +%s) WHERE id = '$id8'"
	refused_run v7 "unsigned, but the policy pins a key" "local state: an unsigned answer in alice's name"
}
for_each_user signed

n=$(pg_sql "SELECT count(*) FROM approvals WHERE status = 'approved'")
is "$n" 12 "the twelve refused answers were never used (still 'approved' in the store)"

# cordon doctor: a postgresql:// store is connected to and shown without
# its password; --policy names the approvers without a key.
out=$(env CORDON_STATE="postgresql://host_a:pw-a@/cordon?host=$PG_SOCK" "$CORDON" doctor --policy "$T/p-root.yaml" 2>&1)
case $out in *"ok   state "*"shared store, reachable"*) ok "doctor: the shared state store is reachable" true ;;
*) nok "doctor: the shared state store is reachable ($out)" true ;; esac
case $out in *pw-a*) nok "doctor: ... and never prints the password" true ;;
*) ok "doctor: ... and never prints the password" true ;; esac
case $out in *"not writable"*) nok "doctor: ... nor calls a URI not writable" true ;;
*) ok "doctor: ... nor calls a URI not writable" true ;; esac
case $out in *"approver-keys    without a key: carol"*) ok "doctor --policy: warns of carol, who has no key" true ;;
*) nok "doctor --policy: warns of carol, who has no key ($out)" true ;; esac
out=$(env CORDON_STATE="postgresql://host_a:wrong@/cordon?host=$PG_SOCK" "$CORDON" doctor 2>&1)
case $out in *"warn state"*unreachable*) ok "doctor: a wrong password is unreachable (control)" true ;;
*) nok "doctor: a wrong password is unreachable (control) ($out)" true ;; esac
done_testing
