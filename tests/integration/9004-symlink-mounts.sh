#!/bin/sh
# THREATS row 4: symlinks in mount sources and destinations, and a race
# that swaps a source directory for a symlink between the plan and the
# mount (CVE-2021-30465, CVE-2025-31133).  A symlink named at plan time is
# resolved there and its canonical target is what gets mounted (and where,
# when no DEST is given); a destination through a symlink is refused; a
# source swapped after the plan fails closed, never mounts the target.
. "${CORDON_SRC:-.}/tests/lib.sh"
H=$CORDON_BUILD/tests/helpers

mkdir -p "$T/proj" "$T/target" "$T/secret" "$T/w"
echo TARGET >"$T/target/f"
echo SECRET >"$T/secret/marker"
echo W >"$T/w/f"
ln -s "$T/target" "$T/link"
ln -s /usr/share "$T/proj/esc"
chmod -R a+rX "$T"

links() {
	who=$1
	cd "$T/proj" || exit 1
	is "$($RUN_AS "$CORDON" run --ro "$T/link:/x" -- cat /x/f)" TARGET "$who: --ro LINK:/x binds the link's target"
	is "$($RUN_AS "$CORDON" run --dry-run --ro "$T/link:/x" -- true | python3 -c 'import json,sys
print([m["src"] for m in json.load(sys.stdin)["mounts"] if m["dest"] == "/x"][0])')" "$T/target" \
		"$who: the plan names the canonical source, not the link"
	# Without DEST the canonical path is also the destination: the link's
	# own path is not mounted on.
	is "$($RUN_AS "$CORDON" run --ro "$T/link" -- sh -c "cat $T/target/f; test -e $T/link && echo link-visible")" TARGET \
		"$who: --ro LINK mounts at the canonical path only"
	# A destination that goes through a symlink (here one in the read-only
	# cwd pointing at /usr/share) cannot redirect the mount.
	$RUN_AS "$CORDON" run --ro "$T/w:$T/proj/esc/cordon-x" -- true 2>"$T/err"
	is $? 125 "$who: a destination through a symlink is refused"
	ok "$who: the refusal names the symlink problem" grep -qi 'symbolic link' "$T/err"
	refused "$who: a destination through a symlink inside another bind is refused" 'symbolic link' \
		$RUN_AS "$CORDON" run --ro "$T/proj:/d" --ro "$T/w:/d/esc/cordon-x" -- true
	absent_in "$who: nothing appeared at the symlink's target" /usr/share/cordon-x $RUN_AS "$CORDON" run --

	# The race: swap race/src (a directory) and race/alt (a symlink to the
	# secret) with RENAME_EXCHANGE as fast as possible while cordon binds
	# race/src without a DEST.  Each run either saw a directory at plan
	# time (then SRC must show its own content or the run fails closed) or
	# saw the symlink (then the target is mounted at its own canonical
	# path, and race/src is absent inside).  The secret must never appear
	# at race/src.
	r=$T/race-$who
	mkdir -p "$r/src" && echo GOOD >"$r/src/marker" && ln -s "$T/secret" "$r/alt" && chmod -R a+rX "$r"
	"$H/esc-probe" swap "$r/src" "$r/alt" 100000000 >/dev/null 2>&1 &
	swapper=$!
	good=0 secret=0 closed=0 resolved=0 i=0
	while [ $i -lt 60 ]; do
		out=$($RUN_AS "$CORDON" run --ro "$r/src" -- sh -c "cat $r/src/marker 2>/dev/null || echo absent" 2>/dev/null)
		rc=$?
		case "$rc:$out" in
		0:GOOD) good=$((good + 1)) ;;
		0:absent) resolved=$((resolved + 1)) ;;
		*SECRET*) secret=$((secret + 1)) ;;
		125:*) closed=$((closed + 1)) ;;
		*) diag "unexpected: rc $rc, $out" ;;
		esac
		i=$((i + 1))
	done
	kill "$swapper" 2>/dev/null
	wait "$swapper" 2>/dev/null
	diag "$who: 60 runs: $good mounted the directory, $resolved resolved the symlink at plan time, $closed failed closed, $secret showed the secret"
	ok "$who: no run ever saw the symlink's target at the planned source ($good ran with the directory)" \
		test "$secret" -eq 0
	ok "$who: the race was live (some runs saw the symlink at plan time or failed closed)" test $((resolved + closed)) -gt 0
	# Since each source is opened once and checked again at the mount, a
	# swap this tight can fail every run closed (the walk retries 3 times):
	# that the directory mounts is checked with the swapper stopped.
	[ -L "$r/src" ] && "$H/esc-probe" swap "$r/src" "$r/alt" 1 >/dev/null 2>&1
	is "$($RUN_AS "$CORDON" run --ro "$r/src" -- cat "$r/src/marker" 2>&1)" GOOD \
		"$who: control: with the swapper stopped, the directory mounts"
	is $((good + resolved + closed + secret)) 60 "$who: every run ended one of those ways"
	cd "$T" || exit 1
}

for_each_user links
done_testing
