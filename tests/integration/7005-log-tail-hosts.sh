#!/bin/sh
# 7005-log-tail-hosts.sh — `cordon log tail -f` on the shared store
# (issue 19): records another host commits appear (the follower wakes on
# the store's NOTIFY), whatever their seq against the records already
# shown (seq counts within each host's chain), and nothing shown before is
# shown again, nor any old record of a chain not shown yet.
: "${CORDON_TEST_TIMEOUT:=180}"
export CORDON_TEST_TIMEOUT
. "${CORDON_SRC:-.}/tests/lib.sh"
. "$CORDON_SRC/tests/helpers/pg-start.sh"

APPEND=$CORDON_BUILD/tests/tools/audit-append
[ -x "$APPEND" ] || { skip "no $APPEND (make check builds it)"; done_testing; exit; }
pg_start || { done_testing; exit; }
pg_schema
pg_audit_hosts a b
export HOME="$T"
unset CORDON_AUDIT CORDON_AUDIT_KEY CORDON_AUDIT_CHECKPOINTS
# write HOST N TARGET: N durable records by HOST (its UTS namespace, role).
write() {
	env PGPASSWORD="pw-${1#host-}" unshare --uts sh -c 'hostname "$0" && exec "$@"' "$1" \
		"$APPEND" --db "postgresql://host_${1#host-}@/cordon?host=$PG_SOCK" -n "$2" \
		--target "$3" >/dev/null
}
lines() { if [ -f "$T/tail.out" ]; then wc -l <"$T/tail.out" | tr -d " "; else echo 0; fi; }
wait_lines() { # wait_lines N: until the follower printed N lines (10 s)
	_i=0
	while [ "$(lines)" -lt "$1" ] && [ $_i -lt 100 ]; do sleep 0.1; _i=$((_i + 1)); done
}

write host-b 3 b-old
write host-a 25 a-old
env PGPASSWORD="$PG_ADMIN_PW" "$CORDON" log tail -f -n 4 --json --audit "$ADMIN" >"$T/tail.out" 2>"$T/tail.err" &
tp=$!
wait_lines 4
is "$(lines)" 4 "tail -f shows the last 4 records first"
write host-b 2 b-new
wait_lines 6
got=$(sed -n 's/.*"seq":\([0-9]*\).*"host":"\([^"]*\)".*"target":"\([^"]*\)".*/\2:\1:\3/p' "$T/tail.out" | tail -n +5 | tr '\n' ' ')
is "$got" "host-b:4:b-new host-b:5:b-new " \
	"host-b's new records appear, though their seq is below host-a's last one shown"
write host-a 1 a-new
wait_lines 7
is "$(sed -n 7p "$T/tail.out" | sed -n 's/.*"seq":\([0-9]*\).*"host":"\([^"]*\)".*/\2:\1/p')" "host-a:26" \
	"... then host-a's next one"
sleep 0.5
is "$(lines)" 7 "nothing old shown again (host-b's first records were never among the last 4)"
kill "$tp" 2>/dev/null
wait "$tp" 2>/dev/null
done_testing
