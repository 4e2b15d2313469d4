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
env HOST_ONLY_TOKEN="$tag-env" sh -c "sleep 60; : $tag-argv" </dev/null >/dev/null 2>&1 &
hostpid=$!
sleep 0.1

hp() {
	who=$1
	run() { $RUN_AS "$CORDON" run -- "$@"; }
	nok "$who: the host process's /proc entry is absent" run test -e "/proc/$hostpid"
	nok "$who: no /proc/*/environ inside holds the host secret" \
		run sh -c "cat /proc/[0-9]*/environ 2>/dev/null | tr '\0' '\n' | grep -q '$half1[s]$half2'"
	nok "$who: no /proc/*/cmdline inside holds it" \
		run sh -c "cat /proc/[0-9]*/cmdline 2>/dev/null | tr '\0' '\n' | grep -q '$half1[s]$half2'"
	# Control: the secret really is readable in the host's /proc.
	ok "$who: control: the host's /proc does hold it" sh -c "tr '\0' '\n' </proc/$hostpid/environ | grep -q '$half1[s]$half2'"
	ok "$who: at most a handful of pids are visible" run sh -c 'test $(ls -d /proc/[0-9]* | wc -l) -le 6'
	for f in kcore kmsg sysrq-trigger kallsyms keys timer_list kpagecount kpageflags kpagecgroup; do
		# Absent, or covered by an empty read-only file (a /dev/null bind).
		ok "$who: /proc/$f is absent or reads empty" \
			run sh -c "test ! -e /proc/$f || test \"\$(head -c 16 /proc/$f 2>/dev/null | wc -c)\" -eq 0"
	done
	nok "$who: /proc/sysrq-trigger cannot be written" run sh -c 'echo h > /proc/sysrq-trigger'
	for f in kernel/hostname kernel/core_pattern vm/drop_caches kernel/ns_last_pid net/ipv4/ip_forward; do
		$RUN_AS "$CORDON" run -- sh -c "echo 1 > /proc/sys/$f" 2>"$T/err"
		ok "$who: writing /proc/sys/$f fails" test $? -ne 0
		ok "$who: ... read-only or refused" grep -qiE 'read-only|permission denied|cannot create' "$T/err"
	done
	# /sys: absent, or at most read-only.
	nok "$who: /sys is absent" run test -e /sys/kernel
	nok "$who: /sys cannot be written" run sh -c 'echo x > /sys/kernel/uevent_helper'
	nok "$who: a fresh procfs or sysfs cannot be mounted" run sh -c 'mkdir /tmp/p && mount -t proc proc /tmp/p'
	nok "$who: /proc is not the host's (no pid of the host's init chain)" run sh -c 'grep -q "^Name:.*\(systemd\|init\|process_api\)" /proc/[0-9]*/status'
}

core_before=$(cat /proc/sys/kernel/core_pattern)
for_each_user hp
is "$(cat /proc/sys/kernel/core_pattern)" "$core_before" "the host's core_pattern is unchanged"
kill "$hostpid" 2>/dev/null
done_testing
