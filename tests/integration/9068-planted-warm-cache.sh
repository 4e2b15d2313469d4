#!/bin/sh
# Session 8's second attacker, G2: with the directory-listing cache warm,
# the tree's top came from the cache and was neither pinned nor kept open,
# so the after-run check read the workspace by path again and a tree
# exchanged during the run and back after it hid the files the run
# planted (row AG, F1b, undone by the cache).  Now the top is pinned and
# kept before the cache is asked.  Control: the cache is used (the second
# run's directory reads are few).  As root and as nobody.
: "${CORDON_TEST_TIMEOUT:=180}"
export CORDON_TEST_TIMEOUT
. "${CORDON_SRC:-.}/tests/lib.sh"
command -v python3 >/dev/null || { skip "python3 missing"; done_testing; exit; }

xchg() {
	python3 -c '
import ctypes, sys
l = ctypes.CDLL(None, use_errno=True)
sys.exit(0 if l.renameat2(-100, sys.argv[1].encode(), -100, sys.argv[2].encode(), 2) == 0 else 1)' "$1" "$2"
}

warm() {
	who=$1
	X=$T/$who
	mkdir -p "$X/top/a" "$X/top/b"
	echo hi >"$X/top/a/README"
	[ -n "$RUN_AS" ] && chown -R 65534:65534 "$X"
	cd "$X/top/a" || exit 1
	sleep 1.2
	$RUN_AS "$CORDON" run --profile workspace-write -- true </dev/null >/dev/null 2>&1
	sleep 1.2
	$RUN_AS "$CORDON" run --profile workspace-write -- true </dev/null >/dev/null 2>&1
	$RUN_AS "$CORDON" run --profile workspace-write -- sh -c 'echo "echo pwn" > .envrc; mkdir -p .git/hooks;
		echo "id" > .git/hooks/pre-commit; : > started; sleep 4' </dev/null >"$T/out" 2>&1 &
	cp=$!
	# Exchange once the command runs (a loaded machine can take seconds to
	# get there; exchanged before the walk, there is nothing to catch).
	i=0
	while [ ! -e "$X/top/a/started" ] && [ $i -lt 300 ]; do sleep 0.1; i=$((i + 1)); done
	xchg "$X/top/a" "$X/top/b"
	ok "$who: control: the tree was exchanged during the run" test -e "$X/top/b/README"
	wait $cp
	xchg "$X/top/a" "$X/top/b"
	ok "$who: control: the planted files sit in the real workspace" test -e "$X/top/a/.envrc" -a -e "$X/top/a/.git/hooks/pre-commit"
	ok "$who: the run says the tree moved" grep -q "renamed or exchanged" "$T/out"
	ok "$who: ... and warns of .envrc" grep -q "created '.envrc'" "$T/out"
	ok "$who: ... and of .git" grep -q "created '.git'" "$T/out"
	cd "$T" || exit 1
}
for_each_user warm
done_testing
