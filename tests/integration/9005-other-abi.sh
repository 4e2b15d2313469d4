#!/bin/sh
# THREATS row 5: call a syscall through another ABI (x32 numbers, i386
# int 0x80, i386 socketcall) to dodge a filter that checks only the
# number.  Every non-native arch is refused, and counted with its arch.
. "${CORDON_SRC:-.}/tests/lib.sh"
H=$CORDON_BUILD/tests/helpers

denied() {
	python3 -c 'import json,sys
r = json.load(open(sys.argv[1]))
for d in r.get("denied_syscalls") or []: print("%s/%s/%d" % (d["syscall"], d["arch"], d["nr"]))' "$1"
}

# Can this kernel run i386 code at all?  From 64-bit code (int 0x80) and as
# a 32-bit ELF (built here with as --32, no libc needed).
"$H/try-syscall" i386 >"$T/host-i386" 2>&1
host_int80=$?
printf '.globl _start\n_start:\n mov $20, %%eax\n int $0x80\n mov $42, %%ebx\n mov $1, %%eax\n int $0x80\n' >"$T/e32.s"
elf32=no
if as --32 "$T/e32.s" -o "$T/e32.o" 2>/dev/null && ld -m elf_i386 -o "$T/e32" "$T/e32.o" 2>/dev/null; then
	chmod 0755 "$T/e32"
	"$T/e32" 2>/dev/null
	[ $? -eq 42 ] && elf32=runs || elf32=built
fi
diag "host: int 0x80 from 64-bit code exits $host_int80 ($(cat "$T/host-i386")); 32-bit ELF: $elf32"

abi() {
	who=$1
	out=$($RUN_AS "$CORDON" run --json-fd 3 --ro "$H" -- "$H/try-syscall" x32 3>"$T/rec")
	is "$out" "x32 errno=EPERM" "$who: an x32 syscall is refused with EPERM (x32 is not even built into this kernel: ENOSYS outside)"
	is "$(denied "$T/rec")" "getpid/x32/1073741863" "$who: the record names it with arch x32 and the x32 number"

	$RUN_AS "$CORDON" run --json-fd 3 --ro "$H" -- "$H/try-syscall" i386 i386-socketcall >"$T/out" 3>"$T/rec" 2>&1
	rc=$?
	nok_if_ran "$who: int 0x80 getpid never returns a pid inside" "$T/rec" '"exit_code"' grep -q '^i386 ok' "$T/out"
	nok_if_ran "$who: i386 socketcall never returns a socket inside" "$T/rec" '"exit_code"' grep -q '^i386-socketcall ok' "$T/out"
	if [ "$host_int80" -le 1 ]; then
		# The kernel runs int 0x80: the filter must refuse and count it.
		ok "$who: int 0x80 is refused (EPERM or killed)" test "$rc" -ne 0
		ok "$who: the record names the i386 calls" sh -c "python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); assert any(d[\"arch\"]==\"i386\" for d in r[\"denied_syscalls\"])' '$T/rec'"
	else
		is "$rc" "$host_int80" "$who: int 0x80 faults inside exactly as it does on this host"
		# Nothing reaches the kernel's i386 entry here, so there is nothing
		# to count; the filter's refusal of AUDIT_ARCH_I386 is proven
		# against the exported BPF in tests/unit/test-seccomp.c.
		diag "int 0x80 faults on this kernel before any syscall entry (exit $host_int80 outside too)"
	fi
	if [ "$elf32" = runs ]; then
		$RUN_AS "$CORDON" run --json-fd 3 -- ./e32 3>"$T/rec" 2>/dev/null
		rc=$?
		ok "$who: a 32-bit binary is killed or refused, not exit 42" test "$rc" -ne 42
	elif [ "$elf32" = built ]; then
		$RUN_AS "$CORDON" run -- ./e32 2>/dev/null
		is $? 126 "$who: a 32-bit binary cannot even be executed (this kernel has no ia32 exec: 126 as outside)"
	fi
}

for_each_user abi
done_testing
