#!/bin/sh
# cordon serve (issue 18): webhooks.  A held call and a break-glass grant
# (made, then used) each post a JSON message to --notify-webhook: Slack's
# "text" (agent text escaped so nothing becomes a link or mention), the
# structured event, a link; never the call's arguments.  Each message is
# signed (X-Cordon-Signature: HMAC-SHA256 of "t.body" under the webhook
# key): the receiver checks it, and a wrong key fails the check.  A webhook
# that refuses connections is tried three times and recorded
# (console.webhook), its URL's secret path never logged, and the held call
# is approved and runs meanwhile: nothing waits on a webhook.  (Root only:
# the console is the operator's.)
. "${CORDON_SRC:-.}/tests/lib.sh"
. "$CORDON_SRC/tests/helpers/serve-start.sh"

cat >"$T/p.yaml" <<'YAML'
version: 1
agents:
  - {id: coder, owner: alice}
tools:
  - {id: shell, kind: command}
profiles:
  ws: {workspace: write}
approvers:
  people: [alice]
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
YAML
P="$T/p.yaml"
cd "$T" || exit 1

# The receiver: every POST as one JSON line (path, signature header, body).
cat >"$T/recv.py" <<'PY'
import json, sys
from http.server import BaseHTTPRequestHandler, HTTPServer
out = open(sys.argv[1], 'a')
class H(BaseHTTPRequestHandler):
    def do_POST(self):
        n = int(self.headers.get('Content-Length', 0))
        body = self.rfile.read(n).decode()
        out.write(json.dumps({'path': self.path, 'sig': self.headers.get('X-Cordon-Signature'),
                              'ctype': self.headers.get('Content-Type'), 'body': body}) + '\n')
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
while [ ! -s "$T/port" ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
port=$(cat "$T/port")
ok "the receiver listens ($port)" test -n "$port"
# A closed port: connections refused.
dead=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')

nok "a webhook that is not a URL is refused at start" \
	"$CORDON" serve --listen 127.0.0.1:0 --policy "$P" --notify-key "$T/wh.key" \
	--notify-webhook "ftp://127.0.0.1/x"
serve_start --listen 127.0.0.1:0 --policy "$P" --notify-key "$T/wh.key" \
	--notify-webhook "http://127.0.0.1:$port/hooks/T000SECRETPATH" \
	--notify-webhook "http://127.0.0.1:$dead/hooks/DEADSECRET"
ok "serve starts with two webhooks ($origin)" test -n "$origin"
is "$(stat -c %a "$T/wh.key") $(stat -c %s "$T/wh.key")" "600 32" "... the webhook key is made, 0600, 32 bytes"

touch victim && chmod 0666 victim
task=$(printf '<!channel> <https://evil.example|click> &')
t0=$(date +%s)
("$CORDON" run --policy "$P" --agent coder --task "$task" --approval-timeout 60s -- \
	rm -f victim SECRET-ARG-VALUE >"$T/o1" 2>&1; echo $? >"$T/rc1") &
run_pid=$!
id=""
i=0
while [ -z "$id" ] && [ $i -lt 100 ]; do
	id=$("$CORDON" approvals list | awk '$2 == "pending" {print $1; exit}')
	[ -n "$id" ] || sleep 0.1
	i=$((i + 1))
done
ok "a call is held ($id)" test -n "$id"
i=0
while ! grep -q call.held "$T/got" 2>/dev/null && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
ok "... the webhook got a call.held message" grep -q '"event\\": \?\\"call.held' "$T/got"
# Approve at once, through the CLI: the dead webhook is still being tried.
"$CORDON" approvals approve "$id" --policy "$P" --as alice >/dev/null 2>&1
wait $run_pid
is "$(cat "$T/rc1")" 0 "... approved, the run finished while the dead webhook was still tried"
ok "... within 5 s of being held (no wait on the webhooks)" test $(($(date +%s) - t0)) -lt 5

python3 - "$T/got" "$T/wh.key" "$id" "$origin" >"$T/check" <<'PY'
import hashlib, hmac, json, sys, time
key = open(sys.argv[2], 'rb').read()
for line in open(sys.argv[1]):
    r = json.loads(line)
    b = json.loads(r['body'])
    if b.get('event') != 'call.held': continue
    t, v1 = (p.split('=', 1)[1] for p in r['sig'].split(','))
    mac = hmac.new(key, (t + '.' + r['body']).encode(), hashlib.sha256).hexdigest()
    bad = hmac.new(b'x' * 32, (t + '.' + r['body']).encode(), hashlib.sha256).hexdigest()
    c = b['call']
    print('path', r['path'])
    print('ctype', r['ctype'])
    print('signed', mac == v1)
    print('wrong-key', bad == v1)
    print('fresh', abs(time.time() - int(t)) < 60)
    print('id', c['id'] == sys.argv[3])
    print('fields', c['agent'], c['tool'], c['action'], len(c['args_sha256']))
    print('url', b['url'] == sys.argv[4] + '/#' + sys.argv[3])
    print('task', c['task'])
    print('text', b['text'])
    print('secret', 'SECRET-ARG-VALUE' in r['body'])
PY
g() { sed -n "s/^$1 //p" "$T/check"; }
is "$(g path)" "/hooks/T000SECRETPATH" "... posted to the webhook's path"
is "$(g ctype)" "application/json" "... as JSON"
is "$(g signed)" "True" "... signed with the webhook key (HMAC-SHA256 of t.body)"
is "$(g wrong-key)" "False" "... a check with another key fails"
is "$(g fresh)" "True" "... its timestamp is now"
is "$(g id)" "True" "... names the held call"
is "$(g fields)" "coder shell execute 64" "... its agent, tool, action and binding SHA-256"
is "$(g url)" "True" "... links to it on the console"
is "$(g task)" "$task" "... the task as given, in the structured part"
g text | grep -q '&lt;!channel&gt; &lt;https://evil.example|click&gt; &amp;'
is "$?" 0 "... escaped in Slack's text (no mention, no injected link)"
is "$(g secret)" "False" "... and never the call's arguments"

bg=$("$CORDON" grant break-glass --policy "$P" --agent coder --tool shell --actions execute \
	--scope argv=ls --ticket INC-7 --ttl 30m --by alice | cut -f1)
ok "a break-glass grant ($bg)" test -n "$bg"
i=0
while ! grep -q break-glass.made "$T/got" && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
ok "... the webhook got break-glass.made" grep -q "break-glass.made.*$bg" "$T/got"
"$CORDON" run --policy "$P" --agent coder -- ls >/dev/null 2>&1
is "$?" 0 "... the grant is used"
i=0
while ! grep -q break-glass.used "$T/got" && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
ok "... the webhook got break-glass.used" grep -q "break-glass.used.*$bg" "$T/got"

# The dead webhook: three tries (1 s, then 4 s apart), then a record.
i=0
while ! "$CORDON" log show --kind console.webhook 2>/dev/null | grep -q failed && [ $i -lt 150 ]; do
	sleep 0.1
	i=$((i + 1))
done
"$CORDON" log export --format jsonl | grep '"kind":"console.webhook"' >"$T/wh.rec"
ok "the dead webhook's failure is recorded (console.webhook)" grep -q "127.0.0.1:$dead failed (3 tries)" "$T/wh.rec"
grep -q SECRET "$T/wh.rec"
is "$?" 1 "... without the URL's secret path"
grep -q T000SECRETPATH "$T/wh.rec"
is "$?" 1 "... and the live webhook is not recorded as failed"

serve_stop
is "$?" 0 "serve stops on SIGTERM with webhooks running"
done_testing
