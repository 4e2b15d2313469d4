#!/bin/sh
# THREATS row 10: read the host's /proc (other pids' environ and cmdline,
# /proc/kcore), write /proc/sys, read /sys.  The sandbox has its own procfs
# with its own pids only, sensitive entries covered, /proc/sys read-only,
# and no /sys.
. "${CORDON_SRC:-.}/tests/lib.sh"

# A host process with a secret in its environment and its command line.
tag=cordon-host-secret-$$
# Inside, grep for the tag spelled as a bracket pattern, so that the
# sandbox's own command lines (sh, grep) never hold it.
half1=cordon-host- half2=ecret-$$
env HOST_ONLY_TOKEN="$tag-env" sh -c "sleep 600; : $tag-argv" </dev/null >/dev/null 2>&1 &
hostpid=$!
sleep 0.1

hp() {
	who=$1
	run() { $RUN_AS "$CORDON" run -- "$@"; }
	absent_in "$who: the host process's /proc entry is absent" "/proc/$hostpid" run
	# Each scan prints how many lines hold the secret and how many hold
	# PATH= (the sandbox's own processes: proof that the scan read something).
	for f in environ cmdline; do
		is "$(run sh -c "cat /proc/[0-9]*/$f 2>/dev/null | tr '\0' '\n' | grep -c '$half1[s]$half2'; cat /proc/[0-9]*/environ 2>/dev/null | tr '\0' '\n' | grep -c '^PATH=' | sed 's/^[1-9][0-9]*$/some/'")" "0
some" "$who: no /proc/*/$f inside holds the host secret (the sandbox's own are read)"
	done
	# Control: the secret really is readable in the host's /proc.
	ok "$who: control: the host's /proc does hold it" sh -c "tr '\0' '\n' </proc/$hostpid/environ | grep -q '$half1[s]$half2'"
	ok "$who: at most a handful of pids are visible" run sh -c 'test $(ls -d /proc/[0-9]* | wc -l) -le 6'
	for f in kcore sysrq-trigger kallsyms keys timer_list kpagecount kpageflags kpagecgroup sched_debug latency_stats; do
		# Absent (this kernel has none), or covered by a /dev/null bind: the
		# entry's own mode would refuse nobody anyway, so the cover itself
		# is what is checked.
		is "$(run sh -c "if test -e /proc/$f; then stat -c '%F %t:%T' /proc/$f; else echo absent; fi")" \
			"$(if [ -e /proc/$f ]; then echo 'character special file 1:3'; else echo absent; fi)" \
			"$who: /proc/$f is covered by /dev/null (or absent on the host too)"
	done
	# /proc/kmsg is not covered: reading it needs CAP_SYSLOG in the host's
	# namespace.
	refused "$who: /proc/kmsg cannot be read" "'/proc/kmsg' for reading: (Operation not permitted|Permission denied)" run head -c 16 /proc/kmsg
	refused "$who: /proc/sysrq-trigger cannot be written" \
		'cannot create /proc/sysrq-trigger: (Directory nonexistent|Read-only file system|Permission denied)' \
		run sh -c 'echo h > /proc/sysrq-trigger'
	for f in kernel/hostname kernel/core_pattern vm/drop_caches kernel/ns_last_pid net/ipv4/ip_forward; do
		$RUN_AS "$CORDON" run -- sh -c "echo 1 > /proc/sys/$f" 2>"$T/err"
		# EROFS: the read-only mount refuses it before any file mode would.
		ok "$who: writing /proc/sys/$f fails (exit $?) by the read-only mount (EROFS)" \
			grep -q "cannot create /proc/sys/$f: Read-only file system" "$T/err"
	done
	# /sys: absent, or at most read-only.
	absent_in "$who: /sys is absent" /sys/kernel run
	refused "$who: /sys cannot be written" 'cannot create /sys/kernel/uevent_helper: (Directory nonexistent|Read-only file system)' \
		run sh -c 'echo x > /sys/kernel/uevent_helper'
	refused "$who: a fresh procfs cannot be mounted" 'mount: /tmp/p: must be superuser|Operation not permitted' \
		run sh -c 'mkdir /tmp/p && mount -t proc proc /tmp/p'
	is "$(run sh -c 'grep -l "^Name:.*\(systemd\|init\|process_api\)" /proc/[0-9]*/status; grep -c "^Name:" /proc/1/status')" 1 \
		"$who: /proc is not the host's (no pid of the host's init chain; its own pid 1 is read)"
}

core_before=$(cat /proc/sys/kernel/core_pattern)
for_each_user hp
ok_if_ran "the host's core_pattern is unchanged" "$T/err" 'Read-only file system' \
	test "$(cat /proc/sys/kernel/core_pattern)" = "$core_before"
pkill -P "$hostpid" 2>/dev/null; kill "$hostpid" 2>/dev/null
done_testing
