#!/bin/sh
# Issue 16, finding 1 (and finding 4's io_setup): no non-directory file the
# sandbox creates or changes on the host carries S_ISUID or S_ISGID,
# whatever the route: chmod/fchmodat/fchmodat2, a mode given to
# open/openat (O_CREAT, O_TMPFILE) or mknod, openat2 (ENOSYS: its mode is
# out of the filter's sight), install -m, tar -xp, cp --preserve=mode, file
# capabilities through security.capability.  Each refusal is counted in the
# run's record; the host's own view (stat from outside) decides.  Controls:
# plain modes, a directory inheriting S_ISGID, a normal tar -xp, user.*
# xattrs.  As root and as nobody; --rw, --profile workspace-write, --propose.
# About 50 sandbox runs: more than the default two minutes on a busy host.
CORDON_TEST_TIMEOUT=${CORDON_TEST_TIMEOUT:-300}
. "${CORDON_SRC:-.}/tests/lib.sh"

PY=/usr/bin/python3
[ -x $PY ] || { skip "no $PY"; done_testing; }

# Fixtures, made on the host: a setuid source file, an archive whose member
# is setuid+setgid, a normal archive, and the probe script.
F=$T/fix
mkdir -p "$F/src"
printf '#!/bin/sh\necho hi\n' >"$F/src/prog"
chmod 0755 "$F/src/prog"
tar --mode=6755 -cf "$F/suid.tar" -C "$F/src" prog
tar -cf "$F/plain.tar" -C "$F/src" prog
cp "$F/src/prog" "$F/suid-src" && chmod 4755 "$F/suid-src"
cat >"$F/p.py" <<'PYEOF'
import ctypes, errno, os, stat, struct, sys
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
def sc(*a):
    r = libc.syscall(*[ctypes.c_long(x) if isinstance(x, int) else x for x in a])
    return 0 if r >= 0 else -ctypes.get_errno()
def say(what, r):
    print("%s=%s" % (what, "ok" if r >= 0 else errno.errorcode[-r]))
def call(what, f):
    try:
        f(); say(what, 0)
    except OSError as e:
        say(what, -e.errno)
AT_FDCWD = -100
op, name = sys.argv[1], sys.argv[2] if len(sys.argv) > 2 else ""
if op == "fchmodat2":
    say(op, sc(452, AT_FDCWD, name.encode(), 0o4755, 0))
elif op == "open":
    call(op, lambda: os.close(os.open(name, os.O_CREAT | os.O_WRONLY, 0o4755)))
elif op == "tmpfile":
    call(op, lambda: os.close(os.open(".", os.O_TMPFILE | os.O_WRONLY, 0o2755)))
elif op == "mknod":
    call(op, lambda: os.mknod(name, stat.S_IFREG | 0o4755))
elif op == "openat2":
    how = struct.pack("<QQQ", os.O_CREAT | os.O_WRONLY, 0o4755, 0)
    say(op, sc(437, AT_FDCWD, name.encode(), ctypes.c_char_p(how), 24))
elif op == "setcap":
    # VFS_CAP_REVISION_2, effective, CAP_SETUID permitted
    blob = struct.pack("<5I", 0x02000001, 1 << 7, 0, 0, 0)
    call(op, lambda: os.setxattr(name, "security.capability", blob))
elif op == "setuser":
    call(op, lambda: os.setxattr(name, "user.cordon", b"x"))
elif op == "io_setup":
    ctx = ctypes.c_ulong(0)
    r = sc(206, 1, ctypes.byref(ctx))
    say(op, r)
    if r == 0:
        sc(207, ctx.value)
PYEOF
cat >"$F/attack.sh" <<'SHEOF'
# attack.sh DIR NAME...: try each route in DIR; one line per route.
cd "$1" || exit 9
shift
p() { /usr/bin/python3 "$(dirname "$0")/p.py" "$@"; }
r() { "$@" >/dev/null 2>"/tmp/err.$$"; echo "$what=$? $(grep -c 'Operation not permitted' "/tmp/err.$$")"; }
for what in "$@"; do
	case $what in
	chmod4755) touch a && r chmod 4755 a ;;
	chmodgs) touch b && r chmod g+s b ;;
	chmod6755) touch c && r chmod 6755 c ;;
	fchmodat2) touch d && p fchmodat2 d ;;
	install) r install -m 4755 /bin/true e ;;
	tar) r tar -xpf "$(dirname "$0")/suid.tar" ;;
	cp) r cp --preserve=mode "$(dirname "$0")/suid-src" g ;;
	cp-passwd) r cp -p /usr/bin/passwd h ;;
	open) p open i ;;
	tmpfile) p tmpfile ;;
	mknod) p mknod j ;;
	openat2) p openat2 l ;;
	setcap) touch m && p setcap m ;;
	io_setup) p io_setup ;;
	# controls
	plain) touch n && chmod 755 n && chmod 644 n && echo plain=ok ;;
	sgdir) mkdir sg/sub && touch sg/file && echo sgdir=ok ;;
	plaintar) mkdir pt && tar -xpf "$(dirname "$0")/plain.tar" -C pt && echo plaintar=ok ;;
	setuser) touch o && p setuser o ;;
	esac
done
SHEOF
chmod -R a+rX "$F"

# The nrs refused in the record of $1: "nr count" lines.
denied() {
	$PY -c 'import json,sys
r = json.load(open(sys.argv[1]))
for d in r.get("denied_syscalls") or []: print(d.get("nr", -1), d["count"])' "$1"
}
# Refusals of syscall numbers $2... in record $1.
count_of() {
	rec=$1
	shift
	denied "$rec" | awk -v want=" $* " 'index(want, " " $1 " ") { n += $2 } END { print n + 0 }'
}
# Non-directories with S_ISUID/S_ISGID, and file capabilities, under $1 (host view).
setid_files() {
	find "$1" ! -type d -perm /6000 -printf '%p %m\n'
	getcap -r "$1" 2>/dev/null
}

MODE_NRS="2 85 90 91 133 257 259 268 452" # open creat chmod fchmod mknod openat mknodat fchmodat fchmodat2

# One attack per run, --rw DIR: what it printed, that its refusal is counted,
# and that the host sees no setid file.
attack() {
	who=$1 name=$2 want=$3 nrs=$4
	$RUN_AS "$CORDON" run --json-fd 3 --ro "$F" --rw "$D" -- sh "$F/attack.sh" "$D" "$name" >"$T/out" 2>"$T/err" 3>"$T/rec"
	is "$(cat "$T/out")" "$want" "$who: $name is refused ($want)"
	# shellcheck disable=SC2086 # $nrs is a list
	ok "$who: the record counts the refusal of $name" test "$(count_of "$T/rec" $nrs)" -ge 1
	is "$(setid_files "$D")" "" "$who: after $name, no setid file or file capability on the host"
}

rw_user() {
	who=$1
	D=$T/rw-$who
	mkdir -p "$D/sg" "$T/cwd-$who"
	[ -n "$RUN_AS" ] && chown -R 65534:65534 "$D"
	chmod 2775 "$D/sg"
	cd "$T/cwd-$who" || exit 1
	# 1 = the tool failed, then the number of EPERM messages it printed.
	attack "$who" chmod4755 "chmod4755=1 1" "$MODE_NRS"
	attack "$who" chmodgs "chmodgs=1 1" "$MODE_NRS"
	attack "$who" chmod6755 "chmod6755=1 1" "$MODE_NRS"
	attack "$who" fchmodat2 "fchmodat2=EPERM" 452
	attack "$who" install "install=1 1" "$MODE_NRS"
	attack "$who" tar "tar=2 1" "$MODE_NRS"
	attack "$who" cp "cp=1 1" "$MODE_NRS"
	# cp -p of a file the sandbox user does not own drops the bits itself
	# (it cannot keep the owner); of one it owns, it tries: refused.
	if [ -u /usr/bin/passwd ]; then
		$RUN_AS "$CORDON" run --json-fd 3 --ro "$F" --rw "$D" -- sh "$F/attack.sh" "$D" cp-passwd >"$T/out" 2>"$T/err" 3>"$T/rec"
		# shellcheck disable=SC2086 # a list
		case "$(cat "$T/out") $(count_of "$T/rec" $MODE_NRS)" in
		"cp-passwd=1 1 1" | "cp-passwd=0 0 0") ok "$who: cp -p /usr/bin/passwd: refused and counted, or the bits dropped by cp" true ;;
		*) ok "$who: cp -p /usr/bin/passwd: unexpected $(cat "$T/out"), $(count_of "$T/rec" $MODE_NRS) counted" false ;;
		esac
		is "$(setid_files "$D")" "" "$who: after cp -p /usr/bin/passwd, no setid file on the host"
	else
		skip "$who: no setuid /usr/bin/passwd"
	fi
	attack "$who" open "open=EPERM" "2 257"
	attack "$who" tmpfile "tmpfile=EPERM" "2 257"
	attack "$who" mknod "mknod=EPERM" "133 259"
	attack "$who" openat2 "openat2=ENOSYS" 437
	nok "$who: openat2 created nothing" test -e "$D/l"
	nok "$who: open(O_CREAT, 04755) created nothing" test -e "$D/i"
	# File capabilities: the kernel refuses security.capability to a process
	# without CAP_SETFCAP (not seccomp: no count, the host view decides).
	$RUN_AS "$CORDON" run --ro "$F" --rw "$D" -- sh "$F/attack.sh" "$D" setcap >"$T/out" 2>&1
	is "$(cat "$T/out")" "setcap=EPERM" "$who: setxattr security.capability is refused (EPERM)"
	$RUN_AS "$CORDON" run --rw "$D" -- sh -c "cd '$D' && touch q && /usr/sbin/setcap cap_setuid+ep q" >"$T/out" 2>&1
	is "$?" 1 "$who: setcap(8) fails"
	is "$(getcap "$D/q" "$D/m")" "" "$who: the host sees no file capability"
	# What got through is plain: the files exist without the bits.
	is "$(stat -c %a "$D/a" "$D/b" "$D/c" "$D/d" "$D/e" "$D/g" "$D/prog")" "644
644
644
644
600
755
755" "$who: the targets kept plain modes (touch's 644, install's 600; cp, tar without the bits)"

	# Controls: plain modes, S_ISGID inherited by a directory, a normal
	# archive, user xattrs; no refusal counted.
	$RUN_AS "$CORDON" run --json-fd 3 --ro "$F" --rw "$D" -- sh "$F/attack.sh" "$D" plain sgdir plaintar setuser >"$T/out" 2>"$T/err" 3>"$T/rec"
	is "$(cat "$T/out")" "plain=ok
sgdir=ok
plaintar=ok
setuser=ok" "$who: plain chmod, mkdir in a setgid dir, tar -xp, user.* xattr work"
	is "$(denied "$T/rec")" "" "$who: and nothing was refused"
	is "$(stat -c %a "$D/n" "$D/pt/prog")" "644
755" "$who: chmod 755/644 and tar -xp modes reached the host"
	is "$(stat -c %A "$D/sg/sub" | cut -c7)" s "$who: a directory made in a setgid directory inherits S_ISGID"
	is "$(stat -c %a "$D/sg/file")" 644 "$who: a file made there does not"
	is "$($PY -c 'import os,sys; print(os.getxattr(sys.argv[1], "user.cordon").decode())' "$D/o" 2>&1)" x \
		"$who: the user.* xattr reached the host"
	cd "$T" || exit 1
}

# io_setup: refused (ENOSYS), counted; the host's io_setup works during and after.
aio_user() {
	who=$1
	cd "$T" || exit 1
	is "$($PY "$F/p.py" io_setup)" "io_setup=ok" "$who: control: the host's io_setup works"
	$RUN_AS "$CORDON" run --json-fd 3 --ro "$F" -- sh -c "$PY '$F/p.py' io_setup; $PY '$F/p.py' io_setup" >"$T/out" 2>&1 3>"$T/rec"
	is "$(cat "$T/out")" "io_setup=ENOSYS
io_setup=ENOSYS" "$who: io_setup is refused with ENOSYS (libaio falls back)"
	is "$(count_of "$T/rec" 206)" 2 "$who: the record counts both io_setup refusals"
	is "$($PY "$F/p.py" io_setup)" "io_setup=ok" "$who: the host's io_setup still works after"
	$RUN_AS "$CORDON" run --ro "$F" -- sh -c "$PY '$F/p.py' io_setup; sleep 2" >/dev/null 2>&1 &
	run=$!
	sleep 1
	is "$($PY "$F/p.py" io_setup)" "io_setup=ok" "$who: and during a run"
	wait $run
}

ALL="chmod4755 chmodgs chmod6755 fchmodat2 install tar cp open tmpfile mknod openat2 setcap"
ALL_OUT="chmod4755=1 1
chmodgs=1 1
chmod6755=1 1
fchmodat2=EPERM
install=1 1
tar=2 1
cp=1 1
open=EPERM
tmpfile=EPERM
mknod=EPERM
openat2=ENOSYS
setcap=EPERM"

# Every route in one run: in the workspace of workspace-write and
# --propose, and in the default profile's scratch kept on the host.
ws_user() {
	who=$1
	for prof in workspace-write propose scratch; do
		w=$T/ws-$prof-$who
		mkdir -p "$w"
		[ -n "$RUN_AS" ] && chown 65534:65534 "$w"
		cd "$w" || exit 1
		in=.
		case $prof in
		propose) set -- --propose ;;
		scratch)
			set -- --scratch "$w"
			in=/tmp/x
			cd "$T" || exit 1
			;;
		*) set -- --profile workspace-write ;;
		esac
		# shellcheck disable=SC2086
		$RUN_AS "$CORDON" run --json-fd 3 --ro "$F" "$@" -- sh -c "mkdir -p $in && sh '$F/attack.sh' $in $ALL; find $in ! -type d -perm /6000" \
			>"$T/out" 2>"$T/err" 3>"$T/rec"
		if [ $prof = propose ] && grep -q overlay "$T/err"; then
			skip "$who: overlayfs in a user namespace is not available"
			continue
		fi
		is "$(cat "$T/out")" "$ALL_OUT" "$who: $prof: every route is refused, and the sandbox sees no setid file"
		# shellcheck disable=SC2086 # a list
		ok "$who: $prof: the record counts at least 11 mode refusals" \
			test "$(count_of "$T/rec" $MODE_NRS 437)" -ge 11
		is "$(count_of "$T/rec" 452)" 1 "$who: $prof: fchmodat2 counted"
		is "$(count_of "$T/rec" 437)" 1 "$who: $prof: openat2 counted"
		is "$(setid_files "$w")" "" "$who: $prof: no setid file on the host"
	done
	cd "$T" || exit 1
}

# The raw calls of syscall-probes.h (a path that does not exist, so nothing
# is made even when a call gets through), junk in the mode's upper half
# included: each refusal with its errno and its count, each plain mode
# reaching the kernel (ENOENT).
probe_user() {
	who=$1
	H=$CORDON_BUILD/tests/helpers
	cd "$T" || exit 1
	$RUN_AS "$CORDON" run --json-fd 3 --ro "$H" -- "$H/try-syscall" chmod-setuid chmod-setgid-high \
		fchmod-setuid fchmodat-setgid fchmodat2-setuid open-creat-setuid openat-creat-setgid-high \
		openat-tmpfile-setuid creat-setuid mknod-setuid mknodat-setgid openat2 io_setup \
		chmod-plain-high fchmodat-plain openat-creat-plain openat-nocreat-setuid mknodat-fifo mkdir-setid \
		>"$T/out" 2>&1 3>"$T/rec"
	is "$(cat "$T/out")" "chmod-setuid errno=EPERM
chmod-setgid-high errno=EPERM
fchmod-setuid errno=EPERM
fchmodat-setgid errno=EPERM
fchmodat2-setuid errno=EPERM
open-creat-setuid errno=EPERM
openat-creat-setgid-high errno=EPERM
openat-tmpfile-setuid errno=EPERM
creat-setuid errno=EPERM
mknod-setuid errno=EPERM
mknodat-setgid errno=EPERM
openat2 errno=ENOSYS
io_setup errno=ENOSYS
chmod-plain-high errno=ENOENT
fchmodat-plain errno=ENOENT
openat-creat-plain errno=ENOENT
openat-nocreat-setuid ok
mknodat-fifo errno=ENOENT
mkdir-setid errno=ENOENT" "$who: raw calls: S_ISUID/S_ISGID modes refused (junk above too), plain ones reach the kernel"
	is "$(denied "$T/rec" | LC_ALL=C sort -n | tr '\n' ' ')" "2 1 85 1 90 2 91 1 133 1 206 1 257 2 259 1 268 1 437 1 452 1 " \
		"$who: the record counts each refused call by number"
}

for_each_user probe_user
for_each_user rw_user
for_each_user aio_user
for_each_user ws_user
done_testing
