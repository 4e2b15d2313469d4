#!/bin/sh
# THREATS row 42: 8 parallel writers x 500 records lose nothing and the
# chain verifies; kill -9 of a writer mid-stream leaves a log that verifies,
# with an intent that never got its result reported as interrupted.
. "${CORDON_SRC:-.}/tests/lib.sh"

APPEND="$CORDON_BUILD/tests/tools/audit-append"
export HOME="$T" XDG_CONFIG_HOME="$T/cfg" CORDON_AUDIT="$T/audit.db"
unset XDG_STATE_HOME CORDON_AUDIT_KEY CORDON_AUDIT_CHECKPOINTS
"$CORDON" log keygen >/dev/null || { ok keygen false; done_testing; }
KEY="$T/cfg/cordon/audit.key"

pids=""
for i in 1 2 3 4 5 6 7 8; do
	"$APPEND" --db "$CORDON_AUDIT" -n 500 --agent "w$i" --key "$KEY" --every 100 \
		--cp-out "$CORDON_AUDIT.checkpoints" >/dev/null 2>"$T/w$i.err" &
	pids="$pids $!"
done
fails=0
for p in $pids; do wait "$p" || fails=$((fails + 1)); done
is "$fails" 0 "8 writers finished without an error"
for i in 1 2 3 4 5 6 7 8; do
	[ -s "$T/w$i.err" ] && diag "writer w$i: $(head -2 "$T/w$i.err")"
done
is "$("$CORDON" log export --format jsonl --kind decision | wc -l)" 4000 "4000 records stored"
for i in 1 5 8; do
	is "$("$CORDON" log export --format jsonl --agent "w$i" | wc -l)" 500 "writer w$i: 500 records"
done
"$CORDON" log verify >"$T/verify.out" 2>&1
is "$?" 0 "the log verifies"
ok "with checkpoints signed" grep -q "[1-9][0-9]* signatures verified" "$T/verify.out"
max=$("$CORDON" log tail -n 1 --json | python3 -c 'import json,sys; print(json.loads(sys.stdin.read())["seq"])')
n=$("$CORDON" log export --format jsonl | wc -l)
is "$max" "$n" "seq is dense: last seq = number of records"

# kill -9 in the middle of a stream of durable intent/result pairs.
"$APPEND" --db "$CORDON_AUDIT" -n 1000000 --pairs --key "$KEY" --every 50 \
	--cp-out "$CORDON_AUDIT.checkpoints" >/dev/null 2>&1 &
victim=$!
# Killed once it is well into the stream (not after a fixed sleep, which
# a loaded machine may spend before the first record).
i=0
while [ "$("$CORDON" log tail -n 1 --json 2>/dev/null | python3 -c 'import json,sys; print(json.loads(sys.stdin.read())["seq"])' 2>/dev/null || echo 0)" -lt 4100 ] &&
	[ $i -lt 300 ]; do
	sleep 0.1
	i=$((i + 1))
done
ok "the killed writer was mid-stream" test $i -lt 300
kill -9 "$victim"
wait "$victim" 2>/dev/null
ok "log verifies after kill -9 of a writer" "$CORDON" log verify
# An intent whose process died before its result.
"$APPEND" --db "$CORDON_AUDIT" -n 1 --intent-only --run crashed-run-1 >/dev/null
"$CORDON" log verify >"$T/out" 2>&1
is "$?" 0 "an intent without a result is not tampering"
ok "it is reported as interrupted" grep -q 'interrupted: run crashed-run-1' "$T/out"
# The writer after the crash continues the same chain.
"$APPEND" --db "$CORDON_AUDIT" -n 10 >/dev/null
ok "writing after the crash continues the chain" "$CORDON" log verify
done_testing
