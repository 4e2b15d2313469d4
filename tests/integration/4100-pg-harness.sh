#!/bin/sh
# 4100-pg-harness.sh — the PostgreSQL the store tests use (tests/helpers/
# pg-start.sh): it starts as uid 65534, listens on a Unix socket only, keeps
# fsync and synchronous_commit on (the write-ahead tests need real
# durability), refuses a wrong password, and stops and starts again on the
# same data.
. "${CORDON_SRC:-.}/tests/lib.sh"
. "$CORDON_SRC/tests/helpers/pg-start.sh"

pg_start || { done_testing; exit; }
is "$(ps -o uid= -p "$PG_PID" | tr -d ' ')" 65534 "postgres runs as uid 65534"
is "$(pg_sql "SHOW listen_addresses")" "" "no TCP listener (listen_addresses is empty)"
is "$(pg_sql "SHOW fsync")" on "fsync is on"
is "$(pg_sql "SHOW synchronous_commit")" on "synchronous_commit is on"
ok "the socket is in the test's directory" test -S "$PG_SOCK/.s.PGSQL.5432"
refused "a wrong password is refused" "password authentication failed" \
	env PGPASSWORD=wrong psql -X -qAt -h "$PG_SOCK" -U cordon_admin -d cordon -c "SELECT 1"
pg_sql "CREATE TABLE t (x int); INSERT INTO t VALUES (42)"
pg_stop
nok "stopped: nothing answers" env PGPASSWORD="$PG_ADMIN_PW" psql -X -qAt -h "$PG_SOCK" -U cordon_admin -d cordon -c "SELECT 1"
pg_start
is "$(pg_sql "SELECT x FROM t")" 42 "restarted on the same data"
done_testing
