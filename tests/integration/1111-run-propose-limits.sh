#!/bin/sh
# Proposal mode's bounds and directories (THREATS row 15: exhaust the host
# by filling scratch): the overlay's layer is a tmpfs made inside the
# sandbox, capped by --propose-size and --propose-inodes, so writes past
# either fail with ENOSPC inside and the host's disk never fills; the run
# and the proposal say the cap and that it was hit; the proposal keeps
# what fit; what a proposal stores on the host is bounded too (a sparse
# file is refused, not copied in full).  New and removed directories are
# changes like files: proposed, shown, applied (mkdir with its mode,
# refused when one exists by then; rmdir, refused when not empty) and,
# for --branch, said to be out of reach of git when empty.  Rootless and
# as root.
. "${CORDON_SRC:-.}/tests/lib.sh"

# Whether the kernel mounts overlayfs in a user namespace at all (the layer
# a tmpfs, as cordon makes it): only then may a refused --propose run be
# skipped.  A broken overlay in cordon on a kernel that can must fail.
overlay_userns() {
	mkdir -p "$T/ovl" && chmod 0777 "$T/ovl"
	$RUN_AS unshare -Urm sh -c 'd=$1; mount -t tmpfs none "$d" && mkdir "$d/l" "$d/u" "$d/w" "$d/m" &&
		mount -t overlay -o userxattr,lowerdir="$d/l",upperdir="$d/u",workdir="$d/w" none "$d/m"' sh "$T/ovl" >/dev/null 2>&1
}

pj() {
	python3 -c "import json,sys; p=json.load(sys.stdin); print($1)"
}

last_id() {
	$RUN_AS "$CORDON" proposals list --json | pj 'p[0]["id"]'
}

limits_user() {
	who=$1
	w=$T/ws-$who
	mkdir -p "$w/gone" "$w/full"
	printf 'x\n' >"$w/full/f"
	[ -n "$RUN_AS" ] && chown -R 65534:65534 "$w"
	cd "$w" || exit 1

	# 1. Past the size cap: the write fails inside with ENOSPC, the run
	# and the proposal say the layer was full, what fit is proposed.
	$RUN_AS "$CORDON" run --propose --propose-size 1M --json --agent bot -- sh -c '
		printf "small\n" > small.txt
		dd if=/dev/zero of=big bs=64k count=64 2>&1 | grep -o "No space left on device"
		exit 0' >"$T/out" 2>"$T/err"
	rc=$?
	if [ $rc -ne 0 ] && grep -q overlay "$T/err" && ! overlay_userns; then
		skip "$who: overlayfs in a user namespace is not available: $(head -1 "$T/err")"
		return
	fi
	is "$rc" 0 "$who: the run past the cap exits as its command did"
	is "$(head -1 "$T/out")" "No space left on device" "$who: a write past --propose-size fails inside with ENOSPC"
	tail -1 "$T/out" >"$T/result.json"
	is "$(pj 'p["proposal_layer"]["size"], p["proposal_layer"]["bytes_full"], p["proposal_layer"]["inodes_full"]' <"$T/result.json")" \
		"1048576 True False" "$who: the result record says the cap and that it was hit"
	ok "$who: cordon says the layer was full" grep -q "the layer was full (--propose-size 1M)" "$T/err"
	$RUN_AS "$CORDON" log export --format jsonl >"$T/log"
	ok "$who: the audit log's run.result says so too" sh -c "grep '\"kind\":\"run.result\"' '$T/log' | grep -q 'proposal_layer.*bytes_full.*true'"
	ok "$who: the proposal.created record has the layer" sh -c "grep '\"kind\":\"proposal.created\"' '$T/log' | grep -q 'layer.*bytes_full.*true'"
	ok "$who: the run still names its proposal" grep -q "proposal pr-.*2 added.*(made on a full layer)" "$T/err"
	id=$(last_id)
	$RUN_AS "$CORDON" proposals show "$id" --json >"$T/show.json"
	is "$(pj 'p["layer"]["size"], p["layer"]["bytes_full"]' <"$T/show.json")" "1048576 True" \
		"$who: the proposal records the cap and that it was hit"
	is "$(pj '" ".join(f["op"]+":"+f["path"] for f in p["files"])' <"$T/show.json")" "added:big added:small.txt" \
		"$who: the proposal keeps what fit"
	$RUN_AS "$CORDON" proposals show "$id" >"$T/show.txt"
	ok "$who: show says the layer was full" grep -q "^layer 1M of 1M, .*: FULL" "$T/show.txt"
	store=$(dirname "$(find "$S/.state-$who/proposals" -name small.txt)")
	big=$(stat -c %s "$store/big")
	ok "$who: the stored content is below the cap ($big bytes)" test "$big" -lt 1048576
	is "$(cat "$store/small.txt")" "small" "$who: the small file fit and is stored"
	nok "$who: the real tree is untouched" test -e "$w/small.txt"
	ok "$who: reject ends it" $RUN_AS "$CORDON" proposals reject "$id" --as alice

	# 2. Past the inode cap.
	$RUN_AS "$CORDON" run --propose --propose-inodes 32 --json --agent bot -- sh -c '
		i=0; while [ $i -lt 100 ]; do i=$((i + 1)); touch f$i 2>>/tmp/e || break; done
		grep -o "No space left on device" /tmp/e | head -1; exit 0' >"$T/out" 2>"$T/err"
	is "$(head -1 "$T/out")" "No space left on device" "$who: a file past --propose-inodes fails inside with ENOSPC"
	is "$(tail -1 "$T/out" | pj 'p["proposal_layer"]["inodes"], p["proposal_layer"]["inodes_full"]')" "32 True" \
		"$who: the result record says the inode cap was hit"
	ok "$who: cordon names the inode cap" grep -q "the layer was full (--propose-inodes 32)" "$T/err"
	n=$($RUN_AS "$CORDON" proposals show "$(last_id)" --json | pj 'p["counts"]["added"]')
	ok "$who: the proposal holds the files that fit ($n)" test "$n" -gt 10 -a "$n" -lt 32
	$RUN_AS "$CORDON" proposals reject "$(last_id)" --as alice >/dev/null

	# 3. A sparse file costs nothing on the layer's tmpfs but its full
	# size on the host: refused, never stored.
	$RUN_AS "$CORDON" run --propose --propose-size 1M --agent bot -- sh -c 'truncate -s 900M sparse; printf "ok\n" > ok.txt' 2>"$T/err"
	id=$(last_id)
	$RUN_AS "$CORDON" proposals show "$id" --json >"$T/show.json"
	ok "$who: a sparse file past the store's cap is refused" sh -c "pj() { python3 -c \"import json,sys; p=json.load(sys.stdin); print(\$1)\"; }; pj '[f[\"note\"] for f in p[\"files\"] if f[\"path\"]==\"sparse\"][0]' <'$T/show.json' | grep -q 'a sparse file'"
	nok "$who: the sparse file is not in the store" sh -c "find '$S/.state-$who/proposals' -name sparse | grep -q ."
	ok "$who: the rest is applied" $RUN_AS "$CORDON" proposals apply "$id" --as alice
	is "$(cat "$w/ok.txt")" "ok" "$who: ok.txt applied"
	nok "$who: the sparse file was not applied" test -e "$w/sparse"

	# 4. mkdir only: proposed with its mode, shown, applied.
	$RUN_AS "$CORDON" run --propose --agent bot -- sh -c 'mkdir -m 0750 newdir && mkdir -p deep/er' 2>"$T/err"
	ok "$who: a mkdir-only run makes a proposal" grep -q "proposal pr-.*0 added, 0 modified, 0 deleted, 3 mkdir" "$T/err"
	id=$(last_id)
	$RUN_AS "$CORDON" proposals show "$id" --json >"$T/show.json"
	is "$(pj '" ".join("%s:%s:%o" % (f["op"], f["path"], f["mode"]) for f in p["files"])' <"$T/show.json")" \
		"mkdir:deep:755 mkdir:deep/er:755 mkdir:newdir:750" "$who: the new directories and their modes are the proposal"
	$RUN_AS "$CORDON" proposals show "$id" >"$T/show.txt"
	ok "$who: show lists the directory" grep -q '^mkdir .* newdir  (mode 0750)' "$T/show.txt"
	$RUN_AS "$CORDON" proposals diff "$id" newdir >"$T/diff.txt"
	ok "$who: diff names the directory" grep -qx '# mkdir newdir (mode 0750)' "$T/diff.txt"
	nok "$who: --branch refuses directories alone (git holds none)" $RUN_AS "$CORDON" proposals apply "$id" --as alice --branch "cordon/$id"
	ok "$who: apply makes them" $RUN_AS "$CORDON" proposals apply "$id" --as alice
	is "$(stat -c %a "$w/newdir") $(stat -c %a "$w/deep/er")" "750 755" "$who: with their modes"
	is "$($RUN_AS "$CORDON" proposals show "$id" --json | pj 'p["status"]')" "applied" "$who: the proposal is applied"

	# 4b. What the command left unreadable (chmod 000: rootless, cordon is
	# only its owner) is still proposed, and applied with its mode.
	$RUN_AS "$CORDON" run --propose --agent bot -- sh -c 'mkdir -p locked/in && printf "y\n" > locked/in/g && chmod 500 locked/in && chmod 000 locked && printf "z\n" > nor && chmod 000 nor' 2>"$T/err"
	ok "$who: unreadable entries are proposed" grep -q "proposal pr-.*2 added, 0 modified, 0 deleted, 2 mkdir" "$T/err"
	ok "$who: and applied" $RUN_AS "$CORDON" proposals apply "$(last_id)" --as alice
	is "$(stat -c %a "$w/locked" "$w/nor" | tr '\n' ' ')" "0 0 " "$who: with the modes the command gave them"
	chmod 700 "$w/locked"
	is "$(stat -c %a "$w/locked/in") $(cat "$w/locked/in/g")" "500 y" "$who: the content below is in place"
	rm -rf "$w/locked" "$w/nor"

	# 5. A directory made since the run: apply refuses, changes nothing.
	$RUN_AS "$CORDON" run --propose --agent bot -- sh -c 'mkdir race; printf "v\n" > v.txt' 2>/dev/null
	id=$(last_id)
	$RUN_AS mkdir "$w/race"
	$RUN_AS "$CORDON" proposals apply "$id" --as alice 2>"$T/apply.err"
	is "$?" 1 "$who: apply refuses a directory created since the run (exit 1)"
	ok "$who: the refusal names it" grep -q 'race: exists now: created since the run' "$T/apply.err"
	nok "$who: nothing was applied" test -e "$w/v.txt"
	$RUN_AS "$CORDON" proposals reject "$id" --as alice >/dev/null

	# 6. rmdir of an empty directory; of one that filled up since the run.
	$RUN_AS "$CORDON" run --propose --agent bot -- sh -c 'rmdir gone && rm -r full' 2>"$T/err"
	ok "$who: an rmdir-only run makes a proposal" grep -q "proposal pr-.*1 deleted, 0 mkdir, 2 rmdir" "$T/err"
	id=$(last_id)
	$RUN_AS touch "$w/full/new-since"
	$RUN_AS "$CORDON" proposals apply "$id" --as alice 2>"$T/apply.err"
	is "$?" 1 "$who: apply stops at a directory no longer empty (exit 1)"
	ok "$who: it says why" grep -q "full: not empty" "$T/apply.err"
	ok "$who: the empty directory is removed" test ! -e "$w/gone"
	ok "$who: the filled one is left in place, with the new file" test -e "$w/full/new-since"
	is "$($RUN_AS "$CORDON" proposals show "$id" --json | pj 'p["status"]')" "partial" "$who: the proposal is partial"
	$RUN_AS "$CORDON" proposals reject "$id" --as alice >/dev/null

	# 7. --branch: a directory with a file goes in, an empty one is named.
	$RUN_AS sh -c 'git init -q . && git add -A && git -c user.name=t -c user.email=t@t commit -qm base' >/dev/null
	$RUN_AS "$CORDON" run --propose --agent bot -- sh -c 'mkdir d empty && printf "x\n" > d/x' 2>/dev/null
	id=$(last_id)
	$RUN_AS "$CORDON" proposals apply "$id" --as alice --branch "cordon/$id" >"$T/br.out" 2>"$T/br.err"
	is "$?" 0 "$who: --branch commits"
	is "$($RUN_AS git show "cordon/$id:d/x")" "x" "$who: the branch has d/x"
	ok "$who: --branch says the empty directory is not in the commit" grep -q "empty: an empty directory: git cannot hold one" "$T/br.err"
	cd "$T" || exit 1
}

git --version >/dev/null 2>&1 || { skip "git is not installed"; done_testing; }
for_each_user limits_user

# Options, checked before anything runs.
nok "--propose-size without --propose is refused" "$CORDON" run --propose-size 1M -- true
nok "--propose-size 0 is refused" "$CORDON" run --propose --propose-size 0 -- true
nok "--propose-size past 4G is refused" "$CORDON" run --propose --propose-size 5G -- true
nok "--propose-inodes below 16 is refused" "$CORDON" run --propose --propose-inodes 5 -- true
nok "--propose-inodes past 200000 is refused" "$CORDON" run --propose --propose-inodes 200001 -- true
"$CORDON" run --propose --propose-size 3M --propose-inodes 99 --dry-run -- true >"$T/plan.json"
is "$(pj '[(m["layer_size"], m["layer_inodes"]) for m in p["mounts"] if m["kind"]=="overlay"]' <"$T/plan.json")" "[(3145728, 99)]" \
	"--dry-run shows the layer's caps"
done_testing
