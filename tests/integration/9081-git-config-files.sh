#!/bin/sh
# Issue 16 (session 11's review of the git fixes, F1-F9): what the
# host's git reads or runs that a writable tree held unseen.
# - F1: the caller's global config files themselves ($GIT_CONFIG_GLOBAL,
#   $XDG_CONFIG_HOME/git/config) in the tree: read-only.
# - F2: a tree in no repository: the global config's absolute and ~/
#   paths (core.hooksPath = ~/hooks run in ~/hooks) read-only.
# - F3: a named path through a symlink (~/dotl -> ~/dots): the tree met
#   by its real path keeps it read-only.
# - F4: commands as a shell reads them: sh -c '...', a brace group, a
#   quoted path with a blank, -mMOD, env -C DIR, -Fpath, $PWD/.
# - F5: hook.<name>.command; F6: core.hooksPath = ':(optional)DIR'.
# - F8: the caller's PATH directories in the tree (bin/git): read-only; a
#   tree that is one is refused.
# - F7: a hook hard-linked to a tree file: the tree's name read-only too.
# - F9: a rebase left in progress (.git/rebase-merge): in planted_paths.
# Controls: an ordinary file beside each is written.  As root and nobody.
: "${CORDON_TEST_TIMEOUT:=300}"
export CORDON_TEST_TIMEOUT
. "${CORDON_SRC:-.}/tests/lib.sh"

files() {
	who=$1
	h=$T/h-$who
	mkdir -p "$h/dot/xdg/git" "$h/hooks" "$h/dots/hk" "$h/r/tools" "$h/r/bin"
	ln -s dots "$h/dotl"
	printf '[core]\n\thooksPath = ~/hooks\n[include]\n\tpath = ~/dotl/inc.cfg\n' >"$h/dot/gitconfig"
	printf '[core]\n\tpager = less\n' >"$h/dot/xdg/git/config"
	printf '[core]\n\tattributesFile = ~/dotl/attrs\n' >"$h/dots/inc.cfg"
	for f in hooks/pre-commit hooks/other dot/other dots/attrs dots/other; do echo '#' >"$h/$f"; done
	(
		cd "$h/r" && git init -q . && git config user.email a@b && git config user.name a &&
			for f in a.sh b.sh 'fs mon.sh' mclean.py x cfg y lint.sh other; do echo '#' >"tools/$f"; done &&
			mkdir .githooks && echo '#' >.githooks/pre-commit && echo '#' >bin/other &&
			git config core.fsmonitor "sh -c 'cd tools && ./a.sh'" &&
			git config alias.b '!f() { cd tools && ./b.sh; }; f' &&
			git config filter.q.clean '"tools/fs mon.sh"' &&
			git config filter.q.smudge 'python3 -mtools.mclean' &&
			git config diff.q.textconv 'env -C tools ./x' &&
			git config core.sshCommand 'ssh -Ftools/cfg' &&
			git config core.pager '$PWD/tools/y' &&
			git config hook.lint.command tools/lint.sh &&
			git config core.hooksPath ':(optional).githooks' &&
			echo x >f && git add -A && git commit -qm init
	) >"$T/mk.out" 2>&1 || diag "set-up: $(cat "$T/mk.out")"
	[ -n "$RUN_AS" ] && chown -R 65534:65534 "$h"
	E="HOME=$h GIT_CONFIG_GLOBAL=$h/dot/gitconfig XDG_CONFIG_HOME=$h/dot/xdg"

	(cd "$h/dot" && $RUN_AS env $E "$CORDON" run --profile workspace-write -- sh -c "$ATTEMPT
		try global 'echo x >>gitconfig'; try xdg 'echo x >>xdg/git/config'; try control 'echo x >>other'") \
		>"$T/out" 2>"$T/err"
	is "$(tr '\n' ' ' <"$T/out")" "global=erofs xdg=erofs control=written " \
		"$who: F1: \$GIT_CONFIG_GLOBAL and \$XDG_CONFIG_HOME/git/config in the tree are read-only" ||
		diag "$(cat "$T/err")"
	(cd "$h/hooks" && $RUN_AS env $E "$CORDON" run --profile workspace-write -- sh -c "$ATTEMPT
		try hook 'echo x >>pre-commit'") >"$T/out" 2>"$T/err"
	is "$?:$(cat "$T/out")" "125:" \
		"$who: F2: a run in the global core.hooksPath's directory (~/hooks, no repository) is refused" ||
		diag "$(cat "$T/err")"
	(cd "$h/dots" && $RUN_AS env $E "$CORDON" run --profile workspace-write -- sh -c "$ATTEMPT
		try inc 'echo x >>inc.cfg'; try attrs 'echo x >>attrs'; try control 'echo x >>other'") \
		>"$T/out" 2>"$T/err"
	is "$(tr '\n' ' ' <"$T/out")" "inc=erofs attrs=erofs control=written " \
		"$who: F2+F3: files named through ~/dotl (a symlink to this tree), no repository: read-only" ||
		diag "$(cat "$T/err")"
	(cd "$h/r" && $RUN_AS env $E PATH="$h/r/bin:$PATH" "$CORDON" run --profile workspace-write -- sh -c "$ATTEMPT
		for f in tools/a.sh tools/b.sh 'tools/fs mon.sh' tools/mclean.py tools/x tools/cfg tools/y \
			tools/lint.sh .githooks/pre-commit bin/other tools/other; do try \"\$f\" \"echo x >>'\$f'\"; done
		try bin-git 'echo x >bin/git'") >"$T/out" 2>"$T/err"
	is "$(tr '\n' ' ' <"$T/out")" \
		"tools/a.sh=erofs tools/b.sh=erofs tools/fs mon.sh=erofs tools/mclean.py=erofs tools/x=erofs tools/cfg=erofs tools/y=erofs tools/lint.sh=erofs .githooks/pre-commit=erofs bin/other=erofs tools/other=written bin-git=erofs " \
		"$who: F4-F6, F8: shell-read commands, hook.*.command, :(optional), PATH's bin/: read-only (tools/other written)" ||
		diag "$(cat "$T/err")"
	(cd "$h/r/bin" && $RUN_AS env $E PATH="$h/r/bin:$PATH" "$CORDON" run --profile workspace-write -- true) \
		>"$T/out" 2>"$T/err"
	is "$?:$(cat "$T/err")" "125:cordon run: '$h/r/bin' is in the caller's PATH ('$h/r/bin'): what is written there runs on the host by name, so it cannot be a writable tree; refused" \
		"$who: F8: a tree that is a PATH directory is refused, in one line"
	(cd "$h/r" && $RUN_AS env $E "$CORDON" run --profile workspace-write --json-fd 3 -- sh -c \
		'mkdir .git/rebase-merge && echo "exec touch /tmp/x" >.git/rebase-merge/git-rebase-todo') \
		3>"$T/rec" >"$T/out" 2>"$T/err"
	is "$(planted_paths)" ".git/rebase-merge" "$who: F9: a rebase left in progress is in planted_paths"
	(cd "$h/r" && $RUN_AS env $E "$CORDON" run --profile workspace-write --json-fd 3 -- sh -c \
		'echo y >>f') 3>"$T/rec" >"$T/out" 2>"$T/err"
	is "$(planted_paths)" "" "$who: control: an ordinary change reports nothing"
	# F7: a hook hard-linked to a tree file; a linked pair elsewhere (control)
	(cd "$h/r" && echo '#' >tools/hookx && ln tools/hookx .git/hooks/pre-push && ln tools/other tools/other2) 2>"$T/err" ||
		diag "$(cat "$T/err")"
	[ -n "$RUN_AS" ] && chown -R 65534:65534 "$h/r"
	(cd "$h/r" && $RUN_AS env $E "$CORDON" run --profile workspace-write -- sh -c "$ATTEMPT
		try hook-link 'echo x >>tools/hookx'; try control-link 'echo x >>tools/other2'") \
		>"$T/out" 2>"$T/err"
	is "$(tr '\n' ' ' <"$T/out")" "hook-link=erofs control-link=written " \
		"$who: F7: a tree file hard-linked to a hook is read-only (another linked pair written)" ||
		diag "$(cat "$T/err")"
	(cd "$h/r" && $RUN_AS env $E PATH="$h/r/bin:$PATH" "$CORDON" run --propose -- sh -c \
		'echo x >>tools/a.sh; echo x >bin/git; echo x >>tools/other') >"$T/out" 2>"$T/err"
	is "$(grep -o '[0-9]* added.*flagged' "$T/err")" \
		"1 added, 2 modified, 0 deleted, 0 mkdir, 0 rmdir, 0 refused, 2 flagged" \
		"$who: --propose flags the fsmonitor's script and a file added to PATH's bin/ (not tools/other)"
}
for_each_user files

done_testing
