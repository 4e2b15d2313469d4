#!/bin/sh
# 7004-log-cut-tail.sh — a chain cut at its tail (issue 19): records
# deleted from the end together with the last checkpoint record, the
# sequence counter put back, no checkpoint file at hand.  The signed line
# of the chain's last checkpoint is kept beside the chain (meta cp_line,
# in the checkpoint's own transaction), so verify finds the chain ending
# below it: "cut", naming the chain, on SQLite and on PostgreSQL (one
# chain per host).  Records after the last checkpoint are listed as
# unanchored; deleting only those is what stays undetectable without a
# copy kept elsewhere (docs/cordon-log.md).
: "${CORDON_TEST_TIMEOUT:=180}"
export CORDON_TEST_TIMEOUT
. "${CORDON_SRC:-.}/tests/lib.sh"
. "$CORDON_SRC/tests/helpers/pg-start.sh"

APPEND=$CORDON_BUILD/tests/tools/audit-append
[ -x "$APPEND" ] || { skip "no $APPEND (make check builds it)"; done_testing; exit; }
export HOME="$T" XDG_CONFIG_HOME="$T/cfg" XDG_STATE_HOME="$T/state"
unset CORDON_AUDIT CORDON_AUDIT_KEY CORDON_AUDIT_CHECKPOINTS
"$CORDON" log keygen >/dev/null || nok "keygen" false
KEY=$T/cfg/cordon/audit.key
PUB=$T/cfg/cordon/audit.pub

# ---- SQLite ------------------------------------------------------------
L=$T/l.db
"$APPEND" --db "$L" -n 2500 --bulk --key "$KEY" --every 1000 >/dev/null
out=$("$CORDON" log verify --audit "$L" --pubkey "$PUB" 2>&1)
is "$?" 0 "sqlite: the log verifies"
case $out in *"unanchored: records 2003 to 2502 follow its last checkpoint"*) ok "... the records after the last checkpoint are unanchored" true ;;
*) nok "... the records after the last checkpoint are unanchored ($out)" true ;; esac
is "$("$CORDON" log verify --audit "$L" --json 2>/dev/null | sed -n 's/.*"unanchored":\(\[[^]]*\]\).*/\1/p')" \
	'[{"chain":"","last_checkpoint":2002,"last_seq":2502}]' "... and in --json"
sqlite3 "$L" ".backup $T/l-orig.db"
# Only unanchored records deleted, the counter put back: not detectable
# from the log alone (the documented limit).
sqlite3 "$L" "DELETE FROM records WHERE seq > 2400; UPDATE sqlite_sequence SET seq = 2400 WHERE name = 'records'"
out=$("$CORDON" log verify --audit "$L" --pubkey "$PUB" 2>&1)
is "$?" 0 "sqlite: unanchored records cut: verify cannot tell (documented limit)"
case $out in *"unanchored: records 2003 to 2400"*) ok "... it says which records nothing signed covers" true ;;
*) nok "... it says which records nothing signed covers ($out)" true ;; esac
# The last checkpoint cut with them.
sqlite3 "$L" "DELETE FROM records WHERE seq >= 2002; UPDATE sqlite_sequence SET seq = 2001 WHERE name = 'records'"
out=$("$CORDON" log verify --audit "$L" --pubkey "$PUB" 2>&1)
is "$?" 1 "sqlite: the tail cut with the last checkpoint fails verify"
case $out in *"seq 2002: cut: the chain ends at seq 2001 but its last signed checkpoint covers 2001 records"*)
	ok "... as cut, below the checkpoint's high-water mark ($out)" true ;;
*) nok "... as cut, below the checkpoint's high-water mark ($out)" true ;; esac
# A forged high-water mark is not taken: the line is signed.
sqlite3 "$L" "UPDATE meta SET value = replace(value, ' 2001 ', ' 1999 ') WHERE key = 'cp_line'"
out=$("$CORDON" log verify --audit "$L" --pubkey "$PUB" 2>&1)
is "$?" 1 "sqlite: a lowered high-water mark fails too"
case $out in *"bad signature"*) ok "... its signature does not verify ($out)" true ;;
*) nok "... its signature does not verify ($out)" true ;; esac
ok "the untouched copy verifies (control)" "$CORDON" log verify --audit "$T/l-orig.db" --pubkey "$PUB"

# ---- PostgreSQL: one chain per host ---------------------------------------
pg_start || { done_testing; exit; }
pg_schema
pg_audit_hosts a b
# write HOST N: N durable records by HOST (its UTS namespace and role),
# a checkpoint every 10.
write() {
	env PGPASSWORD="pw-${1#host-}" unshare --uts sh -c 'hostname "$0" && exec "$@"' "$1" \
		"$APPEND" --db "postgresql://host_${1#host-}@/cordon?host=$PG_SOCK" -n "$2" \
		--key "$KEY" --every 10 >/dev/null
}
write host-a 35
write host-b 15
verify() { env PGPASSWORD="$PG_ADMIN_PW" "$CORDON" log verify --audit "$ADMIN" --pubkey "$PUB" "$@"; }
out=$(verify 2>&1)
is "$?" 0 "postgresql: both chains verify"
case $out in *"chain 'host-a': records 32 to 38 follow"*"chain 'host-b': records 12 to 16 follow"*)
	ok "... each chain's unanchored records listed" true ;;
*) nok "... each chain's unanchored records listed ($out)" true ;; esac
last_cp=$(pg_sql "SELECT max(seq) FROM audit_records WHERE host = 'host-a' AND kind = 'checkpoint'")
pg_sql "DELETE FROM audit_records WHERE host = 'host-a' AND seq >= $last_cp"
out=$(verify 2>&1)
is "$?" 1 "postgresql: host-a's tail cut with its last checkpoint fails verify"
case $out in *"chain 'host-a': seq $last_cp: cut:"*) ok "... naming the chain and the seq ($out)" true ;;
*) nok "... naming the chain and the seq ($out)" true ;; esac
is "$(verify --json 2>/dev/null | sed -n 's/.*"problem":"\([^"]*\)".*"chain":"\([^"]*\)".*/\1 \2/p')" "cut host-a" \
	"... and in --json"
done_testing
