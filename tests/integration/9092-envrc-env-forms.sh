#!/bin/sh
# Issue 16 (session 12's review of the watcher, H3' and H7'): shell forms
# the .envrc and git alias readers did not read.
# - H3': an .envrc's PATH_add after ; && or a keyword (if/then), inside
#   { }, continued on the next line with a backslash, or after a comment
#   word with a # inside it, after VAR=value; has nix && use nix (shell.nix): each
#   directory (or file) read-only; --propose flags a change in one.
# - H7': an alias `!env PATH=tools:$PATH run.sh` (env -i, -u NAME too):
#   the PATH directory read-only, as for the bare PATH=tools:$PATH form.
# Controls: an ordinary file beside each is written.  As root and nobody.
: "${CORDON_TEST_TIMEOUT:=300}"
export CORDON_TEST_TIMEOUT
. "${CORDON_SRC:-.}/tests/lib.sh"

forms() {
	who=$1
	h=$T/h-$who
	mkdir -p "$h/r/d1" "$h/r/d2" "$h/r/d3" "$h/r/d4" "$h/r/d5" "$h/r/d6" "$h/r/d7" "$h/r/d8" "$h/r/d9" \
		"$h/r/t1" "$h/r/t2" "$h/r/t3" "$h/r/other"
	(
		cd "$h/r" && git init -q . && git config user.email a@b && git config user.name a &&
			printf '%s\n' 'dotenv; PATH_add d1' '[ -d d2 ] && PATH_add d2' \
				'if true; then PATH_add d3; fi' '{ PATH_add d4; }' 'PATH_add \' '  d5' \
				'true a#b; PATH_add d6' 'has nix && use nix' 'x=1 || PATH_add d7' ' \' '  PATH_add d8' 'X=1 PATH_add d9' >.envrc &&
			echo '{}' >shell.nix && for d in t1 t2 t3 other; do echo '#' >"$d/run.sh"; done &&
			git config alias.e1 '!env PATH=t1:$PATH run.sh' &&
			git config alias.e2 '!env -i PATH=t2:/usr/bin run.sh' &&
			git config alias.e3 '!env -u HOME PATH=t3:$PATH run.sh' &&
			echo x >f && git add -A && git commit -qm init
	) >"$T/mk.out" 2>&1 || diag "set-up: $(cat "$T/mk.out")"
	[ -n "$RUN_AS" ] && chown -R 65534:65534 "$h"

	(cd "$h/r" && $RUN_AS env HOME="$h" "$CORDON" run --profile workspace-write -- sh -c "$ATTEMPT
		for f in d1/git d2/git d3/git d4/git d5/git d6/git d7/git d8/git d9/git shell.nix t1/run.sh t2/run.sh \
			t3/run.sh other/run.sh; do
			try \$f \"echo x >>\$f\"; done") >"$T/out" 2>"$T/err"
	is "$(tr '\n' ' ' <"$T/out")" \
		"d1/git=erofs d2/git=erofs d3/git=erofs d4/git=erofs d5/git=erofs d6/git=erofs d7/git=erofs d8/git=erofs d9/git=erofs shell.nix=erofs t1/run.sh=erofs t2/run.sh=erofs t3/run.sh=erofs other/run.sh=written " \
		"$who: H3', H7': each read-only (other/run.sh written)" || diag "$(cat "$T/err")"

	(cd "$h/r" && $RUN_AS env HOME="$h" "$CORDON" run --propose -- sh -c \
		'echo x >d2/npx; echo y >>other/run.sh') >"$T/out" 2>"$T/err"
	is "$(grep -o '[0-9]* added.*flagged' "$T/err")" \
		"1 added, 1 modified, 0 deleted, 0 mkdir, 0 rmdir, 0 refused, 1 flagged" \
		"$who: H3': --propose flags a file added to [ -d d2 ] && PATH_add d2 (not other/run.sh)"
}
for_each_user forms

done_testing
