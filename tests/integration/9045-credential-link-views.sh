#!/bin/sh
# A credential reaches the sandbox by more than one name: the target of a
# credential-named symlink is seen through every bind whose source holds
# it (the working directory and a --rw bind of one of its directories),
# a file can have other names (hard links), and a linked credential
# directory (.aws -> cloud/, .docker -> dock/) holds files with other
# names and symlinks of its own.  Each must read empty under every name.
# Before, the target was covered at one sandbox path (the bind with the
# longest source), hard links of a symlink's target and of the files of a
# linked directory were not looked for, and a symlink inside a linked
# .docker read through.  Positive controls: a plain file beside each
# secret reads, through the same binds.  As root and as nobody.
: "${CORDON_TEST_TIMEOUT:=300}"
export CORDON_TEST_TIMEOUT
. "${CORDON_SRC:-.}/tests/lib.sh"

views() {
	who=$1
	d=$T/views-$who
	w=$d/work
	mkdir -p "$w/sub/.aws" "$w/out" "$w/notes" "$w/other" "$w/cloud" "$w/misc" "$w/dock" \
		"$w/secret" "$w/ssocache" "$d/elsewhere"
	echo SECRET-out >"$w/out/tok"
	echo PUBLIC-out >"$w/out/plain"
	echo SECRET-notes >"$w/notes/token"
	echo PUBLIC-notes >"$w/notes/plain"
	ln "$w/notes/token" "$w/other/copy.txt"          # the target's other name
	echo SECRET-aws >"$w/cloud/credentials"
	echo PUBLIC-misc >"$w/misc/plain"
	ln "$w/cloud/credentials" "$w/misc/creds-copy"   # a linked .aws's file, other name
	echo SECRET-docker >"$w/secret/dockercfg"
	echo PUBLIC-secret >"$w/secret/plain"
	ln -s ../secret/dockercfg "$w/dock/config.json"  # a symlink in a linked .docker
	echo PUBLIC-dock >"$w/dock/other.txt"
	echo SECRET-sso >"$w/ssocache/token.json"
	ln -s ../../ssocache "$w/sub/.aws/sso"           # a directory link inside a real .aws
	echo SECRET-far >"$d/elsewhere/far.txt"
	ln -s "$d/elsewhere" "$w/sub/.ssh"               # a .ssh link out of the trees ...
	ln "$d/elsewhere/far.txt" "$w/misc/far-copy"     # ... whose file has a name inside
	ln -s out/tok "$w/.netrc"
	ln -s ../notes/token "$w/sub/.git-credentials"
	mkdir -p "$w/sub2"
	ln -s ../cloud "$w/sub2/.aws"
	ln -s ../dock "$w/sub/.docker"
	[ -n "$RUN_AS" ] && chown -R 65534:65534 "$d"
	cd "$w" || exit 1
	out=$($RUN_AS "$CORDON" run --rw "$w/out:/out" --json-fd 3 -- sh -c '
		for f in .netrc out/tok /out/tok sub/.git-credentials notes/token other/copy.txt \
		         sub2/.aws/credentials cloud/credentials misc/creds-copy \
		         sub/.docker/config.json dock/config.json secret/dockercfg \
		         ssocache/token.json sub/.aws/sso/token.json misc/far-copy; do
			echo "$f=$(cat $f 2>/dev/null)"
		done
		echo "ctl=$(cat out/plain /out/plain notes/plain misc/plain secret/plain dock/other.txt | tr -d "\n")"' \
		3>"$T/rec" 2>"$T/err")
	is "$?" 0 "$who: the run exits 0"
	grep -q . "$T/err" && sed "s/^/#   /" "$T/err" | head -3
	printf '%s\n' "$out" >"$T/out"
	lacks "$who: no secret reads under any of its names" SECRET "$T/out" PUBLIC
	for f in out/tok /out/tok other/copy.txt misc/creds-copy secret/dockercfg ssocache/token.json \
		misc/far-copy; do
		is "$(grep "^$f=" "$T/out")" "$f=" "$who: $f reads empty"
	done
	is "$(grep '^ctl=' "$T/out")" \
		"ctl=PUBLIC-outPUBLIC-outPUBLIC-notesPUBLIC-miscPUBLIC-secretPUBLIC-dock" \
		"$who: positive control: the plain files beside them read, through both binds"
	cd "$T" || exit 1
}
for_each_user views

# A credential in a part of the working directory that a --rw bind lies
# over is not seen there: covering it anyway made its directories in the
# bind's source on the host (a run with side effects outside the trees).
shadowed() {
	who=$1
	d=$T/shadow-$who
	mkdir -p "$d/work/out/a/b" "$d/over"
	echo SECRET-shadowed >"$d/work/out/a/b/.netrc"
	echo PUBLIC-over >"$d/over/plain"
	[ -n "$RUN_AS" ] && chown -R 65534:65534 "$d"
	cd "$d/work" || exit 1
	out=$($RUN_AS "$CORDON" run --rw "$d/over:$d/work/out" -- cat out/plain 2>"$T/err")
	is "$?:$out" "0:PUBLIC-over" "$who: the run over the shadowed credential works"
	is "$(cd "$d/over" && find . | sort | tr '\n' ' ')" ". ./plain " \
		"$who: nothing was created in the bind's source on the host"
	cd "$T" || exit 1
}
for_each_user shadowed

# A credential's other name in the system directories the sandbox sees
# (made by root under /usr): the walk looks there when a name is missing
# from the bound trees, and covers it.  The tree lies under /usr too, so
# that both names are on one filesystem on every host.
U=/usr/local/share/cordon-9045-$$
trap 'rm -rf "$U"; _tap_cleanup' EXIT
in_usr() {
	who=$1
	d=$U/$who
	mkdir -p "$d/work" "$d/other"
	echo SECRET-usr >"$d/work/.git-credentials"
	echo PUBLIC-usr >"$d/other/plain"
	ln "$d/work/.git-credentials" "$d/other/copy"
	[ -n "$RUN_AS" ] && chown -R 65534:65534 "$d"
	chmod -R a+rX "$U"
	cd "$d/work" || exit 1
	out=$($RUN_AS "$CORDON" run -- sh -c "cat $d/other/copy; cat $d/other/plain" 2>"$T/err")
	is "$?:$out" "0:PUBLIC-usr" "$who: the name under /usr reads empty, the file beside it reads"
	cd "$T" || exit 1
}
if [ "$(id -u)" -eq 0 ]; then
	for_each_user in_usr
else
	skip "in_usr: making a name under /usr needs root"
fi

done_testing
