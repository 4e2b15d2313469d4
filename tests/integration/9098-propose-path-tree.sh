#!/bin/sh
# Session 12's review, F2: --propose flagged nothing when a PATH entry is
# the tree itself (absolute), '.', or empty (leading, trailing), each of
# which a run refuses: a planted `git` at the tree's top runs on the
# host by name.  Now every change is flagged for such an entry.
# Control: PATH without the tree flags nothing (a new file is no more
# than added).  As root and as nobody.
: "${CORDON_TEST_TIMEOUT:=300}"
export CORDON_TEST_TIMEOUT
. "${CORDON_SRC:-.}/tests/lib.sh"

PLANT='echo "#!/bin/sh" >git && chmod +x git'

# flagged PATH: the proposal's "N flagged" for a planted git under PATH
flagged() {
	rm -f "$d/git"
	$RUN_AS env PATH="$1" "$CORDON" run --propose -- sh -c "$PLANT" >"$T/out" 2>"$T/err"
	sed -n 's/.* \([0-9]*\) flagged.*/\1/p' "$T/err"
}

pathtree() {
	who=$1
	d=$T/p-$who
	mkdir -p "$d"
	[ -n "$RUN_AS" ] && chown -R 65534:65534 "$d"
	cd "$d" || exit 1
	for P in "$d:/usr/bin:/bin" ".:/usr/bin:/bin" "/usr/bin:/bin:" ":/usr/bin:/bin" \
		"/usr/bin::/bin"; do
		is "$(flagged "$P")" 1 "$who: PATH=$P: the planted git is flagged"
	done
	is "$(flagged /usr/bin:/bin)" 0 "$who: control: PATH=/usr/bin:/bin: nothing flagged"
	ok "$who: control: ... the file is added" grep -q "1 added" "$T/err"
	cd "$T" || exit 1
}

for_each_user pathtree

done_testing
