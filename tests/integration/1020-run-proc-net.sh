#!/bin/sh
# cordon run: a private /proc, loopback only, no route to host listeners.
. "${CORDON_SRC:-.}/tests/lib.sh"

# A host listener on loopback the sandbox must not reach.
python3 -c '
import socket, sys, time
s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(8)
print(s.getsockname()[1], flush=True)
time.sleep(60)
' >"$T/port" &
listener=$!
i=0; while [ ! -s "$T/port" ] && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
port=$(cat "$T/port")

pn() {
	who=$1
	pids=$($RUN_AS "$CORDON" run -- sh -c 'ls /proc | grep -E "^[0-9]+$" | tr "\n" " "')
	n=$(echo "$pids" | wc -w)
	ok "$who: /proc lists only the sandbox's few pids ($pids)" test "$n" -le 8
	ok "$who: the sandbox's pids are small numbers" test "$(echo "$pids" | tr ' ' '\n' | sort -n | tail -1)" -le 16
	is "$($RUN_AS "$CORDON" run --env MARK=x -- sh -c 'tr -d "\000" < /proc/1/cmdline | wc -c')" 0 \
		"$who: init's command line (cordon's options, host paths) is blank"
	nok "$who: the host's pids are not in /proc" $RUN_AS "$CORDON" run -- test -e "/proc/$listener"
	is "$($RUN_AS "$CORDON" run -- sh -c 'tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d " "')" lo "$who: only lo exists"
	ok "$who: lo is up (UDP loopback works)" $RUN_AS "$CORDON" run -- python3 -c 'import socket; a=socket.socket(socket.AF_INET, socket.SOCK_DGRAM); a.bind(("127.0.0.1",0)); b=socket.socket(socket.AF_INET, socket.SOCK_DGRAM); b.sendto(b"x", a.getsockname()); assert a.recv(1) == b"x"'
	nok "$who: a TCP connect to the host's loopback listener fails" \
		$RUN_AS "$CORDON" run -- python3 -c "import socket; socket.create_connection(('127.0.0.1', $port), timeout=2)"
	nok "$who: an outside address has no route" \
		$RUN_AS "$CORDON" run -- python3 -c "import socket; socket.create_connection(('192.0.2.1', 80), timeout=2)"
	is "$($RUN_AS "$CORDON" run -- cat /proc/sys/kernel/hostname)" cordon "$who: the hostname is the sandbox's"
	nok "$who: /proc/sys is read-only" $RUN_AS "$CORDON" run -- sh -c 'echo x > /proc/sys/kernel/hostname'
	ok "$who: /proc/kcore is absent or covered" $RUN_AS "$CORDON" run -- sh -c 'test ! -e /proc/kcore || test "$(wc -c < /proc/kcore)" = 0'
	is "$($RUN_AS "$CORDON" run -- sh -c 'cat /proc/keys' 2>/dev/null)" "" "$who: /proc/keys is covered"
}

for_each_user pn
kill "$listener" 2>/dev/null
done_testing
