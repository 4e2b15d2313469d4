#!/bin/sh
# Hard links across bound trees: a name in one tree reads and writes the
# same bytes as a name in another.  A credential covered in one tree
# (the working directory, a --ro tree) must read empty under its other
# name in another tree, and a file of a read-only tree (--ro) must stay
# read-only under its other name in a --rw tree.  Within one tree this
# held before; across trees it did not.  As root and as nobody.
: "${CORDON_TEST_TIMEOUT:=300}"
export CORDON_TEST_TIMEOUT
. "${CORDON_SRC:-.}/tests/lib.sh"

# the reasons of covered_paths entries whose path ends in $1
reasons() {
	python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))
print(",".join(sorted(c["reason"] for c in r.get("covered_paths") or [] if c["path"].endswith(sys.argv[2]))))' "$T/rec" "$1" 2>&1
}

links() {
	who=$1
	d=$T/links-$who
	mkdir -p "$d/work/a" "$d/ro/deep" "$d/rw/sub"
	echo SECRET-netrc >"$d/work/a/.netrc"
	echo SECRET-gitcred >"$d/ro/deep/.git-credentials"
	echo DATA >"$d/ro/data.txt"
	echo PLAIN >"$d/rw/plain.txt"
	ln "$d/work/a/.netrc" "$d/rw/sub/notes.txt"        # cwd credential -> --rw tree
	ln "$d/ro/deep/.git-credentials" "$d/work/innocent" # --ro credential -> cwd
	ln "$d/ro/data.txt" "$d/rw/data-link"               # --ro file -> --rw tree
	[ -n "$RUN_AS" ] && chown -R 65534:65534 "$d"
	cd "$d/work" || exit 1
	out=$($RUN_AS "$CORDON" run --ro "$d/ro" --rw "$d/rw" --json-fd 3 -- sh -c "
		echo notes=\$(cat $d/rw/sub/notes.txt)
		echo innocent=\$(cat innocent)
		echo plain=\$(cat $d/rw/plain.txt)
		echo data=\$(cat $d/rw/data-link)
		echo write=\$( { echo PWNED >$d/rw/data-link && echo ok; } 2>&1 | sed 's/.*: //')
		if echo MINE >$d/rw/plain.txt; then echo own=ok; else echo own=refused; fi
		" 3>"$T/rec" 2>"$T/err")
	is "$?" 0 "$who: the run exits 0"
	is "$(printf '%s\n' "$out" | grep '^notes=')" "notes=" \
		"$who: a credential of the working directory reads empty under its name in a --rw tree"
	is "$(printf '%s\n' "$out" | grep '^innocent=')" "innocent=" \
		"$who: a credential of a --ro tree reads empty under its name in the working directory"
	is "$(printf '%s\n' "$out" | grep '^plain=')" "plain=PLAIN" \
		"$who: positive control: a plain file of the --rw tree reads"
	is "$(printf '%s\n' "$out" | grep '^data=')" "data=DATA" \
		"$who: the --ro file's other name in the --rw tree still reads"
	is "$(printf '%s\n' "$out" | grep '^write=')" "write=Read-only file system" \
		"$who: ... but cannot be written (it would change the read-only tree)"
	is "$(cat "$d/ro/data.txt")" DATA "$who: the --ro tree's file is unchanged on the host"
	is "$(printf '%s\n' "$out" | grep '^own=')" "own=ok" \
		"$who: positive control: the --rw tree's own file is written"
	is "$(cat "$d/rw/plain.txt")" MINE "$who: ... and the write reached the host"
	is "$(reasons /rw/sub/notes.txt)" "credential file" "$who: notes.txt is in covered_paths as a credential"
	is "$(reasons /work/innocent)" "credential file" "$who: innocent is in covered_paths as a credential"
	is "$(reasons /rw/data-link)" "another name of a file in a read-only tree: read-only" \
		"$who: data-link is in covered_paths, read-only"
	is "$(reasons /rw/plain.txt)" "" "$who: the plain file is not in covered_paths"
	cd "$T" || exit 1
}
for_each_user links

done_testing
