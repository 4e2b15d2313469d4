#!/bin/sh
# Issue 21 (warm path, root's share): a root run takes its host id slot
# (idslot.h) as soon as its options are read, and the slot's keeper checks
# the id while the policy loads and the plan is built.  What must hold:
# - a run that waits for a person's approval holds no slot and no keeper
#   meanwhile (waits can last minutes; slots are few), and takes one once
#   approved;
# - the run still runs as that slot's id, and its record says so;
# - a refused run leaves no keeper behind;
# - the keeper is gone once the run has ended (nothing of the id is left).
# A slot found busy beyond this /run is replaced: 9046 checks that.
. "${CORDON_SRC:-.}/tests/lib.sh"

if [ "$(id -u)" -ne 0 ]; then
	skip "root callers only: a rootless caller's sandbox is the caller"
	done_testing
fi

# root's range as cordon reads it (idmap.h), as 9034 computes it.
subid() {
	awk -F: '($1 == "root" || $1 == "0") && $2 ~ /^[0-9]+$/ && $3 ~ /^[0-9]+$/ &&
		$2 > 0 && $2 != 65534 && $3 > 0 && $2 + $3 - 1 <= 4294967294 { print $2, $3; exit }' \
		"$1" 2>/dev/null
}
set -- $(subid /etc/subuid)
ustart=${1:-2000000000} ucount=${2:-1024}
[ "$ucount" -gt 1024 ] && ucount=1024
if [ "$ucount" -lt 64 ]; then
	skip "root's range has $ucount ids: too few for this test's window"
	done_testing
fi
# A slot near the top, away from the low ones other root runs take first.
slot=$((ucount - 50))
uid=$((ustart + slot))
export CORDON_TEST_ID_SLOTS="$slot:1"
lock=/run/cordon/ids/$uid

# The processes of the slot's id (the keeper is one), as the host sees them.
procs_of() { ps -e -o uid=,pid=,stat= | awk -v u="$uid" '$1 == u && $3 !~ /^Z/ { n++ } END { print n + 0 }'; }
# Is the slot's lock free (no run holds it)?
lock_free() { [ ! -e "$lock" ] || flock -n "$lock" true; }
field() { sed -n 's/^{"run_id".*"'"$2"'":\([0-9]*\|null\)[,}].*/\1/p' "$1" | tail -n1; }

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
chmod 0644 "$T/p.yaml"
P=$T/p.yaml
mkdir -m 0777 "$T/w"
cd "$T/w" || exit 1

# --- positive control: a plain run takes the slot and runs as its id ----------
"$CORDON" run --json --policy "$P" --agent coder -- echo ran >"$T/c.out" 2>"$T/c.err"
is "$?" 0 "control: an allowed root run runs"
is "$(field "$T/c.out" host_uid)" "$uid" "... as the window's slot id ($uid)"
is "$(procs_of)" 0 "... and once it has ended nothing runs as that id (its keeper is gone)"
ok "... and the slot's lock is free again" lock_free

# --- held for approval: no slot while it waits ---------------------------------
touch victim && chmod 0666 victim
("$CORDON" run --json --policy "$P" --agent coder --approval-timeout 60s -- rm victim \
	>"$T/a.out" 2>"$T/a.err"; echo $? >"$T/a.rc") &
bg=$!
id=""
i=0
while [ -z "$id" ] && [ $i -lt 200 ]; do
	id=$("$CORDON" approvals list | awk 'index($0, "\"victim\"") && $2 == "pending" { print $1; exit }')
	[ -z "$id" ] && sleep 0.1
	i=$((i + 1))
done
ok "a run needing approval is queued ($id)" test -n "$id"
sleep 0.5
is "$(procs_of)" 0 "while it waits, no process of the slot's id exists (no keeper)"
ok "... and the slot's lock is free" lock_free
ok "alice approves" "$CORDON" approvals approve "$id" --as alice
wait $bg
is "$(cat "$T/a.rc")" 0 "the approved run ran" || diag "$(cat "$T/a.err")"
ok "... and removed the file" test ! -e victim
is "$(field "$T/a.out" host_uid)" "$uid" "... as the slot's id, taken once approved"
is "$(procs_of)" 0 "... and nothing of that id is left after it"

# --- refused: no keeper left ----------------------------------------------------
"$CORDON" run --policy "$P" --agent coder -- cat /etc/hostname >"$T/d.out" 2>&1
is "$?" 125 "a run the policy denies is refused (125)"
is "$(procs_of)" 0 "... and leaves no process of the slot's id"
ok "... nor its lock held" lock_free

done_testing
