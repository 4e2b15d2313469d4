#!/bin/sh
# `cordon mcp pins approve --all` with nothing pending is done, not failed:
# it says so and exits 0 (it exited 1 silently).  Control: a named TOOL
# without a pending definition is still an error (exit 1, one line naming
# it), and --all without --server is still a usage error.
. "${CORDON_SRC:-.}/tests/lib.sh"

t() {
	$RUN_AS "$CORDON" mcp pins approve --server fs --all >"$T/out" 2>"$T/err"
	is "$?" 0 "$1: approve --all with nothing pending: exit 0"
	is "$(cat "$T/out")" "nothing pending for server 'fs'" "$1: ... saying so"
	is "$(cat "$T/err")" "" "$1: ... and nothing on stderr"
	$RUN_AS "$CORDON" mcp pins approve --server fs read_file >/dev/null 2>"$T/err"
	is "$?" 1 "$1: a named TOOL with nothing pending: exit 1"
	grep -q "no pending definition of tool 'read_file' of server 'fs'" "$T/err"
	is "$?" 0 "$1: ... naming it"
	$RUN_AS "$CORDON" mcp pins approve --all >/dev/null 2>&1
	is "$?" 2 "$1: --all without --server: usage, exit 2"
}
for_each_user t

done_testing
