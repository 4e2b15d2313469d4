#!/bin/sh
# A Kubernetes pod under cordon-oci (issue 20), emulated without a
# kubelet: containerd's CRI plugin starts a sandbox ("pause") container,
# then gives each of the pod's containers the pause's /proc/PID/ns/{net,
# ipc,uts} by path, PID being the pid-file process (cordon's supervisor).
# Checked: the supervisor is in its container's namespaces; a second
# container joins them (same namespaces, the pod's hostname, a System V
# segment of the pause seen, the pod network's interface seen) but has no
# IP sockets there (UDP would leave through CNI's route); user, mount and
# pid namespaces by path, the host's namespaces and files that are not
# namespaces are refused; the result record names the joined paths;
# rootless cordon-oci refuses joining.  Control: a container of its own.
: "${CORDON_TEST_TIMEOUT:=240}"
export CORDON_TEST_TIMEOUT
. "${CORDON_SRC:-.}/tests/lib.sh"
. "$CORDON_SRC/tests/helpers/oci-bundle.sh"
OCI=$CORDON_BUILD/cordon-oci
H=$CORDON_BUILD/tests/helpers
SHIM=$CORDON_SRC/tests/helpers/oci-shim.py
SPEC=$CORDON_SRC/tests/fuzz/corpus/oci-config/containerd-default.json
# The image's root is outside the bundles (one for all, as CRI-O's store
# is): cordon-oci takes such roots only from the stores CORDON_OCI_ROOTS names.
export CORDON_OCI_ROOTS=$T

if [ "$(id -u)" -ne 0 ]; then
	skip "2004: joining a pod's namespaces needs root (containerd's); uid $(id -u) ran"
	done_testing
	exit 0
fi

R=$T/rootfs
mkdir -p "$R/bin" "$R/probe" "$R/etc" "$R/proc" "$R/dev" "$R/sys" "$R/tmp"
cp /bin/busybox "$R/bin/busybox"
for c in sh echo cat sleep hostname readlink grep; do ln -s busybox "$R/bin/$c"; done
cp "$H/esc-probe" "$R/probe/"
chmod -R a+rX "$R"

# bundle DIR PATCH: oci_bundle with root.path R, PATH /bin:/probe.
bundle() { oci_bundle "$1" "$R" /bin:/probe "$2"; }
# join "net ipc uts" PID: the python that gives those namespaces of
# /proc/PID/ns by path (net, ipc, uts, pid, mnt, user).
join() {
	echo "
m = {'net': 'network', 'ipc': 'ipc', 'uts': 'uts', 'pid': 'pid', 'mnt': 'mount', 'user': 'user'}
want = {m[k]: '/proc/$2/ns/' + k for k in '$1'.split()}
for n in c['linux']['namespaces']:
    if n['type'] in want: n['path'] = want.pop(n['type'])
for t, p in want.items(): c['linux']['namespaces'].append({'type': t, 'path': p})"
}
NSLINKS='for n in net ipc uts; do readlink /proc/self/ns/$n; done'

# The pod's sandbox container: its hostname, a System V segment (key
# 0x2004) and its namespaces printed, then it sleeps as pause does.
bundle "$T/pause" "c['hostname'] = 'pod2004'; c['process']['args'] = ['/bin/sh', '-c', 'esc-probe shm-create 0x2004; $NSLINKS; echo ready; exec sleep 1000']"
/usr/bin/python3 "$SHIM" "$OCI" "$T/root" "$T/pause" pause >"$T/pause.out" 2>&1 &
shim_pid=$!
trap '"$OCI" --root "$T/root" kill pause KILL 2>/dev/null; wait $shim_pid 2>/dev/null; _tap_cleanup' EXIT
i=0
while ! grep -q '^ready$' "$T/pause.out" 2>/dev/null && [ $i -lt 300 ]; do sleep 0.1; i=$((i + 1)); done
SUP=$(cat "$T/pause/init.pid")
is "$(grep -E '^(state|shm-create)' "$T/pause.out")" "state=created
shm-create=ok" "pause: created, then its System V segment made"
want=$(for n in net ipc uts; do readlink "/proc/$SUP/ns/$n"; done)
is "$(grep -E '^(net|ipc|uts):' "$T/pause.out")" "$want" "pause: the pid-file process (cordon's supervisor) is in its container's network, IPC and UTS namespaces, where CRI looks for the pod's"
ok "pause: those are not the host's" sh -c "[ \"\$(readlink /proc/$SUP/ns/net)\" != \"\$(readlink /proc/$$/ns/net)\" ] && [ \"\$(readlink /proc/$SUP/ns/uts)\" != \"\$(readlink /proc/$$/ns/uts)\" ]"
# CNI would put an interface into the pod's network namespace (never into
# the host's: only when the supervisor is not in it).
if [ "$(readlink "/proc/$SUP/ns/net")" != "$(readlink /proc/$$/ns/net)" ]; then
	ok "the pod's network gets an interface, as CNI gives one" nsenter --net="/proc/$SUP/ns/net" ip link add d2004 type veth peer name d2004b
else
	nok "the pod's network gets an interface, as CNI gives one (the supervisor is in the host's)" true
fi

# A container of the pod: joins the pause's three namespaces by path.
bundle "$T/app" "c['hostname'] = 'ignored'; c['process']['args'] = ['/bin/sh', '-c', 'hostname; $NSLINKS; esc-probe shm-create 0x2004; grep -o d2004: /proc/net/dev; esc-probe udp 127.0.0.1 9; esc-probe tcp 127.0.0.1 9; esc-probe ids | grep euid']$(join "net ipc uts" "$SUP")"
out=$(/usr/bin/python3 "$SHIM" "$OCI" "$T/root" "$T/app" app 2>&1)
is "$out" "state=created
pod2004
$want
shm-create=EEXIST
d2004:
socket=EPERM
socket=EPERM
euid=1000
exit=0
after=stopped" "app: joins the pod: the pause's hostname, network, IPC and UTS namespaces, its segment (EEXIST) and CNI's interface; no IP sockets in the pod's network; still uid 1000"

# Control: a container of its own sees none of the pod.
bundle "$T/own" "c['hostname'] = 'own2004'; c['process']['args'] = ['/bin/sh', '-c', 'hostname; $NSLINKS; esc-probe shm-create 0x2004; grep -c d2004: /proc/net/dev; esc-probe udp 127.0.0.1 9']"
out=$(/usr/bin/python3 "$SHIM" "$OCI" "$T/root" "$T/own" own 2>&1)
ok "control: a container with namespaces of its own has other ones" sh -c "! echo '$out' | grep -Fxq '$(readlink /proc/$SUP/ns/net)' && ! echo '$out' | grep -Fxq '$(readlink /proc/$SUP/ns/ipc)'"
is "$(echo "$out" | grep -vE '^(net|ipc|uts):')" "state=created
own2004
shm-create=ok
0
sendto=ok
exit=0
after=stopped" "control: its own hostname, no pause segment, no CNI interface, UDP on its own loopback"

# Refused, each with why.
# The pause's process: in the pause's own user, mount and pid namespaces.
PAUSE=$(for c in $(pgrep -P "$SUP"); do pgrep -P "$c" -x sleep; done | head -1)
diag "supervisor $SUP, pause process ${PAUSE:-none}"
bundle "$T/r1" "c['process']['args'] = ['/bin/true']$(join "net user" "$PAUSE")"
refused "a user namespace by path is refused" 'error=linux.namespaces user joins /proc/[0-9]+/ns/user: cordon maps the container.s ids into a user namespace of its own' /usr/bin/python3 "$SHIM" "$OCI" "$T/root" "$T/r1" r1
bundle "$T/r2" "c['process']['args'] = ['/bin/true']$(join "mnt" "$PAUSE")"
refused "a mount namespace by path is refused" 'error=linux.namespaces mount joins .*never enters another.s mounts' /usr/bin/python3 "$SHIM" "$OCI" "$T/root" "$T/r2" r2
bundle "$T/r3" "c['process']['args'] = ['/bin/true']$(join "pid" "$PAUSE")"
refused "a pid namespace by path (shareProcessNamespace) is refused" 'error=linux.namespaces pid joins .*a pid namespace of its own' /usr/bin/python3 "$SHIM" "$OCI" "$T/root" "$T/r3" r3
bundle "$T/r4" "c['process']['args'] = ['/bin/true']$(join "net" $$)"
refused "the host's network namespace by path is refused" "error=cordon refuses host namespaces: linux.namespaces network joins the host's" /usr/bin/python3 "$SHIM" "$OCI" "$T/root" "$T/r4" r4
bundle "$T/r5" "c['process']['args'] = ['/bin/true']; c['linux']['namespaces'][1]['path'] = '/etc/passwd'"
refused "a file that is not a namespace is refused" 'error=linux.namespaces ipc: /etc/passwd is not a namespace' /usr/bin/python3 "$SHIM" "$OCI" "$T/root" "$T/r5" r5
bundle "$T/r6" "c['process']['args'] = ['/bin/true']; c['linux']['namespaces'][1]['path'] = '/proc/$SUP/ns/net'"
refused "a namespace of another type is refused" 'error=linux.namespaces ipc: /proc/[0-9]+/ns/net is not a ipc namespace' /usr/bin/python3 "$SHIM" "$OCI" "$T/root" "$T/r6" r6
mkdir -p "$T/nobody"
chown 65534:65534 "$T/nobody"
RUN_AS=as_nobody bundle "$T/r7" "c['process']['args'] = ['/bin/true']$(join "net ipc uts" "$SUP")"
refused "nobody: joining a pod's namespaces needs root" 'error=linux.namespaces network joins .*needs cordon-oci to run as root' as_nobody /usr/bin/python3 "$SHIM" "$OCI" "$T/nobody/root" "$T/r7" r7

# The record names what was joined.
python3 - "$SUP" <<'PY' >"$T/rec" 2>&1
import json, os, subprocess, sys
for l in subprocess.run([os.environ["CORDON"], "log", "show", "--tool", "container", "--json"],
                        capture_output=True, text=True).stdout.splitlines():
    r = json.loads(l)
    if r["kind"] == "run.result" and r["details"]["oci"]["id"] in ("app", "own"):
        ns = r["details"]["oci"]["namespaces"]
        print(r["details"]["oci"]["id"], ns["network"], ns["ipc"], ns["uts"])
PY
is "$(cat "$T/rec")" "app /proc/$SUP/ns/net /proc/$SUP/ns/ipc /proc/$SUP/ns/uts
own own own own" "the result records name the namespaces joined (by path) or made (own)"

"$OCI" --root "$T/root" kill pause KILL
wait $shim_pid
is "$(tail -2 "$T/pause.out")" "exit=137
after=stopped" "pause: kill KILL ends the pod's sandbox container"
trap _tap_cleanup EXIT
done_testing
