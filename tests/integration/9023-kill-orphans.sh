#!/bin/sh
# THREATS row 16 (outlive the run), issue 16 finding 3: `kill -9` of cordon
# at any moment early in a run leaves no process of the run alive (the
# sandbox's init used to survive about one kill in a hundred, with full
# capabilities in its user namespace and cordon's audit database open),
# and the sandbox never holds a descriptor of cordon's own files or both
# ends of one of its pipes.
#
# CORDON_KILL_LOOPS (default 60) kills per user; `make check-long` runs
# hundreds.  Each run is found by a marker only this test uses: in the
# environment of cordon and of everything it starts before an exec (the
# sandbox's init), and on the command line of the command, `sleep 30.M`.
# No process is ever looked up or killed by name.
loops=${CORDON_KILL_LOOPS:-60}
case $loops in '' | *[!0-9]*) loops=60 ;; esac
# Each kill takes about a second on a loaded machine, for two users:
# scale the harness's timeout with the loop count.
: "${CORDON_TEST_TIMEOUT:=$((180 + loops * 6))}"
export CORDON_TEST_TIMEOUT
. "${CORDON_SRC:-.}/tests/lib.sh"
# Cold always: the control below needs cordon to hold its log itself (a
# warm run holds a socket to its service instead, CLOEXEC like the rest).
export CORDON_WARM=0

iter=0

# The live processes carrying marker M (zombies have neither environment
# nor command line): in the environment (cordon, and the sandbox's init
# before it execs) or as an argument (the command).  The patterns are
# written so that grep's own arguments do not match them.
marked() {
	grep -l -s -z -x -e "CORDON_KILL_MAR[K]=$1" -e "30[.]$1" \
		/proc/[0-9]*/environ /proc/[0-9]*/cmdline 2>/dev/null |
		sed -n 's|^/proc/\([0-9]*\)/.*|\1|p' | sort -u
}

# Start `cordon run $RUN_OPTS -- sleep 30.M` in the background as $RUN_AS
# with the marker M; set pid to cordon's own pid (whatever wraps the user
# switch).
start_run() {
	rm -f "$T/.pid"
	# shellcheck disable=SC2016
	$RUN_AS sh -c 'echo $$ >&3; exec 3>&-
		m=$1 c=$2; shift 2
		exec env CORDON_KILL_MARK="$m" "$c" run "$@" -- sleep "30.$m" </dev/null >/dev/null 2>&1' \
		sh "$1" "$CORDON" $RUN_OPTS 3>"$T/.pid" 2>/dev/null &
	job=$!
	_i=0
	while [ ! -s "$T/.pid" ] && [ $_i -lt 5000 ]; do _i=$((_i + 1)); done
	while [ ! -s "$T/.pid" ] && [ $_i -lt 7000 ]; do
		sleep 0.001
		_i=$((_i + 1))
	done
	pid=$(cat "$T/.pid")
}

# Wait (at most ~5 s) until nothing carries marker M; print the survivors.
survivors() {
	_i=0
	while [ $_i -lt 100 ]; do
		_s=$(marked "$1")
		[ -z "$_s" ] && return 0
		sleep 0.05
		_i=$((_i + 1))
	done
	echo "$_s"
}

# A random delay of 0 to N ms, as "S.MMM" for sleep(1).
delay() {
	_r=$(od -An -N2 -tu2 /dev/urandom | tr -d ' ')
	_r=$((_r % ($1 + 1)))
	printf '%d.%03d' $((_r / 1000)) $((_r % 1000))
}

now_ms() { echo $(($(date +%s%N) / 1000000)); }

# Has cordon (pid P) cloned its sandbox?  It then holds the child's pidfd
# (a pidfd of its own may come earlier).
cloned() {
	grep -h -s '^Pid:' /proc/"$1"/fdinfo/* 2>/dev/null | grep -qvx "Pid:[[:space:]]*$1"
}

# How long cordon takes from its start to cloning the sandbox, at best of
# three, in ms.  On a loaded machine
# it can be well past 40 ms: the kills are spread from cordon's start to
# 20 ms past the clone, at least over 0-40 ms.
clone_ms() {
	_best=""
	for _k in 1 2 3; do
		iter=$((iter + 1))
		start_run "$$0$iter"
		_t0=$(now_ms) _t=""
		while kill -0 "$pid" 2>/dev/null; do
			if cloned "$pid"; then
				_t=$(($(now_ms) - _t0))
				break
			fi
		done
		kill -9 "$pid" 2>/dev/null
		wait "$job" 2>/dev/null
		for _p in $(survivors "$$0$iter"); do kill -9 "$_p" 2>/dev/null; done
		[ -n "$_t" ] && { [ -z "$_best" ] || [ "$_t" -lt "$_best" ]; } && _best=$_t
	done
	echo "${_best:-20}"
}

# The children of pid P (no /proc/P/task/P/children on every kernel).
children() {
	grep -l -s "^PPid:[[:space:]]*$1\$" /proc/[0-9]*/status 2>/dev/null |
		sed -n 's|^/proc/\([0-9]*\)/.*|\1|p'
}

describe() {
	for _p in $1; do
		diag "survivor $_p: $(tr '\n' ' ' <"/proc/$_p/status" 2>/dev/null |
			sed 's/.*\(Name:[^ ]*[[:space:]]*[^ ]*\).*\(State:[[:space:]]*[^ ]*\).*\(PPid:[[:space:]]*[0-9]*\).*\(CapEff:[[:space:]]*[0-9a-f]*\).*/\1 \2 \3 \4/')"
		diag "  fds: $(ls -l "/proc/$_p/fd" 2>/dev/null | sed -n 's/.* -> //p' | tr '\n' ' ')"
	done
}

RUN_OPTS=""
kill_loop() {
	who=$1
	nloops=${2:-$loops}
	n=0 late=0 orphans=0 failed_runs=""
	c=$(clone_ms)
	span=$((c + 20))
	[ $span -lt 40 ] && span=40
	while [ $n -lt "$nloops" ]; do
		n=$((n + 1))
		iter=$((iter + 1))
		m="$$0$iter"
		start_run "$m"
		if [ $((n % 2)) -eq 0 ]; then
			# Every other kill: as soon as cordon has cloned the
			# sandbox, before the child may have run at all.
			d=clone
			c1=0
			while kill -0 "$pid" 2>/dev/null; do
				cloned "$pid" && c1=1 && break
			done
		elif [ $((n % 5)) -eq 0 ]; then
			# Now and then: once the command runs (init waiting for
			# it, the egress proxy serving).
			d=running
			i=0
			while [ $i -lt 500 ] && ! pgrep -f "^sleep 30[.]$m\$" >/dev/null; do
				sleep 0.02
				i=$((i + 1))
			done
			c1=1
		else
			d=$(delay $span)
			sleep "$d"
			# Stopped at that moment, then looked at.
			kill -STOP "$pid" 2>/dev/null
			c1=0
			cloned "$pid" && c1=1
		fi
		kill -9 "$pid" 2>/dev/null
		late=$((late + c1))
		wait "$job" 2>/dev/null
		s=$(survivors "$m")
		if [ -n "$s" ]; then
			orphans=$((orphans + 1))
			failed_runs="$failed_runs $d"
			describe "$s"
			# Only this run's processes, found by its marker.
			for p in $s; do kill -9 "$p" 2>/dev/null; done
		fi
	done
	diag "$who: the clone comes ~$c ms after cordon starts"
	diag "$who: $nloops kills, half at the clone, a tenth with the command running, the rest at 0-$span ms, $late after the clone, $orphans left survivors${failed_runs:+ (delays$failed_runs)}"
	is "$orphans" 0 "$who: no process of the run survives kill -9 of cordon ($nloops kills, at the clone, running and at 0-$span ms)"
	ok "$who: some kills landed while the sandbox existed (the loop can catch an orphan)" \
		test "$late" -gt 0
}

# The descriptors of process P pointing into cordon's state directory
# (audit and state databases, their WAL and SHM), and the pipes P holds
# both ends of.
bad_fds() {
	_p=$1
	for _f in /proc/"$_p"/fd/*; do
		_l=$(readlink "$_f" 2>/dev/null) || continue
		case $_l in
		"$S"/*) echo "fd ${_f##*/} -> $_l" ;;
		pipe:*)
			_fl=$(sed -n 's/^flags:[[:space:]]*//p' "/proc/$_p/fdinfo/${_f##*/}" 2>/dev/null)
			case $_fl in *1) echo "w $_l" ;; *) echo "r $_l" ;; esac
			;;
		esac
	done >"$T/.fds.$_p"
	grep -v '^[rw] ' "$T/.fds.$_p"
	sed -n 's/^[rw] //p' "$T/.fds.$_p" | sort | uniq -d | sed 's/^/both ends of /'
}

# Cordon stopped at a random moment of its start, its sandbox caught in
# the middle of being built (or already running the command): nothing in
# the sandbox holds cordon's files or both ends of a pipe.  A normal run
# is inspected too, once the command runs.
fds_check() {
	who=$1
	if [ "$(id -u)" -ne 0 ]; then
		skip "$who: reading the sandbox's /proc/PID/fd needs root"
		return
	fi
	caught=0 dirty="" ctl=0 tries=0
	while [ $tries -lt 8 ]; do
		tries=$((tries + 1))
		iter=$((iter + 1))
		m="$$0$iter"
		start_run "$m"
		# Stop cordon as soon as its child exists and it holds its log
		# (a root run forks its host-id keeper before opening the log).
		child="" i=0
		while [ -z "$child" ] && [ $i -lt 2000 ]; do
			kill -STOP "$pid" 2>/dev/null || break
			child=$(children "$pid")
			[ -n "$child" ] && [ -z "$(bad_fds "$pid" | grep 'audit\.db')" ] && child=""
			[ -n "$child" ] && break
			kill -CONT "$pid"
			i=$((i + 1))
		done
		if [ -n "$child" ]; then
			# The positive control: cordon itself does hold its audit log.
			[ -n "$(bad_fds "$pid" | grep 'audit\.db')" ] && ctl=1
			# Let the child run up to where it blocks (it waits for
			# cordon's go, or runs the command).
			i=0
			while [ $i -lt 100 ] && ! grep -q '^State:[[:space:]]*S' "/proc/$child/status" 2>/dev/null; do
				sleep 0.01
				i=$((i + 1))
			done
			caught=$((caught + 1))
			for p in $child $(children "$child"); do
				b=$(bad_fds "$p")
				[ -n "$b" ] && dirty="$dirty [stopped: pid $p: $(echo "$b" | tr '\n' ';')]"
			done
		fi
		kill -CONT "$pid" 2>/dev/null
		# A normal run: the command is up; its init and itself hold
		# nothing of cordon's.
		i=0
		while [ $i -lt 200 ] && [ -z "$(marked "$m" | grep -vx "$pid")" ]; do
			sleep 0.02
			i=$((i + 1))
		done
		i=0
		while [ $i -lt 200 ] && ! pgrep -f "^sleep 30[.]$m\$" >/dev/null; do
			sleep 0.02
			i=$((i + 1))
		done
		for c in $(children "$pid"); do
			for p in $c $(children "$c"); do
				b=$(bad_fds "$p")
				[ -n "$b" ] && dirty="$dirty [running: pid $p: $(echo "$b" | tr '\n' ';')]"
			done
		done
		kill -9 "$pid" 2>/dev/null
		wait "$job" 2>/dev/null
		s=$(survivors "$m")
		for p in $s; do kill -9 "$p" 2>/dev/null; done
	done
	ok "$who: cordon was caught with its sandbox being built ($caught of $tries tries)" \
		test "$caught" -gt 0
	ok "$who: control: cordon itself holds its audit log (the check can see it)" test "$ctl" = 1
	is "${dirty:-none}" none "$who: the sandbox holds no fd of cordon's state files and no pipe's both ends"
}

# The marker search itself: it finds a marked process until it is gone,
# and a run's command (its argument carries the marker).
iter=$((iter + 1))
m="$$0$iter"
env CORDON_KILL_MARK="$m" sleep 30 &
ctlpid=$!
sleep 0.1
is "$(marked "$m")" "$ctlpid" "control: the marker search finds a marked process"
kill -9 "$ctlpid"
wait "$ctlpid" 2>/dev/null
is "$(survivors "$m")" "" "control: ... and no longer once it is gone"
iter=$((iter + 1))
m="$$0$iter"
start_run "$m"
i=0
while [ $i -lt 200 ] && ! pgrep -f "^sleep 30[.]$m\$" >/dev/null; do
	sleep 0.02
	i=$((i + 1))
done
cmd=$(pgrep -f "^sleep 30[.]$m\$")
ok "control: the marker search finds a run's command" sh -c "test -n '$cmd' && echo '$(marked "$m")' | grep -qx '$cmd'"
kill -9 "$pid"
wait "$job" 2>/dev/null
is "$(survivors "$m")" "" "control: a run killed while its command runs leaves nothing"

for_each_user kill_loop
# With egress: the proxy, a process of cordon's outside the sandbox, dies
# with it too (its environment carries the marker).
egress_loop() {
	RUN_OPTS="--allow-host example.com"
	kill_loop "$1 (egress)" $((loops / 4 + 1))
	RUN_OPTS=""
}
for_each_user egress_loop
for_each_user fds_check
done_testing
