#!/bin/sh
# cordon-oci's root.path and the audit record of refused containers
# (issue 20).  The image's root is bound idmapped (its root-owned files
# read as the container's own), so a root.path naming a host tree would
# show root's secrets: the root must resolve to BUNDLE/rootfs (or a mount
# made for the container, 2007) or below a store CORDON_OCI_ROOTS names.  Every container refused at
# create, by its spec or by the supervisor, leaves a "decision" record
# (deny, the reason, the container's id), not only a line in --log.
# As root and as nobody.  And the spec's seccomp profile, stacked on
# cordon's filter, narrows it.
: "${CORDON_TEST_TIMEOUT:=180}"
export CORDON_TEST_TIMEOUT
. "${CORDON_SRC:-.}/tests/lib.sh"
. "$CORDON_SRC/tests/helpers/oci-bundle.sh"
OCI=$CORDON_BUILD/cordon-oci
SHIM=$CORDON_SRC/tests/helpers/oci-shim.py
SPEC=$CORDON_SRC/tests/fuzz/corpus/oci-config/containerd-default.json
unset CORDON_OCI_ROOTS

# bundle DIR ROOT PATCH: oci_bundle with root.path ROOT, PATH /bin, a
# command that says it ran and tries /etc/shadow.
bundle() {
	oci_bundle "$1" "$2" /bin "c['process']['args'] = ['/bin/sh', '-c', 'echo ran; cat /etc/shadow 2>&1 | head -1']
$3"
}
image() {
	mkdir -p "$1/bin" "$1/etc" "$1/proc" "$1/dev" "$1/tmp"
	cp /bin/busybox "$1/bin/busybox"
	for c in sh echo cat head mkdir; do ln -sf busybox "$1/bin/$c"; done
	chmod -R a+rX "$1"
}
# records ID...: "ID decision reason" of each deny decision naming ID.
records() {
	$RUN_AS "$CORDON" log show --kind decision --json | python3 -c '
import json, sys
ids = sys.argv[1:]
for l in sys.stdin:
    r = json.loads(l)
    d = json.loads(r["details"]) if isinstance(r.get("details"), str) else r.get("details") or {}
    oid = d.get("oci", {}).get("id")
    if oid in ids and r["decision"] == "deny":
        print(oid, r["tool"], r["reason"])' "$@"
}

root_user() {
	who=$1
	W=$T/$who
	mkdir -p "$W"
	[ "$RUN_AS" = "" ] || chown 65534:65534 "$W"

	# The image at BUNDLE/rootfs (containerd's layout): it runs.
	image "$W/ok/rootfs"
	bundle "$W/ok" rootfs ""
	out=$($RUN_AS /usr/bin/python3 "$SHIM" "$OCI" "$W/root" "$W/ok" ok1 2>&1)
	is "$(echo "$out" | sed -n 2p)" "ran" "$who: control: a root at BUNDLE/rootfs runs"

	bundle "$W/r1" / ""
	refused "$who: root.path / is refused" 'error=root.path / \(/\) is outside the bundle, no CRI-O/podman overlay mount .*cordon refuses a host tree' $RUN_AS /usr/bin/python3 "$SHIM" "$OCI" "$W/root" "$W/r1" r1
	bundle "$W/r2" /etc ""
	refused "$who: root.path /etc is refused" 'error=root.path /etc \(/etc\) is outside the bundle' $RUN_AS /usr/bin/python3 "$SHIM" "$OCI" "$W/root" "$W/r2" r2
	mkdir -p "$W/r3"
	ln -s / "$W/r3/rootfs"
	bundle "$W/r3" rootfs ""
	refused "$who: BUNDLE/rootfs a symlink to / is refused (resolved)" "error=root.path $W/r3/rootfs \(/\) is outside the bundle" $RUN_AS /usr/bin/python3 "$SHIM" "$OCI" "$W/root" "$W/r3" r3
	bundle "$W/r4" "$W/ok/rootfs/bin/busybox" ""
	refused "$who: a root.path that is a file is refused" 'error=root.path .*/busybox is not a directory' $RUN_AS /usr/bin/python3 "$SHIM" "$OCI" "$W/root" "$W/r4" r4
	image "$W/store/img1"
	bundle "$W/r5" "$W/store/img1" ""
	refused "$who: a root outside the bundle, in no store named, is refused" 'error=root.path .* is outside the bundle' $RUN_AS /usr/bin/python3 "$SHIM" "$OCI" "$W/root" "$W/r5" r5
	out=$(CORDON_OCI_ROOTS=/nonexistent:$W/store $RUN_AS /usr/bin/python3 "$SHIM" "$OCI" "$W/root" "$W/r5" r5b 2>&1)
	is "$(echo "$out" | sed -n 2p)" "ran" "$who: ... and runs once CORDON_OCI_ROOTS names its store"

	# Refused by the spec (before its root is looked at): on record, with
# the reason.
	bundle "$W/p1" rootfs "c['process']['capabilities']['bounding'].append('CAP_SYS_ADMIN')"
	$RUN_AS /usr/bin/python3 "$SHIM" "$OCI" "$W/root" "$W/p1" p1 >/dev/null 2>&1
	bundle "$W/p2" rootfs "c['hooks'] = {'prestart': [{'path': '/bin/true'}]}"
	$RUN_AS /usr/bin/python3 "$SHIM" "$OCI" "$W/root" "$W/p2" p2 >/dev/null 2>&1
	bundle "$W/p3" rootfs "c['linux']['namespaces'] = [n for n in c['linux']['namespaces'] if n['type'] != 'network']"
	$RUN_AS /usr/bin/python3 "$SHIM" "$OCI" "$W/root" "$W/p3" p3 >/dev/null 2>&1
	is "$(records p1 p2 p3 r1 | sort)" "p1 container cordon refuses privileged containers: process.capabilities.bounding asks for CAP_SYS_ADMIN
p2 container config.json: hooks run host programs as root beside the container: cordon refuses them
p3 container cordon refuses host namespaces: linux.namespaces has no network namespace, which shares the host's
r1 container root.path / (/) is outside the bundle, no CRI-O/podman overlay mount (STORE/overlay/LAYER/merged) and below no image store CORDON_OCI_ROOTS names (unset): cordon refuses a host tree or another container's files as a container's root" "$who: each container refused at create is a deny decision in the audit log, naming the reason"
}
for_each_user root_user

# The spec's seccomp profile narrows cordon's filter: mkdir gets its
# errno (ENOSYS, 38), the rest runs; control: the same without it.
sc="c['linux']['seccomp'] = {'defaultAction': 'SCMP_ACT_ALLOW', 'syscalls': [{'names': ['mkdir', 'mkdirat', 'ptrace'], 'action': 'SCMP_ACT_ERRNO', 'errnoRet': 38}]}"
image "$T/sc/rootfs"
bundle "$T/sc" rootfs "c['process']['args'] = ['/bin/sh', '-c', 'mkdir /tmp/d 2>&1 && echo made; echo after']; $sc"
out=$(/usr/bin/python3 "$SHIM" "$OCI" "$T/root-sc" "$T/sc" sc1 2>&1)
is "$(echo "$out" | sed 's/^mkdir: .*: /mkdir: /')" "state=created
mkdir: Function not implemented
after
exit=0
after=stopped" "the spec's seccomp profile refuses mkdir (errno 38) inside cordon's walls"
image "$T/sc0/rootfs"
bundle "$T/sc0" rootfs "c['process']['args'] = ['/bin/sh', '-c', 'mkdir /tmp/d && echo made; echo after']"
out=$(/usr/bin/python3 "$SHIM" "$OCI" "$T/root-sc" "$T/sc0" sc0 2>&1)
is "$out" "state=created
made
after
exit=0
after=stopped" "control: without the profile mkdir works"

# kill -9 of a container's supervisor: the intent stays without a result,
# and verify names the container (its bundle) beside the run id.
image "$T/k9/rootfs"
bundle "$T/k9" rootfs "c['process']['args'] = ['/bin/sh', '-c', 'echo up; exec sleep 1000']"
/usr/bin/python3 "$SHIM" "$OCI" "$T/root-k9" "$T/k9" k9 >"$T/k9.out" 2>&1 &
k9_shim=$!
i=0
while ! grep -q '^up$' "$T/k9.out" 2>/dev/null && [ $i -lt 300 ]; do sleep 0.1; i=$((i + 1)); done
kill -9 "$(cat "$T/k9/init.pid")"
wait $k9_shim
is "$(grep -E '^(exit|signal)=' "$T/k9.out")" "signal=9" "kill -9 of the supervisor: the shim reaps it (signal 9)"
"$CORDON" log verify >"$T/verify.out" 2>&1
ok "verify names the container whose run has no result (tool container, its bundle)" grep -Eq "^interrupted: run [0-9a-f]+ \(intent at seq [0-9]+\) has no result: tool container, target $T/k9\$" "$T/verify.out"
"$CORDON" log verify --json >"$T/verify.json" 2>&1
ok "verify --json too" python3 -c "
import json, sys
r = json.load(open('$T/verify.json'))
sys.exit(0 if any(x['tool'] == 'container' and x['target'] == '$T/k9' for x in r['interrupted_runs']) else 1)"

# root.path swapped for a symlink to a host tree while it is checked
# (an attacker's review: 3 runs in 20 read /etc/shadow through the
# idmapped root).  A flipper exchanges BUNDLE/rootfs and a link to a
# host tree holding a marker only root may read; no run may show it.
HOSTT=$T/race-host
mkdir -p "$HOSTT/bin" "$HOSTT/proc" "$HOSTT/dev" "$HOSTT/tmp" "$HOSTT/etc"
cp /bin/busybox "$HOSTT/bin/busybox"
for c in sh cat head; do ln -sf busybox "$HOSTT/bin/$c"; done
echo HOST-ONLY-SECRET >"$HOSTT/etc/shadow"
chmod 0600 "$HOSTT/etc/shadow"
image "$T/race/rootfs"
ln -s "$HOSTT" "$T/race/evil"
bundle "$T/race" rootfs ""
python3 -c '
import ctypes, os, sys
libc = ctypes.CDLL(None, use_errno=True)
os.chdir(sys.argv[1])
while True:
    libc.renameat2(-100, b"rootfs", -100, b"evil", 2)
' "$T/race" &
flip=$!
# the flipper goes with the test however it ends (a failure, the
# watchdog's TERM): only the PIDs this test started
trap 'stop_bg $flip $race_shim; _tap_cleanup' EXIT
trap 'exit 143' TERM
trap 'exit 130' INT
race_shim=""
leaked=0 ran=0
for i in $(seq 1 20); do
	# in the background so that the watchdog's TERM ends the wait
	/usr/bin/python3 "$SHIM" "$OCI" "$T/root-race" "$T/race" race$i >"$T/race.out" 2>&1 &
	race_shim=$!
	wait $race_shim
	race_shim=""
	out=$(cat "$T/race.out")
	case $out in *HOST-ONLY-SECRET*) leaked=$((leaked + 1)) ;; esac
	case $out in *ran*) ran=$((ran + 1)) ;; esac
done
kill $flip
wait $flip 2>/dev/null
trap _tap_cleanup EXIT
trap - TERM INT
is "$leaked" 0 "root.path swapped for a host tree while checked: no run of 20 reads the host's file"
diag "$ran of 20 ran (the rest refused)"
[ -L "$T/race/evil" ] || { mv "$T/race/evil" "$T/race/x"; mv "$T/race/rootfs" "$T/race/evil"; mv "$T/race/x" "$T/race/rootfs"; }
out=$(/usr/bin/python3 "$SHIM" "$OCI" "$T/root-race" "$T/race" race-ctl 2>&1)
is "$(echo "$out" | sed -n 2p)" "ran" "control: the same bundle runs without the flipper"

# Refused by the supervisor (after the spec parsed): on record too.
image "$T/s1/rootfs"
bundle "$T/s1" rootfs "c['linux']['namespaces'][1]['path'] = '/etc/passwd'"
refused "a namespace path that is not a namespace is refused" 'error=linux.namespaces ipc: /etc/passwd is not a namespace' /usr/bin/python3 "$SHIM" "$OCI" "$T/root-s" "$T/s1" s1
is "$(records s1)" "s1 container linux.namespaces ipc: /etc/passwd is not a namespace" "the supervisor's refusal is a deny decision in the audit log"

done_testing
