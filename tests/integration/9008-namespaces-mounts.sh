#!/bin/sh
# THREATS row 8: new namespaces inside (unshare -U/-m, clone(CLONE_NEW*),
# clone3, setns), mounts, pivot_root, chroot.  All refused and counted;
# clone3 gives ENOSYS (uncounted) so libc falls back to clone, where the
# flags are checked.
. "${CORDON_SRC:-.}/tests/lib.sh"
H=$CORDON_BUILD/tests/helpers

probes="unshare-user unshare-mount unshare-net clone-newuser clone-newns clone-newpid setns mount umount2 pivot_root chroot fsopen open_tree"

ns() {
	who=$1
	# shellcheck disable=SC2086
	$RUN_AS "$CORDON" run --json-fd 3 --ro "$H" -- "$H/try-syscall" $probes clone3 fork thread unshare-files >"$T/out" 3>"$T/rec"
	for p in $probes; do
		ok "$who: $p is refused with EPERM" grep -qx "$p errno=EPERM" "$T/out"
	done
	ok "$who: clone3 gives ENOSYS" grep -qx "clone3 errno=ENOSYS" "$T/out"
	ok "$who: plain fork still works" grep -qx "fork ok" "$T/out"
	ok "$who: threads still work" grep -qx "thread ok" "$T/out"
	ok "$who: unshare(CLONE_FILES) (no namespace) still works" grep -qx "unshare-files ok" "$T/out"
	is "$(denied_names "$T/rec")" "chroot clone fsopen mount open_tree pivot_root setns umount2 unshare" \
		"$who: the record names every refused call (clone3 is not counted)"

	# The real tools.
	for cmd in "unshare -U true" "unshare -r true" "unshare -m true" "unshare -n true" "unshare -p -f true" \
		"chroot / true" "mount -t tmpfs none /tmp" "mount --bind /tmp /usr"; do
		# shellcheck disable=SC2086
		$RUN_AS "$CORDON" run --json-fd 3 -- $cmd >/dev/null 2>"$T/err" 3>"$T/rec"
		rc=$?
		ok "$who: '$cmd' fails (exit $rc) with EPERM" sh -c "test $rc -ne 0 && grep -qE 'Operation not permitted|must be superuser' '$T/err'"
		ok "$who: '$cmd' is visible in the record ($(denied_names "$T/rec"))" test -n "$(denied_names "$T/rec")"
	done
	# The attempt and its result in the same namespace: unshare -m itself is
	# refused, so no tmpfs ever covers /usr and nothing is written there.
	refused "$who: unshare -m then a tmpfs over /usr is refused at the unshare (EPERM)" \
		'^unshare: unshare failed: Operation not permitted$' \
		$RUN_AS "$CORDON" run -- sh -c 'unshare -m sh -c "mount -t tmpfs none /usr && touch /usr/x && echo inner-wrote"'
	refused "$who: /usr is still the read-only bind afterwards" "cannot touch '/usr/x': Read-only file system" \
		$RUN_AS "$CORDON" run -- sh -c 'unshare -m true; touch /usr/x'
	ok "$who: control: scratch is writable in the same run" $RUN_AS "$CORDON" run -- sh -c 'unshare -m true; touch /tmp/x'
	# Control: outside, unshare -U works on this kernel (so the refusal
	# inside is cordon's).
	ok "control: unshare -U works outside the sandbox" $RUN_AS unshare -U true
}

for_each_user ns
done_testing
