#!/bin/sh
# cordon run --image FILE (issue 20): a docker-archive, an OCI layout
# directory (gzip layers) and its tarball, built here from busybox-static,
# run as --rootfs runs; layers applied in order with whiteouts; unpacked
# once into the state directory's images/, the digest on the intent
# record; a tampered blob and a tampered cache entry refused; two runs
# unpacking at once; libarchive loaded only with --image.  As root and as
# nobody.
: "${CORDON_TEST_TIMEOUT:=360}"
export CORDON_TEST_TIMEOUT
. "${CORDON_SRC:-.}/tests/lib.sh"
H=$CORDON_BUILD/tests/helpers
MK="python3 $CORDON_SRC/tests/helpers/mkimage.py"

R=$T/rootfs
mkdir -p "$R/bin" "$R/usr/local/bin" "$R/etc" "$R/opq"
cp /bin/busybox "$R/bin/busybox"
for c in sh echo cat test ls stat sleep; do ln -s busybox "$R/bin/$c"; done
cp "$H/esc-probe" "$R/bin/"
printf '#!/bin/sh\necho image-tool\n' >"$R/usr/local/bin/only-in-image"
chmod 0755 "$R/usr/local/bin/only-in-image"
echo "root:x:0:0::/:/bin/sh" >"$R/etc/passwd"
chmod 0666 "$R/etc/passwd"
echo gone >"$R/etc/removed"
echo old >"$R/opq/old"
$MK layer "$T/l1.tar" "tree:$R"
# Layer 2: a whiteout of etc/removed, opq/ made opaque (its old file gone,
# its new one kept, written before the marker), a file replaced.
$MK layer "$T/l2.tar" "file:opq/new:new" "file:opq/.wh..wh..opq:" "file:etc/.wh.removed:" "file:etc/motd:layer2
"
D_DOCKER=$($MK docker "$T/docker.tar" "$T/l1.tar" "$T/l2.tar")
D_OCI=$($MK oci "$T/oci" --gzip "$T/l1.tar" "$T/l2.tar")
$MK oci-tar "$T/oci.tar" --gzip "$T/l1.tar" "$T/l2.tar" >/dev/null
chmod -R a+rX "$T"
mkdir -p "$T/w"

last_image() { # the last intent record's image.FIELD
	"$CORDON" log show --json --kind run.intent | tail -n 1 |
		jq -r ".details.image.$1 // \"none\""
}
cache_of() { # the cache directory of the running user
	if [ -n "$RUN_AS" ]; then echo "$S/.state-nobody/images"; else echo "$S/.state-root/images"; fi
}

image_user() {
	who=$1
	run() { (cd "$T/w" && $RUN_AS "$CORDON" run "$@"); }
	out=$(run --image "$T/docker.tar" -- only-in-image 2>&1)
	is "$out" image-tool "$who: docker-archive: a tool only in the image runs"
	is "$($RUN_AS sh -c 'last_image() { "$CORDON" log show --json --kind run.intent | tail -n 1 | jq -r ".details.image.$1"; }; last_image digest; last_image format; last_image cache')" "$D_DOCKER
docker
unpacked" "$who: the intent record names the config's digest, docker, unpacked"
	run --image "$T/docker.tar" -- sh -c 'exit 7' >/dev/null 2>&1
	is "$?" 7 "$who: the exit code passes through"
	is "$($RUN_AS "$CORDON" log show --json --kind run.intent | tail -n 1 | jq -r .details.image.cache)" cached "$who: the second run uses the cache (no unpack)"
	out=$(run --image "$T/docker.tar" -- sh -c 'cat /etc/motd; test -e /etc/removed && echo whiteout-missed; ls /opq' 2>&1)
	is "$out" "layer2
new" "$who: layers in order: a file replaced, a whiteout, an opaque directory"
	out=$(run --image "$T/docker.tar" -- esc-probe open-write /etc/passwd 2>&1)
	is "$out" "open-write=EROFS" "$who: the image's files are read-only (a 0666 file: EROFS)"
	out=$(run --image "$T/oci" -- only-in-image 2>&1)
	is "$out" image-tool "$who: an OCI layout directory with gzip layers runs"
	is "$($RUN_AS "$CORDON" log show --json --kind run.intent | tail -n 1 | jq -r '.details.image.digest + " " + .details.image.format')" "$D_OCI oci" "$who: the record names the manifest's digest"
	out=$(run --image "$T/oci.tar" -- only-in-image 2>&1)
	is "$out" image-tool "$who: the same layout as a tarball runs"
	is "$($RUN_AS "$CORDON" log show --json --kind run.intent | tail -n 1 | jq -r .details.image.cache)" cached "$who: ... from the directory's cache entry (one manifest digest)"
	C=$(cache_of)
	is "$(ls -A "$C" | grep -v '\.lock$' | grep -c '^docker-sha256-\|^oci-sha256-\|^\.unpack-')" 2 "$who: two entries in the cache, no temporary left"

	# A tampered cache entry: one of its files changed.  Refused, with one line.
	E=$C/docker-sha256-${D_DOCKER#sha256:}
	$RUN_AS sh -c "echo planted >>'$E/rootfs/etc/motd'"
	refused "$who: a changed file in the cache entry is refused" "image cache entry .* is not what was unpacked \(a file of it changed since\): remove it" run --image "$T/docker.tar" -- cat /etc/motd
	n=$(run --image "$T/docker.tar" -- true 2>&1 | wc -l)
	is "$n" 1 "$who: ... in one line"
	$RUN_AS rm -rf "$E"
	out=$(run --image "$T/docker.tar" -- cat /etc/motd 2>&1)
	is "$out" layer2 "$who: removed, it is unpacked again"
	# The stamp rewritten to match a changed tree, without the key: the MAC.
	$RUN_AS sh -c "echo planted >>'$E/rootfs/etc/motd'"
	$RUN_AS sh -c "sed -i 's/\"tree\":\"sha256:[0-9a-f]*\"/\"tree\":\"sha256:$(printf %064d 0)\"/' '$E/stamp'"
	refused "$who: a stamp rewritten without the key is refused" "its stamp's MAC does not match" run --image "$T/docker.tar" -- true
	$RUN_AS rm -rf "$E"
}
for_each_user image_user

# A tampered blob: a layer's byte changed, the archive otherwise the same.
mkdir -p "$T/bad" && (cd "$T/bad" && tar -xf "$T/docker.tar")
printf 'X' | dd of="$T/bad/l1/layer.tar" bs=1 seek=600 conv=notrunc 2>/dev/null
(cd "$T/bad" && tar -cf "$T/bad.tar" manifest.json "${D_DOCKER#sha256:}.json" l0 l1)
cp -R "$T/oci" "$T/badoci"
big=$(ls -S "$T/badoci/blobs/sha256" | head -n 1)
printf 'X' | dd of="$T/badoci/blobs/sha256/$big" bs=1 seek=100 conv=notrunc 2>/dev/null
chmod -R a+rX "$T"
tamper_user() {
	who=$1
	C=$(cache_of)
	# Content-addressed: an entry of the same digest would be used as it is.
	rm -rf "$C"/docker-* "$C"/oci-*
	refused "$who: a docker layer whose bytes differ from its diff_id is refused" "layer 2: layer sha256:[0-9a-f]*: its bytes hash to sha256:" sh -c "cd '$T/w' && $RUN_AS '$CORDON' run --image '$T/bad.tar' -- true"
	refused "$who: an OCI blob whose bytes differ from its digest is refused" "its bytes hash to" sh -c "cd '$T/w' && $RUN_AS '$CORDON' run --image '$T/badoci' -- true"
	is "$(ls -A "$C" | grep -v '\.lock$' | grep -c '^\.unpack-\|^docker-\|^oci-')" 0 "$who: nothing of a refused image stays in the cache"
}
for_each_user tamper_user

# Two runs unpacking the same new image at once: both run, one entry.
$MK layer "$T/l3.tar" "tree:$R" "file:etc/motd:three" >/dev/null
D3=$($MK docker "$T/three.tar" "$T/l3.tar")
chmod a+r "$T/three.tar"
pids=
for i in 1 2 3; do
	(cd "$T/w" && "$CORDON" run --image "$T/three.tar" -- cat /etc/motd >"$T/par$i" 2>&1) &
	pids="$pids $!"
done
wait $pids
is "$(cat "$T/par1" "$T/par2" "$T/par3")" "threethreethree" "three runs unpacking one image at once all run it"
is "$("$CORDON" log show --json --kind run.intent | tail -n 3 | jq -r .details.image.cache | sort | tr '\n' ' ')" "cached cached unpacked " "... one of them unpacked it, the others waited for its lock"
is "$(ls -A "$S/.state-root/images" | grep -c '^\.unpack-')" 0 "... no temporary directory left"

# libarchive is loaded only with --image.
(cd "$T/w" && exec "$CORDON" run --image "$T/docker.tar" -- sleep 3) &
p1=$!
(cd "$T/w" && exec "$CORDON" run -- sleep 3) &
p2=$!
sleep 1.5
grep -q libarchive "/proc/$p1/maps" 2>/dev/null
is "$?" 0 "control: cordon run --image TARBALL has libarchive mapped"
grep -q libarchive "/proc/$p2/maps" 2>/dev/null
is "$?" 1 "cordon run without --image never loads libarchive"
wait $p1 $p2
done_testing
