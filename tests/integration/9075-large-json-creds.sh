#!/bin/sh
# 9075-large-json-creds.sh — a service account key .json larger than 16
# KiB was neither read nor covered (session 9's second review, B7): padded
# with 17000 spaces and bound --ro FILE, it was shown in full.  A .json is
# now read whole up to 1 MiB (the kind and its secret both named: covered),
# and one larger is covered when its first 1 MiB names either.  Controls:
# the small key is covered as before; a package-lock.json of 200 KiB and one
# of 2 MiB stay readable (in the tree and bound --ro FILE).  As root and as
# uid 65534.
: "${CORDON_TEST_TIMEOUT:=300}"
export CORDON_TEST_TIMEOUT
. "${CORDON_SRC:-.}/tests/lib.sh"

HEAD='{"type": "service_account", "private_key": "-----BEGIN PRIVATE KEY-----\nSECRET-SA\n-----END PRIVATE KEY-----\n",'
TAIL='"client_email": "x@p.iam.gserviceaccount.com"}'
lock() { # N: a package-lock.json with N packages
	python3 -c '
import json, sys
n = int(sys.argv[1])
pk = {"": {"name": "PUBLIC-app", "version": "1.0.0"}}
for i in range(n):
    pk["node_modules/pkg-%d" % i] = {"version": "1.0.%d" % i, "resolved": "https://registry.npmjs.org/pkg-%d/-/pkg-%d-1.0.%d.tgz" % (i, i, i), "integrity": "sha512-" + "A" * 86 + "==", "license": "MIT"}
json.dump({"name": "PUBLIC-app", "lockfileVersion": 3, "requires": True, "packages": pk}, sys.stdout, indent=2)' "$1"
}

check() {
	who=$1
	d=$T/j-$who
	mkdir -p "$d/p/small" "$d/p/big" "$d/p/huge" "$d/p/lock1" "$d/p/lock2"
	printf '%s%s\n' "$HEAD" "$TAIL" >"$d/p/small/proj-1a2b3c4d5e6f.json"
	{ printf '%s' "$HEAD"; head -c 17000 /dev/zero | tr '\0' ' '; printf '%s\n' "$TAIL"; } >"$d/p/big/proj-2b3c4d5e6f7a.json"
	{ printf '%s' "$HEAD"; head -c 1200000 /dev/zero | tr '\0' ' '; printf '%s\n' "$TAIL"; } >"$d/p/huge/proj-3c4d5e6f7a8b.json"
	lock 800 >"$d/p/lock1/package-lock.json"
	lock 8000 >"$d/p/lock2/package-lock.json"
	[ -n "$RUN_AS" ] && chown -R 65534:65534 "$d"
	cd "$d/p" || exit 1
	is "$(stat -c %s big/proj-2b3c4d5e6f7a.json | awk '{print ($1 > 16384)}')$(stat -c %s lock2/package-lock.json | awk '{print ($1 > 1048576)}')" 11 \
		"$who: the padded key is past 16 KiB, the large lock file past 1 MiB"
	for f in small/proj-1a2b3c4d5e6f.json big/proj-2b3c4d5e6f7a.json huge/proj-3c4d5e6f7a8b.json; do
		$RUN_AS "$CORDON" run --ro "$d/p/$f" -- sh -c "head -c 100 $d/p/$f" >"$T/out" 2>"$T/err"
		rc=$?
		is "$rc:$(grep -c SECRET "$T/out")" "0:0" "$who: $f bound --ro FILE reads empty ($(head -c 60 "$T/out"))"
	done
	$RUN_AS "$CORDON" run -- sh -c 'cat big/*.json huge/*.json lock1/package-lock.json lock2/package-lock.json | grep -o "SECRET-SA\|PUBLIC-app" | sort | uniq -c' >"$T/out" 2>"$T/err"
	is "$?" 0 "$who: the run in the tree exits 0"
	lacks "$who: in the tree the padded keys read empty" SECRET "$T/out" PUBLIC
	is "$(grep -c PUBLIC "$T/out")" 1 "$who: positive control: both package-lock.json files read ($(tr -s ' \n' ' ' <"$T/out"))"
	is "$(awk '/PUBLIC-app/ {print $1}' "$T/out")" 4 "$who: ... both whole (their name twice each)"
	for f in lock1/package-lock.json lock2/package-lock.json; do
		$RUN_AS "$CORDON" run --ro "$d/p/$f" -- sh -c "head -c 40 $d/p/$f" >"$T/out" 2>"$T/err"
		is "$?:$(grep -c PUBLIC-app "$T/out")" "0:1" "$who: control: $f bound --ro FILE is shown"
	done
	cd "$T" || exit 1
}
for_each_user check
done_testing
