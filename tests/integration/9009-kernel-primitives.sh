#!/bin/sh
# THREATS row 9: exploit primitives — keyctl/add_key/request_key, bpf,
# perf_event_open, userfaultfd, kernel modules, kexec, reboot, clock
# setting, swapon/swapoff, acct (plus iopl, modify_ldt, kcmp, pidfd_getfd,
# personality).  Each is refused with EPERM and named in the record.
. "${CORDON_SRC:-.}/tests/lib.sh"
H=$CORDON_BUILD/tests/helpers

probes="keyctl add_key request_key bpf perf_event_open userfaultfd init_module finit_module delete_module kexec_load reboot swapon swapoff acct settimeofday clock_settime adjtimex iopl modify_ldt kcmp pidfd_getfd personality"

prim() {
	who=$1
	# shellcheck disable=SC2086
	$RUN_AS "$CORDON" run --json-fd 3 --ro "$H" -- "$H/try-syscall" $probes getpid >"$T/out" 3>"$T/rec"
	is $? 1 "$who: the probe saw refusals"
	python3 -c 'import json,sys
r = json.load(open(sys.argv[1]))
for d in r.get("denied_syscalls") or []: print(d["syscall"], d["arch"], d["count"])' "$T/rec" >"$T/denied"
	for p in $probes; do
		ok "$who: $p is refused with EPERM" grep -qx "$p errno=EPERM" "$T/out"
		ok "$who: the record names $p" grep -qx "$p x86_64 1" "$T/denied"
	done
	ok "$who: an allowed call still works" grep -qx "getpid ok" "$T/out"
	# Real tools, where installed.
	if command -v keyctl >/dev/null 2>&1; then
		refused "$who: keyctl(1) show is refused (EPERM)" 'Operation not permitted' $RUN_AS "$CORDON" run -- keyctl show
	else
		skip "keyctl(1) (keyutils) is not installed: only the keyctl probes above ran"
	fi
	refused "$who: date -s fails (EPERM)" '^date: cannot set date: Operation not permitted$' $RUN_AS "$CORDON" run -- date -s '2001-01-01'
	ok_if_ran "$who: and the host clock did not move" "$T/.ok.out" 'cannot set date' test "$(date +%Y)" -gt 2001
	ok "$who: control: date runs inside" $RUN_AS "$CORDON" run -- date +%Y
}

for_each_user prim
done_testing
