#!/bin/sh
# cordon serve (issue 18): making break-glass and delegated grants in the
# browser.  The grants page has a form; POST /grants makes the grant with
# the function `cordon grant break-glass` and `cordon delegate` call: a
# ticket required, the policy's max_ttl, the delegation's coverage check,
# the same records, naming the person logged in (not a name in the form).
# It needs the console's Origin, the session's CSRF token and an approver
# of the policy (not an agent of the grant's line).  The webhook hears of a
# break-glass grant made here as of one made on the command line.
# (Root only: the console is the operator's.)
. "${CORDON_SRC:-.}/tests/lib.sh"
. "$CORDON_SRC/tests/helpers/serve-start.sh"

cat >"$T/p.yaml" <<'YAML'
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
YAML
P="$T/p.yaml"
cd "$T" || exit 1

cat >"$T/recv.py" <<'PY'
import json, sys
from http.server import BaseHTTPRequestHandler, HTTPServer
out = open(sys.argv[1], 'a')
class H(BaseHTTPRequestHandler):
    def do_POST(self):
        n = int(self.headers.get('Content-Length', 0))
        out.write(self.rfile.read(n).decode() + '\n')
        out.flush()
        self.send_response(200); self.end_headers(); self.wfile.write(b'ok')
    def log_message(self, *a): pass
s = HTTPServer(('127.0.0.1', 0), H)
open(sys.argv[2], 'w').write(str(s.server_port))
s.serve_forever()
PY
python3 "$T/recv.py" "$T/got" "$T/port" &
recv_pid=$!
trap 'stop_bg $recv_pid $serve_pid; _tap_cleanup' EXIT
i=0
while [ ! -s "$T/port" ] && [ $i -lt 300 ]; do sleep 0.1; i=$((i + 1)); done
port=$(cat "$T/port")

serve_start --listen 127.0.0.1:0 --policy "$P" --notify-key "$T/wh.key" \
	--notify-webhook "http://127.0.0.1:$port/hook"
ok "serve prints a login link ($origin)" test -n "$origin"

grant_of() { awk -F': ' 'tolower($1) == "x-cordon-grant" {print $2}' "$H" | tr -d '\r'; }
active() { "$CORDON" grant list --json | python3 -c "import json,sys; print(' '.join(sorted(g['id'] for g in json.load(sys.stdin))))"; }
bgform="kind=break-glass&agent=helper&tool=shell&actions=execute&scope=argv%3Dls&ticket=INC-7&ttl=30m&reason=disk+full&by=mallory"

"$CORDON" run --policy "$P" --agent helper -- ls >/dev/null 2>&1
is "$?" 125 "positive control: helper may not run ls before any grant"

isb "$(code -X POST -H "Origin: $origin" --data "$bgform" "$origin/grants")" 401 \
	"no login: making a grant is refused"
op=$(login "$link")
ok "the operator (root, not an approver) logged in" test -n "$op"
isb "$(code -H "Cookie: $op" "$origin/grants")" 200 "the grants page"
has '<form class="grant-new" method="post" action="/grants">'
is "$?" 0 "... has the form for a new grant"
csrf=$(csrf_in_body)
isb "$(code -X POST -H "Cookie: $op" -H "Origin: $origin" --data "csrf=$csrf&$bgform" \
	"$origin/grants")" 403 "the operator, not in approvers.people, may not make a grant"
has "not among the policy"
is "$?" 0 "... and is told why"

alice=$(login_as alice "$P")
ok "alice (an approver) logged in" test -n "$alice"
code -H "Cookie: $alice" "$origin/grants" >/dev/null
acsrf=$(csrf_in_body)
isb "$(code -X POST -H "Cookie: $alice" -H "Origin: http://evil.example" \
	--data "csrf=$acsrf&$bgform" "$origin/grants")" 403 "from another Origin: refused"
isb "$(code -X POST -H "Cookie: $alice" --data "csrf=$acsrf&$bgform" "$origin/grants")" 403 \
	"without an Origin: refused"
isb "$(code -X POST -H "Cookie: $alice" -H "Origin: $origin" --data "$bgform" \
	"$origin/grants")" 403 "without the CSRF token: refused"
isb "$(code -X POST -H "Cookie: $alice" -H "Origin: $origin" --data "csrf=$csrf&$bgform" \
	"$origin/grants")" 403 "with another session's CSRF token: refused"
isb "$(code -X POST -H "Cookie: $alice" -H "Origin: $origin" \
	--data "csrf=$acsrf&$(echo "$bgform" | sed 's/ttl=30m/ttl=3h/')" "$origin/grants")" 403 \
	"longer than the policy's max_ttl (2h): refused, as the CLI refuses it"
has "break-glass cap"
is "$?" 0 "... saying so"
isb "$(code -X POST -H "Cookie: $alice" -H "Origin: $origin" \
	--data "csrf=$acsrf&$(echo "$bgform" | sed 's/ticket=INC-7&//')" "$origin/grants")" 400 \
	"no ticket: refused"
isb "$(code -X POST -H "Cookie: $alice" -H "Origin: $origin" \
	--data "csrf=$acsrf&$(echo "$bgform" | sed 's/agent=helper/agent=nobody/')" \
	"$origin/grants")" 403 "an undeclared agent: refused by the policy's loader"
isb "$(code -X POST -H "Cookie: $alice" -H "Origin: $origin" \
	--data "csrf=$acsrf&$(echo "$bgform" | sed 's/argv%3Dls/colour%3Dred/')" \
	"$origin/grants")" 400 "an unknown scope key: refused"
is "$(active)" "" "... none of these made a grant"

isb "$(code -X POST -H "Cookie: $alice" -H "Origin: $origin" --data "csrf=$acsrf&$bgform" \
	"$origin/grants")" 303 "alice makes a break-glass grant"
bg=$(grant_of)
is "$(active)" "$bg" "... it is active ($bg)"
"$CORDON" run --policy "$P" --agent helper -- ls >/dev/null 2>&1
is "$?" 0 "... and helper's ls now runs"
"$CORDON" run --policy "$P" --agent helper -- cat /etc/hostname >/dev/null 2>&1
is "$?" 125 "... but only within its scope"
"$CORDON" log export --format jsonl >"$T/log"
rec=$(grep '"kind":"grant.break-glass"' "$T/log" | grep "$bg")
ok "... recorded as grant.break-glass" test -n "$rec"
echo "$rec" | grep -q '\\"by\\":\\"alice\\"\|"by":"alice"'
is "$?" 0 "... naming alice (not the form's by=mallory)"
echo "$rec" | grep -q mallory
is "$?" 1 "... mallory appears nowhere"
echo "$rec" | grep -q 'ticket INC-7: disk full'
is "$?" 0 "... with the ticket and the reason"
i=0
while ! grep -q "$bg" "$T/got" 2>/dev/null && [ $i -lt 300 ]; do sleep 0.1; i=$((i + 1)); done
grep "$bg" "$T/got" | grep -q '"break-glass.made"'
is "$?" 0 "the webhook hears of the break-glass grant made in the console"
i=0
while ! grep "$bg" "$T/got" | grep -q '"break-glass.used"' && [ $i -lt 300 ]; do sleep 0.1; i=$((i + 1)); done
grep "$bg" "$T/got" | grep -q '"break-glass.used"'
is "$?" 0 "... and of its use (break-glass.used)"
code -H "Cookie: $alice" "$origin/grants" >/dev/null
has "<tr class=\"temp\" data-id=\"$bg\">"
is "$?" 0 "the grants page lists it"

dform="kind=delegated&agent=coder&to=coder%2Fsub&tool=shell&actions=execute&scope=argv%3Decho&ttl=10m"
isb "$(code -X POST -H "Cookie: $alice" -H "Origin: $origin" \
	--data "csrf=$acsrf&$(echo "$dform" | sed 's/argv%3Decho/argv%3Drm/')" "$origin/grants")" 403 \
	"a delegation of what the parent does not hold: refused"
has "refused"
is "$?" 0 "... saying why"
isb "$(code -X POST -H "Cookie: $alice" -H "Origin: $origin" --data "csrf=$acsrf&$dform" \
	"$origin/grants")" 303 "alice delegates coder's echo to coder/sub"
dg=$(grant_of)
"$CORDON" run --policy "$P" --agent coder/sub -- echo hi >/dev/null 2>&1
is "$?" 0 "... coder/sub's echo runs"
"$CORDON" log export --format jsonl | grep '"kind":"grant.delegated"' | grep "$dg" | \
	grep -q '\\"by\\":\\"alice\\"\|"by":"alice"'
is "$?" 0 "... recorded as grant.delegated, naming alice"

done_testing
