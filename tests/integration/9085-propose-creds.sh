#!/bin/sh
# Session 11's credential attack, F9: a --propose run in a tree holding a
# covered credential (.netrc, .env, a private key in a .ssh/ below) runs, and the
# credentials read empty in the overlay's merged view; the sandbox can
# neither remove nor rename a covered name there.  Before, every such run
# was refused ("no host path for covered credential").  Control: an
# ordinary file is shown whole and a new file becomes the proposal.  As
# root and as nobody.
: "${CORDON_TEST_TIMEOUT:=300}"
export CORDON_TEST_TIMEOUT
. "${CORDON_SRC:-.}/tests/lib.sh"

SECRET=s3cr3t-$$

propose_creds() {
	who=$1
	d=$T/p-$who
	mkdir -p "$d/sub/.ssh"
	echo "machine h login u password $SECRET" >"$d/.netrc"
	echo "API_KEY=$SECRET" >"$d/.env"
	echo "$SECRET" >"$d/sub/.ssh/id_ed25519"
	echo "plain-$who" >"$d/plain.txt"
	[ -n "$RUN_AS" ] && chown -R 65534:65534 "$d"
	cd "$d" || exit 1
	$RUN_AS "$CORDON" run --propose -- sh -c '
		cat .netrc .env sub/.ssh/id_ed25519 plain.txt
		rm -f .netrc 2>/dev/null; mv .env env 2>/dev/null; cat .netrc .env env 2>/dev/null
		echo new > new.txt' >"$T/out-$who" 2>"$T/err-$who"
	rc=$?
	is "$rc" 0 "$who: a --propose run in a tree with covered credentials runs"
	[ "$rc" -eq 0 ] || sed 's/^/# /' "$T/err-$who"
	nok "$who: no credential's bytes read through the overlay" grep -q "$SECRET" "$T/out-$who"
	ok "$who: control: plain.txt shown whole" grep -qx "plain-$who" "$T/out-$who"
	ok "$who: control: the run's new file is a proposal" grep -q '1 added' "$T/err-$who"
	ok "$who: the host's .netrc is untouched" grep -q "$SECRET" "$d/.netrc"
	cd "$T" || exit 1
}

for_each_user propose_creds

done_testing
