#!/bin/sh
# Session 8's second attacker, G1: a file bound by itself whose credential
# status is judged by its content (a .pem holding a private key, a service
# account's .json, a .yarnrc.yml with a registry token) was pinned by
# lstat, judged by opening its name again, and mounted by opening its name
# a third time (the child compared dev+ino only).  A process exchanging
# the key with a harmless file of the same kind made the pin see the key,
# the judgement the harmless file and the mount the key again: the key
# unmasked (3 of 20 runs in the attacker's loop, as root and as nobody).
# Now the file is opened once, judged through that descriptor, and
# mounted from it (a root caller's supervisor) or checked against it (a
# rootless child, which cannot clone a mount of another namespace, opens
# the path and compares dev, inode and ctime).
#
# Two attackers.  Deterministic: swap-open.so, preloaded into cordon,
# exchanges the two files around every open of the key's name for
# reading and back after it (the race won every time): the old code
# showed the key in every run, as root and as nobody.  Racing: xchg-loop
# exchanges them in a tight loop from the host while cordon runs 20 times
# (the attacker's loop; on a loaded machine the old code lost this race
# less often).  Each run must show nothing (the key masked), show the
# harmless file (the one judged), or be refused with exit 125 naming the
# concurrent rename or the replaced credential; never the key.
# Controls: the preload and the exchanges worked; without them the key is
# masked, the harmless file and a plain file bound by themselves are read,
# and a --rw file bind is written.  As root and as nobody.
: "${CORDON_TEST_TIMEOUT:=600}"
export CORDON_TEST_TIMEOUT
. "${CORDON_SRC:-.}/tests/lib.sh"
H=$CORDON_BUILD/tests/helpers
SWAP=$CORDON_BUILD/tests/preload/swap-open.so
N=${CORDON_RACE_RUNS:-20}
SECRET=cordon-g1-secret-7741
HARMLESS=cordon-g1-harmless

# setup KIND DIR: DIR/NAME holds the credential, DIR/other the harmless
# file of the same kind; prints NAME
setup() {
	mkdir -p "$2/cwd" "$2/ctl"
	case $1 in
	pem)
		printf -- '-----BEGIN PRIVATE KEY-----\n%s\n-----END PRIVATE KEY-----\n' "$SECRET" >"$2/key.pem"
		printf -- '-----BEGIN CERTIFICATE-----\n%s\n-----END CERTIFICATE-----\n' "$HARMLESS" >"$2/other"
		name=key.pem
		;;
	json)
		printf '{"type": "service_account", "private_key": "%s"}\n' "$SECRET" >"$2/sa.json"
		printf '{"type": "other", "note": "%s"}\n' "$HARMLESS" >"$2/other"
		name=sa.json
		;;
	yarn)
		printf 'npmAuthToken: "%s"\n' "$SECRET" >"$2/.yarnrc.yml"
		printf 'nodeLinker: node-modules # %s\n' "$HARMLESS" >"$2/other"
		name=.yarnrc.yml
		;;
	esac
	echo "plain-file-content" >"$2/notes.txt"
	echo "was" >"$2/rw.txt"
	[ -n "$RUN_AS" ] && chown -R 65534:65534 "$2"
	echo $name
}

run_cat() {
	(cd "$d/cwd" && $RUN_AS "$CORDON" run --ro "$1:/k" -- cat /k) </dev/null >"$T/out" 2>"$T/err"
}

# outcome RC: how a run under an attacker ended
outcome() {
	if grep -q "$SECRET" "$T/out"; then
		echo leaked
	elif [ "$1" = 125 ] && grep -Eq "concurrent rename|replaced on the host" "$T/err"; then
		echo refused
	elif [ "$1" = 0 ] && [ ! -s "$T/out" ]; then
		echo masked
	elif [ "$1" = 0 ] && grep -q "$HARMLESS" "$T/out"; then
		echo harmless
	else
		echo "other (rc $1)"
		sed 's/^/#   /' "$T/err" | head -3 >&2
	fi
}

# The deterministic attacker: every open of the key's name for reading
# sees the harmless file.
preloaded() {
	rm -f "$d/ctl/log"
	(cd "$d/cwd" && $RUN_AS env SWAP_NAME="$name" SWAP_A="$d/$name" SWAP_B="$d/other" \
		SWAP_LOG="$d/ctl/log" LD_PRELOAD="$SWAP" "$@") </dev/null >"$T/out" 2>"$T/err"
}

race() {
	who=$1
	for kind in pem json yarn; do
		d=$T/$kind-$who
		name=$(setup $kind "$d")
		run_cat "$d/$name"
		is "$?:$(wc -c <"$T/out")" "0:0" "$who/$kind: control: the credential bound by itself is masked (empty, exit 0)"
		ok "$who/$kind: control: the credential is on the host" grep -q "$SECRET" "$d/$name"
		run_cat "$d/other"
		ok "$who/$kind: control: the harmless file bound by itself is read" grep -q "$HARMLESS" "$T/out"
		preloaded cat "$d/$name"
		ok "$who/$kind: control: under swap-open.so a read by name sees the harmless file" \
			grep -q "$HARMLESS" "$T/out"
		preloaded "$CORDON" run --ro "$d/$name:/k" -- cat /k
		rc=$?
		diag "$who/$kind: swap-open.so exchanged the files around $(grep -c swapped "$d/ctl/log" 2>/dev/null || echo 0) opens by name in that run"
		is "$(outcome $rc)" masked "$who/$kind: the key judged, pinned and mounted as one inode: masked under swap-open.so"
		ok "$who/$kind: control: the files are back in place" grep -q "$SECRET" "$d/$name"
		$RUN_AS "$H/xchg-loop" "$d/$name" "$d/other" "$d/ctl/stop" >"$T/flips" 2>&1 &
		fp=$!
		leaked=0 masked=0 harmless=0 refused=0 other=0 i=0
		while [ $i -lt "$N" ]; do
			run_cat "$d/$name"
			case $(outcome $?) in
			leaked) leaked=$((leaked + 1)) ;;
			refused) refused=$((refused + 1)) ;;
			masked) masked=$((masked + 1)) ;;
			harmless) harmless=$((harmless + 1)) ;;
			*) other=$((other + 1)) ;;
			esac
			i=$((i + 1))
		done
		: >"$d/ctl/stop"
		wait $fp
		diag "$who/$kind: $N runs under the exchanges: $masked masked, $harmless showed the harmless file, $refused refused, $leaked showed the key, $other other"
		ok "$who/$kind: control: the exchanges ran ($(cat "$T/flips") of them)" test "$(cat "$T/flips")" -gt 1000
		is "$leaked" 0 "$who/$kind: no run under the exchanges showed the credential"
		is "$other" 0 "$who/$kind: each run was masked, showed the harmless file, or was refused naming the rename"
		ok "$who/$kind: control: the files are still there" test -s "$d/$name" -a -s "$d/other"
	done
	# Plain file binds still work.
	run_cat "$d/notes.txt"
	is "$?:$(cat "$T/out")" "0:plain-file-content" "$who: control: a plain file bound by itself is read"
	(cd "$d/cwd" && $RUN_AS "$CORDON" run --rw "$d/rw.txt:/w" -- sh -c 'echo now >/w') </dev/null >"$T/out" 2>&1
	is "$?:$(cat "$d/rw.txt")" "0:now" "$who: control: a file bound --rw is written"
}

for_each_user race
done_testing
