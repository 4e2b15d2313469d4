#!/bin/sh
# THREATS row 3: use an fd inherited from the parent (CVE-2024-21626: a host
# directory fd that becomes the cwd, a socket).  cordon closes everything
# the plan does not name; fds 0-2 inside are cordon's own pipes, whatever
# the caller's fds were; the cwd is the sandbox's bind.
. "${CORDON_SRC:-.}/tests/lib.sh"

mkdir -p "$T/hostdir" "$T/proj"
echo host-only >"$T/hostdir/secret"
chmod -R a+rX "$T"
PY=/usr/bin/python3

fds() {
	who=$1
	cd "$T/proj" || exit 1
	# A host directory on fd 9, an open file on fd 7, a listening TCP socket
	# and a socketpair end on fds 5 and 6, all inheritable.
	# shellcheck disable=SC2016
	inner='ls /proc/self/fd | sort -n | tr "\n" " "; echo
		for f in 3 4 5 6 7 8 9 10; do test -e /proc/self/fd/$f && echo "fd$f=open"; done
		(cd /proc/self/fd/9 2>/dev/null && echo cd9=ok && cat secret)
		echo cwd=$(readlink /proc/self/cwd)
		ls /proc/self/cwd/.. | grep -qx hostdir && echo parent=host-view
		for f in 0 1 2; do echo "fd$f=$(readlink /proc/self/fd/$f | cut -d: -f1)"; done'
	$RUN_AS $PY -c '
import os, socket, sys
d = os.open(sys.argv[1], os.O_RDONLY | os.O_DIRECTORY); os.dup2(d, 9)
f = os.open("/etc/hostname", os.O_RDONLY); os.dup2(f, 7)
s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(1); os.dup2(s.fileno(), 5)
a, b = socket.socketpair(); os.dup2(a.fileno(), 6)
# stdin is a socket too: cordon must relay it through its own pipe.
os.dup2(b.fileno(), 0)
os.execv(sys.argv[2], sys.argv[2:])
' "$T/hostdir" "$CORDON" run -- sh -c "$inner" >"$T/out-$who" 2>&1
	is "$(head -1 "$T/out-$who")" "0 1 2 3 " "$who: only 0, 1, 2 (and ls's own dir fd 3) are open inside"
	for f in 5 6 7 9; do
		lacks "$who: the inherited fd $f is closed inside" "^fd$f=open\$" "$T/out-$who" '^cwd=/'
	done
	lacks "$who: the host directory fd cannot be entered" 'cd9=ok|host-only' "$T/out-$who" '^cwd=/'
	ok "$who: /proc/self/cwd is the sandbox's bind of the project" grep -qx "cwd=$T/proj" "$T/out-$who"
	lacks "$who: the cwd's parent is the sandbox's, not the host's" 'parent=host-view' "$T/out-$who" '^cwd=/'
	ok "$who: fd 0 inside is a pipe although the caller's stdin is a socket" grep -qx "fd0=pipe" "$T/out-$who"
	ok "$who: fds 1 and 2 inside are pipes" sh -c "grep -qx fd1=pipe '$T/out-$who' && grep -qx fd2=pipe '$T/out-$who'"
	# The check itself works: the same fds outside the sandbox are visible.
	$RUN_AS $PY -c '
import os, sys
d = os.open(sys.argv[1], os.O_RDONLY | os.O_DIRECTORY); os.dup2(d, 9)
os.execv("/bin/sh", ["sh", "-c", "cat /proc/self/fd/9/secret"])' "$T/hostdir" >"$T/ctl-$who" 2>&1
	ok "$who: control: outside the sandbox fd 9 does reach the host directory" grep -qx host-only "$T/ctl-$who"
	cd "$T" || exit 1
}

# --direct-stdio (cordon mcp's server): the caller's own stdin and stdout
# pipes become the command's fds 0 and 1, and still nothing else is
# inherited; a socket or a terminal is never handed over (THREATS 1).
direct() {
	who=$1
	cd "$T/proj" || exit 1
	# shellcheck disable=SC2016
	inner='ls /proc/self/fd | sort -n | tr "\n" " "; echo
		for f in 3 4 5 6 7 8 9 10; do test -e /proc/self/fd/$f && echo "fd$f=open"; done
		for f in 0 1 2; do echo "fd$f=$(readlink /proc/self/fd/$f)"; done
		head -c 5'
	$RUN_AS $PY -c '
import os, socket, subprocess, sys
d = os.open(sys.argv[1], os.O_RDONLY | os.O_DIRECTORY); os.dup2(d, 9)
s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(1); os.dup2(s.fileno(), 5)
r, w = os.pipe(); r2, w2 = os.pipe()
p = subprocess.Popen(sys.argv[2:], stdin=r, stdout=w2, pass_fds=(5, 9))
os.close(r); os.close(w2)
os.write(w, b"hello"); os.close(w)
out = b""
while True:
    b = os.read(r2, 4096)
    if not b: break
    out += b
p.wait()
sys.stdout.write(out.decode() + "\n")
' "$T/hostdir" "$CORDON" run --direct-stdio -- sh -c "$inner" >"$T/direct-$who" 2>&1
	is "$(head -1 "$T/direct-$who")" "0 1 2 3 " "$who: --direct-stdio: only 0, 1, 2 (and ls's dir fd 3) are open inside"
	for f in 5 9; do
		lacks "$who: --direct-stdio: the inherited fd $f is closed inside" "^fd$f=open\$" "$T/direct-$who" '^fd0=pipe:'
	done
	ok "$who: --direct-stdio: the command read the caller's pipe directly" grep -qx hello "$T/direct-$who"
	ok "$who: --direct-stdio: fds 0 and 1 inside are pipes" sh -c "grep -q '^fd0=pipe:' '$T/direct-$who' && grep -q '^fd1=pipe:' '$T/direct-$who'"
	out=$(echo x | $RUN_AS $PY -c '
import os, socket, sys
a, b = socket.socketpair(); os.dup2(b.fileno(), 0)
os.execv(sys.argv[1], sys.argv[1:])' "$CORDON" run --direct-stdio -- /bin/true 2>&1)
	is "$?:$(echo "$out" | grep -c 'must be pipes')" "125:1" "$who: --direct-stdio refuses a socket as stdin"
	out=$(echo x | $RUN_AS $PY -c '
import os, pty, sys
m, s = pty.openpty(); os.dup2(s, 1)
os.execv(sys.argv[1], sys.argv[1:])' "$CORDON" run --direct-stdio -- /bin/true 2>&1)
	is "$?:$(echo "$out" | grep -c 'never a terminal')" "125:1" "$who: --direct-stdio refuses a terminal"
	out=$(echo x | $RUN_AS "$CORDON" run --direct-stdio --json -- /bin/true 2>&1 | cat)
	case $out in *'needs --json-fd'*) r=0 ;; *) r=1 ;; esac
	is "$r" 0 "$who: --direct-stdio --json without --json-fd is refused (the record would join the command's stream)"
	rec=$($RUN_AS "$CORDON" log show 2>/dev/null | grep '"kind":"run.result"' | tail -1)
	case $rec in *'"stdin":"direct"'*'"stdout":"direct"'*) r=0 ;; *) r=1 ;; esac
	is "$r" 0 "$who: the run's record says its stdin and stdout were direct"
	cd "$T" || exit 1
}

for_each_user fds
for_each_user direct
done_testing
