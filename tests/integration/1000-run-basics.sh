#!/bin/sh
# cordon run: identity, privileges and exit statuses, as root and rootless.
. "${CORDON_SRC:-.}/tests/lib.sh"

basics() {
	who=$1
	out=$($RUN_AS "$CORDON" run -- sh -c 'id -u; id -g; grep -E "^(CapInh|CapPrm|CapEff|CapBnd|CapAmb|NoNewPrivs):" /proc/self/status')
	is "$(echo "$out" | sed -n 1p)" 1000 "$who: uid inside is 1000, not 0"
	is "$(echo "$out" | sed -n 2p)" 1000 "$who: gid inside is 1000, not 0"
	is "$(echo "$out" | grep -c ':[[:space:]]*0000000000000000$')" 5 "$who: every capability set is empty"
	is "$(echo "$out" | grep NoNewPrivs | tr -d '[:space:]')" "NoNewPrivs:1" "$who: no_new_privs is set"

	$RUN_AS "$CORDON" run -- true; is $? 0 "$who: exit 0 passes through"
	$RUN_AS "$CORDON" run -- sh -c 'exit 7'; is $? 7 "$who: exit 7 passes through"
	$RUN_AS "$CORDON" run -- sh -c 'kill -9 $$'; is $? 137 "$who: death by SIGKILL is 128+9"
	$RUN_AS "$CORDON" run -- no-such-command-xyz 2>"$T/err"; is $? 127 "$who: not found is 127"
	ok "$who: not found says so" grep -q "no-such-command-xyz" "$T/err"
	$RUN_AS "$CORDON" run -- /etc/passwd 2>/dev/null; is $? 126 "$who: not executable is 126"
	$RUN_AS "$CORDON" run --no-such-option -- true 2>"$T/err"; is $? 125 "$who: bad option is 125"
	is "$(wc -l <"$T/err" | tr -d ' ')" 1 "$who: a refusal is one line"
	$RUN_AS "$CORDON" run 2>/dev/null; is $? 125 "$who: no command is 125"
	$RUN_AS "$CORDON" run --memory lots -- true 2>/dev/null; is $? 125 "$who: bad size is 125"

	# --dry-run prints the plan and runs nothing: the marker stays absent.
	mkdir -p "$T/out-$who" && chmod 0777 "$T/out-$who"
	$RUN_AS "$CORDON" run --dry-run --rw "$T/out-$who" -- sh -c "touch $T/out-$who/marker" >"$T/plan"
	is $? 0 "$who: --dry-run exits 0"
	ok "$who: --dry-run prints the plan as JSON" python3 -c "import json,sys; json.load(open('$T/plan'))"
	nok "$who: --dry-run ran nothing" test -e "$T/out-$who/marker"
	$RUN_AS "$CORDON" run --rw "$T/out-$who" -- sh -c "touch $T/out-$who/marker"
	ok "$who: the same command without --dry-run does run" test -e "$T/out-$who/marker"

	# The JSON result record.
	$RUN_AS "$CORDON" run --json -- sh -c 'echo hi; exit 3' >"$T/res"
	is "$(head -1 "$T/res")" hi "$who: output comes before the record"
	tail -1 "$T/res" >"$T/rec"
	is "$(python3 -c "import json; r=json.load(open('$T/rec')); print(r['reason'], r['exit_code'], r['stdout_bytes'])")" \
		"exited 3 3" "$who: record has reason, exit code, byte count"
	want=$(printf 'hi\n' | sha256sum | cut -d' ' -f1)
	is "$(python3 -c "import json; print(json.load(open('$T/rec'))['stdout_sha256'])")" "$want" \
		"$who: record has the SHA-256 of stdout"
	want=$(printf 'sh\0-c\0echo hi; exit 3\0' | sha256sum | cut -d' ' -f1)
	is "$(python3 -c "import json; print(json.load(open('$T/rec'))['argv_sha256'])")" "$want" \
		"$who: record has the SHA-256 of argv (NUL-terminated args)"
	is "$(python3 -c "import json; w=json.load(open('$T/rec'))['walls']; print(all(w[k] for k in ('userns','mountns','pidns','netns','ipcns','utsns','cgroupns','no_new_privs','caps_dropped')))")" \
		True "$who: record lists the namespace and privilege walls as up"
	printf 'abc' | $RUN_AS "$CORDON" run --json-fd 3 -- cat 3>"$T/rec2" >"$T/cat.out"
	is "$(cat "$T/cat.out")" abc "$who: stdin is relayed to the command"
	is "$(python3 -c "import json; print(json.load(open('$T/rec2'))['stdin_sha256'])")" \
		"$(printf abc | sha256sum | cut -d' ' -f1)" "$who: --json-fd gets the record, with the stdin hash"
}

for_each_user basics
# An interactive stdin (a pipe with nothing to read yet) does not hold the
# run up until its EOF: the command exits, cordon returns.
rm -f "$T/finished" "$T/fifo"
mkfifo "$T/fifo"
# (The writer holding the pipe open is this shell's fd, not a process a
# pgrep of another test could match.)
exec 8<>"$T/fifo"
("$CORDON" run -- echo done <"$T/fifo" >"$T/piped.out" 2>&1; touch "$T/finished") </dev/null >/dev/null 2>&1 8>&- &
i=0
while [ ! -e "$T/finished" ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
[ -e "$T/finished" ]
is "$?" 0 "a silent stdin pipe does not hold the run until its EOF"
is "$(cat "$T/piped.out")" done "... and the command's output arrives"
exec 8>&-
done_testing
