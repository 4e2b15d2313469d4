#!/bin/sh
# make lint refuses SQL and SQLite outside the store's backend (store.h):
# scripts/lint-store.sh passes the tree as it is, and fails — naming the
# file and line — on a copy with a sqlite3_ call, an #include <sqlite3.h>
# or an SQL statement planted in a module outside src/lib/store/store-sqlite*.c
# (the store's interface included); the same text inside a backend file
# passes.
. "${CORDON_SRC:-.}/tests/lib.sh"
LINT="$CORDON_SRC/scripts/lint-store.sh"

ok "the tree has no SQL outside the store's backend" sh "$LINT" "$CORDON_SRC"

# A small tree of its own: one backend file, one module, one front end.
tree() {
	rm -rf "$T/t"
	mkdir -p "$T/t/src/lib/store" "$T/t/src/lib/gate" "$T/t/src/cli"
	printf '#include <sqlite3.h>\nint f(sqlite3 *db) { return sqlite3_exec(db, "SELECT 1 FROM x", 0, 0, 0); }\n' \
		>"$T/t/src/lib/store/store-sqlite-x.c"
	cp "$T/t/src/lib/store/store-sqlite-x.c" "$T/t/src/lib/store/store-sqlite-y.h"
	printf '#include "state.h"\nint g(void) { return 0; }\n' >"$T/t/src/lib/gate/approval.c"
	printf 'static const char *m[] = { "DELETE", "GET" };\n' >"$T/t/src/cli/main.c"
	printf '/* store.h */\nstruct cd_store;\n' >"$T/t/src/lib/store/store.h"
	printf '#include <libpq-fe.h>\nvoid *f(void *c) { return PQexec(c, "SELECT 1 FROM x"); }\n' \
		>"$T/t/src/lib/store/store-pg-x.c"
}

tree
ok "backend files (SQLite and PostgreSQL) may hold SQL, SQLite and libpq calls (and HTTP's DELETE is no SQL)" sh "$LINT" "$T/t"

plant() { # FILE TEXT DESCRIPTION
	tree
	printf '%s\n' "$2" >>"$T/t/$1"
	sh "$LINT" "$T/t" >"$T/out" 2>&1
	is "$?" 1 "$3: refused"
	n=$(wc -l <"$T/t/$1" | tr -d ' ')
	grep -q "^$1:$n:" "$T/out"
	is "$?" 0 "$3: the finding names $1, line $n"
}

plant src/lib/gate/approval.c 'int h(void *db) { return sqlite3_changes(db); }' "a sqlite3_ call in a module"
plant src/cli/main.c '#include <sqlite3.h>' "#include <sqlite3.h> in a front end"
plant src/lib/gate/approval.c 'static const char q[] = "UPDATE approvals SET status = ?1";' \
	"an SQL statement in a module"
plant src/lib/gate/approval.c 'static const char q[] = "PRAGMA data_version";' "a PRAGMA in a module"
plant src/lib/store/store.h '#include "sqlite3.h"' "the interface header itself"
plant src/lib/gate/approval.c '#include <libpq-fe.h>' "#include <libpq-fe.h> in a module"
plant src/cli/main.c 'int h(void *c) { return PQstatus(c); }' "a libpq call in a front end"

done_testing
