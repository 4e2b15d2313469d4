#!/bin/sh
# THREATS row 11: connect to host Unix sockets (docker.sock, ssh-agent,
# D-Bus, X11; abstract sockets).  Nothing of the host's /run, /var/run or
# /tmp is visible; abstract sockets live in the host's net namespace, not
# the sandbox's.  A socket inside a directory the sandbox can see (the cwd)
# is the classic hole: a read-only bind does not stop connect().
. "${CORDON_SRC:-.}/tests/lib.sh"
H=$CORDON_BUILD/tests/helpers

mkdir -p "$T/proj" && chmod 0755 "$T/proj"
hosttmp=$(mktemp -d /tmp/cordon-host-sock.XXXXXX)
chmod 0755 "$hosttmp"
runsock=/run/cordon-test-$$.sock
abs=cordon-test-$$
# One listener process: sockets in host /tmp, /run, the cwd, and abstract.
/usr/bin/python3 -c '
import os, socket, sys, time
socks = []
for p in sys.argv[1:4]:
    s = socket.socket(socket.AF_UNIX)
    try:
        s.bind(p); os.chmod(p, 0o777); s.listen(16); socks.append(s)
    except OSError as e:
        print("skip", p, e, file=sys.stderr)
a = socket.socket(socket.AF_UNIX); a.bind("\0" + sys.argv[4]); a.listen(16)
print("ready", flush=True)
time.sleep(90)
' "$hosttmp/agent.sock" "$runsock" "$T/proj/dev.sock" "$abs" >"$T/ready" 2>"$T/listener.err" &
listener=$!
i=0; while ! grep -q ready "$T/ready" 2>/dev/null && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done

us() {
	who=$1
	cd "$T/proj" || exit 1
	run() { $RUN_AS "$CORDON" run --ro "$H" -- "$H/esc-probe" connect-unix "$1"; }
	# Controls: each socket does accept a connection from outside.
	for s in "$hosttmp/agent.sock" "@$abs" "$T/proj/dev.sock"; do
		is "$($RUN_AS "$H/esc-probe" connect-unix "$s")" "connect=ok" "$who: control: $s accepts connections outside"
	done
	is "$(run "$hosttmp/agent.sock")" "connect=ENOENT" "$who: a socket in the host's /tmp is invisible"
	if [ -S "$runsock" ]; then
		is "$(run "$runsock")" "connect=ENOENT" "$who: a socket in the host's /run is invisible"
	fi
	for s in /run/docker.sock /var/run/docker.sock /run/dbus/system_bus_socket /tmp/.X11-unix/X0; do
		is "$(run "$s")" "connect=ENOENT" "$who: $s is absent"
	done
	is "$(run "@$abs")" "connect=ECONNREFUSED" "$who: an abstract socket of the host is unreachable (other net namespace)"
	# Creating a socket in the read-only cwd fails; in scratch it works.
	refused "$who: binding a socket in the read-only cwd fails (EROFS)" 'Read-only file system' \
		$RUN_AS "$CORDON" run -- /usr/bin/python3 -c 'import socket; socket.socket(socket.AF_UNIX).bind("planted.sock")'
	ok "$who: binding a socket in scratch works" \
		$RUN_AS "$CORDON" run -- /usr/bin/python3 -c 'import socket; socket.socket(socket.AF_UNIX).bind("/tmp/s.sock")'
	# A live host socket inside the visible cwd: connect() ignores a
	# read-only bind and Landlock ABI 7 has no right for it, so cordon
	# covers every socket it finds in a bound directory.
	out=$(run "$T/proj/dev.sock")
	ok "$who: a host socket inside the cwd cannot be connected ($out)" \
		sh -c "test -n '$out' && test '$out' != connect=ok"
	cd "$T" || exit 1
}

for_each_user us
kill "$listener" 2>/dev/null
wait "$listener" 2>/dev/null
rm -rf "$hosttmp" "$runsock"
done_testing
