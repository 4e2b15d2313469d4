#!/bin/sh
# Delegation (issue 5): a sub-agent gets part of what its parent holds and
# nothing more; parent forbid rules and approvals reach it; it cannot
# outlive the parent; removing the parent's grant removes the child's.
. "${CORDON_SRC:-.}/tests/lib.sh"

cat >"$T/p.yaml" <<'YAML'
version: 1
agents:
  - {id: lead, owner: alice}
  - {id: other, owner: alice}
tools:
  - {id: shell, kind: command}
  - {id: fs, kind: mcp, args: {path: path}}
grants:
  - id: lead-tools
    agent: lead
    tool: shell
    actions: [execute]
    scope: {argv: [echo]}
    owner: alice
    justification: tests
    review_by: 2099-01-01
    expires: 2099-01-01
  - id: lead-rm
    agent: lead
    tool: shell
    actions: [execute]
    scope: {argv: [rm]}
    approval: human
    owner: alice
    justification: tests
    review_by: 2099-01-01
    expires: 2099-01-01
  - id: lead-fs
    agent: lead
    tool: fs
    actions: [read]
    scope: {paths: ["/repo/**"]}
    owner: alice
    justification: tests
    review_by: 2099-01-01
    expires: 2030-01-01
forbid:
  - {id: no-echo-secret, agent: lead, tool: shell, scope: {argv: [echo, secret]}, reason: secrets}
YAML
chmod 0644 "$T/p.yaml"
P="$T/p.yaml"

dg() {
	who=$1
	mkdir -p "$T/w-$who" && chmod 0755 "$T/w-$who" && cd "$T/w-$who" || exit 1
	id=$($RUN_AS "$CORDON" delegate --policy "$P" --from lead --to lead/sub --tool shell \
		--actions execute --scope 'argv=echo' --ttl 10m --by alice | cut -f1)
	case $id in dg-*) ok "$who: delegation made ($id)" true ;;
	*) nok "$who: delegation made" true ;; esac
	out=$($RUN_AS "$CORDON" run --policy "$P" --agent lead/sub -- echo hi 2>&1)
	is "$out" hi "$who: the sub-agent runs what it was handed"
	nok "$who: the parent's forbid rule applies to the sub-agent" \
		$RUN_AS "$CORDON" run --policy "$P" --agent lead/sub -- echo secret
	nok "$who: another sub-agent name holds nothing" \
		$RUN_AS "$CORDON" run --policy "$P" --agent lead/other -- echo hi
	nok "$who: a parent cannot hand down a tool it never had" \
		$RUN_AS "$CORDON" delegate --policy "$P" --from lead --to lead/sub --tool shell \
		--actions execute --scope 'argv=curl' --ttl 10m
	nok "$who: nor a wider scope" \
		$RUN_AS "$CORDON" delegate --policy "$P" --from lead --to lead/sub --tool fs \
		--actions read --scope 'path=/**' --ttl 10m
	nok "$who: nor another action class" \
		$RUN_AS "$CORDON" delegate --policy "$P" --from lead --to lead/sub --tool fs \
		--actions update --scope 'path=/repo/a/**' --ttl 10m
	nok "$who: a delegation cannot outlive the parent's grant" \
		$RUN_AS "$CORDON" delegate --policy "$P" --from lead --to lead/sub --tool fs \
		--actions read --scope 'path=/repo/a/**' --ttl 50000h
	ok "$who: a narrower scope within the parent's lifetime is fine" \
		$RUN_AS "$CORDON" delegate --policy "$P" --from lead --to lead/sub --tool fs \
		--actions read --scope 'path=/repo/a/**' --ttl 10m
	nok "$who: only to a sub-agent of the parent" \
		$RUN_AS "$CORDON" delegate --policy "$P" --from lead --to other --tool shell \
		--actions execute --scope 'argv=echo' --ttl 10m
	nok "$who: not to another agent's sub-agent" \
		$RUN_AS "$CORDON" delegate --policy "$P" --from lead --to other/x --tool shell \
		--actions execute --scope 'argv=echo' --ttl 10m
	nok "$who: an agent that is not the parent cannot delegate its grants" \
		$RUN_AS "$CORDON" delegate --policy "$P" --from other --to other/x --tool shell \
		--actions execute --scope 'argv=echo' --ttl 10m
	# The parent's approval requirement is carried down.
	$RUN_AS "$CORDON" delegate --policy "$P" --from lead --to lead/rm --tool shell \
		--actions execute --scope 'argv=rm' --ttl 10m >/dev/null
	out=$($RUN_AS "$CORDON" run --policy "$P" --agent lead/rm --approval-timeout 1s -- rm -f nothing 2>&1)
	is "$?" 125 "$who: the sub-agent's rm waits for approval like the parent's (none comes)"
	case $out in *"held for approval"*"no answer before the deadline"*) ok "$who: ... and says so" true ;;
	*) nok "$who: ... and says so ($out)" true ;; esac
	# Chains: the sub-agent delegates onward within what it holds.
	ok "$who: a sub-agent delegates onward" $RUN_AS "$CORDON" delegate --policy "$P" \
		--from lead/sub --to lead/sub/leaf --tool shell --actions execute --scope 'argv=echo' --ttl 5m
	out=$($RUN_AS "$CORDON" run --policy "$P" --agent lead/sub/leaf -- echo leaf 2>&1)
	is "$out" leaf "$who: the grandchild runs it"
	list=$($RUN_AS "$CORDON" grant list)
	case $list in *lead/sub/leaf*"from lead/sub"*) ok "$who: grant list shows the chain" true ;;
	*) nok "$who: grant list shows the chain ($list)" true ;; esac
	# Revoking the middle link cuts the grandchild off at once.
	ok "$who: revoke the middle link" $RUN_AS "$CORDON" grant revoke "$id"
	nok "$who: the sub-agent lost it" $RUN_AS "$CORDON" run --policy "$P" --agent lead/sub -- echo hi
	nok "$who: so did the grandchild" $RUN_AS "$CORDON" run --policy "$P" --agent lead/sub/leaf -- echo hi
	# A policy change that takes the parent's grant away reaches the child.
	$RUN_AS "$CORDON" delegate --policy "$P" --from lead --to lead/sub2 --tool shell \
		--actions execute --scope 'argv=echo' --ttl 10m >/dev/null
	sed 's/argv: \[echo\]}/argv: [printf]}/' "$P" >"$T/narrow.yaml"
	chmod 0644 "$T/narrow.yaml"
	out=$($RUN_AS "$CORDON" run --policy "$T/narrow.yaml" --agent lead/sub2 -- echo hi 2>&1)
	is "$?" 125 "$who: the parent losing the grant denies the child"
	case $out in *"delegating agent 'lead'"*) ok "$who: ... and says why" true ;;
	*) nok "$who: ... and says why ($out)" true ;; esac
	db=${CORDON_AUDIT}
	[ -n "$RUN_AS" ] && db="$S/.state-nobody/audit.db"
	n=$("$CORDON" log export --format jsonl --audit "$db" | grep -c '"kind":"grant.delegated".*"parent":"lead')
	[ "$n" -ge 3 ]
	ok "$who: each delegation is a record naming the parent ($n)" test "$n" -ge 3
}
for_each_user dg

# The commands shown in examples/policies/parent-delegation.yaml do what
# its comments say.
E="$CORDON_SRC/examples/policies/parent-delegation.yaml"
ok "example: lead hands docs reads to lead/reader" "$CORDON" delegate --policy "$E" \
	--from lead --to lead/reader --tool fs --actions read --scope 'paths=/work/shop/docs/**' --ttl 2h
ok "example: lead hands make test to lead/tester" "$CORDON" delegate --policy "$E" \
	--from lead --to lead/tester --tool shell --actions execute --scope 'argv=make test' --ttl 1h
nok "example: src writes are refused" "$CORDON" delegate --policy "$E" \
	--from lead --to lead/reader --tool fs --actions update --scope 'paths=/work/shop/src/**' --ttl 1h
nok "example: git push is refused" "$CORDON" delegate --policy "$E" \
	--from lead --to lead/tester --tool shell --actions execute --scope 'argv=git push' --ttl 1h
done_testing
