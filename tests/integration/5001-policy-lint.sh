#!/bin/sh
# cordon policy lint: every malformed policy in tests/data/policy/bad/ is
# refused with the FILE:LINE:COL error named on its first line; the example
# policies and the base test policy load.
. "${CORDON_SRC:-.}/tests/lib.sh"
D="$CORDON_SRC/tests/data/policy"

for f in "$D"/bad/*.yaml; do
	name=$(basename "$f")
	want=$(sed -n '1s/^# expect: //p' "$f")
	cp "$f" "$T/$name"
	out=$(cd "$T" && "$CORDON" policy lint "$name" 2>&1)
	rc=$?
	is "$rc" 1 "lint $name exits 1"
	is "$out" "cordon policy: $name:$want" "lint $name: $want"
done

ok "lint base.yaml" "$CORDON" policy lint "$D/base.yaml"
for f in "$CORDON_SRC"/examples/policies/*.yaml; do
	ok "lint example $(basename "$f")" "$CORDON" policy lint "$f"
done

ok "policy --help" "$CORDON" policy --help
ok "policy lint --help" "$CORDON" policy lint --help
ok "policy check --help" "$CORDON" policy check --help
"$CORDON" policy lint >/dev/null 2>&1
is "$?" 2 "lint without a file is a usage error"
"$CORDON" policy frob x >/dev/null 2>&1
is "$?" 2 "unknown subcommand is a usage error"
"$CORDON" policy lint "$T/does-not-exist.yaml" >/dev/null 2>&1
is "$?" 1 "a missing file fails"
# Lines are one line each, even for hostile content.
printf 'version: 1\nagents: [{id: "a\\x1b[2J", owner: o}]\ntools: []\n' >"$T/ctl.yaml"
out=$("$CORDON" policy lint "$T/ctl.yaml" 2>&1)
is "$(printf '%s' "$out" | wc -l)" 0 "an error is one line"
case $out in *"$(printf '\033')"*) _r=1 ;; *) _r=0 ;; esac
is "$_r" 0 "control bytes never reach the terminal"
# --json for a program (a CI check, an editor): the position split out.
printf 'version: 1\nagents: [{id: a, owner: o}]\nbogus: 1\n' >"$T/bad-json.yaml"
out=$("$CORDON" policy lint --json "$T/bad-json.yaml" 2>/dev/null)
rc=$?
case $out in '{"file":"'*'","ok":false,"error":"unknown key '"'"'bogus'"'"''*'"line":3,"column":1}') r=0 ;; *) r=1 ;; esac
is "$rc.$r" "1.0" "lint --json: a refused file as one object with line and column ($out)"
printf 'version: 1\nagents: [{id: a, owner: o}]\ntools: [{id: shell, kind: command}]\ngrants: []\n' >"$T/good-json.yaml"
out=$("$CORDON" policy lint "$T/good-json.yaml" --json)
rc=$?
case $out in '{"file":"'*'","ok":true,"agents":1,'*'"sha256":"'*) r=0 ;; *) r=1 ;; esac
is "$rc.$r" "0.0" "lint --json: a good file with its counts and hash ($out)"
# Several FILEs (policy lint examples/policies/*): each reported, in order;
# exit 1 when any fails, 0 when all pass.
E="$CORDON_SRC/examples/policies"
out=$("$CORDON" policy lint "$E"/*.yaml)
is "$?" 0 "lint of every example policy at once: exit 0"
is "$(printf '%s\n' "$out" | grep -c ': ok (')" "$(ls "$E"/*.yaml | wc -l | tr -d ' ')" "... one ok line per file"
out=$("$CORDON" policy lint "$T/good-json.yaml" "$T/bad-json.yaml" "$E/coding-agent.yaml" 2>"$T/err")
is "$?" 1 "a bad file among good ones: exit 1"
is "$(printf '%s\n' "$out" | grep -c ': ok (')" 2 "... the good ones before and after it are still reported"
grep -q "bad-json.yaml:3:1: unknown key 'bogus'" "$T/err"
is "$?" 0 "... and the bad one's error, with its position"
out=$("$CORDON" policy lint --json "$T/bad-json.yaml" "$T/good-json.yaml" 2>/dev/null)
is "$?" 1 "lint --json of two files, one bad: exit 1"
printf '%s\n' "$out" | python3 -c '
import json, sys
rows = [json.loads(l) for l in sys.stdin]
assert [r["ok"] for r in rows] == [False, True], rows
assert rows[0]["line"] == 3 and rows[1]["agents"] == 1, rows
' 2>&1
is "$?" 0 "... one JSON object a line per file, in order"
"$CORDON" policy lint --jsn "$T/good-json.yaml" >/dev/null 2>"$T/err"
is "$?" 2 "an unknown option: usage, exit 2"
grep -q "did you mean '--json'" "$T/err"
is "$?" 0 "... with did-you-mean"
# Warnings (still exit 0): a grant that can never work.  A delete grant
# whose profile binds nothing writable; grants already expired; every grant
# expired.  Controls: the same grant with an rw profile, and a grant that
# has not expired, get none.
cat >"$T/warn.yaml" <<'EOW'
version: 1
agents: [{id: a, owner: o}]
tools: [{id: shell, kind: command}]
profiles:
  ro-only: {timeout: 1m, ro: [/tmp]}
  writes: {timeout: 1m, rw: [/tmp]}
grants:
  - {id: cleanup, agent: a, tool: shell, actions: [delete], approval: human, scope: {argv: [rm]}, profile: ro-only, owner: o, justification: t, review_by: 2020-01-01, expires: 2021-01-01}
  - {id: ok-write, agent: a, tool: shell, actions: [delete], approval: human, scope: {argv: [rm]}, profile: writes, owner: o, justification: t, review_by: 2020-01-01, expires: 2021-01-01}
EOW
out=$("$CORDON" policy lint "$T/warn.yaml" 2>"$T/err")
is "$?" 0 "warnings do not fail lint: exit 0"
case $out in *"warn.yaml: ok ("*) r=0 ;; *) r=1 ;; esac
is "$r" 0 "... and the file is still ok"
grep -q "warn.yaml:8:5: warning: grant 'cleanup' allows delete but its profile 'ro-only' has no writable path" "$T/err"
is "$?" 0 "a delete grant whose profile has no writable path: FILE:LINE:COL: warning"
grep -q "warning: grant 'ok-write' allows" "$T/err"
is "$?" 1 "... not the same grant with an rw profile"
grep -q "warn.yaml:8:[0-9]*: warning: every grant has expired: this policy allows nothing" "$T/err"
is "$?" 0 "every grant expired: a warning"
grep -q "warn.yaml:9:[0-9]*: warning: grant 'ok-write' has expired" "$T/err"
is "$?" 0 "an expired grant: a warning at its expires"
out=$("$CORDON" policy lint --json "$T/warn.yaml" 2>/dev/null)
printf '%s\n' "$out" | python3 -c '
import json, sys
o = json.load(sys.stdin)
assert o["ok"] is True and len(o["warnings"]) == 4, o
assert any("no writable path" in w["message"] and w["line"] == 8 for w in o["warnings"]), o
' 2>&1
is "$?" 0 "lint --json: the warnings as {line, column, message}"
sed 's/expires: 2021-01-01}$/expires: 2099-01-01}/' "$T/warn.yaml" >"$T/warn2.yaml"
"$CORDON" policy lint "$T/warn2.yaml" >/dev/null 2>"$T/err"
grep -c "warning:" "$T/err" >"$T/n"
is "$(cat "$T/n")" 1 "grants not yet expired: only the profile warning"
"$CORDON" policy lint "$E/coding-agent.yaml" 2>"$T/err" >/dev/null
is "$(cat "$T/err")" "" "the shipped examples lint without warnings"
done_testing
