#!/bin/sh
# Each wall on its own, so that removing any one of them fails a test
# (issue 16, `make mutate`):
#  - every entry of seccomp.c's deny tables (eperm_tab, enosys_tab,
#    silent_tab) is refused with its errno, and counted in the record
#    (the probe lists of 9005-9009 cover only some of them), and each
#    argument filter (namespace flags one by one, ioctls, socket families,
#    personality);
#  - Landlock forbids writes outside scratch and --rw where no read-only
#    mount does it first (/proc/self/comm, /proc/self/oom_score_adj: every
#    other test directory is under /tmp, which the mounts already guard);
#  - the locked securebits are set;
#  - every rlimit the child sets is in place;
#  - every mount is nosuid (statvfs, and a setuid-root file in a --rw
#    directory outside /tmp runs without root; control: on the host it
#    gives euid 0), and has its nodev, noexec and read-only flags.
. "${CORDON_SRC:-.}/tests/lib.sh"
H=$CORDON_BUILD/tests/helpers

# The spec is tests/data/seccomp-denied.txt, not the tables themselves: a
# test that read its list from the code would follow an entry moved to the
# allow list.  First, the tables still name exactly these calls.
DENIED=$CORDON_SRC/tests/data/seccomp-denied.txt
table() {
	awk -v t="$1" '$0 ~ "^static const struct sc " t "\\[\\] = \\{" { on = 1; next }
		on && /^};/ { on = 0 } on' "$CORDON_SRC/src/lib/sandbox/seccomp.c" |
		grep -o '{ "[a-z_0-9]*", -\{0,1\}[0-9]* }' | tr -d '{}",' | awk '{ print $1 }' | LC_ALL=C sort
}
for t in eperm_tab enosys_tab silent_tab; do
	awk -v t="$t" '$3 == t { print $1 }' "$DENIED" | LC_ALL=C sort >"$T/want"
	table "$t" >"$T/have"
	is "$(LC_ALL=C comm -3 "$T/want" "$T/have" | tr -s '\t\n' '  ')" "" \
		"seccomp.c's $t names exactly the calls of tests/data/seccomp-denied.txt"
done
awk -v t=eperm_tab '$3 == t { print $1, $2 }' "$DENIED" >"$T/eperm"
awk -v t=enosys_tab '$3 == t { print $1, $2 }' "$DENIED" >"$T/enosys"
awk -v t=silent_tab '$3 == t { print $1, $2 }' "$DENIED" >"$T/silent"
ok "the list has more than 80 entries" test "$(grep -vc '^#' "$DENIED")" -gt 80

# Call every entry of one table (at most 50 at once: the record names up
# to 64 distinct calls), plus getppid as the control.  Prints the entries
# that were not refused with WANT, or (when COUNTED) not named in the record.
probe_table() {
	tab=$1 want=$2 counted=$3
	: >"$T/bad"
	split -l 50 "$tab" "$T/chunk."
	for c in "$T"/chunk.*; do
		# shellcheck disable=SC2046
		$RUN_AS "$CORDON" run --json-fd 3 --ro "$H" -- "$H/try-syscall" \
			$(awk '{ print "nr:" $2 }' "$c") nr:110 >"$T/out" 3>"$T/rec"
		# {"syscall":"NAME","arch":"x86_64","nr":NR,"count":N} -> "NR N"
		grep -o '"arch":"x86_64","nr":[0-9]*,"count":[0-9]*' "$T/rec" |
			sed 's/.*"nr":\([0-9]*\),"count":\([0-9]*\)/\1 \2/' >"$T/counted"
		awk -v want="$want" -v counted="$counted" '
			FILENAME == ARGV[1] { out[$1] = $2; next }
			FILENAME == ARGV[2] { n[$1] = $2; next }
			{ if (out["nr:" $2] != "errno=" want) print $1 ": " (("nr:" $2) in out ? out["nr:" $2] : "no output")
			  if (counted && n[$2] < 1) print $1 ": not in the record"
			  if (!counted && ($2 in n)) print $1 ": counted" }
			END { if (out["nr:110"] != "ok") print "control: getppid (nr:110) did not run"
			      if ("110" in n) print "control: getppid (nr:110) counted as refused" }
		' "$T/out" "$T/counted" "$c" >>"$T/bad"
		rm -f "$c"
	done
	cat "$T/bad"
}

seccomp_each() {
	who=$1
	is "$(probe_table "$T/eperm" EPERM 1)" "" "$who: every eperm_tab entry is refused with EPERM and named in the record"
	is "$(probe_table "$T/enosys" ENOSYS 1)" "" "$who: every enosys_tab entry is refused with ENOSYS and named in the record"
	is "$(probe_table "$T/silent" ENOSYS 0)" "" "$who: every silent_tab entry gives ENOSYS, uncounted"
}

# Each argument filter: clone/unshare with each namespace flag, the
# terminal ioctls (also with junk in the upper 32 bits), socket families,
# personality values.  Control: the allowed forms, and on the host none of
# the probes is refused with EPERM (they fail with EINVAL, ENOTTY ...).
ARG_DENY="unshare-user unshare-mount unshare-net unshare-pid unshare-ipc unshare-uts unshare-cgroup unshare-time clone-newuser clone-newns clone-newpid tiocsti tiocsti-high tioclinux tioclinux-high socket-netlink socket-netlink-high socket-packet socketpair-inet personality personality-norand"
ARG_ALLOW="unshare-files fork thread socket-unix socketpair-unix personality-query"
args_each() {
	who=$1
	# shellcheck disable=SC2086
	$RUN_AS "$CORDON" run --json-fd 3 --ro "$H" -- "$H/try-syscall" $ARG_DENY $ARG_ALLOW </dev/null >"$T/out" 3>"$T/rec"
	bad=$(for p in $ARG_DENY; do grep -qx "$p errno=EPERM" "$T/out" || grep "^$p " "$T/out" || echo "$p: no output"; done)
	is "$bad" "" "$who: every argument filter refuses its probe with EPERM"
	bad=$(for p in $ARG_ALLOW; do grep -qx "$p ok" "$T/out" || grep "^$p " "$T/out" || echo "$p: no output"; done)
	is "$bad" "" "$who: control: the allowed forms run"
	# unshare 8, clone 3, ioctl 4, socket 3, socketpair 1, personality 2
	is "$(grep -o '"syscall":"[a-z]*","arch":"x86_64","nr":[0-9]*,"count":[0-9]*' "$T/rec" |
		sed 's/"syscall":"\([a-z]*\)".*"count":\([0-9]*\)/\1=\2/' | LC_ALL=C sort | tr '\n' ' ')" \
		"clone=3 ioctl=4 personality=2 socket=3 socketpair=1 unshare=8 " "$who: and the record counts each"
	# shellcheck disable=SC2086
	is "$($RUN_AS "$H/try-syscall" $ARG_DENY </dev/null | grep -c 'errno=EPERM')" "0" \
		"$who: control: on the host none of them gives EPERM"
}

# Writes that only Landlock refuses: procfs is mounted read-write (the
# process's own files must stay writable by the kernel's rules), so the
# mount layer does not stop them.
landlock_each() {
	who=$1
	for f in /proc/self/comm /proc/self/oom_score_adj; do
		is "$($RUN_AS "$CORDON" run --ro "$H" -- "$H/esc-probe" open-write "$f")" "open-write=EACCES" \
			"$who: Landlock refuses opening $f for writing"
		is "$($RUN_AS "$H/esc-probe" open-write "$f")" "open-write=ok" "$who: control: on the host it opens"
	done
	# A --rw directory outside /tmp is writable; the read-only working
	# directory beside it is not.
	is "$($RUN_AS "$CORDON" run --rw "$V/rw" -- sh -c "echo x >'$V/rw/f' && cat '$V/rw/f'")" "x" \
		"$who: a --rw directory under /var/tmp is writable"
	rm -f "$V/rw/f"
	is "$(cd "$V/ro" && $RUN_AS "$CORDON" run -- sh -c 'echo x >f' 2>&1 | grep -c 'Read-only file system')" "1" \
		"$who: the working directory under /var/tmp is read-only"
	is "$($RUN_AS "$CORDON" run --ro "$H" -- "$H/esc-probe" securebits)" "securebits=0xef" \
		"$who: securebits NOROOT, NO_SETUID_FIXUP, KEEP_CAPS_LOCKED, NO_CAP_AMBIENT_RAISE, all locked"
}

# nosuid on every mount.  no_new_privs alone would also keep the setuid
# bit from taking effect, so each mount's flag is checked with statvfs too.
nosuid_each() {
	who=$1
	# shellcheck disable=SC2016
	is "$($RUN_AS "$CORDON" run --rw "$V/rw" --ro "$H" -- python3 -c '
import os
for l in open("/proc/self/mountinfo"):
    mp = l.split()[4].replace("\\040", " ")
    try:
        if not os.statvfs(mp).f_flag & os.ST_NOSUID: print(mp)
    except OSError as e: print(mp, e)')" "" "$who: statvfs reports nosuid on every mount point"
	# Every mount's own flags (mountinfo field 6): nodev but on device
	# nodes and devpts, noexec under /dev and /proc, read-only but scratch,
	# --rw, /proc and the device nodes.  Other walls (Landlock, the root
	# tmpfs's own flags) hide a missing flag from every behaviour test.
	# shellcheck disable=SC2016
	is "$($RUN_AS "$CORDON" run --rw "$V/rw" -- awk -v rw="$V/rw" '{
		for (i = 7; $i != "-"; i++) ; fs = $(i + 1); mp = $5; o = "," $6 ","
		dev = fs == "devtmpfs" || fs == "devpts"
		if (o !~ /,nodev,/ && !dev) print mp ": not nodev"
		if (o !~ /,noexec,/ && mp ~ /^\/(dev|proc)(\/|$)/) print mp ": not noexec"
		if (o !~ /,ro,/ && !dev && mp != "/tmp" && mp != rw && mp != "/proc") print mp ": not read-only"
	}' /proc/self/mountinfo)" "" "$who: every mount has its nodev, noexec and read-only flags"
	if [ -u "$V/rw/suid" ]; then
		is "$(cd "$V/ro" && $RUN_AS "$CORDON" run --rw "$V/rw" -- "$V/rw/suid" ids | head -1)" "euid=1000" \
			"$who: a setuid-root file in a --rw directory under /var/tmp runs without root"
		is "$(cd "$V/ro" && $RUN_AS "$CORDON" run -- ./suid ids | head -1)" "euid=1000" \
			"$who: and in the read-only working directory"
		is "$(as_nobody "$V/rw/suid" ids | head -1)" "euid=0" "$who: control: on the host it gives euid 0"
	else
		skip "not root: cannot make a setuid-root file"
	fi
}

# Outside /tmp on purpose (removed at the end; lib.sh's trap owns $T).
V=$(mktemp -d /var/tmp/cordon-9028.XXXXXX)
mkdir -p "$V/rw" "$V/ro"
chmod 0755 "$V"
chmod 0777 "$V/rw"
chmod 0755 "$V/ro"
if [ "$(id -u)" -eq 0 ]; then
	cp "$H/esc-probe" "$V/rw/suid" && chown 0:0 "$V/rw/suid" && chmod 4755 "$V/rw/suid"
	cp -p "$V/rw/suid" "$V/ro/suid"
fi

# The rlimits the child sets, read back from /proc/self/limits: always
# core 0, realtime priority 0, open files and file size at their defaults
# (1024, 1 GiB), CPU time when asked; memory (RLIMIT_DATA and RLIMIT_AS)
# and processes when no cgroup enforces them (the record's *_by).
limits_each() {
	who=$1
	$RUN_AS "$CORDON" run --json-fd 3 --memory 256M --pids 64 --cpu-time 7s -- cat /proc/self/limits \
		>"$T/limits" 3>"$T/rec"
	lim() { awk -F '  +' -v n="$1" '$1 == n { print $2, $3 }' "$T/limits"; }
	is "$(lim 'Max core file size')" "0 0" "$who: no core dumps (RLIMIT_CORE 0)"
	is "$(lim 'Max realtime priority')" "0 0" "$who: RLIMIT_RTPRIO 0"
	is "$(lim 'Max open files')" "1024 1024" "$who: RLIMIT_NOFILE 1024"
	is "$(lim 'Max file size')" "1073741824 1073741824" "$who: RLIMIT_FSIZE 1 GiB"
	is "$(lim 'Max cpu time')" "7 8" "$who: --cpu-time 7s is RLIMIT_CPU 7 (hard 8)"
	is "$($RUN_AS "$CORDON" run -- cat /proc/self/limits | awk -F '  +' '$1 == "Max cpu time" { print $2 }')" \
		"unlimited" "$who: control: no --cpu-time, no CPU rlimit"
	if grep -q '"memory_by":"rlimit"' "$T/rec"; then
		is "$(lim 'Max data size') $(lim 'Max address space')" "268435456 268435456 1610612736 1610612736" \
			"$who: --memory 256M without a cgroup: RLIMIT_DATA 256M, RLIMIT_AS 2 x 256M + 1G"
	else
		ok "$who: --memory enforced by a cgroup" grep -q '"memory_by":"cgroup' "$T/rec"
	fi
	if grep -q '"pids_by":"rlimit"' "$T/rec"; then
		is "$(lim 'Max processes')" "64 64" "$who: --pids 64 without a cgroup: RLIMIT_NPROC 64"
	else
		ok "$who: --pids enforced by a cgroup" grep -q '"pids_by":"cgroup' "$T/rec"
	fi
}

# CORDON_TEST_PART=seccomp|args|landlock|nosuid|limits: only that part (make mutate).
for part in ${CORDON_TEST_PART:-seccomp args landlock nosuid limits}; do
	for_each_user "${part}_each"
done
rm -rf "$V"
done_testing
