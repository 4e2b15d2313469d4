#!/bin/sh
# THREATS row 1: inject keystrokes into the host terminal (TIOCSTI, with junk
# in the upper 32 bits of the request, TIOCLINUX).  cordon never hands over
# the host tty, and seccomp refuses the ioctls on the low 32 bits: counted.
. "${CORDON_SRC:-.}/tests/lib.sh"
H=$CORDON_BUILD/tests/helpers

# The syscalls named in the record's denied_syscalls, "name/arch count".
denied() {
	python3 -c 'import json,sys
r = json.load(open(sys.argv[1]))
for d in r.get("denied_syscalls") or []: print("%s/%s %d" % (d["syscall"], d["arch"], d["count"]))' "$1"
}

tty() {
	who=$1
	out=$($RUN_AS "$CORDON" run --json-fd 3 --ro "$H" -- "$H/try-syscall" tiocsti tiocsti-high tioclinux tioclinux-high 3>"$T/rec")
	rc=$?
	is "$out" "tiocsti errno=EPERM
tiocsti-high errno=EPERM
tioclinux errno=EPERM
tioclinux-high errno=EPERM" "$who: TIOCSTI and TIOCLINUX, with and without high bits, are refused"
	is "$rc" 1 "$who: the probe saw its calls filtered"
	is "$(denied "$T/rec")" "ioctl/x86_64 4" "$who: the record counts the 4 refused ioctls"
	# TCGETS (an ordinary ioctl) still reaches the kernel: the filter is on
	# the request, not on ioctl.
	is "$($RUN_AS "$CORDON" run --ro "$H" -- "$H/try-syscall" tcgets)" "tcgets errno=ENOTTY" \
		"$who: an ordinary ioctl is not refused (fd 0 is no tty)"

	# The host terminal is never handed over: with cordon's stdin, stdout
	# and stderr on a pty, the command still sees pipes, no controlling
	# tty, and no /dev/tty.
	if command -v script >/dev/null 2>&1; then
		# shellcheck disable=SC2016
		inner='for f in 0 1 2; do if test -t $f; then echo "fd$f=tty"; else echo "fd$f=$(readlink /proc/self/fd/$f | cut -d: -f1)"; fi; done
		test -e /dev/tty && echo devtty=present || echo devtty=absent
		echo tty_nr=$(cut -d" " -f7 /proc/self/stat)
		sh -c "exec 3</dev/tty" 2>/dev/null && echo open-tty=ok || echo open-tty=refused'
		printf '%s\n' "$inner" >"$T/inner-$who.sh"
		chmod 0644 "$T/inner-$who.sh"
		$RUN_AS script -qec "test -t 0 && test -t 1 && echo outer=tty; $CORDON run -- sh $T/inner-$who.sh" /dev/null </dev/null >"$T/tty-$who" 2>&1
		tr -d '\r' <"$T/tty-$who" >"$T/tty-$who.txt"
		ok "$who: cordon's own stdin and stdout were a pty (script)" grep -qx 'outer=tty' "$T/tty-$who.txt"
		for f in fd0=pipe fd1=pipe fd2=pipe devtty=absent tty_nr=0 open-tty=refused; do
			ok "$who: inside, $f" grep -qx "$f" "$T/tty-$who.txt"
		done
		lacks "$who: no fd inside is a tty" '^fd.=tty$' "$T/tty-$who.txt" '^fd0='
	else
		skip "script(1) from util-linux is not installed"
	fi
}

for_each_user tty
done_testing
