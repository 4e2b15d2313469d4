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
approvers:
  people: [root, nobody, ops-lead]
  rules:
    - id: scratch-rm
      scope: {argv: [rm, -f]}
      operands: {paths: ["/nonexistent/scratch/**"], max: 1}
grants:
  - id: rule-rm
    agent: support
    tool: shell
    actions: [execute]
    scope: {argv: [rm, -f]}
    profile: small
    approval: policy:scratch-rm
    mask: {email: pseudonymize}
    owner: ops
    justification: t
    review_by: 2030-01-01
    expires: 2030-06-30
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
  - id: held-mail
    agent: support
    tool: shell
    actions: [execute]
    scope: {argv: [mail]}
    profile: small
    approval: human
    mask: {email: redact}
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

# The audit log (issue 9 item 5): what a masking grant's run put in its
# argv is masked in every record, kept as keyed commitments; the plain
# hashes of argv, code and output are commitments too.
"$CORDON" run --policy "$T/policy.yaml" --agent support --task T-9 -- sh -c 'echo carol@example.com 4111-1111-1111-1111' >"$T/out9" 2>/dev/null
is "$?" 0 "a run with an address in its argv"
"$CORDON" run --policy "$T/policy.yaml" --agent support --task T-9 -- cat dave@example.com >/dev/null 2>&1
"$CORDON" log export --format jsonl >"$T/log9"
nok "no record holds the raw address or card (allowed and refused runs)" grep -qE 'carol@example|dave@example|4111-1111' "$T/log9"
intent=$(grep '"kind":"run.intent"' "$T/log9" | grep '"task":"T-9"')
case $intent in *'"argv":["sh","-c","echo <email:'*'> <card>"]'*) r=0 ;; *) r=1 ;; esac
is "$r" 0 "the intent keeps the argv, masked"
case $intent in *argv_sha256*|*code_sha256*) r=1 ;; *'"hashes":{"argv":"'*'"code":"'*) r=0 ;; *) r=1 ;; esac
is "$r" 0 "... its argv and code hashes became keyed commitments"
seq=$(printf '%s\n' "$intent" | sed 's/^{"seq":\([0-9]*\),.*/\1/')
ok "log confirm: the raw address" "$CORDON" log confirm "$seq" carol@example.com
printf 'carol@example.com\n' | "$CORDON" log confirm "$seq" - >/dev/null
is "$?" 0 "log confirm: the value read from stdin (VALUE -), out of argv"
is "$("$CORDON" log confirm --json "$seq" carol@example.com)" "{\"seq\":$seq,\"match\":true,\"matches\":[{\"in\":\"argv\",\"type\":\"email\"}]}" "log confirm --json: the match as JSON"
is "$("$CORDON" log confirm "$seq" --json eve@example.com)" "{\"seq\":$seq,\"match\":false,\"matches\":[]}" "log confirm --json: no match as JSON (exit 1 too)"
ok "log confirm: the card, written another way" "$CORDON" log confirm "$seq" '4111 1111 1111 1111'
nok "log confirm: not another address" "$CORDON" log confirm "$seq" eve@example.com
ok "log confirm: the whole command line" "$CORDON" log confirm "$seq" --argv -- sh -c 'echo carol@example.com 4111-1111-1111-1111'
nok "log confirm: not another command line" "$CORDON" log confirm "$seq" --argv -- sh -c 'echo x'
result=$(grep '"kind":"run.result"' "$T/log9" | grep '"task":"T-9"' | head -1)
seq=$(printf '%s\n' "$result" | sed 's/^{"seq":\([0-9]*\),.*/\1/')
printf 'carol@example.com 4111-1111-1111-1111\n' >"$T/raw9"
ok "log confirm: the raw stdout behind the result's commitment" "$CORDON" log confirm "$seq" --file "stdout:$T/raw9"
nok "log confirm: ... not the masked stdout" "$CORDON" log confirm "$seq" --file "stdout:$T/out9"
denied=$(grep '"kind":"decision"' "$T/log9" | grep '"decision":"deny"' | grep '"task":"T-9"')
case $denied in *'"argv":["cat","<email>"]'*) r=0 ;; *) r=1 ;; esac
is "$r" 0 "a refused run's argv is masked as strictly as the policy's grants mask"
env CORDON_MASK_KEY="$T/none" "$CORDON" log confirm "$seq" --file "stdout:$T/raw9" 2>"$T/err9"
is "$?" 125 "without the key nothing is confirmed (125: cannot check, not a refutation)"
nok "... and no key is made" test -e "$T/none"
"$CORDON" run --policy "$T/policy.yaml" --agent support --task T-10 -- echo erin@example.com >/dev/null
"$CORDON" log export --format jsonl --task T-10 | grep '"kind":"run.intent"' >"$T/log10"
grep -q '"argv":\["echo","erin@example.com"\]' "$T/log10"
is "$?" 0 "a grant without mask: its argv is logged as given"
# A held call: the approval records show the arguments masked as well
# (the person deciding sees them through `cordon approvals show`).
"$CORDON" run --policy "$T/policy.yaml" --agent support --task T-11 --approval-timeout 1s -- mail frank@example.com >/dev/null 2>&1
"$CORDON" log export --format jsonl --task T-11 | grep '"kind":"approval\.' >"$T/log11"
is "$(wc -l <"$T/log11" | tr -d ' ')" 2 "a request and its expiry are recorded"
nok "... neither holds the raw address" grep -q 'frank@' "$T/log11"
is "$(grep -c '"args":{"argv":\["mail","<email>"\]' "$T/log11")" 2 "... both hold the masked arguments"
is "$(grep -c '"commitments":{' "$T/log11")" 2 "... and their commitments"
seq=$(sed -n 1p "$T/log11" | sed 's/^{"seq":\([0-9]*\),.*/\1/')
ok "... which the key's holder can confirm" "$CORDON" log confirm "$seq" frank@example.com
"$CORDON" approvals list --all 2>/dev/null | grep -q 'frank@example.com'
is "$?" 0 "the approvals queue (private state) keeps the raw arguments for the approver"
# Proposal mode would keep the agent's files, paths and hashes unmasked:
# refused under a masking grant.
"$CORDON" run --policy "$T/policy.yaml" --agent support --task T-12 --propose -- sh -c 'echo jane@example.com > jane@example.com.txt' >"$T/out12" 2>"$T/err12"
is "$?" 125 "--propose under a masking grant is refused"
ok "... saying why" grep -q 'proposal mode' "$T/err12"
nok "... and nothing was written" test -e "$T/work/jane@example.com.txt"
# A command line with bytes that are not UTF-8 is withheld in the approval
# records (approvals keep them hex-encoded, which the scanner cannot see).
"$CORDON" run --policy "$T/policy.yaml" --agent support --task T-13 --approval-timeout 1s -- mail "$(printf 'kim@example.com\377')" >/dev/null 2>&1
"$CORDON" log export --format jsonl --task T-13 >"$T/log13"
nok "a non-UTF-8 argument is not in any record, raw or hex" grep -qE 'kim@|6b696d406578' "$T/log13"
grep -q 'not text, cannot be masked' "$T/log13"
is "$?" 0 "... it is withheld"
# Free text of such records is masked too: an approver rule's reason names
# the operand; a person's comment may quote the call.
"$CORDON" run --policy "$T/policy.yaml" --agent support --task T-14 -- rm -f grace@example.com >/dev/null 2>"$T/err14"
is "$?" 125 "an approver rule refuses an operand outside its paths"
"$CORDON" log export --format jsonl --task T-14 >"$T/log14"
grep -q 'outside the rule' "$T/log14"
is "$?" 0 "... its reason is on the record"
nok "... without the raw address" grep -q 'grace@' "$T/log14"
("$CORDON" run --policy "$T/policy.yaml" --agent support --task T-15 --approval-timeout 20s -- mail ivan@example.com >/dev/null 2>&1) &
apid=$!
id=
i=0
while [ -z "$id" ] && [ $i -lt 100 ]; do
	id=$("$CORDON" approvals list 2>/dev/null | grep -o 'ap-[0-9a-f]*' | head -1)
	[ -n "$id" ] || sleep 0.1
	i=$((i + 1))
done
"$CORDON" approvals deny "$id" --as ops-lead --reason 'ivan@example.com is not a customer of ours' >/dev/null 2>&1
wait "$apid"
"$CORDON" log export --format jsonl --task T-15 | grep '"kind":"approval.denied"' >"$T/log15"
is "$(wc -l <"$T/log15" | tr -d ' ')" 1 "a person's denial of a masked call is recorded"
nok "... their reason without the raw address" grep -q 'ivan@' "$T/log15"
grep -q 'is not a customer' "$T/log15"
is "$?" 0 "... the rest of it kept"
ok "the log verifies" "$CORDON" log verify
done_testing
