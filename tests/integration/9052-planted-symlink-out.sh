#!/bin/sh
# Issue 16 (session 6 attacker, finding 3): a symlink out of the checked
# trees.  The check after the run never follows a symlink, and the
# --scratch DIR (the sandbox's own, its /tmp) is not checked, so `ln -s
# ../scr/e vendor` in the working tree plus `git init /tmp/e` with a
# planted core.fsmonitor left a repository the host's git ran from
# `vendor`, and planted_paths was empty.  Afterwards a new symlink in a checked tree
# (the workspace-write working tree, a --rw directory) that leads to a
# directory outside the checked trees, or to nothing yet, is reported in
# planted_paths with a warning.  Controls: links that stay inside the
# tree, a link to a file outside it, a link into a --rw tree, a link that
# was there before the run, and a run that plants nothing are not
# reported; a link replaced during the run is; --propose never applies a
# symlink.  As root and as nobody.
: "${CORDON_TEST_TIMEOUT:=300}"
export CORDON_TEST_TIMEOUT
. "${CORDON_SRC:-.}/tests/lib.sh"

command -v git >/dev/null || { skip "git is not installed"; done_testing; }

links() {
	who=$1
	d=$T/ln-$who
	mkdir -p "$d/work/sub/x" "$d/scr" "$d/out" "$d/rwin/pkg"
	[ -n "$RUN_AS" ] && chown -R 65534:65534 "$d"
	$RUN_AS git init -q "$d/work"
	$RUN_AS ln -s ../scr "$d/work/old"
	sleep 1.1 # older than the check's 1 s guard: only the run's changes count
	cd "$d/work" || exit 1
	$RUN_AS "$CORDON" run --profile workspace-write --scratch "$d/scr" --rw "$d/out" \
		--rw "$d/rwin" --json-fd 3 -- sh -c "
		git init -q /tmp/e &&
		printf '[core]\\n\\tfsmonitor = \"touch %s; false\"\\n' '$d/MARK' >>/tmp/e/.git/config &&
		ln -s ../scr/e vendor && ln -s $d/scr/e sub/abs && ln -s ../scr/later dangling &&
		ln -s ../scr/e '$d/out/v' &&
		ln -s x sub/inside && ln -s ../work/sub up && ln -s /bin/sh sh-link &&
		ln -s '$d/rwin/pkg' rw-link && touch old-dir-changed" \
		3>"$T/rec" 2>"$T/err"
	is "$?" 0 "$who: the run exits 0"
	rm -f "$d/MARK"
	$RUN_AS sh -c 'cd "$1" && git status' x "$d/work/vendor" >/dev/null 2>&1
	ok "$who: control: the host's git in vendor/ runs what the sandbox planted through the link" \
		test -e "$d/MARK"
	got=" $(planted_paths) "
	for p in vendor sub/abs dangling "$d/out/v"; do
		case $got in *" $p "*) r=yes ;; *) r="no: $got" ;; esac
		is "$r" yes "$who: the new link $p is in planted_paths"
	done
	ok "$who: ... with a warning naming it" \
		grep -q "left 'vendor' in the workspace: a symlink to a directory the check does not read" "$T/err"
	for p in sub/inside up sh-link rw-link old; do
		case $got in *" $p "*) r="listed: $got" ;; *) r=no ;; esac
		is "$r" no "$who: control: $p is not listed"
	done
	is "$(readlink "$d/work/vendor")" ../scr/e "$who: positive control: the links were made on the host"

	# A link there before the run is not reported when its directory
	# changes; replaced by the run, it is.
	sleep 1.1
	$RUN_AS "$CORDON" run --profile workspace-write --scratch "$d/scr" --json-fd 3 -- \
		touch again 3>"$T/rec" 2>"$T/err"
	is "$(planted_paths)" "" "$who: control: the next run, which plants nothing, reports nothing"
	$RUN_AS "$CORDON" run --profile workspace-write --scratch "$d/scr" --json-fd 3 -- \
		sh -c 'rm sub/inside && ln -s ../../scr/e sub/inside' 3>"$T/rec" 2>"$T/err"
	is "$(planted_paths)" "sub/inside" "$who: a link retargeted out of the tree is reported"

	# In two runs: a link to a file in the scratch (not new in the next
	# run), then the file replaced by a repository there.  The first run
	# must report it.
	$RUN_AS "$CORDON" run --profile workspace-write --scratch "$d/scr" --json-fd 3 -- \
		sh -c 'echo x >/tmp/f2 && ln -s ../scr/f2 vendor2' 3>"$T/rec" 2>"$T/err"
	is "$(planted_paths)" "vendor2" "$who: a new link to a file in the scratch is reported (a later run may make it a repository)"

	# The default profile: the working tree is read-only, a --rw one is checked.
	$RUN_AS "$CORDON" run --scratch "$d/scr" --rw "$d/out" --json-fd 3 -- \
		ln -s ../scr/e "$d/out/w" 3>"$T/rec" 2>"$T/err"
	is "$(planted_paths)" "$d/out/w" "$who: default profile: a link out of a --rw tree is reported"

	# --propose: a symlink is never applied (refused in the proposal).
	$RUN_AS "$CORDON" run --propose -- ln -s ../scr/e pvendor >/dev/null 2>&1
	id=$($RUN_AS "$CORDON" proposals list --json | python3 -c 'import json,sys; print([p["id"] for p in json.load(sys.stdin) if p["tree"] == sys.argv[1]][-1])' "$d/work")
	$RUN_AS "$CORDON" proposals show "$id" --json >"$T/show.json"
	is "$(python3 -c 'import json,sys; print(" ".join(f["path"] + ":" + f["op"] for f in json.load(open(sys.argv[1]))["files"]))' "$T/show.json")" \
		"pvendor:refused" "$who: --propose refuses the symlink (never applied)"
	cd "$T" || exit 1
}
for_each_user links

done_testing
