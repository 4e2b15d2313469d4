#!/bin/sh
# cordon-oci refuses the host's namespaces by path even where pid 1's
# /proc/1/ns cannot be read (EACCES on some machines, even as root) and
# cordon-oci itself is not in the host's network namespace (its own is
# then no guide).  The host's are told by the kernel's fixed numbers for
# the initial namespaces and by kthreadd's (/proc/2/ns), whatever /proc/1
# allows: a network, IPC or UTS path that is the host's, or a
# bind-mounted copy of one, is refused.  Control: a namespace made for a
# pod (a process in a new network namespace) is joined.  Root only:
# joining needs root (containerd's).
: "${CORDON_TEST_TIMEOUT:=180}"
export CORDON_TEST_TIMEOUT
. "${CORDON_SRC:-.}/tests/lib.sh"
OCI=$CORDON_BUILD/cordon-oci
SHIM=$CORDON_SRC/tests/helpers/oci-shim.py
SPEC=$CORDON_SRC/tests/fuzz/corpus/oci-config/containerd-default.json
export CORDON_OCI_ROOTS=$T

if [ "$(id -u)" -ne 0 ]; then
	skip "2006: joining namespaces by path needs root (containerd's); uid $(id -u) ran"
	done_testing
	exit 0
fi
for c in unshare nsenter; do
	command -v $c >/dev/null 2>&1 || { skip "$c is not installed (util-linux)"; done_testing; }
done

R=$T/rootfs
mkdir -p "$R/bin" "$R/etc" "$R/proc" "$R/dev" "$R/sys" "$R/tmp"
cp /bin/busybox "$R/bin/busybox"
for c in sh echo cat readlink; do ln -s busybox "$R/bin/$c"; done
chmod -R a+rX "$R"

# bundle DIR TYPE PATH: containerd's default spec, namespace TYPE by PATH.
bundle() {
	mkdir -p "$1"
	python3 -c "
import json
c = json.load(open('$SPEC'))
c['linux'].pop('cgroupsPath', None)  # one cgroup a container: not the corpus's shared one
c['root'] = {'path': '$R', 'readonly': True}
c['process']['env'] = ['PATH=/bin']
c['process']['args'] = ['/bin/sh', '-c', 'readlink /proc/self/ns/net']
for n in c['linux']['namespaces']:
    if n['type'] == '$2': n['path'] = '$3'
json.dump(c, open('$1/config.json', 'w'))"
}
# shim ID: the runc shim's calls, run in a network namespace of their own
# (so cordon-oci's own is not the host's).
shim() {
	unshare -n /usr/bin/python3 "$SHIM" "$OCI" "$T/root" "$T/$1" "$1"
}

touch "$T/hostnet"
mount --bind /proc/$$/ns/net "$T/hostnet"
unshare -n sleep 120 &
pod_pid=$!
trap 'umount "$T/hostnet" 2>/dev/null; kill $pod_pid 2>/dev/null; wait $pod_pid 2>/dev/null; _tap_cleanup' EXIT
i=0
while [ "$(readlink /proc/$pod_pid/ns/net)" = "$(readlink /proc/$$/ns/net)" ] && [ $i -lt 100 ]; do sleep 0.05; i=$((i + 1)); done

diag "pid 1's namespaces readable: $(readlink /proc/1/ns/net >/dev/null 2>&1 && echo yes || echo no)"
ok "cordon-oci's own network namespace is not the host's under unshare -n (the case the old check missed)" sh -c "[ \"\$(unshare -n readlink /proc/self/ns/net)\" != \"\$(readlink /proc/$$/ns/net)\" ]"

bundle "$T/h1" network /proc/$$/ns/net
refused "the host's network namespace (/proc/PID/ns/net of a host process) is refused" "error=cordon refuses host namespaces: linux.namespaces network joins the host's" shim h1
bundle "$T/h2" network "$T/hostnet"
refused "a bind-mounted copy of the host's network namespace is refused" "error=cordon refuses host namespaces: linux.namespaces network joins the host's \\($T/hostnet\\)" shim h2
bundle "$T/h3" ipc /proc/$$/ns/ipc
refused "the host's IPC namespace is refused" "error=cordon refuses host namespaces: linux.namespaces ipc joins the host's" shim h3
bundle "$T/h4" uts /proc/$$/ns/uts
refused "the host's UTS namespace is refused" "error=cordon refuses host namespaces: linux.namespaces uts joins the host's" shim h4

# Control: a pod's network namespace (a process in a new one) is joined.
bundle "$T/p1" network /proc/$pod_pid/ns/net
out=$(shim p1 2>&1)
is "$out" "state=created
$(readlink /proc/$pod_pid/ns/net)
exit=0
after=stopped" "control: a pod's network namespace is joined (the container is in it)"

# Each refusal is on record.
n=$("$CORDON" log show --kind decision --json 2>/dev/null | grep -c "joins the host's")
is "$n" 4 "the four refusals are deny decisions on record"
done_testing
