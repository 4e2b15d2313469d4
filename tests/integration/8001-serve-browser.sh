#!/bin/sh
# cordon serve in a real browser (issue 18): Debian's chromium, headless,
# driven by playwright-core (tests/web/console.mjs): log in through a
# one-time link, watch a held call appear live, see its hostile argument
# as text that runs no script, approve it, see the held `cordon run`
# finish.  Screenshots in $CORDON_BUILD/test-artifacts/.
. "${CORDON_SRC:-.}/tests/lib.sh"
. "$CORDON_SRC/tests/web/setup.sh"

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

"$CORDON" serve --listen 127.0.0.1:0 --policy "$T/p.yaml" >"$T/link" 2>"$T/serve.err" &
serve_pid=$!
trap 'kill $serve_pid 2>/dev/null; _tap_cleanup' EXIT
i=0
while [ ! -s "$T/link" ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
origin=$(sed 's|/login.*||' "$T/link")
link=$("$CORDON" serve login alice --origin "$origin" --policy "$T/p.yaml")
ok "a login link for alice ($origin)" test -n "$link"

mkdir -p "$T/work" "$T/profile" && chmod 0777 "$T/work"
LINK=$link ORIGIN=$origin POLICY=$T/p.yaml WORKDIR=$T/work PROFILE_DIR=$T/profile \
	SHOTS=${CORDON_BUILD}/test-artifacts NODE_PATH=$WEB_CACHE/node_modules \
	timeout 90 node "$WEB_CONSOLE_JS" >"$T/browser.tap" 2>"$T/browser.err"
rc=$?
# The browser's own TAP lines, renumbered into this test's.
while IFS= read -r line; do
	case $line in
	"ok "*) ok "browser: ${line#* - }" true ;;
	"not ok "*) nok "browser: ${line#* - }" true ;;
	"#"*) diag "${line#\# }" ;;
	esac
done <"$T/browser.tap"
is "$rc" 0 "the browser flow passed$( [ $rc = 0 ] || echo ": $(tail -3 "$T/browser.err")")"
"$CORDON" log export --format jsonl | grep '"approval.approved"' | grep -q 'ok from the browser'
is "$?" 0 "the audit log records the approval with the browser's comment"
ok "screenshots saved" test -s "$CORDON_BUILD/test-artifacts/serve-held-call.png" -a \
	-s "$CORDON_BUILD/test-artifacts/serve-approved.png"
kill $serve_pid
wait $serve_pid
done_testing
