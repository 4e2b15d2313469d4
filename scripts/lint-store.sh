#!/bin/sh
# lint-store.sh [ROOT]: SQL and SQLite belong to the store's backend files
# (src/lib/store/store.h): no sqlite3_ call, no <sqlite3.h> and no SQL statement
# text in src/ outside src/lib/store/store-sqlite*.{c,h} and store-pg*.{c,h}
# (the PostgreSQL backend; libpq's PQ* calls are held to the same rule) (the rest of the
# store module, its interface included, is held to the same rule).  Prints each finding; exits 1 when there is one.  Run by
# scripts/lint.sh; tests/integration/0009-lint-store.sh runs it on a tree
# with a finding planted.
set -u
root=${1:-$(dirname "$0")/..}
cd "$root" || exit 2
files=$(find src -name '*.[ch]' | grep -vE '^src/lib/store/store-(sqlite|pg)[^/]*\.[ch]$' | sort)
[ -n "$files" ] || exit 0
sql='"[^"]*(SELECT [^"]*FROM|INSERT (OR [A-Z]+ )?INTO|UPDATE [a-z_]+ SET|DELETE FROM|CREATE (TABLE|INDEX)|ALTER TABLE|PRAGMA [a-z_]+|BEGIN IMMEDIATE)'
# shellcheck disable=SC2086
hits=$(grep -nE "sqlite3_|\<PQ[a-z]+\(|#[[:space:]]*include[[:space:]]*[<\"](sqlite3|libpq-fe)\.h|$sql" $files)
if [ -n "$hits" ]; then
	echo "$hits"
	echo "lint: SQL, SQLite or libpq outside the store's backends (src/lib/store/store-sqlite*.c, store-pg*.c; see store.h)" >&2
	exit 1
fi
exit 0
