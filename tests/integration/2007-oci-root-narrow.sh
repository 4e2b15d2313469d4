#!/bin/sh
# cordon-oci's root.path may name only the container's own root (issue
# 20, attacker F6): BUNDLE/rootfs, a mount made for it below the bundle,
# a CRI-O/podman STORE/overlay/LAYER/merged mount, or a directory below
# one CORDON_OCI_ROOTS names.  Any other directory of the image stores is
# refused with a deny record: runc's state (/run/containerd/runc),
# another container's rootfs, the snapshotter's layers of every image.
# The test runs in a private mount namespace with tmpfs over
# /run/containerd and /var/lib, where it lays out containerd's and
# CRI-O's paths as they are on a node; as root and as nobody.
if [ "$(id -u)" -eq 0 ] && [ -z "${CORDON_2007_NS:-}" ]; then
	CORDON_2007_NS=1 exec unshare -m --propagation private sh "$0" "$@"
fi
: "${CORDON_TEST_TIMEOUT:=180}"
export CORDON_TEST_TIMEOUT
. "${CORDON_SRC:-.}/tests/lib.sh"
OCI=$CORDON_BUILD/cordon-oci
SHIM=$CORDON_SRC/tests/helpers/oci-shim.py
SPEC=$CORDON_SRC/tests/fuzz/corpus/oci-config/containerd-default.json
unset CORDON_OCI_ROOTS
if [ "$(id -u)" -ne 0 ]; then
	skip "2007: laying out containerd's paths needs root (a mount namespace); uid $(id -u) ran"
	done_testing
	exit 0
fi
# the mounts go before the test's directory does (binds of $T/img)
trap 'umount -R /run/containerd /var/lib 2>/dev/null; _tap_cleanup' EXIT
mount -t tmpfs -o mode=0755 none /run/containerd || { nok "tmpfs on /run/containerd"; done_testing; }
mount -t tmpfs -o mode=0755 none /var/lib || { nok "tmpfs on /var/lib"; done_testing; }

# bundle DIR ROOT: containerd's default spec, root.path ROOT.
bundle() {
	mkdir -p "$1"
	python3 -c "
import json
c = json.load(open('$SPEC'))
c['linux'].pop('cgroupsPath', None)
c['root'] = {'path': '$2', 'readonly': True}
c['process']['env'] = ['PATH=/bin']
c['process']['args'] = ['/bin/sh', '-c', 'echo ran']
json.dump(c, open('$1/config.json', 'w'))"
	chmod -R a+rX "$1"
	[ "$RUN_AS" = "" ] || chown 65534:65534 "$1" "$1/config.json"
}
image() {
	mkdir -p "$1/bin" "$1/etc" "$1/proc" "$1/dev" "$1/tmp"
	cp /bin/busybox "$1/bin/busybox"
	ln -sf busybox "$1/bin/sh"
	ln -sf busybox "$1/bin/echo"
	chmod -R a+rX "$1"
}
# records ID: "ID decision reason" of the deny decision naming ID.
records() {
	$RUN_AS "$CORDON" log show --kind decision --json | python3 -c '
import json, sys
for l in sys.stdin:
    r = json.loads(l)
    d = json.loads(r["details"]) if isinstance(r.get("details"), str) else r.get("details") or {}
    if d.get("oci", {}).get("id") == sys.argv[1] and r["decision"] == "deny":
        print(sys.argv[1], r["decision"], r["reason"])' "$1"
}

# containerd's layout: the task bundles of namespace t2007, each with its
# rootfs mounted (a bind stands for the overlay containerd mounts), runc's
# state, the snapshotter's layers; CRI-O's store with one merged mount.
TASK=/run/containerd/io.containerd.runtime.v2.task/t2007
SNAP=/var/lib/containerd/io.containerd.snapshotter.v1.overlayfs/snapshots
CRIO=/var/lib/containers/storage/overlay
image "$T/img"
for d in "$SNAP/1/fs" "/run/containerd/runc/t2007/other" "$TASK/other/rootfs" "$CRIO/l1/merged" \
	"$CRIO/l2/merged"; do
	image "$d"
done
mount --bind "$T/img" "$TASK/other/rootfs"
mount --bind "$T/img" "$CRIO/l1/merged"

narrow() {
	who=$1
	n=0
	# mine NAME ROOT: a fresh task bundle ID NAME-who with its rootfs
	# mounted, root.path ROOT.
	mine() {
		B=$TASK/$1-$who
		mkdir -p "$B/rootfs"
		mount --bind "$T/img" "$B/rootfs"
		bundle "$B" "$2"
	}
	run() { $RUN_AS /usr/bin/python3 "$SHIM" "$OCI" "$T/root-$who" "$TASK/$1-$who" "$1-$who" 2>&1; }
	mkdir -p "$T/root-$who"
	[ "$RUN_AS" = "" ] || chown 65534:65534 "$T/root-$who" "$TASK"

	mine ok rootfs
	is "$(run ok | sed -n 2p)" "ran" "$who: control: root.path rootfs (BUNDLE/rootfs, containerd's) runs"
	mine abs "$TASK/abs-$who/rootfs"
	is "$(run abs | sed -n 2p)" "ran" "$who: ... and so does its absolute path"
	mine sub rootfs/bin
	refused "$who: a directory in the bundle that is no mount is refused" \
		'error=root.path .*/sub-'$who'/rootfs/bin \(.*\) is in the bundle but is neither BUNDLE/rootfs nor a mount' run sub
	mine m rootfs/tmp
	mount --bind "$T/img" "$TASK/m-$who/rootfs/tmp"
	is "$(run m | sed -n 2p)" "ran" "$who: ... a mount made there for the container is taken"

	why='is outside the bundle, no CRI-O/podman overlay mount \(STORE/overlay/LAYER/merged\) and below no image store CORDON_OCI_ROOTS names \(unset\): cordon refuses a host tree or another'
	mine runc /run/containerd/runc
	refused "$who: runc's state dir /run/containerd/runc is refused" "error=root.path /run/containerd/runc \(/run/containerd/runc\) $why" run runc
	mine other "$TASK/other/rootfs"
	refused "$who: another container's rootfs (a mount) is refused" "error=root.path $TASK/other/rootfs .*$why" run other
	mine snap "$SNAP"
	refused "$who: the snapshotter's store of every image is refused" "error=root.path $SNAP .*$why" run snap
	mine layer "$SNAP/1/fs"
	refused "$who: ... and one of its layers" "error=root.path $SNAP/1/fs .*$why" run layer
	mine crio0 "$CRIO/l2/merged"
	refused "$who: a CRI-O merged directory that is no mount is refused" "error=root.path $CRIO/l2/merged .*$why" run crio0
	mine crio "$CRIO/l1/merged"
	is "$(run crio | sed -n 2p)" "ran" "$who: a CRI-O/podman STORE/overlay/LAYER/merged mount is taken"
	export CORDON_OCI_ROOTS=/nonexistent:/var/lib/containerd
	out=$(run layer)
	unset CORDON_OCI_ROOTS
	is "$(echo "$out" | sed -n 2p)" "ran" "$who: ... a layer is taken once CORDON_OCI_ROOTS names its store"
	is "$(records "runc-$who")" "runc-$who deny root.path /run/containerd/runc (/run/containerd/runc) is outside the bundle, no CRI-O/podman overlay mount (STORE/overlay/LAYER/merged) and below no image store CORDON_OCI_ROOTS names (unset): cordon refuses a host tree or another container's files as a container's root" \
		"$who: the refusal is a deny decision in the audit log"
}
for_each_user narrow

done_testing
