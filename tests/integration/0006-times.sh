#!/bin/sh
# One time parser and one formatter: every TIME option takes what `date
# -Iseconds` prints (an offset, not only Z), and every time shown is ISO
# 8601 UTC (policy explain said "expires 1909008000").  Controls: the Z form
# still works; a time without a zone, or nonsense, is still refused.
. "${CORDON_SRC:-.}/tests/lib.sh"
P="$CORDON_SRC/examples/policies/coding-agent.yaml"
export CORDON_AUDIT="$T/audit.db" CORDON_STATE="$T/state.db"

"$CORDON" run -- true >/dev/null 2>&1 # one record, so the log exists
for since in "$(date -u -Iseconds)" "$(TZ=Asia/Kolkata date -Iseconds)" \
	"2020-01-01T00:00:00-05:00" "2020-01-01T00:00:00Z" "2020-01-01" "@1577836800"; do
	"$CORDON" log show --since "$since" >/dev/null 2>"$T/err"
	is "$?" 0 "log show --since '$since' is taken"
done
"$CORDON" log show --since "2020-01-01T00:00:00" >/dev/null 2>"$T/err"
is "$?" 2 "a time of day without a zone is refused (exit 2)"
grep -q "bad time '2020-01-01T00:00:00' (write YYYY-MM-DD, .*+HH:MM" "$T/err"
is "$?" 0 "the refusal names the forms, offsets included"

# The same instant written three ways decides the same; the expiry is shown
# in ISO 8601 UTC, not epoch seconds.
for at in "2031-01-01T00:00:00Z" "2031-01-01T01:00:00+01:00" "2030-12-31T19:00:00-05:00"; do
	out=$("$CORDON" policy explain "$P" --agent coder --tool shell --action execute \
		--at "$at" -- make test 2>&1)
	case $out in
	*"expired (expires 2030-06-30T00:00:00Z, now 2031-01-01T00:00:00Z)"*) r=0 ;;
	*) r=1 ;;
	esac
	is "$r" 0 "explain --at '$at': expiry and now in ISO 8601 UTC"
done
out=$("$CORDON" policy explain "$P" --agent coder --tool shell --action execute \
	--at "2030-06-29T23:00:00-02:00" -- make test 2>&1)
case $out in *"decision: allow"*) r=0 ;; *) r=1 ;; esac
is "$r" 1 "2030-06-29T23:00:00-02:00 is 2030-06-30T01:00Z: past the expiry, not allowed"
out=$("$CORDON" policy explain "$P" --agent coder --tool shell --action execute \
	--at "2030-06-30T01:00:00+02:00" -- make test 2>&1)
case $out in *"decision: allow"*) r=0 ;; *) r=1 ;; esac
is "$r" 0 "2030-06-30T01:00:00+02:00 is 2030-06-29T23:00Z: still allowed"
out=$("$CORDON" policy explain "$P" --agent coder --tool shell --action execute \
	--at "2030-06-29T23:00:00-01:00" -- make test 2>&1)
case $out in *"decision: deny"*) r=0 ;; *) r=1 ;; esac
is "$r" 0 "2030-06-29T23:00:00-01:00 is 2030-06-30T00:00Z: expired, denied"
"$CORDON" policy matrix "$P" --at "$(date -Iseconds)" >/dev/null 2>&1
is "$?" 0 "policy matrix --at \"\$(date -Iseconds)\" is taken"
"$CORDON" approvals list --since "$(date -u -Iseconds)" >/dev/null 2>&1
is "$?" 0 "approvals list --since \"\$(date -u -Iseconds)\" is taken"
"$CORDON" policy matrix "$P" --at "next tuesday" >/dev/null 2>&1
is "$?" 2 "nonsense is refused (exit 2)"

done_testing
