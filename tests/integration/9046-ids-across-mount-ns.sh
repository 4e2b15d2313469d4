#!/bin/sh
# Root runs whose /run differs (containers that share the host's user
# namespace, each with a mount namespace and a /run of its own) must not
# take the same host id: the flock in /run/cordon/ids cannot see across,
# so each slot is also checked against the kernel's count of the id's
# processes in the whole user namespace (idslot.h).  Before, both runs
# below took the window's first slot.  Two concurrent root runs, each in
# a mount namespace of the test's own with a fresh tmpfs on /run: their
# commands have different host uids, both of the window.  Control: a run
# after both ended takes the first slot again.  Root callers only (a
# rootless caller's sandbox is the caller).
: "${CORDON_TEST_TIMEOUT:=120}"
export CORDON_TEST_TIMEOUT
. "${CORDON_SRC:-.}/tests/lib.sh"

if [ "$(id -u)" -ne 0 ]; then
	skip "root callers only: a rootless caller's sandbox is the caller"
	done_testing
fi
field() { sed -n 's/^{"run_id".*"'"$2"'":\([0-9]*\|null\)[,}].*/\1/p' "$1" | tail -n1; }

mkdir -m 0755 "$T/w" "$T/sync"
cd "$T/w" || exit 1
win=900:2 # away from the low slots other root runs take first

# A root run in a mount namespace with a /run of its own.
start() {
	# shellcheck disable=SC2016
	CORDON_TEST_ID_SLOTS=$win unshare -m sh -c 'mount -t tmpfs tmpfs /run && exec "$@"' sh \
		"$CORDON" run --json-fd 3 --rw "$T/sync" -- sh -c '
		: > "$1/$2.up"
		while [ ! -e "$1/go" ]; do sleep 0.05; done' sh "$T/sync" "$1" \
		3>"$T/$1.rec" 2>"$T/$1.err" &
}
up() {
	_i=0
	while [ ! -e "$T/sync/$1.up" ] && [ $_i -lt 400 ]; do sleep 0.05; _i=$((_i + 1)); done
	test -e "$T/sync/$1.up"
}
start A
pa=$!
up A
start B
pb=$!
up B
okB=$?
: >"$T/sync/go"
wait $pa
ra=$?
wait $pb
rb=$?
uA=$(field "$T/A.rec" host_uid) uB=$(field "$T/B.rec" host_uid)
is "$ra:$rb:$okB" "0:0:0" "both runs, each with its own /run, ran concurrently to the end"
grep -q . "$T/A.err" "$T/B.err" && cat "$T/A.err" "$T/B.err" | sed 's/^/#   /' | head -4
ok "their host uids differ ($uA / $uB)" test -n "$uA" -a -n "$uB" -a "$uA" != "$uB"
is "$(( ${uB:-0} - ${uA:-0} ))" 1 "... the second took the window's next slot"
CORDON_TEST_ID_SLOTS=$win unshare -m sh -c 'mount -t tmpfs tmpfs /run && exec "$@"' sh \
	"$CORDON" run --json -- true >"$T/C.rec" 2>"$T/C.err"
is "$(field "$T/C.rec" host_uid)" "$uA" "control: after both ended, a run takes the first slot again"

done_testing
