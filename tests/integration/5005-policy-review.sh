#!/bin/sh
# cordon policy review: re-certification from review dates, expiry and the
# audit log that `cordon run --policy` fills with decision records.
. "${CORDON_SRC:-.}/tests/lib.sh"
P="$CORDON_SRC/tests/data/policy/review/team.yaml"
mkdir -p "$T/w" && cd "$T/w" || exit 1

# Fill the log: allowed runs name their grant; a denied run names none.
for i in 1 2; do
	"$CORDON" run --policy "$P" --agent coder -- echo hi >/dev/null
	is $? 0 "run $i: echo by coder runs"
done
"$CORDON" run --policy "$P" --agent coder -- printf x >/dev/null
is $? 0 "printf by coder runs"
"$CORDON" run --policy "$P" --agent other -- echo hi >/dev/null
is $? 0 "echo by other runs"
"$CORDON" run --policy "$P" --agent other -- printf x >/dev/null
is $? 0 "printf by other runs"
"$CORDON" run --policy "$P" --agent coder -- sh -c true >/dev/null 2>&1
is $? 125 "a denied run (no grant) runs nothing"
"$CORDON" run --policy "$P" --agent other -- true >/dev/null 2>&1
is $? 125 "'true' by other is denied: the grant 'never' is coder's"
size_before=$("$CORDON" log export --format jsonl | wc -l)

review() { "$CORDON" policy review "$P" "$@"; }
flags() { # flags ID JSON-FILE: the attention flags of one grant, comma-joined
	jq -r --arg id "$1" '.grants[] | select(.id == $id) | .attention | join(",")' "$2"
}

review --json >"$T/now.json"
is $? 1 "something needs attention now: exit 1"
is "$(flags echo "$T/now.json")" "" "echo: used, in date: nothing"
is "$(flags printf "$T/now.json")" "" "printf: used, in date: nothing"
is "$(flags never "$T/now.json")" never-used "never: never used"
is "$(flags stale-review "$T/now.json")" past-review "stale-review: past review_by"
is "$(flags expiring "$T/now.json")" "" "expiring: not within 30 days yet"
is "$(jq -r '.grants[] | select(.id == "echo") | .uses' "$T/now.json")" 2 "echo: two uses"
is "$(jq -r '.grants[] | select(.id == "never") | .last_used' "$T/now.json")" null "never: no last use"
is "$(jq -r '.attention' "$T/now.json")" 2 "two grants need attention"
is "$(jq -r '.usage_checked' "$T/now.json")" true "usage was checked"
is "$("$CORDON" log export --format jsonl | wc -l)" "$size_before" "review writes nothing to the log"

# 100 days on: everything used is unused; 2098-11-15: 'expiring' is within 30d.
review --json --at "@$(($(date +%s) + 100 * 86400))" >"$T/later.json"
is "$(flags echo "$T/later.json")" unused "100 days on: echo unused (default --unused 90d)"
is "$(flags never "$T/later.json")" never-used "100 days on: never still never used"
review --json --at "@$(($(date +%s) + 100 * 86400))" --unused 200d >"$T/later2.json"
is "$(flags echo "$T/later2.json")" "" "--unused 200d: echo is fine"
review --json --at 2098-11-15 --no-audit >"$T/exp.json"
is "$(flags expiring "$T/exp.json")" expiring "2098-11-15: 'expiring' expires within 30d"
is "$(flags echo "$T/exp.json")" "" "2098-11-15: echo does not (48 days)"
is "$(jq -r '.usage_checked' "$T/exp.json")" false "--no-audit: usage not checked"
review --json --at 2098-11-15 --no-audit --soon 60d >"$T/exp2.json"
is "$(flags echo "$T/exp2.json")" expiring "--soon 60d: echo expires within 60 days"
review --json --at 2098-12-01 --no-audit >"$T/exp3.json"
is "$(flags expiring "$T/exp3.json")" expired "at the expiry second: expired"

# Text form: one line per grant that needs attention, then a summary.
out=$(review)
case $out in *"never (owner alice): never-used;"*) r=0 ;; *) r=1 ;; esac
is "$r" 0 "text: the never-used grant is listed"
case $out in *"stale-review (owner bob): past-review (review_by 2020-01-01T00:00:00Z);"*) r=0 ;; *) r=1 ;; esac
is "$r" 0 "text: the stale review is listed with its date"
case $out in *"echo (owner"*) r=1 ;; *) r=0 ;; esac
is "$r" 0 "text: a grant in good standing is not listed"
case $out in *"2 of 5 grants need attention"*) r=0 ;; *) r=1 ;; esac
is "$r" 0 "text: the summary counts"

# All in order: exit 0.
cat >"$T/ok.yaml" <<'YAML'
version: 1
agents: [{id: coder, owner: alice}]
tools: [{id: shell, kind: command}]
grants:
  - {id: echo, agent: coder, tool: shell, actions: [execute], scope: {argv: [echo]},
     owner: alice, justification: j, review_by: 2099-01-01, expires: 2099-01-01}
YAML
"$CORDON" policy review "$T/ok.yaml" >/dev/null
is $? 0 "a used, current grant: exit 0"

# Fail closed: no log, a broken policy, bad options.
"$CORDON" policy review "$P" --audit "$T/none.db" >/dev/null 2>"$T/err"
is $? 4 "a log that does not exist: exit 4"
nok "and it was not created" test -e "$T/none.db"
echo garbage >"$T/bad.db"
"$CORDON" policy review "$P" --audit "$T/bad.db" >/dev/null 2>&1
is $? 4 "a corrupt log: exit 4"
printf 'version: 1\nagents: []\ntools: []\nbogus: 1\n' >"$T/bad.yaml"
"$CORDON" policy review "$T/bad.yaml" >/dev/null 2>&1
is $? 4 "a broken policy: exit 4"
"$CORDON" policy review "$P" --soon 3x >/dev/null 2>&1
is $? 2 "a bad duration: exit 2"
"$CORDON" policy review "$P" --at yesterday >/dev/null 2>&1
is $? 2 "a bad time: exit 2"
"$CORDON" policy review >/dev/null 2>&1
is $? 2 "no file: exit 2"
"$CORDON" policy review "$P" --no-audit --audit "$T/x.db" >/dev/null 2>&1
is $? 2 "--audit with --no-audit: exit 2"
"$CORDON" policy review --help | grep -q "Exit 0 when nothing needs attention"
is $? 0 "--help documents the exit statuses"
done_testing
