#!/bin/sh
# Session 11's credential attack, F2: a cover_files glob with a '/'
# (conf/prod.yml, conf/*.key.yml) names the file however it is bound:
# the working directory's conf/prod.yml, a --ro bind of conf elsewhere
# (/c/prod.yml, the same inode), a run from inside conf (cwd proj/conf),
# and the file bound by itself under another name (--ro .../prod.yml:/y/x).
# Before, the glob was matched against the path below each bind's top,
# and all but the first showed the secret.  Controls, shown whole: the
# other files of conf in every view.  As root and as nobody.
: "${CORDON_TEST_TIMEOUT:=300}"
export CORDON_TEST_TIMEOUT
. "${CORDON_SRC:-.}/tests/lib.sh"

SECRET=s3cr3t-$$
INNER='for f; do printf "%s:" "$f"; cat "$f" 2>/dev/null | tr "\n" " "; echo; done'

# views WHO TAG FILES: each of $SECRETS' files reads empty, each control whole
views() {
	rc=$1
	shift
	is "$rc" 0 "$who: $tag: the run exits 0"
	[ "$rc" -eq 0 ] || sed 's/^/# /' "$T/err"
	for f in "$@"; do
		case $f in
		*prod.yml | */x | *db.key.yml)
			is "$(grep "^$f:" "$T/out")" "$f:" "$who: $tag: $f reads empty" ;;
		*) is "$(grep "^$f:" "$T/out")" "$f:other-$who " "$who: $tag: control: $f shown whole" ;;
		esac
	done
}

slash_globs() {
	who=$1
	d=$T/s-$who
	mkdir -p "$d/proj/conf"
	echo "password: $SECRET" >"$d/proj/conf/prod.yml"
	echo "password: $SECRET" >"$d/proj/conf/db.key.yml"
	echo "other-$who" >"$d/proj/conf/other.yml"
	printf 'cover_files: ["conf/prod.yml", "conf/*.key.yml"]\n' >"$d/p.yaml"
	chmod 0644 "$d/p.yaml"
	[ -n "$RUN_AS" ] && chown -R 65534:65534 "$d"

	cd "$d/proj" || exit 1
	tag="cwd and --ro conf:/c"
	$RUN_AS "$CORDON" run --profile "$d/p.yaml" --ro "$d/proj/conf:/c" -- sh -c "$INNER" sh \
		conf/prod.yml conf/db.key.yml /c/prod.yml /c/db.key.yml conf/other.yml /c/other.yml \
		>"$T/out" 2>"$T/err"
	views $? conf/prod.yml conf/db.key.yml /c/prod.yml /c/db.key.yml conf/other.yml /c/other.yml

	cd "$d/proj/conf" || exit 1
	tag="cwd inside conf"
	$RUN_AS "$CORDON" run --profile "$d/p.yaml" -- sh -c "$INNER" sh prod.yml db.key.yml \
		other.yml >"$T/out" 2>"$T/err"
	views $? prod.yml db.key.yml other.yml

	cd "$d" || exit 1
	tag="file bound by itself"
	$RUN_AS "$CORDON" run --profile "$d/p.yaml" --ro "$d/proj/conf/prod.yml:/y/x" \
		--ro "$d/proj/conf/other.yml:/y/o" -- sh -c "$INNER" sh /y/x /y/o \
		>"$T/out" 2>"$T/err"
	views $? /y/x
	is "$(grep "^/y/o:" "$T/out")" "/y/o:other-$who " "$who: $tag: control: /y/o shown whole"
	cd "$T" || exit 1
}

for_each_user slash_globs

done_testing
