#!/bin/sh
# 8016-serve-proxy-repeat.sh — --trust-proxy-header: a request carrying
# the identity header more than once is refused (session 9's attacker,
# P2: the first value won, so behind a proxy that appends its header
# instead of replacing it the client's own copy was taken).  Twice (any
# spelling of the name, same or different values) -> 403 and a
# console.proxy record; once -> that person (control).
CORDON_TEST_TIMEOUT=${CORDON_TEST_TIMEOUT:-120}
. "${CORDON_SRC:-.}/tests/lib.sh"

cat >"$T/p.yaml" <<'YAML'
version: 1
agents:
  - {id: coder, owner: alice}
tools:
  - {id: shell, kind: command}
approvers:
  people: [alice, bob]
grants: []
YAML
"$CORDON" serve --listen 127.0.0.1:0 --policy "$T/p.yaml" --trust-proxy-header X-Forwarded-User >"$T/link" 2>"$T/serve.err" &
serve_pid=$!
trap 'stop_bg $serve_pid; _tap_cleanup' EXIT
i=0
while [ ! -s "$T/link" ] && [ $i -lt 300 ]; do sleep 0.1; i=$((i + 1)); done
origin=$(head -1 "$T/link")
origin=${origin%%/login*}
ok "serve prints a login link ($origin)" test -n "$origin"
# who ARGS: "STATUS PERSON"
who() {
	st=$(curl -s -o "$T/body" -w '%{http_code}' "$@" "$origin/")
	echo "$st $(sed -n 's/.*<span class="who">\([^<]*\)<.*/\1/p' "$T/body" | head -1)"
}
is "$(who -H 'X-Forwarded-User: alice')" "200 alice" "control: one header names the person"
is "$(who -H 'X-Forwarded-User: bob' -H 'X-Forwarded-User: alice')" "403 " "the client's bob, then the proxy's alice: refused"
case $(cat "$T/body") in *"more than once"*) ok "... saying why" true ;; *) nok "... saying why ($(head -c 300 "$T/body"))" true ;; esac
is "$(who -H 'X-Forwarded-User: alice' -H 'x-forwarded-user: alice')" "403 " "the same value twice, another spelling of the name: refused"
is "$(who -H 'X-Forwarded-User: bob, alice')" "403 " "a comma list: refused (as before)"
kill "$serve_pid" 2>/dev/null
wait "$serve_pid" 2>/dev/null
n=$("$CORDON" log export --format jsonl 2>/dev/null | grep '"console.proxy"' | grep -c 'more than once')
is "$n" 2 "each repeated header is a console.proxy record"
done_testing
