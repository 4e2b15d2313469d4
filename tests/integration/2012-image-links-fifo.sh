#!/bin/sh
# cordon run --image (issue 20, review F1 and F3).  F1: a hard link that
# copies a symbolic link to another directory, where its target climbs out,
# and a relative target that climbs out through another link of the tree,
# are refused: nothing in the cache resolves outside the root on the host
# (readlink -f).  A chain that stays inside is kept (positive control).
# F3: a FIFO in place of an OCI layout's manifest or layer blob, or given
# as FILE, is refused at once ("not a regular file") instead of blocking
# with the cache lock held.  As root and as nobody.
: "${CORDON_TEST_TIMEOUT:=300}"
export CORDON_TEST_TIMEOUT
. "${CORDON_SRC:-.}/tests/lib.sh"
MK="python3 $CORDON_SRC/tests/helpers/mkimage.py"

R=$T/rootfs
mkdir -p "$R/bin" "$R/etc" "$T/w"
cp /bin/busybox "$R/bin/busybox"
for c in sh cat; do ln -s busybox "$R/bin/$c"; done
echo image >"$R/etc/name"
$MK layer "$T/base.tar" "tree:$R"
P="" DIRS="" UP=""
for i in 1 2 3 4 5 6 7 8 9; do
	P="${P:+$P/}d$i"
	DIRS="$DIRS dir:$P"
	UP="${UP:+$UP/}.."
done
# (a) s climbs to the top from d9 (allowed there); its hard link at the top climbs out.
# shellcheck disable=SC2086
$MK layer "$T/hard.layer" $DIRS "sym:$P/s:$UP/etc/shadow" "hard:etc-shadow:$P/s"
# (b) s climbs to the top; e goes through s, then 9 levels more.
# shellcheck disable=SC2086
$MK layer "$T/chain.layer" $DIRS "sym:$P/s:$UP" "sym:$P/e:s/$UP/etc/shadow"
# (b) in the other order: e is written before the link it passes through.
# shellcheck disable=SC2086
$MK layer "$T/chain2.layer" $DIRS "sym:$P/e:s/$UP/etc/shadow" "sym:$P/s:$UP"
# A chain that stays inside: e through s to the top's etc/name; a hard
# link to a link whose target is absolute (from the top) is kept.
# shellcheck disable=SC2086
$MK layer "$T/inside.layer" $DIRS "sym:$P/s:$UP" "sym:$P/e:s/etc/name" "sym:$P/abs:/etc/name" "hard:etc/hl:$P/abs"
for n in hard chain chain2 inside; do $MK docker "$T/$n.tar" "$T/base.tar" "$T/$n.layer" >/dev/null; done
# F3: OCI layouts with a FIFO for the manifest, for the layer; a FIFO as FILE.
for n in fman flayer; do $MK oci "$T/$n" "$T/base.tar" >/dev/null; done
M=$(jq -r '.manifests[0].digest' "$T/fman/index.json" | cut -c8-)
rm "$T/fman/blobs/sha256/$M" && mkfifo "$T/fman/blobs/sha256/$M"
L=$(jq -r '.layers[0].digest' "$T/flayer/blobs/sha256/$(jq -r '.manifests[0].digest' "$T/flayer/index.json" | cut -c8-)" | cut -c8-)
rm "$T/flayer/blobs/sha256/$L" && mkfifo "$T/flayer/blobs/sha256/$L"
mkfifo "$T/fifo.tar"
chmod -R a+rX "$T"

cache_of() {
	if [ -n "$RUN_AS" ]; then echo "$S/.state-nobody/images"; else echo "$S/.state-root/images"; fi
}

links_user() {
	who=$1
	run() { (cd "$T/w" && timeout 20 $RUN_AS "$CORDON" run --image "$@"); }
	C=$(cache_of)
	refused "$who: a hard link copying a link where it climbs out is refused" "entry 'etc-shadow': a hard link to link '$P/s', whose target climbs out of the image from here" run "$T/hard.tar" -- true
	refused "$who: a link climbing out through another link is refused" "entry '$P/e': a link to 's/(\.\./){8}\.\./etc/shadow' climbs out of the image through the links it passes" run "$T/chain.tar" -- true
	refused "$who: ... also when the link it passes comes after it" "entry '$P/e': a link to 's/.*' climbs out of the image" run "$T/chain2.tar" -- true
	is "$(ls -A "$C" | grep -v '\.lock$' | grep -c '^docker-\|^\.unpack-')" 0 "$who: no refused image left an entry or a temporary directory"
	is "$(run "$T/inside.tar" -- sh -c "cat /$P/e /etc/hl" 2>&1)" "image
image" "$who: a chain (and its hard link) that stays inside works"
	E=$(ls -d "$C"/docker-*/rootfs | head -1)
	is "$(readlink -f "$E/$P/e")" "$(readlink -f "$E/etc/name")" "$who: ... and resolves inside the cache on the host"
	rm -rf "$C"/docker-*

	refused "$who: a FIFO as the manifest blob is refused" "'blobs/sha256/$M': not a regular file" run "$T/fman" -- true
	refused "$who: a FIFO as the layer blob is refused" "layer 1: sha256:$L: not a regular file" run "$T/flayer" -- true
	refused "$who: a FIFO as FILE is refused" "not a directory or a file" run "$T/fifo.tar" -- true
	(cd "$T/w" && timeout 20 $RUN_AS "$CORDON" run --image "$T/flayer" -- true) >/dev/null 2>&1
	ok "$who: ... at once, not after a timeout (rc $?)" test "$?" -ne 124
}
for_each_user links_user
done_testing
