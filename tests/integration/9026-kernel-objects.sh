#!/bin/sh
# Issue 16 finding 4: kernel objects the kernel limits per user (or per
# host) rather than per namespace.  A sandbox takes what it can of each; it
# must stop at its own per-run quota, and the host user must still be able
# to make one while the sandbox holds its share (the positive control).
#   inotify instances and watches: /proc/sys/user/max_inotify_* of the
#     sandbox's user namespace (the count is charged to the host user too)
#   POSIX message queues: RLIMIT_MSGQUEUE bytes (ucounts, likewise)
#   nested namespaces and fanotify: the namespace's maxima are 0
. "${CORDON_SRC:-.}/tests/lib.sh"
H=$CORDON_BUILD/tests/helpers
P=$H/kobj-probe

field() { python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); v=r
for k in sys.argv[2].split("."): v=v[k]
print(v)' "$1" "$2"; }

# Start WHAT in the sandbox holding its objects for 6 s; wait for its line.
hold_in_sandbox() {
	: >"$T/out"
	$RUN_AS "$CORDON" run --json-fd 3 --ro "$H" -- "$P" "$1" "$2" 6 3>"$T/rec" >"$T/out" 2>"$T/err" &
	bg=$!
	i=0
	while ! grep -q "^$1=" "$T/out" && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
}

ko() {
	who=$1

	hold_in_sandbox inotify 1000
	host=$($RUN_AS "$P" inotify 1 0)
	wait $bg
	is "$(cat "$T/out")" "inotify=16 EMFILE" "$who: the sandbox gets 16 inotify instances, then EMFILE"
	is "$host" "inotify=1 ok" "$who: meanwhile the host user can still make an inotify instance"
	is "$(field "$T/rec" limits.inotify_instances)" 16 "$who: the record states the inotify quota"

	$RUN_AS "$CORDON" run --ro "$H" -- sh -c "cd /tmp && $P watches 20000 0" >"$T/out" 2>"$T/err"
	is "$(cat "$T/out")" "watches=8192 ENOSPC" "$who: 8192 inotify watches, then ENOSPC"
	$RUN_AS "$CORDON" run --ro "$H" -- sh -c "cd /tmp && $P watches 100 0" >"$T/out" 2>"$T/err"
	is "$(cat "$T/out")" "watches=100 ok" "$who: 100 watches are fine (control)"

	hold_in_sandbox mqueue 1000
	host=$($RUN_AS "$P" mqueue 1 0)
	wait $bg
	n=$(sed -n 's/^mqueue=\([0-9]*\) EMFILE$/\1/p' "$T/out")
	ok "$who: the sandbox's message queues stop at 256 KiB with EMFILE ($(cat "$T/out"))" \
		test -n "$n" -a "${n:-0}" -ge 1 -a "${n:-999}" -le 32
	is "$host" "mqueue=1 ok" "$who: meanwhile the host user can still open a message queue"
	is "$(field "$T/rec" limits.msgqueue)" 262144 "$who: the record states RLIMIT_MSGQUEUE"

	out=$($RUN_AS "$CORDON" run -- sh -c 'cd /proc/sys/user && cat max_user_namespaces max_mnt_namespaces max_net_namespaces max_fanotify_groups max_inotify_instances' 2>&1 | tr '\n' ' ')
	is "$out" "0 0 0 0 16 " "$who: inside, nested namespaces and fanotify groups are capped at 0"
	ok "$who: --dry-run shows the quotas" sh -c "$CORDON run --dry-run -- true | grep -q '\"inotify_watches\": 8192'"
}

for_each_user ko
done_testing
