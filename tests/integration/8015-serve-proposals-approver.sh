#!/bin/sh
# 8015-serve-proposals-approver.sh — the console's proposal decisions
# follow the approver rule held calls, grants and pins follow (session 9's
# attacker, P1: only by != agent was checked).  The policy is read again
# at each decision: alice may not decide for her own sub-agent
# alice/helper; once removed from approvers.people and declared an agent
# (after she logged in) she decides nothing; the operator (the start-up
# link) may not decide for root/helper either.  Controls: alice rejects
# coder's proposal while she is an approver; the operator, not listed in
# approvers.people, still decides (as with `cordon proposals`).
CORDON_TEST_TIMEOUT=${CORDON_TEST_TIMEOUT:-240}
. "${CORDON_SRC:-.}/tests/lib.sh"

me=$(id -un)
mkdir -p "$T/ws" && cd "$T/ws" || exit 1
prop() { # AGENT: a proposing run; prints the new proposal's id
	"$CORDON" run --propose --agent "$1" --task t -- sh -c "echo $2 > $2.txt" >/dev/null 2>&1
	"$CORDON" proposals list --json | python3 -c "import json,sys; print([p['id'] for p in json.load(sys.stdin) if p.get('agent') == '$1' and p['status'] == 'pending'][0])"
}
pa=$(prop alice/helper a)
pb=$(prop coder b)
pd=$(prop "$me/helper" d)
pc=$(prop coder2 c)
ok "four proposals ($pa $pb $pc $pd)" test -n "$pa" -a -n "$pb" -a -n "$pc" -a -n "$pd"
cat >"$T/p.yaml" <<'YAML'
version: 1
agents:
  - {id: coder, owner: alice}
  - {id: coder2, owner: alice}
tools:
  - {id: shell, kind: command}
approvers:
  people: [alice, carol]
grants: []
YAML
"$CORDON" serve --listen 127.0.0.1:0 --policy "$T/p.yaml" >"$T/link" 2>"$T/serve.err" &
serve_pid=$!
trap 'stop_bg $serve_pid; _tap_cleanup' EXIT
i=0
while [ ! -s "$T/link" ] && [ $i -lt 300 ]; do sleep 0.1; i=$((i + 1)); done
oplink=$(head -1 "$T/link")
origin=${oplink%%/login*}
ok "serve prints a login link ($origin)" test -n "$origin"
H=$T/h
code() { curl -s -o "$T/body" -D "$H" -w '%{http_code}' "$@"; }
login() {
	code -X POST -H "Origin: $origin" --data "t=${1#*t=}" "$origin/login" >/dev/null
	awk -F': ' 'tolower($1)=="set-cookie"{print $2}' "$H" | tr -d '\r' | sed 's/;.*//'
}
msg() { sed -n 's/.*class="message">\([^<]*\).*/\1/p' "$T/body" | head -1; }
# reject SESSION ID: the HTTP status of a reject
reject() {
	code -H "Cookie: $1" "$origin/proposal?id=$2" >/dev/null
	csrf=$(sed -n 's/.*name="csrf" value="\([0-9a-f]*\)".*/\1/p' "$T/body" | head -1)
	code -X POST -H "Cookie: $1" -H "Origin: $origin" --data "csrf=$csrf&decision=reject" "$origin/proposals/$2"
}
so=$(login "$oplink")
sa=$(login "$("$CORDON" serve login alice --listen "${origin#http://}" --policy "$T/p.yaml")")
ok "the operator and alice are logged in" test -n "$so" -a -n "$sa"
is "$(reject "$sa" "$pa")" 403 "alice may not decide her own sub-agent's proposal (alice/helper)"
case $(msg) in *"requesting agent"*) ok "... saying why" true ;; *) nok "... saying why ($(msg))" true ;; esac
is "$(reject "$so" "$pd")" 403 "the operator may not decide the proposal of $me/helper"
is "$(reject "$sa" "$pb")" 303 "control: alice rejects coder's proposal"
sed -i 's/people: \[alice, carol\]/people: [carol]/; s/^  - {id: coder2, owner: alice}/  - {id: coder2, owner: carol}\n  - {id: alice, owner: carol}/' "$T/p.yaml"
grep -q '{id: alice, owner: carol}' "$T/p.yaml"
is "$?" 0 "(the policy now declares alice an agent and lists only carol)"
is "$(reject "$sa" "$pc")" 403 "alice, removed after she logged in, decides nothing"
case $(msg) in *"agent of the policy"*) ok "... saying why" true ;; *) nok "... saying why ($(msg))" true ;; esac
is "$(reject "$so" "$pc")" 303 "control: the operator (not in approvers.people) still decides"
st=$("$CORDON" proposals list --json | python3 -c "import json,sys; d={p['id']: p['status'] for p in json.load(sys.stdin)}; print(d['$pa'], d['$pb'], d['$pc'], d['$pd'])")
is "$st" "pending rejected rejected pending" "only the two allowed decisions happened"
done_testing
