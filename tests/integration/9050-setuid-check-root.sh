#!/bin/sh
# The setuid check of the tree walk (THREATS class R) runs for root
# callers only: their sandbox writes root-owned files through the idmapped
# binds, so a setuid-root file rewritten through a shared mapping would
# give root to whoever runs it.  Here, as root, at depth in a working tree
# of ordinary files (workspace-write) and in a --rw tree owned by another
# account: every set-id file, whoever owns it, is kept read-only and
# listed; the ordinary files beside them stay writable.  The setuid-root
# cases fail with the check skipped (make mutate: tree-walk-setuid-skipped-for-root).  Rootless runs are
# in 9029 (their set-id files grant only their own ids).  Root only.
. "${CORDON_SRC:-.}/tests/lib.sh"

if [ "$(id -u)" -ne 0 ]; then
	skip "the setuid check runs for root callers; run as root"
	done_testing
	exit 0
fi

cat >"$T/remap.py" <<'PY'
import mmap, os, sys
for p in sys.argv[1:]:
    try:
        fd = os.open(p, os.O_RDWR)
        m = mmap.mmap(fd, os.fstat(fd).st_size, mmap.MAP_SHARED,
                      mmap.PROT_READ | mmap.PROT_WRITE)
        m[0:8] = b"PWNED!!!"
        m.flush()
        print("rewritten")
    except OSError as e:
        print("error:", e.strerror)
PY
chmod 0644 "$T/remap.py"

setuid_paths() {
	python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))
print(" ".join(sorted(c["path"] for c in r.get("covered_paths") or []
                      if "setuid" in c.get("reason", ""))))' "$T/rec" 2>&1
}

# A working tree: 40 directories of 25 files, a setuid-root file six
# levels down, a setgid file of nobody's beside an ordinary one.
w=$T/work
deep=$w/a/b/c/d/e/f
python3 - "$w" <<'PY'
import os, sys
for d in range(40):
    p = "%s/d%02d" % (sys.argv[1], d)
    os.makedirs(p)
    for f in range(25):
        with open("%s/f%02d" % (p, f), "w") as fh:
            fh.write("x" * 64)
PY
mkdir -p "$deep"
cp /bin/true "$deep/suid" && chmod 4755 "$deep/suid"
cp /bin/true "$w/d17/sgid" && chown 65534:65534 "$w/d17/sgid" && chmod 2775 "$w/d17/sgid"
cp /bin/true "$deep/plain" && chmod 0755 "$deep/plain"
before=$(sha256sum <"$deep/suid")
out=$(cd "$w" && "$CORDON" run --profile workspace-write --ro "$T/remap.py" --json-fd 3 -- \
	python3 "$T/remap.py" "$deep/suid" "$deep/plain" 3>"$T/rec" 2>"$T/err")
is "$(echo "$out" | tr '\n' '|')" "error: Read-only file system|rewritten|" \
	"workspace-write: a setuid-root file six levels down cannot be rewritten (EROFS); the file beside it can"
is "$(sha256sum <"$deep/suid")" "$before" "workspace-write: the host's setuid-root file is unchanged"
is "$(setuid_paths)" "$deep/suid $w/d17/sgid" \
	"workspace-write: both set-id files are listed (one of them nobody's)"

# A --rw tree of nobody's holding a setuid-root file: kept read-only (the
# idmapped bind lets the sandbox write root's files); nobody's own
# world-writable setuid file cannot be opened for writing at all (an
# owner the idmap does not map: EACCES from the kernel), and is listed too.
r=$T/other
mkdir -p "$r/x/y"
cp /bin/true "$r/x/y/rootsuid"
cp /bin/true "$r/x/y/suid"
cp /bin/true "$r/x/plain"
chown -R 65534:65534 "$r"
chown 0:0 "$r/x/y/rootsuid" "$r/x/plain"
chmod 4755 "$r/x/y/rootsuid"
chmod 4777 "$r/x/y/suid"
before=$(sha256sum <"$r/x/y/rootsuid")
out=$(cd "$T" && "$CORDON" run --rw "$r" --ro "$T/remap.py" --json-fd 3 -- \
	python3 "$T/remap.py" "$r/x/y/rootsuid" "$r/x/plain" "$r/x/y/suid" 3>"$T/rec" 2>"$T/err")
is "$(echo "$out" | tr '\n' '|')" "error: Read-only file system|rewritten|error: Permission denied|" \
	"--rw tree of nobody's: its setuid-root file cannot be rewritten (EROFS), root's plain file beside it can, nobody's world-writable setuid file is out of reach (EACCES)"
is "$(sha256sum <"$r/x/y/rootsuid")" "$before" "--rw tree: the host's setuid-root file is unchanged"
is "$(setuid_paths)" "$r/x/y/rootsuid $r/x/y/suid" "--rw tree: both set-id files are listed"
is "$(find "$r" "$w" ! -type d -perm /6000 | sort | tr '\n' ' ')" \
	"$r/x/y/rootsuid $r/x/y/suid $w/a/b/c/d/e/f/suid $w/d17/sgid " \
	"no other file carries set-id bits afterwards"


# File capabilities survive a rewrite through a shared mapping as set-id
# bits do, and the sandbox of a root caller may chmod root's files: a file
# carrying security.capability is kept read-only and listed as well.
fc=$T/fcaps
mkdir -p "$fc/bin"
cp /bin/true "$fc/bin/tool" && setcap cap_setuid+ep "$fc/bin/tool"
cp /bin/true "$fc/bin/other"
before=$(sha256sum <"$fc/bin/tool")
out=$(cd "$fc" && "$CORDON" run --profile workspace-write --ro "$T/remap.py" --json-fd 3 -- \
	python3 "$T/remap.py" "$fc/bin/tool" "$fc/bin/other" 3>"$T/rec" 2>"$T/err")
is "$(echo "$out" | tr '\n' '|')" "error: Read-only file system|rewritten|" \
	"workspace-write: a file with capabilities cannot be rewritten (EROFS); the plain file beside it can"
is "$(sha256sum <"$fc/bin/tool")" "$before" "... the host's file is unchanged"
is "$(getcap "$fc/bin/tool" | sed 's/.* //')" "cap_setuid=ep" "... and still carries only what it carried"
case $(python3 -c 'import json,sys; print(json.load(open(sys.argv[1])).get("covered_paths"))' "$T/rec") in
*"$fc/bin/tool"*capabilities*) ok "... listed in covered_paths as a file with capabilities" true ;;
*) nok "... listed in covered_paths as a file with capabilities ($(cat "$T/rec"))" true ;;
esac

done_testing
