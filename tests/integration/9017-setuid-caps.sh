#!/bin/sh
# THREATS row 17: escalate via setuid binaries or file capabilities.
# no_new_privs, nosuid mounts, every capability set empty: a setuid-root
# binary runs as the sandbox user, a file capability grants nothing.
. "${CORDON_SRC:-.}/tests/lib.sh"
H=$CORDON_BUILD/tests/helpers

mkdir -p "$T/proj"
# Root-owned setuid and setgid copies of the probe, and one with file
# capabilities (as root only: nobody cannot make either).
if [ "$(id -u)" -eq 0 ]; then
	cp "$H/esc-probe" "$T/proj/suid-probe" && chown 0:0 "$T/proj/suid-probe" && chmod 6755 "$T/proj/suid-probe"
	cp "$H/esc-probe" "$T/proj/fcap-probe" && chmod 0755 "$T/proj/fcap-probe"
	if command -v setcap >/dev/null 2>&1; then
		setcap 'cap_setuid,cap_dac_override,cap_sys_admin+ep' "$T/proj/fcap-probe" || rm -f "$T/proj/fcap-probe"
	else
		rm -f "$T/proj/fcap-probe"
	fi
fi
chmod 0755 "$T/proj"

zero=0000000000000000

su() {
	who=$1
	cd "$T/proj" || exit 1
	out=$($RUN_AS "$CORDON" run --ro "$H" -- "$H/esc-probe" ids | sed -E 's/^setuid0=(EPERM|EINVAL)$/setuid0=refused/')
	is "$out" "euid=1000
egid=1000
CapPrm=$zero
CapEff=$zero
CapAmb=$zero
setuid0=refused" "$who: the sandbox user has no capabilities and cannot setuid(0)"
	# Every mount the command could exec from is nosuid.
	# shellcheck disable=SC2016
	is "$($RUN_AS "$CORDON" run -- sh -c 'n=$(grep -c . /proc/self/mountinfo); echo "mounts=$n without-nosuid=$(awk "{print \$5, \$6}" /proc/self/mountinfo | grep -vc nosuid)"' |
		sed 's/^mounts=[1-9][0-9]* /mounts=some /')" "mounts=some without-nosuid=0" "$who: every mount is nosuid"
	if [ -u "$T/proj/suid-probe" ]; then
		out=$($RUN_AS "$CORDON" run -- ./suid-probe ids)
		is "$(echo "$out" | head -4 | tr '\n' ' ')" "euid=1000 egid=1000 CapPrm=$zero CapEff=$zero " \
			"$who: a setuid/setgid-root binary gains neither root nor capabilities"
		# Control: outside, the same binary does run as root (as nobody).
		is "$(as_nobody "$T/proj/suid-probe" ids | head -1)" "euid=0" "$who: control: outside, it does give euid 0"
	fi
	if [ -e "$T/proj/fcap-probe" ]; then
		out=$($RUN_AS "$CORDON" run -- ./fcap-probe ids)
		is "$(echo "$out" | sed -n '3,4p' | tr '\n' ' ')" "CapPrm=$zero CapEff=$zero " \
			"$who: a binary with file capabilities gains none"
		is "$(as_nobody "$T/proj/fcap-probe" ids | sed -n 4p)" "CapEff=0000000000200082" "$who: control: outside, the file caps do apply"
	elif [ "$(id -u)" -eq 0 ]; then
		skip "setcap (libcap2-bin) is not installed"
	fi
	# The system's own setuid su: start it blocked on its password prompt
	# (stdin a fifo), then read its credentials from /proc.
	found=0
	for b in /bin/su /usr/bin/su; do
		[ -u "$b" ] || continue
		found=1
		# shellcheck disable=SC2016
		out=$($RUN_AS "$CORDON" run -- sh -c 'mkfifo /tmp/f; '"$b"' </tmp/f >/dev/null 2>&1 & p=$!; exec 3>/tmp/f; sleep 0.3
			grep -E "^(Name|Uid|CapEff):" /proc/$p/status | tr -d "\t" | tr "\n" " "; kill -9 $p')
		is "$out" "Name:$(basename "$b" | cut -c1-15) Uid:1000100010001000 CapEff:$zero " \
			"$who: $b runs without privilege (uid 1000, no capabilities)"
		break
	done
	[ $found = 1 ] || skip "no setuid su on this host"
	# (No "su to root fails" check: su fails on an empty password, or on
	# PAM inside, whatever the sandbox does; the credentials of the running
	# su above are what a wall decides.)
	cd "$T" || exit 1
}

for_each_user su
done_testing
