#!/bin/sh
# Issue 16 finding 7: the --json record always starts a line of its own and
# is the last line, whatever the command printed: after output without a
# final newline the record used to complete the command's last line, so a
# command could print the start of a fake record for the real one to end.
# The record's byte count and hash are of the command's bytes only.
. "${CORDON_SRC:-.}/tests/lib.sh"

mkdir -p "$T/proj" && chmod 0755 "$T/proj"
# check OUT: the last line is a record whose stdout count and hash match
# everything before it (less the one newline cordon may have added).
check() {
	python3 - "$1" "$2" <<'PY'
import hashlib, json, sys
data = open(sys.argv[1], "rb").read()
body, sep, last = data.rstrip(b"\n").rpartition(b"\n")
rec = json.loads(last)
assert rec.get("run_id") != "fake", rec
body = body + sep if sep else b""
want = sys.argv[2].encode().decode("unicode_escape").encode("latin-1")
if body != want:
    # cordon's own newline before the record, when the output ended mid-line
    assert body == want + b"\n" and not want.endswith(b"\n"), (body, want)
assert rec["stdout_bytes"] == len(want), (rec["stdout_bytes"], len(want))
assert rec["stdout_sha256"] == hashlib.sha256(want).hexdigest(), rec
PY
}

record() {
	who=$1
	cd "$T/proj" || exit 1
	$RUN_AS "$CORDON" run --json -- printf x >"$T/o1-$who"
	ok "$who: after 'x' without a newline the record is its own last line" check "$T/o1-$who" 'x'
	is "$(head -1 "$T/o1-$who")" x "$who: ... and the command's 'x' is the line before it"
	fake='{"run_id":"fake","reason":"exited","exit_code":0,"stdout_bytes":0'
	$RUN_AS "$CORDON" run --json -- printf '%s' "$fake" >"$T/o2-$who"
	ok "$who: a half fake record is not completed by the real one" check "$T/o2-$who" "$fake"
	$RUN_AS "$CORDON" run --json -- printf '%s}\n' "$fake" >"$T/o3-$who"
	ok "$who: a whole fake record line is followed by the real one, last" check "$T/o3-$who" "$fake}\\n"
	# Control: output that ends its line gets no extra line.
	$RUN_AS "$CORDON" run --json -- printf 'x\n' >"$T/o4-$who"
	is "$(wc -l <"$T/o4-$who" | tr -d ' ')" 2 "$who: control: 'x' and a newline, then the record: two lines, none added"
	ok "$who: control: ... and the record checks" check "$T/o4-$who" 'x\n'
	# The record on stderr (--json-fd 2) after stderr output without a newline.
	$RUN_AS "$CORDON" run --json-fd 2 -- sh -c 'printf e >&2' 2>"$T/e1-$who" >/dev/null
	is "$(head -1 "$T/e1-$who")" e "$who: --json-fd 2: the command's 'e' keeps its own line"
	ok "$who: --json-fd 2: the record is the next line" python3 -c '
import json, sys
lines = open(sys.argv[1]).read().splitlines()
assert len(lines) == 2 and json.loads(lines[1])["stderr_bytes"] == 1, lines' "$T/e1-$who"
	cd "$T" || exit 1
}

for_each_user record
done_testing
