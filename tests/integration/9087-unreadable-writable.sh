#!/bin/sh
# Session 11's credential attack, F4: a file judged by its content (a
# .json, a .yarnrc.yml) that the walk cannot read, but the caller owns,
# in a tree the sandbox can write: the sandbox could chmod it and read
# what the walk never judged, so it is covered unread (as an unreadable
# .pem is).  Each place the sandbox can chmod: a --rw tree, the
# workspace-write profile's working directory, a --rw bind of the file
# alone, and the --propose overlay (a .yarnrc.yml too).  Positive
# control in each: a mode-000 ordinary file of the same tree is made
# readable by the sandbox and read (so the chmod path is real).  Control
# in a read-only tree: an unreadable .json stays as it is (the sandbox
# cannot chmod it there either).  As root (whose walk reads every file:
# judged by content) and as nobody.
: "${CORDON_TEST_TIMEOUT:=300}"
export CORDON_TEST_TIMEOUT
. "${CORDON_SRC:-.}/tests/lib.sh"

SECRET=s3cr3t-$$

# sh -c "$INNER" sh FILE...: inside the sandbox, each made readable, then read.
INNER='for f; do chmod 644 "$f" 2>/dev/null; printf "%s:" "$f"; cat "$f" 2>/dev/null | tr "\n" " "; echo; done'

plant() {
	mkdir -p "$1"
	printf '{"refresh_token": "1//%s"}\n' "$SECRET" >"$1/token.json"
	echo "plain-$who" >"$1/plain.txt"
	chmod 000 "$1/token.json" "$1/plain.txt"
}

# check RC (the run's; $tag names it): $T/out holds no secret, plain.txt was read
check() {
	rc=$1
	# --propose: the proposal is made after the run, from the lower
	# layer, whose mode-000 plain.txt it cannot read as nobody: 125
	[ "$tag" = --propose ] && [ "$rc" -eq 125 ] &&
		grep -q "no proposal: open 'plain.txt'" "$T/err" && rc=0
	is "$rc" 0 "$who: $tag: the run exits 0"
	[ "$rc" -eq 0 ] || sed 's/^/# /' "$T/err"
	nok "$who: $tag: the unreadable credential stays unread after a chmod" \
		grep -q "$SECRET" "$T/out"
	ok "$who: $tag: control: an unreadable ordinary file is made readable and read" \
		grep -q "plain-$who" "$T/out"
}

unreadable_writable() {
	who=$1
	d=$T/u-$who
	mkdir -p "$d/cwd" "$d/ws/sub"
	plant "$d/rw"
	plant "$d/ws/sub"
	plant "$d/fb"
	plant "$d/pr"
	printf 'npmAuthToken: "%s"\n' "$SECRET" >"$d/pr/.yarnrc.yml"
	chmod 000 "$d/pr/.yarnrc.yml"
	[ -n "$RUN_AS" ] && chown -R 65534:65534 "$d"

	cd "$d/cwd" || exit 1
	tag="--rw tree"
	$RUN_AS "$CORDON" run --rw "$d/rw:/rw" -- sh -c "$INNER" sh /rw/token.json /rw/plain.txt \
		>"$T/out" 2>"$T/err"
	check $?
	tag="--rw file bind"
	$RUN_AS "$CORDON" run --rw "$d/fb/token.json:/t.json" --rw "$d/fb/plain.txt:/p.txt" \
		-- sh -c "$INNER" sh /t.json /p.txt >"$T/out" 2>"$T/err"
	check $?

	cd "$d/ws" || exit 1
	tag="workspace-write"
	$RUN_AS "$CORDON" run --profile workspace-write -- sh -c "$INNER" sh sub/token.json \
		sub/plain.txt >"$T/out" 2>"$T/err"
	check $?

	cd "$d/pr" || exit 1
	tag="--propose"
	$RUN_AS "$CORDON" run --propose -- sh -c "$INNER" sh token.json .yarnrc.yml plain.txt \
		>"$T/out" 2>"$T/err"
	check $?

	# read-only: the sandbox cannot chmod; nothing changes there
	cd "$d/rw" || exit 1
	tag="read-only tree"
	$RUN_AS "$CORDON" run -- sh -c "$INNER" sh token.json >"$T/out" 2>"$T/err"
	is "$?" 0 "$who: $tag: the run exits 0"
	nok "$who: $tag: the credential stays unread" grep -q "$SECRET" "$T/out"
	# F3: a directory of the caller's the walk cannot read, in the
	# --propose overlay (a rootless caller: root reads every directory):
	# refused before the sandbox could chmod it and read what is inside
	if [ -n "$RUN_AS" ] || [ "$(id -u)" -ne 0 ]; then
		mkdir -p "$d/lk/locked" && printf 'machine h password %s\n' "$SECRET" >"$d/lk/locked/.netrc"
		[ -n "$RUN_AS" ] && chown -R 65534:65534 "$d/lk"
		chmod 000 "$d/lk/locked"
		cd "$d/lk" || exit 1
		$RUN_AS "$CORDON" run --propose -- sh -c 'chmod 755 locked; cat locked/.netrc' \
			>"$T/out" 2>"$T/err"
		is "$?" 125 "$who: --propose, a locked directory: the run is refused (125)"
		nok "$who: ... and the credential inside stays unread" grep -q "$SECRET" "$T/out"
		grep -q "the sandbox could make it" "$T/err"
		is "$?" 0 "$who: ... saying why ($(head -c 200 "$T/err"))"
		chmod 755 "$d/lk/locked"
		cd "$T" || exit 1
	fi
	cd "$T" || exit 1
}

for_each_user unreadable_writable

done_testing
