#!/bin/sh
# THREATS row 16: outlive the run — daemonize (setsid + double fork),
# nohup, ignore SIGHUP/SIGTERM, a child of a child.  The pid namespace dies
# with its init, and the run ends when the command does.
. "${CORDON_SRC:-.}/tests/lib.sh"

ol() {
	who=$1
	tag=$$$(date +%N)
	# setsid + double fork, stdio closed, every signal it can ignore ignored.
	start=$(date +%s)
	$RUN_AS "$CORDON" run -- sh -c "
		echo started
		setsid sh -c 'trap \"\" HUP TERM INT; (trap \"\" HUP TERM INT; exec sleep 3$tag) & exit 0' </dev/null >/dev/null 2>&1 &
		nohup sleep 4$tag </dev/null >/dev/null 2>&1 &
		sh -c 'trap \"\" HUP TERM; sleep 5$tag' </dev/null >/dev/null 2>&1 &
		sleep 0.3; exit 0" >"$T/ol-$who"
	rc=$?
	end=$(date +%s)
	is "$rc" 0 "$who: the command's own exit status is kept"
	ok_if_ran "$who: the run ended when the command did, not with its daemons" "$T/ol-$who" '^started$' test $((end - start)) -lt 10
	sleep 0.3
	for d in 3 4 5; do
		nok_if_ran "$who: daemon 'sleep $d$tag' is gone after the run" "$T/ol-$who" '^started$' pgrep -f "sleep $d$tag"
	done
	# Control: the same daemon started without cordon does survive its
	# parent (so the check above can fail).
	$RUN_AS sh -c "setsid sh -c '(exec sleep 6$tag) & exit 0' </dev/null >/dev/null 2>&1 & exit 0"
	i=0
	while ! pgrep -f "sleep 6$tag" >/dev/null && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
	dpid=$(pgrep -f "sleep 6$tag")
	ok "$who: control: outside the sandbox the daemon survives" test -n "$dpid"
	[ -n "$dpid" ] && kill "$dpid"
	# A daemon that tries to go back to cordon's session cannot see it.
	is "$($RUN_AS "$CORDON" run -- sh -c 'grep "^Name:" /proc/1/status' | tr -d '\t')" "Name:cordon" \
		"$who: the host's pid 1 is not visible to reparent to (pid 1 is cordon's init)"
}

for_each_user ol
done_testing
