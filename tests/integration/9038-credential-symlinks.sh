#!/bin/sh
# A symlink with a credential's name (.netrc -> notes/token.txt, .aws ->
# cloud/, .docker -> dock/, a .pem pointing to a private key): the host's
# tools read what it points to, so that is the credential.  The walk
# resolves it on the host and covers the target where it lies in a bound
# tree (the working directory, a --ro tree), under both names.  Before,
# only regular files were covered and the link read through.  Positive
# controls: a link with an ordinary name, a .pem pointing to a
# certificate, a file beside the one a .docker link names; a dangling
# link and a link out of every bound tree do not refuse the run.  As
# root and as nobody.
: "${CORDON_TEST_TIMEOUT:=300}"
export CORDON_TEST_TIMEOUT
. "${CORDON_SRC:-.}/tests/lib.sh"

reasons() {
	python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))
print(",".join(sorted(c["reason"] for c in r.get("covered_paths") or [] if c["path"].endswith(sys.argv[2]))))' "$T/rec" "$1" 2>&1
}

links() {
	who=$1
	d=$T/symlinks-$who
	mkdir -p "$d/work/sub" "$d/work/notes" "$d/work/cloud" "$d/work/dock" "$d/work/certs" "$d/ro" "$d/outside"
	w=$d/work
	echo SECRET-token >"$w/notes/token.txt"
	echo PUBLIC-plain >"$w/notes/plain.txt"
	echo SECRET-aws >"$w/cloud/creds"
	echo SECRET-docker >"$w/dock/config.json"
	echo PUBLIC-dock >"$w/dock/other.txt"
	printf -- '-----BEGIN CERTIFICATE-----\nPUBLIC-cert\n-----END CERTIFICATE-----\n' >"$w/certs/server.crt"
	printf -- '-----BEGIN PRIVATE KEY-----\nSECRET-key\n-----END PRIVATE KEY-----\n' >"$w/certs/client.txt"
	echo SECRET-gitcred >"$d/ro/gc.txt"
	echo SECRET-outside >"$d/outside/pypirc"
	# (in sub/: a working directory holding .aws at its top is refused)
	ln -s ../notes/token.txt "$w/sub/.netrc"
	ln -s "$d/ro/gc.txt" "$w/sub/.git-credentials"
	ln -s ../cloud "$w/sub/.aws"
	ln -s ../dock "$w/sub/.docker"
	ln -s ../certs/server.crt "$w/sub/server.pem"
	ln -s ../certs/client.txt "$w/sub/client.pem"
	ln -s ../notes/plain.txt "$w/sub/readme.md"
	ln -s /nonexistent/cordon/npmrc "$w/sub/.npmrc"
	ln -s "$d/outside/pypirc" "$w/sub/.pypirc"
	[ -n "$RUN_AS" ] && chown -R 65534:65534 "$d"
	cd "$w" || exit 1
	out=$($RUN_AS "$CORDON" run --ro "$d/ro" --json-fd 3 -- sh -c "
		for f in sub/.netrc notes/token.txt sub/.git-credentials $d/ro/gc.txt sub/.aws/creds \
		         cloud/creds sub/.docker/config.json dock/config.json sub/client.pem \
		         certs/client.txt sub/.pypirc; do
			cat \$f 2>/dev/null
		done
		cat sub/readme.md sub/server.pem sub/.docker/other.txt" 3>"$T/rec" 2>"$T/err")
	is "$?" 0 "$who: the run exits 0 (a dangling link and a link out of the trees do not refuse it)"
	grep -q . "$T/err" && sed "s/^/#   /" "$T/err" | head -3
	lacks "$who: no secret reads through a credential-named symlink or under the target's own name" \
		SECRET "$(printf '%s\n' "$out" >"$T/out"; echo "$T/out")" PUBLIC
	is "$(grep -c PUBLIC "$T/out")" 3 \
		"$who: positive control: an ordinary link, a .pem to a certificate, a file beside docker's config read"
	is "$(reasons /work/notes/token.txt)" "credential file (a symlink with a credential's name points to it)" \
		"$who: .netrc's target is in covered_paths"
	is "$(reasons /ro/gc.txt)" "credential file (a symlink with a credential's name points to it)" \
		"$who: a target in a --ro tree is covered there"
	is "$(reasons /work/cloud)" "credential file (a symlink with a credential's name points to it)" \
		"$who: the directory an .aws link points to is covered whole"
	is "$(reasons /work/dock/config.json)" "credential file (a symlink with a credential's name points to it)" \
		"$who: the config.json below a .docker link's target is covered"
	is "$(reasons /work/certs/client.txt)" "credential file (a symlink with a credential's name points to it)" \
		"$who: a .pem link to a private key is covered"
	is "$(reasons /work/certs/server.crt)" "" "$who: a .pem link to a certificate is not"
	is "$(reasons /work/notes/plain.txt)" "" "$who: an ordinary link's target is not"
	cd "$T" || exit 1
}
for_each_user links

done_testing
