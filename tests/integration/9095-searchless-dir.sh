#!/bin/sh
# Session 12's review, F6: a directory with read but not search
# permission (mode 644) in a tree the sandbox can write.  The walk lists
# its names but can open nothing below it, so its subdirectories and its
# .json files went unjudged, silently; the sandbox then chmods it back
# and reads the credentials below.  Such a directory of the caller's gets
# the unreadable-directory rule: the run is refused (workspace-write,
# --rw, --propose), as one without read permission is.  The attack in
# two runs (run 1 does the chmod 644), and a directory already 644 on
# the host under each mode; run 1 is reported by the check after it (a
# directory it stamped is out of reach).  As root (whose walk searches every
# directory: the credentials are covered, the run goes on) and as nobody.
# Positive controls: the chmod in the sandbox is real (an ordinary file
# below is read), and with the directory 755 again the run exits 0 with
# the credentials covered.
: "${CORDON_TEST_TIMEOUT:=300}"
export CORDON_TEST_TIMEOUT
. "${CORDON_SRC:-.}/tests/lib.sh"

SECRET=s3cr3t-$$
READ='chmod 755 d; for f in d/sub/.netrc d/token.json d/.ssh/keys/work d/sub/plain; do
	printf "%s:" "$f"; cat "$f" 2>/dev/null | tr "\n" " "; echo; done'

plant() {
	mkdir -p "$1/d/sub" "$1/d/.ssh/keys"
	printf 'machine h password %s\n' "$SECRET" >"$1/d/sub/.netrc"
	printf '{"refresh_token": "1//%s"}\n' "$SECRET" >"$1/d/token.json"
	echo "$SECRET" >"$1/d/.ssh/keys/work"
	echo "plain-$who" >"$1/d/sub/plain"
	[ -n "$RUN_AS" ] && chown -R 65534:65534 "$1"
	chmod 755 "$1/d"
}

# after RC TAG: the second run ($T/out, $T/err) showed no secret; root's
# goes on (covered), nobody's is refused saying why
after() {
	rc=$1 tag=$2
	nok "$who: $tag: no credential below the directory is read" grep -q "$SECRET" "$T/out"
	if [ -n "$RUN_AS" ] || [ "$(id -u)" -ne 0 ]; then
		is "$rc" 125 "$who: $tag: the run is refused (125)"
		ok "$who: $tag: ... saying why ($(head -c 160 "$T/err"))" \
			grep -q "the sandbox could make it" "$T/err"
	else
		[ "$tag" = --propose ] && [ "$rc" -eq 1 ] && rc=0 # the copy fails on chmod
		is "$rc" 0 "$who: $tag: root's walk searches it: the run exits 0"
		ok "$who: $tag: control: the chmod is real, plain is read" \
			grep -q "d/sub/plain:plain-$who" "$T/out"
	fi
}

searchless() {
	who=$1
	b=$T/s-$who

	# workspace-write, in two runs: run 1 does the chmod
	plant "$b/ws"
	cd "$b/ws" || exit 1
	$RUN_AS "$CORDON" run --profile workspace-write -- chmod 644 d >"$T/out" 2>"$T/err"
	rc=$?
	if [ -n "$RUN_AS" ] || [ "$(id -u)" -ne 0 ]; then
		# the check after it cannot reach d/sub: reported, exit 125
		is "$rc" 125 "$who: ws: run 1 (chmod 644 d): the check after it is incomplete (125)"
		ok "$who: ws: run 1: ... naming what is below d ($(tail -c 200 "$T/err"))" \
			grep -q "incomplete: unreadable directory: contents not checked: '$b/ws/d/" \
			"$T/err"
	else
		is "$rc" 0 "$who: ws: run 1 (chmod 644 d) exits 0"
	fi
	$RUN_AS "$CORDON" run --profile workspace-write -- sh -c "$READ" >"$T/out" 2>"$T/err"
	after $? "ws run 2"

	# --rw, the directory 644 already
	plant "$b/rw"
	chmod 644 "$b/rw/d"
	cd "$T" || exit 1
	$RUN_AS "$CORDON" run --rw "$b/rw:/rw" -- sh -c "cd /rw && $READ" >"$T/out" 2>"$T/err"
	after $? "--rw"

	# --propose, the directory 644 on the host
	plant "$b/pr"
	chmod 644 "$b/pr/d"
	cd "$b/pr" || exit 1
	$RUN_AS "$CORDON" run --propose -- sh -c "$READ" >"$T/out" 2>"$T/err"
	after $? --propose

	# control: 755 again, the same tree runs, its credentials covered
	chmod 755 "$b/ws/d"
	cd "$b/ws" || exit 1
	$RUN_AS "$CORDON" run --profile workspace-write -- sh -c "$READ" >"$T/out" 2>"$T/err"
	is "$?" 0 "$who: control: d 755: the run exits 0"
	nok "$who: control: d 755: the credentials are covered" grep -q "$SECRET" "$T/out"
	ok "$who: control: d 755: plain is read" grep -q "d/sub/plain:plain-$who" "$T/out"
	cd "$T" || exit 1
}

for_each_user searchless

done_testing
