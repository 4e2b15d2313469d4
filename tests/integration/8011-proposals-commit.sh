#!/bin/sh
# `cordon proposals commit ID --branch NAME` (issue 18: commit to a
# branch): the branch holds exactly the proposal's changes on top of
# HEAD; the work tree and the index are untouched; a flagged file needs
# --accept-flagged as with apply; an invalid or existing branch name is
# refused; recorded as proposal.committed.  The repository's config is
# hostile (hooks in .git/hooks and core.hooksPath, core.fsmonitor, a
# required clean/smudge filter on every path): git runs none of it (the
# reference-transaction hook ran on fast-import's ref update before).
# Rootless and as root.
. "${CORDON_SRC:-.}/tests/lib.sh"

mkdir -p "$T/marks" && chmod 0777 "$T/marks"

# Every hook git knows of, each leaving a mark named after itself and the
# uid: sh -c "$PLANT" sh DIR MARKS.
PLANT='mkdir -p "$1" && for h in reference-transaction post-commit pre-commit \
	post-checkout post-merge pre-auto-gc post-rewrite post-index-change; do
	printf "#!/bin/sh\ntouch \"%s/%s-\$(id -u)\"\n" "$2" "$h" > "$1/$h"; chmod 0755 "$1/$h"; done'

pj() { python3 -c "import json,sys; p=json.load(sys.stdin); print($1)"; }
last_id() { $RUN_AS "$CORDON" proposals list --json | pj 'p[0]["id"]'; }

commit_user() {
	who=$1
	w=$T/ws-$who
	mkdir -p "$w"
	[ -n "$RUN_AS" ] && chown 65534:65534 "$w"
	cd "$w" || exit 1
	$RUN_AS sh -c 'git init -q . && printf "hello\n" > a.txt && printf "bye\n" > b.txt &&
		printf "keep\n" > keep.txt && git add -A &&
		git -c user.name=t -c user.email=t@t commit -qm init' >"$T/setup-$who" 2>&1
	is "$?" 0 "$who: the repository is set up"
	# The hostile configuration, once the tree is committed.
	$RUN_AS sh -c 'git config core.fsmonitor "touch $1/fsmonitor-\$(id -u)" &&
		git config filter.evil.clean "sh -c \"touch $1/clean-\$(id -u); cat\"" &&
		git config filter.evil.smudge "sh -c \"touch $1/smudge-\$(id -u); cat\"" &&
		git config filter.evil.process "sh -c \"touch $1/process-\$(id -u); exit 1\"" &&
		git config filter.evil.required true &&
		printf "* filter=evil\n" > .git/info/attributes' sh "$T/marks"
	$RUN_AS sh -c "$PLANT" sh "$w/.git/hooks" "$T/marks"
	idx=$(sha256sum .git/index | cut -c1-64)
	head=$($RUN_AS git rev-parse HEAD)

	$RUN_AS "$CORDON" run --propose --agent bot --task t8011 -- sh -c '
		printf "world\n" >> a.txt; rm b.txt; mkdir -p d; printf "deep\n" > d/new.txt
		printf "[x]\n" > .mcp.json' >/dev/null 2>&1
	is "$?" 0 "$who: a proposing run"
	id=$(last_id)
	ok "$who: made proposal $id" test -n "$id"
	rm -f "$T/marks/"*

	# Branch names: invalid and existing ones are refused, nothing made.
	for bad in 'a..b' '-x' 'x y' 'x~1' 'HEAD:x' 'a/.lock' ''; do
		$RUN_AS "$CORDON" proposals commit "$id" --as alice --branch "$bad" >/dev/null 2>"$T/err"
		is "$?" 1 "$who: branch name '$bad' is refused"
	done
	$RUN_AS git branch taken >/dev/null 2>&1 # runs the hook: git's own
	rm -f "$T/marks/"*
	$RUN_AS "$CORDON" proposals commit "$id" --as alice --branch taken >/dev/null 2>"$T/err"
	is "$?" 1 "$who: an existing branch is refused"
	ok "$who: ... saying it exists" grep -q "branch 'taken' exists already" "$T/err"
	is "$($RUN_AS git rev-parse taken)" "$head" "$who: ... and left where it was"
	nok "$who: commit without --branch is a usage error" $RUN_AS "$CORDON" proposals commit "$id" --as alice
	is "$($RUN_AS "$CORDON" proposals show "$id" --json | pj 'p["status"]')" pending \
		"$who: the proposal is still pending"

	# The commit (through apply --branch, the same code).
	$RUN_AS "$CORDON" proposals apply "$id" --as alice --branch "cordon/$id" >"$T/out" 2>"$T/err"
	is "$?" 0 "$who: the proposal is committed on cordon/$id"
	is "$(ls "$T/marks")" "" "$who: no hook, fsmonitor or filter of the repository ran"
	is "$($RUN_AS git rev-parse "cordon/$id^")" "$head" "$who: the branch sits on HEAD"
	is "$($RUN_AS git diff --no-ext-diff --name-status "$head" "cordon/$id" | LC_ALL=C sort | tr '\t\n' ' ')" \
		"A d/new.txt D b.txt M a.txt " "$who: the branch has exactly the changes (the flagged file left out)"
	is "$($RUN_AS git cat-file blob "cordon/$id:a.txt")" "$(printf 'hello\nworld')" \
		"$who: ... a.txt's new content, unfiltered"
	is "$(cat "$w/a.txt")" hello "$who: the work tree is untouched"
	ok "$who: ... b.txt still there" test -f "$w/b.txt"
	nok "$who: ... no d/ made" test -e "$w/d"
	is "$(sha256sum .git/index | cut -c1-64)" "$idx" "$who: the index is untouched"
	is "$($RUN_AS git rev-parse HEAD)" "$head" "$who: HEAD is untouched"
	is "$($RUN_AS "$CORDON" proposals show "$id" --json | pj 'p["status"]')" committed \
		"$who: the proposal is committed"
	$RUN_AS "$CORDON" log export --format jsonl | grep '"proposal.committed"' | grep -q "\"target\":\"$id\""
	is "$?" 0 "$who: recorded as proposal.committed"

	# core.hooksPath in the repository's config: not followed either.  The
	# proposal is a flagged file alone: committed only with
	# --accept-flagged, as with apply.
	$RUN_AS sh -c "$PLANT" sh "$w/hooks-elsewhere" "$T/marks"
	$RUN_AS git config core.hooksPath "$w/hooks-elsewhere"
	$RUN_AS "$CORDON" run --propose --agent bot -- sh -c 'printf "[y]\n" > .mcp.json' >/dev/null 2>&1
	id2=$(last_id)
	$RUN_AS "$CORDON" proposals commit "$id2" --as alice --branch "f/$id2" >/dev/null 2>&1
	is "$?" 1 "$who: a flagged file alone is not committed without --accept-flagged"
	nok "$who: ... no branch made" $RUN_AS git rev-parse --verify --quiet "f/$id2"
	nok "$who: the agent may not commit its own proposal" $RUN_AS "$CORDON" proposals commit "$id2" \
		--as bot --branch "f/$id2" --accept-flagged .mcp.json
	$RUN_AS "$CORDON" proposals commit "$id2" --as alice --branch "f/$id2" --accept-flagged .mcp.json >/dev/null 2>&1
	is "$?" 0 "$who: with --accept-flagged it is, core.hooksPath set"
	is "$($RUN_AS git cat-file blob "f/$id2:.mcp.json")" "[y]" "$who: ... on its own branch"
	is "$(ls "$T/marks")" "" "$who: ... and the hooks there did not run"

	# Positive control: the hooks are live for git itself.
	$RUN_AS git update-ref refs/heads/control HEAD
	ok "$who: positive control: git's own ref update runs the planted hook" \
		test -e "$T/marks/reference-transaction-$($RUN_AS id -u)"
	rm -f "$T/marks/"*
}

for_each_user commit_user
done_testing
