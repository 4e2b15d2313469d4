#!/bin/sh
# Issue 16 (session 11's third review of the git fixes, H1, H3, H6-H8):
# what still ran on the host.
# - H1: a relative PATH entry (./node_modules/.bin) is searched from any
#   directory: a writable tree is refused while PATH holds one; --propose
#   flags a change below such a name at any depth.
# - H3: an .envrc's PATH_add "$PWD/x", PATH_add a b, path_add PATH x,
#   export PATH=$PWD/x:$PATH, layout php, layout python3 (.direnv),
#   load_prefix DIR: each directory read-only (one made: reported);
#   --propose flags a change in one.
# - H6: a file hard-linked to a hook of init.templateDir (hooks/*, a
#   level below the named directory): read-only under its other name.
# - H7: alias forms "$(pwd -P)/x", "$(/bin/pwd)/x", "${PWD:-.}/x",
#   $(git rev-parse --show-toplevel 2>/dev/null)/x: read-only.
# - H8: an absolute PATH entry through a symlink in the tree (and a
#   layout's .direnv that is one): the run is refused naming the link
#   (session 12's F5: the sandbox could point it elsewhere).
# Controls: an ordinary file beside each is written.  As root and nobody.
: "${CORDON_TEST_TIMEOUT:=300}"
export CORDON_TEST_TIMEOUT
. "${CORDON_SRC:-.}/tests/lib.sh"

round3() {
	who=$1
	h=$T/h-$who
	mkdir -p "$h/r/tools" "$h/r/node_modules/.bin" "$h/r/packages/app/node_modules/.bin" \
		"$h/r/b1" "$h/r/b2" "$h/r/b3" "$h/r/b4" "$h/r/lb" "$h/r/vendor/bin" "$h/r/pfx/bin" \
		"$h/r/.direnv/python-3.11/bin" "$h/r/scripts" "$h/w6/tpl/hooks" "$h/r/sub" "$h/r/sub2" \
		"$h/r/cache/bin"
	(
		cd "$h/r" && git init -q . && git config user.email a@b && git config user.name a &&
			for f in t1 t2 t3 t7 other; do echo '#' >"tools/$f"; done &&
			echo '#' >scripts/x && ln -s scripts sbin &&
			cat >.envrc <<-'EOF'
				PATH_add "$PWD/b1"
				export PATH=$PWD/b2:$PATH
				path_add PATH b3
				PATH_add lb b4
				layout php
				load_prefix pfx
				layout python3
			EOF
			echo 'layout python' >sub/.envrc && echo 'layout_ruby' >sub2/.envrc &&
			git config alias.t1 '!"$(pwd -P)/tools/t1"' &&
			git config alias.t2 '!$(git rev-parse --show-toplevel 2>/dev/null)/tools/t2' &&
			git config alias.t3 '!"${PWD:-.}/tools/t3"' &&
			git config alias.t7 '!"$(/bin/pwd)/tools/t7"' &&
			echo x >f && git add -A && git commit -qm init
	) >"$T/mk.out" 2>&1 || diag "set-up: $(cat "$T/mk.out")"
	echo '#' >"$h/w6/tpl/hooks/post-checkout" && ln "$h/w6/tpl/hooks/post-checkout" "$h/w6/tplink" &&
		echo '#' >"$h/w6/other"
	printf '[init]\n\ttemplateDir = %s/w6/tpl\n' "$h" >"$h/.gitconfig"
	[ -n "$RUN_AS" ] && chown -R 65534:65534 "$h"

	# H3, H7 (sub/.direnv not there yet: made, it is reported)
	(cd "$h/r" && $RUN_AS env HOME="$h" "$CORDON" run --profile workspace-write --json-fd 3 -- sh -c "$ATTEMPT
		for f in b1/git b2/git b3/git b4/git lb/git vendor/bin/git pfx/bin/git \
			.direnv/python-3.11/bin/git tools/t1 tools/t2 tools/t3 tools/t7 tools/other; do
			try \$f \"echo x >>\$f\"; done
		mkdir -p sub/.direnv/python-3.12/bin && echo x >sub/.direnv/python-3.12/bin/git") \
		3>"$T/rec" >"$T/out" 2>"$T/err"
	is "$(tr '\n' ' ' <"$T/out")" \
		"b1/git=erofs b2/git=erofs b3/git=erofs b4/git=erofs lb/git=erofs vendor/bin/git=erofs pfx/bin/git=erofs .direnv/python-3.11/bin/git=erofs tools/t1=erofs tools/t2=erofs tools/t3=erofs tools/t7=erofs tools/other=written " \
		"$who: H3, H7: each read-only (tools/other written)" || diag "$(cat "$T/err")"
	case " $(planted_paths) " in *" sub/.direnv "*) r=yes ;; *) r="no: $(planted_paths)" ;; esac
	is "$r" yes "$who: H3: a layout's .direnv made in the run is reported"

	# H8 (and session 12's F5): a symlink in the writable tree on the way
	# to a named directory (PATH through the tree's sbin -> scripts, a
	# layout's .direnv -> ../cache) refuses the run, saying which link:
	# the sandbox could point it elsewhere before the host's next command
	(cd "$h/r" && $RUN_AS env HOME="$h" PATH="$h/r/sbin:$PATH" \
		"$CORDON" run --profile workspace-write -- sh -c 'rm sbin && mkdir sbin && echo x >sbin/git') \
		>"$T/out" 2>"$T/err"
	is "$?:$(grep -c "'$h/r/sbin' is a symlink on the way to" "$T/err")" "125:1" \
		"$who: H8: a PATH entry through a symlink in the tree refuses the run, naming the link"
	[ -L "$h/r/sbin" ] && r=link || r=replaced
	is "$r" link "$who: H8: ... and the link is untouched"
	ln -s ../cache "$h/r/sub2/.direnv" && [ -n "$RUN_AS" ] && chown -h 65534:65534 "$h/r/sub2/.direnv"
	(cd "$h/r" && $RUN_AS env HOME="$h" "$CORDON" run --profile workspace-write -- true) \
		>"$T/out" 2>"$T/err"
	is "$?:$(grep -c "'$h/r/sub2/.direnv' is a symlink on the way to" "$T/err")" "125:1" \
		"$who: H3: a layout's .direnv that is a symlink in the tree refuses the run"
	rm -f "$h/r/sub2/.direnv"

	# H1: a relative entry refuses a writable tree; the default profile runs
	(cd "$h/r" && $RUN_AS env HOME="$h" PATH="./node_modules/.bin:$PATH" \
		"$CORDON" run --profile workspace-write -- sh -c 'echo x >packages/app/node_modules/.bin/git') \
		>"$T/out" 2>"$T/err"
	is "$?:$(cat "$T/err")" "125:cordon run: the caller's PATH holds the relative entry './node_modules/.bin', which the shell searches from whatever directory it is in: what is written below any directory of the writable tree '$h/r' would run on the host by name; put an absolute path in PATH instead; refused" \
		"$who: H1: a relative PATH entry refuses a workspace-write run, in one line"
	[ -e "$h/r/packages/app/node_modules/.bin/git" ] && r=written || r=absent
	is "$r" absent "$who: H1: nothing was written"
	(cd "$h/r" && $RUN_AS env HOME="$h" PATH="sbin:$PATH" "$CORDON" run --profile workspace-write -- true) \
		>"$T/out" 2>"$T/err"
	case $(cat "$T/err") in *"PATH holds the relative entry 'sbin'"*) r=path ;; *) r="other: $(cat "$T/err")" ;; esac
	is "$r" path "$who: H8: a relative entry through a symlink names PATH, not git config"
	(cd "$h/r" && $RUN_AS env HOME="$h" PATH="./node_modules/.bin:$PATH" "$CORDON" run -- true) \
		>"$T/out" 2>"$T/err"
	is "$?" 0 "$who: control: the default profile (read-only tree) runs with it"
	(cd "$h/r" && $RUN_AS env HOME="$h" "$CORDON" run --profile workspace-write -- sh -c \
		'echo x >packages/app/node_modules/.bin/y') >"$T/out" 2>"$T/err"
	is "$?" 0 "$who: control: without the relative entry the run goes on"
	(cd "$h/r" && $RUN_AS env HOME="$h" PATH="./node_modules/.bin:$PATH" "$CORDON" run --propose -- sh -c \
		'echo x >packages/app/node_modules/.bin/npx; echo y >>tools/other') >"$T/out" 2>"$T/err"
	is "$(grep -o '[0-9]* added.*flagged' "$T/err")" \
		"1 added, 1 modified, 0 deleted, 0 mkdir, 0 rmdir, 0 refused, 1 flagged" \
		"$who: H1: --propose flags a file added below a relative PATH entry's name at any depth"

	(cd "$h/r" && $RUN_AS env HOME="$h" PATH="$PATH:." "$CORDON" run --propose -- sh -c \
		'echo x >packages/ls; chmod +x packages/ls; echo y >>tools/other') >"$T/out" 2>"$T/err"
	is "$(grep -o '[0-9]* added.*flagged' "$T/err")" \
		"1 added, 1 modified, 0 deleted, 0 mkdir, 0 rmdir, 0 refused, 1 flagged" \
		"$who: H1: with . in PATH --propose flags an executable added anywhere (not tools/other)"

	# H3 under --propose: a change in a directory the .envrc puts on PATH
	(cd "$h/r" && $RUN_AS env HOME="$h" "$CORDON" run --propose -- sh -c \
		'echo x >b2/npx; echo y >>tools/other') >"$T/out" 2>"$T/err"
	is "$(grep -o '[0-9]* added.*flagged' "$T/err")" \
		"1 added, 1 modified, 0 deleted, 0 mkdir, 0 rmdir, 0 refused, 1 flagged" \
		"$who: H3: --propose flags a file added to an .envrc's PATH directory (not tools/other)"

	# H6: templateDir's hooks/* hard-linked into the tree
	(cd "$h/w6" && $RUN_AS env HOME="$h" "$CORDON" run --profile workspace-write -- sh -c "$ATTEMPT
		try tplink 'echo x >>tplink'; try other 'echo x >>other'") >"$T/out" 2>"$T/err"
	is "$(tr '\n' ' ' <"$T/out")" "tplink=erofs other=written " \
		"$who: H6: a hard link to a templateDir hook is read-only (other written)" ||
		diag "$(cat "$T/err")"
}
for_each_user round3

done_testing
