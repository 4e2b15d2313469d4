#!/bin/sh
# Issue 16 (session 10's second review, H2, H13, H14, H16): git's view of
# a repository the tree walk did not follow.
# - A linked worktree (`git worktree add`): its .git is a file naming
#   REPO/.git/worktrees/NAME, whose config is the common directory's; a
#   relative core.hooksPath and a core.fsmonitor script are each
#   worktree's own.  In workspace-write from the worktree both are
#   read-only (they were written, and the host's git ran them).
# - A run started below the repository's top (cwd REPO/tools): the .git
#   above is read; the fsmonitor script there is read-only.
# - A tree that is a hooks directory (core.hooksPath's, or .git/hooks) or
#   lies inside a git directory's control paths: refused, in one line.
# - The caller's $GIT_CONFIG_GLOBAL and $XDG_CONFIG_HOME/git/config: a
#   relative core.hooksPath in each is read-only in every repository.
# - A hooksPath directory the run makes in a worktree: in planted_paths.
# - --propose in a worktree and below the top flags the named paths, and
#   in a repository whose hooksPath comes from the caller's ~/.gitconfig
#   (the proposal read no global config before).
# The host side: git status and commit in the worktree as the user run
# the project's own fsmonitor and hook, nothing the sandbox wrote.
# - Command values that are not one plain path (last part).
# Controls: an ordinary file in each tree is written and not flagged.  As
# root and as nobody.
: "${CORDON_TEST_TIMEOUT:=300}"
export CORDON_TEST_TIMEOUT
. "${CORDON_SRC:-.}/tests/lib.sh"

# $1 the directory, $2 the marker directory: repo r (hooksPath
# .githooks, fsmonitor tools/fsmon.sh), its worktree wt, repo g (hooks of
# the global configs), repo n (hooksPath hooks-n, not made yet) and its
# worktree nw.
mkrepos() {
	p=$1 m=$2
	(
		cd "$p" && git init -q r && cd r || exit 1
		git config user.email a@b && git config user.name a
		mkdir .githooks tools
		printf '#!/bin/sh\ntouch %s/pre-commit-real\n' "$m" >.githooks/pre-commit
		printf '#!/bin/sh\ntouch %s/fsmon-real\nexit 1\n' "$m" >tools/fsmon.sh
		chmod +x .githooks/pre-commit tools/fsmon.sh
		echo '# other' >tools/other.sh
		echo x >f && git add -A && git commit -qm init
		git config core.hooksPath .githooks
		git config core.fsmonitor tools/fsmon.sh
		git worktree add -q ../wt
	) || return 1
	(
		cd "$p" && git init -q g && cd g || exit 1
		git config user.email a@b && git config user.name a
		mkdir .gh1 .gh2 .gh3
		for h in .gh1 .gh2 .gh3; do echo '#!/bin/sh' >$h/pre-commit; done
		echo x >f && git add -A && git commit -qm init
	) || return 1
	(
		cd "$p" && git init -q n && cd n || exit 1
		git config user.email a@b && git config user.name a
		echo x >f && git add -A && git commit -qm init
		git config core.hooksPath hooks-n
		git worktree add -q ../nw
	) || return 1
	rm -f "$m"/*
}

around() {
	who=$1
	d=$T/t-$who m=$T/m-$who h=$T/home-$who
	mkdir -p "$d" "$m" "$h/xdg/git"
	chmod 777 "$m"
	mkrepos "$d" "$m" >"$T/mk.out" 2>&1
	is "$?" 0 "$who: the repositories are made" || diag "$(cat "$T/mk.out")"
	printf '[core]\n\thooksPath = .gh1\n' >"$h/global.cfg"
	printf '[core]\n\thooksPath = .gh2\n' >"$h/xdg/git/config"
	printf '[core]\n\thooksPath = .gh3\n' >"$h/.gitconfig"
	[ -n "$RUN_AS" ] && chown -R 65534:65534 "$d" "$h"

	# the linked worktree
	(cd "$d/wt" && $RUN_AS "$CORDON" run --profile workspace-write -- sh -c "$ATTEMPT
		try wt-hook \"printf '#!/bin/sh\ntouch $m/pre-commit-evil\n' >.githooks/pre-commit\"
		try wt-fsmon \"printf '#!/bin/sh\ntouch $m/fsmon-evil\nexit 1\n' >tools/fsmon.sh\"
		try wt-gitfile 'echo gitdir: /tmp >.git'
		try wt-control 'echo y >>f'
		try wt-control-script 'echo y >>tools/other.sh'") >"$T/out" 2>"$T/err"
	is "$(tr '\n' ' ' <"$T/out")" \
		"wt-hook=erofs wt-fsmon=erofs wt-gitfile=erofs wt-control=written wt-control-script=written " \
		"$who: a linked worktree: its hooksPath and fsmonitor script read-only (controls written)" ||
		diag "$(cat "$T/err")"
	(
		cd "$d/wt" && $RUN_AS git status --short && echo z >>f && $RUN_AS git commit -qam next
	) >"$T/host.out" 2>&1
	is "$?" 0 "$who: the host's git status and commit in the worktree succeed" ||
		diag "$(cat "$T/host.out")"
	is "$(ls "$m" | grep evil)" "" "$who: nothing the sandbox wrote ran on the host"
	is "$(ls "$m" | sort | tr '\n' ' ')" "fsmon-real pre-commit-real " \
		"$who: control: the project's own fsmonitor and hook ran"

	# a run below the repository's top
	(cd "$d/r/tools" && $RUN_AS "$CORDON" run --profile workspace-write -- sh -c "$ATTEMPT
		try below-fsmon 'echo y >>fsmon.sh'
		try below-control 'echo y >>other.sh'") >"$T/out" 2>"$T/err"
	is "$(tr '\n' ' ' <"$T/out")" "below-fsmon=erofs below-control=written " \
		"$who: a run below the top: the fsmonitor script the .git above names is read-only"

	# a tree that is a hooks directory, or inside a git directory
	(cd "$d/r/.githooks" && $RUN_AS "$CORDON" run --profile workspace-write -- true) \
		>"$T/out" 2>"$T/err"
	is "$?:$(cat "$T/err")" "125:cordon run: '$d/r/.githooks' is a directory git configuration names (a core.hooksPath, a command's search path), which the host's git runs from: it cannot be a writable tree; refused" \
		"$who: a run in core.hooksPath's directory is refused, in one line"
	(cd "$d/r/.git/hooks" && $RUN_AS "$CORDON" run --profile workspace-write -- true) \
		>"$T/out" 2>"$T/err"
	is "$?:$(cat "$T/err")" "125:cordon run: '$d/r/.git/hooks' is inside git directory '$d/r/.git' (its config, hooks or other control files, which the host's git reads and runs): it cannot be a writable tree; refused" \
		"$who: a run in .git/hooks is refused, in one line"
	(cd "$d/r/.git/hooks" && $RUN_AS "$CORDON" run -- true) >"$T/out" 2>"$T/err"
	is "$?" 0 "$who: control: the default profile (read-only tree) runs there"

	# the caller's global configs, by the environment
	(cd "$d/g" && $RUN_AS env HOME="$h" GIT_CONFIG_GLOBAL="$h/global.cfg" XDG_CONFIG_HOME="$h/xdg" \
		"$CORDON" run --profile workspace-write -- sh -c "$ATTEMPT
		for x in .gh1 .gh2 .gh3; do try \$x \"echo y >>\$x/pre-commit\"; done
		try g-control 'echo y >>f'") >"$T/out" 2>"$T/err"
	is "$(tr '\n' ' ' <"$T/out")" ".gh1=erofs .gh2=erofs .gh3=erofs g-control=written " \
		"$who: hooksPath of \$GIT_CONFIG_GLOBAL, \$XDG_CONFIG_HOME/git/config and ~/.gitconfig read-only"

	# a hooksPath directory made in a worktree: reported
	(cd "$d/nw" && $RUN_AS "$CORDON" run --profile workspace-write --json-fd 3 -- \
		sh -c 'mkdir hooks-n && echo "#!/bin/sh" >hooks-n/pre-commit') 3>"$T/rec" >"$T/out" 2>"$T/err"
	is "$?" 0 "$who: the run making hooks-n exits 0"
	is "$(planted_paths)" "hooks-n" "$who: the hooksPath directory made in a worktree is in planted_paths"

	# --propose: in the worktree, below the top, with the caller's ~/.gitconfig
	(cd "$d/wt" && $RUN_AS "$CORDON" run --propose -- sh -c \
		'echo y >>.githooks/pre-commit; echo y >>tools/fsmon.sh; echo y >>f') >"$T/out" 2>"$T/err"
	is "$(grep -o '[0-9]* added.*flagged' "$T/err")" \
		"0 added, 3 modified, 0 deleted, 0 mkdir, 0 rmdir, 0 refused, 2 flagged" \
		"$who: --propose in a worktree flags the hook and the fsmonitor script (not f)"
	(cd "$d/r/tools" && $RUN_AS "$CORDON" run --propose -- sh -c \
		'echo y >>fsmon.sh; echo y >>other.sh') >"$T/out" 2>"$T/err"
	is "$(grep -o '[0-9]* added.*flagged' "$T/err")" \
		"0 added, 2 modified, 0 deleted, 0 mkdir, 0 rmdir, 0 refused, 1 flagged" \
		"$who: --propose below the top flags the fsmonitor script (not other.sh)"
	(cd "$d/g" && $RUN_AS env HOME="$h" "$CORDON" run --propose -- sh -c \
		'echo y >>.gh3/pre-commit; echo y >>f') >"$T/out" 2>"$T/err"
	is "$(grep -o '[0-9]* added.*flagged' "$T/err")" \
		"0 added, 2 modified, 0 deleted, 0 mkdir, 0 rmdir, 0 refused, 1 flagged" \
		"$who: --propose flags a hook of ~/.gitconfig's core.hooksPath (not f)"
}
for_each_user around

# Command values that are not one plain path (H16): a `cd DIR && ./x`,
# `python3 -m pkg.mod` (each package's __init__.py, the module), a script
# named without a '/' as an interpreter's argument, --opt=path.  Each is
# read-only; a file beside them is not.
commands() {
	who=$1
	c=$T/c-$who
	mkdir -p "$c"
	(
		cd "$c" && git init -q . && mkdir -p tools pkg/sub &&
			for f in tools/fs2.sh pkg/__init__.py pkg/sub/__init__.py pkg/sub/clean.py conv.py \
				tools/rc pkg/other.py tools/other.sh; do echo '#' >$f; done &&
			git config core.fsmonitor 'cd tools && ./fs2.sh' &&
			git config filter.y.clean 'python3 -m pkg.sub.clean' &&
			git config diff.z.textconv 'python3 conv.py' &&
			git config core.pager 'less --rcfile=tools/rc'
	) >"$T/c.out" 2>&1 || diag "set-up: $(cat "$T/c.out")"
	[ -n "$RUN_AS" ] && chown -R 65534:65534 "$c"
	(cd "$c" && $RUN_AS "$CORDON" run --profile workspace-write -- sh -c "$ATTEMPT
		for f in tools/fs2.sh pkg/__init__.py pkg/sub/__init__.py pkg/sub/clean.py conv.py \
			tools/rc pkg/other.py tools/other.sh; do try \$f \"echo x >>\$f\"; done") \
		>"$T/out" 2>"$T/err"
	is "$(tr '\n' ' ' <"$T/out")" \
		"tools/fs2.sh=erofs pkg/__init__.py=erofs pkg/sub/__init__.py=erofs pkg/sub/clean.py=erofs conv.py=erofs tools/rc=erofs pkg/other.py=written tools/other.sh=written " \
		"$who: cd DIR && ./x, -m pkg.sub.clean, an interpreter's script, --rcfile=: read-only (others written)" ||
		diag "$(cat "$T/err")"
}
for_each_user commands

done_testing
