#!/bin/sh
# Break-glass grants (issue 5): a temporary grant with a ticket and a hard
# TTL cap, checked against the policy at every use, forbid rules still
# winning, logged when granted, used, revoked and expired.
. "${CORDON_SRC:-.}/tests/lib.sh"

cat >"$T/p.yaml" <<'YAML'
version: 1
agents:
  - {id: coder, owner: alice}
tools:
  - {id: shell, kind: command}
  - {id: fs, kind: mcp, args: {path: path}}
break_glass: {max_ttl: 1h}
grants:
  - id: coder-true
    agent: coder
    tool: shell
    actions: [execute]
    scope: {argv: ["true"]}
    owner: alice
    justification: tests
    review_by: 2099-01-01
    expires: 2099-01-01
forbid:
  - {id: no-curl, agent: coder, tool: shell, scope: {argv: [curl]}, reason: no network tools}
YAML
# With the invoking user's store in PostgreSQL (4102), a grant counts only
# when signed (row-sign.h): that user's approver key (the default path in a
# configuration directory of this test's, 0700, which cordon grant signs
# with) is listed as a console key, which signs for any person.  The nobody
# half keeps its SQLite state and cannot see the key: unsigned there.
if [ -n "${CORDON_TEST_PG_URI:-}" ]; then
	export XDG_CONFIG_HOME="$T/cfg"
	pub=$("$CORDON" approvals keygen 2>/dev/null)
	chmod 0700 "$T/cfg"
	printf 'approvers:\n  consoles: ["%s"]\n' "$pub" >>"$T/p.yaml"
fi
chmod 0644 "$T/p.yaml"

kinds() { # the kinds of the records in the log, one per line
	db=${CORDON_AUDIT}
	[ -n "$RUN_AS" ] && db="$S/.state-nobody/audit.db"
	"$CORDON" log export --format jsonl --audit "$db" |
		python3 -c 'import json,sys; [print(json.loads(l)["kind"]) for l in sys.stdin]'
}

bg() {
	who=$1
	mkdir -p "$T/w-$who" && chmod 0755 "$T/w-$who" && cd "$T/w-$who" || exit 1
	P="$T/p.yaml"
	nok "$who: echo is not granted" $RUN_AS "$CORDON" run --policy "$P" --agent coder -- echo hi
	nok "$who: a TTL over the policy's cap is refused" $RUN_AS "$CORDON" grant break-glass \
		--policy "$P" --agent coder --tool shell --actions execute --scope 'argv=echo' \
		--ticket INC-1 --ttl 2h --by bob
	nok "$who: an unknown agent is refused" $RUN_AS "$CORDON" grant break-glass \
		--policy "$P" --agent ghost --tool shell --actions execute --scope 'argv=echo' \
		--ticket INC-1 --ttl 10m --by bob
	nok "$who: a ticket is required" $RUN_AS "$CORDON" grant break-glass \
		--policy "$P" --agent coder --tool shell --actions execute --scope 'argv=echo' \
		--ttl 10m --by bob
	nok "$who: delete without approval is refused" $RUN_AS "$CORDON" grant break-glass \
		--policy "$P" --agent coder --tool fs --actions delete --scope 'path=/x/**' \
		--ticket INC-1 --ttl 10m --by bob
	id=$($RUN_AS "$CORDON" grant break-glass --policy "$P" --agent coder --tool shell \
		--actions execute --scope 'argv=echo' --ticket INC-7 --ttl 10m --by bob | cut -f1)
	case $id in bg-*) ok "$who: break-glass grant made ($id)" true ;;
	*) nok "$who: break-glass grant made" true ;; esac
	out=$($RUN_AS "$CORDON" run --policy "$P" --agent coder -- echo hi 2>&1)
	is "$out" hi "$who: the grant lets echo run"
	nok "$who: the grant is token-exact (echox)" $RUN_AS "$CORDON" run --policy "$P" --agent coder -- echox
	$RUN_AS "$CORDON" grant break-glass --policy "$P" --agent coder --tool shell \
		--actions execute --scope 'argv=curl' --ticket INC-8 --ttl 10m --by bob >/dev/null
	out=$($RUN_AS "$CORDON" run --policy "$P" --agent coder -- curl --version 2>&1)
	is "$?" 125 "$who: a forbid rule beats a break-glass grant"
	case $out in *no-curl*) ok "$who: ... and says which rule" true ;;
	*) nok "$who: ... and says which rule ($out)" true ;; esac
	list=$($RUN_AS "$CORDON" grant list)
	case $list in *"$id"*active*INC-7*bob*"uses 1"*) ok "$who: grant list shows it, its ticket, who and one use" true ;;
	*) nok "$who: grant list shows it ($list)" true ;; esac
	# policy check answers as the run does: with the live temporary grants,
	# naming the one that decided (issue 9); --no-temp reads the file alone.
	out=$($RUN_AS "$CORDON" policy check "$P" --agent coder --tool shell --action execute -- echo hi)
	is "$?" 0 "$who: policy check allows what the break-glass grant allows"
	case $out in "allow grants:$id "*"temporary grant $id: break-glass, ticket INC-7, by bob, expires 20"*) r=0 ;; *) r=1 ;; esac
	is "$r" 0 "$who: ... naming the grant, its ticket, who and its expiry"
	[ "$r" -eq 0 ] || diag "$out"
	out=$($RUN_AS "$CORDON" policy check "$P" --agent coder --tool shell --action execute --json -- echo hi)
	case $out in *'"temp_grants_joined":'[1-9]*'"temp_grants":[{"id":"'"$id"'","kind":"break-glass"'*'"ticket":"INC-7"'*) r=0 ;; *) r=1 ;; esac
	is "$r" 0 "$who: ... and in --json"
	[ "$r" -eq 0 ] || diag "$out"
	out=$($RUN_AS "$CORDON" policy explain "$P" --agent coder --tool shell --action execute -- echo hi)
	case $out in *"grant  $id"*"match "*"decision: allow"*"temporary grant $id"*) r=0 ;; *) r=1 ;; esac
	is "$r" 0 "$who: policy explain lists the temporary grant and the decision"
	out=$($RUN_AS "$CORDON" policy check "$P" --agent coder --tool shell --action execute --no-temp -- echo hi)
	is "$?" 1 "$who: with --no-temp the file alone denies"
	case $out in "deny (no grant for agent 'coder'"*) ok "$who: ... saying so" true ;;
	*) nok "$who: ... saying so ($out)" true ;; esac
	$RUN_AS "$CORDON" policy check "$P" --agent coder --tool shell --action execute -- curl x >/dev/null
	is "$?" 1 "$who: policy check: the forbid rule beats the temporary grant"
	ok "$who: revoke" $RUN_AS "$CORDON" grant revoke "$id" --by carol
	$RUN_AS "$CORDON" policy check "$P" --agent coder --tool shell --action execute -- echo hi >/dev/null
	is "$?" 1 "$who: policy check: a revoked grant no longer allows"
	nok "$who: revoked means gone" $RUN_AS "$CORDON" run --policy "$P" --agent coder -- echo hi
	nok "$who: revoking twice fails" $RUN_AS "$CORDON" grant revoke "$id"
	# Expiry: a 1-second grant is gone after two.
	$RUN_AS "$CORDON" grant break-glass --policy "$P" --agent coder --tool shell \
		--actions execute --scope 'argv=echo' --ticket INC-9 --ttl 1s --by bob >/dev/null
	sleep 2
	$RUN_AS "$CORDON" policy check "$P" --agent coder --tool shell --action execute -- echo hi >/dev/null
	is "$?" 1 "$who: policy check: an expired grant does not allow"
	nok "$who: an expired grant is absent" $RUN_AS "$CORDON" run --policy "$P" --agent coder -- echo hi
	all=$($RUN_AS "$CORDON" grant list --all)
	case $all in *expired*INC-9*) ok "$who: grant list --all shows the expiry" true ;;
	*) nok "$who: grant list --all shows the expiry ($all)" true ;; esac
	k=$(kinds)
	for kind in grant.break-glass grant.revoked grant.expired; do
		case $k in *"$kind"*) ok "$who: $kind is in the audit log" true ;;
		*) nok "$who: $kind is in the audit log" true ;; esac
	done
	db=${CORDON_AUDIT}
	[ -n "$RUN_AS" ] && db="$S/.state-nobody/audit.db"
	used=$("$CORDON" log export --format jsonl --audit "$db" | grep '"kind":"decision"' | grep -c "\"$id\"")
	is "$used" 1 "$who: the one use is a decision record naming the grant"
	ok "$who: the log verifies" "$CORDON" log verify --audit "$db"
	# A policy that drops the tool leaves the stored grant out (a deny).
	$RUN_AS "$CORDON" grant break-glass --policy "$P" --agent coder --tool shell \
		--actions execute --scope 'argv=echo' --ticket INC-10 --ttl 10m --by bob >/dev/null
	sed 's/id: shell, kind: command/id: sh2, kind: command/; s/tool: shell/tool: sh2/g' "$P" >"$T/p2.yaml"
	chmod 0644 "$T/p2.yaml"
	out=$($RUN_AS "$CORDON" run --policy "$T/p2.yaml" --agent coder --tool shell -- echo hi 2>&1)
	is "$?" 125 "$who: a grant the policy in force refuses is left out"
	case $out in *"left out"*) ok "$who: ... with a warning" true ;;
	*) nok "$who: ... with a warning ($out)" true ;; esac
}
for_each_user bg

# `run --state PATH` reads that state database, not $CORDON_STATE: a
# break-glass grant kept in another database decides only runs that name
# it (cordon mcp --state passes it on to the server's launch run).
alt="$T/alt-state"
mkdir -p "$alt" && chmod 0755 "$alt"
mkdir -p "$T/w-alt" && chmod 0755 "$T/w-alt" && cd "$T/w-alt" || exit 1
"$CORDON" grant break-glass --state "$alt/state.db" --policy "$T/p.yaml" --agent coder \
	--tool shell --actions execute --scope 'argv=printf' --ticket INC-9 --ttl 10m --by bob >/dev/null
out=$("$CORDON" run --state "$alt/state.db" --policy "$T/p.yaml" --agent coder -- printf alt 2>&1)
is "$out" alt "run --state: the grant in that state database lets printf run"
out=$("$CORDON" run --policy "$T/p.yaml" --agent coder -- printf alt 2>&1)
is "$?" 125 "without --state the default state database decides: refused"
case $out in *"no grant"* | *denied* | *deny*) r=0 ;; *) r=1 ;; esac
is "$r" 0 "  as a policy denial ($out)"
"$CORDON" run --state '' -- true >"$T/o" 2>&1
is "$?" 125 "run --state '' is refused"

# policy check without a state database decides from the file and creates
# nothing; one that cannot be read is an error (exit 4), never a guess.
out=$(CORDON_STATE="$T/none/state.db" "$CORDON" policy check "$T/p.yaml" --agent coder --tool shell --action execute -- true)
is "$?" 0 "policy check without a state database decides from the file ($out)"
ok "... and creates none" test ! -e "$T/none"
: >"$T/notadir"
out=$("$CORDON" policy check "$T/p.yaml" --state "$T/notadir/state.db" --agent coder --tool shell --action execute -- true 2>&1)
is "$?" 4 "an unreadable state database: exit 4"
case $out in *"--no-temp"*) ok "... pointing at --no-temp" true ;; *) nok "... pointing at --no-temp ($out)" true ;; esac
nok "--no-temp and --state together are a usage error" "$CORDON" policy check "$T/p.yaml" --no-temp \
	--state "$T/x.db" --agent coder --tool shell --action execute -- true

# The state database is outside every sandbox: not readable through a
# read-only view, and a writable view over it refuses the run.
mkdir -p "$T/ws/.cordon"
CORDON_STATE="$T/ws/.cordon/state.db" "$CORDON" grant list >/dev/null
cd "$T/ws" || exit 1
out=$(CORDON_STATE="$T/ws/.cordon/state.db" "$CORDON" run -- ls -A .cordon 2>&1)
is "$out" "" "the state database's directory is empty inside the sandbox"
nok "a writable view of the state database refuses the run" \
	env CORDON_STATE="$T/ws/.cordon/state.db" "$CORDON" run --profile workspace-write -- true
out=$(CORDON_STATE="$T/ws/state.db" "$CORDON" run -- true 2>&1)
is "$?" 125 "a state database directly in the working directory refuses the run"
done_testing
