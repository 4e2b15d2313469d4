#!/bin/sh
# Session 12's review, F3 (the class of session 11's F6): cover_files
# globs that loaded and matched nothing, so the file they meant was
# shown: an absolute host path, a leading '/' or './', a '.' or '..'
# component, '{a,b}', a trailing '/', '//'.  Each is refused when the
# profile loads, with a one-line error naming it (a profile file, and a
# policy's profile in `cordon policy lint`).  Control: 'conf/prod.yml'
# loads and covers the file, bound through the working directory or
# --ro elsewhere, while an ordinary file stays readable.  As root and
# as nobody.
: "${CORDON_TEST_TIMEOUT:=300}"
export CORDON_TEST_TIMEOUT
. "${CORDON_SRC:-.}/tests/lib.sh"

SECRET=s3cr3t-$$

forms() {
	who=$1
	d=$T/f-$who
	mkdir -p "$d/conf"
	echo "$SECRET" >"$d/conf/prod.yml"
	echo "plain-$who" >"$d/conf/plain"
	for g in "$d/conf/prod.yml" /conf/prod.yml ./conf/prod.yml conf/./prod.yml \
		'conf/{prod,dev}.yml' conf/ conf//prod.yml ../conf/prod.yml; do
		printf 'cover_files: ["%s"]\n' "$g" >"$d/bad.yaml"
		chmod 0644 "$d/bad.yaml"
		[ -n "$RUN_AS" ] && chown -R 65534:65534 "$d"
		cd "$d" || exit 1
		$RUN_AS "$CORDON" run --profile "$d/bad.yaml" --ro "$d/conf:/c" -- \
			cat conf/prod.yml /c/prod.yml >"$T/out" 2>"$T/err"
		is "$?" 125 "$who: cover_files '$g': the run is refused"
		nok "$who: cover_files '$g': nothing read" grep -q "$SECRET" "$T/out"
		ok "$who: cover_files '$g': the error names it ($(head -c 200 "$T/err"))" \
			grep -qF "cover_files: '$g': " "$T/err"
		is "$(wc -l <"$T/err")" 1 "$who: cover_files '$g': one line"
	done
	printf 'cover_files: ["conf/prod.yml"]\n' >"$d/good.yaml"
	chmod 0644 "$d/good.yaml"
	[ -n "$RUN_AS" ] && chown -R 65534:65534 "$d"
	$RUN_AS "$CORDON" run --profile "$d/good.yaml" --ro "$d/conf:/c" -- \
		cat conf/prod.yml /c/prod.yml conf/plain >"$T/out" 2>"$T/err"
	is "$?" 0 "$who: control: 'conf/prod.yml' loads and the run exits 0"
	nok "$who: control: conf/prod.yml reads empty, in both places" grep -q "$SECRET" "$T/out"
	ok "$who: control: conf/plain is shown whole" grep -qx "plain-$who" "$T/out"
	cd "$T" || exit 1
}

for_each_user forms

for g in ./conf/prod.yml 'conf/{prod,dev}.yml' conf//prod.yml; do
	cat >"$T/pol.yaml" <<EOP
version: 1
agents: [{id: a, owner: ops}]
tools: [{id: shell, kind: command}]
profiles:
  p: {cover_files: ["$g"]}
grants:
  - {id: g, agent: a, tool: shell, actions: [execute], scope: {argv: [sh]}, profile: p, owner: ops, justification: t, review_by: 2099-01-01, expires: 2099-01-01}
EOP
	"$CORDON" policy lint "$T/pol.yaml" >"$T/err" 2>&1
	is "$?" 1 "policy lint refuses cover_files '$g'"
	ok "... naming it ($(head -c 200 "$T/err"))" grep -qF "cover_files '$g': " "$T/err"
done
sed 's|cover_files: \[.*\]|cover_files: ["conf/prod.yml"]|' "$T/pol.yaml" >"$T/good.yaml"
ok "control: policy lint accepts 'conf/prod.yml'" "$CORDON" policy lint "$T/good.yaml"

done_testing
