#!/bin/sh
# cordon run writes the audit log: a decision and a durable intent before
# the command runs, a result after; no log, no run.
. "${CORDON_SRC:-.}/tests/lib.sh"

field() { # field KIND NAME: the NAME of the last record of KIND
	"$CORDON" log export --format jsonl --audit "$1" | python3 -c '
import json, sys
kind, name = sys.argv[1], sys.argv[2]
last = None
for line in sys.stdin:
    r = json.loads(line)
    if r["kind"] == kind: last = r
v = last
for part in name.split("."):
    v = None if v is None else v.get(part)
print(v)' "$2" "$3"
}

audit() {
	who=$1
	db=${CORDON_AUDIT}
	[ -n "$RUN_AS" ] && db="$S/.state-nobody/audit.db"
	mkdir -p "$T/p-$who" && chmod 0755 "$T/p-$who" && cd "$T/p-$who" || exit 1
	printf 'hello' | $RUN_AS "$CORDON" run -- sh -c 'cat; echo; exit 3' >/dev/null
	is $? 3 "$who: the command ran"
	is "$(field "$db" run.intent details.argv)" "['sh', '-c', 'cat; echo; exit 3']" "$who: the intent holds argv as given"
	is "$(field "$db" run.intent argv_sha256)" "$(printf 'sh\0-c\0cat; echo; exit 3\0' | sha256sum | cut -d' ' -f1)" \
		"$who: the intent holds the SHA-256 of argv"
	is "$(field "$db" run.intent code_sha256)" "$(printf 'cat; echo; exit 3' | sha256sum | cut -d' ' -f1)" \
		"$who: the intent holds the SHA-256 of the code the shell runs"
	is "$(field "$db" decision decision)" allow "$who: the decision is recorded"
	is "$(field "$db" run.result exit_code)" 3 "$who: the result holds the exit code"
	is "$(field "$db" run.result reason)" exited "$who: the result holds the reason"
	is "$(field "$db" run.result stdin_sha256)" "$(printf hello | sha256sum | cut -d' ' -f1)" "$who: the result holds the stdin hash"
	is "$(field "$db" run.result stdout_sha256)" "$(printf 'hello\n' | sha256sum | cut -d' ' -f1)" "$who: the result holds the stdout hash"
	is "$(field "$db" run.result run_id)" "$(field "$db" run.intent run_id)" "$who: intent and result share the run id"
	# A refused syscall reaches the record.
	$RUN_AS "$CORDON" run -- unshare -U true 2>/dev/null
	is "$(field "$db" run.result details.denied_syscalls | grep -o "'unshare'")" "'unshare'" "$who: refused syscalls are in the result record"
	# Secrets never reach the log.
	TOKEN=s3cr3t-value $RUN_AS "$CORDON" run --secret TOKEN -- sh -c 'test -n "$TOKEN"'
	nok "$who: a secret's value is nowhere in the log" sh -c "'$CORDON' log export --format jsonl --audit '$db' | grep -q s3cr3t-value"
	ok "$who: the log verifies" "$CORDON" log verify --audit "$db"
	# Control characters in argv are stored as data and escaped on display.
	$RUN_AS "$CORDON" run -- sh -c 'true' "$(printf 'x\033[2Jy')" "{\"kind\":\"fake\"}"
	nok "$who: log show never prints a raw escape" sh -c "'$CORDON' log show --audit '$db' | grep -q \"\$(printf '\033')\""
	cd "$T" || exit 1
}

for_each_user audit

# No log, no run: an unwritable log refuses the run and runs nothing.
mkdir -p "$T/rolog" && chmod 0555 "$T/rolog"
mkdir -p "$T/p" && chmod 0777 "$T/p" && cd "$T/p" || exit 1
as_nobody env CORDON_AUDIT="$T/rolog/audit.db" "$CORDON" run --rw "$T/p" -- sh -c "touch $T/p/ran" 2>"$T/err"
is $? 125 "an unwritable log refuses the run with 125"
nok "and the command did not run" test -e "$T/p/ran"
ok "the refusal names the log" grep -q "audit log" "$T/err"
echo garbage >"$T/p/bad.db"
"$CORDON" run --audit "$T/p/bad.db" --rw "$T/p" -- sh -c "touch $T/p/ran2" 2>/dev/null
is $? 125 "a corrupt log refuses the run with 125"
nok "and the command did not run" test -e "$T/p/ran2"

# A policy decides: an allowed argv runs; another is denied and recorded.
cat >"$T/policy.yaml" <<'YAML'
version: 1
agents:
  - id: coder
    owner: alice@example.com
tools:
  - id: shell
    kind: command
profiles:
  small:
    memory: 128M
    timeout: 10s
grants:
  - id: coder-echo
    agent: coder
    tool: shell
    actions: [execute]
    scope:
      argv: [echo]
    profile: small
    owner: alice@example.com
    justification: the test needs one allowed command
    review_by: 2030-01-01
    expires: 2030-06-30
YAML
is "$("$CORDON" run --policy "$T/policy.yaml" --agent coder -- echo granted)" granted "an argv the grant covers runs"
n_before=$("$CORDON" log export --format jsonl --audit "$CORDON_AUDIT" | wc -l)
is "$("$CORDON" run --dry-run --policy "$T/policy.yaml" --agent coder -- echo x | python3 -c 'import json,sys; print(json.load(sys.stdin)["profile"])')" \
	small "a dry run decides and shows the grant's profile"
"$CORDON" run --dry-run --policy "$T/policy.yaml" --agent coder -- rm -rf / >/dev/null 2>&1
is $? 125 "a dry run of a denied argv is refused too"
is "$("$CORDON" log export --format jsonl --audit "$CORDON_AUDIT" | wc -l)" "$n_before" "a dry run records nothing"
"$CORDON" run --policy "$T/policy.yaml" --agent coder -- sh -c 'echo no' >"$T/out" 2>"$T/err"
is $? 125 "an argv no grant covers is denied with 125"
is "$(cat "$T/out")" "" "and it did not run"
is "$(field "$CORDON_AUDIT" decision decision)" deny "the deny is recorded"
"$CORDON" run --policy "$T/policy.yaml" --agent mallory -- echo x >/dev/null 2>&1
is $? 125 "another agent is denied"
"$CORDON" run --policy "$T/policy.yaml" -- echo x >/dev/null 2>&1
is $? 125 "--policy without --agent is refused"
"$CORDON" run --policy "$T/policy.yaml" --agent coder --rw "$T/p" -- echo x >/dev/null 2>&1
is $? 125 "with --policy, options cannot widen the sandbox"
printf 'version: 1\nagents: [\n' >"$T/broken.yaml"
"$CORDON" run --policy "$T/broken.yaml" --agent coder -- echo x >"$T/out" 2>/dev/null
is $? 125 "a broken policy refuses the run"

# kill -9 of cordon mid-run leaves a log that verifies, the run interrupted.
# The command's argv is this test's own ("sleep 30.PID"): pgrep sees no
# other test's sleep, and this test waits for it rather than for a time.
mark="sleep 30.$$"
"$CORDON" run -- $mark &
pid=$!
i=0
while ! pgrep -f "^$mark$" >/dev/null && [ $i -lt 300 ]; do sleep 0.1; i=$((i + 1)); done
ok "the sandboxed command runs" pgrep -f "^$mark$"
kill -9 "$pid"
wait "$pid" 2>/dev/null
ok "after kill -9 the log verifies" "$CORDON" log verify --audit "$CORDON_AUDIT"
ok "and reports the interrupted run" sh -c "'$CORDON' log verify --audit '$CORDON_AUDIT' 2>&1 | grep -qi interrupted"
i=0
while pgrep -f "^$mark$" >/dev/null && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
nok "and the sandboxed command died with cordon (within 5 s)" pgrep -f "^$mark$"
done_testing
