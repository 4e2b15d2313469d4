#!/bin/sh
# 4102-store-pg-suites.sh — existing suites of the state database and the
# audit log, run again with the invoking user's store in PostgreSQL (one
# server, a fresh database per suite; tests/lib.sh switches on
# CORDON_TEST_PG_URI).  A suite that edits the SQLite files directly
# (4010's tampering) has its PostgreSQL counterpart in 4101; the nobody
# half of each suite keeps its SQLite files.  Then 8 concurrent writers on two hosts (4 per chain) append
# durably to one store: nothing lost, each chain dense, the log verifies
# (the advisory lock serialises the writers of a chain).
: "${CORDON_TEST_TIMEOUT:=300}" # a server, and a suite inside
export CORDON_TEST_TIMEOUT
. "${CORDON_SRC:-.}/tests/lib.sh"
. "$CORDON_SRC/tests/helpers/pg-start.sh"

pg_start || { done_testing; exit; }
n=0
for s in ${CORDON_TEST_PG_SUITES:-5010-break-glass}; do
	n=$((n + 1))
	pg_sql_db postgres "CREATE DATABASE suite$n" || continue
	CORDON_TEST_PG_URI="postgresql://cordon_admin:$PG_ADMIN_PW@/suite$n?host=$PG_SOCK" \
		sh "$CORDON_SRC/tests/integration/$s.sh" >"$T/$s.out" 2>&1
	rc=$?
	is "$rc" 0 "$s passes with the store in PostgreSQL"
	[ "$rc" = 0 ] || grep -A3 '^not ok' "$T/$s.out" | sed 's/^/#   /' | head -20
	n_ok=$(grep -c '^ok' "$T/$s.out")
	[ "$n_ok" -gt 0 ]
	is "$?" 0 "... and ran its checks ($n_ok)"
done
is "$(pg_sql_db suite1 "SELECT count(*) > 0 FROM audit_records, temp_grants")" t \
	"the records are in PostgreSQL (control)"

pg_sql_db postgres "CREATE DATABASE writers"
U="postgresql://cordon_admin:$PG_ADMIN_PW@/writers?host=$PG_SOCK"
APPEND="$CORDON_BUILD/tests/tools/audit-append"
pids=""
for h in host-a host-b; do
	for i in 1 2 3 4; do
		unshare --uts sh -c 'hostname "$0" && exec "$@"' "$h" \
			"$APPEND" --db "$U" -n 100 --agent "$h-w$i" >/dev/null 2>"$T/$h-$i.err" &
		pids="$pids $!"
	done
done
fails=0
for p in $pids; do wait "$p" || fails=$((fails + 1)); done
is "$fails" 0 "8 writers on two hosts finished without an error"
for f in "$T"/host-*.err; do [ -s "$f" ] && diag "$f: $(head -2 "$f")"; done
is "$(pg_sql_db writers "SELECT host || ':' || count(*) || ':' || max(seq) FROM audit_records GROUP BY host ORDER BY host" | tr '\n' ' ')" \
	"host-a:400:400 host-b:400:400 " "nothing lost, each chain dense"
ok "the log verifies" "$CORDON" log verify --audit "$U"
done_testing
