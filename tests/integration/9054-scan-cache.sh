#!/bin/sh
# The walk of the bound trees keeps what it found in each directory in a
# cache under the state directory (tree-cache.c), and does not read a
# directory again while its (device, inode, ctime) are unchanged.  The
# sandbox can change a --rw tree between runs, so a change must still be
# found on the next run, whatever its route: a credential renamed in,
# hard-linked in, a socket bound, a host-run file made, all within the
# same second as the run before; a .json or .pem rewritten in place (its
# directory's ctime does not move); a directory made within a second of
# the walk (never recorded).  A cache file that is not the caller's own
# 0600 file, or that was edited, is ignored (the tree is read whole), and
# the cache never shows inside the sandbox.  Controls: the cache is used
# at all (a second run reads far fewer directories: getdents64 counted
# with strace on cordon itself), and each planted thing is on the host.
# As root and as nobody; workspace-write and the default profile.
. "${CORDON_SRC:-.}/tests/lib.sh"

command -v strace >/dev/null || { skip "strace missing"; done_testing; exit; }
SECRET=cordon-cache-secret-4417
SA='{"type": "service_account", "private_key": "-----BEGIN PRIVATE KEY-----\nX\n-----END PRIVATE KEY-----\n"}'

# getdents64 calls of cordon itself (not the sandbox) for one run, on
# directories of the tree (-y names each fd's path: a root run also reads
# /proc, by how many processes the host has, for its host-id slot)
dents() {
	: >"$T/st" && chmod 666 "$T/st"
	$RUN_AS strace -qq -y -e trace=getdents64 -o "$T/st" "$CORDON" run "$@" -- true >/dev/null 2>&1
	grep getdents64 "$T/st" | grep -c "<$T/"
}

mktree() {
	d=$1
	i=0
	while [ $i -lt 60 ]; do
		mkdir -p "$d/d$i/sub"
		echo x >"$d/d$i/sub/f.txt"
		i=$((i + 1))
	done
	echo '{}' >"$d/d1/key.json"
	echo 'not a key' >"$d/d2/id.pem"
	[ -n "$RUN_AS" ] && chown -R 65534:65534 "$d"
	sleep 2 # older than the guard: recordable
}

cache_of() {
	if [ -n "$RUN_AS" ]; then
		echo "$S/.state-nobody/scan"
	else
		echo "$(dirname "$CORDON_STATE")/scan"
	fi
}

plant() {
	who=$1 d=$T/$who
	mktree "$d"
	cd "$d" || exit 1
	c=$(cache_of)
	cold=$(dents)
	ok "$who: control: the first run read every directory ($cold getdents64 calls)" test "$cold" -ge 120
	ok "$who: the cache is the caller's own 0600 file" \
		sh -c "test \"\$(stat -c %u:%a $c/t-*)\" = $($RUN_AS id -u):600"
	ok "$who: its directory is 0700" test "$(stat -c %a "$c")" = 700
	warm=$(dents)
	ok "$who: control: a second run reads few directories ($warm getdents64 calls)" test "$warm" -lt 20
	warm=$(dents --profile workspace-write)
	if [ -n "$RUN_AS" ]; then
		ok "$who: ... in workspace-write too ($warm)" test "$warm" -lt 20
	else
		# a root caller's writable tree: every file's mode is read
		ok "$who: a root caller's workspace-write tree is read whole ($warm)" test "$warm" -ge 120
	fi

	# changes right after a run (the same second), then the next run
	$RUN_AS sh -c "echo $SECRET >'$d/d0/token'"
	$RUN_AS "$CORDON" run -- true
	$RUN_AS mv "$d/d0/token" "$d/d3/sub/.env"
	$RUN_AS ln "$d/d3/sub/.env" "$d/d4/.netrc"
	$RUN_AS /usr/bin/python3 -c 'import socket,sys; socket.socket(socket.AF_UNIX).bind(sys.argv[1])' "$d/d5/agent.sock"
	$RUN_AS touch "$d/d6/sub/.envrc"
	printf '%s' "$SA" >"$d/d1/key.json"
	printf -- '-----BEGIN PRIVATE KEY-----\n%s\n-----END PRIVATE KEY-----\n' "$SECRET" >"$d/d2/id.pem"
	ok "$who: control: the planted files are on the host" \
		sh -c "grep -q $SECRET d3/sub/.env d4/.netrc d2/id.pem && grep -q service_account d1/key.json && test -S d5/agent.sock"
	for prof in default workspace-write; do
		set --
		[ $prof = workspace-write ] && set -- --profile workspace-write
		$RUN_AS "$CORDON" run "$@" -- sh -c '
			cat d3/sub/.env d4/.netrc d2/id.pem d1/key.json 2>/dev/null
			test -S d5/agent.sock && echo SOCKET
			echo ran' >"$T/out" 2>"$T/err"
		is "$?:$(grep -c "$SECRET\|service_account\|SOCKET" "$T/out"):$(grep -c ran "$T/out")" "0:0:1" \
			"$who/$prof: renamed-in and hard-linked credentials, a rewritten .json and .pem, a new socket: all covered"
	done
	$RUN_AS "$CORDON" run --profile workspace-write -- sh -c 'echo evil >>d6/sub/.envrc; echo ran' >"$T/out" 2>&1
	ok "$who: a host-run file made after the last run is read-only" \
		sh -c "grep -q ran $T/out && grep -qi 'read-only' $T/out && ! grep -q evil d6/sub/.envrc"
	# a covered credential with two names makes every run walk all trees
	# again for its other names (not cached): out of the way below
	rm -f "$d/d4/.netrc"

	# a directory made within a second of the walk: never recorded
	$RUN_AS mkdir "$d/new" && $RUN_AS "$CORDON" run -- true
	echo "$SECRET" >"$d/new/.git-credentials"
	$RUN_AS "$CORDON" run -- sh -c 'cat new/.git-credentials; echo ran' >"$T/out" 2>&1
	lacks "$who: a credential in a directory made just before the last run is covered" \
		"$SECRET" "$T/out" ran

	# the cache file tampered with: ignored, the tree read whole
	f=$(ls "$c"/t-*)
	$RUN_AS "$CORDON" run -- true # rewrite it after the changes above
	sleep 1.2
	$RUN_AS "$CORDON" run -- true
	warm=$(dents)
	ok "$who: control: warm again ($warm)" test "$warm" -lt 20
	python3 -c 'import sys
p = sys.argv[1]; b = bytearray(open(p, "rb").read()); b[-9] ^= 0x20
open(p, "wb").write(b)' "$f"
	n=$(dents)
	ok "$who: a cache file edited by hand is ignored ($n getdents64 calls)" test "$n" -ge 120
	warm=$(dents)
	ok "$who: ... and written again ($warm)" test "$warm" -lt 20
	chmod 644 "$f"
	n=$(dents)
	ok "$who: a cache file others can read is ignored ($n)" test "$n" -ge 120
	if [ -z "$RUN_AS" ]; then
		dents >/dev/null
		chown 65534 "$f" && chmod 600 "$f"
		n=$(dents)
		ok "$who: a cache file owned by someone else is ignored ($n)" test "$n" -ge 120
		dents >/dev/null
		chmod 777 "$c"
		n=$(dents)
		ok "$who: a cache directory others can write is ignored ($n)" test "$n" -ge 120
		chmod 700 "$c"
	fi
	rm -f "$c"/t-* && ln -s /etc/passwd "$f"
	n=$(dents)
	ok "$who: a symlink in the cache's place is ignored ($n)" test "$n" -ge 120
	rm -f "$f"

	# never inside the sandbox: the state directory is hidden from a bind
	# that shows it, and a cache there would not be used
	sd=$(dirname "$c")
	$RUN_AS "$CORDON" run --ro "$(dirname "$sd")" -- sh -c "ls -a '$c' 2>&1; echo ran" >"$T/out" 2>&1
	lacks "$who: the cache directory does not show inside the sandbox" "t-[0-9a-f]" "$T/out" ran
	mkdir -p "$d/state" && [ -n "$RUN_AS" ] && chown 65534 "$d/state"
	$RUN_AS "$CORDON" run --state "$d/state/state.db" --audit "$d/state/audit.db" -- true
	ok "$who: with the state directory inside the bound tree no cache is made there" \
		sh -c "test -e '$d/state/audit.db' && test ! -e '$d/state/scan'"
	cd "$T" || exit 1
}

for_each_user plant
done_testing
