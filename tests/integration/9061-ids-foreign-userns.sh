#!/bin/sh
# A root run's host id must be used by no other process, wherever it
# lives.  The slot keeper (a process of the id under RLIMIT_NPROC 2)
# misses a process of the id inside a user namespace another user owns:
# the kernel charges that namespace's owner, not the id.  Here uid 65534
# creates a user namespace, root maps the window's first slot's uid to its
# root, and the process inside takes that id (kuid = the slot's uid,
# counted against nobody).  Before, the next root run took that very id
# (session 6's attacker, finding 4); now /proc is read for live processes
# of the id too, and the run takes the next slot.  Controls: before the
# process, and after it ended, a run takes the first slot.  Root callers
# only (a rootless caller's sandbox is the caller).
#
# Then the same with a thread: credentials are per thread, and one that
# takes the id by a raw setresuid (no C library broadcast to the other
# threads) leaves its leader's /proc/PID/status showing nobody.  Before,
# the next root run took the id and that thread could signal its sandbox
# (session 8's attacker, F4); now the threads of a multi-threaded process
# are read too.
: "${CORDON_TEST_TIMEOUT:=120}"
export CORDON_TEST_TIMEOUT
. "${CORDON_SRC:-.}/tests/lib.sh"

if [ "$(id -u)" -ne 0 ]; then
	skip "root callers only: a rootless caller's sandbox is the caller"
	done_testing
fi
field() { sed -n 's/^{"run_id".*"'"$2"'":\([0-9]*\|null\)[,}].*/\1/p' "$1" | tail -n1; }

mkdir -m 0755 "$T/w"
cd "$T/w" || exit 1
win=910:2 # away from the low slots other root runs take first, and from 9046's

CORDON_TEST_ID_SLOTS=$win "$CORDON" run --json -- true >"$T/A.rec" 2>"$T/A.err"
uA=$(field "$T/A.rec" host_uid)
ok "control: a run takes the window's first slot (uid $uA)" test -n "$uA"

# As nobody: a user namespace of its own; wait for root to map it; then
# become its root (the slot's uid on the host) and wait for "stop".
chmod 0777 "$T"
py=/usr/bin/python3 # nobody's, not a per-user shim
[ -x $py ] || py=python3
setpriv --reuid=65534 --regid=65534 --clear-groups $py -c '
import ctypes, os, sys, time
l = ctypes.CDLL(None, use_errno=True)
if l.unshare(0x10000000) != 0:
    sys.exit("unshare: %d" % ctypes.get_errno())
open(sys.argv[1] + "/ns.pid", "w").write(str(os.getpid()))
while not os.path.exists(sys.argv[1] + "/mapped"):
    time.sleep(0.02)
os.setresgid(0, 0, 0)
os.setresuid(0, 0, 0)
open(sys.argv[1] + "/ns.up", "w").write("up")
while not os.path.exists(sys.argv[1] + "/stop"):
    time.sleep(0.05)
' "$T" 2>"$T/ns.err" &
np=$!
i=0
while [ ! -s "$T/ns.pid" ] && [ $i -lt 200 ]; do sleep 0.05; i=$((i + 1)); done
pid=$(cat "$T/ns.pid" 2>/dev/null)
echo "0 $uA 1" >"/proc/$pid/uid_map" && echo deny >"/proc/$pid/setgroups" &&
	echo "0 $uA 1" >"/proc/$pid/gid_map" && : >"$T/mapped"
i=0
while [ ! -e "$T/ns.up" ] && [ $i -lt 200 ]; do sleep 0.05; i=$((i + 1)); done
kuid=$(sed -n 's/^Uid:\t\([0-9]*\).*/\1/p' "/proc/$pid/status")
owner=$(python3 -c '
import fcntl, struct, sys
with open(sys.argv[1], "rb") as f:
    b = bytearray(4)
    fcntl.ioctl(f.fileno(), 0xb704, b)  # NS_GET_OWNER_UID
    print(struct.unpack("I", bytes(b))[0])' "/proc/$pid/ns/user")
is "$kuid:$owner" "$uA:65534" \
	"control: a process of uid $uA lives in a user namespace uid 65534 owns"
sed 's/^/#   /' "$T/ns.err" | head -3

CORDON_TEST_ID_SLOTS=$win "$CORDON" run --json -- true >"$T/B.rec" 2>"$T/B.err"
uB=$(field "$T/B.rec" host_uid)
sed 's/^/#   /' "$T/B.err" | head -3
ok "a root run while that process lives takes another id ($uB, not $uA)" \
	test -n "$uB" -a "$uB" != "$uA"
is "$(( ${uB:-0} - ${uA:-0} ))" 1 "... the window's next slot"

: >"$T/stop"
wait $np
CORDON_TEST_ID_SLOTS=$win "$CORDON" run --json -- true >"$T/C.rec" 2>"$T/C.err"
is "$(field "$T/C.rec" host_uid)" "$uA" "control: after it ended, a run takes the first slot again"

# The thread variant: the leader stays nobody (inside uid 1), one thread
# becomes inside uid 0 = the slot's uid.
rm -f "$T/ns.pid" "$T/mapped" "$T/tid" "$T/stop"
setpriv --reuid=65534 --regid=65534 --clear-groups $py -c '
import ctypes, os, sys, threading, time
l = ctypes.CDLL(None, use_errno=True)
if l.unshare(0x10000000) != 0:
    sys.exit("unshare: %d" % ctypes.get_errno())
d = sys.argv[1]
open(d + "/ns.pid", "w").write(str(os.getpid()))
while not os.path.exists(d + "/mapped"):
    time.sleep(0.02)
def t():
    if l.syscall(119, 0, 0, 0) != 0 or l.syscall(117, 0, 0, 0) != 0:
        sys.stderr.write("setresuid: %d\n" % ctypes.get_errno())
    open(d + "/tid", "w").write(str(threading.get_native_id()))
    while not os.path.exists(d + "/stop"):
        time.sleep(0.05)
th = threading.Thread(target=t)
th.start()
th.join()
' "$T" 2>"$T/th.err" &
np=$!
i=0
while [ ! -s "$T/ns.pid" ] && [ $i -lt 200 ]; do sleep 0.05; i=$((i + 1)); done
pid=$(cat "$T/ns.pid" 2>/dev/null)
printf '0 %s 1\n1 65534 1\n' "$uA" >"/proc/$pid/uid_map" && echo deny >"/proc/$pid/setgroups" &&
	printf '0 %s 1\n1 65534 1\n' "$uA" >"/proc/$pid/gid_map" && : >"$T/mapped"
i=0
while [ ! -s "$T/tid" ] && [ $i -lt 200 ]; do sleep 0.05; i=$((i + 1)); done
tid=$(cat "$T/tid" 2>/dev/null)
lead=$(sed -n 's/^Uid:\t\([0-9]*\).*/\1/p' "/proc/$pid/status")
thr=$(sed -n 's/^Uid:\t\([0-9]*\).*/\1/p' "/proc/$pid/task/$tid/status" 2>/dev/null)
is "$lead:$thr" "65534:$uA" "control: the leader is nobody, its thread $tid has uid $uA"
sed 's/^/#   /' "$T/th.err" | head -3

CORDON_TEST_ID_SLOTS=$win "$CORDON" run --json -- true >"$T/D.rec" 2>"$T/D.err"
uD=$(field "$T/D.rec" host_uid)
sed 's/^/#   /' "$T/D.err" | head -3
ok "a root run while that thread lives takes another id ($uD, not $uA)" \
	test -n "$uD" -a "$uD" != "$uA"

: >"$T/stop"
wait $np
CORDON_TEST_ID_SLOTS=$win "$CORDON" run --json -- true >"$T/E.rec" 2>"$T/E.err"
is "$(field "$T/E.rec" host_uid)" "$uA" "control: after it ended, a run takes the first slot again"
done_testing
