#!/bin/sh
# cordon serve in a real browser over TLS (issue 18's "an approver on
# another machine"): Debian's chromium, headless, driven by playwright-core
# (tests/web/console-tls.mjs), reaches the console by a name over HTTPS,
# trusting only the console's key (its SPKI hash: no certificate errors
# ignored wholesale), and does every human step of the runbooks: log in
# through a one-time link (the cookie __Host-, Secure), approve a held
# call (the run finishes), apply a proposal (the file changes), read the
# grant matrix and the re-certification list, revoke a break-glass grant;
# the audit log records each with the approver's name.  Screenshots in
# $CORDON_BUILD/test-artifacts/.  (Root only: the console is the
# operator's; 8000 checks the sandbox cases.)
# Slow on a loaded box (each step a process and an HTTP round trip).
CORDON_TEST_TIMEOUT=${CORDON_TEST_TIMEOUT:-300}
. "${CORDON_SRC:-.}/tests/lib.sh"
. "$CORDON_SRC/tests/web/setup.sh"
. "$CORDON_SRC/tests/helpers/serve-start.sh"

if ! web_setup 2>"$T/setup.err"; then
	skip "browser test: $(cat "$T/setup.err")"
	done_testing
fi

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
    review_by: 2020-01-01
    expires: 2099-01-01
YAML
P="$T/p.yaml"
mkdir -p "$T/work" "$T/profile" "$T/ws" && chmod 0777 "$T/work"
cd "$T" || exit 1

# The proposal to apply, and the break-glass grant to revoke.
printf 'hello\n' >"$T/ws/notes.txt"
(cd "$T/ws" && "$CORDON" run --propose --agent coder -- sh -c 'echo "from the agent" >> notes.txt') \
	>/dev/null 2>&1
pid=$("$CORDON" proposals list --json | python3 -c 'import json,sys; print(json.load(sys.stdin)[0]["id"])')
ok "a proposal ($pid)" test -n "$pid"
bg=$("$CORDON" grant break-glass --policy "$P" --agent helper --tool shell --actions execute \
	--scope argv=ls --ticket INC-42 --ttl 30m --by bob | cut -f1)
ok "a break-glass grant ($bg)" test -n "$bg"

# The console's certificate, for the name console.test; the browser
# trusts its key only.
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout "$T/k.pem" \
	-out "$T/c.pem" -days 2 -subj "/CN=console.test" \
	-addext "subjectAltName=DNS:console.test" >/dev/null 2>&1
spki=$(openssl x509 -in "$T/c.pem" -pubkey -noout | openssl pkey -pubin -outform der |
	openssl dgst -sha256 -binary | base64)
ok "a certificate for console.test" test -s "$T/c.pem" -a -n "$spki"
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
want="https://console.test:$port"
serve_start --listen "127.0.0.1:$port" --origin "$want" --tls-cert "$T/c.pem" \
	--tls-key "$T/k.pem" --policy "$P"
origin=$want
link=$("$CORDON" serve login alice --policy "$P")
is "${link%%/login*}" "$origin" "serve login alice finds the TLS console ($origin)"

web_run 120 console-tls.mjs LINK="$link" ORIGIN="$origin" SPKI="$spki" CORDON="$CORDON" \
	POLICY="$P" WORKDIR="$T/work" PROPOSAL="$pid" PROPOSAL_FILE="$T/ws/notes.txt" GRANT="$bg" \
	PROFILE_DIR="$T/profile"
"$CORDON" log export --format jsonl >"$T/log"
grep '"kind":"approval.approved"' "$T/log" | grep -q 'approved over TLS'
is "$?" 0 "the approval is recorded with the browser's comment"
grep '"kind":"proposal.applied"' "$T/log" | grep -q "$pid"
is "$?" 0 "the apply is recorded"
grep '"kind":"grant.revoked"' "$T/log" | grep "$bg" | grep -q 'incident closed'
is "$?" 0 "the revoke is recorded with its reason"
ok "screenshots saved" test -s "$CORDON_BUILD/test-artifacts/serve-tls-grants.png"
serve_stop
done_testing
