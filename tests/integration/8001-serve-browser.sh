#!/bin/sh
# cordon serve in a real browser (issue 18): Debian's chromium, headless,
# driven by playwright-core (tests/web/console.mjs): log in through a
# one-time link, watch a held call appear live, see its hostile argument
# as text that runs no script, approve it, see the held `cordon run`
# finish.  Screenshots in $CORDON_BUILD/test-artifacts/.
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

serve_start --listen 127.0.0.1:0 --policy "$T/p.yaml"
link=$("$CORDON" serve login alice --origin "$origin" --policy "$T/p.yaml")
ok "a login link for alice ($origin)" test -n "$link"

mkdir -p "$T/work" "$T/profile" && chmod 0777 "$T/work"
web_run 90 console.mjs LINK="$link" ORIGIN="$origin" POLICY="$T/p.yaml" WORKDIR="$T/work" \
	PROFILE_DIR="$T/profile"
"$CORDON" log export --format jsonl | grep '"approval.approved"' | grep -q 'ok from the browser'
is "$?" 0 "the audit log records the approval with the browser's comment"
ok "screenshots saved" test -s "$CORDON_BUILD/test-artifacts/serve-held-call.png" -a \
	-s "$CORDON_BUILD/test-artifacts/serve-approved.png"
serve_stop
done_testing
