#!/bin/sh
# A credential's cover is planned by path during the walk and mounted
# later: a concurrent run with --rw on the same tree that keeps
# exchanging the credential's parent directory with another
# (renameat2 RENAME_EXCHANGE of a/sub and b/sub, in a loop) made another
# run's cover land on an empty mount point or the wrong file, and the
# secret was read (session 6's attacker: 4/12 runs as root, 6/12 as
# nobody).  Now each cover is checked at mount time to be the inode the
# walk judged (and attached to the descriptor checked), every cover is
# checked after the mounts, and a directory of a stamped tree whose
# entries changed between the walk and the end of the mounts refuses the
# run unless nothing new was moved in.  So every run below either reads
# no secret or is refused (exit 125, saying what moved).  Controls: the
# secret is on the host; without the flipper a run exits 0, reads no
# secret, and the flipper (now a host process: a sandbox can no longer
# rename a directory above a covered credential) really flipped (it counts its exchanges).  In
# workspace-write and with --rw, as root and as nobody.
: "${CORDON_TEST_TIMEOUT:=300}"
export CORDON_TEST_TIMEOUT
. "${CORDON_SRC:-.}/tests/lib.sh"

N=${CORDON_RACE_RUNS:-12}
SECRET=cordon-race-secret-7731

FLIP='import ctypes, os, sys
l = ctypes.CDLL(None, use_errno=True)
n = 0
while not os.path.exists(sys.argv[1] + "/stop"):
    for _ in range(200):
        if l.renameat2(-100, b"a/sub", -100, b"b/sub", 2) == 0:
            n += 1
open(sys.argv[1] + "/flips", "w").write(str(n))'

race() {
	who=$1
	for mode in ww rw; do
		d=$T/$mode-$who
		mkdir -p "$d/cwd" "$d/tree/a/sub" "$d/tree/b/sub" "$d/ctl"
		(cd "$d/tree" && i=0 && while [ $i -lt 40 ]; do
			mkdir -p "a/d$i" "b/d$i" && touch "a/d$i/f" "b/d$i/f"
			i=$((i + 1))
		done)
		echo "$SECRET" >"$d/tree/a/sub/.env"
		echo plain >"$d/tree/b/sub/notes"
		[ -n "$RUN_AS" ] && chown -R 65534:65534 "$d"
		if [ $mode = rw ]; then
			cd "$d/cwd" || exit 1
			set -- --rw "$d/tree"
			p="$d/tree/"
		else
			cd "$d/tree" || exit 1
			set -- --profile workspace-write
			p=
		fi
		# control: no flipper
		$RUN_AS "$CORDON" run "$@" -- sh -c "cat ${p}a/sub/.env ${p}b/sub/.env; echo ran" \
			>"$T/out" 2>"$T/err"
		is "$?:$(grep -c "$SECRET" "$T/out"):$(grep -c ran "$T/out")" "0:0:1" \
			"$who/$mode: control: without a flipper the run exits 0 and reads no secret"
		ok "$who/$mode: control: the secret is on the host" grep -q "$SECRET" "$d/tree/a/sub/.env"

		# the flipper: a host process of the same user (another sandbox
		# with --rw on the tree can no longer exchange a/sub: a directory
		# above a covered credential is bound over itself there, EBUSY,
		# 9063 and 9064 show it)
		(cd "$d/tree" && exec $RUN_AS /usr/bin/python3 -c "$FLIP" "$d/ctl") \
			>"$T/flip.out" 2>&1 &
		fp=$!
		sleep 1
		sed 's/^/#   flipper: /' "$T/flip.out" | head -3
		leaked=0 refused=0 ran=0 other=0 i=0
		while [ $i -lt "$N" ]; do
			$RUN_AS "$CORDON" run "$@" -- \
				sh -c "cat ${p}a/sub/.env ${p}b/sub/.env 2>/dev/null; echo ran" \
				>"$T/out" 2>"$T/err"
			rc=$?
			if grep -q "$SECRET" "$T/out"; then
				leaked=$((leaked + 1))
			elif [ $rc = 125 ] && grep -q "concurrent rename" "$T/err"; then
				refused=$((refused + 1))
			elif grep -q ran "$T/out"; then
				ran=$((ran + 1))
			else
				other=$((other + 1))
				sed 's/^/#   /' "$T/err" | head -3
			fi
			i=$((i + 1))
		done
		: >"$d/ctl/stop"
		wait $fp
		diag "$who/$mode: $N runs: $ran ran covered, $refused refused, $leaked read the secret, $other other"
		ok "$who/$mode: control: the flipper ran and exchanged the directories ($(cat "$d/ctl/flips" 2>/dev/null) times)" \
			test "$(cat "$d/ctl/flips" 2>/dev/null || echo 0)" -gt 100
		is "$leaked" 0 "$who/$mode: no run under the flipper read the secret"
		is "$other" 0 "$who/$mode: each run either ran with the cover or was refused saying what moved"
		ok "$who/$mode: the secret is still on the host" grep -q "$SECRET" "$d/tree/a/sub/.env" "$d/tree/b/sub/.env"
	done
}

for_each_user race
done_testing
