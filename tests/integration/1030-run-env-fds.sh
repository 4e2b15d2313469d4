#!/bin/sh
# cordon run: a clean environment, secrets that never leak, no inherited
# fds, nothing outlives the run.
. "${CORDON_SRC:-.}/tests/lib.sh"

envfds() {
	who=$1
	names=$(HOST_SECRET=hunter2 $RUN_AS env -u TERM -u LC_ALL "$CORDON" run -- /usr/bin/env | cut -d= -f1 | sort | tr '\n' ' ')
	is "$names" "HOME LANG PATH TMPDIR " "$who: the environment is exactly PATH HOME TMPDIR LANG"
	is "$(LC_ALL=C.UTF-8 $RUN_AS env -u TERM "$CORDON" run -- /usr/bin/env | grep '^LC_ALL=')" "LC_ALL=C.UTF-8" \
		"$who: LC_ALL is passed when set"
	names=$(TERM=xterm $RUN_AS env -u LC_ALL "$CORDON" run -- /usr/bin/env | cut -d= -f1 | sort | tr '\n' ' ')
	is "$names" "HOME LANG PATH TERM TMPDIR " "$who: TERM is passed when set"
	is "$(FOO=bar $RUN_AS "$CORDON" run --env FOO --env BAZ=qux -- sh -c 'echo $FOO $BAZ')" "bar qux" \
		"$who: --env NAME and NAME=VALUE are passed"
	refused "$who: --env of an unset name is refused" '^cordon run: --env NOT_SET_ANYWHERE: not set' \
		$RUN_AS "$CORDON" run --env NOT_SET_ANYWHERE -- true

	# Secrets: in the command's environment, nowhere else.
	printf 's3cr3t-file\n' >"$T/tok-$who" && chmod 0644 "$T/tok-$who"
	out=$(API_TOKEN=s3cr3t-env $RUN_AS "$CORDON" run --json --secret API_TOKEN --secret FILE_TOKEN:"$T/tok-$who" -- sh -c 'echo "$API_TOKEN $FILE_TOKEN"')
	is "$(echo "$out" | head -1)" "s3cr3t-env s3cr3t-file" "$who: --secret from env and from file reach the command"
	printf '%s\n' "$out" | tail -1 >"$T/rec-$who"
	lacks "$who: the secret is not in the result record" s3cr3t "$T/rec-$who" '"exit_code"'
	API_TOKEN=s3cr3t-env $RUN_AS "$CORDON" run --dry-run --secret API_TOKEN -- true >"$T/plan-$who"
	lacks "$who: the secret is not in the printed plan" s3cr3t "$T/plan-$who" API_TOKEN
	ok "$who: the secret's name is in the printed plan" grep -q API_TOKEN "$T/plan-$who"
	# shellcheck disable=SC2016
	API_TOKEN=s3cr3t-env $RUN_AS "$CORDON" run --secret API_TOKEN -- sh -c 'cat /proc/[0-9]*/cmdline | tr "\0" "\n"; echo "scanned=${API_TOKEN%-env}"' >"$T/cmdline-$who" 2>&1
	lacks "$who: the secret is not in any command line" 's3cr3t-env' "$T/cmdline-$who" '^scanned=s3cr3t$'

	# Inherited fds are closed: the shell sees 0, 1, 2 only.
	fds=$( { $RUN_AS "$CORDON" run -- sh -c 'ls /proc/$$/fd' | tr '\n' ' '; } 7</etc/hostname 9<"$T")
	is "$fds" "0 1 2 " "$who: only fds 0 1 2 reach the command"

	# A daemonized child does not survive the run.
	tag=$$$(date +%N)
	$RUN_AS "$CORDON" run -- sh -c "setsid sh -c 'exec sleep 3$tag' </dev/null >/dev/null 2>&1 & sleep 0.2; echo started; exit 0" >"$T/daemon-$who"
	sleep 0.3
	nok_if_ran "$who: a daemonized child is gone after the run" "$T/daemon-$who" '^started$' pgrep -f "sleep 3$tag"
	# A background child that keeps stdout open does not hold the run.
	start=$(date +%s)
	$RUN_AS "$CORDON" run -- sh -c "sleep 30 & echo started"
	end=$(date +%s)
	ok "$who: the run ends when the command does" test $((end - start)) -lt 10
}

for_each_user envfds

# The wall clock kills the whole tree.
start=$(date +%s)
"$CORDON" run --timeout 1s -- sh -c 'sleep 30 & sleep 30' 2>"$T/err"
rc=$?
end=$(date +%s)
is "$rc" 124 "timeout exits 124"
ok "timeout came on time" test $((end - start)) -lt 10
ok "timeout says so on stderr" grep -q timeout "$T/err"
"$CORDON" run --json --timeout 1s -- sleep 30 >"$T/rec" 2>/dev/null
is "$(python3 -c "import json; print(json.load(open('$T/rec'))['reason'])")" timeout "the record's reason is timeout"

# The output cap stops a flood.
"$CORDON" run --output-limit 64K --json-fd 3 -- sh -c 'yes' 3>"$T/rec" >"$T/flood" 2>/dev/null
ok "output past the cap is not relayed" test "$(wc -c <"$T/flood")" -le 65536
is "$(python3 -c "import json; print(json.load(open('$T/rec'))['reason'])")" output-limit "the record's reason is output-limit"
done_testing
