#!/bin/sh
# pg-run.sh CMD...: run CMD (a unit test) with a PostgreSQL server of its
# own (pg-start.sh), CORDON_TEST_PG_URI naming its database "cordon" as
# the owner; the server is stopped and removed on exit.
set -u
T=$(mktemp -d /tmp/cordon-pgrun.XXXXXX)
skip() { echo "# pg-run: $*" >&2; exit 1; }
diag() { echo "# $*"; }
_tap_cleanup() { rm -rf "$T"; }
. "$CORDON_SRC/tests/helpers/pg-start.sh"
pg_start || exit 1
CORDON_TEST_PG_URI="postgresql://cordon_admin:$PG_ADMIN_PW@/cordon?host=$PG_SOCK"
export CORDON_TEST_PG_URI
"$@"
