#!/bin/sh
# cordon-oci's spec binds (volumes, hostPath) give the container no more
# on host files than its own unprivileged host id has ("other"), though
# the runtime runs as root under containerd: a root-only file in a bound
# tree stays unreadable and a root-owned file unwritable, read-only or
# read-write bind alike, while what anyone may read or write still works
# (the positive controls).  The host's /dev, /proc and /sys are refused
# at create, the reason in --log where containerd reads it.
# Checked as root and as nobody (a rootless caller's binds were always
# plain).
: "${CORDON_TEST_TIMEOUT:=300}"
export CORDON_TEST_TIMEOUT
. "${CORDON_SRC:-.}/tests/lib.sh"
. "$CORDON_SRC/tests/helpers/oci-bundle.sh"
OCI=$CORDON_BUILD/cordon-oci
SHIM=$CORDON_SRC/tests/helpers/oci-shim.py
SPEC=$CORDON_SRC/tests/fuzz/corpus/oci-config/containerd-default.json
# The image's root is outside the bundles (one for all, as CRI-O's store
# is): cordon-oci takes such roots only from the stores CORDON_OCI_ROOTS names.
export CORDON_OCI_ROOTS=$T

R=$T/rootfs
mkdir -p "$R/bin" "$R/proc" "$R/dev" "$R/sys" "$R/tmp"
cp /bin/busybox "$R/bin/busybox"
for c in sh echo cat head ls cut true; do ln -s busybox "$R/bin/$c"; done
chmod -R a+rX "$R"

# A host tree like /etc: a root-only file, a root-owned world-readable
# one, and one anyone may write.
HT=$T/hostetc
mkdir -p "$HT"
echo secret-line >"$HT/shadow"
chmod 0600 "$HT/shadow"
echo motd-line >"$HT/motd"
chmod 0644 "$HT/motd"
echo open >"$HT/open"
chmod 0666 "$HT/open"
chmod 0755 "$T" "$HT"
# A credential in a directory only root and its group may search (like
# /etc/ssl/private, 0710 root:ssl-cert): the container id cannot reach
# it, so there is nothing to cover, and the run must not be refused.
mkdir -p "$HT/private"
echo 'TOKEN=private-secret' >"$HT/private/.env"
chmod 0600 "$HT/private/.env"
chmod 0710 "$HT/private"

# bundle DIR PATCH: oci_bundle with root.path R, PATH /bin.
bundle() { oci_bundle "$1" "$R" /bin "$2"; }

probe='head -1 /hetc/shadow || echo shadow-unreadable; cat /hetc/motd; (echo x >> /hetc/motd) 2>/dev/null && echo WROTE-MOTD || echo motd-unwritable; echo w >> /hetc/open && echo wrote-open'

binds_user() {
	who=$1
	W=$T/$who
	mkdir -p "$W"
	[ "$RUN_AS" = "" ] || chown 65534:65534 "$W"
	chmod 0755 "$W"

	# The attacker's spec: the tree bound read-write.
	bundle "$W/rw" "c['mounts'].append({'destination': '/hetc', 'type': 'bind', 'source': '$HT', 'options': ['rbind', 'rw']}); c['process']['args'] = ['/bin/sh', '-c', '$probe']"
	out=$($RUN_AS /usr/bin/python3 "$SHIM" "$OCI" "$W/root" "$W/rw" rw 2>&1)
	is "$out" "state=created
shadow-unreadable
motd-line
motd-unwritable
wrote-open
exit=0
after=stopped" "$who: a read-write bind: the root-only file unreadable, the root-owned one unwritable; the world-readable one reads and the world-writable one writes"
	is "$(cat "$HT/motd")" "motd-line" "$who: the host's root-owned file is unchanged"
	is "$(tail -1 "$HT/open")" "w" "$who: the world-writable file took the container's write"

	# Read-only: the same reads.
	bundle "$W/ro" "c['mounts'].append({'destination': '/hetc', 'type': 'bind', 'source': '$HT', 'options': ['rbind', 'ro']}); c['process']['args'] = ['/bin/sh', '-c', 'head -1 /hetc/shadow || echo shadow-unreadable; cat /hetc/motd; cat /hetc/private/.env 2>/dev/null || echo env-unreadable']"
	out=$($RUN_AS /usr/bin/python3 "$SHIM" "$OCI" "$W/root" "$W/ro" ro 2>&1)
	is "$out" "state=created
shadow-unreadable
motd-line
env-unreadable
exit=0
after=stopped" "$who: a read-only bind: the root-only file unreadable, the world-readable one reads"

	# The host's real /etc, read-only: /etc/shadow stays unreadable,
	# /etc/passwd reads.
	bundle "$W/etc" "c['mounts'].append({'destination': '/hetc', 'type': 'bind', 'source': '/etc', 'options': ['rbind', 'ro']}); c['process']['args'] = ['/bin/sh', '-c', 'head -1 /hetc/shadow >/dev/null 2>&1 && echo READ-SHADOW || echo shadow-unreadable; head -1 /hetc/passwd | cut -d: -f1']"
	out=$($RUN_AS /usr/bin/python3 "$SHIM" "$OCI" "$W/root" "$W/etc" etc 2>&1)
	is "$out" "state=created
shadow-unreadable
root
exit=0
after=stopped" "$who: the host's /etc bound: /etc/shadow unreadable, /etc/passwd reads"

	# The host's /dev (and /proc, /sys): refused at create, with the reason.
	bundle "$W/dev" "c['mounts'].append({'destination': '/hdev', 'type': 'bind', 'source': '/dev', 'options': ['rbind', 'rw']}); c['process']['args'] = ['/bin/true']"
	refused "$who: a bind of the host's /dev is refused at create, the reason in --log" "error=config.json: mount at /hdev binds the host's /dev: cordon binds no host device" $RUN_AS /usr/bin/python3 "$SHIM" "$OCI" "$W/root" "$W/dev" dev
	bundle "$W/sys" "c['mounts'].append({'destination': '/hsys', 'type': 'bind', 'source': '/sys/fs', 'options': ['rbind', 'ro']}); c['process']['args'] = ['/bin/true']"
	refused "$who: a bind under the host's /sys is refused at create" "error=config.json: mount at /hsys binds the host's /sys/fs" $RUN_AS /usr/bin/python3 "$SHIM" "$OCI" "$W/root" "$W/sys" sys
	ok "$who: no refused container left state behind" sh -c "test -z \"\$(ls '$W/root')\""
}
for_each_user binds_user

done_testing
