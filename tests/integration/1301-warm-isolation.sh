#!/bin/sh
# Nothing passes from one warm run to the next, nor between two warm runs
# at once: a file, a process, a socket, a mount, an environment variable,
# a key or a System V IPC object left by run N is invisible to run N+1.
# (The warm path shares the service's open log only: each run still builds
# its own sandbox.  These cases guard that as the warm path grows.)
: "${CORDON_TEST_TIMEOUT:=240}"
export CORDON_TEST_TIMEOUT
. "${CORDON_SRC:-.}/tests/lib.sh"

export CORDON_WARM=1 CORDON_SERVICE_DIR="$S/.svc" CORDON_SERVICE_IDLE=60
mkdir -p "$S/.svc" && chmod 1777 "$S/.svc"

last_path() {
	"$CORDON" log export --format jsonl --audit "$1" | python3 -c '
import json, sys
last = None
for l in sys.stdin:
    x = json.loads(l)
    if x["kind"] == "run.result": last = x
print((last.get("details") or {}).get("path"))'
}

# What run N leaves behind, as far as it can.
LEAVE='echo x >/tmp/leak-file; echo x >"$HOME/leak-home" 2>/dev/null
(setsid sleep 300 </dev/null >/dev/null 2>&1 &)
python3 -c "import socket; s=socket.socket(socket.AF_UNIX); s.bind(\"/tmp/leak.sock\")" 2>/dev/null
python3 -c "import socket; s=socket.socket(socket.AF_UNIX); s.bind(\"\0leak-abstract\"); s.listen(1); import os; os.fork() or __import__(\"time\").sleep(300)" </dev/null >/dev/null 2>&1 &
i=0; while ! grep -q "@leak-abstract" /proc/net/unix && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
ipcmk -M 4096 >/dev/null 2>&1; ipcmk -Q >/dev/null 2>&1
keyctl add user leak-key secret @u >/dev/null 2>&1
mkdir -p /tmp/m && mount -t tmpfs none /tmp/m 2>/dev/null
export LEAK_ENV=1
true'
# What run N+1 sees of it: one line per leak found.
LOOK='test -e /tmp/leak-file && echo file
test -e "$HOME/leak-home" && echo home-file
ps -eo comm= | grep -qx sleep && echo process
test -S /tmp/leak.sock && echo socket
grep -q "@leak-abstract" /proc/net/unix 2>/dev/null && echo abstract-socket
[ "$(ipcs -m | grep -c "^0x")" != 0 ] && echo shm
[ "$(ipcs -q | grep -c "^0x")" != 0 ] && echo msgq
keyctl search @u user leak-key >/dev/null 2>&1 && echo key
grep -q " /tmp/m " /proc/self/mountinfo && echo mount
[ -n "${LEAK_ENV:-}" ] && echo env
true'

iso() {
	who=$1
	db=$CORDON_AUDIT
	[ -n "$RUN_AS" ] && db="$S/.state-nobody/audit.db"
	mkdir -p "$T/i-$who" && chmod 0755 "$T/i-$who" && cd "$T/i-$who" || exit 1
	uid=$($RUN_AS id -u)
	$RUN_AS "$CORDON" run -- /bin/true # starts the service
	i=0
	while [ ! -S "$S/.svc/$uid/service.sock" ] && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
	$RUN_AS "$CORDON" run -- /bin/true
	is "$(last_path "$db")" warm "$who: the runs below are warm"

	# Positive control: within one run, LOOK finds what LEAVE left.
	seen=$($RUN_AS "$CORDON" run -- sh -c "$LEAVE
$LOOK" 2>/dev/null | sort | tr '\n' ' ')
	# (Rootless, with no writable cgroup, System V IPC is refused: nothing
	# of it to leave.  Keys and mounts are refused to both.)
	kinds="file process socket abstract-socket env"
	[ -z "$RUN_AS" ] && kinds="$kinds shm msgq"
	for k in $kinds; do
		case " $seen" in *" $k "*) ok "$who: control: run N sees its own $k" true ;;
		*) nok "$who: control: run N sees its own $k (saw: $seen)" true ;; esac
	done
	$RUN_AS "$CORDON" run -- sh -c "$LEAVE"
	is $? 0 "$who: run N left what it could"
	is "$($RUN_AS "$CORDON" run -- sh -c "$LOOK" 2>/dev/null | tr '\n' ' ')" "" \
		"$who: run N+1 sees none of it"
	is "$(last_path "$db")" warm "$who: and run N+1 was warm"

	# Two at once: one leaves and holds on (until the other has looked,
	# at most 30 s), the other looks once it has left all of it.
	$RUN_AS "$CORDON" run -- sh -c "$LEAVE
echo left
i=0; while [ ! -e '$T/i-$who/looked' ] && [ \$i -lt 300 ]; do sleep 0.1; i=\$((i + 1)); done" >"$T/holder-$who" &
	holder=$!
	i=0
	while ! grep -q '^left$' "$T/holder-$who" && [ $i -lt 300 ]; do sleep 0.1; i=$((i + 1)); done
	is "$($RUN_AS "$CORDON" run -- sh -c "$LOOK" 2>/dev/null | tr '\n' ' ')" "" \
		"$who: a concurrent warm run sees none of the other's"
	touch "$T/i-$who/looked"
	wait $holder
	r=$?
	grep -q '^left$' "$T/holder-$who" || r="$r, no 'left' before the look"
	is "$r" 0 "$who: the holder ran (it had left its things before the look)"
	cd "$T" || exit 1
}
for_each_user iso
done_testing
