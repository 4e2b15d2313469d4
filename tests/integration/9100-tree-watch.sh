#!/bin/sh
# The tree watcher (tree-watch.h): with the warm path on, the user's
# service holds inotify watches on the trees the runs walked, and the walk
# (and the child, after its mounts) looks only at the directories it says
# changed.  It may make the checks cheaper, never weaker: a change between
# two runs must be found by whatever route it took — a credential made in
# a directory deep in the tree, a directory made or moved in with one
# inside, a directory renamed within the tree, a socket bound — and when
# the watcher cannot vouch (killed and started again, its queue
# overflowed, a cache file whose generation was edited) every directory is
# looked at again.  Controls: the watcher is used at all (far fewer statx
# calls than with CORDON_WATCH=0), and every planted thing is on the host.
# Then the scan-cache, cover-race and tree-race tests again with the
# watcher on.  As root and as nobody.
. "${CORDON_SRC:-.}/tests/lib.sh"

command -v strace >/dev/null || { skip "strace missing"; done_testing; exit; }
SECRET=cordon-watch-secret-5521
mkdir -p "$S/.svc" && chmod 1777 "$S/.svc"
export CORDON_WARM=1 CORDON_SERVICE_DIR="$S/.svc" CORDON_SERVICE_IDLE=60

mktree() {
	i=0
	while [ $i -lt 60 ]; do
		mkdir -p "$1/d$i/sub"
		echo x >"$1/d$i/sub/f.txt"
		i=$((i + 1))
	done
	[ -n "$RUN_AS" ] && chown -R 65534:65534 "$1"
	sleep 2 # older than the cache's guard: recordable
}

# statx calls of cordon and its sandbox's setup for one run (-f: the
# child's check after its mounts too; the service runs already)
statx_calls() {
	: >"$T/st" && chmod 666 "$T/st"
	$RUN_AS env "$@" strace -f -qq -e trace=statx -o "$T/st" "$CORDON" run -- true >/dev/null 2>&1
	grep -c statx "$T/st"
}

# the run cannot read what was planted: prints nothing of it, but ran
unseen() {
	desc=$1
	shift
	$RUN_AS "$CORDON" run "$@" -- sh -c 'cat d*/*/.git-credentials d*/*/.netrc d*/*/*/.netrc \
		d*/*/*/.npmrc 2>/dev/null; for s in d*/*/*.sock; do test -S "$s" && echo SOCKET; done
		echo ran' >"$T/out" 2>&1
	lacks "$desc" "$SECRET|SOCKET" "$T/out" ran
}

svc_pid() {
	cat "$S/.svc/$($RUN_AS id -u)/service.lock" 2>/dev/null
}

watch_case() {
	who=$1 d=$T/$who
	# moved in between the walk and the mounts below: born well before
	mkdir -p "$T/mv-$who/y" && echo "$SECRET" >"$T/mv-$who/y/.netrc"
	chmod -R a+rwX "$T/mv-$who"
	mktree "$d"
	cd "$d" || exit 1
	for i in 1 2 3; do $RUN_AS "$CORDON" run -- true; done
	ok "$who: control: the service listens for the watcher" \
		test -S "$S/.svc/$($RUN_AS id -u)/watch.sock"
	on=$(statx_calls)
	off=$(statx_calls CORDON_WATCH=0)
	ok "$who: the watcher is used: $on statx calls, $off without it" \
		test "$on" -lt $((off - 150))

	# changes between runs, by every route; each found by the next run
	$RUN_AS sh -c "echo $SECRET >d7/sub/.git-credentials"
	unseen "$who: a credential made in a watched directory is covered"
	$RUN_AS sh -c "mkdir d8/new && echo $SECRET >d8/new/.netrc"
	unseen "$who: ... in a directory made since"
	mkdir -p "$T/out-$who/x" && [ -n "$RUN_AS" ] && chown -R 65534 "$T/out-$who"
	$RUN_AS sh -c "echo $SECRET >'$T/out-$who/x/.netrc' && mv '$T/out-$who/x' d9/x"
	unseen "$who: ... in a directory moved in from outside the tree"
	$RUN_AS sh -c "mv d10 d11/moved && echo $SECRET >d11/moved/sub/.npmrc"
	unseen "$who: ... in a directory renamed within the tree" --profile workspace-write
	$RUN_AS /usr/bin/python3 -c 'import socket,sys; socket.socket(socket.AF_UNIX).bind(sys.argv[1])' \
		"$d/d12/sub/agent.sock"
	unseen "$who: a socket bound in a watched directory is covered"
	ok "$who: control: every planted thing is on the host" sh -c \
		"for f in d7/sub/.git-credentials d8/new/.netrc d9/x/.netrc d11/moved/sub/.npmrc; do
			grep -q $SECRET \$f || exit 1; done; test -S d12/sub/agent.sock"
	for i in 1 2; do $RUN_AS "$CORDON" run -- true; done
	on=$(statx_calls)
	ok "$who: the watcher is used again after a rename within the tree ($on)" \
		test "$on" -lt $((off - 150))

	# a directory moved in after the walk, before the child's mounts
	# (move-at-clone.so renames it just before the clone): only the
	# child's check after its mounts sees it, from the watcher's answer
	chmod 777 d16
	rm -f "$T/mv-$who/log"
	$RUN_AS env LD_PRELOAD="$CORDON_BUILD/tests/preload/move-at-clone.so" \
		MOVE_FROM="$T/mv-$who/y" MOVE_TO="$d/d16/y" MOVE_LOG="$T/mv-$who/log" \
		"$CORDON" run -- sh -c 'cat d16/y/.netrc; echo ran' >"$T/out" 2>&1
	rc=$?
	ok "$who: control: the directory was moved in during the run's start" grep -qx moved "$T/mv-$who/log"
	is "$rc:$(grep -c "$SECRET" "$T/out")" "125:0" \
		"$who: a directory moved in between the walk and the mounts refuses the run"
	grep -q "changed between the tree walk and the mounts" "$T/out" ||
		diag "$who: the refusal was: $(head -c 300 "$T/out")"

	# the check after a workspace-write run asks the watcher too: what
	# the sandbox made deep in the tree is still found
	for i in 1 2; do $RUN_AS "$CORDON" run --profile workspace-write -- true; done
	: >"$T/rec" && chmod 666 "$T/rec"
	$RUN_AS "$CORDON" run --profile workspace-write --json-fd 3 -- sh -c \
		'mkdir d18/sub/.git && echo "ref: refs/heads/main" >d18/sub/.git/HEAD' 3>"$T/rec" >/dev/null 2>&1
	pp=$(planted_paths)
	ok "$who: a .git made deep in the tree during the run is reported ($pp)" \
		sh -c "echo '$pp' | grep -q 'd18/sub/.git'"

	# the watcher killed: another instance, which cannot vouch for the
	# first one's generations
	kill -9 "$(svc_pid)"
	$RUN_AS sh -c "echo $SECRET >d13/sub/.git-credentials"
	unseen "$who: after the service was killed, a credential made meanwhile is covered"

	# the cache file's generation edited (a later one than the watcher's)
	for i in 1 2; do $RUN_AS "$CORDON" run -- true; done
	$RUN_AS sh -c "echo $SECRET >d14/sub/.git-credentials"
	if [ -n "$RUN_AS" ]; then
		c=$(ls "$S"/.state-nobody/scan/t-* | head -1)
	else
		c=$(ls "$(dirname "$CORDON_STATE")"/scan/t-* | head -1)
	fi
	python3 -c 'import sys, struct
p = sys.argv[1]; b = bytearray(open(p, "rb").read())
b[48:56] = struct.pack("<Q", 1 << 40)
open(p, "wb").write(b)' "$c"
	unseen "$who: a cache file claiming a generation the watcher never gave is not trusted"

	# a filesystem mounted below the tree shows other directories at its
	# paths than the watched ones: that tree is walked directory by directory
	if [ -z "$RUN_AS" ]; then
		for i in 1 2; do "$CORDON" run -- true; done
		mount -t tmpfs -o size=1m cordon-watch "$d/d17/sub"
		echo "$SECRET" >"$d/d17/sub/.git-credentials"
		unseen "$who: a credential on a filesystem mounted below the tree is covered"
		umount "$d/d17/sub"
	fi

	# the queue overflowed while the watcher slept: every event is lost
	if [ -z "$RUN_AS" ]; then
		q=$(cat /proc/sys/fs/inotify/max_queued_events)
		kill -9 "$(svc_pid)"
		echo 16 >/proc/sys/fs/inotify/max_queued_events
		for i in 1 2 3; do "$CORDON" run -- true; done
		echo "$q" >/proc/sys/fs/inotify/max_queued_events
		p=$(svc_pid)
		kill -STOP "$p"
		i=20
		while [ $i -lt 60 ]; do touch "d$i/sub/g.txt" "d$i/h.txt"; i=$((i + 1)); done
		echo "$SECRET" >d15/sub/.git-credentials
		kill -CONT "$p"
		unseen "$who: after the watcher's queue overflowed, a credential made meanwhile is covered"
		is "$(cat /proc/sys/fs/inotify/max_queued_events)" "$q" "control: the queue size is put back"
	fi
	cd "$T" || exit 1
}

for_each_user watch_case

# Session 12's review of the watcher (W1-W3): directories it never
# watched, which it must not vouch for.  W1: two trees overlapping (a run
# in p, then one in p/sub): a directory renamed in one and one made there
# left the other "whole" with the new directory unwatched.  W2 (nobody):
# a directory unreadable during the watcher's pass, made readable after.
# W3 (root): a run in another mount namespace than the service's, with a
# filesystem mounted below the tree there.  Each time the host then puts
# a credential where the walk had a record: the next run covers it.
gaps() {
	who=$1 g=$T/gap-$who
	mkdir -p "$g/p/sub/a" "$g/p/sub/x1" "$g/q/X/deep" "$g/m/a/deep"
	[ -n "$RUN_AS" ] && chown -R 65534:65534 "$g"
	sleep 2
	(cd "$g/p" && $RUN_AS "$CORDON" run -- true)
	(cd "$g/p/sub" && $RUN_AS "$CORDON" run --profile workspace-write -- sh -c 'mv x1 x2; mkdir new')
	sleep 1.2
	(cd "$g/p/sub" && $RUN_AS "$CORDON" run -- true && $RUN_AS "$CORDON" run -- true)
	$RUN_AS sh -c "echo $SECRET >'$g/p/sub/new/.netrc'"
	(cd "$g/p/sub" && $RUN_AS "$CORDON" run -- sh -c 'cat new/.netrc; echo ran') >"$T/out" 2>&1
	lacks "$who: W1: overlapping trees: a directory made after a rename in one is not vouched for" \
		"$SECRET" "$T/out" ran
	if [ -n "$RUN_AS" ]; then
		$RUN_AS chmod 0311 "$g/q/X"
		(cd "$g/q" && $RUN_AS "$CORDON" run -- true) >/dev/null 2>&1
		$RUN_AS chmod 0755 "$g/q/X"
		(cd "$g/q" && $RUN_AS "$CORDON" run -- true && $RUN_AS "$CORDON" run -- true)
		$RUN_AS sh -c "echo $SECRET >'$g/q/X/deep/.netrc'"
		(cd "$g/q" && $RUN_AS "$CORDON" run -- sh -c 'cat X/deep/.netrc; echo ran') >"$T/out" 2>&1
		lacks "$who: W2: below a directory the watcher could not read, nothing is vouched for" \
			"$SECRET" "$T/out" ran
	else
		echo "$SECRET" >"$g/m/a/deep/.netrc"
		(cd "$g/m" && "$CORDON" run -- true)
		unshare -m --propagation private sh -c "
			mount -t tmpfs -o size=1m cordon-w3 '$g/m/a' && mkdir '$g/m/a/deep' && sleep 2
			cd '$g/m' && '$CORDON' run -- true
			umount '$g/m/a'
			'$CORDON' run -- sh -c 'cat a/deep/.netrc; echo ran'" >"$T/out" 2>&1
		lacks "$who: W3: a run in another mount namespace than the watcher's does not take its word" \
			"$SECRET" "$T/out" ran
		# the second look's X1: a filesystem mounted on the host below the
		# tree between the walk and the supervisor's clone of it (the
		# clone is recursive): no mount of the plan's there, so refused
		mkdir -p "$g/m5/a/deep" && sleep 1.2
		for i in 1 2; do (cd "$g/m5" && "$CORDON" run -- true); done
		rm -f "$T/m5.log"
		(cd "$g/m5" && LD_PRELOAD="$CORDON_BUILD/tests/preload/move-at-clone.so" MOUNT_AT="$g/m5/a" \
			MOVE_LOG="$T/m5.log" "$CORDON" run -- sh -c 'cat a/.netrc; echo ran') >"$T/out" 2>&1
		rc=$?
		umount "$g/m5/a" 2>/dev/null
		ok "$who: X1: control: the tmpfs was mounted during the run's start" grep -qx mounted "$T/m5.log"
		is "$rc:$(grep -c mount-secret "$T/out")" "125:0" \
			"$who: X1: a host mount below the tree after the walk refuses the run"
	fi
}
for_each_user gaps

# Stamp runs (session 15): a subtree the watcher lists no change in is
# stamped for the checks after the mounts and after the run as a run of
# the cache file's records, made into stamps only when the watcher lists
# a change.  A .git made during a workspace-write run deep in such a
# subtree (a tree of plain directories, warm) is still reported, and so
# is a directory moved into one between the walk and the mounts.
runs_case() {
	who=$1 r=$T/runs-$who
	i=0
	while [ $i -lt 30 ]; do
		mkdir -p "$r/d$i/sub/deep" && echo x >"$r/d$i/sub/f.txt"
		i=$((i + 1))
	done
	mkdir -p "$T/runs-mv-$who/y" && echo "$SECRET" >"$T/runs-mv-$who/y/.netrc"
	[ -n "$RUN_AS" ] && chown -R 65534:65534 "$r" "$T/runs-mv-$who"
	# the move is made at the clone, by whichever id the run has then
	chmod -R a+rwX "$T/runs-mv-$who" && chmod 777 "$r/d22/sub/deep"
	sleep 2
	cd "$r" || exit 1
	for i in 1 2 3; do $RUN_AS "$CORDON" run --profile workspace-write -- true; done
	: >"$T/rec" && chmod 666 "$T/rec"
	$RUN_AS "$CORDON" run --profile workspace-write --json-fd 3 -- sh -c \
		'mkdir d21/sub/deep/.git && echo "ref: refs/heads/main" >d21/sub/deep/.git/HEAD' \
		3>"$T/rec" >/dev/null 2>&1
	pp=$(planted_paths)
	ok "$who: runs: a .git made in a subtree stamped as a run is reported ($pp)" \
		sh -c "echo '$pp' | grep -q 'd21/sub/deep/.git'"
	for i in 1 2 3; do $RUN_AS "$CORDON" run -- true; done
	rm -f "$T/runs-mv-$who/log"
	$RUN_AS env LD_PRELOAD="$CORDON_BUILD/tests/preload/move-at-clone.so" \
		MOVE_FROM="$T/runs-mv-$who/y" MOVE_TO="$r/d22/sub/deep/y" MOVE_LOG="$T/runs-mv-$who/log" \
		"$CORDON" run -- sh -c 'cat d22/sub/deep/y/.netrc; echo ran' >"$T/out" 2>&1
	rc=$?
	ok "$who: runs: control: the directory was moved in during the run's start" \
		grep -qx moved "$T/runs-mv-$who/log"
	is "$rc:$(grep -c "$SECRET" "$T/out")" "125:0" \
		"$who: runs: a directory moved into a subtree stamped as a run before the mounts refuses the run"
	# a plain file moved into the top then: the child reads the top again
	# and finds each subdirectory's stamp in the runs (no false refusal)
	for i in 1 2 3; do $RUN_AS "$CORDON" run -- true; done
	echo x >"$T/runs-mv-$who/plain.txt" && chmod 666 "$T/runs-mv-$who/plain.txt"
	chmod 777 "$r" && rm -f "$T/runs-mv-$who/log"
	$RUN_AS env LD_PRELOAD="$CORDON_BUILD/tests/preload/move-at-clone.so" \
		MOVE_FROM="$T/runs-mv-$who/plain.txt" MOVE_TO="$r/plain.txt" MOVE_LOG="$T/runs-mv-$who/log" \
		"$CORDON" run -- sh -c 'cat plain.txt; echo ran' >"$T/out" 2>&1
	rc=$?
	ok "$who: runs: control: the file was moved into the top during the run's start" \
		grep -qx moved "$T/runs-mv-$who/log"
	is "$rc:$(tr '\n' ' ' <"$T/out")" "0:x ran " \
		"$who: runs: a file moved into the top before the mounts: the top read again, the runs' stamps found"
	# the top's ctime moved with no event (chattr +A: an ext4 flag); the
	# child reads the top again all the same (no false refusal)
	for i in 1 2 3; do $RUN_AS "$CORDON" run -- true; done
	rm -f "$T/runs-mv-$who/log"
	$RUN_AS env ATTR_AT="$r" MOVE_LOG="$T/runs-mv-$who/log" \
		LD_PRELOAD="$CORDON_BUILD/tests/preload/move-at-clone.so" \
		"$CORDON" run -- sh -c 'echo ran' >"$T/out" 2>&1
	rc=$?
	if grep -qx flagged "$T/runs-mv-$who/log"; then
		is "$rc:$(tr '\n' ' ' <"$T/out")" "0:ran " \
			"$who: runs: the top's ctime moved with no event before the mounts: no false refusal"
	else
		skip "no chattr on this filesystem"
	fi
	# a workspace-write run right after a change at the top (within the
	# stamps' 1 s guard): the check after the run reads the top again
	# and finds its subdirectories' stamps in the runs, not reading each
	# of them whole (a few getdents64, not one per directory)
	for i in 1 2 3; do $RUN_AS "$CORDON" run --profile workspace-write -- true; done
	sleep 1.2
	$RUN_AS touch "$r/fresh.txt"
	: >"$T/st" && chmod 666 "$T/st"
	$RUN_AS strace -qq -e trace=getdents64 -o "$T/st" "$CORDON" run --profile workspace-write -- true \
		>/dev/null 2>&1
	n=$(grep -c getdents64 "$T/st")
	ok "$who: runs: the check after the run reads the top again, not every directory ($n getdents64)" \
		test "$n" -lt 40
	cd "$T" || exit 1
}

for_each_user runs_case

# Files' own state (root only): a root caller's workspace-write keeps the
# tree's set-id and capable files read-only (their content rewritten
# through a shared mapping keeps the bits: 9029), which reads every
# file's mode unless the watcher vouches that none changed.  A chmod or
# setcap through another hard link, outside the tree, moves no
# directory's ctime and reaches none of the tree's inotify watches: the
# watcher's fanotify mark on the filesystem sees it.  Without the
# watcher the records of such a tree are never trusted on their ctimes
# (a chmod through the tree's own name moves none either).  Controls:
# the file is writable from the sandbox before, the watcher is used for
# such a tree (few statx calls), and the bits are on the host.
attrs_case() {
	a=$T/attrs
	mktree "$a"
	i=0
	while [ $i -lt 60 ]; do
		for f in 1 2 3 4; do echo x >"$a/d$i/sub/g$f.txt"; done
		i=$((i + 1))
	done
	sleep 1.2
	ln "$a/d3/sub/f.txt" "$T/attrs-other"
	cd "$a" || exit 1
	# append to FILE (d3's by default) from the sandbox: "wrote", or
	# the shell's error (the denial: a read-only mount) in $T/wr
	wr() {
		env "$@" "$CORDON" run --profile workspace-write -- \
			sh -c 'echo y >>"$1" && echo wrote' sh "${F:-d3/sub/f.txt}" >"$T/wr" 2>&1
		cat "$T/wr"
	}
	ww_statx() {
		: >"$T/st"
		env "$@" strace -f -qq -e trace=statx -o "$T/st" "$CORDON" run \
			--profile workspace-write -- true >/dev/null 2>&1
		grep -c statx "$T/st"
	}
	for i in 1 2 3; do "$CORDON" run --profile workspace-write -- true; done
	is "$(wr)" wrote "attrs: control: the file is writable from the sandbox"
	wr >/dev/null
	on=$(ww_statx)
	off=$(ww_statx CORDON_WATCH=0)
	ok "attrs: a root caller's workspace-write tree is replayed ($on statx calls, $off without the watcher)" \
		test "$on" -lt $((off - 200))
	wr >/dev/null
	chmod u+s "$T/attrs-other"
	ok "attrs: control: the file is setuid on the host" test -u "$a/d3/sub/f.txt"
	wr >/dev/null
	lacks "attrs: a file made setuid through another name is kept read-only" \
		wrote "$T/wr" "Read-only file system"
	wr >/dev/null
	lacks "attrs: ... in the next run too (its record lists it)" wrote "$T/wr" "Read-only file system"
	chmod u-s "$T/attrs-other"
	is "$(wr)" wrote "attrs: control: with the bit gone it is writable again"
	wr >/dev/null
	on=$(ww_statx)
	ok "attrs: after a set-id file came and went, the tree is replayed again ($on statx calls)" \
		test "$on" -lt $((off - 200))
	if command -v setcap >/dev/null; then
		wr >/dev/null
		setcap cap_net_raw+ep "$T/attrs-other"
		wr >/dev/null
		lacks "attrs: a file given capabilities through another name is kept read-only" \
			wrote "$T/wr" "Read-only file system"
		setcap -r "$T/attrs-other"
	fi
	# the fanotify queue (16384 events) filled while the watcher slept,
	# then the chmod: its event is lost, the overflow is not
	mkdir -p "$T/flood" && (cd "$T/flood" && seq 1 16500 | xargs touch)
	for i in 1 2; do F=d2/sub/f.txt wr >/dev/null; done
	ln "$a/d2/sub/f.txt" "$T/attrs-other2"
	for i in 1 2; do F=d2/sub/f.txt wr >/dev/null; done
	is "$(cat "$T/wr")" wrote "attrs: control: d2's file is writable from the sandbox"
	p=$(svc_pid)
	kill -STOP "$p"
	(cd "$T/flood" && seq 1 16500 | xargs touch -h -d @1)
	chmod u+s "$T/attrs-other2"
	kill -CONT "$p"
	F=d2/sub/f.txt wr >/dev/null
	lacks "attrs: after the fanotify queue overflowed, a file made setuid meanwhile is kept read-only" \
		wrote "$T/wr" "Read-only file system"
	chmod u-s "$T/attrs-other2"
	rm -rf "$T/flood"
	# through its own name: the watcher lists its directory (whose ctime
	# did not move: read again all the same)
	for i in 1 2; do F=d6/sub/f.txt wr >/dev/null; done
	chmod u+s "$a/d6/sub/f.txt"
	F=d6/sub/f.txt wr >/dev/null
	lacks "attrs: a file made setuid through its own name is kept read-only" \
		wrote "$T/wr" "Read-only file system"
	chmod u-s "$a/d6/sub/f.txt"
	# no watcher: a record, however old its directory's ctime, does not
	# vouch for its files' modes
	for i in 1 2; do F=d5/sub/f.txt wr CORDON_WATCH=0 >/dev/null; done
	is "$(cat "$T/wr")" wrote "attrs: control: without the watcher, d5's file is writable"
	chmod g+s "$a/d5/sub/f.txt"
	F=d5/sub/f.txt wr CORDON_WATCH=0 >/dev/null
	lacks "attrs: without the watcher, a file made setgid through its own name is kept read-only" \
		wrote "$T/wr" "Read-only file system"
	chmod g-s "$a/d5/sub/f.txt"
	cd "$T" || exit 1
}
# Session 13's review (F1): two filesystems with one fsid (an image
# copied: an ext4 fsid is its UUID) and the same inodes.  A file made
# setuid on the second, looked at through a tree on the first, was a
# file that grants nothing there, and the second tree went on vouching.
fsid_case() {
	f=$T/fsid
	mkdir -p "$f/mA" "$f/mB"
	if ! command -v mkfs.ext4 >/dev/null || ! truncate -s 32M "$f/a.img" ||
		! mkfs.ext4 -qF "$f/a.img" >/dev/null 2>&1; then
		skip "fsid: mkfs.ext4 missing or failed"
		return
	fi
	cp "$f/a.img" "$f/b.img"
	if ! mount -o loop "$f/a.img" "$f/mA" 2>/dev/null; then
		skip "fsid: no loop mounts here"
		return
	fi
	if ! mount -o loop "$f/b.img" "$f/mB" 2>/dev/null; then
		umount "$f/mA"
		skip "fsid: no second loop mount here"
		return
	fi
	is "$(stat -f -c %i "$f/mA")" "$(stat -f -c %i "$f/mB")" "fsid: control: the two filesystems share an fsid"
	mktree "$f/mA/t"
	mktree "$f/mB/t"
	(cd "$f/mA/t" && for i in 1 2; do "$CORDON" run --profile workspace-write -- true; done)
	ln "$f/mB/t/d8/sub/f.txt" "$f/mB/other8"
	cd "$f/mB/t" || exit 1
	for i in 1 2; do F=d8/sub/f.txt wr >/dev/null; done
	is "$(F=d8/sub/f.txt wr)" wrote "fsid: control: the file is writable from the sandbox"
	chmod u+s "$f/mB/other8"
	F=d8/sub/f.txt wr >/dev/null
	lacks "fsid: a file made setuid on the second of two filesystems sharing an fsid is kept read-only" \
		wrote "$T/wr" "Read-only file system"
	cd "$T" || exit 1
	umount "$f/mA" "$f/mB"
}
if [ "$(id -u)" -eq 0 ]; then
	RUN_AS= attrs_case
	RUN_AS= fsid_case
fi

# The client's side of the trust: a watcher that answers for another
# instance, with a generation older than the one asked about, with ids out
# of order, or cut short is not believed (every directory is looked at,
# as without one).  A stand-in watcher (it holds the service's lock, so
# the real service steps aside) answers as told; control: answering right,
# it is believed.
FAKE='import fcntl, os, socket, struct, sys
d, mode = sys.argv[1], sys.argv[2]
lock = open(d + "/service.lock", "a+")
fcntl.flock(lock, fcntl.LOCK_EX)
p = d + "/watch.sock"
if os.path.exists(p):
    os.unlink(p)
s = socket.socket(socket.AF_UNIX)
s.bind(p)
s.listen(8)
open(d + "/ready", "w").close()
M, I = 0x32574443, 0x1234567812345678
NS = os.stat("/proc/self/ns/mnt").st_ino
while True:
    c, _ = s.accept()
    while True:
        h = c.recv(48, socket.MSG_WAITALL)
        if len(h) < 48:
            break
        _, op, inst, since, dev, ino, nt, pl = struct.unpack("=IIQQQQII", h)
        c.recv(pl if op == 1 else 4 * nt, socket.MSG_WAITALL)
        tree = 1 if op == 1 else 0
        ids = b""
        if since == 0:
            rep = (M, 1, I, 5, tree, 0)
        elif mode == "good":
            rep = (M, 0, I, since + 1, tree, 0)
        elif mode == "other":
            rep = (M, 0, I + 1, since + 1, tree, 0)
        elif mode == "older":
            rep = (M, 0, I, since - 1, tree, 0)
        elif mode == "stall":
            import time
            time.sleep(30)
            break
        elif mode == "unsorted":
            rep = (M, 0, I, since + 1, tree, 2)
            ids = struct.pack("=QQQQ", 9, 9, 1, 1)
        else:
            c.sendall(b"CDW2")
            break
        c.sendall(struct.pack("=IIQQIIQII", *rep, NS, 0, 0) + ids)
    c.close()'
fake_case() {
	fd=$T/fake
	mkdir -p "$fd/tree" "$fd/svc/0" && chmod 700 "$fd/svc/0"
	mktree "$fd/tree"
	cd "$fd/tree" || exit 1
	for mode in good other older unsorted short stall; do
		rm -f "$fd/svc/0/ready"
		python3 -c "$FAKE" "$fd/svc/0" $mode &
		fp=$!
		i=0
		while [ ! -e "$fd/svc/0/ready" ] && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
		[ $mode = good ] && CORDON_SERVICE_DIR=$fd/svc "$CORDON" run -- true
		n=$(statx_calls CORDON_SERVICE_DIR="$fd/svc")
		if [ $mode = good ]; then
			off=$(statx_calls CORDON_SERVICE_DIR="$fd/svc" CORDON_WATCH=0)
			good=$n
			ok "control: a watcher answering right is believed ($n statx calls, $off without)" \
				test "$n" -lt $((off - 150))
			# it lists no change but does not vouch for files' own
			# state (attrs 0): a root caller's set-id file is still found
			for i in 1 2; do
				CORDON_SERVICE_DIR=$fd/svc "$CORDON" run --profile workspace-write -- true
			done
			chmod u+s d4/sub/f.txt
			CORDON_SERVICE_DIR=$fd/svc "$CORDON" run --profile workspace-write -- \
				sh -c 'echo y >>d4/sub/f.txt && echo wrote' >"$T/wr" 2>&1
			lacks "a watcher not vouching for files' own state: a setuid file is kept read-only" \
				wrote "$T/wr" "Read-only file system"
			chmod u-s d4/sub/f.txt
		else
			# every directory looked at: as many calls as without a watcher
			ok "a watcher answering $mode is not believed ($n statx calls, $good when believed)" \
				test "$n" -gt $((good + 150))
		fi
		kill "$fp"
		wait "$fp" 2>/dev/null
	done
	cd "$T" || exit 1
}
fake_case

# The checks of the walk's cache, of the cover race and of the tree's top
# exchanged, again with the watcher on (their own services and trees).
for t in 9054 9060 9063; do
	f=$(ls "$CORDON_SRC"/tests/integration/$t-*.sh)
	CORDON_TEST_WARM=1 sh "$f" >"$T/sub.tap" 2>&1
	rc=$?
	ok "$(basename "$f") passes with the watcher on (exit $rc, $(grep -c '^ok' "$T/sub.tap") ok)" \
		sh -c "test $rc -eq 0 && ! grep -q '^not ok' '$T/sub.tap'"
	# what a failing one printed before and after it (its runs' errors, 9060's tallies)
	grep -B12 -A4 '^not ok' "$T/sub.tap" | while IFS= read -r l; do diag "$t: $l"; done
done
done_testing
