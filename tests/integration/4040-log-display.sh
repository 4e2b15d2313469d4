#!/bin/sh
# THREATS row 44: control characters and fake records in fields are data:
# stored as given, escaped by show, one valid JSON object per record in the
# export (a newline in a field cannot forge a line).
. "${CORDON_SRC:-.}/tests/lib.sh"

APPEND="$CORDON_BUILD/tests/tools/audit-append"
export HOME="$T" XDG_CONFIG_HOME="$T/cfg" CORDON_AUDIT="$T/audit.db"
unset XDG_STATE_HOME CORDON_AUDIT_KEY CORDON_AUDIT_CHECKPOINTS

esc=$(printf '\033')
evil=$(printf 'x\033[2J\033]0;pwned\007\n{"seq":999,"kind":"run.result","agent":"root"}\r\tz')
"$APPEND" --db "$CORDON_AUDIT" -n 1 --agent "$evil" --target "$evil" --reason "$evil" \
	--details '{"note":"a\u001b[31mred"}' >/dev/null
"$APPEND" --db "$CORDON_AUDIT" -n 1 --agent plain >/dev/null

"$CORDON" log show --table >"$T/table"
is "$?" 0 "show --table"
ok "no raw ESC reaches the table" sh -c "! grep -q '$esc' '$T/table'"
ok "no raw BEL or CR either" sh -c "! tr -d '\n' <'$T/table' | grep -q \"\$(printf '[\\007\\r]')\""
ok "ESC shown escaped" grep -q 'x\\x1b\[2J' "$T/table"
is "$(wc -l <"$T/table")" 3 "one line per record (plus the header)"

"$CORDON" log export --format jsonl >"$T/out.jsonl"
is "$(wc -l <"$T/out.jsonl")" 2 "export: one line per record"
ok "every line is a JSON object" python3 -c '
import json, sys
for line in open(sys.argv[1]):
    assert isinstance(json.loads(line), dict)' "$T/out.jsonl"
ok "the field is stored and exported byte for byte" python3 -c '
import json, sys
rec = json.loads(open(sys.argv[1]).readline())
want = sys.argv[2]
assert rec["agent"] == want and rec["target"] == want, (rec["agent"], want)
assert rec["seq"] == 1 and rec["details"]["note"] == "a\x1b[31mred"' "$T/out.jsonl" "$evil"
ok "show --json is the same" sh -c "'$CORDON' log show --json | cmp - '$T/out.jsonl'"
is "$("$CORDON" log show --agent "$evil" --json | wc -l)" 1 "filters match the raw value"
ok "verify" "$CORDON" log verify
done_testing
