#!/bin/sh
# Proposal mode (issue 11): `cordon run --propose` writes into an overlay,
# the real tree stays untouched, the changes become a proposal that a
# person shows, diffs, applies (re-checking every base), commits on a
# branch or rejects; flagged files (git hooks ...) are never applied by
# default; everything is in the audit log.  Rootless and as root.
. "${CORDON_SRC:-.}/tests/lib.sh"

# Whether the kernel mounts overlayfs in a user namespace at all (the layer
# a tmpfs, as cordon makes it): only then may a refused --propose run be
# skipped.  A broken overlay in cordon on a kernel that can must fail.
overlay_userns() {
	mkdir -p "$T/ovl" && chmod 0777 "$T/ovl"
	$RUN_AS unshare -Urm sh -c 'd=$1; mount -t tmpfs none "$d" && mkdir "$d/l" "$d/u" "$d/w" "$d/m" &&
		mount -t overlay -o userxattr,lowerdir="$d/l",upperdir="$d/u",workdir="$d/w" none "$d/m"' sh "$T/ovl" >/dev/null 2>&1
}

# Everything about a tree but access times: names, types, modes, sizes,
# mtimes and contents.
tree_state() {
	(cd "$1" && find . -printf '%p %y %m %s %T@\n' | LC_ALL=C sort &&
		find . -type f -exec sha256sum {} + | LC_ALL=C sort) | sha256sum
}

# The files a run saw (no .git): names, modes and contents.
seen() {
	(cd "$1" && find . -path ./.git -prune -o -name 'evil*' -prune -o -type f -printf '%p %m\n' | LC_ALL=C sort &&
		find . -path ./.git -prune -o -name 'evil*' -prune -o -type f -exec sha256sum {} + | LC_ALL=C sort)
}

# A field of the proposal's JSON: a python expression over `p`.
pj() {
	python3 -c "import json,sys; p=json.load(sys.stdin); print($1)"
}

last_id() {
	$RUN_AS "$CORDON" proposals list --json | pj 'p[0]["id"]'
}

propose_user() {
	who=$1
	w=$T/ws-$who
	mkdir -p "$w"
	[ -n "$RUN_AS" ] && chown 65534:65534 "$w"
	cd "$w" || exit 1
	$RUN_AS sh -c 'git init -q . && printf "hello\n" > a.txt && printf "bye\n" > b.txt &&
		mkdir sub && printf "x\n" > sub/c && printf "keep\n" > keep.txt &&
		git add -A && git -c user.name=t -c user.email=t@t commit -qm init' >"$T/git-setup-$who" 2>&1
	rc=$?
	is "$rc" 0 "$who: the work tree's git setup works (or nothing below tests anything)"
	[ "$rc" -eq 0 ] || { sed 's/^/# /' "$T/git-setup-$who"; return; }
	sha_a=$(sha256sum a.txt | cut -c1-64)
	sha_b=$(sha256sum b.txt | cut -c1-64)
	before=$(tree_state "$w")

	# 1. The run edits, creates, deletes, changes a mode, plants a hook and
	# a symlink, and a file with a hostile name; it sees its own writes.
	$RUN_AS "$CORDON" run --propose --agent bot --task t11 -- sh -c '
		printf "world\n" >> a.txt; rm b.txt; printf "new\n" > n.txt; rm -r sub
		chmod 700 keep.txt
		mkdir -p .git/hooks; printf "#!/bin/sh\necho pwned\n" > .git/hooks/pre-commit
		chmod +x .git/hooks/pre-commit; ln -s /etc/passwd lnk
		printf z > "$(printf "evil\nname\033[2J")"
		cat a.txt
		find . -path ./.git -prune -o -name "evil*" -prune -o -type f -printf "%p %m\n" | LC_ALL=C sort > /tmp/seen
		find . -path ./.git -prune -o -name "evil*" -prune -o -type f -exec sha256sum {} + | LC_ALL=C sort >> /tmp/seen
		cat /tmp/seen >&2' >"$T/out" 2>"$T/err"
	rc=$?
	if [ $rc -ne 0 ] && grep -q overlay "$T/err" && ! overlay_userns; then
		skip "$who: overlayfs in a user namespace is not available: $(head -1 "$T/err")"
		return
	fi
	is "$rc" 0 "$who: the proposing run exits 0"
	is "$(cat "$T/out")" "$(printf 'hello\nworld')" "$who: the command sees its own writes"
	grep -v '^cordon' "$T/err" >"$T/seen-in-run"
	is "$(tree_state "$w")" "$before" "$who: the real tree is untouched"
	ok "$who: the run names its proposal" grep -q "proposal pr-.*3 added, 2 modified, 2 deleted, 0 mkdir, 1 rmdir, 1 refused, 1 flagged" "$T/err"

	id=$(last_id)
	$RUN_AS "$CORDON" proposals show "$id" --json >"$T/show.json"
	is "$(pj '" ".join(f["op"][0:3]+":"+f["path"] for f in p["files"])' <"$T/show.json")" \
		"add:.git/hooks/pre-commit mod:a.txt del:b.txt add:evil\\nname\\x1b[2J mod:keep.txt ref:lnk add:n.txt rmd:sub del:sub/c" \
		"$who: the proposal lists exactly the changes (names escaped)"
	is "$(pj '[f for f in p["files"] if f["path"]=="a.txt"][0]["base_sha256"]' <"$T/show.json")" "$sha_a" \
		"$who: a.txt's base hash is the real file's"
	is "$(pj '[f for f in p["files"] if f["path"]=="a.txt"][0]["sha256"]' <"$T/show.json")" \
		"$(printf 'hello\nworld\n' | sha256sum | cut -c1-64)" "$who: a.txt's new hash is what the run wrote"
	is "$(pj '[f for f in p["files"] if f["path"]=="b.txt"][0]["base_sha256"]' <"$T/show.json")" "$sha_b" \
		"$who: b.txt's deletion names its base"
	is "$(pj '[f for f in p["files"] if f["path"]=="keep.txt"][0]["mode"]' <"$T/show.json")" "448" \
		"$who: the mode change is in the proposal (0700)"
	is "$(pj '[f["path"] for f in p["files"] if f["flagged"]]' <"$T/show.json")" "['.git/hooks/pre-commit']" \
		"$who: the planted hook is flagged"
	is "$(pj '[f["note"] for f in p["files"] if f["op"]=="refused"]' <"$T/show.json")" "['symlink']" \
		"$who: the symlink is refused"
	$RUN_AS "$CORDON" proposals show "$id" >"$T/show.txt"
	nok "$who: show prints no raw escape byte" grep -q "$(printf '\033')" "$T/show.txt"
	$RUN_AS "$CORDON" proposals diff "$id" a.txt >"$T/diff"
	ok "$who: diff shows the added line" grep -qx '+world' "$T/diff"

	# 2. The layer is never visible to a later sandbox, even with the state
	# directory's parent bound in.
	nok "$who: a later sandbox cannot see the proposal layer" \
		$RUN_AS "$CORDON" run --ro "$S" -- sh -c "ls -A $S/.state-$who/proposals | grep -q ."

	# 3. Apply: not by the agent itself; flagged and refused files skipped.
	nok "$who: the proposing agent cannot apply its own proposal" $RUN_AS "$CORDON" proposals apply "$id" --as bot
	$RUN_AS "$CORDON" proposals apply "$id" --as alice >"$T/apply" 2>"$T/apply.err"
	is "$?" 0 "$who: apply succeeds"
	nok "$who: the flagged hook was not applied by default" test -e "$w/.git/hooks/pre-commit"
	ok "$who: apply says the hook was skipped" grep -q 'pre-commit: flagged' "$T/apply.err"
	nok "$who: the refused symlink was not applied" test -L "$w/lnk"
	is "$(seen "$w")" "$(cat "$T/seen-in-run")" "$who: apply yields the tree the run saw"
	is "$($RUN_AS "$CORDON" proposals show "$id" --json | pj 'p["status"]')" "partial" \
		"$who: with the hook left, the proposal stays partial"
	ok "$who: reject ends the rest" $RUN_AS "$CORDON" proposals reject "$id" --as alice
	nok "$who: a rejected proposal cannot be applied" $RUN_AS "$CORDON" proposals apply "$id" --as alice
	nok "$who: the rejected proposal's layer is gone" test -e "$S/.state-$who/proposals/$(pj 'p["run_id"]' <"$T/show.json")"

	# 4. A concurrent change to a base file: apply refuses, names the file,
	# changes nothing.
	$RUN_AS "$CORDON" run --propose --agent bot -- sh -c 'printf "v2\n" >> a.txt; printf "other\n" > o.txt' 2>/dev/null
	id2=$(last_id)
	$RUN_AS sh -c 'printf "human edit\n" >> a.txt'
	mid=$(tree_state "$w")
	$RUN_AS "$CORDON" proposals apply "$id2" --as alice 2>"$T/stale.err"
	is "$?" 1 "$who: apply refuses when a base changed since the run (exit 1)"
	ok "$who: the refusal names the changed file" grep -q 'a.txt: changed since the run' "$T/stale.err"
	is "$(tree_state "$w")" "$mid" "$who: nothing was applied"
	ok "$who: --paths applies the unaffected file alone" $RUN_AS "$CORDON" proposals apply "$id2" --as alice --paths o.txt
	is "$(cat "$w/o.txt")" "other" "$who: o.txt applied"
	nok "$who: --paths naming no file of the proposal is refused" $RUN_AS "$CORDON" proposals apply "$id2" --as alice --paths nope

	# 5. Accepting a flagged file explicitly.
	$RUN_AS "$CORDON" run --propose --agent bot -- sh -c 'printf "[x]\n" > .mcp.json' 2>/dev/null
	id3=$(last_id)
	nok "$who: a flagged-only proposal applies nothing by default" $RUN_AS "$CORDON" proposals apply "$id3" --as alice
	ok "$who: --accept-flagged applies it" $RUN_AS "$CORDON" proposals apply "$id3" --as alice --accept-flagged .mcp.json
	is "$(cat "$w/.mcp.json")" "[x]" "$who: the accepted file is in place"

	# 6. --branch: a commit on a new branch, the working tree untouched.
	$RUN_AS sh -c 'git add -A && git -c user.name=t -c user.email=t@t commit -qm base' >/dev/null
	$RUN_AS "$CORDON" run --propose --agent bot -- sh -c 'printf "branch\n" > a.txt; mkdir -p d; printf "deep\n" > d/new.txt; rm o.txt' 2>/dev/null
	id4=$(last_id)
	run4=$($RUN_AS "$CORDON" proposals show "$id4" --json | pj 'p["run_id"]')
	wt=$(seen "$w")
	ok "$who: apply --branch commits" $RUN_AS "$CORDON" proposals apply "$id4" --as alice --branch "cordon/$id4"
	is "$(seen "$w")" "$wt" "$who: --branch leaves the working tree alone"
	is "$($RUN_AS git show "cordon/$id4:a.txt")" "branch" "$who: the branch has the new a.txt"
	is "$($RUN_AS git show "cordon/$id4:d/new.txt")" "deep" "$who: the branch has the new d/new.txt"
	nok "$who: the branch no longer has o.txt" $RUN_AS git cat-file -e "cordon/$id4:o.txt"
	msg=$($RUN_AS git log -1 --format=%B "cordon/$id4")
	ok "$who: the commit message names the proposal and the run" sh -c "echo '$msg' | grep -q 'Proposal: $id4' && echo '$msg' | grep -q 'Run: $run4'"
	is "$($RUN_AS git rev-parse "cordon/$id4^")" "$($RUN_AS git rev-parse HEAD)" "$who: the branch sits on HEAD"

	# 7. The audit log has every step.
	$RUN_AS "$CORDON" log export --format jsonl >"$T/log"
	for k in proposal.created proposal.applied proposal.rejected proposal.refused proposal.committed; do
		ok "$who: the audit log has $k" grep -q "\"kind\":\"$k\"" "$T/log"
	done
	ok "$who: the applied record names who applied" sh -c "grep '\"kind\":\"proposal.applied\"' '$T/log' | grep -q 'alice'"
	ok "$who: the audit log verifies" $RUN_AS "$CORDON" log verify
	cd "$T" || exit 1
}

git --version >/dev/null 2>&1 || { skip "git is not installed"; done_testing; }
for_each_user propose_user

# Refusals that need no kernel feature.
nok "--propose with the workspace-write profile is refused" "$CORDON" run --propose --profile workspace-write -- true
nok "proposals: an unknown subcommand is refused" "$CORDON" proposals frobnicate
nok "proposals show: an unknown id is refused" "$CORDON" proposals show pr-0000000000000000
done_testing
