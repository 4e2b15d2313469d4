#!/bin/sh
# Issue 16 finding 1 (per-run ids): a root caller's sandbox runs as an
# unprivileged id of root's range, and each concurrent root run has one of
# its own.  Were it one id for every root run, the runs would share that
# id's per-user kernel budgets (inotify instances, RLIMIT_NPROC's count,
# message queue bytes): a few runs could starve every other root run.
#
# Each run holds a slot (an flock in /run/cordon/ids) for its life: two
# concurrent runs have different host uids, as the host sees their
# processes and as their records say; a slot is reused once its run ends,
# also after kill -9 of cordon; no free slot refuses the run in one line;
# the lock directory must be root's and closed (checked in a mount
# namespace of the test's own, never the host's /run).
#
# The cases run in windows of slots near the top of the range
# (CORDON_TEST_ID_SLOTS=FIRST:COUNT, a seam that only narrows the range),
# away from the low slots other root runs take first.
: "${CORDON_TEST_TIMEOUT:=240}"
export CORDON_TEST_TIMEOUT
. "${CORDON_SRC:-.}/tests/lib.sh"
H=$CORDON_BUILD/tests/helpers
P=$H/kobj-probe

if [ "$(id -u)" -ne 0 ]; then
	skip "root callers only: a rootless caller's sandbox is the caller"
	done_testing
fi

# A number (or null) of the --json record in FILE: field FILE KEY.
field() { sed -n 's/^{"run_id".*"'"$2"'":\([0-9]*\|null\)[,}].*/\1/p' "$1" | tail -n1; }

# root's range as cordon reads it (idmap.h): the first root range of each
# file, else 2000000000; the smaller count, at most 1024.
subid() {
	awk -F: '($1 == "root" || $1 == "0") && $2 ~ /^[0-9]+$/ && $3 ~ /^[0-9]+$/ &&
		$2 > 0 && $2 != 65534 && $3 > 0 && $2 + $3 - 1 <= 4294967294 { print $2, $3; exit }' \
		"$1" 2>/dev/null
}
set -- $(subid /etc/subuid)
ustart=${1:-2000000000} ucount=${2:-1024}
set -- $(subid /etc/subgid)
gstart=${1:-2000000000} gcount=${2:-1024}
slots=$ucount
[ "$gcount" -lt "$slots" ] && slots=$gcount
[ "$slots" -gt 1024 ] && slots=1024
[ "$ustart" -lt 65534 ] && [ $((ustart + slots)) -gt 65534 ] && slots=$((65534 - ustart))
diag "root's sandboxes: uids $ustart+, gids $gstart+, $slots slots"
if [ "$slots" -lt 64 ]; then
	skip "root's range has $slots ids: too few for this test's windows"
	done_testing
fi
base=$((slots - 40))

mkdir -m 0755 "$T/w" "$T/sync"
cd "$T/w" || exit 1

# The host pid of the sandboxed `sh -c ... MARK` (not cordon, whose argv
# carries MARK too); waits until MARK.up says the command runs.
sandbox_pid() {
	_i=0
	while [ ! -e "$T/sync/$1.up" ] && [ $_i -lt 300 ]; do sleep 0.05; _i=$((_i + 1)); done
	for _f in $(grep -l -s -z -x -e "idr-$$-$1" /proc/[0-9]*/cmdline 2>/dev/null); do
		[ "$(head -z -n1 "$_f" 2>/dev/null | tr -d '\0')" = sh ] || continue
		_p=${_f#/proc/}
		echo "${_p%/cmdline}"
		return 0
	done
}
ids_of() { awk '/^Uid:/ { u = $2 ":" $3 ":" $4 ":" $5 } /^Gid:/ { g = $2 ":" $3 ":" $4 ":" $5 }
	END { print u " " g }' "/proc/$1/status" 2>/dev/null; }

# Start a root run in window W that says it is up, writes a file into the
# shared --rw tree and waits for $T/sync/go.NAME; its record in NAME.rec.
start() {
	_name=$1 _win=$2
	# shellcheck disable=SC2016
	CORDON_TEST_ID_SLOTS=$_win "$CORDON" run --json-fd 3 --rw "$T/sync" -- sh -c '
		d=$1 n=$2
		echo "$n" > "$d/$n.file"
		: > "$d/$n.up"
		while [ ! -e "$d/go.$n" ]; do sleep 0.05; done
		echo "$n done"' "idr-$$-$_name" "$T/sync" "$_name" \
		3>"$T/$_name.rec" >"$T/$_name.out" 2>"$T/$_name.err" &
}
finish() { : >"$T/sync/go.$1"; }

# --- two concurrent runs: two host ids -----------------------------------
start A "$base:2"
pidA=$!
start B "$base:2"
pidB=$!
spA=$(sandbox_pid A)
spB=$(sandbox_pid B)
idsA=$(ids_of "$spA")
idsB=$(ids_of "$spB")
# The lock is cordon's alone: neither the command nor the sandbox's init
# holds a descriptor of it.
locks() { ls -l "/proc/$1/fd" 2>/dev/null | grep -c ' -> /run/cordon/ids/'; }
initA=$(awk '/^PPid:/ { print $2 }' "/proc/$spA/status" 2>/dev/null)
lk="$(locks $pidA) $(locks "$spA") $(locks "${initA:-none}")"
finish A
finish B
wait $pidA
rcA=$?
wait $pidB
rcB=$?
ok "A and B ran concurrently, both to the end" \
	sh -c "test $rcA -eq 0 -a $rcB -eq 0 && grep -q 'A done' '$T/A.out' && grep -q 'B done' '$T/B.out'"
diag "A: $idsA (slot $(field "$T/A.rec" id_slot)), B: $idsB (slot $(field "$T/B.rec" id_slot))"
uA=$(field "$T/A.rec" host_uid) uB=$(field "$T/B.rec" host_uid)
gA=$(field "$T/A.rec" host_gid) gB=$(field "$T/B.rec" host_gid)
ok "the host sees A's and B's commands as different uids ($idsA / $idsB)" \
	test -n "${idsA%% *}" -a -n "${idsB%% *}" -a "${idsA%% *}" != "${idsB%% *}"
is "$idsA" "$uA:$uA:$uA:$uA $gA:$gA:$gA:$gA" "A's command runs as its record's host_uid and host_gid (real, effective, saved, fs)"
is "$idsB" "$uB:$uB:$uB:$uB $gB:$gB:$gB:$gB" "B's likewise"
is "$(echo "$uA $uB" | tr ' ' '\n' | sort -n | tr '\n' ' ')" \
	"$((ustart + base)) $((ustart + base + 1)) " "their uids are the window's two slots of root's range"
is "$(echo "$gA $gB" | tr ' ' '\n' | sort -n | tr '\n' ' ')" \
	"$((gstart + base)) $((gstart + base + 1)) " "... and so are their gids"
ok "each record names its slot (id_slot = host_uid - $ustart)" \
	test "$(field "$T/A.rec" id_slot)" = $((uA - ustart)) -a "$(field "$T/B.rec" id_slot)" = $((uB - ustart))
is "$lk" "1 0 0" "cordon holds its slot's lock; the sandbox's command and init hold none of it"
# What the caller sees on the host afterwards: the caller's tree is bound
# idmapped, so whichever id a run had, its files are root's on disk.
is "$(stat -c %u:%g "$T/sync/A.file" "$T/sync/B.file" 2>&1 | tr '\n' ' ')" "0:0 0:0 " \
	"files both runs wrote through --rw are root's on disk, not their per-run ids'"

# --- a slot is reused once its run ends ------------------------------------
CORDON_TEST_ID_SLOTS=$base:2 "$CORDON" run --json -- true >"$T/C.rec" 2>"$T/C.err"
is "$(field "$T/C.rec" host_uid)" $((ustart + base)) "after A and B, a new run takes the lowest slot again"

# --- no free slot: refused in one line --------------------------------------
one=$((base + 4))
start D "$one:1"
pidD=$!
spD=$(sandbox_pid D)
CORDON_TEST_ID_SLOTS=$one:1 "$CORDON" run --json -- echo ran >"$T/E.out" 2>"$T/E.err"
rc=$?
is "$rc" 125 "a run with every slot of its window held is refused (exit 125)"
ok "... saying no host id is free, in one line" \
	sh -c "test \$(wc -l <'$T/E.err') -eq 1 && grep -q \"every host id for root's sandboxes is in use\" '$T/E.err'"
ok "... and its record says so too" grep -q '"error":"every host id for root.s sandboxes is in use' "$T/E.out"
ok "... and nothing ran" sh -c "! grep -q '^ran' '$T/E.out'"
finish D
wait $pidD
CORDON_TEST_ID_SLOTS=$one:1 "$CORDON" run --json -- echo ran >"$T/E.out" 2>"$T/E.err"
ok "control: once the holder ends, the same window runs" grep -q '^ran$' "$T/E.out"
is "$(field "$T/E.out" host_uid)" $((ustart + one)) "... as that slot's id"

# --- kill -9 of cordon frees its slot ----------------------------------------
k=$((base + 6))
start K "$k:1"
pidK=$!
spK=$(sandbox_pid K)
ok "a run holds slot $k (its command is up)" test -n "$spK"
idsK=$(ids_of "$spK")
is "${idsK%%:*}" $((ustart + k)) "... as uid $((ustart + k))"
kill -9 $pidK
wait $pidK 2>/dev/null
i=0
while [ -n "$spK" ] && [ -e "/proc/$spK" ] && [ $i -lt 100 ]; do sleep 0.05; i=$((i + 1)); done
ok "after kill -9 of cordon its command is gone" test ! -e "/proc/$spK"
CORDON_TEST_ID_SLOTS=$k:1 "$CORDON" run --json -- echo again >"$T/K2.out" 2>"$T/K2.err"
rc=$?
is "$rc" 0 "after kill -9 of cordon, its slot is free at once"
is "$(field "$T/K2.out" host_uid)" $((ustart + k)) "... the same id again"

# --- per-user quotas are per run ----------------------------------------------
# Enough concurrent runs to take the host's per-user inotify budget (the
# kernel charges each instance to the user namespace's owner too) in full,
# then one more run: with one id for all root runs it would get EMFILE.
per_run=$("$CORDON" run --dry-run -- true | sed -n 's/^ *"inotify_instances": \([0-9]*\).*/\1/p')
host_max=$(cat /proc/sys/fs/inotify/max_user_instances)
case ${per_run:-0} in 0 | *[!0-9]*) per_run=$host_max ;; esac
n=$(((host_max + per_run - 1) / per_run))
if [ "$n" -gt 16 ] || [ "$n" -lt 2 ]; then
	skip "max_user_instances $host_max / $per_run per run: $n runs, too many for this test"
else
	q=$((base + 8))
	pids=""
	j=0
	while [ $j -lt "$n" ]; do
		j=$((j + 1))
		CORDON_TEST_ID_SLOTS=$q:$((n + 1)) "$CORDON" run --json-fd 3 --ro "$H" -- "$P" inotify 1000 40 \
			3>"$T/q$j.rec" >"$T/q$j.out" 2>"$T/q$j.err" &
		pids="$pids $!"
	done
	j=0
	while [ $j -lt "$n" ]; do
		j=$((j + 1))
		i=0
		while ! grep -q '^inotify=' "$T/q$j.out" && [ $i -lt 600 ]; do sleep 0.1; i=$((i + 1)); done
	done
	got=$(cat "$T"/q*.out | sed -n 's/^inotify=\([0-9]*\) .*/\1/p' | awk '{ s += $1 } END { print s + 0 }')
	diag "$n runs hold $got inotify instances (host budget per user: $host_max)"
	CORDON_TEST_ID_SLOTS=$q:$((n + 1)) "$CORDON" run --json-fd 3 --ro "$H" -- "$P" inotify 1 0 \
		3>"$T/q0.rec" >"$T/q0.out" 2>"$T/q0.err"
	is "$(cat "$T/q0.out")" "inotify=1 ok" \
		"with $n root runs holding all they may, another root run still makes an inotify instance"
	for p in $pids; do kill "$p" 2>/dev/null; done
	for p in $pids; do wait "$p" 2>/dev/null; done
	is "$(cat "$T"/q*.out | grep -c '^inotify=16 EMFILE')" "$n" \
		"each holder got its own $per_run instances, then EMFILE (the per-run quota stands)"
	is "$(for f in "$T"/q*.rec; do field "$f" host_uid; done | sort -u | wc -l)" $((n + 1)) \
		"the $((n + 1)) runs had $((n + 1)) different host ids"
fi

# --- the test window only narrows ---------------------------------------------
CORDON_TEST_ID_SLOTS=junk "$CORDON" run -- echo ran >"$T/o" 2>&1
rc=$?
ok "a malformed CORDON_TEST_ID_SLOTS refuses the run (125)" test "$rc" -eq 125
ok "... naming it" grep -q 'CORDON_TEST_ID_SLOTS: not \[FIRST:\]COUNT' "$T/o"
CORDON_TEST_ID_SLOTS=$slots:1 "$CORDON" run -- echo ran >"$T/o" 2>&1
ok "a window past root's range refuses the run" grep -q "outside the $slots ids" "$T/o"
CORDON_TEST_ID_SLOTS=0:$((slots + 1)) "$CORDON" run -- echo ran >"$T/o" 2>&1
ok "a window wider than root's range refuses the run" grep -q "outside the $slots ids" "$T/o"
is "$(CORDON_TEST_ID_SLOTS=0:$slots "$CORDON" run -- echo ran 2>&1)" ran \
	"control: the whole range as a window runs"
# Rootless: the caller's own id; no slot, the seam means nothing.
as_nobody env CORDON_TEST_ID_SLOTS=junk "$CORDON" run --json -- echo ran >"$T/n.out" 2>"$T/n.err"
ok "rootless: runs (no slot, the seam is not read)" grep -q '^ran$' "$T/n.out"
is "$(field "$T/n.out" host_uid):$(field "$T/n.out" id_slot)" "65534:null" \
	"rootless: host_uid is the caller's, id_slot null"

# --- the lock directory, in a mount namespace of our own ----------------------
# A fresh tmpfs on /run there: what cordon finds or makes in it.
in_ns() {
	unshare --mount --propagation private sh -c '
		mount -t tmpfs -o mode=0755 cordon-test /run || exit 99
		eval "$1"; shift
		"$@"; rc=$?
		ls -ldn /run/cordon /run/cordon/ids 2>&1 | awk "{ print \$1, \$3 }" >&2
		exit $rc' sh "$@"
}
if ! unshare --mount --propagation private true 2>/dev/null; then
	skip "no mount namespaces for the test"
else
	in_ns ':' "$CORDON" run -- echo ran >"$T/o" 2>"$T/e"
	ok "no /run/cordon: the run makes it" grep -q '^ran$' "$T/o"
	is "$(tr '\n' ' ' <"$T/e")" "drwx------ 0 drwx------ 0 " "... root's, mode 0700, and ids in it"
	in_ns 'mkdir -p -m 0755 /run/cordon/ids' "$CORDON" run -- echo ran >"$T/o" 2>"$T/e"
	rc=$?
	is "$rc" 125 "/run/cordon/ids open to others (0755): the run is refused"
	ok "... saying why" grep -q "'/run/cordon/ids' is unsafe for the locks of root's sandbox ids (owner 0, mode 0755)" "$T/e"
	ok "... and nothing ran" sh -c "! grep -q '^ran' '$T/o'"
	mkdir -m 0700 "$T/elsewhere"
	in_ns "mkdir -p -m 0700 /run/cordon && ln -s '$T/elsewhere' /run/cordon/ids" \
		"$CORDON" run -- echo ran >"$T/o" 2>"$T/e"
	rc=$?
	is "$rc" 125 "/run/cordon/ids as a symlink: the run is refused"
	ok "... saying so" grep -q "'ids' is a symlink, refused" "$T/e"
	in_ns 'mkdir -p -m 0700 /run/cordon/ids && chown 65534 /run/cordon' \
		"$CORDON" run -- echo ran >"$T/o" 2>"$T/e"
	is "$?" 125 "/run/cordon owned by another user: the run is refused"
	ok "... saying why" grep -q "'cordon' is unsafe on the way" "$T/e"
	in_ns 'mkdir -p -m 0700 /run/cordon/ids' "$CORDON" run -- echo ran >"$T/o" 2>"$T/e"
	ok "control: a 0700 root directory made beforehand is used" grep -q '^ran$' "$T/o"
fi

done_testing
