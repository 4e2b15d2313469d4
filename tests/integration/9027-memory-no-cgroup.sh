#!/bin/sh
# Issue 16 finding 5: --memory without a writable cgroup.  The rlimit
# fallback counts only a process's own mappings, so memory held elsewhere —
# memfds, System V shared memory, tmpfs scratch and /dev/shm — must count
# against --memory or be refused, and the record must say the cap is
# approximate.  Rootless (nobody: no cgroup is writable here) is the case;
# as root the cgroup enforces, and memfd stays allowed (the control).
. "${CORDON_SRC:-.}/tests/lib.sh"
H=$CORDON_BUILD/tests/helpers
P=$H/kobj-probe

field() { python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); v=r
for k in sys.argv[2].split("."): v=v[k]
print(v)' "$1" "$2"; }
denied() { python3 -c 'import json,sys; r=json.load(open(sys.argv[1]))
print(sum(d["count"] for d in r.get("denied_syscalls", []) if d["syscall"] == sys.argv[2]))' "$1" "$2"; }

mem() {
	who=$1

	$RUN_AS "$CORDON" run --json-fd 3 --memory 64M --ro "$H" -- "$P" memfd 256 0 3>"$T/rec" >"$T/out" 2>"$T/err"
	by=$(field "$T/rec" limits.memory_by)
	if [ "$by" = rlimit ]; then
		is "$(cat "$T/out")" "memfd=0 EPERM" "$who: without a cgroup memfd_create is refused (EPERM)"
		is "$(denied "$T/rec" memfd_create)" 1 "$who: the record counts the refused memfd_create"
		is "$(field "$T/rec" limits.memory_cap)" approximate "$who: the record says the memory cap is approximate"
		ok "$who: a one-line warning says the cap is approximate" grep -q 'memory.*approximate' "$T/err"

		# Shared anonymous memory: RLIMIT_DATA does not count it.
		$RUN_AS "$CORDON" run --json-fd 3 --memory 64M -- python3 -c '
import mmap
try:
    m = mmap.mmap(-1, 256 << 20, mmap.MAP_SHARED)
    print("shared-anon ok")
except OSError as e:
    print("shared-anon", e.strerror)
m = mmap.mmap(-1, 16 << 20, mmap.MAP_PRIVATE)
print("private-anon ok")' 3>"$T/rec" >"$T/out" 2>"$T/err"
		is "$(cat "$T/out" | tr '\n' ' ')" "shared-anon Operation not permitted private-anon ok " \
			"$who: without a cgroup shared anonymous mmap is refused (EPERM), private stays allowed"
		is "$(denied "$T/rec" mmap)" 1 "$who: the record counts the refused mmap"
		$RUN_AS "$CORDON" run --json-fd 3 --memory 64M --ro "$H" -- "$P" sysv-shm 256 0 3>"$T/rec" >"$T/out" 2>"$T/err"
		is "$(cat "$T/out")" "sysv-shm=0 EPERM" "$who: without a cgroup System V shared memory is refused (EPERM)"
		is "$(denied "$T/rec" shmget)" 1 "$who: the record counts the refused shmget"
	else
		is "$(field "$T/rec" reason)" memory "$who: the cgroup ($by) killed the run holding 256 MB of memfds at --memory 64M"
		is "$(field "$T/rec" limits.memory_cap)" enforced "$who: the record says the memory cap is enforced"
		$RUN_AS "$CORDON" run --memory 64M --ro "$H" -- "$P" memfd 16 0 >"$T/out" 2>"$T/err"
		is "$(cat "$T/out")" "memfd=16 ok" "$who: with a cgroup memfd_create stays allowed (control)"
	fi

	# The scratch (and /dev/shm, a link to it) is no larger than --memory:
	# ENOSPC, or with a cgroup possibly the OOM killer first (tmpfs pages
	# are charged to it).
	for f in /tmp/big /dev/shm/big; do
		$RUN_AS "$CORDON" run --json-fd 3 --memory 64M --ro "$H" -- "$P" file $f 256 3>"$T/rec" >"$T/out" 2>"$T/err"
		got="$(cat "$T/out")"
		[ -z "$got" ] && [ "$by" != rlimit ] && got="reason $(field "$T/rec" reason)"
		[ "$got" = "reason memory" ] && got="file=0 ENOSPC"
		is "$got" "file=0 ENOSPC" "$who: 256 MB in $f at --memory 64M: ENOSPC (or the OOM killer)"
	done
	$RUN_AS "$CORDON" run --memory 64M --ro "$H" -- "$P" file /tmp/ok 32 >"$T/out" 2>"$T/err"
	is "$(cat "$T/out")" "file=32 ok" "$who: 32 MB in scratch at --memory 64M works (control)"

	$RUN_AS "$CORDON" run --scratch-size 999T -- true >"$T/out" 2>"$T/err"
	rc=$?
	ok "$who: --scratch-size 999T is refused (exit $rc)" test "$rc" -ne 0
	ok "$who: with one clear line naming --scratch-size and --memory" \
		sh -c "test \$(wc -l <'$T/err') -eq 1 && grep -q -- '--scratch-size.*--memory' '$T/err'"
	$RUN_AS "$CORDON" run --memory 64M --scratch-size 128M -- true >"$T/out" 2>"$T/err"
	ok "$who: --scratch-size above --memory is refused" grep -q -- '--scratch-size.*--memory' "$T/err"
	$RUN_AS "$CORDON" run --memory 64M --propose --propose-size 128M -- true >"$T/out" 2>"$T/err"
	ok "$who: --propose-size above --memory is refused" grep -q -- '--propose-size.*--memory' "$T/err"
	s=$($RUN_AS "$CORDON" run --dry-run --memory 64M -- true | python3 -c 'import json,sys; print(json.load(sys.stdin)["limits"]["scratch_size"])')
	is "$s" 67108864 "$who: the default scratch size is clamped to --memory 64M"
}

for_each_user mem
done_testing
