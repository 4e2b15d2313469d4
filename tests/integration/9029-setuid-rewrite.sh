#!/bin/sh
# A setuid or setgid file already in a writable tree (a rootfs or DESTDIR
# build, an unpacked image) rewritten from inside through a shared mapping:
# the kernel clears S_ISUID/S_ISGID on write(2) but not on page faults,
# and the seccomp mode filter never sees a mapping, so such a file would
# keep its bit with the agent's content (an outside review made a root
# shell this way).  The tree walk keeps every setuid/setgid file of a
# writable bind read-only (--rw, workspace-write, --scratch DIR) and lists
# it in covered_paths, for a root caller: through the idmapped binds its
# sandbox writes root-owned files.  A rootless caller's sandbox writes as
# the caller: the set-id files it can rewrite grant the caller's own ids
# (not checked, the walk's statx per file saved), and a setuid-root file
# in its tree stays unwritable.  As root and as nobody.
. "${CORDON_SRC:-.}/tests/lib.sh"

# Rewrite the first bytes of FILE through a MAP_SHARED mapping; prints
# "rewritten" or the error.
cat >"$T/remap.py" <<'PY'
import mmap, os, sys
try:
    fd = os.open(sys.argv[1], os.O_RDWR)
    m = mmap.mmap(fd, 4096 if os.fstat(fd).st_size >= 4096 else os.fstat(fd).st_size,
                  mmap.MAP_SHARED, mmap.PROT_READ | mmap.PROT_WRITE)
    m[0:8] = b"PWNED!!!"
    m.flush()
    print("rewritten")
except OSError as e:
    print("error:", e.strerror)
PY
chmod 0644 "$T/remap.py"

check() {
	who=$1
	owner=$(id -u)
	[ -n "$RUN_AS" ] && owner=65534
	if [ "$owner" -eq 0 ]; then
		want="error: Read-only file system" covered=2
	else
		want="rewritten" covered=0 # its own ids: no more than it writes as
	fi
	for how in rw workspace scratch; do
		d=$T/$who-$how
		mkdir -p "$d"
		cp /bin/true "$d/suid"
		cp /bin/true "$d/sgid"
		cp /bin/true "$d/plain"
		chown "$owner:$owner" "$d" "$d/suid" "$d/sgid" "$d/plain"
		chmod 4755 "$d/suid"
		chmod 2755 "$d/sgid"
		chmod 0755 "$d/plain"
		rootsuid=
		if [ "$owner" -ne 0 ] && [ "$(id -u)" -eq 0 ]; then
			cp /bin/true "$d/rootsuid" && chmod 4755 "$d/rootsuid" && rootsuid=1
		fi
		before=$(sha256sum <"$d/suid")
		case $how in
		rw) opts="--rw $d" wd=$T ;;
		workspace) opts="--profile workspace-write" wd=$d ;;
		scratch) opts="--scratch $d" wd=$T ;;
		esac
		[ "$how" = scratch ] && inside=/tmp || inside=$d
		out=$(cd "$wd" && $RUN_AS "$CORDON" run $opts --ro "$T/remap.py" --json-fd 3 -- sh -c "
			python3 $T/remap.py $inside/suid; python3 $T/remap.py $inside/sgid
			python3 $T/remap.py $inside/plain
			[ -z '$rootsuid' ] || python3 $T/remap.py $inside/rootsuid" 3>"$T/rec" 2>"$T/err")
		is "$(echo "$out" | sed -n 1p)" "$want" \
			"$who $how: its setuid file, through a shared mapping: $want"
		is "$(echo "$out" | sed -n 2p)" "$want" \
			"$who $how: its setgid one the same"
		is "$(echo "$out" | sed -n 3p)" "rewritten" \
			"$who $how: control: an ordinary file beside them is rewritten the same way"
		if [ "$owner" -eq 0 ]; then
			is "$(sha256sum <"$d/suid")" "$before" \
				"$who $how: the host's setuid-root file is unchanged"
		else
			is "$(stat -c %u:%g "$d/suid" "$d/sgid" | tr '\n' ' ')" "$owner:$owner $owner:$owner " \
				"$who $how: the rewritten set-id files grant only the caller's own ids"
		fi
		if [ -n "$rootsuid" ]; then
			is "$(echo "$out" | sed -n 4p)" "error: Permission denied" \
				"$who $how: a setuid-root file in the tree cannot be rewritten (EACCES)"
			rm -f "$d/rootsuid"
		fi
		is "$(find "$d" ! -type d -perm /6000 | sort | tr '\n' ' ')" "$d/sgid $d/suid " \
			"$who $how: only the two original setuid/setgid files carry the bits"
		n=$(python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))
print(sum(1 for c in r.get("covered_paths") or [] if "setuid" in c.get("reason", "")))' "$T/rec" 2>/dev/null)
		is "$n" "$covered" "$who $how: $covered listed in covered_paths as setuid or setgid"
		[ "$n" = "$covered" ] || sed 's/^/#   /' "$T/err" | head -3
	done
}
for_each_user check

# The walk reads each file's mode only where the host honours the bits: a
# tree the host mounts nosuid, with nothing mounted below it, is not
# checked file by file (its setuid file is inert on the host); a mount
# below it that honours setuid is checked again.  Root only (mounts).
setuid_count() {
	python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))
print(sum(1 for c in r.get("covered_paths") or [] if "setuid" in c.get("reason", "")))' "$T/rec" 2>&1
}
if [ "$(id -u)" -eq 0 ]; then
	n=$T/nosuid
	mkdir -p "$n/real" "$n/inner" "$n/view"
	cp /bin/true "$n/real/suid" && chmod 4755 "$n/real/suid"
	cp /bin/true "$n/inner/suid" && chmod 4755 "$n/inner/suid"
	if mount --bind "$n/real" "$n/view" && mount -o remount,bind,nosuid "$n/view"; then
		(cd "$T" && "$CORDON" run --rw "$n/view" --json-fd 3 -- true 3>"$T/rec" 2>"$T/err")
		is "$(setuid_count)" 0 "nosuid tree: its setuid file is not covered (inert on the host)"
		mkdir -p "$n/view/sub"
		if mount --bind "$n/inner" "$n/view/sub"; then
			(cd "$T" && "$CORDON" run --rw "$n/view" --json-fd 3 -- true 3>"$T/rec" 2>"$T/err")
			is "$(setuid_count)" 2 \
				"nosuid tree with a mount below it that honours setuid: every file is checked"
			umount "$n/view/sub"
		else
			skip "nosuid tree: cannot mount below it"
		fi
		umount "$n/view"
	else
		skip "nosuid tree: cannot make a nosuid bind"
	fi
fi

done_testing
