#!/bin/sh
# Issue 16 (session 11's second review of the git fixes, G1-G6, G8): what
# still ran on the host.
# - G1: PATH entries ($PWD/node_modules/.bin) in the tree, ~/bin as the
#   caller's; "." or an empty entry refuses the run (any other relative
#   entry too since the third look: 9091).
# - G2: a rebase in progress whose todo is rewritten in place: reported;
#   --propose flags it.
# - G3: init.templateDir (every clone's hooks): read-only.
# - G4: "$(git rev-parse --show-toplevel)/x", $(pwd), `pwd`, env
#   --chdir=DIR, cd "$PWD/DIR", cd -- DIR, python3 -Im MOD, a script not
#   there yet (listed: its making is reported).
# - G5: an .envrc's PATH_add DIR and layout node: read-only.
# - G6: a named path through a dangling symlink (its target made later).
# - G8: a host-run file (.husky/pre-commit) hard-linked to a tree file.
# - A test script named *kubeconfig*.sh is code, not a credential.
# Controls: an ordinary file beside each is written.  As root and nobody.
: "${CORDON_TEST_TIMEOUT:=300}"
export CORDON_TEST_TIMEOUT
. "${CORDON_SRC:-.}/tests/lib.sh"

round2() {
	who=$1
	h=$T/h-$who
	mkdir -p "$h/r/tools/p" "$h/r/node_modules/.bin" "$h/r/bin" "$h/r/lb" "$h/r/.husky" "$h/bin" "$h/tpl/hooks"
	(
		cd "$h/r" && git init -q . && git config user.email a@b && git config user.name a &&
			for f in a b c d e g other p/__init__.py p/m.py; do echo '#' >"tools/$f"; done &&
			echo '#' >.husky/pre-commit && ln .husky/pre-commit tools/pc &&
			echo 'kubectl get pods' >tools/check-kubeconfig.sh &&
			printf 'PATH_add lb\nlayout node\n' >.envrc &&
			git config alias.a '!"$(git rev-parse --show-toplevel)/tools/a"' &&
			git config alias.b '!$(pwd)/tools/b' &&
			git config alias.c '!`pwd`/tools/c' &&
			git config diff.q.textconv 'env --chdir=tools ./d' &&
			git config core.pager 'cd "$PWD/tools" && ./e' &&
			git config core.editor 'cd -- tools && ./g' &&
			git config filter.q.clean 'python3 -Im tools.p.m' &&
			git config filter.q.smudge 'sh notyet.sh' &&
			git config core.sshCommand 'sh ~/.gh-dangling/x' &&
			echo x >f && git add -A && git commit -qm init &&
			ln -s "$h/made-later" "$h/.gh-dangling"
	) >"$T/mk.out" 2>&1 || diag "set-up: $(cat "$T/mk.out")"
	printf '[init]\n\ttemplateDir = %s/tpl\n' "$h" >"$h/.gitconfig"
	echo '#' >"$h/tpl/hooks/post-checkout"
	[ -n "$RUN_AS" ] && chown -R 65534:65534 "$h"

	(cd "$h/r" && $RUN_AS env HOME="$h" PATH="$h/r/node_modules/.bin:~/bin:$PATH" \
		"$CORDON" run --profile workspace-write --json-fd 3 -- sh -c "$ATTEMPT
		for f in tools/a tools/b tools/c tools/d tools/e tools/g tools/p/__init__.py tools/p/m.py \
			tools/pc lb/x node_modules/.bin/git tools/other; do try \$f \"echo x >>\$f\"; done
		try check-kubeconfig 'cat tools/check-kubeconfig.sh >/dev/null && test -s tools/check-kubeconfig.sh'
		echo x >notyet.sh") 3>"$T/rec" >"$T/out" 2>"$T/err"
	is "$(tr '\n' ' ' <"$T/out")" \
		"tools/a=erofs tools/b=erofs tools/c=erofs tools/d=erofs tools/e=erofs tools/g=erofs tools/p/__init__.py=erofs tools/p/m.py=erofs tools/pc=erofs lb/x=erofs node_modules/.bin/git=erofs tools/other=written check-kubeconfig=written " \
		"$who: G1, G4, G5, G8: each read-only (tools/other written; a *kubeconfig*.sh read whole)" ||
		diag "$(cat "$T/err")"
	is "$(planted_paths)" "notyet.sh" "$who: G4: a script a command names, made in the run, is in planted_paths"

	(cd "$h" && $RUN_AS env HOME="$h" "$CORDON" run --profile workspace-write -- sh -c "$ATTEMPT
		try tpl 'echo x >>tpl/hooks/post-checkout'; try dangling 'mkdir made-later && echo x >made-later/x'") \
		>"$T/out" 2>"$T/err"
	# the home itself is refused as a tree: run in a directory below it
	case $(cat "$T/err") in *"home directory"* | *HOME*) r=home ;; *) r=other ;; esac
	if [ "$r" = home ]; then
		mkdir -p "$h/w" && mv "$h/tpl" "$h/w/tpl" && ln -s "$h/w/made-later" "$h/.gh2" &&
			printf '[init]\n\ttemplateDir = %s/w/tpl\n[core]\n\tsshCommand = sh ~/.gh2/x\n' "$h" >"$h/.gitconfig"
		[ -n "$RUN_AS" ] && chown -R 65534:65534 "$h"
		(cd "$h/w" && $RUN_AS env HOME="$h" "$CORDON" run --profile workspace-write --json-fd 3 -- sh -c "$ATTEMPT
			try tpl 'echo x >>tpl/hooks/post-checkout'; mkdir made-later; echo x >made-later/x") \
			3>"$T/rec" >"$T/out" 2>"$T/err"
	fi
	is "$(tr '\n' ' ' <"$T/out")" "tpl=erofs " "$who: G3: init.templateDir's hooks are read-only" ||
		diag "$(cat "$T/err")"
	case " $(planted_paths) " in *" made-later/x "*) r=yes ;; *) r="no: $(planted_paths)" ;; esac
	is "$r" yes "$who: G6: a file made where a dangling link in the global config points is reported"

	# G1: "." or an empty entry in PATH refuses a writable tree
	(cd "$h/r" && $RUN_AS env HOME="$h" PATH="$PATH:" "$CORDON" run --profile workspace-write -- true) \
		>"$T/out" 2>"$T/err"
	is "$?:$(cat "$T/err")" "125:cordon run: the caller's PATH holds '' (the current directory): what is written in the writable tree '$h/r' would run on the host by name; take it out of PATH; refused" \
		"$who: G1: an empty PATH entry refuses a workspace-write run, in one line"
	(cd "$h/r" && $RUN_AS env HOME="$h" PATH="$PATH:" "$CORDON" run -- true) >"$T/out" 2>"$T/err"
	is "$?" 0 "$who: control: the default profile (read-only tree) runs with it"

	# G2: a rebase in progress, its todo rewritten in place
	(cd "$h/r" && mkdir .git/rebase-merge && echo 'pick 1234' >.git/rebase-merge/git-rebase-todo)
	[ -n "$RUN_AS" ] && chown -R 65534:65534 "$h/r/.git"
	(cd "$h/r" && $RUN_AS env HOME="$h" "$CORDON" run --profile workspace-write --json-fd 3 -- sh -c \
		'echo "exec touch /tmp/x" >.git/rebase-merge/git-rebase-todo') 3>"$T/rec" >"$T/out" 2>"$T/err"
	is "$(planted_paths)" ".git/rebase-merge/git-rebase-todo" "$who: G2: a todo rewritten in place is reported"
	(cd "$h/r" && $RUN_AS env HOME="$h" "$CORDON" run --propose -- sh -c \
		'echo "exec touch /tmp/x" >>.git/rebase-merge/git-rebase-todo; echo y >>tools/other') \
		>"$T/out" 2>"$T/err"
	is "$(grep -o '[0-9]* added.*flagged' "$T/err")" \
		"0 added, 2 modified, 0 deleted, 0 mkdir, 0 rmdir, 0 refused, 1 flagged" \
		"$who: G2: --propose flags the todo (not tools/other)"

	# the third look (H2, H4, H5): --propose flags a relative PATH entry's
	# directory; a PATH entry that is a dangling symlink into the tree is
	# read-only where it points; $GIT_TEMPLATE_DIR's hooks are read-only
	mkdir -p "$h/w3/tpl3/hooks" && echo '#' >"$h/w3/tpl3/hooks/post-checkout" &&
		ln -s "$h/w3/dbin" "$h/dlink"
	[ -n "$RUN_AS" ] && chown -R 65534:65534 "$h/w3" && chown -h 65534:65534 "$h/dlink"
	(cd "$h/w3" && $RUN_AS env HOME="$h" PATH="$h/dlink:$PATH" GIT_TEMPLATE_DIR="$h/w3/tpl3" \
		"$CORDON" run --profile workspace-write --json-fd 3 -- sh -c "$ATTEMPT
		try tpl3 'echo x >>tpl3/hooks/post-checkout'; mkdir dbin; echo x >dbin/git") \
		3>"$T/rec" >"$T/out" 2>"$T/err"
	is "$(cat "$T/out")" "tpl3=erofs" "$who: H5: \$GIT_TEMPLATE_DIR's hooks are read-only" ||
		diag "$(cat "$T/err")"
	case " $(planted_paths) " in *" dbin/git "* | *" dbin "*) r=yes ;; *) r="no: $(planted_paths)" ;; esac
	is "$r" yes "$who: H4: a directory made where a dangling PATH link points is reported"
	(cd "$h/r" && $RUN_AS env HOME="$h" PATH="./node_modules/.bin:$PATH" "$CORDON" run --propose -- sh -c \
		'echo x >node_modules/.bin/git; echo y >>tools/other') >"$T/out" 2>"$T/err"
	is "$(grep -o '[0-9]* added.*flagged' "$T/err")" \
		"1 added, 1 modified, 0 deleted, 0 mkdir, 0 rmdir, 0 refused, 1 flagged" \
		"$who: H2: --propose flags a file added to a relative PATH entry's directory (not tools/other)"
}
for_each_user round2

done_testing
