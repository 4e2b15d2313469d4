#!/bin/sh
# The approval gate (issue 7, THREATS row 36): a call whose grant says
# approval: human is held, not run, until a person approves it through
# 'cordon approvals'; approvals are single-use, bound to the call's hash,
# expire, never widen the sandbox; approver rules decide by themselves;
# everything is in the audit log.
. "${CORDON_SRC:-.}/tests/lib.sh"

cat >"$T/p.yaml" <<'YAML'
version: 1
agents:
  - {id: coder, owner: alice}
tools:
  - {id: shell, kind: command}
  - {id: cleanup, kind: command}
profiles:
  ws: {workspace: write}
approvers:
  people: [alice, bob, nobody, root]
  rules:
    - id: small-rm
      scope: {argv: [rm, -f]}
      operands: {paths: ["/tmp/**/scratch/**"], max: 2}
grants:
  - id: rm
    agent: coder
    tool: shell
    actions: [execute]
    scope: {argv: [rm]}
    approval: human
    profile: ws
    owner: alice
    justification: tests
    review_by: 2099-01-01
    expires: 2099-01-01
  - id: rm-scratch
    agent: coder
    tool: cleanup
    actions: [execute]
    scope: {argv: [rm, -f]}
    approval: policy:small-rm
    profile: ws
    owner: alice
    justification: tests
    review_by: 2099-01-01
    expires: 2099-01-01
YAML
chmod 0644 "$T/p.yaml"
P="$T/p.yaml"

# The id of the pending request with the argument "$1" (waits up to 30 s:
# a first run on a loaded machine has taken more than 10).
pending() {
	i=0
	while [ $i -lt 300 ]; do
		id=$($RUN_AS "$CORDON" approvals list | awk -v w="\"$1\"" 'index($0, w) && $2 == "pending" {print $1; exit}')
		[ -n "$id" ] && { echo "$id"; return 0; }
		sleep 0.1
		i=$((i + 1))
	done
	return 1
}

ap() {
	who=$1
	W="$T/w-$who"
	mkdir -p "$W/scratch" && chmod -R 0777 "$W" && cd "$W" || exit 1
	db=${CORDON_AUDIT}
	[ -n "$RUN_AS" ] && db="$S/.state-nobody/audit.db"
	touch victim1 victim2 victim3 c1 c2 c3 scratch/a scratch/b scratch/c &&
		chmod 0666 victim1 victim2 victim3 c1 c2 c3 scratch/a scratch/b scratch/c

	# Held, then approved: runs once.
	($RUN_AS "$CORDON" run --policy "$P" --agent coder --approval-timeout 30s -- rm victim1 \
		>"$T/o1-$who" 2>&1; echo $? >"$T/rc1-$who") &
		bg_pids="${bg_pids:-} $!"
	id=$(pending victim1)
	rc=$?
	is "$rc" 0 "$who: the call is queued ($id)" || {
		# once in a CI-like run (session 12): what the held run and the list said
		diag "$who: the run so far: $(head -c 400 "$T/o1-$who" 2>/dev/null)"
		diag "$who: approvals list: $($RUN_AS "$CORDON" approvals list 2>&1 | head -c 400)"
	}
	[ "$rc" = 0 ] || diag "the run said: $(cat "$T/o1-$who" 2>/dev/null) (exit $(cat "$T/rc1-$who" 2>/dev/null))"
	[ -e victim1 ]
	is "$?" 0 "$who: while it is pending the file still exists"
	out=$($RUN_AS "$CORDON" approvals show "$id")
	case $out in *'"rm"'*victim1*) ok "$who: show names the call" true ;; *) nok "$who: show names the call" true ;; esac
	nok "$who: the requesting agent cannot approve its own request" $RUN_AS "$CORDON" approvals approve "$id" --as coder
	nok "$who: an approver the policy does not list is refused" $RUN_AS "$CORDON" approvals approve "$id" --as mallory
	ok "$who: alice approves" $RUN_AS "$CORDON" approvals approve "$id" --as alice --comment "looks fine"
	wait $bg_pids; bg_pids=""
	is "$(cat "$T/rc1-$who")" 0 "$who: the approved call ran"
	[ ! -e victim1 ]
	is "$?" 0 "$who: ... and removed the file"
	nok "$who: an approval is used once: approving again fails" $RUN_AS "$CORDON" approvals approve "$id" --as alice

	# Denied: never runs, exit 125 with the reason.
	($RUN_AS "$CORDON" run --policy "$P" --agent coder --approval-timeout 30s -- rm victim2 \
		>"$T/o2-$who" 2>&1; echo $? >"$T/rc2-$who") &
		bg_pids="${bg_pids:-} $!"
	id2=$(pending victim2)
	[ "$id2" != "$id" ]
	is "$?" 0 "$who: running again needs a new approval ($id2)"
	ok "$who: bob denies" $RUN_AS "$CORDON" approvals deny "$id2" --as bob --reason "not today"
	wait $bg_pids; bg_pids=""
	is "$(cat "$T/rc2-$who")" 125 "$who: a denied call exits 125"
	case $(cat "$T/o2-$who") in *"not today"*) ok "$who: ... with the reason" true ;;
	*) nok "$who: ... with the reason ($(cat "$T/o2-$who"))" true ;; esac
	[ -e victim2 ]
	is "$?" 0 "$who: ... and did not run"

	# No answer: denied at the deadline.
	$RUN_AS "$CORDON" run --policy "$P" --agent coder --approval-timeout 1s -- rm victim2 >"$T/o3-$who" 2>&1
	is "$?" 125 "$who: no answer before the deadline is a deny"
	[ -e victim2 ]
	is "$?" 0 "$who: ... and nothing ran"

	# The approval binds the exact call: a row whose arguments were changed
	# after the request (what the approver saw is not what would run) is
	# refused by the requesting process.
	($RUN_AS "$CORDON" run --policy "$P" --agent coder --approval-timeout 30s -- rm victim3 \
		>"$T/o4-$who" 2>&1; echo $? >"$T/rc4-$who") &
		bg_pids="${bg_pids:-} $!"
	id4=$(pending victim3)
	state=${CORDON_STATE}
	[ -n "$RUN_AS" ] && state="$S/.state-nobody/state.db"
	q="UPDATE approvals SET args_json = replace(args_json, 'victim3', 'victim9'), args_sha256 = '$(printf '%064d' 0)' WHERE id = '$id4'"
	case $state in
	postgres*) psql -X -qAt "$state" -c "$q" ;; # 4102: the store in PostgreSQL
	*) sqlite3 "$state" "$q" ;;
	esac
	$RUN_AS "$CORDON" approvals approve "$id4" --as alice >/dev/null 2>&1
	wait $bg_pids; bg_pids=""
	is "$(cat "$T/rc4-$who")" 125 "$who: an approval for other arguments is not used"
	[ -e victim3 ]
	is "$?" 0 "$who: ... and nothing ran"

	# An answer written straight into the state (as any writer of a shared
	# store could) naming someone who may not approve: the waiting process
	# checks the name against its own policy and refuses.
	for forger in mallory coder; do
		($RUN_AS "$CORDON" run --policy "$P" --agent coder --approval-timeout 30s -- rm victim3 \
			>"$T/o5-$who" 2>&1; echo $? >"$T/rc5-$who") &
			bg_pids="${bg_pids:-} $!"
		id5=$(pending victim3)
		q="UPDATE approvals SET status = 'approved', decided_by = '$forger', decided_at = $(date +%s) WHERE id = '$id5'"
		case $state in
		postgres*) psql -X -qAt "$state" -c "$q" ;;
		*) sqlite3 "$state" "$q" ;;
		esac
		wait $bg_pids; bg_pids=""
		is "$(cat "$T/rc5-$who")" 125 "$who: an answer forged in the state naming $forger is not used"
		case $(cat "$T/o5-$who") in *"names '$forger', who may not approve"*) ok "$who: ... saying why" true ;;
		*) nok "$who: ... saying why ($(cat "$T/o5-$who"))" true ;; esac
		[ -e victim3 ]
		is "$?" 0 "$who: ... and nothing ran"
	done

	# Several requesters at once, each resolved on its own.
	for n in 1 2 3; do
		($RUN_AS "$CORDON" run --policy "$P" --agent coder --approval-timeout 30s -- rm "c$n" \
			>/dev/null 2>&1; echo $? >"$T/rc-c$n-$who") &
			bg_pids="${bg_pids:-} $!"
	done
	a1=$(pending c1) && a2=$(pending c2) && a3=$(pending c3)
	is "$?" 0 "$who: three concurrent requests are queued"
	$RUN_AS "$CORDON" approvals approve "$a3" --as alice >/dev/null
	$RUN_AS "$CORDON" approvals deny "$a2" --as alice >/dev/null
	$RUN_AS "$CORDON" approvals approve "$a1" --as bob >/dev/null
	wait $bg_pids; bg_pids=""
	is "$(cat "$T/rc-c1-$who") $(cat "$T/rc-c2-$who") $(cat "$T/rc-c3-$who")" "0 125 0" \
		"$who: each concurrent request got its own answer"
	is "$(ls c1 c2 c3 2>/dev/null | tr '\n' ' ')" "c2 " "$who: only the denied file is left"

	# An approver rule decides by itself.
	$RUN_AS "$CORDON" run --policy "$P" --agent coder --tool cleanup -- rm -f scratch/a scratch/b
	is "$?" 0 "$who: the rule approves two scratch files"
	[ ! -e scratch/a ] && [ ! -e scratch/b ]
	is "$?" 0 "$who: ... which are gone"
	$RUN_AS "$CORDON" run --policy "$P" --agent coder --tool cleanup -- rm -f scratch/c victim2 2>"$T/o5-$who"
	is "$?" 125 "$who: the rule refuses an operand outside scratch"
	[ -e scratch/c ] && [ -e victim2 ]
	is "$?" 0 "$who: ... and nothing ran"
	$RUN_AS "$CORDON" run --policy "$P" --agent coder --tool cleanup -- rm -f scratch/c scratch/x scratch/y 2>/dev/null
	is "$?" 125 "$who: the rule refuses more operands than its max"

	# The sandbox cannot see the state database.
	out=$($RUN_AS "$CORDON" run -- sh -c "ls -A $(dirname "${CORDON_STATE}") $S/.state-nobody 2>&1; true")
	case $out in *state.db*) nok "$who: the state database is invisible inside ($out)" true ;;
	*) ok "$who: the state database is invisible inside" true ;; esac

	# Sampling and stats.
	s=$($RUN_AS "$CORDON" approvals sample 2 --as carol --json)
	n=$(printf '%s' "$s" | python3 -c 'import json,sys; print(len(json.load(sys.stdin)))')
	is "$n" 2 "$who: sample picks two approved calls"
	s2=$($RUN_AS "$CORDON" approvals sample 100 --as carol --json)
	n2=$(printf '%s' "$s2" | python3 -c 'import json,sys; print(len(json.load(sys.stdin)))')
	# 5 approvals by people and rules, 3 left, and the 2 forged answers.
	is "$n2" 5 "$who: ... and never the same one twice (7 approved rows, 2 sampled before)"
	st=$($RUN_AS "$CORDON" approvals stats)
	case $st in *"alice	3	1	"*) ok "$who: stats count alice's approvals and denials" true ;;
	*) nok "$who: stats count alice's approvals and denials ($st)" true ;; esac

	# Everything is in the audit log, and it verifies.
	k=$("$CORDON" log export --format jsonl --audit "$db" | python3 -c '
import json, sys
kinds = {}
for l in sys.stdin:
    r = json.loads(l); kinds[r["kind"]] = kinds.get(r["kind"], 0) + 1
print(" ".join("%s=%d" % (k, kinds[k]) for k in sorted(kinds) if k.startswith("approval.")))')
	case $k in *approval.approved=5*approval.denied=4*approval.expired=1*approval.refused=3*approval.request=12*approval.sampled=7*approval.used=4) ok "$who: request, approved, denied, expired, used and sampled are records ($k)" true ;;
	*) nok "$who: every approval step is a record ($k)" true ;; esac
	n=$("$CORDON" log export --format jsonl --audit "$db" | grep '"kind":"run.intent"' | grep -c '"approval_id":"ap-')
	[ "$n" -ge 4 ]
	is "$?" 0 "$who: intents name the approval they ran on ($n)"
	ok "$who: the log verifies" "$CORDON" log verify --audit "$db"
}
for_each_user ap

# --approve-interactive asks on the terminal (a pty made by script(1)),
# with the agent's bytes escaped; 'y' runs the call, anything else denies.
if command -v script >/dev/null 2>&1; then
	mkdir -p "$T/wi" && cd "$T/wi" || exit 1
	touch victimi "$(printf 'esc\033[2Jx')"
	out=$(printf 'y\n' | script -qec "'$CORDON' run --policy '$P' --agent coder --approve-interactive -- rm victimi \"\$(printf 'esc\\033[2Jx')\"" /dev/null 2>&1)
	[ ! -e victimi ]
	is "$?" 0 "interactive: 'y' on the terminal approves and the call runs"
	case $out in *"Approve as root?"*) ok "interactive: the prompt names the approver" true ;;
	*) nok "interactive: the prompt names the approver ($out)" true ;; esac
	printf '%s' "$out" | grep -q "$(printf '\033')\[2J"
	is "$?" 1 "interactive: the agent's escape sequences reach the terminal escaped"
	touch victimj
	printf 'n\n' | script -qec "'$CORDON' run --policy '$P' --agent coder --approve-interactive -- rm victimj" /dev/null >/dev/null 2>&1
	[ -e victimj ]
	is "$?" 0 "interactive: 'n' denies and nothing runs"
else
	skip "script(1) is not installed"
fi
done_testing
