#!/bin/sh
# A credential covered in the sandbox (/dev/null bound over .env) lost
# its cover when a host process replaced the file during the run (an
# editor's atomic save: write .env.tmp, rename it over .env; or rm and
# recreate): the kernel detaches mounts on a dentry renamed over or
# unlinked, so the new file showed through and the sandbox printed the
# new secret.  Now the supervisor watches the covered names on the host
# (inotify, set before the mounts) and stops the run at once: exit 125,
# one line naming the path, reason "cover-replaced" in --json.
# Control: a host change to a non-covered file in the same directory
# during the run does not stop it.  As root and as nobody.
. "${CORDON_SRC:-.}/tests/lib.sh"

NEW=SECRET=cordon-new-4471

case_user() {
	who=$1
	for how in rename recreate; do
		d=$T/$who-$how
		mkdir -p "$d"
		echo orig >"$d/.env"
		echo plain >"$d/notes"
		[ -n "$RUN_AS" ] && chown -R 65534:65534 "$d"
		cd "$d" || exit 1
		$RUN_AS "$CORDON" run --json --profile workspace-write -- sh -c 'sleep 3; cat .env; echo ran' \
			>"$T/out" 2>"$T/err" &
		rp=$!
		sleep 1.5
		if [ $how = rename ]; then
			$RUN_AS sh -c "echo $NEW >'$d/.env.tmp' && mv '$d/.env.tmp' '$d/.env'"
		else
			$RUN_AS sh -c "rm '$d/.env' && echo $NEW >'$d/.env'"
		fi
		wait $rp
		rc=$?
		ok "$who/$how: the new secret is on the host" grep -q "$NEW" "$d/.env"
		is "$rc:$(grep -c "$NEW" "$T/out")" "125:0" \
			"$who/$how: the run is stopped (125) and never prints the new secret"
		ok "$who/$how: stderr names the replaced cover" \
			grep -q "a covered credential '$d/.env' was replaced on the host during the run: the run was stopped" "$T/err"
		ok "$who/$how: --json says cover-replaced" grep -q '"reason": *"cover-replaced"' "$T/out"
		sed 's/^/#   /' "$T/err" | head -3

		# control: another file of the same directory changes on the host
		$RUN_AS "$CORDON" run --profile workspace-write -- sh -c 'sleep 3; cat .env; echo ran' \
			>"$T/out" 2>"$T/err" &
		rp=$!
		sleep 1.5
		$RUN_AS sh -c "echo new >'$d/notes.tmp' && mv '$d/notes.tmp' '$d/notes' && rm '$d/notes' && echo x >'$d/other'"
		wait $rp
		rc=$?
		is "$rc:$(grep -c "$NEW" "$T/out"):$(grep -c ran "$T/out")" "0:0:1" \
			"$who/$how: control: a non-covered name changing does not stop the run"
		cd "$T" || exit 1
	done
}

for_each_user case_user
done_testing
