#!/bin/sh
# cordon run --image: a small layer must not fill the caller's disk before
# any sandbox exists (issue 20, review F2).  A sparse entry is written with
# holes (and an all-hole file keeps its size); a gzip bomb, in an ordinary
# entry and in a whiteout's data (the first pass), is refused at the
# expansion cap; a plain layer past CORDON_IMAGE_MAX_BYTES is refused;
# directories made for deep paths count against CORDON_IMAGE_MAX_ENTRIES;
# a killed unpack's .unpack-* is removed by the next unpack while a live
# one is kept.  Each refusal names its cap; a positive control runs each
# image under a higher cap.  As root and as nobody.
: "${CORDON_TEST_TIMEOUT:=300}"
export CORDON_TEST_TIMEOUT
. "${CORDON_SRC:-.}/tests/lib.sh"
MK="python3 $CORDON_SRC/tests/helpers/mkimage.py"

R=$T/rootfs
mkdir -p "$R/bin" "$R/etc" "$T/w" "$T/sp"
cp /bin/busybox "$R/bin/busybox"
for c in sh cat stat; do ln -s busybox "$R/bin/$c"; done
$MK layer "$T/base.tar" "tree:$R"

# sparse: 64 MiB and one byte, one byte of data; hole: 16 MiB, all hole.
truncate -s 64M "$T/sp/big"
printf x >>"$T/sp/big"
truncate -s 16M "$T/sp/hole"
(cd "$T/sp" && tar --sparse --format=posix -cf "$T/sparse.layer" big hole)
$MK docker "$T/sparse.tar" "$T/base.tar" "$T/sparse.layer" >/dev/null
# A gzip layer of 256 MiB of zeros (~250 KB): as a file, then as the data
# of a whiteout entry (skipped by the second pass, read by the first).
# Before the whiteout, a device node: the second pass refuses it before
# it reaches the whiteout (whose data it counts too), so only the first
# pass refuses with the cap's words.
python3 - "$T" <<'PY'
import sys, tarfile, zlib, io
t = sys.argv[1]
def bomb(out, name, n=256 << 20, dev=False):
    ti = tarfile.TarInfo(name); ti.size = n; ti.mode = 0o644
    z = zlib.compressobj(9, zlib.DEFLATED, 31)
    head = b""
    if dev:
        d = tarfile.TarInfo("null"); d.type = tarfile.CHRTYPE; d.devmajor, d.devminor = 1, 3
        head = d.tobuf(format=tarfile.PAX_FORMAT)
    parts = [z.compress(head + ti.tobuf(format=tarfile.PAX_FORMAT))]
    chunk = b"\0" * (1 << 20)
    for _ in range(n >> 20):
        parts.append(z.compress(chunk))
    parts.append(z.compress(b"\0" * 1024) + z.flush())
    open(out, "wb").write(b"".join(parts))
bomb(t + "/bomb.layer", "zeros")
bomb(t + "/wbomb.layer", ".wh.zeros", dev=True)
# plain: 8 MiB that does not compress; deep: 20 paths 100 directories deep.
ti = tarfile.TarInfo("noise"); ti.size = 8 << 20
import os
with tarfile.open(t + "/plain.layer", "w", format=tarfile.PAX_FORMAT) as f:
    f.addfile(ti, io.BytesIO(os.urandom(ti.size)))
with tarfile.open(t + "/deep.layer", "w", format=tarfile.PAX_FORMAT) as f:
    for i in range(20):
        f.addfile(tarfile.TarInfo("/".join(["x%d" % i] + ["a"] * 100) + "/f"), io.BytesIO())
PY
for n in bomb wbomb plain deep; do $MK docker "$T/$n.tar" "$T/base.tar" "$T/$n.layer" >/dev/null; done
ok "the gzip bomb layer is under 1 MiB ($(stat -c %s "$T/bomb.layer") bytes)" test "$(stat -c %s "$T/bomb.layer")" -lt 1048576
chmod -R a+rX "$T"

cache_of() {
	if [ -n "$RUN_AS" ]; then echo "$S/.state-nobody/images"; else echo "$S/.state-root/images"; fi
}

bounds_user() {
	who=$1
	run() { (cd "$T/w" && $RUN_AS env "$@"); }
	C=$(cache_of)

	out=$(run "$CORDON" run --image "$T/sparse.tar" -- stat -c '%s' /big /hole 2>&1)
	is "$out" "67108865
16777216" "$who: sparse entries keep their sizes, the all-hole one included"
	E=$(ls -d "$C"/docker-*/rootfs | head -1)
	kb=$(du -k "$E/big" "$E/hole" | awk '{s += $1} END {print s}')
	ok "$who: ... written as holes: ${kb} KiB on disk for 80 MiB" test "$kb" -lt 1024
	rm -rf "$C"/docker-*

	refused "$who: a gzip bomb is refused at the ratio cap" "unpacks to more than 67108864 bytes \\(the cap: 10 times the [0-9]+ bytes read" \
		run CORDON_IMAGE_MAX_RATIO=10 "$CORDON" run --image "$T/bomb.tar" -- true
	refused "$who: a bomb in a whiteout's data is refused (the first pass counts)" "layer 2: image: unpacks to more than 67108864 bytes" \
		run CORDON_IMAGE_MAX_RATIO=10 "$CORDON" run --image "$T/wbomb.tar" -- true
	refused "$who: a plain layer past CORDON_IMAGE_MAX_BYTES is refused" "unpacks to more than 4194304 bytes .*at most 4194304; CORDON_IMAGE_MAX_RATIO, CORDON_IMAGE_MAX_BYTES" \
		run CORDON_IMAGE_MAX_BYTES=4M "$CORDON" run --image "$T/plain.tar" -- true
	is "$(ls -A "$C" | grep -v '\.lock$' | grep -c '^docker-\|^\.unpack-')" 0 "$who: no refused image left an entry or a temporary directory"
	is "$(run CORDON_IMAGE_MAX_BYTES=64M "$CORDON" run --image "$T/plain.tar" -- stat -c %s /noise 2>&1)" 8388608 "$who: ... and runs under a higher cap"
	refused "$who: a malformed cap is refused" "CORDON_IMAGE_MAX_BYTES='lots': not a positive size" \
		run CORDON_IMAGE_MAX_BYTES=lots "$CORDON" run --image "$T/plain.tar" -- true

	refused "$who: directories made for deep paths count as entries" "more than 1000 entries, directories made for a deep path included" \
		run CORDON_IMAGE_MAX_ENTRIES=1000 "$CORDON" run --image "$T/deep.tar" -- true
	is "$(run CORDON_IMAGE_MAX_ENTRIES=3000 "$CORDON" run --image "$T/deep.tar" -- cat /x19/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a/f 2>&1; echo "rc=$?")" "rc=0" "$who: ... and the image runs under a higher cap"
	D=$(ls -d "$C"/docker-* | head -1)
	is "$(jq '.unpack.entries >= .tree_entries' "$D/stamp")" true "$who: the stamp's entries count every directory made ($(jq -c '[.unpack.entries, .tree_entries]' "$D/stamp"))"
	rm -rf "$C"/docker-*

	# A killed unpack's directory (no one holds its lock) and a live one
	# (flock held, as an unpack in progress holds it).
	$RUN_AS mkdir "$C/.unpack-killed" "$C/.unpack-live"
	$RUN_AS sh -c "head -c 1048576 /dev/zero >'$C/.unpack-killed/junk'"
	$RUN_AS flock "$C/.unpack-live" sleep 60 &
	holder=$!
	i=0
	while [ $i -lt 100 ] && flock -n "$C/.unpack-live" true 2>/dev/null; do
		sleep 0.1
		i=$((i + 1))
	done
	run "$CORDON" run --image "$T/sparse.tar" -- true
	is "$(ls -A "$C" | grep '^\.unpack-' | tr '\n' ' ')" ".unpack-live " "$who: the next unpack removed the killed one's directory and kept the live one"
	kill_tree "$holder"
	rm -rf "$C/.unpack-live" "$C"/docker-*
}
for_each_user bounds_user
done_testing
