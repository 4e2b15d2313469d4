#!/bin/sh
# cordon serve (issue 18): the web console over HTTP with curl.  Without a
# login nothing is shown; a login link is single use; a request from
# another Origin or without the CSRF token is refused; the requesting agent
# and a person the policy does not list cannot approve; an approval through
# HTTP lets the held `cordon run` finish at once, with its audit record;
# hostile arguments come back escaped; a non-loopback address without TLS
# is refused; under TLS the cookie is __Host- and Secure.  (Root only: the
# console is the operator's; the held run's sandbox cases as uid 65534
# are 7001-approvals.sh's.)
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
  people: [alice, bob]
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
# A policy that lists the agent and an outsider as people: only to make
# their login links; decisions are checked against the request's policy.
cat >"$T/other.yaml" <<'YAML'
version: 1
agents:
  - {id: someone, owner: alice}
tools:
  - {id: shell, kind: command}
approvers:
  people: [coder, mallory]
grants: []
YAML
P="$T/p.yaml"

ldd "$CORDON" | grep -q microhttpd
is "$?" 1 "the binary does not link libmicrohttpd (loaded by serve only)"
nok "a non-loopback address without TLS is refused" "$CORDON" serve --listen 0.0.0.0:0 --policy "$P"
out=$("$CORDON" serve --listen 0.0.0.0:0 --policy "$P" 2>&1)
case $out in *"not a loopback address"*--tls-cert*) ok "... saying why and how to fix it" true ;;
*) nok "... saying why and how to fix it ($out)" true ;; esac
"$CORDON" serve --listen 0.0.0.0:0 --policy "$P" >/dev/null 2>&1
is "$?" 125 "... with exit 125"

serve_start --listen 127.0.0.1:0 --policy "$P"
case $link in http://127.0.0.1:*/login\?t=*) ok "serve prints the operator's login link ($origin)" true ;;
*) nok "serve prints the operator's login link ($link; $(cat "$T/serve.err"))" true ;; esac
tok=${link#*t=}

# A held call, with hostile text in its arguments: markup, a bidi
# override, a terminal escape.
cd "$T" && touch victim1 && chmod 0666 victim1
hostile=$(printf '<img src=x onerror=alert(1)>\342\200\256evil\033[31m')
("$CORDON" run --policy "$P" --agent coder --approval-timeout 60s -- rm -f victim1 "$hostile" \
	>"$T/o1" 2>&1; echo $? >"$T/rc1") &
run_pid=$!
id=""
i=0
while [ -z "$id" ] && [ $i -lt 100 ]; do
	id=$("$CORDON" approvals list | awk '$2 == "pending" {print $1; exit}')
	[ -n "$id" ] || sleep 0.1
	i=$((i + 1))
done
ok "the call is held ($id)" test -n "$id"

isb "$(code "$origin/")" 401 "no login: the page is 401"
absent=1
grep -q "$id" "$T/body" && absent=0
grep -q victim1 "$T/body" && absent=0
is "$absent" 1 "... and shows nothing of the held call"
isb "$(code "$origin/events")" 401 "no login: the event stream is 401"
isb "$(code -X POST -H "Origin: $origin" --data "csrf=x&decision=approve" "$origin/calls/$id")" 401 \
	"no login: a decision is refused"
grep -q "max-age\|Content-Security-Policy: default-src 'none'; script-src 'self'" "$H"
is "$?" 0 "answers carry the strict Content-Security-Policy"

isb "$(code "$link")" 200 "the login link shows a login button"
grep -q "name=\"t\" value=\"$tok\"" "$T/body"
is "$?" 0 "... posting the link's secret"
isb "$(code -X POST -H "Origin: http://evil.example" --data "t=$tok" "$origin/login")" 403 \
	"a login from another Origin is refused"
isb "$(code -X POST -H "Origin: $origin" --data "t=$tok" "$origin/login")" 303 "the link logs in"
cookie=$(awk -F': ' 'tolower($1) == "set-cookie" {print $2}' "$H" | tr -d '\r')
case $cookie in cordon_session=*HttpOnly*SameSite=Strict*) ok "the session cookie is HttpOnly, SameSite=Strict" true ;;
*) nok "the session cookie is HttpOnly, SameSite=Strict ($cookie)" true ;; esac
sess=${cookie%%;*}
isb "$(code -X POST -H "Origin: $origin" --data "t=$tok" "$origin/login")" 403 \
	"the same link a second time is refused: single use"
case $(grep -c 'Set-Cookie' "$H") in 0) ok "... and sets no cookie" true ;; *) nok "... and sets no cookie" true ;; esac
isb "$(code -H "Cookie: cordon_session=$(printf '%064d' 0)" "$origin/")" 401 "a made-up session is 401"

isb "$(code -H "Cookie: $sess" "$origin/")" 200 "logged in: the held-calls page"
grep -q "$id" "$T/body"
r=$?
[ $r = 0 ] || diag "page: $(tr '\n' ' ' <"$T/body" | tail -c 800)"
is "$r" 0 "... lists the held call"
csrf=$(csrf_in_body)
ok "... with a CSRF token in its forms" test ${#csrf} -eq 64
grep -q '&lt;img src=x onerror=alert(1)&gt;' "$T/body"
is "$?" 0 "markup in an argument is escaped"
grep -q '<img' "$T/body"
is "$?" 1 "... no <img element comes through"
grep -q '\\u202E' "$T/body"
is "$?" 0 "a bidi override is shown as a visible \\u202E"
grep -qi '\\u001b' "$T/body" && ! grep -q "$(printf '\033')" "$T/body"
r=$?
is "$r" 0 "a terminal escape is shown as \\u001b, never sent raw"
sha=$("$CORDON" approvals show "$id" --json | grep -o '"args_sha256":"[0-9a-f]*"' | cut -d'"' -f4)
grep -q "class=\"sha\">$sha<" "$T/body"
is "$?" 0 "... with the binding SHA-256 ($sha)"

timeout 3 curl -s -N -H "Cookie: $sess" "$origin/events" >"$T/sse"
grep -q "^event: held" "$T/sse" && grep -q "$id" "$T/sse"
is "$?" 0 "the event stream sends the held calls"

isb "$(code -X POST -H "Cookie: $sess" -H "Origin: http://evil.example" \
	--data "csrf=$csrf&decision=approve" "$origin/calls/$id")" 403 "approve from another Origin: 403"
isb "$(code -X POST -H "Cookie: $sess" --data "csrf=$csrf&decision=approve" "$origin/calls/$id")" 403 \
	"approve without an Origin: 403"
isb "$(code -X POST -H "Cookie: $sess" -H "Origin: $origin" --data "decision=approve" \
	"$origin/calls/$id")" 403 "approve without the CSRF token: 403"
isb "$(code -X POST -H "Cookie: $sess" -H "Origin: $origin" \
	--data "csrf=$(printf '%064d' 1)&decision=approve" "$origin/calls/$id")" 403 \
	"approve with a wrong CSRF token: 403"
"$CORDON" approvals list | grep -q "$id.*pending"
is "$?" 0 "... the call is still pending"

nok "serve login refuses a name the policy does not list" "$CORDON" serve login mallory --policy "$P"
nok "serve login refuses an agent of the policy" "$CORDON" serve login coder --policy "$P"
# A link made against another policy (where coder and mallory may approve):
# the console checks the person against its own policy when the link is
# used, so neither logs in, and without a session nothing can be decided.
s_coder=$(login_as coder "$T/other.yaml")
is "$s_coder" "" "the requesting agent cannot log in with a link made against another policy"
grep -q "agent of the policy" "$T/body"
is "$?" 0 "... refused as the CLI refuses it"
isb "$(code -X POST -H "Cookie: $s_coder" -H "Origin: $origin" \
	--data "csrf=$(csrf_of "$s_coder")&decision=approve" "$origin/calls/$id")" 401 \
	"... and cannot approve its own call over HTTP"
s_mal=$(login_as mallory "$T/other.yaml")
is "$s_mal" "" "a person not in approvers.people cannot log in"
grep -q "not among the policy" "$T/body"
is "$?" 0 "... refused as the CLI refuses it"
[ -e victim1 ]
is "$?" 0 "... and nothing ran"

s_alice=$(login_as alice "$P")
start=$(date +%s)
isb "$(code -X POST -H "Cookie: $s_alice" -H "Origin: $origin" \
	--data "csrf=$(csrf_of "$s_alice")&decision=approve&comment=fine+by+me" \
	"$origin/calls/$id")" 303 "alice approves over HTTP"
wait $run_pid
is "$(cat "$T/rc1")" 0 "the held run finishes with exit 0"
ok "... at once ($(($(date +%s) - start)) s)" test $(($(date +%s) - start)) -le 5
[ ! -e victim1 ]
is "$?" 0 "... having done its work"
"$CORDON" log export --format jsonl >"$T/log"
grep '"approval.approved"' "$T/log" | grep -q '"alice"'
is "$?" 0 "the audit log records the approval by alice"
grep '"approval.approved"' "$T/log" | grep -q 'fine by me'
is "$?" 0 "... with her comment"
grep -q '"console.login"' "$T/log"
is "$?" 0 "... and the console's logins"
isb "$(code -X POST -H "Cookie: $s_alice" -H "Origin: $origin" \
	--data "csrf=$(csrf_of "$s_alice")&decision=approve" "$origin/calls/$id")" 409 \
	"approving it again: 409, an approval is used once"

# Denied over HTTP: never runs.
touch victim2 && chmod 0666 victim2
("$CORDON" run --policy "$P" --agent coder --approval-timeout 60s -- rm victim2 \
	>"$T/o2" 2>&1; echo $? >"$T/rc2") &
run_pid=$!
id2=""
i=0
while [ -z "$id2" ] && [ $i -lt 100 ]; do
	id2=$("$CORDON" approvals list | awk '$2 == "pending" {print $1; exit}')
	[ -n "$id2" ] || sleep 0.1
	i=$((i + 1))
done
isb "$(code -X POST -H "Cookie: $s_alice" -H "Origin: $origin" \
	--data "csrf=$(csrf_of "$s_alice")&decision=deny&comment=not+today" \
	"$origin/calls/$id2")" 303 "alice denies over HTTP"
wait $run_pid
is "$(cat "$T/rc2")" 125 "the denied run exits 125"
[ -e victim2 ]
is "$?" 0 "... and did not run"

# Failed logins are rate-limited per address.
i=0
while [ $i -lt 12 ]; do
	c=$(code -X POST -H "Origin: $origin" --data "t=$(printf '%064d' $i)" "$origin/login")
	i=$((i + 1))
done
is "$c" 429 "the twelfth failed login within a minute is 429"

serve_stop
is "$?" 0 "serve stops on SIGTERM with exit 0"

# Under TLS: https links, a __Host- cookie marked Secure, HSTS.
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout "$T/k.pem" \
	-out "$T/c.pem" -days 2 -subj /CN=127.0.0.1 -addext "subjectAltName=IP:127.0.0.1" 2>/dev/null
ok "a test certificate" test -s "$T/c.pem"
serve_link=$T/link2 serve_err=$T/serve2.err
serve_start --listen 127.0.0.1:0 --tls-cert "$T/c.pem" --tls-key "$T/k.pem" --policy "$P"
case $link in https://127.0.0.1:*) ok "under TLS the link is https ($origin)" true ;;
*) nok "under TLS the link is https ($link; $(cat "$T/serve2.err"))" true ;; esac
isb "$(code --cacert "$T/c.pem" -X POST -H "Origin: $origin" --data "t=${link#*t=}" "$origin/login")" \
	303 "the link logs in over TLS"
grep -qi '^Set-Cookie: __Host-cordon_session=[0-9a-f]*; Path=/; HttpOnly; SameSite=Strict; Secure' "$H"
is "$?" 0 "... with a __Host- cookie marked Secure"
grep -qi '^Strict-Transport-Security:' "$H"
is "$?" 0 "... and HSTS"
is "$(curl -s -o /dev/null -w '%{http_code}' "http://${origin#https://}/")" 000 \
	"plain HTTP to the TLS port gets no page"
serve_stop
done_testing
