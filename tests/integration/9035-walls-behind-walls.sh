#!/bin/sh
# Walls that another wall hides from every ordinary test (issue 16,
# `make mutate`: each of these survived its removal).  Each check makes the
# one wall the last one standing:
#  - Landlock's signal scope: a process outside the sandbox's Landlock
#    domain but inside its pid namespace (one that joined it, as nsenter
#    does) and with the sandbox's own host uid cannot be signalled (EPERM);
#    control: the sandbox signals its own processes, and the same uid
#    outside signals that process.
#  - Landlock's abstract-socket scope: a Unix socket made in the host's net
#    namespace and handed in over SCM_RIGHTS looks abstract names up in the
#    host's namespace; sending to the host's abstract socket through it is
#    EPERM and nothing arrives; controls: it reaches a path socket, and the
#    sandbox's own abstract sockets work.
#  - /proc/sys is a read-only mount, not only Landlock's refusal: the one
#    world-writable sysctl (kernel/ns_last_pid) opens for writing on the
#    host and gives EROFS inside (Landlock alone gives EACCES); control:
#    it reads.  /proc/sys, /proc/irq, /proc/bus, /proc/fs are read-only
#    mount points.
#  - the IPC namespace: System V objects of the host (mode 0666, so only
#    the namespace stops them) are EINVAL inside and absent from
#    /proc/sysvipc; one made inside is gone from the host after the run.
#  - init's capabilities: the sandbox's pid 1 runs cordon's code, never
#    execs, so capset's clearing is all that empties its sets (exec
#    recomputes the command's own); /proc/1/status shows all five at 0,
#    and an ambient raise fails with EPERM.
#  - the lifeline (the child polls a pidfd of the supervisor right after
#    arming the parent-death signal): strace holds the child at that first
#    prctl until the supervisor has let the run start, the supervisor is
#    killed, and another process holds every descriptor it had (so neither
#    the sync pipe's EOF nor a failed seccomp-listener hand-over can stop
#    the child); no process of the run may start.  Control: without the
#    kill the command starts once the hold ends.  And the parent-death
#    signal itself: cordon killed while the command runs leaves nothing.
#  - init's descriptors: the child closes what it inherited at its start,
#    but the copies it made of its own (stdio, the supervisor's pidfd,
#    sockets) are close-on-exec, so only init, which never execs, would
#    keep them: seen from the host, init holds the report socket alone;
#    control: the command holds its three stdio pipes.
# CORDON_TEST_PART=scopes|procsys|ipc|caps|lifeline|fds runs only that part
# (make mutate).
. "${CORDON_SRC:-.}/tests/lib.sh"
H=$CORDON_BUILD/tests/helpers

# A --rw directory both sides reach (the sandbox's uid writes there).
V=$T/rw
mkdir -p "$V" "$T/py"
chmod 0777 "$V"

# Signal scope.  A process joins the sandbox's pid namespace from outside
# (nsenter, as root) with the sandbox's host uid, so neither the pid
# namespace nor the credential check stops a kill(2) from inside.
mark=0
signal_each() {
	who=$1
	if [ "$(id -u)" -ne 0 ] || ! command -v nsenter >/dev/null || ! command -v setpriv >/dev/null; then
		skip "$who: joining the sandbox's pid namespace needs root, nsenter and setpriv"
		return
	fi
	mark=$((mark + 1))
	rm -f "$V/target" "$V/target.new" "$V/done"
	# Inside: a sleep of its own as the control, wait for the joined
	# process's pid (in the sandbox's pid namespace), signal both, then
	# wait for the host's own check before ending the namespace.
	# shellcheck disable=SC2016
	$RUN_AS "$CORDON" run --rw "$V" --ro "$H" -- sh -c '
		V=$1 H=$2; sleep "3599.$3" & own=$!
		i=0; while [ ! -s "$V/target" ] && [ $i -lt 300 ]; do sleep 0.1; i=$((i + 1)); done
		p=$(cat "$V/target")
		echo "target=$p"
		"$H/esc-probe" kill "$p"
		"$H/esc-probe" kill "$own"
		i=0; while [ ! -e "$V/done" ] && [ $i -lt 300 ]; do sleep 0.1; i=$((i + 1)); done' \
		sh "$V" "$H" "$mark" >"$T/sig.out" 2>&1 &
	job=$!
	# The sandbox's sleep, by its marker (the pattern does not match itself).
	sp="" i=0
	while [ -z "$sp" ] && [ $i -lt 300 ]; do
		sp=$(grep -l -s -z -x "3599[.]$mark" /proc/[0-9]*/cmdline | sed -n 's|^/proc/\([0-9]*\)/.*|\1|p' | head -1)
		[ -n "$sp" ] || sleep 0.1
		i=$((i + 1))
	done
	# The host uid this very run has (a root caller's differs per run).
	uid=$(awk '$1 == "Uid:" { print $2 }' "/proc/$sp/status" 2>/dev/null)
	# shellcheck disable=SC2016
	nsenter -t "$sp" -p -- setpriv --reuid="$uid" --regid="$uid" --clear-groups \
		sh -c 'echo $$ >"$1/target.new" && exec sleep 60' sh "$V" &
	nj=$!
	i=0
	while [ ! -s "$V/target.new" ] && [ $i -lt 300 ]; do sleep 0.1; i=$((i + 1)); done
	# The joined process as the host sees it (nsenter's child), before the
	# sandbox is told its pid.
	hp=$(cat /proc/$nj/task/*/children 2>/dev/null | awk '{ print $1 }')
	is "$(grep -c "^Uid:.*	$uid	" "/proc/$hp/status" 2>/dev/null)" 1 \
		"$who: the joined process runs as the sandbox's host uid $uid"
	mv "$V/target.new" "$V/target"
	i=0
	while ! grep -q '^kill=.*' "$T/sig.out" 2>/dev/null && [ $i -lt 300 ]; do sleep 0.1; i=$((i + 1)); done
	sleep 0.2
	is "$(sed -n 2p "$T/sig.out")" "kill=EPERM" \
		"$who: kill(2) of a process outside the sandbox's Landlock domain is EPERM (signal scope)"
	is "$(sed -n 3p "$T/sig.out")" "kill=ok" "$who: control: the sandbox signals its own process"
	is "$(setpriv --reuid="$uid" --regid="$uid" --clear-groups "$H/esc-probe" kill "$hp")" "kill=ok" \
		"$who: control: uid $uid outside the sandbox signals the joined process"
	touch "$V/done"
	wait "$job"
	kill "$nj" 2>/dev/null
	wait "$nj" 2>/dev/null
	grep -q '^target=[0-9]' "$T/sig.out" || sed 's/^/# /' "$T/sig.out"
}

# Abstract-socket scope.  The host's side (as $RUN_AS): its abstract
# datagram socket, and an unbound datagram socket of the host's net
# namespace handed to the sandbox over the Unix socket the sandbox binds
# in the --rw directory.
cat >"$T/py/host.py" <<'EOF'
import os, socket, subprocess, sys, time
name, d = sys.argv[1], sys.argv[2]
recv = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
recv.bind("\0" + name)
recv.settimeout(3)
carrier = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
carrier.sendto(b"outside", "\0" + name)
print("outside=" + recv.recv(64).decode(), flush=True)
p = subprocess.Popen(sys.argv[3:])
sock = os.path.join(d, "fd.sock")
for _ in range(600):
    if os.path.exists(sock):
        break
    time.sleep(0.1)
c = socket.socket(socket.AF_UNIX)
c.connect(sock)
socket.send_fds(c, [b"x"], [carrier.fileno()])
c.close()
p.wait(timeout=120)
try:
    print("received=" + recv.recv(64).decode())
except socket.timeout:
    print("received=none")
EOF
cat >"$T/py/inner.py" <<'EOF'
import errno, os, socket, sys
name, d = sys.argv[1], sys.argv[2]
def attempt(what, f):
    try:
        f()
        print(what + "=ok", flush=True)
    except OSError as e:
        print(what + "=" + errno.errorcode.get(e.errno, str(e.errno)), flush=True)
mine = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
mine.bind("\0" + name + "-inside")
attempt("inside-abstract", lambda: socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM).sendto(b"i", "\0" + name + "-inside"))
path = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
path.bind(os.path.join(d, "path.sock"))
s = socket.socket(socket.AF_UNIX)
s.bind(os.path.join(d, "fd.sock.new"))
os.chmod(os.path.join(d, "fd.sock.new"), 0o777)
s.listen(1)
os.rename(os.path.join(d, "fd.sock.new"), os.path.join(d, "fd.sock"))
c, _ = s.accept()
_, fds, _, _ = socket.recv_fds(c, 16, 1)
carrier = socket.socket(fileno=fds[0])
attempt("carrier-path", lambda: carrier.sendto(b"p", os.path.join(d, "path.sock")))
attempt("carrier-abstract", lambda: carrier.sendto(b"inside", "\0" + name))
EOF
chmod 0755 "$T/py"
chmod 0644 "$T/py/host.py" "$T/py/inner.py"
abstract_each() {
	who=$1
	name=cordon-9035-$$-$who
	rm -f "$V/fd.sock" "$V/path.sock"
	$RUN_AS /usr/bin/python3 "$T/py/host.py" "$name" "$V" "$CORDON" run --rw "$V" --ro "$T/py" -- \
		/usr/bin/python3 "$T/py/inner.py" "$name" "$V" >"$T/abs.out" 2>&1
	got() { sed -n "s/^$1=//p" "$T/abs.out"; }
	is "$(got outside)" "outside" "$who: control: the host's abstract socket takes a datagram from outside"
	is "$(got inside-abstract)" "ok" "$who: control: the sandbox's own abstract sockets work"
	is "$(got carrier-path)" "ok" "$who: control: the host's socket, handed in, sends to a path socket"
	is "$(got carrier-abstract)" "EPERM" \
		"$who: through it, the host's abstract socket is EPERM (abstract-socket scope)"
	is "$(got received)" "none" "$who: and nothing reached the host's abstract socket"
	grep -q '^carrier-abstract=' "$T/abs.out" || sed 's/^/# /' "$T/abs.out"
}

scopes_each() {
	signal_each "$1"
	abstract_each "$1"
}

procsys_each() {
	who=$1
	f=/proc/sys/kernel/ns_last_pid
	if [ ! -e "$f" ] || [ "$(stat -c %a "$f")" != 666 ]; then
		skip "$who: no world-writable $f on this kernel"
	else
		is "$($RUN_AS "$H/esc-probe" open-write "$f")" "open-write=ok" "$who: control: on the host $f opens for writing"
		is "$($RUN_AS "$CORDON" run --ro "$H" -- "$H/esc-probe" open-write "$f")" "open-write=EROFS" \
			"$who: inside, opening $f for writing is EROFS (read-only mount, before Landlock's EACCES)"
		is "$($RUN_AS "$CORDON" run --ro "$H" -- "$H/esc-probe" open-read "$f")" "open-read=ok" \
			"$who: control: inside, $f reads"
	fi
	want=$(for d in /proc/sys /proc/irq /proc/bus /proc/fs; do [ -d "$d" ] && echo "$d ro"; done | sort)
	# shellcheck disable=SC2016
	is "$($RUN_AS "$CORDON" run -- awk '$5 ~ /^\/proc\/(sys|irq|bus|fs)$/ {
		print $5, ("," $6 "," ~ /,ro,/ ? "ro" : "rw") }' /proc/self/mountinfo | sort)" \
		"$want" "$who: /proc/sys, /proc/irq, /proc/bus and /proc/fs are read-only mount points"
}

ipc_each() {
	who=$1
	shm=$($RUN_AS ipcmk -M 4096 -p 0666 | awk '{ print $NF }')
	msg=$($RUN_AS ipcmk -Q -p 0666 | awk '{ print $NF }')
	key=$((0x35000000 + ($$ % 4096) * 16 + mark))
	mark=$((mark + 1))
	is "$($RUN_AS "$H/esc-probe" shm-stat "$shm") $($RUN_AS "$H/esc-probe" msg-stat "$msg")" \
		"shm-stat=ok msg-stat=ok" "$who: control: on the host the segment and the queue (mode 0666) are there"
	is "$($RUN_AS "$CORDON" run --ro "$H" -- sh -c "'$H/esc-probe' shm-stat $shm; '$H/esc-probe' msg-stat $msg" |
		tr '\n' ' ')" "shm-stat=EINVAL msg-stat=EINVAL " \
		"$who: inside, the host's System V segment and queue do not exist (EINVAL)"
	ok "$who: control: the host's /proc/sysvipc lists them" \
		sh -c "awk '\$2 == $shm' /proc/sysvipc/shm | grep -q . && awk '\$2 == $msg' /proc/sysvipc/msg | grep -q ."
	# Made inside: listed there (control), gone from the host afterwards.
	# (Without a cgroup for --memory, seccomp refuses shmget first: then
	# the record counts it, and the host's side was checked above.)
	$RUN_AS "$CORDON" run --json-fd 3 --ro "$H" -- sh -c "wc -l </proc/sysvipc/msg
		'$H/esc-probe' shm-create $key && awk '\$1 == $key { print \"listed\" }' /proc/sysvipc/shm" \
		>"$T/ipc.out" 3>"$T/ipc.rec"
	if grep -q '^shm-create=EPERM' "$T/ipc.out"; then
		record_denies "$who: shmget is refused by seccomp here (--memory without a cgroup), and counted" \
			"$T/ipc.rec" shmget 1
	else
		is "$(tr '\n' ' ' <"$T/ipc.out")" "1 shm-create=ok listed " \
			"$who: inside, /proc/sysvipc lists none of the host's; a segment made inside is listed there"
		is "$(awk -v k="$key" '$1 == k' /proc/sysvipc/shm)" "" "$who: and the host never sees it"
	fi
	ipcrm -m "$shm" -q "$msg" 2>/dev/null
	ipcrm -M "$key" 2>/dev/null
}

caps_each() {
	who=$1
	zero="CapInh=0000000000000000 CapPrm=0000000000000000 CapEff=0000000000000000 CapBnd=0000000000000000 CapAmb=0000000000000000 "
	# shellcheck disable=SC2016
	sets='awk -F "[:\t]+" "/^Cap/ { printf \"%s=%s \", \$1, \$2 }"'
	is "$($RUN_AS "$CORDON" run -- sh -c "head -1 /proc/1/status; $sets /proc/1/status")" "Name:	cordon
$zero" "$who: the sandbox's init (cordon's code, never exec'd) holds no capability in any set"
	is "$($RUN_AS "$CORDON" run -- sh -c "$sets /proc/self/status")" "$zero" "$who: nor does the command"
	ok "$who: control: on the host the bounding set is not empty" \
		sh -c "! grep -q '^CapBnd:	0000000000000000' /proc/self/status"
	is "$($RUN_AS "$CORDON" run --ro "$H" -- "$H/esc-probe" ambient-raise)" "ambient-raise=EPERM" \
		"$who: raising an ambient capability inside is EPERM"
	if [ "$(id -u)" -eq 0 ] && [ "$who" != nobody ] && command -v capsh >/dev/null; then
		is "$(capsh --inh=cap_net_bind_service -- -c "'$H/esc-probe' ambient-raise")" "ambient-raise=ok" \
			"$who: control: on the host, with the capability inheritable, the raise works"
	fi
}

# The lifeline.  Holds every descriptor of process $1 (pidfd_getfd) for
# $2 seconds; prints the kinds it holds (pipe, socket, ...) first.
cat >"$T/py/hold.py" <<'EOF'
import ctypes, os, sys, time
pid = int(sys.argv[1])
libc = ctypes.CDLL(None, use_errno=True)
pfd = os.pidfd_open(pid)
kinds = set()
held = []
for n in os.listdir("/proc/%d/fd" % pid):
    fd = libc.syscall(438, pfd, int(n), 0)  # pidfd_getfd
    if fd >= 0:
        held.append(fd)
        k = os.readlink("/proc/self/fd/%d" % fd).split(":")[0]
        kinds.add(k if k in ("pipe", "socket", "anon_inode") else "file")
print(" ".join(sorted(kinds)), flush=True)
time.sleep(float(sys.argv[2]))
EOF
chmod 0644 "$T/py/hold.py"
# The live processes with the argument $1 (an ERE), and those of them
# that are the command (comm sleep).
with_arg() {
	grep -l -s -z -x -e "$1" /proc/[0-9]*/cmdline 2>/dev/null | sed -n 's|^/proc/\([0-9]*\)/.*|\1|p'
}
command_of() {
	for p in $(with_arg "$1"); do
		[ "$(cat "/proc/$p/comm" 2>/dev/null)" = sleep ] && echo "$p"
	done
}
# kill -9 of cordon while the command runs: init dies of its parent-death
# signal, and the kernel ends the rest of its pid namespace.
running_each() {
	who=$1
	mark=$((mark + 1))
	pat="30[.]$$$mark"
	$RUN_AS "$CORDON" run -- sleep "30.$$$mark" >/dev/null 2>&1 &
	job=$!
	i=0 cmd=""
	while [ -z "$cmd" ] && [ $i -lt 300 ]; do
		cmd=$(command_of "$pat")
		[ -n "$cmd" ] || sleep 0.1
		i=$((i + 1))
	done
	ok "$who: control: the command runs" test -n "$cmd"
	# cordon: the process with the marker named cordon (init's command
	# line is blanked by now).
	for p in $(with_arg "$pat"); do
		[ "$(cat "/proc/$p/comm" 2>/dev/null)" = cordon ] && kill -9 "$p"
	done
	i=0
	while [ -n "$cmd" ] && [ $i -lt 100 ]; do
		cmd=$(command_of "$pat")
		[ -z "$cmd" ] || sleep 0.1
		i=$((i + 1))
	done
	is "$cmd" "" "$who: kill -9 of cordon while the command runs: nothing of the run is left within 10 s"
	for p in $cmd; do
		kill -9 "$(awk '$1 == "PPid:" { print $2 }' "/proc/$p/status")" "$p" 2>/dev/null
	done
	wait "$job" 2>/dev/null
}

lifeline_each() {
	who=$1
	if [ "$(id -u)" -ne 0 ] || ! command -v strace >/dev/null; then
		skip "$who: holding the supervisor's descriptors needs root and strace"
		return
	fi
	running_each "$who"
	for case in control kill; do
		mark=$((mark + 1))
		m="30.$$$mark"
		pat="30[.]$$$mark"
		# The child's first prctl (PR_SET_PDEATHSIG) waits 3 s; so does
		# cordon's own first one, long before the child starts.
		$RUN_AS strace -f -o /dev/null -e trace=prctl -e inject=prctl:delay_enter=3000000:when=1 \
			"$CORDON" run -- sleep "$m" >/dev/null 2>&1 &
		job=$!
		# cordon: the process with the marker whose parent is strace.
		sup="" i=0
		while [ -z "$sup" ] && [ $i -lt 600 ]; do
			for p in $(with_arg "$pat"); do
				pp=$(awk '$1 == "PPid:" { print $2 }' "/proc/$p/status" 2>/dev/null)
				[ "$(cat "/proc/$pp/comm" 2>/dev/null)" = strace ] && sup=$p
			done
			[ -n "$sup" ] || sleep 0.1
			i=$((i + 1))
		done
		# In its event loop (epoll_wait), the supervisor has said "run".
		i=0
		while [ "$(cut -d' ' -f1 "/proc/$sup/syscall" 2>/dev/null)" != 232 ] && [ $i -lt 600 ]; do
			sleep 0.1
			i=$((i + 1))
		done
		if [ "$case" = control ]; then
			i=0 cmd=""
			while [ -z "$cmd" ] && [ $i -lt 300 ]; do
				cmd=$(command_of "$pat")
				[ -n "$cmd" ] || sleep 0.1
				i=$((i + 1))
			done
			ok "$who: control: held at its first prctl, the child starts the command once let go" \
				test -n "$cmd"
			kill -9 "$sup" 2>/dev/null
		else
			rm -f "$T/held"
			/usr/bin/python3 "$T/py/hold.py" "$sup" 20 >"$T/held" 2>&1 &
			holder=$!
			i=0
			while [ ! -s "$T/held" ] && [ $i -lt 600 ]; do sleep 0.1; i=$((i + 1)); done
			is "$(tr ' ' '\n' <"$T/held" | grep -cx -e pipe -e socket)" 2 \
				"$who: another process holds the supervisor's pipes and sockets"
			sed 's/^/# held: /' "$T/held"
			kill -9 "$sup"
			# The hold ends 3 s after it began: give the child 10 s more.
			i=0 cmd=""
			while [ -z "$cmd" ] && [ $i -lt 100 ]; do
				cmd=$(command_of "$pat")
				[ -n "$cmd" ] || sleep 0.1
				i=$((i + 1))
			done
			is "$cmd" "" "$who: supervisor killed before the child's lifeline check: the command never starts"
			for p in $cmd; do
				kill -9 "$(awk '$1 == "PPid:" { print $2 }' "/proc/$p/status")" "$p" 2>/dev/null
			done
			kill "$holder" 2>/dev/null
			wait "$holder" 2>/dev/null
		fi
		wait "$job" 2>/dev/null
	done
}

fds_each() {
	who=$1
	if [ "$(id -u)" -ne 0 ]; then
		skip "$who: reading init's descriptors from the host needs root"
		return
	fi
	mark=$((mark + 1))
	pat="30[.]$$$mark"
	$RUN_AS "$CORDON" run -- sleep "30.$$$mark" >/dev/null 2>&1 &
	job=$!
	i=0 cmd=""
	while [ -z "$cmd" ] && [ $i -lt 300 ]; do
		cmd=$(command_of "$pat")
		[ -n "$cmd" ] || sleep 0.1
		i=$((i + 1))
	done
	init=$(awk '$1 == "PPid:" { print $2 }' "/proc/$cmd/status" 2>/dev/null)
	fds() {
		for f in /proc/"$1"/fd/*; do
			l=$(readlink "$f" 2>/dev/null) && echo "${f##*/}:${l%%:*}"
		done | sort | tr '\n' ' '
	}
	is "$(fds "$cmd")" "0:pipe 1:pipe 2:pipe " "$who: control: the command holds its three stdio pipes"
	is "$(fds "$init")" "3:socket " "$who: the sandbox's init holds the report socket and nothing else"
	kill "$cmd" 2>/dev/null
	wait "$job" 2>/dev/null
}

for part in ${CORDON_TEST_PART:-scopes procsys ipc caps lifeline fds}; do
	for_each_user "${part}_each"
done
done_testing
