#!/bin/sh
# THREATS row 2: overwrite the launcher through /proc/<pid>/exe or
# /proc/<pid>/mem (CVE-2019-5736).  Pid 1 inside is cordon's own init: it is
# non-dumpable, so its exe, mem, root, cwd and fds are closed to the
# command; ptrace and process_vm_* are refused (counted); the launcher's
# host path is not even visible.
. "${CORDON_SRC:-.}/tests/lib.sh"
H=$CORDON_BUILD/tests/helpers

denied() {
	python3 -c 'import json,sys
r = json.load(open(sys.argv[1]))
print(" ".join(sorted(set(d["syscall"] for d in r.get("denied_syscalls") or []))))' "$1"
}

exemem() {
	who=$1
	run() { $RUN_AS "$CORDON" run --ro "$H" -- "$@"; }
	is "$(run "$H/esc-probe" open-write /proc/1/exe)" "open-write=EACCES" "$who: /proc/1/exe cannot be opened for writing"
	is "$(run "$H/esc-probe" open-write /proc/1/mem)" "open-write=EACCES" "$who: /proc/1/mem cannot be opened for writing"
	is "$(run "$H/esc-probe" open-read /proc/1/mem)" "open-read=EACCES" "$who: /proc/1/mem cannot be read"
	is "$(run "$H/esc-probe" open-read /proc/1/exe)" "open-read=EACCES" "$who: /proc/1/exe cannot even be read"
	for l in exe root cwd; do
		nok "$who: /proc/1/$l cannot be followed" run sh -c "readlink /proc/1/$l || ls /proc/1/$l/"
	done
	# As root the fd numbers can be listed (the sandbox user is the
	# invoker), but never followed.
	nok "$who: the fds of pid 1 cannot be followed" run sh -c 'for f in /proc/1/fd/*; do readlink "$f" && exit 0; cat "$f" </dev/null && exit 0; done; exit 1'
	for f in environ maps; do
		nok "$who: /proc/1/$f cannot be read" run cat /proc/1/$f
	done
	is "$(run grep -E '^Name:' /proc/1/status | tr -d '\t')" "Name:cordon" "$who: pid 1 really is cordon's init"
	# The command's own exe: its binary is on a read-only bind.
	# EROFS, ETXTBSY (a running binary) or EACCES (not the owner), never ok.
	is "$(run "$H/esc-probe" open-write /proc/self/exe | sed -E 's/=(EROFS|ETXTBSY|EACCES)$/=refused/')" \
		"open-write=refused" "$who: the command's own /proc/self/exe cannot be opened for writing"
	nok "$who: /usr/bin/sh cannot be opened for writing through /proc/self/exe" \
		run sh -c 'exec 3>>/proc/self/exe'
	# ptrace and process_vm_readv of cordon's init are refused and counted.
	is "$($RUN_AS "$CORDON" run --json-fd 3 --ro "$H" -- "$H/esc-probe" ptrace 1 3>"$T/rec")" \
		"ptrace-attach=EPERM
ptrace-seize=EPERM" "$who: ptrace of pid 1 is refused"
	is "$(denied "$T/rec")" ptrace "$who: the record names ptrace"
	is "$($RUN_AS "$CORDON" run --json-fd 3 --ro "$H" -- "$H/esc-probe" vm-read 1 3>"$T/rec")" \
		"vm-read=EPERM" "$who: process_vm_readv of pid 1 is refused"
	is "$(denied "$T/rec")" process_vm_readv "$who: the record names process_vm_readv"
	# The launcher itself is not reachable by its host path.
	nok "$who: the cordon binary's host path is not visible" run test -e "$CORDON"
	before=$(sha256sum <"$CORDON")
	run sh -c 'for p in /proc/1/exe /proc/1/root/'"$CORDON"'; do echo x >> $p; done' 2>/dev/null
	is "$(sha256sum <"$CORDON")" "$before" "$who: the launcher on the host is unchanged"
}

for_each_user exemem
done_testing
