#!/bin/sh
# The check after the run keys what it saw by inode as well as by path:
# renaming a directory away and building another at its path, exchanging
# two directories (renameat2 RENAME_EXCHANGE), putting a symlink where a
# host-run file was, or making its directory a symlink, or a new hard
# link of an .envrc under that name, each leaves a file the host runs at
# a path where the walk saw another (or the same one with other bytes).
# Each is in planted_paths at its path after the run, with a warning.
# Before, the check compared paths only: the rebuilt sub/.git with a
# core.fsmonitor, and every .envrc below, were silently taken for the
# files the walk had seen.  Controls: a directory renamed and rebuilt that
# holds nothing the host runs is not reported; a run that changes nothing
# reports nothing and the check is complete.  A read-only host-run file's
# other name (notes.txt, a hard link of keep/.envrc made before the run)
# is read-only too (session 11, G8): the rewrite through it fails.  In a
# --rw tree and the
# workspace-write working tree, as root and as nobody.
: "${CORDON_TEST_TIMEOUT:=300}"
export CORDON_TEST_TIMEOUT
. "${CORDON_SRC:-.}/tests/lib.sh"

# record: the --json record's fields, read once (python starts slowly)
record() {
	eval "$(python3 -c '
import json, shlex, sys
try:
    r = json.load(open(sys.argv[1]))
except Exception as e:
    r = {"planted_check": "no record: %s" % e}
for k in ("planted_paths", "planted_check", "exit_code"):
    v = r.get(k, "absent")
    v = " ".join(sorted(v)) if isinstance(v, list) else str(v)
    print("rec_%s=%s" % (k, shlex.quote(v)))' "$T/rec")"
}

# has PATH DESC: PATH (as the record names it) is in planted_paths
has() {
	case " $got " in *" $pre$1 "*) r=yes ;; *) r="no: $got" ;; esac
	is "$r" yes "$who/$mode: $2"
}

PLANT='
mv sub subX && mkdir -p sub/.git/objects && echo "ref: refs/heads/main" >sub/.git/HEAD &&
printf "[core]\n\tfsmonitor = touch planted-ran\n" >sub/.git/config || exit 11
mv d dX && mkdir d && echo "echo evil" >d/.envrc || exit 12
python3 -c "import ctypes, sys
l = ctypes.CDLL(None, use_errno=True)
sys.exit(0 if l.renameat2(-100, b\"a\", -100, b\"b\", 2) == 0 else ctypes.get_errno())" || exit 13
echo "echo evil" >>notes.txt 2>/dev/null && exit 14
mv l lX && mkdir l && ln -s ../evil.sh l/.envrc || exit 15
mv plain plainX && mkdir plain && echo p >plain/f || exit 16
mkdir h && ln d/.envrc h/.envrc || exit 17
mv s sX && ln -s /nonexistent/cordon-elsewhere s || exit 18
exit 0'

renames() {
	who=$1
	for mode in rw ww; do
		d=$T/$mode-$who
		mkdir -p "$d/cwd" "$d/tree"
		(cd "$d/tree" && git init -q sub && mkdir d a b keep plain l &&
			echo 'export D=1' >d/.envrc && echo 'export A=1' >a/.envrc &&
			echo 'export B=1' >b/.envrc && echo 'export K=1' >keep/.envrc &&
			ln keep/.envrc notes.txt && echo 'export L=1' >l/.envrc && echo p >plain/f &&
			mkdir s && echo 'export S=1' >s/.envrc)
		[ -n "$RUN_AS" ] && chown -R 65534:65534 "$d"
		if [ $mode = rw ]; then
			cd "$d/cwd" || exit 1
			set -- --rw "$d/tree"
			pre="$d/tree/"
		else
			cd "$d/tree" || exit 1
			set -- --profile workspace-write
			pre=
		fi
		$RUN_AS "$CORDON" run "$@" --json-fd 3 -- sh -c "cd '$d/tree' && $PLANT" \
			3>"$T/rec" 2>"$T/err"
		is "$?" 0 "$who/$mode: the run exits 0 (every step of the plant worked inside)"
		record
		got=$rec_planted_paths
		has sub/.git/config "the config of a .git rebuilt where the renamed one was is reported"
		has d/.envrc "an .envrc in a directory rebuilt at a renamed one's path is reported"
		has a/.envrc "RENAME_EXCHANGE of two directories: a/.envrc (b's before) is reported"
		has b/.envrc "... and b/.envrc"
		has l/.envrc "a symlink .envrc in a rebuilt directory is reported"
		is "$(cat "$d/tree/keep/.envrc")" "export K=1" \
			"$who/$mode: an .envrc's other name (notes.txt) is read-only too: not rewritten through it"
		has h/.envrc "a new hard link of an .envrc, under the name .envrc, is reported"
		has s/.envrc "an .envrc whose directory is now a (dangling) symlink is reported"
		has subX/.git "the renamed original .git is reported at its new path"
		case " $got " in *plain*) r="listed: $got" ;; *) r=no ;; esac
		is "$r" no "$who/$mode: control: a rebuilt directory holding nothing the host runs is not reported"
		is "$rec_planted_check" complete "$who/$mode: the check was complete"
		ok "$who/$mode: the replaced config is warned about" \
			grep -q "left '${pre}sub/.git/config' in .*another file than before the run" "$T/err"
		rm "$d/tree/l/.envrc" # a symlink there refuses the next run
		$RUN_AS "$CORDON" run "$@" --json-fd 3 -- sh -c "echo again >'$d/tree/plain/f'" \
			3>"$T/rec" 2>"$T/err"
		is "$?" 0 "$who/$mode: control: a run that plants nothing exits 0"
		record
		is "$rec_planted_paths" "" "$who/$mode: control: ... and reports nothing"
		is "$rec_planted_check" complete "$who/$mode: control: ... and its check was complete"
		cd "$T" || exit 1
	done
}
for_each_user renames

done_testing
