#!/bin/sh
# Issue 16 finding 1 (identity): a root caller's sandbox must hold no more
# than a rootless one.  It runs as an unprivileged host id of root's
# subordinate range (else 2000000000 and up; one id per concurrent run,
# 9034), never host uid 0: root-only files
# (/proc/slabinfo, mode 0400) and root's groups stay closed, and the
# caller's trees are bound through idmapped mounts so --rw still writes
# files owned by the caller.
. "${CORDON_SRC:-.}/tests/lib.sh"

# The first id a root caller's sandbox may run as (idmap.h); other root
# runs (a parallel `make check`) may hold the first slots, so a root run's
# id is any of the 1024 (or fewer, with a smaller range) from there.
root_id=$(awk -F: '($1 == "root" || $1 == "0") && $2 > 0 && $2 != 65534 && $3 > 0 { print $2; exit }' \
	/etc/subuid 2>/dev/null)
: "${root_id:=2000000000}"
# Is $1 the id the sandbox should have ($want, or for root one of its range)?
want_id() {
	case $1 in '' | *[!0-9]*) return 1 ;; esac
	if [ "$want" = root ]; then
		[ "$1" -ge "$root_id" ] && [ "$1" -lt $((root_id + 1024)) ]
	else
		[ "$1" -eq "$want" ]
	fi
}

ident() {
	who=$1
	run() { $RUN_AS "$CORDON" run -- "$@"; }
	if [ "$who" = nobody ]; then want=65534; else want=$(id -u); fi
	[ "$want" -eq 0 ] && want=root
	wname=$want
	[ "$want" = root ] && wname="of root's range ($root_id+)"

	for f in slabinfo vmallocinfo pagetypeinfo; do
		# Control: the file is there and root-only on the host.
		ok "$who: control: /proc/$f is mode 0400 root on the host" \
			sh -c "test \"\$(stat -c %a:%u /proc/$f)\" = 400:0"
		run cat "/proc/$f" >"$T/out" 2>"$T/err"
		rc=$?
		ok "$who: reading /proc/$f inside fails" test "$rc" -ne 0
		ok "$who: ... with permission denied (EACCES)" \
			grep -q "/proc/$f: Permission denied" "$T/err"
		is "$(wc -c <"$T/out" | tr -d ' ')" 0 "$who: ... and nothing of it is printed"
	done
	is "$(run head -n1 /proc/self/status | cut -f1)" "Name:" \
		"$who: positive control: a world-readable /proc file is read"

	is "$(run id -u)" 1000 "$who: inside, the sandbox's user is uid 1000"
	# The host id behind it, as the sandbox's own id map says...
	m=$(run cat /proc/self/uid_map | awk '{ print $1 ":" $2 ":" $3 }')
	u=$(echo "$m" | cut -d: -f2)
	want_id "$u" || u=none
	is "$m" "1000:$u:1" "$who: uid 1000 inside is host uid $wname"
	is "$(run cat /proc/self/gid_map | awk '{ print $1 ":" $3 }')" "1000:1" \
		"$who: one gid mapped"
	# ... and as the host sees the sandbox's processes.
	# (root: with supplementary groups, which must not reach the sandbox)
	${RUN_AS:-setpriv --groups=4,27} "$CORDON" run -- sleep 20 >/dev/null 2>&1 &
	cpid=$!
	# The command is the descendant of cordon whose argv is "sleep 20"
	# (as-nobody runs checks of its own first), init its parent.
	init= cmd= i=0
	while [ -z "$cmd" ] && [ $i -lt 200 ]; do
		pids=$cpid todo=$cpid
		while [ -n "$todo" ]; do
			next=""
			for p in $todo; do
				next="$next $(cat /proc/$p/task/*/children 2>/dev/null)"
			done
			todo=$(echo $next)
			pids="$pids $todo"
		done
		for p in $pids; do
			[ "$( (tr '\0' ' ' </proc/$p/cmdline) 2>/dev/null)" = "sleep 20 " ] && cmd=$p
		done
		[ -n "$cmd" ] && init=$(awk '/^PPid:/ { print $2 }' /proc/$cmd/status 2>/dev/null)
		[ -z "$cmd" ] && sleep 0.1
		i=$((i + 1))
	done
	sleep 0.2
	u=$(awk '/^Uid:/ { print $2 }' /proc/$cmd/status 2>/dev/null)
	want_id "$u" || u=none
	is "$(awk '/^Uid:/ { print $2 ":" $3 ":" $4 ":" $5 }' /proc/$cmd/status 2>/dev/null)" \
		"$u:$u:$u:$u" "$who: the host sees the command as uid $wname (real, effective, saved, fs)"
	is "$(awk '/^Uid:/ { print $2 ":" $3 }' /proc/$init/status 2>/dev/null)" "$u:$u" \
		"$who: ... and the sandbox's init too"
	ok "$who: ... with no supplementary groups on the host" \
		sh -c "grep -q '^Groups:[[:space:]]*\$' /proc/$cmd/status"
	# NS_GET_OWNER_UID: the per-user counts the kernel keeps for a user
	# namespace's owner are the sandbox id's, not root's.
	is "$(python3 -c 'import fcntl, os, struct, sys
fd = os.open(sys.argv[1], os.O_RDONLY)
print(struct.unpack("I", fcntl.ioctl(fd, 0xb704, bytes(4)))[0])' /proc/$cmd/ns/user 2>&1)" "$u" \
		"$who: the sandbox's user namespace is owned by that uid"
	kill_tree "$cpid"

	# The record and the plan say who the sandbox was on the host.
	$RUN_AS "$CORDON" run --json -- true >"$T/rec" 2>/dev/null
	u=$(sed -n 's/^{"run_id".*"host_uid":\([0-9]*\),.*/\1/p' "$T/rec")
	ok "$who: the --json record says host_uid $wname ($u)" want_id "$u"
	$RUN_AS "$CORDON" run --dry-run -- true >"$T/plan" 2>/dev/null
	u=$(sed -n 's/^ *"host_uid": \([0-9]*\),.*/\1/p' "$T/plan")
	ok "$who: the --dry-run plan says host_uid $wname ($u)" want_id "$u"
}
for_each_user ident

if [ "$(id -u)" -ne 0 ]; then
	skip "the rest needs root (a root caller's idmapped binds)"
	done_testing
fi

# --rw into a 0700 root-owned directory: writable inside (idmapped), and
# the file lands owned by root on the host, not by the sandbox's id.
mkdir -m 0700 "$T/private"
ok "root: --rw into a 0700 root dir: a file is created" \
	"$CORDON" run --rw "$T/private" -- sh -c "echo made > '$T/private/new'"
is "$(stat -c %u:%g "$T/private/new" 2>/dev/null)" 0:0 \
	"root: ... and it is owned by root on the host (idmapped)"
is "$("$CORDON" run --rw "$T/private" -- stat -c %u "$T/private/new")" 1000 \
	"root: ... and by uid 1000 inside"
# A 0600 root file in the working directory is readable inside.
echo private-bytes >"$T/secret600" && chmod 0600 "$T/secret600"
is "$("$CORDON" run -- cat "$T/secret600")" private-bytes \
	"root: a 0600 root file of the working directory reads inside (idmapped read-only bind)"
nok "root: ... but the working directory stays read-only" \
	"$CORDON" run -- sh -c "echo x > '$T/secret600'"
# --propose: the lower layer is idmapped too.
"$CORDON" run --propose -- sh -c "cat '$T/secret600' && echo more >> '$T/secret600'" >"$T/o" 2>&1
ok "root: --propose reads the 0600 root file through its idmapped lower layer" \
	grep -q '^private-bytes$' "$T/o"
is "$(cat "$T/secret600")" private-bytes "root: ... and the real tree is untouched"
# A system file owned by root and not readable by others stays closed: the
# system binds are plain, root's files look like nobody's.
"$CORDON" run -- stat -c %u /usr/bin/env >"$T/o" 2>&1
is "$(cat "$T/o")" 65534 "root: /usr stays a plain bind: root's files look like nobody's inside"
# --scratch DIR and workspace-write: writes land owned by root as well.
mkdir -m 0700 "$T/scr"
ok "root: --scratch DIR (0700 root) is writable" \
	"$CORDON" run --scratch "$T/scr" -- sh -c 'echo s > "$HOME/s"'
is "$(stat -c %u "$T/scr/s" 2>/dev/null)" 0 "root: ... the file is root's on the host"

# A writable tree on a filesystem that cannot be idmapped refuses the run
# (fail closed); a read-only one falls back to a plain bind.  /proc is such
# a filesystem.
"$CORDON" run --rw /proc/self/fdinfo:/mnt/x -- true >"$T/o" 2>&1
rc=$?
ok "root: --rw of a tree that cannot be idmapped refuses the run" test "$rc" -eq 125
ok "root: ... saying why" grep -q "cannot be idmapped" "$T/o"
"$CORDON" run --json --ro /proc/sys/kernel:/mnt/k -- cat /mnt/k/ostype >"$T/o" 2>&1
ok "root: a read-only one is bound plain instead (world-readable files read)" \
	grep -q '^Linux$' "$T/o"
ok "root: ... and the record counts it" grep -q '"plain_binds":1,' "$T/o"

done_testing
