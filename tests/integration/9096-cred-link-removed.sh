#!/bin/sh
# Session 12's review, F1: a credential covered only because a symlink
# with a credential's name points to it (.netrc -> notes/token, .aws ->
# cloud) is shown in the next run once the link is gone: the agent
# removes the link (rm) or moves the target's directory (mv) in run 1
# and reads the target under its plain name in run 2.  A credential link
# in a tree the sandbox can write, whose target the sandbox sees, is
# refused (workspace-write, --rw); a link in a read-only tree to a
# target in a writable one has the target's directories held (mv fails).
# Controls: a link whose target lies outside every bound tree still runs
# (exit 0), as does one to a credential by its own name (.env ->
# .env.development) and the tree without the link; an ordinary directory
# beside the held one can be moved.  As root and as nobody.
: "${CORDON_TEST_TIMEOUT:=300}"
export CORDON_TEST_TIMEOUT
. "${CORDON_SRC:-.}/tests/lib.sh"

SECRET=s3cr3t-$$

# two RUN1 RUN2 TAG: run 1 (the attack's first step) then run 2 (the read)
# under workspace-write in $PWD; no secret shown, run 1 refused saying why
two() {
	$RUN_AS "$CORDON" run $OPTS -- sh -c "$1" >"$T/out1" 2>"$T/err1"
	rc=$?
	$RUN_AS "$CORDON" run $OPTS -- sh -c "$2" >"$T/out" 2>"$T/err"
	nok "$who: $3: run 2 shows no secret" grep -q "$SECRET" "$T/out" "$T/out1"
	is "$rc" 125 "$who: $3: run 1 is refused (125)"
	ok "$who: $3: ... saying why ($(head -c 160 "$T/err1"))" \
		grep -q "it could remove the link" "$T/err1"
}

mk() {
	mkdir -p "$1/notes" "$1/cloud" "$1/other"
	echo "$SECRET" >"$1/notes/token"
	printf '[default]\naws_secret_access_key = %s\n' "$SECRET" >"$1/cloud/credentials"
	echo "plain-$who" >"$1/other/plain"
}

credlink() {
	who=$1
	b=$T/c-$who
	mkdir -p "$b"

	# workspace-write: rm the link, mv the target's directory
	mk "$b/ws"
	ln -s notes/token "$b/ws/.netrc"
	[ -n "$RUN_AS" ] && chown -R 65534:65534 "$b"
	cd "$b/ws" || exit 1
	OPTS="--profile workspace-write"
	two 'rm .netrc' 'cat notes/token' "ws, rm .netrc"
	[ -L "$b/ws/.netrc" ]
	is "$?" 0 "$who: ws: the link is still there"
	two 'mv notes plain' 'cat plain/token notes/token' "ws, mv notes"

	# --rw W, .aws -> cloud: rm it
	mk "$b/rw"
	ln -s cloud "$b/rw/.aws"
	[ -n "$RUN_AS" ] && chown -R 65534:65534 "$b"
	cd "$b" || exit 1
	OPTS="--rw $b/rw:/w"
	two 'rm /w/.aws' 'cat /w/cloud/credentials' "--rw, rm .aws"
	two 'mv /w/cloud /w/plain' 'cat /w/plain/credentials /w/cloud/credentials' "--rw, mv cloud"

	# the link in a read-only tree, its target in a writable one: held
	mk "$b/tw"
	mkdir -p "$b/ro"
	ln -s "$b/tw/notes/token" "$b/ro/.netrc"
	[ -n "$RUN_AS" ] && chown -R 65534:65534 "$b"
	OPTS="--ro $b/ro:/r --rw $b/tw:/w"
	$RUN_AS "$CORDON" run $OPTS -- sh -c 'cat /w/notes/token; mv /w/notes /w/plain' \
		>"$T/out1" 2>"$T/err1"
	rc=$?
	ok "$who: ro link: mv of the target's directory fails ($rc)" [ "$rc" -ne 0 ]
	[ -d "$b/tw/notes" ]
	is "$?" 0 "$who: ro link: ... the directory is still there"
	$RUN_AS "$CORDON" run $OPTS -- sh -c 'cat /w/notes/token /w/plain/token' \
		>"$T/out" 2>"$T/err"
	nok "$who: ro link: no secret shown" grep -q "$SECRET" "$T/out" "$T/out1"
	$RUN_AS "$CORDON" run $OPTS -- sh -c 'mv /w/other /w/other2 && cat /w/other2/plain' \
		>"$T/out" 2>"$T/err"
	is "$?" 0 "$who: ro link: control: an ordinary directory beside it moves"
	ok "$who: ro link: control: ... and is read" grep -q "plain-$who" "$T/out"

	# controls: a link out of every bound tree runs; the tree without it
	mk "$b/out"
	mkdir -p "$b/out/w"
	ln -s ../notes/token "$b/out/w/.netrc"
	[ -n "$RUN_AS" ] && chown -R 65534:65534 "$b"
	cd "$b/out/w" || exit 1
	$RUN_AS "$CORDON" run --profile workspace-write -- cat .netrc >"$T/out" 2>"$T/err"
	is "$?" 1 "$who: control: a link to outside the tree: the run goes on (cat fails)"
	nok "$who: control: ... its target unseen" grep -q "$SECRET" "$T/out"
	# a link to a file that is a credential by its own name: covered
	# with or without the link, so the run goes on
	mk "$b/env"
	echo "$SECRET" >"$b/env/.env.development"
	ln -s .env.development "$b/env/.env"
	[ -n "$RUN_AS" ] && chown -R 65534:65534 "$b"
	cd "$b/env" || exit 1
	$RUN_AS "$CORDON" run --profile workspace-write -- sh -c 'cat .env; rm .env' \
		>"$T/out" 2>"$T/err"
	is "$?" 0 "$who: control: .env -> .env.development: the run exits 0"
	$RUN_AS "$CORDON" run --profile workspace-write -- cat .env.development \
		>>"$T/out" 2>"$T/err"
	is "$?" 0 "$who: control: ... and after the link is gone"
	nok "$who: control: ... .env.development is covered both times" grep -q "$SECRET" "$T/out"
	rm -f "$b/ws/.netrc"
	cd "$b/ws" || exit 1
	$RUN_AS "$CORDON" run --profile workspace-write -- cat other/plain >"$T/out" 2>"$T/err"
	is "$?" 0 "$who: control: the tree without the link runs"
	ok "$who: control: ... and is read" grep -q "plain-$who" "$T/out"
	cd "$T" || exit 1
}

for_each_user credlink

done_testing
