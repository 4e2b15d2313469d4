#!/bin/sh
# THREATS row 2: overwrite the launcher through /proc/<pid>/exe or
# /proc/<pid>/mem (CVE-2019-5736).  Pid 1 inside is cordon's own init: it is
# non-dumpable, so its exe, mem, root, cwd and fds are closed to the
# command; ptrace and process_vm_* are refused (counted); the launcher's
# host path is not even visible.
. "${CORDON_SRC:-.}/tests/lib.sh"
H=$CORDON_BUILD/tests/helpers

exemem() {
	who=$1
	run() { $RUN_AS "$CORDON" run --ro "$H" -- "$@"; }
	is "$(run "$H/esc-probe" open-write /proc/1/exe)" "open-write=EACCES" "$who: /proc/1/exe cannot be opened for writing"
	is "$(run "$H/esc-probe" open-write /proc/1/mem)" "open-write=EACCES" "$who: /proc/1/mem cannot be opened for writing"
	is "$(run "$H/esc-probe" open-read /proc/1/mem)" "open-read=EACCES" "$who: /proc/1/mem cannot be read"
	is "$(run "$H/esc-probe" open-read /proc/1/exe)" "open-read=EACCES" "$who: /proc/1/exe cannot even be read"
	for l in exe root cwd; do
		refused "$who: /proc/1/$l cannot be followed (EACCES)" "cannot access '/proc/1/$l/': Permission denied" \
			run sh -c "readlink /proc/1/$l || ls /proc/1/$l/"
	done
	# As root the fd numbers can be listed (the sandbox user is the
	# invoker), but never followed.
	refused "$who: the fds of pid 1 cannot be followed (EACCES)" "^cat: '?/proc/1/fd/.*: Permission denied" \
		run sh -c 'for f in /proc/1/fd/*; do readlink "$f" && exit 0; cat "$f" </dev/null && exit 0; done; exit 1'
	for f in environ maps; do
		refused "$who: /proc/1/$f cannot be read (EACCES)" "^cat: /proc/1/$f: Permission denied" run cat /proc/1/$f
	done
	# Control: the command's own entries are open to it.
	ok "$who: control: the command's own exe, root, cwd, fds, environ and maps can be read" \
		run sh -c 'readlink /proc/self/exe && ls /proc/self/root/ /proc/self/cwd/ && readlink /proc/self/fd/1 && cat /proc/self/environ /proc/self/maps'
	is "$(run grep -E '^Name:' /proc/1/status | tr -d '\t')" "Name:cordon" "$who: pid 1 really is cordon's init"
	# The command's own exe: its binary is on a read-only bind.
	# EROFS, ETXTBSY (a running binary) or EACCES (not the owner), never ok.
	is "$(run "$H/esc-probe" open-write /proc/self/exe | sed -E 's/=(EROFS|ETXTBSY|EACCES)$/=refused/')" \
		"open-write=refused" "$who: the command's own /proc/self/exe cannot be opened for writing"
	refused "$who: /usr/bin/sh cannot be opened for writing through /proc/self/exe" \
		'cannot create /proc/self/exe: (Text file busy|Permission denied|Read-only file system)' \
		run sh -c 'exec 3>>/proc/self/exe'
	ok "$who: control: a file in scratch can be opened for appending the same way" run sh -c 'exec 3>>/tmp/x'
	# ptrace and process_vm_readv of cordon's init are refused and counted.
	is "$($RUN_AS "$CORDON" run --json-fd 3 --ro "$H" -- "$H/esc-probe" ptrace 1 3>"$T/rec")" \
		"ptrace-attach=EPERM
ptrace-seize=EPERM" "$who: ptrace of pid 1 is refused"
	is "$(denied_names "$T/rec")" ptrace "$who: the record names ptrace"
	is "$($RUN_AS "$CORDON" run --json-fd 3 --ro "$H" -- "$H/esc-probe" vm-read 1 3>"$T/rec")" \
		"vm-read=EPERM" "$who: process_vm_readv of pid 1 is refused"
	is "$(denied_names "$T/rec")" process_vm_readv "$who: the record names process_vm_readv"
	# The launcher itself is not reachable by its host path.
	absent_in "$who: the cordon binary's host path is not visible" "$CORDON" run
	before=$(sha256sum <"$CORDON")
	for p in /proc/1/exe "/proc/1/root$CORDON"; do
		refused "$who: appending to the launcher through $p is refused (EACCES)" "cannot create $p: Permission denied" \
			run sh -c "echo x >> $p"
	done
	ok_if_ran "$who: the launcher on the host is unchanged" "$T/.ok.out" 'Permission denied' \
		test "$(sha256sum <"$CORDON")" = "$before"
}

for_each_user exemem
done_testing
