#!/bin/sh
# THREATS row 4, issue 16 finding 7: a --rw source swapped for a symlink
# after the plan fails closed (9004) and says so: the child's own reason
# ("bind source changed into a symlink", with the path), never the
# "supervise the sandbox: Broken pipe" the supervisor met when it wrote to
# a child that had already failed.  Made deterministic with at-syscall:
# the swap happens when cordon enters clone3 (after the plan), and cordon
# is held at clone3's return until its child has failed.
. "${CORDON_SRC:-.}/tests/lib.sh"
H=$CORDON_BUILD/tests/helpers
NR_CLONE3=435 # the same on x86_64 and the generic table (aarch64)

swapped() {
	who=$1
	d=$T/sw-$who
	mkdir -p "$d/proj" && chmod 0777 "$d"
	cd "$d/proj" || exit 1
	reset() {
		rm -rf "$d/src" "$d/src.real" "$d/other"
		mkdir "$d/src" "$d/other" && chmod 0777 "$d/src" "$d/other"
	}
	# Positive control: the same run without the swap writes through --rw.
	# (Its child waits for cordon, held at clone3's return: it cannot end
	# there, so the hold is 1 s, not up to 20 s for a child that fails.)
	reset
	$RUN_AS "$H/at-syscall" -W 1 $NR_CLONE3 true \
		"$CORDON" run --rw "$d/src" -- sh -c "echo w >$d/src/f" 2>"$d/err"
	is "$?" 0 "$who: control: the --rw run works under at-syscall without the swap"
	ok "$who: control: and wrote through the bind" test -f "$d/src/f"

	reset
	# A root caller's run goes on (below): its child cannot end either.
	hold=-w
	[ -z "$RUN_AS" ] && [ "$(id -u)" -eq 0 ] && hold="-W 1"
	$RUN_AS "$H/at-syscall" $hold $NR_CLONE3 "mv '$d/src' '$d/src.real' && ln -s '$d/other' '$d/src'" \
		"$CORDON" run --json --rw "$d/src" -- sh -c "echo w >$d/src/f" >"$d/out" 2>"$d/err"
	rc=$?
	if [ -z "$RUN_AS" ] && [ "$(id -u)" -eq 0 ]; then
		# A root caller's trees are opened (idmapped, without following
		# symlinks) by the supervisor before clone3: the swap comes too
		# late to matter, and the run writes to the directory that was
		# checked, wherever it has been moved.
		is "$rc" 0 "$who: the swap at clone3 comes after the tree was opened: the run works"
		ok "$who: ... and wrote to the directory that was checked (now src.real)" test -f "$d/src.real/f"
		nok "$who: nothing was written to the symlink's target" test -e "$d/other/f"
		cd "$T" || exit 1
		return
	fi
	is "$rc" 125 "$who: a source swapped for a symlink fails closed (125)"
	ok "$who: the message says the bind source changed into a symlink" \
		grep -q "bind source changed into a symlink" "$d/err"
	ok "$who: the message names the path" grep -qF "'$d/src'" "$d/err"
	nok "$who: no 'Broken pipe' in the message" grep -qi 'broken pipe' "$d/err"
	ok "$who: the record says setup-error with the same reason" python3 -c '
import json, sys
r = json.loads(open(sys.argv[1]).read().splitlines()[-1])
assert r["reason"] == "setup-error", r
assert "changed into a symlink" in r["error"] and sys.argv[2] in r["error"], r' "$d/out" "$d/src"
	nok "$who: nothing was written to the symlink's target" test -e "$d/other/f"
	cd "$T" || exit 1
}

for_each_user swapped
done_testing
