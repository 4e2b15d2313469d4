#!/bin/sh
# cordon serve (issue 18): the grants page.  It shows the policy's agents
# × tools matrix, the grants due for re-certification (as `cordon policy
# review`), and the live break-glass and delegated grants, every field
# escaped; a Revoke button ends one as `cordon grant revoke` does (the row
# ended, a "grant.revoked" record naming the person).  A revoke needs the
# console's Origin, the session's CSRF token and an approver of the
# policy: the operator who is not in approvers.people is refused and the
# grant stays.  (Root only: the console is the operator's.)
. "${CORDON_SRC:-.}/tests/lib.sh"
. "$CORDON_SRC/tests/helpers/serve-start.sh"

cat >"$T/p.yaml" <<'YAML'
version: 1
agents:
  - {id: coder, owner: alice}
  - {id: helper, owner: alice}
tools:
  - {id: shell, kind: command}
  - {id: files, kind: command}
profiles:
  ws: {workspace: write}
approvers:
  people: [alice]
break_glass:
  max_ttl: 2h
grants:
  - id: echo
    agent: coder
    tool: shell
    actions: [execute]
    scope: {argv: [echo]}
    profile: ws
    owner: alice
    justification: tests
    review_by: 2099-01-01
    expires: 2099-01-01
  - id: stale
    agent: helper
    tool: files
    actions: [read]
    approval: human
    scope: {argv: [cat]}
    owner: alice
    justification: tests
    review_by: 2020-01-01
    expires: 2099-01-01
YAML
P="$T/p.yaml"
cd "$T" || exit 1

"$CORDON" run --policy "$P" --agent coder -- echo used >/dev/null 2>&1
is "$?" 0 "the echo grant is used once"
hostile=$(printf 'INC-<script>alert(1)</script>\342\200\256x')
bg=$("$CORDON" grant break-glass --policy "$P" --agent helper --tool shell --actions execute \
	--scope argv=ls --ticket "$hostile" --ttl 30m --by bob | cut -f1)
ok "a break-glass grant ($bg)" test -n "$bg"
dg=$("$CORDON" delegate --policy "$P" --from coder --to coder/sub --tool shell \
	--actions execute --scope argv=echo --ttl 10m --by bob | cut -f1)
ok "a delegated grant ($dg)" test -n "$dg"
active() { "$CORDON" grant list --json | python3 -c "import json,sys; print(' '.join(sorted(g['id'] for g in json.load(sys.stdin))))"; }
is "$(active)" "$(printf '%s\n%s\n' "$bg" "$dg" | sort | tr '\n' ' ' | sed 's/ $//')" \
	"... both active"

serve_start --listen 127.0.0.1:0 --policy "$P"
ok "serve prints a login link ($origin)" test -n "$origin"

isb "$(code "$origin/grants")" 401 "no login: the grants page is 401"
has "$bg"
is "$?" 1 "... and shows nothing"
isb "$(code -X POST -H "Origin: $origin" --data "csrf=x" "$origin/grants/$bg")" 401 \
	"no login: a revoke is refused"

op=$(login "$link")
ok "the operator (root, not an approver) logged in" test -n "$op"
isb "$(code -H "Cookie: $op" "$origin/grants")" 200 "the grants page"
python3 - "$T/body" >"$T/cells" <<'PY'
import re, sys
b = open(sys.argv[1]).read()
m = re.search(r'<table class="log matrix">(.*?)</table>', b, re.S).group(1)
tools = re.findall(r'<th>([^<]*)</th>', m.split('</tr>')[0])[1:]
for row in m.split('</tr>')[1:]:
    a = re.search(r'<tr><th>([^<]*)</th>', row)
    if not a: continue
    cells = re.findall(r'<td class="cell"[^>]*>([^<]*)</td>', row)
    for t, c in zip(tools, cells): print(a.group(1), t, c)
PY
is "$(grep '^coder shell ' "$T/cells")" "coder shell ----x-" "... coder × shell: execute, no approval"
is "$(grep '^helper files ' "$T/cells")" "helper files R-----" "... helper × files: read with approval"
is "$(grep '^coder files ' "$T/cells")" "coder files ------" "... coder × files: nothing"
python3 - "$T/body" >"$T/review" <<'PY'
import re, sys
for row in re.findall(r'<tr class="review">(.*?)</tr>', open(sys.argv[1]).read()):
    cells = re.findall(r'<td>(.*?)</td>', row)
    print(cells[0], ' '.join(re.findall(r'<span class="flag">([^<]*)</span>', row)))
PY
is "$(grep '^stale ' "$T/review")" "stale past-review never-used" \
	"... re-certification: stale is past its review date and never used"
has '<tr class="review"><td>echo</td>'
is "$?" 1 "... the used, current echo grant needs no attention"
has "<tr class=\"temp\" data-id=\"$bg\">"
is "$?" 0 "... the break-glass grant is listed"
has "<tr class=\"temp\" data-id=\"$dg\">"
is "$?" 0 "... the delegated grant is listed"
has 'ticket INC-&lt;script&gt;alert(1)&lt;/script&gt;<span class="esc">\\u202E</span>x'
is "$?" 0 "... its hostile ticket shown as text, the bidi override visible"
has '<script>alert'
is "$?" 1 "... no <script> element comes through"
csrf=$(csrf_in_body)
ok "... with a CSRF token" test -n "$csrf"

isb "$(code -X POST -H "Cookie: $op" -H "Origin: http://evil.example" --data "csrf=$csrf" \
	"$origin/grants/$bg")" 403 "a revoke from another Origin is refused"
isb "$(code -X POST -H "Cookie: $op" -H "Origin: $origin" --data "csrf=0000" \
	"$origin/grants/$bg")" 403 "a revoke with a wrong CSRF token is refused"
isb "$(code -X POST -H "Cookie: $op" -H "Origin: $origin" --data "csrf=$csrf" \
	"$origin/grants/$bg")" 403 "the operator, not in approvers.people, may not revoke"
has "refused: .*root.*"
is "$?" 0 "... and is told why (as approvals are refused)"
isb "$(code -X POST -H "Cookie: $op" -H "Origin: $origin" --data "csrf=$csrf" \
	"$origin/grants/bg-../../x")" 400 "a malformed grant id is refused"
is "$(active | wc -w)" 2 "... both grants are still active"
"$CORDON" run --policy "$P" --agent helper -- ls >/dev/null 2>&1
is "$?" 0 "... and the break-glass grant works"

alice=$(login_as alice "$P")
ok "alice (an approver) logged in" test -n "$alice"
code -H "Cookie: $alice" "$origin/grants" >/dev/null
acsrf=$(csrf_in_body)
isb "$(code -X POST -H "Cookie: $alice" -H "Origin: $origin" \
	--data "csrf=$acsrf&reason=incident+over" "$origin/grants/$bg")" 303 "alice revokes the break-glass grant"
is "$(active)" "$dg" "... it is no longer active; the delegated one is"
"$CORDON" log export --format jsonl >"$T/log"
rec=$(grep '"kind":"grant.revoked"' "$T/log" | grep "$bg")
ok "... recorded as grant.revoked" test -n "$rec"
echo "$rec" | grep -q '\\"by\\":\\"alice\\"\|"by":"alice"'
is "$?" 0 "... naming alice"
echo "$rec" | grep -q 'incident over'
is "$?" 0 "... with her reason"
isb "$(code -X POST -H "Cookie: $alice" -H "Origin: $origin" --data "csrf=$acsrf" \
	"$origin/grants/$bg")" 409 "revoking it again: 409"
"$CORDON" run --policy "$P" --agent helper -- ls >/dev/null 2>&1
is "$?" 125 "the revoked break-glass grant gives nothing any more"
isb "$(code -X POST -H "Cookie: $alice" -H "Origin: $origin" --data "csrf=$acsrf" \
	"$origin/grants/$dg")" 303 "alice revokes the delegated grant"
is "$(active)" "" "... nothing is active"
isb "$(code -H "Cookie: $alice" "$origin/grants")" 200 "the page again"
has "No break-glass or delegated grant is active"
is "$?" 0 "... says nothing is active"

done_testing
