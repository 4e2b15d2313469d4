#!/bin/sh
# Session 11's credential attack, F6: a cover_files glob holding '**'
# (fnmatch reads it as '*', so 'secrets/**' missed secrets/prod/db and
# '**/*.tok' missed x.tok, silently) is refused when the profile loads,
# with a one-line error naming it: a profile file (cordon run --profile)
# and a policy's profile (cordon policy lint).  Controls: 'secrets/*' and
# '*.tok' load and cover secrets/a and x.tok at any depth, while an
# ordinary file stays readable.  As root and as nobody.
: "${CORDON_TEST_TIMEOUT:=300}"
export CORDON_TEST_TIMEOUT
. "${CORDON_SRC:-.}/tests/lib.sh"

SECRET=s3cr3t-$$

globstar() {
	who=$1
	d=$T/g-$who
	mkdir -p "$d/secrets/prod" "$d/sub"
	echo "$SECRET" >"$d/secrets/a"
	echo "$SECRET" >"$d/secrets/prod/db"
	echo "$SECRET" >"$d/x.tok"
	echo "$SECRET" >"$d/sub/y.tok"
	echo "plain-$who" >"$d/plain"
	for g in 'secrets/**' '**/*.tok' 'a**b'; do
		printf 'cover_files: ["%s"]\n' "$g" >"$d/bad.yaml"
		chmod 0644 "$d/bad.yaml"
		[ -n "$RUN_AS" ] && chown -R 65534:65534 "$d"
		cd "$d" || exit 1
		$RUN_AS "$CORDON" run --profile "$d/bad.yaml" -- cat secrets/prod/db x.tok \
			>"$T/out" 2>"$T/err"
		is "$?" 125 "$who: cover_files '$g': the run is refused"
		nok "$who: cover_files '$g': nothing read" grep -q "$SECRET" "$T/out"
		ok "$who: cover_files '$g': the error names '**'" \
			grep -qF "'$g': '**' is not supported" "$T/err"
		is "$(wc -l <"$T/err")" 1 "$who: cover_files '$g': one line"
	done
	printf 'cover_files: ["secrets/*", "*.tok"]\n' >"$d/good.yaml"
	chmod 0644 "$d/good.yaml"
	[ -n "$RUN_AS" ] && chown -R 65534:65534 "$d"
	$RUN_AS "$CORDON" run --profile "$d/good.yaml" -- cat secrets/a x.tok sub/y.tok plain \
		>"$T/out" 2>"$T/err"
	is "$?" 0 "$who: control: 'secrets/*' and '*.tok' load and the run exits 0"
	nok "$who: control: secrets/a, x.tok and sub/y.tok read empty" grep -q "$SECRET" "$T/out"
	ok "$who: control: plain is shown whole" grep -qx "plain-$who" "$T/out"
	cd "$T" || exit 1
}

for_each_user globstar

cat >"$T/pol.yaml" <<'EOP'
version: 1
agents: [{id: a, owner: ops}]
tools: [{id: shell, kind: command}]
profiles:
  p: {cover_files: ["*.secret", "secrets/**"]}
grants:
  - {id: g, agent: a, tool: shell, actions: [execute], scope: {argv: [sh]}, profile: p, owner: ops, justification: t, review_by: 2099-01-01, expires: 2099-01-01}
EOP
"$CORDON" policy lint "$T/pol.yaml" >"$T/err" 2>&1
is "$?" 1 "policy lint refuses a cover_files glob holding '**'"
ok "... naming it" grep -qF "cover_files 'secrets/**': '**' is not supported" "$T/err"
sed 's|"secrets/\*\*"|"secrets/*"|' "$T/pol.yaml" >"$T/good.yaml"
ok "control: policy lint accepts 'secrets/*'" "$CORDON" policy lint "$T/good.yaml"

done_testing
