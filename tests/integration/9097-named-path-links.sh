#!/bin/sh
# Session 12's review, F5: a path named outside the tree (core.hooksPath,
# a PATH entry) that resolves through a symlink INSIDE a writable tree:
# $H/hooks -> $W/current/hooks, current -> v2.  Only the final target
# (v2/hooks) was read-only; the agent re-points `current` to a directory
# of its own and writes a hook (or bin/git) the host then runs.  Every
# symlink followed on the way that lies in the writable tree is refused,
# as one on the lexical path is: the hooksPath form, its dangling form
# (current -> v3, not there) and the PATH form.  Controls: the same names
# pointing straight at v2 (no link in the tree on the way) run, and v2's
# hooks and bin stay read-only.  As root and as nobody.
: "${CORDON_TEST_TIMEOUT:=300}"
export CORDON_TEST_TIMEOUT
. "${CORDON_SRC:-.}/tests/lib.sh"

ATTACK='rm current && ln -s evil current && mkdir -p evil/hooks evil/bin &&
	echo "#!/bin/sh" >evil/hooks/pre-commit && echo "#!/bin/sh" >evil/bin/git && echo planted'

mk() {
	rm -rf "$1"
	mkdir -p "$1/w/v2/hooks" "$1/w/v2/bin" "$1/h"
	git init -q "$1/w"
	echo ok >"$1/w/v2/hooks/pre-commit"
	echo ok >"$1/w/v2/bin/git"
	ln -s "$2" "$1/w/current"
}

# attack TAG: the run ($ATTACK in $b/w, workspace-write) refused, current unmoved
attack() {
	cd "$b/w" || exit 1
	$RUN_AS env PATH="$P" "$CORDON" run --profile workspace-write -- sh -c "$ATTACK" \
		>"$T/out" 2>"$T/err"
	rc=$?
	is "$rc" 125 "$who: $1: the run is refused (125)"
	ok "$who: $1: ... saying why ($(head -c 200 "$T/err"))" \
		grep -q "'$b/w/current' is a symlink on the way to" "$T/err"
	nok "$who: $1: nothing planted" grep -q planted "$T/out"
	cd "$T" || exit 1
}

namedlinks() {
	who=$1
	b=$T/n-$who
	P=/usr/bin:/bin

	mk "$b" v2
	ln -s "$b/w/current/hooks" "$b/h/hooks"
	git -C "$b/w" config core.hooksPath "$b/h/hooks"
	[ -n "$RUN_AS" ] && chown -R 65534:65534 "$b"
	attack "hooksPath through an in-tree link"

	mk "$b" v3
	ln -s "$b/w/current/hooks" "$b/h/hooks"
	git -C "$b/w" config core.hooksPath "$b/h/hooks"
	[ -n "$RUN_AS" ] && chown -R 65534:65534 "$b"
	attack "hooksPath through a dangling in-tree link"

	mk "$b" v2
	ln -s "$b/w/current/bin" "$b/h/bin"
	[ -n "$RUN_AS" ] && chown -R 65534:65534 "$b"
	P=$b/h/bin:/usr/bin:/bin
	attack "PATH entry through an in-tree link"

	# controls: straight at v2, no link of the tree on the way
	mk "$b" v2
	ln -s "$b/w/v2/hooks" "$b/h/hooks"
	ln -s "$b/w/v2/bin" "$b/h/bin"
	git -C "$b/w" config core.hooksPath "$b/h/hooks"
	[ -n "$RUN_AS" ] && chown -R 65534:65534 "$b"
	cd "$b/w" || exit 1
	$RUN_AS env PATH="$P" "$CORDON" run --profile workspace-write -- sh -c \
		'echo x >plain && echo w >>v2/hooks/pre-commit; echo w >>v2/bin/git; cat plain' \
		>"$T/out" 2>"$T/err"
	is "$?" 0 "$who: control: named straight: the run exits 0"
	ok "$who: control: ... the tree is written" grep -qx x "$T/out"
	is "$(cat "$b/w/v2/hooks/pre-commit" "$b/w/v2/bin/git" | tr '\n' ' ')" "ok ok " \
		"$who: control: ... the hook and bin/git stay read-only"
	cd "$T" || exit 1
}

for_each_user namedlinks

done_testing
