#!/bin/sh
# THREATS row 7: ptrace and process_vm_readv/writev, of a sibling inside
# the sandbox and of cordon's init: refused and counted.
. "${CORDON_SRC:-.}/tests/lib.sh"
H=$CORDON_BUILD/tests/helpers

pt() {
	who=$1
	out=$($RUN_AS "$CORDON" run --json-fd 3 --ro "$H" -- "$H/try-syscall" ptrace process_vm_readv process_vm_writev 3>"$T/rec")
	is "$out" "ptrace errno=EPERM
process_vm_readv errno=EPERM
process_vm_writev errno=EPERM" "$who: ptrace and process_vm_readv/writev are refused"
	is "$(denied_names "$T/rec")" "process_vm_readv process_vm_writev ptrace" "$who: the record names all three"
	# A real attach to a sibling the sandbox itself started (same uid, same
	# domain: only the filter stands in the way).
	out=$($RUN_AS "$CORDON" run --json-fd 3 --ro "$H" -- sh -c "sleep 5 & p=\$!; $H/esc-probe ptrace \$p; $H/esc-probe vm-read \$p; kill \$p" 3>"$T/rec")
	is "$out" "ptrace-attach=EPERM
ptrace-seize=EPERM
vm-read=EPERM" "$who: PTRACE_ATTACH/SEIZE and process_vm_readv of a sibling are refused"
	is "$(denied_names "$T/rec")" "process_vm_readv ptrace" "$who: the record names them"
	# strace, if installed, cannot trace anything either.
	if command -v strace >/dev/null 2>&1; then
		refused "$who: strace cannot trace inside (EPERM)" 'ptrace.*Operation not permitted' $RUN_AS "$CORDON" run -- strace -o /dev/null true
		ok "$who: control: strace itself runs inside" $RUN_AS "$CORDON" run -- strace -V
	fi
	# Control: outside the sandbox the same attach works (or fails for
	# another reason than the filter's EPERM where yama forbids it).
	# (The attach stops the sleep: SIGKILL it, and keep it off our stdout.)
	sleep 5 </dev/null >/dev/null 2>&1 &
	p=$!
	out=$("$H/esc-probe" ptrace $p | head -1)
	kill -9 $p 2>/dev/null
	wait $p 2>/dev/null
	ok "$who: control: outside, ptrace of a child reaches the kernel ($out)" test "$out" = "ptrace-attach=ok"
}

for_each_user pt
done_testing
