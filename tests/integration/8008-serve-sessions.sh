#!/bin/sh
# cordon serve (issue 18): sessions outlive a restart, and an identity
# header from a reverse proxy.
# Sessions are rows of the state database: the SHA-256 of the cookie's
# secret, the person, the expiry and a MAC under the console's session key
# (console-session.key in the configuration directory, 0600).  A cookie
# works after a restart, with the same CSRF token (derived from the
# secret); a logout deletes the row, so after another restart the cookie is
# worth nothing; a row copied under another hash (a writer of the state
# database making itself a session of alice's) does not verify, while one
# MACed with the key does (positive control).
# --trust-proxy-header NAME: a request from loopback carrying NAME: PERSON
# is that person when PERSON is among approvers.people; an unknown person is
# refused (403) and recorded; without the flag the header is ignored.
# (Root only: the console is the operator's.)
. "${CORDON_SRC:-.}/tests/lib.sh"
. "$CORDON_SRC/tests/helpers/serve-start.sh"

export XDG_CONFIG_HOME="$T/cfg"
cat >"$T/p.yaml" <<'YAML'
version: 1
agents:
  - {id: coder, owner: alice}
tools:
  - {id: shell, kind: command}
approvers:
  people: [alice, bob]
grants:
  - id: echo
    agent: coder
    tool: shell
    actions: [execute]
    scope: {argv: [echo]}
    owner: alice
    justification: tests
    review_by: 2099-01-01
    expires: 2099-01-01
YAML
P="$T/p.yaml"
cd "$T" || exit 1
serve2_pid= sse2_pid=
trap 'stop_bg $serve_pid $serve2_pid $sse2_pid; _tap_cleanup' EXIT

start() { serve_start --listen "127.0.0.1:${port:-0}" --policy "$P" "$@"; }
stop() {
	serve_stop 2>/dev/null
	serve_pid=
}
person_of() { sed -n 's/.*<span class="who">\([^<]*\)<.*/\1/p' "$T/body" | head -1; }

start
ok "serve starts ($origin)" test -n "$origin"
is "$(stat -c %a "$XDG_CONFIG_HOME/cordon/console-session.key") $(stat -c %s "$XDG_CONFIG_HOME/cordon/console-session.key")" \
	"600 32" "the session key is made, 0600, 32 bytes"
alice=$(login_as alice "$P")
bob=$(login_as bob "$P")
ok "alice and bob logged in" test -n "$alice" -a -n "$bob"
isb "$(code -H "Cookie: $alice" "$origin/")" 200 "alice's cookie works"
csrf1=$(csrf_in_body)
# SQL on the state store, SQLite or PostgreSQL (CORDON_TEST_PG_URI): the
# values are hex digits, names and numbers only.
cat >"$T/db.py" <<'PY'
import os, sqlite3, subprocess, sys
uri = os.environ.get('CORDON_TEST_PG_URI')
if uri:
    out = subprocess.run(['psql', uri, '-Atq', '-v', 'ON_ERROR_STOP=1', '-c', sys.argv[1]],
                         check=True, capture_output=True, text=True).stdout
    sys.stdout.write(out)
else:
    db = sqlite3.connect(os.environ['CORDON_STATE'])
    for row in db.execute(sys.argv[1]):
        print('|'.join(str(x) for x in row))
    db.commit()
PY
db() { python3 "$T/db.py" "$1"; }
sha() { printf '%s' "$1" | sha256sum | cut -c1-64; }
ah=$(sha "${alice#*=}")
echo "$(db "select count(*) from console_sessions where hash = '$ah'") $(db "select count(*) from console_sessions where hash = '${alice#*=}' or person = '${alice#*=}' or mac = '${alice#*=}'")" >"$T/rows"
is "$(cat "$T/rows")" "1 0" "the state database holds the cookie's SHA-256, never the cookie"

stop
start
ok "serve restarted ($origin)" test -n "$origin"
isb "$(code -H "Cookie: $alice" "$origin/")" 200 "after the restart alice's cookie still works"
is "$(person_of)" "alice" "... as alice"
is "$(csrf_in_body)" "$csrf1" "... with the same CSRF token (bound to the session)"
code -H "Cookie: $bob" "$origin/" >/dev/null
bcsrf=$(csrf_in_body)
isb "$(code -X POST -H "Cookie: $alice" -H "Origin: $origin" --data "csrf=$bcsrf" \
	"$origin/logout")" 403 "bob's CSRF token does not log alice out"
isb "$(code -X POST -H "Cookie: $alice" -H "Origin: $origin" --data "csrf=$csrf1" \
	"$origin/logout")" 303 "alice logs out"
isb "$(code -H "Cookie: $alice" "$origin/")" 401 "... her cookie is refused at once"
stop
start
isb "$(code -H "Cookie: $alice" "$origin/")" 401 "... and after another restart"
isb "$(code -H "Cookie: $bob" "$origin/")" 200 "bob's session is still there"

# A writer of the state database copies bob's row under the hash of a
# secret it knows: no session.
forged=$(python3 -c 'import secrets; print(secrets.token_hex(32))')
fh=$(sha "$forged")
bh=$(sha "${bob#*=}")
db "insert into console_sessions select '$fh', person, mac, created, expires from console_sessions where hash = '$bh'"
isb "$(code -H "Cookie: cordon_session=$forged" "$origin/")" 401 \
	"a session row copied under another hash does not work"
"$CORDON" log export --format jsonl | grep -q '"kind":"console.session"'
is "$?" 0 "... and is recorded (console.session)"
# Positive control: the same row MACed with the key does work (the
# refused row was deleted: made again).
db "insert into console_sessions select '$fh', person, mac, created, expires from console_sessions where hash = '$bh'"
mac=$(db "select person, expires from console_sessions where hash = '$fh'" | python3 -c '
import hashlib, hmac, sys
person, exp = sys.stdin.read().strip().split("|")
key = open(sys.argv[2], "rb").read()
msg = b"cordon-session\n" + sys.argv[1].encode() + b"\0" + person.encode() + b"\0" + exp.encode() + b"\0"
print(hmac.new(key, msg, hashlib.sha256).hexdigest())' "$fh" "$XDG_CONFIG_HOME/cordon/console-session.key")
db "update console_sessions set mac = '$mac' where hash = '$fh'"
isb "$(code -H "Cookie: cordon_session=$forged" "$origin/")" 200 \
	"positive control: the row with the key's MAC works"

# Two consoles over one store: a logout in one ends the session in the
# other, its open event stream too.
"$CORDON" serve --listen 127.0.0.1:0 --policy "$P" >"$T/link2" 2>"$T/serve2.err" &
serve2_pid=$!
i=0
while [ ! -s "$T/link2" ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
origin2=$(sed 's|/login.*||' "$T/link2")
isb "$(code -H "Cookie: $bob" "$origin2/")" 200 "a second console over the same store knows bob's session"
curl -sN -H "Cookie: $bob" "$origin2/events" >"$T/sse2" 2>/dev/null &
sse2_pid=$!
code -H "Cookie: $bob" "$origin/" >/dev/null
isb "$(code -X POST -H "Cookie: $bob" -H "Origin: $origin" --data "csrf=$(csrf_in_body)" \
	"$origin/logout")" 303 "bob logs out in the first"
i=0
while kill -0 $sse2_pid 2>/dev/null && [ $i -lt 150 ]; do sleep 0.1; i=$((i + 1)); done
! kill -0 $sse2_pid 2>/dev/null
is "$?" 0 "... the second ends his event stream within seconds"
isb "$(code -H "Cookie: $bob" "$origin2/")" 401 "... and refuses his cookie"
kill $sse2_pid $serve2_pid 2>/dev/null
wait $serve2_pid 2>/dev/null
stop

# The proxy's identity header.
isb "$(code -H "X-Forwarded-User: bob" "$origin/")" 000 "(the console is stopped)"
start
isb "$(code -H "X-Forwarded-User: bob" "$origin/")" 401 \
	"without --trust-proxy-header the header is ignored"
stop
# curl reaches it at its listen address; the origin is the proxy's.
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
start --trust-proxy-header X-Forwarded-User --origin "https://console.example"
addr=http://127.0.0.1:$port
origin=https://console.example
ok "serve with --trust-proxy-header X-Forwarded-User ($addr)" test -n "$addr"
ok "... still prints a login link for the proxy's origin" grep -q '^https://console.example/login' "$T/link"
isb "$(code -H "Host: console.example" -H "X-Forwarded-User: bob" "$addr/")" 200 \
	"from loopback with the header: logged in"
is "$(person_of)" "bob" "... as bob"
pcsrf=$(csrf_in_body)
ok "... with a CSRF token" test -n "$pcsrf"
isb "$(code -H "Host: console.example" "$addr/")" 401 "without the header: not logged in"
isb "$(code -H "Host: console.example" -H "X-Forwarded-User: mallory" "$addr/")" 403 \
	"a person not in approvers.people: refused"
has "not among the policy"
is "$?" 0 "... saying why"
isb "$(code -H "Host: console.example" -H "X-Forwarded-User: coder" "$addr/grants")" 403 \
	"an agent's name: refused"
"$CORDON" log export --format jsonl | grep '"kind":"console.proxy"' | grep -q mallory
is "$?" 0 "... the refusal is recorded (console.proxy)"
isb "$(code -X POST -H "Host: console.example" -H "X-Forwarded-User: bob" \
	-H "Origin: $origin" --data "csrf=0000" "$addr/logout")" 403 \
	"a proxied post without the page's CSRF token: refused"
isb "$(code -X POST -H "Host: console.example" -H "X-Forwarded-User: bob" \
	-H "Origin: http://evil.example" --data "csrf=$pcsrf" "$addr/logout")" 403 \
	"a proxied post from another Origin: refused"
isb "$(code -X POST -H "Host: console.example" -H "X-Forwarded-User: bob" \
	-H "Origin: $origin" --data "csrf=$pcsrf" "$addr/logout")" 303 \
	"... with both: accepted"
stop

done_testing
