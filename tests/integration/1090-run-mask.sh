#!/bin/sh
# cordon run with a grant that masks output: stdout and stderr come back
# masked (held until the command ends), pseudonyms match those of the MCP
# gateway's key, a grant without mask streams as before, a grant with
# fields: is refused for command output, and require_task denies a run
# without --task.
. "${CORDON_SRC:-.}/tests/lib.sh"

mkdir -p "$T/work" "$T/st"
export CORDON_AUDIT="$T/st/audit.db" CORDON_STATE="$T/st/state.db" CORDON_MASK_KEY="$T/conf/mask.key"
cat >"$T/policy.yaml" <<'YAML'
version: 1
agents:
  - id: support
    owner: ops
tools:
  - id: shell
    kind: command
profiles:
  small: {memory: 128M, timeout: 10s}
grants:
  - id: masked-cat
    agent: support
    tool: shell
    actions: [execute]
    scope: {argv: [sh, -c]}
    profile: small
    mask: {email: pseudonymize, card: redact, secret: drop}
    require_task: true
    owner: ops
    justification: t
    review_by: 2030-01-01
    expires: 2030-06-30
  - id: plain-echo
    agent: support
    tool: shell
    actions: [execute]
    scope: {argv: [echo]}
    profile: small
    owner: ops
    justification: t
    review_by: 2030-01-01
    expires: 2030-06-30
  - id: scoped-printf
    agent: support
    tool: shell
    actions: [execute]
    scope: {argv: [printf]}
    profile: small
    fields: [id]
    owner: ops
    justification: t
    review_by: 2030-01-01
    expires: 2030-06-30
YAML
cd "$T/work" || exit 1
out=$("$CORDON" run --policy "$T/policy.yaml" --agent support --task T-1 -- sh -c 'echo "mail bob@example.com card 4111-1111-1111-1111"; echo "AKIAIOSFODNN7EXAMPLE leaked" >&2' 2>"$T/err")
rc=$?
is "$rc" 0 "a masked run exits as its command"
case $out in 'mail <email:'????????'> card <card>') r=0 ;; *) r=1 ;; esac
is "$r" 0 "stdout is masked ($out)"
is "$(cat "$T/err")" " leaked" "stderr is masked (the key dropped)"
p1=$(printf '%s' "$out" | grep -o '<email:[0-9a-f]*>')
out=$("$CORDON" run --policy "$T/policy.yaml" --agent support --task T-2 -- sh -c 'echo BOB@example.com' 2>/dev/null)
is "$out" "$p1" "the same address, the same pseudonym in another run"
is "$(stat -c %a "$CORDON_MASK_KEY")" 600 "the key was created 0600"
out=$("$CORDON" run --policy "$T/policy.yaml" --agent support -- sh -c 'echo bob@example.com' 2>"$T/err")
[ $? -ne 0 ]
is "$?" 0 "without --task the run is refused (require_task)"
nok "... and nothing ran" sh -c "printf '%s' '$out' | grep -q bob"
grep -q 'requires a task' "$T/err"
is "$?" 0 "... saying why"
is "$("$CORDON" run --policy "$T/policy.yaml" --agent support -- echo bob@example.com)" "bob@example.com" "a grant without mask: output as is"
"$CORDON" run --policy "$T/policy.yaml" --agent support -- printf x >/dev/null 2>"$T/err"
[ $? -ne 0 ]
is "$?" 0 "a grant with fields: is refused for command output"
done_testing
