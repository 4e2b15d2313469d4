#!/bin/sh
# THREATS row 6: io_uring to open files and sockets behind seccomp's back.
# Every io_uring_* call is refused with ENOSYS (so programs fall back to
# ordinary I/O), and counted.
. "${CORDON_SRC:-.}/tests/lib.sh"
H=$CORDON_BUILD/tests/helpers

denied() {
	python3 -c 'import json,sys
r = json.load(open(sys.argv[1]))
for d in r.get("denied_syscalls") or []: print("%s %d" % (d["syscall"], d["count"]))' "$1" | sort
}

uring() {
	who=$1
	out=$($RUN_AS "$CORDON" run --json-fd 3 --ro "$H" -- "$H/try-syscall" io_uring_setup io_uring_enter io_uring_register io_uring_setup 3>"$T/rec")
	rc=$?
	is "$out" "io_uring_setup errno=ENOSYS
io_uring_enter errno=ENOSYS
io_uring_register errno=ENOSYS
io_uring_setup errno=ENOSYS" "$who: io_uring_setup, _enter and _register give ENOSYS"
	is "$rc" 1 "$who: the probe saw them filtered"
	is "$(denied "$T/rec")" "io_uring_enter 1
io_uring_register 1
io_uring_setup 2" "$who: the record counts each io_uring call"
	# Outside, the same probes reach the kernel (EFAULT/EBADF, not ENOSYS):
	# the ENOSYS inside is the filter's.
	out=$("$H/try-syscall" io_uring_setup)
	ok "$who: control: outside, io_uring_setup reaches the kernel ($out)" test "$out" != "io_uring_setup errno=ENOSYS"
}

for_each_user uring
done_testing
