#!/bin/sh
# cordon run --image: an image's entries are the author's (issue 20).  Each
# hostile layer below is refused, or neutralised, with its specific
# outcome: '..' and absolute paths, a symlink that climbs out, a path
# through a link, hard links to what is outside or missing, a device node
# (refused); a FIFO (left out); a setuid/setgid file (bits dropped); a
# security.capability and a user xattr (dropped).  Nothing is written
# outside the cache entry, and a refused image leaves no entry.  As root
# and as nobody.
: "${CORDON_TEST_TIMEOUT:=300}"
export CORDON_TEST_TIMEOUT
. "${CORDON_SRC:-.}/tests/lib.sh"
MK="python3 $CORDON_SRC/tests/helpers/mkimage.py"

R=$T/rootfs
mkdir -p "$R/bin" "$R/etc"
cp /bin/busybox "$R/bin/busybox"
for c in sh cat test ls stat echo; do ln -s busybox "$R/bin/$c"; done
echo image >"$R/etc/name"
$MK layer "$T/base.tar" "tree:$R"
mkdir -p "$T/w" "$T/out"
# img NAME SPEC...: a docker-archive of the base and one layer.
img() {
	n=$1
	shift
	$MK layer "$T/$n.layer" "$@" && $MK docker "$T/$n.tar" "$T/base.tar" "$T/$n.layer" >"$T/$n.digest"
}
img dotdot "file:../../../../../../$T/out/dotdot:x"
img dotdot2 "file:etc/../../outside:x"
img abs "file:$T/out/abs:x"
img symout "sym:etc/evil:../../.."
img symout2 "dir:a" "sym:a/b:../../../tmp"
img through "sym:lnk:etc" "file:lnk/planted:x"
img hardout "hard:etc/h:../../../../etc/shadow"
img hardabs "hard:etc/h:/etc/shadow"
img hardnone "hard:etc/h:etc/missing"
img dev "chr:dev-null"
img okay "sym:etc/abs:/etc/name" "sym:etc/rel:../etc/name" "hard:etc/hl:etc/name" "fifo:etc/fifo" "file:bin/suid:x:6755" "cap:bin/capped:x:0755" "xattr:etc/noted:x"
chmod -R a+rX "$T"

cache_of() {
	if [ -n "$RUN_AS" ]; then echo "$S/.state-nobody/images"; else echo "$S/.state-root/images"; fi
}

hostile_user() {
	who=$1
	run() { (cd "$T/w" && $RUN_AS "$CORDON" run --image "$@"); }
	refused "$who: an entry with '..' is refused" "entry '[^']*': a '\.\.' component" run "$T/dotdot.tar" -- true
	refused "$who: an entry with '..' inside is refused" "entry 'etc/\.\./\.\./outside': a '\.\.' component" run "$T/dotdot2.tar" -- true
	refused "$who: an absolute entry is refused" "entry '$T/out/abs': an absolute path" run "$T/abs.tar" -- true
	is "$(ls -A "$T/out")" "" "$who: ... and nothing was written outside"
	refused "$who: a symlink climbing out is refused" "entry 'etc/evil': a link to '\.\./\.\./\.\.' climbs out of the image" run "$T/symout.tar" -- true
	refused "$who: a nested symlink climbing out is refused" "entry 'a/b': a link to '\.\./\.\./\.\./tmp' climbs out" run "$T/symout2.tar" -- true
	refused "$who: an entry through a link is refused" "entry 'lnk/planted': passes through 'lnk', a link or a file" run "$T/through.tar" -- true
	test -e "$R/etc/planted" || test -e "$(cache_of)/../planted"
	is "$?" 1 "$who: ... and nothing was written through it"
	refused "$who: a hard link climbing out is refused" "entry 'etc/h': a hard link to what is outside: entry '[./]*etc/shadow': a '\.\.' component" run "$T/hardout.tar" -- true
	refused "$who: a hard link to an absolute path is refused" "entry 'etc/h': a hard link to what is outside: entry '/etc/shadow': an absolute path" run "$T/hardabs.tar" -- true
	refused "$who: a hard link to what the image lacks is refused" "entry 'etc/h': a hard link to 'etc/missing', not a file of the image" run "$T/hardnone.tar" -- true
	refused "$who: a device node is refused" "entry 'dev-null': a device node" run "$T/dev.tar" -- true
	C=$(cache_of)
	is "$(ls -A "$C" | grep -v '\.lock$' | grep -c '^docker-\|^\.unpack-')" 0 "$who: no refused image left an entry or a temporary directory"

	out=$(run "$T/okay.tar" -- sh -c 'cat /etc/abs /etc/rel /etc/hl; test -e /etc/fifo || echo no-fifo; stat -c %a /bin/suid /bin/capped' 2>&1)
	is "$out" "image
image
image
no-fifo
755
755" "$who: links inside (absolute from the image's top, relative, hard) work; the FIFO is left out; setuid/setgid dropped"
	E=$C/docker-sha256-$(sed 's/^sha256://' "$T/okay.digest")
	is "$(python3 -c 'import os,sys; print(len(os.listxattr(sys.argv[1], follow_symlinks=False)), len(os.listxattr(sys.argv[2], follow_symlinks=False)))' "$E/rootfs/bin/capped" "$E/rootfs/etc/noted")" "0 0" "$who: no extended attribute reached the cache (security.capability, user.note)"
	is "$(jq -c '.unpack | [.setid_dropped, .capabilities_dropped, .xattrs_dropped, .skipped]' "$E/stamp")" "[1,1,2,1]" "$who: the stamp counts what was dropped and left out"
	is "$(stat -c %U "$E/rootfs/bin/suid")" "$(if [ -n "$RUN_AS" ]; then echo nobody; else echo root; fi)" "$who: files are the caller's own, never chowned"
}
for_each_user hostile_user
done_testing
