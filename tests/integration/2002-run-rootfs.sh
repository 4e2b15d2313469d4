#!/bin/sh
# cordon run --rootfs DIR (issue 20): an unpacked image in place of the
# host's system directories, read-only, with cordon's /proc, /dev, scratch
# and the working directory on top.  As root and as nobody.
. "${CORDON_SRC:-.}/tests/lib.sh"
H=$CORDON_BUILD/tests/helpers

R=$T/rootfs
mkdir -p "$R/bin" "$R/usr/local/bin" "$R/etc"
cp /bin/busybox "$R/bin/busybox"
for c in sh echo cat test ls; do ln -s busybox "$R/bin/$c"; done
cp "$H/esc-probe" "$R/bin/"
printf '#!/bin/sh\necho image-tool\n' >"$R/usr/local/bin/only-in-image"
chmod 0755 "$R/usr/local/bin/only-in-image"
echo "root:x:0:0::/:/bin/sh" >"$R/etc/passwd"
# Writable by anyone: only the read-only image stops a write (EROFS).
chmod 0666 "$R/etc/passwd"
chmod -R a+rX "$R"
mkdir -p "$T/w"
echo data >"$T/w/f"
chmod -R a+rX "$T/w"

rootfs_user() {
	who=$1
	out=$(cd "$T/w" && $RUN_AS "$CORDON" run --rootfs "$R" -- only-in-image 2>&1)
	is "$out" image-tool "$who: a tool only in the image runs"
	refused "$who: control: without --rootfs it is not found" 'not found|No such file' sh -c "cd '$T/w' && $RUN_AS '$CORDON' run -- only-in-image"
	out=$(cd "$T/w" && $RUN_AS "$CORDON" run --rootfs "$R" -- esc-probe open-write /etc/passwd 2>&1)
	is "$out" "open-write=EROFS" "$who: the image's files are read-only (a 0666 file: EROFS)"
	out=$(cd "$T/w" && $RUN_AS "$CORDON" run --rootfs "$R" -- sh -c 'test -e /usr/lib/x86_64-linux-gnu/libc.so.6 && echo host-usr; test -e /etc/shadow && echo host-etc; cat f; pwd' 2>&1)
	is "$out" "data
$T/w" "$who: nothing of the host's /usr or /etc; the working directory on top"
	out=$(cd "$T/w" && $RUN_AS "$CORDON" run -- sh -c 'test -e /usr/lib/x86_64-linux-gnu/libc.so.6 && echo host-usr' 2>&1)
	is "$out" host-usr "$who: control: without --rootfs the host's /usr is there"
	out=$(cd "$T/w" && $RUN_AS "$CORDON" run --rootfs "$R" -- sh -c 'echo s >/tmp/s && cat /tmp/s' 2>&1)
	is "$out" s "$who: cordon's scratch is writable on top of the image"
	refused "$who: the host's own root is refused" "root '/' is the host's own root" sh -c "cd '$T/w' && $RUN_AS '$CORDON' run --rootfs / -- true"
	refused "$who: a missing root is refused" "root '$T/none'" sh -c "cd '$T/w' && $RUN_AS '$CORDON' run --rootfs '$T/none' -- true"
}
for_each_user rootfs_user
done_testing
