#!/bin/sh
# The bind source itself exchanged between the walk and the mounts
# (session 8's attacker, F1): top/a (no credential) is bound, and a
# flipper keeps exchanging top/a with top/b (.env, .netrc, a repository
# with hooks) by renameat2(RENAME_EXCHANGE).  The walk read a, the child
# opened the path and mounted b: no cover for b's credentials, and the
# after-mount check skipped the whole tree (its top is a mount root).
# 3/20 runs as root, 4/20 as nobody, 6/20 with the flipper inside a
# second sandbox read the secrets; 3/20 wrote the repository's read-only
# hook.  Now each walked source is pinned to the directory the walk read
# (the child, or the supervisor for idmapped trees, refuses another
# inode), the walk is done again when the top was renamed meanwhile, and
# the tree's top never counts as "hidden by a mount".  So every run
# reads no secret and writes no hook, or is refused (exit 125, naming the
# concurrent rename).  Controls: without the flipper each run exits 0,
# reads the bound directory and no secret; the flipper really flipped.
# --ro and --rw (a root caller's idmapped path) binds, and workspace-write
# in the default cwd bind, raced by a host process; workspace-write raced
# from another sandbox with --rw on the parent, b a repository (that
# sandbox cannot exchange a directory holding a credential: held() shows
# it gets EBUSY, 9064); as root and as nobody.
: "${CORDON_TEST_TIMEOUT:=300}"
export CORDON_TEST_TIMEOUT
. "${CORDON_SRC:-.}/tests/lib.sh"

N=${CORDON_RACE_RUNS:-10}
SECRET=cordon-root-race-5519

FLIP='import ctypes, os, sys
l = ctypes.CDLL(None, use_errno=True)
d = sys.argv[1]
n = 0
while not os.path.exists(sys.argv[2] + "/stop"):
    for _ in range(200):
        if l.renameat2(-100, (d + "/top/a").encode(), -100, (d + "/top/b").encode(), 2) == 0:
            n += 1
open(sys.argv[2] + "/flips", "w").write(str(n))'

CMD='cat "$1/.env" "$1/.netrc" 2>/dev/null
if test -d "$1/.git/hooks"; then
	printf "#!/bin/sh\necho hook-ran\n" >"$1/.git/hooks/pre-commit" 2>/dev/null && echo WROTE-HOOK
fi
test -f "$1/notes" && echo saw-a
echo ran'

setup() {
	d=$1
	mkdir -p "$d/top/a" "$d/top/b" "$d/ctl" "$d/cwd"
	i=0
	while [ $i -lt 30 ]; do
		mkdir -p "$d/top/a/d$i" "$d/top/b/d$i"
		i=$((i + 1))
	done
	if [ "$2" = creds ]; then
		echo "$SECRET-env" >"$d/top/b/.env"
		echo "machine h password $SECRET-netrc" >"$d/top/b/.netrc"
	fi
	echo plain >"$d/top/a/notes"
	(cd "$d/top/b" && git init -q . && mkdir -p .git/hooks)
	[ -n "$RUN_AS" ] && chown -R 65534:65534 "$d"
}

# one run of mode $1 in $d, output in $T/out and $T/err
one() {
	case $1 in
	ro) (cd "$d/cwd" && $RUN_AS "$CORDON" run --ro "$d/top/a:/data" -- sh -c "$CMD" sh /data) ;;
	rw) (cd "$d/cwd" && $RUN_AS "$CORDON" run --rw "$d/top/a:/data" -- sh -c "$CMD" sh /data) ;;
	ww | hook) (cd "$d/top/a" && $RUN_AS "$CORDON" run --profile workspace-write -- sh -c "$CMD" sh .) ;;
	esac >"$T/out" 2>"$T/err"
}

# A sandbox with --rw on the parent cannot exchange a directory that holds
# a covered credential: it is bound over itself there (EBUSY).
held() {
	who=$1 d=$T/held-$1
	setup "$d" creds
	(cd "$d/cwd" && $RUN_AS "$CORDON" run --rw "$d/top" -- /usr/bin/python3 -c '
import ctypes, sys
l = ctypes.CDLL(None, use_errno=True)
r = l.renameat2(-100, (sys.argv[1] + "/top/a").encode(), -100, (sys.argv[1] + "/top/b").encode(), 2)
print("exchange", r, ctypes.get_errno())' "$d") >"$T/out" 2>&1
	is "$(cat "$T/out")" "exchange -1 16" \
		"$who: a sandbox cannot exchange a directory holding a covered credential (EBUSY)"
	ok "$who: control: the directories are where they were" test -f "$d/top/b/.env" -a -f "$d/top/a/notes"
}

race() {
	who=$1
	held "$who"
	for mode in ro rw ww hook; do
		d=$T/$mode-$who
		# hook: b is a repository with no credential, so a sandbox can
		# exchange it (THREATS row AD); the others race a host process
		if [ $mode = hook ]; then setup "$d" repo; else setup "$d" creds; fi
		one $mode
		is "$?:$(grep -c "$SECRET" "$T/out"):$(grep -c saw-a "$T/out"):$(grep -c WROTE-HOOK "$T/out")" \
			"0:0:1:0" "$who/$mode: control: without a flipper the run exits 0, sees top/a, no secret"
		[ $mode = hook ] ||
			ok "$who/$mode: control: the secrets are on the host" grep -q "$SECRET" "$d/top/b/.env"
		if [ $mode != hook ]; then
			# from the host, as the same user
			$RUN_AS /usr/bin/python3 -c "$FLIP" "$d" "$d/ctl" >"$T/flip.out" 2>&1 &
		else
			# from another sandbox with --rw on the parent (THREATS row AD)
			(cd "$d/cwd" && exec $RUN_AS "$CORDON" run --timeout 0 --rw "$d/top" --rw "$d/ctl" -- \
				/usr/bin/python3 -c "$FLIP" "$d" "$d/ctl") >"$T/flip.out" 2>&1 &
		fi
		fp=$!
		sleep 1
		sed 's/^/#   flipper: /' "$T/flip.out" | head -3
		leaked=0 hooked=0 refused=0 ran=0 other=0 i=0
		while [ $i -lt "$N" ]; do
			one $mode
			rc=$?
			if grep -q "$SECRET" "$T/out"; then
				leaked=$((leaked + 1))
			elif grep -q WROTE-HOOK "$T/out"; then
				hooked=$((hooked + 1))
			elif [ $rc = 125 ] && grep -q "concurrent rename" "$T/err"; then
				refused=$((refused + 1))
			elif [ $rc = 0 ] && grep -q ran "$T/out"; then
				ran=$((ran + 1))
			else
				other=$((other + 1))
				sed 's/^/#   /' "$T/err" | head -3
			fi
			i=$((i + 1))
		done
		: >"$d/ctl/stop"
		wait $fp
		diag "$who/$mode: $N runs: $ran ran, $refused refused, $leaked read a secret, $hooked wrote the hook, $other other"
		ok "$who/$mode: control: the flipper exchanged the directories ($(cat "$d/ctl/flips" 2>/dev/null) times)" \
			test "$(cat "$d/ctl/flips" 2>/dev/null || echo 0)" -gt 100
		is "$leaked" 0 "$who/$mode: no run under the flipper read a secret"
		is "$hooked" 0 "$who/$mode: no run under the flipper wrote the repository's hook"
		is "$other" 0 "$who/$mode: each run either ran or was refused naming the concurrent rename"
		ok "$who/$mode: no hook on the host" test ! -e "$d/top/a/.git/hooks/pre-commit" \
			-a ! -e "$d/top/b/.git/hooks/pre-commit"
	done
}

for_each_user race
done_testing
