#!/bin/sh
# 7003-log-ship.sh — `cordon log ship` (issue 19): a host that keeps a local
# SQLite log copies it into the shared store (a real PostgreSQL,
# tests/helpers/pg-start.sh), each host as a UTS namespace with its own
# writer role (docs/postgresql-roles.sql):
#   - ship copies every record, checkpoints too, and the shared log
#     verifies (hashes and signatures) against the local log's genesis;
#   - shipping again copies nothing; new local records are copied alone;
#   - kill -9 mid-ship, ship again: the shared chain is complete, verifies;
#   - a tampered local record stops the ship at it (exit 1, naming the seq),
#     the records before it shipped, none after;
#   - another log of the same host name, or a shared chain that differs,
#     is refused naming the seq; a host's role cannot ship another host's
#     chain (row-level security), and nothing is written then.
: "${CORDON_TEST_TIMEOUT:=240}"
export CORDON_TEST_TIMEOUT
. "${CORDON_SRC:-.}/tests/lib.sh"
. "$CORDON_SRC/tests/helpers/pg-start.sh"

APPEND=$CORDON_BUILD/tests/tools/audit-append
[ -x "$APPEND" ] || { skip "no $APPEND (make check builds it)"; done_testing; exit; }
pg_start || { done_testing; exit; }
pg_schema
pg_audit_hosts a b c

export HOME="$T" XDG_CONFIG_HOME="$T/cfg" XDG_STATE_HOME="$T/state"
unset CORDON_AUDIT CORDON_AUDIT_KEY CORDON_AUDIT_CHECKPOINTS
"$CORDON" log keygen >/dev/null || nok "keygen" false
KEY=$T/cfg/cordon/audit.key
PUB=$T/cfg/cordon/audit.pub

# as HOST CMD...: CMD in a UTS namespace named HOST.
as() { _h=$1; shift; unshare --uts sh -c 'hostname "$0" && exec "$@"' "$_h" "$@"; }
# append HOST DB N: N records by HOST into the local log DB, checkpoints
# every 1000 signed with KEY.
append() { as "$1" "$APPEND" --db "$2" -n "$3" --bulk --key "$KEY" --every 1000 >/dev/null; }
# ship ROLE ARGS...: cordon log ship into the shared store as ROLE.
ship() { _r=$1; shift; env PGPASSWORD="pw-${_r#host_}" "$CORDON" log ship --to "postgresql://$_r@/cordon?host=$PG_SOCK" "$@"; }
count() { pg_sql "SELECT count(*) || ':' || coalesce(max(seq), 0) FROM audit_records WHERE host = '$1'"; }
verify() { env PGPASSWORD="$PG_ADMIN_PW" "$CORDON" log verify --audit "$ADMIN" --pubkey "$PUB" "$@"; }
local_last() { sqlite3 "$1" "SELECT max(seq) FROM records"; }

# ---- ship copies, checkpoints included ---------------------------------
A=$T/a.db
append host-a "$A" 2500
la=$(local_last "$A")
ok "the local log has its records and checkpoints ($la)" [ "$la" -gt 2500 ]
out=$(ship host_a --from "$A" 2>&1)
is "$?" 0 "ship copies the local log ($out)"
is "$(count host-a)" "$la:$la" "every local record is in host-a's chain, same seq"
is "$(pg_sql "SELECT count(*) FROM audit_records WHERE host = 'host-a' AND kind = 'checkpoint'")" \
	"$(sqlite3 "$A" "SELECT count(*) FROM records WHERE kind = 'checkpoint'")" "... checkpoints too"
is "$(pg_sql "SELECT hash FROM audit_records WHERE host = 'host-a' AND seq = $la")" \
	"$(sqlite3 "$A" "SELECT lower(hex(hash)) FROM records WHERE seq = $la")" "... with the local hashes"
out=$(verify 2>&1)
is "$?" 0 "verify on the shared store passes after shipping ($out)"
case $out in *"signatures verified"*) ;; esac
sigs=$(verify --json 2>/dev/null | sed -n 's/.*"signatures":\([0-9]*\).*/\1/p')
ok "... and checked the shipped checkpoints' signatures ($sigs)" [ "${sigs:-0}" -ge 2 ]

# ---- idempotent ----------------------------------------------------------
out=$(ship host_a --from "$A" 2>&1)
is "$?" 0 "shipping again succeeds"
case $out in *"nothing new"*) ok "... and copies nothing ($out)" true ;; *) nok "... and copies nothing ($out)" true ;; esac
is "$(count host-a)" "$la:$la" "... the shared chain unchanged"
append host-a "$A" 7
out=$(ship host_a --from "$A" --json 2>&1)
is "$out" "{\"chain\":\"host-a\",\"local_last\":$((la + 7)),\"remote_before\":$la,\"shipped\":7}" \
	"seven new local records: exactly those are shipped"
la=$((la + 7))

# ---- only its own chain ------------------------------------------------
append host-a "$A" 3
out=$(ship host_b --from "$A" 2>&1)
is "$?" 1 "host-b's role cannot ship host-a's chain"
case $out in *"row-level security"*) ok "... the store refuses it ($out)" true ;; *) nok "... the store refuses it ($out)" true ;; esac
is "$(count host-a)" "$la:$la" "... and nothing was written"
ok "... the same records with host-a's role (control)" ship host_a --from "$A"
la=$((la + 3))
is "$(count host-a)" "$la:$la" "... are shipped"

# ---- kill -9 mid-ship, then resume ---------------------------------------
C=$T/c.db
append host-c "$C" 10000
lc=$(local_last "$C")
# $! is cordon itself (env execs it), not a subshell.
env PGPASSWORD=pw-c "$CORDON" log ship --to "postgresql://host_c@/cordon?host=$PG_SOCK" \
	--from "$C" --batch 50 >"$T/ship-c.out" 2>&1 &
sp=$!
i=0
while [ "$(pg_sql "SELECT count(*) FROM audit_records WHERE host = 'host-c'")" -lt 500 ] && [ $i -lt 300 ]; do
	sleep 0.05
	i=$((i + 1))
done
kill -KILL $sp 2>/dev/null
wait $sp 2>/dev/null
mid=$(pg_sql "SELECT count(*) FROM audit_records WHERE host = 'host-c'")
ok "killed mid-ship: part of host-c's chain is there ($mid of $lc)" [ "$mid" -gt 0 ] && [ "$mid" -lt "$lc" ]
is "$(pg_sql "SELECT coalesce(max(seq), 0) FROM audit_records WHERE host = 'host-c'")" "$mid" \
	"... whole batches only: no gap"
out=$(ship host_c --from "$C" --json 2>&1)
is "$?" 0 "shipping again resumes ($out)"
case $out in *"\"remote_before\":$mid,"*"\"shipped\":$((lc - mid))}"*) ok "... after the last batch that was committed" true ;;
*) nok "... after the last batch that was committed ($out)" true ;; esac
is "$(count host-c)" "$lc:$lc" "... the shared chain is complete"
ok "... and the shared log verifies" verify

# ---- a tampered local record stops the ship ---------------------------
append host-a "$A" 20
bad=$((la + 12))
sqlite3 "$A" "UPDATE records SET reason = 'rewritten' WHERE seq = $bad"
out=$(ship host_a --from "$A" 2>&1)
is "$?" 1 "a tampered local record refuses the ship"
case $out in *"breaks at seq $bad:"*) ok "... naming its seq ($out)" true ;; *) nok "... naming its seq $bad ($out)" true ;; esac
is "$(count host-a)" "$((bad - 1)):$((bad - 1))" "... the records before it shipped, none from it on"
ok "... and the shared log still verifies" verify

# ---- another log, a chain that differs ------------------------------------
A2=$T/a2.db
append host-a "$A2" 5
out=$(ship host_a --from "$A2" 2>&1)
is "$?" 1 "another local log of host-a is refused"
case $out in *"shipped from another log"*) ok "... as another log's chain ($out)" true ;; *) nok "... as another log's chain ($out)" true ;; esac
is "$(count host-a)" "$((bad - 1)):$((bad - 1))" "... nothing written"
pg_sql "UPDATE audit_records SET reason = 'changed' WHERE host = 'host-c' AND seq = 77;
UPDATE audit_records SET hash = repeat('0', 64) WHERE host = 'host-c' AND seq >= 77"
out=$(ship host_c --from "$C" 2>&1)
is "$?" 1 "a shared chain that differs from the local log is refused"
case $out in *"seq 77 of chain 'host-c' differs"*) ok "... naming the first seq that differs ($out)" true ;;
*) nok "... naming the first seq that differs ($out)" true ;; esac

done_testing
