#!/bin/sh
# The check after a workspace-write run read the tree by its host path
# (session 8's attacker, F1b): exchanging the working tree with another
# directory while the run is live (renameat2 RENAME_EXCHANGE), and back
# after it ends, made the check read the other directory: the planted
# .envrc and .git/hooks/pre-commit sat in the real workspace with no
# warning.  Now the check reads the directory the walk opened (held open
# for the run), wherever it is, and says when the tree was moved.
# Control: without an exchange both are reported and nothing says the
# tree moved.  As root and as nobody.
. "${CORDON_SRC:-.}/tests/lib.sh"

XCHG='import ctypes, sys
l = ctypes.CDLL(None, use_errno=True)
if l.renameat2(-100, sys.argv[1].encode(), -100, sys.argv[2].encode(), 2) != 0:
    sys.exit("exchange failed: errno %d" % ctypes.get_errno())'

# The sandbox plants, says so in ctl, and waits for ctl/go.
PLANT='echo "echo pwn" >.envrc && mkdir -p .git/hooks && echo "id" >.git/hooks/pre-commit &&
: >"$1/planted"; i=0; while [ ! -e "$1/go" ] && [ $i -lt 300 ]; do sleep 0.1; i=$((i + 1)); done'

# $1 label, $2 how many exchanges (0, 1: during the run, 2: and back after)
planted() {
	who=$1 n=$2 d=$T/$1-$2
	mkdir -p "$d/top/a" "$d/top/b" "$d/ctl"
	echo plain >"$d/top/a/notes"
	[ -n "$RUN_AS" ] && chown -R 65534:65534 "$d"
	(cd "$d/top/a" && exec $RUN_AS "$CORDON" run --profile workspace-write --rw "$d/ctl" -- \
		sh -c "$PLANT" sh "$d/ctl") </dev/null >"$T/out" 2>"$T/err" &
	cp=$!
	i=0
	while [ ! -e "$d/ctl/planted" ] && [ $i -lt 300 ]; do sleep 0.1; i=$((i + 1)); done
	[ "$n" -ge 1 ] && $RUN_AS /usr/bin/python3 -c "$XCHG" "$d/top/a" "$d/top/b"
	: >"$d/ctl/go"
	wait $cp
	rc=$?
	[ "$n" -ge 2 ] && $RUN_AS /usr/bin/python3 -c "$XCHG" "$d/top/a" "$d/top/b"
	sed 's/^/#   /' "$T/err" | head -5
	is "$rc" 0 "$who/$n: the run exited 0"
	where=a
	[ "$n" = 1 ] && where=b
	ok "$who/$n: control: the planted files are in top/$where on the host" \
		test -e "$d/top/$where/.envrc" -a -e "$d/top/$where/.git/hooks/pre-commit"
	ok "$who/$n: .envrc reported" grep -q "warning: the command created '.envrc'" "$T/err"
	ok "$who/$n: .git reported" grep -q "warning: the command created '.git'" "$T/err"
	if [ "$n" = 0 ]; then
		lacks "$who/$n: nothing says the tree moved" "renamed or exchanged during the run" \
			"$T/err" "created '.envrc'"
	else
		ok "$who/$n: the tree's move is reported" grep -q "renamed or exchanged during the run" "$T/err"
	fi
}

run_all() {
	planted "$1" 0
	planted "$1" 1
	planted "$1" 2
}

for_each_user run_all
done_testing
