#!/bin/sh
# Issue 16, finding 2: git configuration and hooks outside the top-level
# .git.  In workspace-write every git control path at any depth is
# read-only (a nested repository's .git/config and hooks, a submodule's
# .git/modules/x, a worktree's .git file and what it points at,
# .gitattributes and .gitmodules anywhere), a .git created during the run
# is reported in planted_paths with a warning, the host's `git status`
# afterwards runs nothing the sandbox planted, and --propose flags each
# route.  Finding 7: a tree the scan cannot walk completely (too deep, a
# path past PATH_MAX, more covers than mounts) refuses the run.
: "${CORDON_TEST_TIMEOUT:=300}"
export CORDON_TEST_TIMEOUT
. "${CORDON_SRC:-.}/tests/lib.sh"

command -v git >/dev/null || { skip "git is not installed"; done_testing; }
G="git -c user.name=t -c user.email=t@t -c protocol.file.allow=always -c init.defaultBranch=main"

# The tree, made by the user the case runs as: a repository with a nested
# repository, a submodule x (.git file -> .git/modules/x), a linked
# worktree wt2 inside the tree, a .gitattributes two levels down, a bare
# repository bare.git (its hooks run on a push), and
# evil/, a repository whose config runs a fsmonitor (the marker's control).
cat >"$T/setup.sh" <<'EOF'
w=$1
G="git -c user.name=t -c user.email=t@t -c protocol.file.allow=always -c init.defaultBranch=main"
cd "$w" || exit 1
{
	$G init -q . && echo top >top.txt && $G add top.txt && $G commit -qm top &&
		mkdir nested && $G -C nested init -q . && echo n >nested/file &&
		$G -C nested add file && $G -C nested commit -qm n &&
		mkdir sm-src && $G -C sm-src init -q . && echo s >sm-src/s &&
		$G -C sm-src add s && $G -C sm-src commit -qm s &&
		$G submodule -q add ./sm-src x && $G commit -qm sub &&
		$G worktree add -q wt2 &&
		mkdir -p deep/er && echo '*.c diff' >deep/er/.gitattributes &&
		$G init -q --bare bare.git &&
		mkdir evil && $G -C evil init -q . &&
		printf '[core]\n\tfsmonitor = "touch %s; false"\n' "$w/MARK" >>evil/.git/config
} >/dev/null 2>&1 || exit 1
test -f x/.git && test -d .git/modules/x && test -f wt2/.git && test -f .gitmodules
EOF

# A JSON field of the record in $T/rec: a python expression over `p`.
rj() {
	python3 -c "import json,sys; p=json.load(open(sys.argv[1])); print($1)" "$T/rec"
}

# Does the host's git in DIR run anything planted?  MARK appears if so.
host_git_clean() {
	rm -f "$w/MARK"
	$RUN_AS sh -c 'cd "$1" && git status' x "$1" >/dev/null 2>&1
	test ! -e "$w/MARK"
}

ww() {
	$RUN_AS "$CORDON" run --profile workspace-write "$@"
}

git_user() {
	who=$1
	w=$T/git-$who
	mkdir -p "$w"
	[ -n "$RUN_AS" ] && chown 65534:65534 "$w"
	$RUN_AS sh "$T/setup.sh" "$w" || { nok "$who: git setup failed" true; return; }
	cd "$w" || exit 1
	ok "$who: control: the host's git status runs cleanly before" host_git_clean "$w"
	nok "$who: control: the marker catches a planted fsmonitor (evil/)" host_git_clean "$w/evil"

	# Each route: the write is refused with EROFS, the host's git runs
	# nothing afterwards, an ordinary file beside it stays writable.
	for route in "nested/.git/config" "nested/.git/hooks/post-index-change" \
		".git/modules/x/config" ".git/modules/x/hooks/pre-commit" \
		".git/worktrees/wt2/commondir" "wt2/.git" "x/.git" \
		"deep/er/.gitattributes" ".gitmodules" "bare.git/config" "bare.git/hooks/pre-receive"; do
		ww -- sh -c "fsmon() { printf '[core]\\n\\tfsmonitor = \"touch %s; false\"\\n' \"\$1\"; }
			fsmon '$w/MARK' >> '$route'" 2>"$T/err"
		ok "$who: writing $route fails with EROFS" grep -q "Read-only file system" "$T/err"
		grep -q "Read-only file system" "$T/err" || sed 's/^/#   /' "$T/err" | head -3
	done
	ww -- sh -c "echo 'gitdir: $w/evil/.git' > wt2/.git" 2>"$T/err"
	ok "$who: the worktree's .git file cannot be repointed" grep -q "Read-only file system" "$T/err"
	grep -q "Read-only file system" "$T/err" || sed 's/^/#   /' "$T/err" | head -3
	ww -- sh -c "rm -f x/.git" 2>"$T/err"
	ok "$who: the submodule's .git file cannot be removed (a mount point)" \
		grep -q "Device or resource busy\|Read-only file system" "$T/err"
	ww -- sh -c "mv nested/.git nested/.git.old && mkdir -p nested/.git" 2>"$T/err"
	ok "$who: a nested .git cannot be renamed away (a mount point)" \
		grep -q "Device or resource busy" "$T/err"
	ww -- sh -c "mv .git/modules/x .git/modules/y" 2>"$T/err"
	ok "$who: a submodule's git directory cannot be renamed away" \
		grep -q "Device or resource busy" "$T/err"
	ok "$who: positive control: ordinary files beside them are writable" \
		ww -- sh -c 'echo y >> nested/file && echo y >> x/s && echo y >> wt2/top.txt && echo y > deep/er/f.c'
	ok "$who: positive control: git works in the nested repository" \
		ww -- sh -c "$G -C nested add file && $G -C nested commit -qm edit"
	for d in "$w" "$w/nested" "$w/x" "$w/wt2" "$w/deep/er"; do
		ok "$who: the host's git status in ${d#"$w"}/ runs no planted fsmonitor" host_git_clean "$d"
	done

	# A fresh .git in a subdirectory: reported, with a warning.
	ww --json-fd 3 -- sh -c "mkdir -p fresh && cd fresh && $G init -q . && echo '[core]' >> .git/config" \
		3>"$T/rec" 2>"$T/err"
	ok "$who: a fresh .git is reported in planted_paths" \
		sh -c "python3 -c 'import json,sys; assert \"fresh/.git\" in json.load(open(sys.argv[1]))[\"planted_paths\"]' '$T/rec'"
	ok "$who: ... with a warning" grep -q "created 'fresh/.git'" "$T/err"
	ww --json-fd 3 -- sh -c "echo '* filter=x' > deep/.gitattributes; mkdir -p a/b && echo '{}' > a/b/.mcp.json" \
		3>"$T/rec" 2>"$T/err"
	is "$(rj 'sorted(p["planted_paths"])')" "['a/b/.mcp.json', 'deep/.gitattributes']" \
		"$who: a new .gitattributes and .mcp.json at depth are reported"
	ww --json-fd 3 -- true 3>"$T/rec" 2>"$T/err"
	is "$(rj 'p["planted_paths"]')" "[]" "$who: positive control: an idle run reports nothing"
	rm -rf "$w/fresh" "$w/a" "$w/deep/.gitattributes"

	# --propose: every route is flagged.
	$RUN_AS "$CORDON" run --propose -- sh -c "for f in nested/.git/config .git/modules/x/config \
		nested/.git/hooks/pre-commit wt2/.git deep/er/.gitattributes .gitmodules a/.envrc; do
		mkdir -p \$(dirname \$f); echo x >> \$f; done; mkdir -p f2; cd f2 && $G init -q . && cd .. && echo plain > plain.txt" \
		>/dev/null 2>"$T/err"
	id=$($RUN_AS "$CORDON" proposals list --json | python3 -c 'import json,sys; print(json.load(sys.stdin)[0]["id"])')
	$RUN_AS "$CORDON" proposals show "$id" --json >"$T/show.json"
	flagged=$(python3 -c 'import json,sys; p=json.load(open(sys.argv[1])); print(" ".join(sorted(f["path"] for f in p["files"] if f["flagged"])))' "$T/show.json")
	for f in nested/.git/config .git/modules/x/config nested/.git/hooks/pre-commit wt2/.git \
		deep/er/.gitattributes .gitmodules a/.envrc f2/.git/config; do
		case " $flagged " in
		*" $f "*) ok "$who: propose flags $f" true ;;
		*) nok "$who: propose flags $f (flagged: $flagged)" true ;;
		esac
	done
	case " $flagged " in
	*" plain.txt "*) nok "$who: positive control: plain.txt is not flagged" true ;;
	*) ok "$who: positive control: plain.txt is not flagged" true ;;
	esac
	cd "$T" || exit 1
}

for_each_user git_user

# Git's own rule for a git directory: HEAD plus an objects directory (a
# symlink to one counts) or a commondir file.  A run that makes the
# tree's top, or a subdirectory, into one, breaks a HEAD so git falls
# through to it, or hides a new repository behind a mode the caller cannot
# read, is reported; the next walk pins what it finds.
pr() { python3 -c 'import json,sys; print(" ".join(sorted(json.load(open(sys.argv[1]))["planted_paths"])))' "$T/rec"; }
has() { case " $(pr) " in *" $1 "*) return 0 ;; esac; sed 's/^/#   /' "$T/err" | head -5; echo "#   planted: $(pr)"; return 1; }
bare_user() {
	who=$1
	w=$T/bare-$who
	mkdir -p "$w/sub" "$w/nested"
	[ -n "$RUN_AS" ] && chown -R 65534:65534 "$w"
	cd "$w" || exit 1
	$RUN_AS sh -c "$G init -q . && $G -C nested init -q . && echo t > t && $G add t && $G commit -qm t && touch nested/.git/objects/info/alternates" >/dev/null 2>&1
	ww --json-fd 3 -- sh -c 'mkdir -p refs .o/objects && ln -s .o/objects objects &&
		echo "ref: refs/heads/main" > HEAD && printf "[core]\n\tbare = false\n\tworktree = .\n\tfsmonitor = \"touch MARK; false\"\n" > config &&
		echo garbage > .git/HEAD' 3>"$T/rec" 2>"$T/err"
	ok "$who: control: the host's git now takes the tree itself for its repository" \
		$RUN_AS sh -c "cd '$w' && test \"\$(git rev-parse --absolute-git-dir 2>/dev/null)\" = '$w'"
	ok "$who: the tree's top becoming a git directory (objects a symlink) is reported" has .
	ok "$who: ... with a warning" grep -q "left '\.' in the workspace: became a git directory" "$T/err"
	ok "$who: a .git whose HEAD no longer parses is reported" has .git
	ok "$who: ... with a warning" grep -q "left '\.git' in the workspace: its HEAD no longer parses" "$T/err"
	ww -- sh -c 'echo "[core]" >> config' 2>"$T/err"
	ok "$who: the next run's walk keeps the new top-level config read-only" grep -q "Read-only file system" "$T/err"
	$RUN_AS sh -c 'echo "ref: refs/heads/main" > .git/HEAD; rm -rf HEAD config objects .o refs'
	ww --json-fd 3 -- sh -c 'echo "ref: refs/heads/main" > sub/HEAD && ln -s ../.c sub/commondir' 3>"$T/rec" 2>"$T/err"
	ok "$who: a subdirectory made a git directory by a commondir is reported" has sub
	$RUN_AS rm -f sub/HEAD sub/commondir
	ww -- sh -c 'echo x >> nested/.git/objects/info/alternates' 2>"$T/err"
	ok "$who: objects/info/alternates is read-only" grep -q "Read-only file system" "$T/err"
	ww -- sh -c "$G -C nested checkout -q -b other" 2>"$T/err"
	is "$?" 0 "$who: positive control: HEAD stays writable (switching branches)"
	ww --json-fd 3 -- sh -c "$G init -q hid && printf '[core]\\n\\tfsmonitor = \"touch MARK; false\"\\n' >> hid/.git/config && chmod 0311 hid" \
		3>"$T/rec" 2>"$T/err"
	if [ -n "$RUN_AS" ]; then
		ok "$who: a new directory the caller cannot read is reported" has hid
		ok "$who: ... with a warning" grep -q "left 'hid' in the workspace: unreadable directory: contents not checked" "$T/err"
	else
		ok "$who: a new .git below a mode 0311 directory is reported (root reads it)" has hid/.git
	fi
	if [ -n "$RUN_AS" ]; then
		ww -- true 2>"$T/err"
		is "$?" 125 "$who: the next run refuses a directory of the tree it cannot read"
		ok "$who: ... saying why" grep -q "cannot read '$w/hid'.*the sandbox could make it readable" "$T/err"
		chmod 0755 "$w/hid"
	fi
	ww --json-fd 3 -- true 3>"$T/rec" 2>"$T/err"
	is "$(pr)" "" "$who: positive control: an idle run reports nothing"
	# --propose flags git control files by what their directory is, and
	# any path through a component ending in .git.
	mkdir -p "$w/notgit" && chown --reference="$w" "$w/notgit"
	$RUN_AS "$CORDON" run --propose -- sh -c 'mkdir -p sub2 foo.git; echo "ref: refs/heads/main" > sub2/HEAD
		echo ../.c > sub2/commondir; echo "[core]" > sub2/config; echo x > foo.git/y; echo c > notgit/config
		echo p > plain2.txt' >/dev/null 2>"$T/err"
	id=$($RUN_AS "$CORDON" proposals list --json | python3 -c 'import json,sys; print([p["id"] for p in json.load(sys.stdin) if p["tree"] == sys.argv[1]][-1])' "$w")
	$RUN_AS "$CORDON" proposals show "$id" --json >"$T/show.json"
	flagged=$(python3 -c 'import json,sys; p=json.load(open(sys.argv[1])); print(" ".join(sorted(f["path"] for f in p["files"] if f["flagged"])))' "$T/show.json")
	is "$flagged" "foo.git foo.git/y sub2/HEAD sub2/commondir sub2/config" \
		"$who: propose flags HEAD/config/commondir in a new git directory and paths under x.git (not notgit/config, plain2.txt)"
	cd "$T" || exit 1
}
for_each_user bare_user

# Fail closed: a tree the scan cannot walk completely is refused.
limits() {
	who=$1
	d=$T/lim-$who
	mkdir -p "$d/deep" && cd "$d" || exit 1
	p=deep
	i=0
	while [ $i -lt 66 ]; do p=$p/d; i=$((i + 1)); done
	mkdir -p "$p"
	[ -n "$RUN_AS" ] && chown -R 65534:65534 "$d"
	$RUN_AS "$CORDON" run -- true 2>"$T/err"
	is "$?" 125 "$who: a tree deeper than 64 levels is refused"
	ok "$who: ... saying so" grep -q "nested deeper than 64 directories" "$T/err"
	$RUN_AS "$CORDON" run --skip-socket-scan -- true 2>"$T/err"
	is "$?" 125 "$who: ... also with --skip-socket-scan"
	rm -rf "$d/deep"
	ok "$who: positive control: the same tree less deep runs" $RUN_AS "$CORDON" run -- true
	# 21 levels of 200-byte names: past PATH_MAX (made relative to a
	# directory fd, as no single path can name the bottom).
	python3 -c 'import os,sys
fd = os.open(sys.argv[1], os.O_RDONLY)
for i in range(21):
    os.mkdir("0" * 200, dir_fd=fd)
    nfd = os.open("0" * 200, os.O_RDONLY, dir_fd=fd)
    os.close(fd)
    fd = nfd' "$d"
	[ -n "$RUN_AS" ] && chown -R 65534:65534 "$d"
	$RUN_AS "$CORDON" run -- true 2>"$T/err"
	is "$?" 125 "$who: a path longer than PATH_MAX is refused"
	ok "$who: ... saying so" grep -q "longer than PATH_MAX" "$T/err"
	rm -rf "$d/$(printf "%0200d" 0)"
	# More covers than one plan may hold: refused, not run half-protected.
	python3 -c 'import os,sys
for i in range(1100):
    os.makedirs("%s/many/%d" % (sys.argv[1], i))
    open("%s/many/%d/.netrc" % (sys.argv[1], i), "w").close()' "$d"
	[ -n "$RUN_AS" ] && chown -R 65534:65534 "$d"
	$RUN_AS "$CORDON" run -- true 2>"$T/err"
	is "$?" 125 "$who: more credential files than mounts is refused"
	ok "$who: ... saying it would run half-protected" grep -q "refused rather than run half-protected" "$T/err"
	rm -rf "$d"/many/1*
	ok "$who: positive control: fewer credential files run" $RUN_AS "$CORDON" run -- cat many/0/.netrc
	cd "$T" || exit 1
}
for_each_user limits

done_testing
