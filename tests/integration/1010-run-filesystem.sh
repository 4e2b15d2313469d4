#!/bin/sh
# cordon run: read-only everything but scratch; nothing of the host's
# secrets, homes, /run, /tmp or /sys is visible.
. "${CORDON_SRC:-.}/tests/lib.sh"

mkdir -p "$T/proj" && echo data >"$T/proj/file" && chmod -R a+rX "$T/proj"
secret=$(mktemp /tmp/cordon-host-secret.XXXXXX)

fs() {
	who=$1
	cd "$T/proj" || exit 1
	for p in /usr/cordon-x /etc/cordon-x /cordon-x "$T/proj/cordon-x" /proc/sys/kernel/hostname /dev/cordon-x; do
		$RUN_AS "$CORDON" run -- sh -c "echo x > $p" 2>"$T/err"
		rc=$?
		ok "$who: write to $p fails (exit $rc) with EROFS or EACCES" \
			grep -qiE 'read-only file system|permission denied' "$T/err"
	done
	nok_if_ran "$who: nothing was written into the project" "$T/err" 'Read-only file system|Permission denied|cannot create' \
		test -e "$T/proj/cordon-x"
	ok "$who: scratch is writable" $RUN_AS "$CORDON" run -- sh -c 'echo x > /tmp/f && cat /tmp/f && echo y > "$HOME/g" && echo z > "$TMPDIR/h"'
	is "$($RUN_AS "$CORDON" run -- cat file)" data "$who: the working directory is readable"
	is "$($RUN_AS "$CORDON" run -- pwd)" "$T/proj" "$who: the working directory is the current one"
	is "$($RUN_AS "$CORDON" run -- sh -c 'echo $HOME $TMPDIR')" "/tmp /tmp" "$who: HOME and TMPDIR are the scratch"
	for p in /etc/shadow /etc/gshadow /etc/ssh /etc/ssl/private /home /root /run /var/run /sys /var "$secret" /dev/tty /dev/console /dev/ptmx /dev/sda /dev/vda; do
		absent_in "$who: $p is absent" "$p" $RUN_AS "$CORDON" run --
	done
	ok "$who: /etc/passwd names the sandbox user" $RUN_AS "$CORDON" run -- grep -q '^agent:x:1000:' /etc/passwd
	is "$($RUN_AS "$CORDON" run -- grep -c "^$(id -un 0):x:0:0:$(getent passwd 0 | cut -d: -f5):$(getent passwd 0 | cut -d: -f6)" /etc/passwd)" 0 \
		"$who: /etc/passwd is not the host's"
	ok "$who: /dev/null, zero, urandom work" $RUN_AS "$CORDON" run -- sh -c 'echo x >/dev/null && head -c 4 /dev/zero | wc -c | grep -q 4 && head -c 4 /dev/urandom | wc -c | grep -q 4'
	# Scratch is fresh per run and gone afterwards.
	$RUN_AS "$CORDON" run -- sh -c 'echo left > /tmp/leftover && echo wrote' >"$T/left-$who" 2>&1
	absent_in "$who: scratch does not survive the run" /tmp/leftover $RUN_AS "$CORDON" run --
	nok_if_ran "$who: scratch never lands in the host /tmp" "$T/left-$who" '^wrote$' test -e /tmp/leftover
	# Scratch is size-capped.
	$RUN_AS "$CORDON" run --scratch-size 1M -- sh -c 'head -c 2000000 /dev/zero > /tmp/big' 2>"$T/err"
	ok "$who: a full scratch gives ENOSPC" grep -qi 'no space left' "$T/err"
	# --ro and --rw binds.
	mkdir -p "$T/rw-$who" && chmod 0777 "$T/rw-$who"
	ok "$who: --rw makes a path writable" $RUN_AS "$CORDON" run --rw "$T/rw-$who" -- sh -c "echo w > $T/rw-$who/out"
	ok "$who: the write reached the host" grep -q w "$T/rw-$who/out"
	refused "$who: --ro stays read-only (EROFS)" 'cannot create /data/out2: Read-only file system' \
		$RUN_AS "$CORDON" run --ro "$T/rw-$who:/data" -- sh -c 'echo w > /data/out2'
	is "$($RUN_AS "$CORDON" run --ro "$T/rw-$who:/data" -- cat /data/out)" w "$who: --ro PATH:DEST binds at DEST"
	# --scratch DIR keeps the scratch for copy-out.
	mkdir -p "$T/scr-$who" && chmod 0777 "$T/scr-$who"
	$RUN_AS "$CORDON" run --scratch "$T/scr-$who" -- sh -c 'echo kept > /tmp/result'
	ok "$who: --scratch DIR keeps what the run wrote" grep -q kept "$T/scr-$who/result"
	cd "$T" || exit 1
}

for_each_user fs

# Working directories that would expose the host are refused.
for d in / /etc /tmp /home; do
	(cd "$d" && "$CORDON" run -- true) 2>"$T/err"
	is "$?:$(grep -c "working directory '$d' would expose" "$T/err")" 125:1 "running from $d is refused, saying why"
done
mkdir -p "$T/fakehome/.ssh"
(cd "$T/fakehome" && "$CORDON" run -- true) 2>"$T/err"
is $? 125 "running from a directory holding .ssh is refused"
ok "the refusal says why" grep -q 'home directory' "$T/err"
rm -f "$secret"
done_testing
