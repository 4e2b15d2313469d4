#!/bin/sh
# THREATS row 15: exhaust the host — fork bomb, memory, filling scratch,
# CPU spin, huge output.  Each ends at its cap, the run ends, the record
# names the reason (as root through the v1 cgroup; rootless the rlimits
# make the calls fail: EAGAIN, ENOMEM), and the host is unharmed.
. "${CORDON_SRC:-.}/tests/lib.sh"
H=$CORDON_BUILD/tests/helpers

field() { python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); v=r
for k in sys.argv[2].split("."): v=v[k]
print(v)' "$1" "$2"; }

ex() {
	who=$1
	tag=$$$(date +%N)
	# Fork bomb: 2000 forks attempted with --pids 64.
	start=$(date +%s)
	$RUN_AS "$CORDON" run --json-fd 3 --pids 64 --timeout 30s -- sh -c "i=0; while [ \$i -lt 2000 ]; do sleep 2$tag & i=\$((i+1)); done; echo done" 3>"$T/rec" >"$T/out" 2>"$T/err"
	end=$(date +%s)
	ok_if_ran "$who: the fork bomb run ended quickly" "$T/rec" '"exit_code"' test $((end - start)) -lt 20
	reason=$(field "$T/rec" reason)
	by=$(field "$T/rec" limits.pids_by)
	if [ "$by" = cgroup1 ] || [ "$by" = cgroup2 ]; then
		is "$reason" pids "$who: the record's reason is pids (enforced by $by)"
	else
		ok "$who: forks failed at the rlimit (EAGAIN) (reason $reason, by $by)" grep -qiE 'fork|resource temporarily unavailable' "$T/err"
	fi
	is "$(field "$T/rec" limits.pids)" 64 "$who: the record states the pids limit"
	sleep 0.2
	nok_if_ran "$who: none of the bomb's processes survived" "$T/rec" '"exit_code"' pgrep -f "sleep 2$tag"
	ok "$who: the host can still fork" sh -c 'true & wait'

	# 2 GB at --memory 256M.
	$RUN_AS "$CORDON" run --json-fd 3 --memory 256M --ro "$H" -- "$H/esc-probe" alloc 2048 3>"$T/rec" >"$T/out" 2>&1
	rc=$?
	nok_if_ran "$who: the 2 GB allocation did not succeed" "$T/rec" '"exit_code"' grep -qx 'alloc=ok' "$T/out"
	by=$(field "$T/rec" limits.memory_by)
	if [ "$by" = cgroup1 ] || [ "$by" = cgroup2 ]; then
		is "$(field "$T/rec" reason)" memory "$who: the record's reason is memory (by $by)"
		is "$rc" 137 "$who: killed (SIGKILL by the OOM killer)"
	else
		ok "$who: the allocation was refused (ENOMEM at the rlimit, by $by)" grep -qx 'alloc=ENOMEM' "$T/out"
	fi
	is "$(field "$T/rec" limits.memory)" 268435456 "$who: the record states the memory limit"

	# Filling scratch: ENOSPC, and the run is otherwise fine.
	$RUN_AS "$CORDON" run --scratch-size 4M -- sh -c 'head -c 8000000 /dev/zero > /tmp/fill' 2>"$T/err"
	ok "$who: a full scratch gives ENOSPC" grep -qi 'no space left' "$T/err"

	# CPU spin with children, killed by the wall clock.
	start=$(date +%s)
	$RUN_AS "$CORDON" run --json-fd 3 --timeout 1s -- sh -c "sh -c 'while :; do :; done; : spin$tag' & sh -c 'while :; do :; done; : spin$tag'" 3>"$T/rec" 2>/dev/null
	rc=$?
	end=$(date +%s)
	is "$rc" 124 "$who: the spin is killed at the timeout (124)"
	is "$(field "$T/rec" reason)" timeout "$who: the record's reason is timeout"
	ok_if_ran "$who: on time" "$T/rec" '"exit_code"' test $((end - start)) -lt 10
	sleep 0.2
	nok_if_ran "$who: no spinning child survived" "$T/rec" '"exit_code"' pgrep -f "spin$tag"

	# Huge output.
	$RUN_AS "$CORDON" run --json-fd 3 --output-limit 1M -- sh -c 'yes xxxxxxxxxxxxxxxx' 3>"$T/rec" >"$T/flood" 2>/dev/null
	is "$(field "$T/rec" reason)" output-limit "$who: a flood ends at the output cap"
	ok_if_ran "$who: no more than the cap was relayed" "$T/rec" '"exit_code"' test "$(wc -c <"$T/flood")" -le 1048576
}

for_each_user ex
done_testing
