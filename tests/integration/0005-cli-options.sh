#!/bin/sh
# One option rule for every command: long options by their exact name only
# (getopt_long's prefix abbreviations are refused: `run --time` used to mean
# --timeout), and an unknown option names the nearest known one.  Usage
# errors keep each command's code: 2, and 125 for cordon run.  Positive
# controls: the exact names are accepted.
. "${CORDON_SRC:-.}/tests/lib.sh"
P="$CORDON_SRC/examples/policies/coding-agent.yaml"

# expect CODE PATTERN DESC CMD...: exit CODE, stderr matches PATTERN (grep -F).
expect() {
	_code=$1 _pat=$2 _d=$3
	shift 3
	"$@" >/dev/null 2>"$T/err"
	_rc=$?
	is "$_rc" "$_code" "$_d: exit $_code"
	grep -qF -- "$_pat" "$T/err"
	is "$?" 0 "$_d: says \"$_pat\""
	[ "$(wc -l <"$T/err" | tr -d ' ')" = 1 ]
	is "$?" 0 "$_d: in one line"
}

# getopt_long commands: abbreviations refused, did-you-mean.
expect 125 "unknown option '--time' (did you mean '--timeout'?)" "run --time" \
	"$CORDON" run --time 5s -- true
expect 125 "unknown option '--timout' (did you mean '--timeout'?)" "run --timout" \
	"$CORDON" run --timout 5s -- true
expect 125 "unknown option '--tim' (did you mean '--timeout'?)" "run --tim=5s" \
	"$CORDON" run --tim=5s -- true
expect 125 "option '--timeout' needs a value" "run --timeout without a value" \
	"$CORDON" run --timeout
expect 125 "option '--dry-run' takes no value" "run --dry-run=1" \
	"$CORDON" run --dry-run=1 -- true
ok "run --timeout 5s --dry-run (exact names) works" "$CORDON" run --timeout 5s --dry-run -- true
expect 2 "unknown option '--sinc' (did you mean '--since'?)" "log show --sinc" \
	"$CORDON" log show --sinc 1h
expect 2 "unknown option '--lin' (did you mean '--lines'?)" "log tail --lin" \
	"$CORDON" log tail --lin 3
expect 2 "unknown option '--stat' (did you mean '--state'?)" "mcp pins list --stat" \
	"$CORDON" mcp pins list --stat "$T/s.db"
expect 2 "unknown option '--sinc' (did you mean '--since'?)" "approvals list --sinc" \
	"$CORDON" approvals list --sinc 1d
expect 2 "unknown option '--sta' (did you mean '--state'?)" "proposals list --sta" \
	"$CORDON" proposals list --sta "$T/s.db"
expect 2 "unknown option '--zzzzzz' (see --help)" "a name near nothing" \
	"$CORDON" approvals list --zzzzzz

# The hand parsers of policy: the same rule and the same hint.
expect 2 "unknown option '--ag' (did you mean '--agent'?)" "policy check --ag" \
	"$CORDON" policy check "$P" --ag coder --tool shell --action execute -- true
expect 2 "unknown option '--agnet' (did you mean '--agent'?)" "policy explain --agnet" \
	"$CORDON" policy explain "$P" --agnet coder --tool shell --action execute -- true
expect 2 "unknown option '--formt' (did you mean '--format'?)" "policy matrix --formt" \
	"$CORDON" policy matrix --formt json "$P"
expect 2 "unknown option '--jsn' (did you mean '--json'?)" "policy test --jsn" \
	"$CORDON" policy test --jsn "$P"
expect 2 "unknown option '--unusd' (did you mean '--unused'?)" "policy review --unusd" \
	"$CORDON" policy review --unusd 3d "$P"
"$CORDON" policy check "$P" --agent coder --tool shell --action execute -- true >/dev/null 2>&1
r=$?
[ "$r" -ne 2 ]
is "$?" 0 "policy check with exact names is not a usage error (exit $r)"

# log confirm never echoes an unknown option: it may be the value.
"$CORDON" log confirm --s3cr3t-value >/dev/null 2>"$T/err"
is "$?" 2 "log confirm --s3cr3t-value: exit 2"
grep -q s3cr3t "$T/err"
is "$?" 1 "log confirm does not echo the unknown option"

done_testing
