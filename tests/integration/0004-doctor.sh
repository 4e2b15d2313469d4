#!/bin/sh
# cordon doctor: what this host enforces, with the fix for each gap.  On
# this host (user namespaces, Landlock, seccomp) it passes, as root and as
# nobody, when the audit log is writable; an unwritable audit log (no log,
# no run) is a FAIL with its fix and exit 1.  --json is one object whose
# checks name every area.
. "${CORDON_SRC:-.}/tests/lib.sh"

mkdir -p "$T/nobody"
chown 65534:65534 "$T/nobody"
t() {
	if [ "$1" = nobody ]; then D=$T/nobody; else D=$T; fi
	out=$($RUN_AS env CORDON_AUDIT="$D/a/audit.db" CORDON_STATE="$D/a/state.db" \
		CORDON_MASK_KEY="$D/a/mask.key" "$CORDON" doctor 2>&1)
	is "$?" 0 "$1: doctor passes on this host (exit 0)"
	for c in user-namespaces landlock seccomp seccomp-notify cgroup apparmor state \
		audit-log mask-key; do
		printf '%s\n' "$out" | grep -q "^ok   $c \|^warn $c "
		is "$?" 0 "$1: $c is checked"
	done
	printf '%s\n' "$out" | grep -q "^ok   landlock *Landlock ABI [1-9]"
	is "$?" 0 "$1: the Landlock ABI is named"
	out=$($RUN_AS env CORDON_AUDIT=/dev/null/audit.db CORDON_STATE="$D/a/state.db" \
		"$CORDON" doctor 2>&1)
	is "$?" 1 "$1: an audit log that cannot be written: exit 1"
	printf '%s\n' "$out" | grep -q "^FAIL audit-log .*/dev/null/audit.db (not writable)"
	is "$?" 0 "$1: ... the FAIL line names it"
	printf '%s\n' "$out" | grep -q "fix: set CORDON_AUDIT to a writable path"
	is "$?" 0 "$1: ... with the fix"
	$RUN_AS env CORDON_AUDIT="$D/a/audit.db" "$CORDON" doctor --json >"$T/j" 2>&1
	is "$?" 0 "$1: doctor --json: exit 0"
	python3 -c '
import json, sys
o = json.load(open(sys.argv[1]))
names = [c["check"] for c in o["checks"]]
assert o["ok"] is True, o
assert names[:4] == ["user-namespaces", "landlock", "seccomp", "seccomp-notify"], names
assert all(set(c) >= {"check", "ok", "needed", "found"} for c in o["checks"]), o
' "$T/j" 2>&1
	is "$?" 0 "$1: --json: {ok, checks: [{check, ok, needed, found}]}"
}
for_each_user t
"$CORDON" doctor --jsn >/dev/null 2>&1
is "$?" 2 "an unknown option: usage, exit 2"
"$CORDON" doctor extra >/dev/null 2>&1
is "$?" 2 "an argument: usage, exit 2"
done_testing
