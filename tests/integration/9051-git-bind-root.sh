#!/bin/sh
# Issue 16 (session 6 attacker, finding 1): a bind whose top IS a git
# directory.  A linked worktree's agent is given the main repository's
# .git with `--rw REPO/.git` so that it can commit; the walk used to skip
# a HEAD in a path ending in /.git (taking it for one its parent had met
# by name), so that .git's config and hooks stayed writable and unchecked:
# a planted core.fsmonitor ran on the host's next `git status`.
# Afterwards, in the default profile, workspace-write and --propose, as
# root and as nobody: config, hooks/, info/ and objects/info/alternates of
# the bound .git fail with EROFS, the host's git runs nothing planted, a
# new hooks/ or objects/info/alternates there is in planted_paths, and
# --propose run in a .git flags alternates and config.worktree.  Positive
# controls: a commit from the worktree lands (objects, refs and the
# worktree's index and HEAD stay writable), description is writable, an idle run reports nothing.
: "${CORDON_TEST_TIMEOUT:=300}"
export CORDON_TEST_TIMEOUT
. "${CORDON_SRC:-.}/tests/lib.sh"

command -v git >/dev/null || { skip "git is not installed"; done_testing; }
G="git -c user.name=t -c user.email=t@t -c init.defaultBranch=main"

# The user's main repository (one commit), its linked worktree wt, and a
# control repository whose config runs the marker (proof the marker works).
cat >"$T/setup.sh" <<'EOF'
w=$1
G="git -c user.name=t -c user.email=t@t -c init.defaultBranch=main"
cd "$w" || exit 1
{
	$G init -q repo && echo a >repo/a && $G -C repo add a && $G -C repo commit -qm a &&
		$G -C repo worktree add -q ../wt && mkdir -p repo/.git/info &&
		touch repo/.git/objects/info/alternates &&
		$G init -q evil &&
		printf '[core]\n\tfsmonitor = "touch %s; false"\n' "$w/MARK" >>evil/.git/config
} >/dev/null 2>&1 || exit 1
test -f wt/.git && test -d repo/.git/hooks
EOF

# Does the host's git in DIR run anything planted?  MARK appears if so.
host_git_clean() {
	rm -f "$w/MARK"
	$RUN_AS sh -c 'cd "$1" && git status' x "$1" >/dev/null 2>&1
	test ! -e "$w/MARK"
}

# One profile: $1 who, $2 label, then cordon run's options.
routes() {
	who=$1
	label=$2
	shift 2
	g=$w/repo/.git
	$RUN_AS "$CORDON" run "$@" --rw "$g" --json-fd 3 -- sh -c "
		for f in config hooks/post-checkout info/attributes objects/info/alternates; do
			if printf '[core]\\n\\tfsmonitor = \"touch %s; false\"\\n' '$w/MARK' >>'$g/'\$f; then
				echo \"\$f=written\"
			fi
		done
		echo d >>'$g/description' && echo description=written
		$G commit -q --allow-empty -m '$label' && echo committed" \
		3>"$T/rec" >"$T/out" 2>"$T/err"
	is "$?" 0 "$who $label: the run exits 0"
	is "$(grep -c 'Read-only file system' "$T/err")" 4 \
		"$who $label: config, hooks/, info/ and objects/info/alternates of the bound .git fail with EROFS"
	grep -q =written "$T/out" && sed 's/^/#   /' "$T/out" | head -5
	is "$(tr '\n' ' ' <"$T/out")" "description=written committed " \
		"$who $label: positive control: description is written and the commit lands"
	is "$($RUN_AS git -C "$w/repo" log --format=%s -1 wt)" "$label" \
		"$who $label: ... the host's repository has the commit"
	is "$(planted_paths)" "" "$who $label: nothing to report"
	ok "$who $label: the host's git status in the worktree runs nothing planted" \
		host_git_clean "$w/wt"
}

bind_root() {
	who=$1
	w=$T/git-$who
	mkdir -p "$w"
	[ -n "$RUN_AS" ] && chown 65534:65534 "$w"
	$RUN_AS sh "$T/setup.sh" "$w" || { nok "$who: git setup failed" true; return; }
	sleep 1.1 # older than the after-run check's 1 s guard: only real changes count
	cd "$w/wt" || exit 1
	ok "$who: control: the host's git status runs cleanly before" host_git_clean "$w/wt"
	nok "$who: control: the marker catches a planted fsmonitor (evil/)" host_git_clean "$w/evil"
	$RUN_AS git -C "$w/wt" checkout -q -b wt
	routes "$who" default
	routes "$who" workspace-write --profile workspace-write

	# Reported when new: hooks/ and objects/info/alternates created in
	# the bound .git (the host's git would run and read them).
	rm -rf "$w/repo/.git/hooks" "$w/repo/.git/objects/info/alternates"
	sleep 1.1
	$RUN_AS "$CORDON" run --rw "$w/repo/.git" --json-fd 3 -- sh -c "
		mkdir '$w/repo/.git/hooks' && echo x >'$w/repo/.git/hooks/post-checkout' &&
		echo /tmp/elsewhere >'$w/repo/.git/objects/info/alternates'" 3>"$T/rec" 2>"$T/err"
	is "$?" 0 "$who: a run creating hooks/ and alternates in the bound .git exits 0"
	got=" $(planted_paths) "
	case $got in *" $w/repo/.git/hooks "*) r=yes ;; *) r="no: $got" ;; esac
	is "$r" yes "$who: the new hooks/ is in planted_paths"
	case $got in *" $w/repo/.git/objects/info/alternates "*) r=yes ;; *) r="no: $got" ;; esac
	is "$r" yes "$who: the new objects/info/alternates is in planted_paths"
	ok "$who: ... with a warning" \
		grep -q "created '$w/repo/.git/objects/info/alternates' in a --rw directory" "$T/err"
	$RUN_AS "$CORDON" run --rw "$w/repo/.git" --json-fd 3 -- sh -c "
		echo x >>'$w/repo/.git/objects/info/alternates'" 3>"$T/rec" 2>"$T/err"
	ok "$who: the next run keeps the new alternates read-only" grep -q "Read-only file system" "$T/err"
	$RUN_AS "$CORDON" run --rw "$w/repo/.git" --json-fd 3 -- true 3>"$T/rec" 2>"$T/err"
	is "$(planted_paths)" "" "$who: positive control: an idle run reports nothing"

	# --propose run in the .git itself: the tree's top is the git
	# directory; what git reads from it is flagged, what it does not is not.
	cd "$w/repo/.git" || exit 1
	$RUN_AS "$CORDON" run --propose -- sh -c 'echo "[core]" >>config; echo w >config.worktree
		echo /x >>objects/info/alternates; echo d >>description' >/dev/null 2>"$T/err"
	id=$($RUN_AS "$CORDON" proposals list --json | python3 -c 'import json,sys; print([p["id"] for p in json.load(sys.stdin) if p["tree"] == sys.argv[1]][-1])' "$w/repo/.git")
	$RUN_AS "$CORDON" proposals show "$id" --json >"$T/show.json"
	flagged=$(python3 -c 'import json,sys; p=json.load(open(sys.argv[1])); print(" ".join(sorted(f["path"] for f in p["files"] if f["flagged"])))' "$T/show.json")
	is "$flagged" "config config.worktree objects/info/alternates" \
		"$who: --propose in a .git flags config, config.worktree and objects/info/alternates (not description)"
	cd "$T" || exit 1
}
for_each_user bind_root

done_testing
