#!/bin/sh
# 4106-store-forged-logins.sh — a console login link logs in only when the
# console's operator made it (session 9's attacker, S1, and N1): with a
# shared PostgreSQL store any host's writer role could INSERT a
# console_logins row for any approver, and the console (with --sign-key)
# then signed decisions in that person's name.  Now a row carries an HMAC
# under console-session.key that `serve login` makes and the console
# checks; and at login the person must still be an approver of the policy
# as it is then.  Forged rows (no MAC, a random MAC, a real MAC moved to
# another person) -> 403, no cookie, a console.login.refused record; a link
# for a person removed from the policy after it was made -> 403; controls:
# the operator's start-up link and `serve login alice` log in, through
# writer roles with only docs/postgresql-roles.sql's grants (N1: sessions
# could not be stored before).
: "${CORDON_TEST_TIMEOUT:=240}"
export CORDON_TEST_TIMEOUT
. "${CORDON_SRC:-.}/tests/lib.sh"
. "$CORDON_SRC/tests/helpers/pg-start.sh"

serve_pid=""
stop_console() { [ -n "$serve_pid" ] && kill "$serve_pid" 2>/dev/null && wait "$serve_pid" 2>/dev/null; serve_pid=""; }
pg_start || { done_testing; exit; }
trap 'stop_console; _pg_cleanup' EXIT
pg_two_hosts
for n in console alice; do "$CORDON" approvals keygen --key "$T/$n.key" >"$T/$n.pub" 2>/dev/null; done
P=$T/p.yaml
cat >"$P" <<YAML
version: 1
agents:
  - {id: coder, owner: alice}
tools:
  - {id: shell, kind: command}
approvers:
  people: [alice, bob]
  keys:
    alice: "$(cat "$T/alice.pub")"
  consoles: ["$(cat "$T/console.pub")"]
grants: []
YAML
CORDON_STATE="$B_URI" "$CORDON" serve --listen 127.0.0.1:0 --policy "$P" --sign-key "$T/console.key" >"$T/link" 2>"$T/serve.err" &
serve_pid=$!
i=0
while [ ! -s "$T/link" ] && [ $i -lt 300 ]; do sleep 0.1; i=$((i + 1)); done
oplink=$(head -1 "$T/link")
origin=${oplink%%/login*}
case $origin in http://127.0.0.1:*) ok "console B serves over the shared store as host_b ($origin)" true ;;
*) nok "console B serves ($(cat "$T/serve.err"))" true; done_testing; exit ;; esac
H=$T/h
code() { curl -s -o "$T/body" -D "$H" -w '%{http_code}' "$@"; }
# login SECRET: the HTTP status; the cookie in $T/cookie
login() {
	st=$(code -X POST -H "Origin: $origin" --data "t=$1" "$origin/login")
	awk -F': ' 'tolower($1)=="set-cookie"{print $2}' "$H" | tr -d '\r' | sed 's/;.*//' >"$T/cookie"
	echo "$st"
}
who() { code -H "Cookie: $(cat "$T/cookie")" "$origin/" >/dev/null; sed -n 's/.*<span class="who">\([^<]*\)<.*/\1/p' "$T/body" | head -1; }

is "$(login "${oplink#*t=}")" 303 "control: the operator's start-up link logs in (N1: the session is stored through a writer role)"
is "$(who)" "$(id -un)" "... as the operator"
l=$(CORDON_STATE="$B_URI" "$CORDON" serve login alice --listen "${origin#http://}" --policy "$P")
is "$(login "${l#*t=}")" 303 "control: serve login alice's link logs in"
is "$(who)" alice "... as alice"
is "$(forge "SELECT count(*) FROM console_sessions")" 2 "both sessions are rows of console_sessions"

mint() { # PERSON [MAC]: a row host A inserts; prints the secret
	secret=$(od -An -N32 -tx1 /dev/urandom | tr -d ' \n')
	hash=$(printf '%s' "$secret" | sha256sum | cut -c1-64)
	now=$(date +%s)
	forge "INSERT INTO console_logins (hash, person, created, expires${2:+, mac}) VALUES ('$hash', '$1', $now, $((now + 600))${2:+, '$2'})" >/dev/null
	echo "$secret"
}
s=$(mint alice)
is "$(forge "SELECT count(*) FROM console_logins")" 1 "host A's writer role inserted a login row for alice"
is "$(login "$s")" 403 "a row with no MAC logs no one in"
is "$(cat "$T/cookie")" "" "... no cookie"
case $(cat "$T/body") in *"not made by this console"*) ok "... and the page says why" true ;;
*) nok "... and the page says why ($(head -c 300 "$T/body"))" true ;; esac
is "$(login "$(mint alice "$(od -An -N32 -tx1 /dev/urandom | tr -d ' \n')")")" 403 "a row with a random MAC: 403"
# A real link's MAC moved onto another person (and another hash).
l=$(CORDON_STATE="$B_URI" "$CORDON" serve login bob --listen "${origin#http://}" --policy "$P")
mac=$(forge "SELECT mac FROM console_logins WHERE person = 'bob'")
is "${#mac}" 64 "serve login stores a 64-hex MAC with the row"
row=$(forge "SELECT hash || ',' || created || ',' || expires FROM console_logins WHERE person = 'bob'")
forge "DELETE FROM console_logins WHERE person = 'bob';
INSERT INTO console_logins (hash, person, created, expires, mac) VALUES ('${row%%,*}', 'alice', $(echo "$row" | cut -d, -f2), ${row##*,}, '$mac')" >/dev/null
is "$(login "${l#*t=}")" 403 "bob's link re-pointed at alice: 403"
is "$(login "$(mint alice "$mac")")" 403 "bob's MAC copied under a new hash for alice: 403"
# Removed from the policy after the link was made.
l=$(CORDON_STATE="$B_URI" "$CORDON" serve login bob --listen "${origin#http://}" --policy "$P")
sed -i 's/people: \[alice, bob\]/people: [alice]/' "$P"
is "$(login "${l#*t=}")" 403 "a link for bob, removed from approvers.people since: 403"
case $(cat "$T/body") in *"not among the policy"*"approvers.people"*) ok "... saying so" true ;;
*) nok "... saying so ($(head -c 300 "$T/body"))" true ;; esac
stop_console
n=$("$CORDON" log export --format jsonl 2>"$T/export.err" | grep -c '"console.login.refused"')
ok "each refusal is a console.login.refused record ($n)" test "$n" -ge 5
done_testing
