#!/bin/sh
# Issue 16 (session 10's outside review, F1): what a repository's own
# read-only .git/config and hooks name in the working tree, which the
# host's git runs or reads config from on its next command.
# In a workspace-write tree:
# - the directory core.hooksPath names (.githooks) is read-only whole: no
#   rewritten hook, no new one;
# - a file include.path names (../.gitconfig), and one that file includes
#   in turn (conf/nested.cfg), is read-only: no core.fsmonitor added;
# - the tree scripts of a filter driver (sh tools/clean.sh) and of
#   core.fsmonitor (tools/fsmon.sh) are read-only;
# - a hook that is a symlink into the tree: its target is read-only,
#   written directly or through the link;
# - a relative core.hooksPath in the caller's ~/.gitconfig (.ghooks):
#   that directory of each repository is read-only;
# - a core.hooksPath directory that does not exist yet is made by the
#   run: it is in planted_paths.
# With --propose, a change to any of them is flagged.
# The host side: git status, add, commit and checkout, as the user would:
# nothing the sandbox wrote runs, and the project's own hooks, filter and
# fsmonitor do (the positive control).  Controls: an ordinary file and an
# unnamed script in tools/ are written and not listed (a command word
# "./" names the tree's top: not made read-only).  As root and as
# nobody.
: "${CORDON_TEST_TIMEOUT:=300}"
export CORDON_TEST_TIMEOUT
. "${CORDON_SRC:-.}/tests/lib.sh"

# $1 the tree, $2 the marker directory: each script the host runs
# touches $2/NAME-real; the sandbox's versions touch $2/NAME-evil.
mkrepo() {
	p=$1 m=$2
	mkdir -p "$p/a" "$p/b" "$p/c" "$p/e"
	(
		cd "$p/a" || exit 1
		git init -q . && git config user.email a@b && git config user.name a
		git config core.hooksPath .githooks
		git config include.path ../.gitconfig
		git config filter.x.clean 'sh tools/clean.sh'
		git config filter.x.smudge cat
		git config diff.t.textconv 'sh ./' # names no script: the tree stays writable
		mkdir .githooks tools conf
		printf '#!/bin/sh\ntouch %s/pre-commit-real\n' "$m" >.githooks/pre-commit
		chmod +x .githooks/pre-commit
		printf '[include]\n\tpath = conf/nested.cfg\n[core]\n\tfsmonitor = tools/fsmon.sh\n' >.gitconfig
		printf '[user]\n\tname = a\n' >conf/nested.cfg
		printf '#!/bin/sh\ntouch %s/fsmon-real\nexit 1\n' "$m" >tools/fsmon.sh
		chmod +x tools/fsmon.sh
		printf 'touch %s/clean-real\ncat\n' "$m" >tools/clean.sh
		echo '# other' >tools/other.sh
		echo '*.dat filter=x' >.gitattributes
		echo x >f.dat && echo x >f
		git add -A && git commit -qm init
	) || return 1
	(
		cd "$p/b" || exit 1
		git init -q . && git config user.email a@b && git config user.name a
		mkdir scripts
		printf '#!/bin/sh\ntouch %s/post-commit-real\n' "$m" >scripts/post-commit.sh
		chmod +x scripts/post-commit.sh
		ln -s ../../scripts/post-commit.sh .git/hooks/post-commit
		echo x >f && git add -A && git commit -qm init
	) || return 1
	(
		cd "$p/c" || exit 1
		git init -q . && git config user.email a@b && git config user.name a
		git config core.hooksPath hooks-c
		echo x >f && git add -A && git commit -qm init
	) || return 1
	(
		cd "$p/e" || exit 1
		git init -q . && git config user.email a@b && git config user.name a
		mkdir .ghooks
		printf '#!/bin/sh\ntouch %s/global-real\n' "$m" >.ghooks/pre-commit
		chmod +x .ghooks/pre-commit
		echo x >f && git add -A && git commit -qm init
	) || return 1
	rm -f "$m"/*
}

named() {
	who=$1
	d=$T/t-$who m=$T/m-$who
	mkdir -p "$d" "$m"
	chmod 777 "$m"
	mkrepo "$d" "$m" >"$T/mk.out" 2>&1
	is "$?" 0 "$who: the repositories are made"
	cat >"$d/attack.sh" <<EOF
$ATTEMPT
try hooks-rewrite "printf '#!/bin/sh\ntouch $m/pre-commit-evil\n' >a/.githooks/pre-commit"
try hooks-new "printf '#!/bin/sh\ntouch $m/post-checkout-evil\n' >a/.githooks/post-checkout && chmod +x a/.githooks/post-checkout"
try include "printf '[core]\n\tfsmonitor = \"touch $m/include-evil; false\"\n' >>a/.gitconfig"
try nested-include "printf '[core]\n\tfsmonitor = \"touch $m/nested-evil; false\"\n' >>a/conf/nested.cfg"
try filter-script "echo 'touch $m/clean-evil; cat' >a/tools/clean.sh"
try fsmon-script "printf '#!/bin/sh\ntouch $m/fsmon-evil\nexit 1\n' >a/tools/fsmon.sh"
try hook-target "printf '#!/bin/sh\ntouch $m/post-commit-evil\n' >b/scripts/post-commit.sh"
try through-link "printf '#!/bin/sh\ntouch $m/post-commit-evil\n' >b/.git/hooks/post-commit"
try global-hooks "printf '#!/bin/sh\ntouch $m/global-evil\n' >e/.ghooks/pre-commit"
try control-file "echo y >>a/f"
try control-script "echo y >>a/tools/other.sh"
try new-hooks-dir "mkdir c/hooks-c && printf '#!/bin/sh\ntouch $m/c-evil\n' >c/hooks-c/pre-commit && chmod +x c/hooks-c/pre-commit"
EOF
	[ -n "$RUN_AS" ] && chown -R 65534:65534 "$d"
	cd "$d" || exit 1
	# the caller's ~/.gitconfig: a relative core.hooksPath, for every repository
	h=$T/home-$who
	mkdir -p "$h"
	printf '[core]\n\thooksPath = .ghooks\n' >"$h/.gitconfig"
	[ -n "$RUN_AS" ] && chown -R 65534:65534 "$h"
	$RUN_AS env HOME="$h" "$CORDON" run --profile workspace-write --json-fd 3 -- sh attack.sh \
		3>"$T/rec" >"$T/out" 2>"$T/err"
	is "$?" 0 "$who: the run exits 0"
	for n in hooks-rewrite hooks-new include nested-include filter-script fsmon-script \
		hook-target through-link global-hooks; do
		is "$(grep "^$n=" "$T/out")" "$n=erofs" "$who: $n is refused: read-only file system"
	done
	for n in control-file control-script new-hooks-dir; do
		is "$(grep "^$n=" "$T/out")" "$n=written" "$who: control: $n is written"
	done
	got=" $(planted_paths) "
	case $got in *" c/hooks-c "*) r=yes ;; *) r="no: $got" ;; esac
	is "$r" yes "$who: the hooksPath directory the run made is in planted_paths"
	case $got in *f*) r="listed: $got" ;; *) r=no ;; esac
	is "$r" no "$who: control: a/f and a/tools/other.sh are not listed"
	# the host, as the user: status, add, commit, checkout
	(
		cd a && $RUN_AS git status --short && echo z >>f.dat && $RUN_AS git add -A &&
			$RUN_AS git commit -qm next && $RUN_AS git checkout -q -b other
		cd ../b && echo z >>f && $RUN_AS git commit -qam next
		cd ../e && echo z >>f && $RUN_AS env HOME="$h" git commit -qam next
	) >"$T/host.out" 2>&1
	is "$?" 0 "$who: the host's git commands succeed"
	is "$(ls "$m" | grep evil)" "" "$who: nothing the sandbox wrote ran on the host"
	is "$(ls "$m" | grep real | sort | tr '\n' ' ')" \
		"clean-real fsmon-real global-real post-commit-real pre-commit-real " \
		"$who: control: the project's own hooks (linked, global hooksPath), filter, fsmonitor ran"
	# --propose: a change to a named path is flagged, an ordinary one not
	cd a || exit 1
	$RUN_AS "$CORDON" run --propose --agent bot -- sh -c 'echo y >>.githooks/pre-commit
		echo y >>.gitconfig; echo y >>conf/nested.cfg; echo y >>tools/clean.sh
		echo y >.githooks/new; echo y >>f; echo y >>tools/other.sh' >"$T/out" 2>"$T/err"
	is "$?" 0 "$who: the proposing run exits 0"
	is "$(grep -o '[0-9]* added.*flagged' "$T/err")" \
		"1 added, 6 modified, 0 deleted, 0 mkdir, 0 rmdir, 0 refused, 5 flagged" \
		"$who: --propose flags the 5 named paths changed (not f, tools/other.sh)"
	cd "$T" || exit 1
}
for_each_user named

# What the reader must read as git does (session 10's second review):
# a UTF-8 BOM before an included file's first section (H9), a value
# continued over a CRLF line end (H6), "!" aliases (H4), ~/ in the
# caller's config naming a hooks directory and an include in a dotfiles
# tree (H1), a ~/.gitconfig that is a symlink into the tree, a config past
# the old 256 KiB read bound (H12).  Each target is written by the
# sandbox's command; the host's git runs none of what it wrote.
syntax() {
	who=$1
	m=$T/sm-$who h=$T/sh-$who
	mkdir -p "$m" "$h/dot/gh" && chmod 0777 "$m"
	git init -q "$h/dot"
	(
		cd "$h/dot" && git config user.email a@b && git config user.name a &&
			git config include.path ../bom.cfg &&
			printf '\357\273\277[core]\n\thooksPath = bh\n' >bom.cfg &&
			printf '[alias]\n\tt = !./al.sh\n[filter "x"]\n\tclean = ./cr\\\r\n.sh\n[includeIf "onbranch:*"]\n\tpath = ../if.cfg\n' >>.git/config &&
			mkdir -p bh && echo 'x filter=x' >.gitattributes &&
			printf '[core]\n\thooksPath = ~/dot/gh\n[include]\n\tpath = ~/dot/inc.cfg\n' >linked.cfg &&
			ln -s dot/linked.cfg "$h/.gitconfig" && : >inc.cfg && : >if.cfg && : >al.sh && : >cr.sh && : >bh/pre-commit &&
			: >gh/pre-commit && python3 -c 'print("[x]\n#" + "y" * 300000 + "\n[alias]\n\tu = !./late.sh")' >>inc.cfg &&
			: >late.sh && echo x >x && git add -A && git commit -qm i
	) >"$T/syn.out" 2>&1 || diag "set-up: $(cat "$T/syn.out")"
	[ -n "$RUN_AS" ] && chown -R 65534:65534 "$h"
	(cd "$h/dot" && $RUN_AS env HOME="$h" "$CORDON" run --profile workspace-write -- sh -c "$ATTEMPT
		for f in bh/pre-commit cr.sh al.sh gh/pre-commit inc.cfg linked.cfg late.sh if.cfg; do try \$f \"echo x >>\$f\"; done") \
		>"$T/syn.res" 2>"$T/syn.err"
	is "$(tr '\n' ' ' <"$T/syn.res")" \
		"bh/pre-commit=erofs cr.sh=erofs al.sh=erofs gh/pre-commit=erofs inc.cfg=erofs linked.cfg=erofs late.sh=erofs if.cfg=erofs " \
		"$who: a BOM, a CRLF continuation, an alias, ~/ paths, a symlinked ~/.gitconfig, a 300 KB include, an includeIf: each named file read-only"
	python3 -c 'print("[x]\n#" + "y" * 1100000)' >"$h/dot/big.cfg"
	(cd "$h/dot" && git config --file .git/config include.path ../big.cfg && $RUN_AS env HOME="$h" "$CORDON" run --profile workspace-write -- true) \
		>"$T/out" 2>"$T/err"
	is "$?:$(cat "$T/err")" "125:cordon run: $h/dot/.git: a file of its git configuration is larger than 1 MiB or changed while read" \
		"$who: a config file of 1 MiB or more is refused, in one line (not read in part)"
}
for_each_user syntax

# Includes fan out: a file that includes itself 20 times, 20 times over,
# would be 20^10 reads at git's depth of 10 (the reader hung before its
# bound); past 256 files the run is refused, in one line, at once.
B=$T/bomb
mkdir -p "$B"
git init -q "$B"
{ printf '[include]\n'; i=0; while [ $i -lt 20 ]; do printf '\tpath = ../inc.cfg\n'; i=$((i + 1)); done; } >>"$B/.git/config"
{ printf '[include]\n'; i=0; while [ $i -lt 20 ]; do printf '\tpath = inc.cfg\n'; i=$((i + 1)); done; } >"$B/inc.cfg"
(cd "$B" && timeout 60 "$CORDON" run --profile workspace-write -- true) >"$T/out" 2>"$T/err"
is "$?" 125 "an include fan-out past the bound: refused (125), not a hang (124)"
is "$(cat "$T/err")" "cordon run: $B/.git: its git configuration includes more than 256 files" \
	"... saying why in one line"

# A symlink in the tree on the way to a named path (core.hooksPath
# lnk/hooks, lnk -> real): the sandbox could point it elsewhere, and the
# host's git would run what is there; the run is refused, in one line
# (by the check of the path as it resolves, link_on_way; the one of the
# path as written is reached only where that sees no link: next).
L=$T/lnk-repo
mkdir -p "$L/real/hooks"
git init -q "$L"
ln -s real "$L/lnk"
git -C "$L" config core.hooksPath lnk/hooks
(cd "$L" && "$CORDON" run --profile workspace-write -- true) >"$T/out" 2>"$T/err"
is "$?:$(grep -c "'$L/lnk' is a symlink on the way to '$L/lnk/hooks'" "$T/err")" 125:1 \
	"a symlink on the way to the hooks directory: refused, saying why ($(head -c 200 "$T/err"))"

# The check of the path as written, where the resolved one sees no
# link: a path with ".." after a symlink in the tree ($W/lnk/../g.cfg,
# the caller's GIT_CONFIG_GLOBAL) is opened by git through lnk, in
# lnk's target's parent, but reads $W/g.cfg once normalized, with no
# link on the way.  The run is refused, in one line (with that check off
# it went on, the sandbox re-pointed lnk at a directory of its own and
# the host's git ran the config it wrote there).  Control: ".." after the
# tree's top (a mount point the sandbox cannot replace).  As root and as
# nobody.
lexical() {
	who=$1
	d=$T/lx-$who m=$T/lxm-$who
	mkdir -p "$d/sub/deep" "$d/dir" "$m" && chmod 777 "$m"
	git init -q "$d" && ln -s sub/deep "$d/lnk"
	[ -n "$RUN_AS" ] && chown -R 65534:65534 "$d"
	(cd "$d" && $RUN_AS env GIT_CONFIG_GLOBAL="$d/../lx-$who/g.cfg" "$CORDON" run \
		--profile workspace-write -- true) >"$T/out" 2>"$T/err"
	is "$?:$(cat "$T/err")" 0: "$who: control: GIT_CONFIG_GLOBAL with .. after the tree's top runs"
	(cd "$d" && $RUN_AS env GIT_CONFIG_GLOBAL="$d/lnk/../g.cfg" "$CORDON" run \
		--profile workspace-write -- sh -c "rm lnk && mkdir -p evil/deep && ln -s evil/deep lnk &&
			printf '[core]\n\tfsmonitor = \"touch $m/evil; false\"\n' >evil/g.cfg") \
		>"$T/out" 2>"$T/err"
	is "$?:$(cat "$T/err")" "125:cordon run: '$d/lnk' is a symlink on the way to '$d/lnk/../g.cfg', which a git config, hook or .envrc names: a writable tree cannot keep it read-only (the host would run what it points to), so the run is refused" \
		"$who: GIT_CONFIG_GLOBAL with .. after a symlink in the tree: refused, saying why"
	(cd "$d" && $RUN_AS env GIT_CONFIG_GLOBAL="$d/lnk/../g.cfg" git status --short) >/dev/null 2>&1
	is "$(ls "$m")" "" "$who: the host's git ran no config the sandbox wrote"
}
for_each_user lexical

# A repository whose .git/config is a symlink into its working tree
# (.git/config -> ../conf/repo.cfg, kept with the project) and a run in
# conf/: the git directory is outside the tree (no check of its control
# files refuses the link), the file git reads through it is inside:
# read-only, as where the link leads (gitcfg.c's config_target).  The
# host's git runs the project's fsmonitor, not one the sandbox added
# (the positive control); another file in conf/ is written.  As root and
# as nobody.
linked_config() {
	who=$1
	r=$T/lc-$who m=$T/lcm-$who
	mkdir -p "$r/conf" "$m" && chmod 777 "$m"
	(
		cd "$r" && git init -q . && git config user.email a@b && git config user.name a &&
			git config core.fsmonitor "touch $m/fsmon-real; false" &&
			mv .git/config conf/repo.cfg && ln -s ../conf/repo.cfg .git/config &&
			echo x >f && git add f && git commit -qm i
	) >"$T/lc.out" 2>&1 || diag "set-up: $(cat "$T/lc.out")"
	cat >"$r/conf/attack.sh" <<EOF
$ATTEMPT
try repo-config "printf '[core]\n\tfsmonitor = \"touch $m/fsmon-evil; false\"\n' >>repo.cfg"
try control "echo x >other"
EOF
	[ -n "$RUN_AS" ] && chown -R 65534:65534 "$r"
	rm -f "$m"/*
	(cd "$r/conf" && $RUN_AS "$CORDON" run --profile workspace-write -- sh attack.sh) \
		>"$T/out" 2>"$T/err"
	is "$?:$(tr '\n' ' ' <"$T/out")" "0:repo-config=erofs control=written " \
		"$who: .git/config a symlink into the tree, a run below the top: its target is read-only"
	(cd "$r" && $RUN_AS git status --short) >/dev/null 2>&1
	is "$(ls "$m" | tr '\n' ' ')" "fsmon-real " \
		"$who: the host's git ran the project's fsmonitor (read through the link), not the sandbox's"
}
for_each_user linked_config

# Session 14's review: ".." after a directory of the tree (not a link)
# in a named path.  core.hooksPath x/../hooks was kept as $W/hooks, read-
# only; the host's git takes ".." on disk, so the sandbox replaced x with
# a link to sub/deep and the host's next commit ran sub/hooks/pre-commit.
# Now a directory a ".." follows (in core.hooksPath, an .envrc's
# PATH_add, the caller's PATH) is held: a mount point the sandbox cannot
# remove, rename or replace (EBUSY); one that is no directory (missing:
# the sandbox would make it a link) refuses the run in one line.
# Controls: hooksPath "hooks" runs; ".." after the tree's top runs; the
# held directory's entries stay writable.  As root and as nobody.
dotdot() {
	who=$1
	d=$T/dd-$who m=$T/ddm-$who
	mkdir -p "$d/x" "$d/hooks" "$m" && chmod 777 "$m"
	(
		cd "$d" && git init -q . && git config user.email a@b && git config user.name a &&
			echo a >f && git add f && git commit -qm i
	) >"$T/dd.out" 2>&1 || diag "set-up: $(cat "$T/dd.out")"
	[ -n "$RUN_AS" ] && chown -R 65534:65534 "$d"
	attack="rm -rf x; mv x x.old; mkdir -p sub/deep sub/hooks && ln -s sub/deep x.new &&
		mv -T x.new x; printf '#!/bin/sh\ntouch $m/evil\n' >sub/hooks/pre-commit &&
		chmod +x sub/hooks/pre-commit; echo y >x/inside && echo inside-written"
	(cd "$d" && $RUN_AS git config core.hooksPath hooks)
	(cd "$d" && $RUN_AS "$CORDON" run --profile workspace-write -- true) >"$T/out" 2>"$T/err"
	is "$?:$(cat "$T/err")" 0: "$who: dotdot: control: core.hooksPath hooks runs"
	(cd "$d" && $RUN_AS git config core.hooksPath "../dd-$who/hooks")
	(cd "$d" && $RUN_AS "$CORDON" run --profile workspace-write -- true) >"$T/out" 2>"$T/err"
	is "$?:$(cat "$T/err")" 0: "$who: dotdot: control: .. after the tree's top runs"
	(cd "$d" && $RUN_AS git config core.hooksPath x/../hooks)
	(cd "$d" && $RUN_AS "$CORDON" run --profile workspace-write -- sh -c "$attack") \
		>"$T/out" 2>"$T/err"
	is "$?:$(cat "$T/out")" "0:inside-written" \
		"$who: dotdot: core.hooksPath x/../hooks: the run goes on, x's entries writable"
	ok "$who: dotdot: ... x could not be removed, renamed or replaced (EBUSY)" \
		sh -c "test -d '$d/x' && ! test -L '$d/x' && grep -q 'Device or resource busy' '$T/err'"
	(cd "$d" && echo b >>f && $RUN_AS git -c user.email=a@b -c user.name=a commit -qam c) \
		>/dev/null 2>&1
	is "$(ls "$m")" "" "$who: dotdot: the host's commit ran no hook the sandbox made"
	(cd "$d" && $RUN_AS git config core.hooksPath y/../hooks)
	(cd "$d" && $RUN_AS "$CORDON" run --profile workspace-write -- true) >"$T/out" 2>"$T/err"
	is "$?:$(cat "$T/err")" "125:cordon run: '$d/y' is followed by '..' in a path a git config, hook, .envrc or the caller's PATH names, and is no directory (missing, a file or a symlink): the host would take '..' from wherever the sandbox makes it lead, so the run is refused" \
		"$who: dotdot: core.hooksPath y/../hooks, y missing: refused, saying why"
	(cd "$d" && $RUN_AS git config --unset core.hooksPath)
	printf 'PATH_add x/../bin\n' >"$d/.envrc"
	[ -n "$RUN_AS" ] && chown 65534:65534 "$d/.envrc"
	(cd "$d" && $RUN_AS "$CORDON" run --profile workspace-write -- sh -c 'mv x x.old') \
		>"$T/out" 2>"$T/err"
	ok "$who: dotdot: an .envrc's PATH_add x/../bin: x is held" grep -q 'Device or resource busy' "$T/err"
	rm -f "$d/.envrc"
	(cd "$d" && $RUN_AS env PATH="$d/x/../bin:$PATH" "$CORDON" run --profile workspace-write -- \
		sh -c 'mv x x.old') >"$T/out" 2>"$T/err"
	ok "$who: dotdot: the caller's PATH $d/x/../bin: x is held" grep -q 'Device or resource busy' "$T/err"
}
for_each_user dotdot

# The same through a .git file (gitdir: x/../rg, helper's review of the
# fix above): x replaced by a link to a copy with the agent's hook made
# the host's commit run it.  Now x is held (EBUSY) and the host runs
# nothing the sandbox wrote.  As root and as nobody.
gitfile_dotdot() {
	who=$1
	d=$T/gf-$who m=$T/gfm-$who
	mkdir -p "$d" "$m" && chmod 777 "$m"
	(
		cd "$d" && git init -q . && git config user.email a@b && git config user.name a &&
			echo a >f && git add f && git commit -qm i && mkdir x && mv .git rg &&
			echo "gitdir: x/../rg" >.git
	) >"$T/gf.out" 2>&1 || diag "set-up: $(cat "$T/gf.out")"
	[ -n "$RUN_AS" ] && chown -R 65534:65534 "$d"
	(cd "$d" && $RUN_AS "$CORDON" run --profile workspace-write -- sh -c "mkdir -p z/x && cp -a rg z/rg &&
		printf '#!/bin/sh\ntouch $m/evil\n' >z/rg/hooks/pre-commit && chmod +x z/rg/hooks/pre-commit;
		mv x x.b; ln -s z/x x 2>/dev/null; true") >"$T/out" 2>"$T/err"
	ok "$who: gitfile dotdot: x could not be renamed away (EBUSY)" grep -q 'Device or resource busy' "$T/err"
	(cd "$d" && echo b >>f && $RUN_AS git commit -qam c) >/dev/null 2>&1
	is "$(ls "$m")" "" "$who: gitfile dotdot: the host's commit ran no hook the sandbox made"
}
for_each_user gitfile_dotdot

done_testing
