#!/bin/sh
# cordon serve (issue 18): approver-rule outcomes on the held-calls page,
# live, and the new grant form in a real browser.
# A grant with `approval: policy:NAME` is decided at once by the rule; the
# held-calls page shows, for each such call of the last hour, the rule's
# name, what it requires (from the policy), what it decided and why (the
# gate's reason, which quotes the agent's operands: escaped), and the
# event stream carries a new decision to open pages without a reload.
# Then chromium (tests/web/console-grants.mjs) logs in, sees the rule's
# outcome, makes a break-glass grant with the form, and the grant works.
# (Root only: the console is the operator's.)
. "${CORDON_SRC:-.}/tests/lib.sh"
. "$CORDON_SRC/tests/web/setup.sh"
. "$CORDON_SRC/tests/helpers/serve-start.sh"

mkdir -p "$T/work/scratch" && chmod -R 0777 "$T/work"
cat >"$T/p.yaml" <<YAML
version: 1
agents:
  - {id: coder, owner: alice}
  - {id: helper, owner: alice}
tools:
  - {id: shell, kind: command}
profiles:
  ws: {workspace: write}
approvers:
  people: [alice]
  rules:
    - id: small-scratch-delete
      scope: {argv: [rm, -f]}
      operands: {paths: ["$T/work/scratch/**"], max: 2}
grants:
  - id: rm
    agent: coder
    tool: shell
    actions: [execute]
    scope: {argv: [rm]}
    approval: policy:small-scratch-delete
    profile: ws
    owner: alice
    justification: tests
    review_by: 2099-01-01
    expires: 2099-01-01
YAML
P="$T/p.yaml"
cd "$T/work" || exit 1

trap 'stop_bg $serve_pid $sse_pid; _tap_cleanup' EXIT
serve_start --listen 127.0.0.1:0 --policy "$P"
ok "serve starts ($origin)" test -n "$origin"

alice=$(login "$("$CORDON" serve login alice --origin "$origin" --policy "$P")")
ok "alice logged in" test -n "$alice"
isb "$(code -H "Cookie: $alice" "$origin/")" 200 "the held-calls page"
has 'table class="log rules"'
is "$?" 1 "positive control: no approver rule has decided anything yet, no table"

: >scratch/a
"$CORDON" run --policy "$P" --agent coder -- rm -f scratch/a >/dev/null 2>&1
is "$?" 0 "the rule approves rm -f of a scratch file"
code -H "Cookie: $alice" "$origin/" >/dev/null
python3 - "$T/body" >"$T/rows" <<'PY'
import html, re, sys
for row in re.findall(r'<tr class="rule-outcome ([a-z]+)"[^>]*>(.*?)</tr>', open(sys.argv[1]).read()):
    cells = re.findall(r'<td[^>]*>(.*?)</td>', row[1])
    t = lambda s: html.unescape(re.sub(r'<[^>]*>', '', s))
    print(row[0], '|', t(cells[0]), '|', t(cells[1]), '|', t(cells[2]), '|', t(cells[3]))
PY
is "$(sed -n 1p "$T/rows")" "approved | small-scratch-delete | the command starts with 'rm -f'; every operand within $T/work/scratch/**; at most 2 operands | approved | approved by rule 'small-scratch-delete'" \
	"the page shows the rule, what it requires, that it approved, and why"

# An open page's event stream, then a call the rule denies: its hostile
# operand is in the reason.
curl -sN -H "Cookie: $alice" "$origin/events" >"$T/sse" 2>/dev/null &
sse_pid=$!
i=0
while ! grep -q '^event: held' "$T/sse" 2>/dev/null && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
"$CORDON" run --policy "$P" --agent coder -- rm -f '/tmp/<b>x</b>' >/dev/null 2>&1
is "$?" 125 "the rule denies rm -f outside the scratch directory"
# the run's records change the page more than once (its intent, then the
# rule's outcome): each change is an event, so wait for the one that
# shows the denial (or 10 s), not for the second event
i=0
while ! grep '^data: ' "$T/sse" | tail -1 | grep -q 'rule-outcome denied' && [ $i -lt 100 ]; do
	sleep 0.1
	i=$((i + 1))
done
grep '^data: ' "$T/sse" | tail -1 >"$T/last"
grep -q 'rule-outcome denied' "$T/last"
is "$?" 0 "the event stream brings the denial to the open page, live"
grep -q "outside the rule&#39;s paths\|outside the rule's paths" "$T/last"
is "$?" 0 "... with the rule's reason"
grep -q "&lt;b&gt;x&lt;/b&gt;" "$T/last"
is "$?" 0 "... the operand's markup escaped"
grep -q "<b>x</b>" "$T/last"
is "$?" 1 "... never as markup"
kill $sse_pid 2>/dev/null
sse_pid=

if ! web_setup 2>"$T/setup.err"; then
	skip "browser test: $(cat "$T/setup.err")"
	done_testing
fi
link=$("$CORDON" serve login alice --origin "$origin" --policy "$P")
mkdir -p "$T/profile"
web_run 90 console-grants.mjs LINK="$link" ORIGIN="$origin" RULE=small-scratch-delete \
	PROFILE_DIR="$T/profile"
bg=$(cat "$T/profile/grant-id" 2>/dev/null)
"$CORDON" run --policy "$P" --agent helper -- ls >/dev/null 2>&1
is "$?" 0 "the grant made in the browser lets helper run ls"
"$CORDON" log export --format jsonl | grep '"kind":"grant.break-glass"' | grep "$bg" |
	grep -q 'from the browser'
is "$?" 0 "... recorded as grant.break-glass with the browser's reason"
ok "screenshots saved" test -s "$CORDON_BUILD/test-artifacts/serve-grant-new.png" -a \
	-s "$CORDON_BUILD/test-artifacts/serve-rules.png"
serve_stop
done_testing
