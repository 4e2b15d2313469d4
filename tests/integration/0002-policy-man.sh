#!/bin/sh
# cordon-policy(5) documents every key of the policy file: each key of
# every keyspec table in src/lib/policy/policy*.c appears as its own '.B KEY' entry
# in the man page section for that table, marked "Required." exactly when
# the loader requires it.  A key added to the loader without its entry, or a
# new table without a section, fails here: the docs cannot drift.  The
# EXAMPLE in the page loads and passes `policy test`.
. "${CORDON_SRC:-.}/tests/lib.sh"
MAN="$CORDON_SRC/docs/cordon-policy.5"

# FUNCTION:TABLE KEY REQUIRED, one line per key, read from the code.
awk '
/^(static )?int [a-z_]+\(/ { fn = $0; sub(/^(static )?int (cd_pl_)?/, "", fn); sub(/\(.*/, "", fn) }
/struct keyspec [a-z_]+\[\] = \{/ { tb = $0; sub(/.*struct keyspec /, "", tb); sub(/\[.*/, "", tb); on = 1 }
on {
	s = $0
	while (match(s, /\{ "[a-z0-9_-]+", [01] \}/)) {
		e = substr(s, RSTART, RLENGTH); s = substr(s, RSTART + RLENGTH)
		gsub(/[{}",]/, "", e); split(e, kv, " "); print fn ":" tb, kv[1], kv[2]
	}
}
on && /\};/ { on = 0 }
' "$CORDON_SRC"/src/lib/policy/policy*.c >"$T/keys"
n=$(wc -l <"$T/keys" | tr -d ' ')
[ "$n" -ge 70 ]
is "$?" 0 "the loader's keyspec tables were read ($n keys)"

# The man page section of each table.
section() {
	case $1 in
	load_tree:spec) echo "TOP LEVEL" ;;
	load_tree:agent_spec | load_limits:spec) echo "AGENTS" ;;
	load_tree:task_spec) echo "TASKS" ;;
	load_tree:tool_spec) echo "TOOLS" ;;
	load_profiles:spec) echo "PROFILES" ;;
	load_scope:spec) echo "SCOPE" ;;
	load_args:spec) echo "ARGUMENT CONSTRAINTS" ;;
	load_rule:gspec) echo "GRANTS" ;;
	load_rule:fspec) echo "FORBID RULES" ;;
	load_examples:spec) echo "INLINE EXAMPLES" ;;
	load_request:spec) echo "EXAMPLE REQUESTS" ;;
	load_break_glass:spec) echo "BREAK-GLASS AND DELEGATION" ;;
	load_approvers:spec | load_approvers:rspec | load_approvers:ospec) echo "APPROVERS" ;;
	*) echo "" ;;
	esac
}
# The text of one section (between its .SH line and the next .SH).
sect_text() {
	awk -v want="$1" '
	/^\.SH / { h = substr($0, 5); gsub(/"/, "", h); on = (h == want); next }
	on { print }' "$MAN"
}

while read -r tbl key req; do
	sec=$(section "$tbl")
	if [ -z "$sec" ]; then
		is "unmapped" "mapped" "keyspec table $tbl has a section in cordon-policy.5 (add it to this test)"
		continue
	fi
	sect_text "$sec" >"$T/sec"
	# The line after '.B KEY' says "Required." exactly for required keys.
	next=$(awk -v k=".B $key" '$0 == k { getline; print; exit }' "$T/sec")
	found=$(grep -c -x -F ".B $key" "$T/sec")
	[ "$found" -ge 1 ]
	is "$?" 0 "cordon-policy(5) $sec documents '$key'"
	case $next in Required.*) got=1 ;; *) got=0 ;; esac
	is "$got" "$req" "cordon-policy(5) $sec: '$key' is $([ "$req" = 1 ] || echo "not ")marked Required."
done <"$T/keys"

# The placeholder the break-glass work fills, and the page renders cleanly.
grep -q '^\.SH BREAK-GLASS AND DELEGATION' "$MAN"
is "$?" 0 "the BREAK-GLASS AND DELEGATION section exists"
if command -v groff >/dev/null 2>&1; then
	LC_ALL=C.UTF-8 groff -man -Tutf8 -ww -z "$MAN" >"$T/groff" 2>&1
	is "$(cat "$T/groff")" "" "groff renders cordon-policy.5 without warnings"
else
	skip "groff is not installed"
fi

# The EXAMPLE section is a policy that loads and proves itself.
awk '/^\.SH EXAMPLE$/ { on = 1; next } on && /^\.nf/ { p = 1; next } p && /^\.fi/ { exit } p' "$MAN" |
	sed 's/\\-/-/g' >"$T/example.yaml"
ok "the EXAMPLE in cordon-policy(5) passes lint" "$CORDON" policy lint "$T/example.yaml"
ok "the EXAMPLE in cordon-policy(5) passes policy test" "$CORDON" policy test "$T/example.yaml"
done_testing
