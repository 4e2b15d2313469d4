#!/bin/sh
# Issue 16 (session 8's second attacker, G3 c, d): what a protected
# pointer names, run on the host by any yarn or gradle command.
# In a workspace-write tree:
# - yarn's .yarn/releases/ (the yarn that .yarnrc.yml's yarnPath names)
#   and .yarn/plugins/ are read-only whole, at any depth, and in
#   planted_paths when the run makes them;
# - a yarnPath target elsewhere (tools/yarn.cjs) stays writable but is
#   in planted_paths when rewritten, or made where none was (yarn 1's
#   .yarnrc yarn-path the same);
# - gradle's wrapper jar (what ./gradlew runs; its .properties already
#   was) is read-only, and in planted_paths when made; maven's
#   .mvn/wrapper/ jar is read-only (.mvn was already).
# The host side: what node would run for yarnPath, and the jar, are what
# the host had.  Controls: package.json, build.gradle, .yarn/cache/ and
# a file beside the wrapper jar are written and not listed.  As root and
# as nobody.
: "${CORDON_TEST_TIMEOUT:=300}"
export CORDON_TEST_TIMEOUT
. "${CORDON_SRC:-.}/tests/lib.sh"

planted() {
	python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))
print(" ".join(sorted(r.get("planted_paths") or [])) if "planted_paths" in r else "absent")' "$T/rec" 2>&1
}

REL=.yarn/releases/yarn-4.1.0.cjs
mkproject() {
	p=$1
	mkdir -p "$p/.yarn/releases" "$p/.yarn/plugins/@yarnpkg" "$p/.yarn/cache" \
		"$p/gradle/wrapper" "$p/.mvn/wrapper" "$p/sub/tools" "$p/one/bin"
	echo "yarnPath: $REL" >"$p/.yarnrc.yml"
	echo 'console.log("real yarn")' >"$p/$REL"
	echo 'module.exports = {}' >"$p/.yarn/plugins/@yarnpkg/plugin-x.cjs"
	echo 'PK-real-jar' >"$p/gradle/wrapper/gradle-wrapper.jar"
	echo 'distributionUrl=https\://services.gradle.org/x.zip' \
		>"$p/gradle/wrapper/gradle-wrapper.properties"
	echo 'PK-real-mvn-jar' >"$p/.mvn/wrapper/maven-wrapper.jar"
	# a yarnPath outside .yarn/releases, quoted, with a comment
	echo 'yarnPath: "tools/yarn.cjs" # pinned' >"$p/sub/.yarnrc.yml"
	echo 'console.log("real sub yarn")' >"$p/sub/tools/yarn.cjs"
	echo 'yarn-path "./bin/yarn-1.js"' >"$p/one/.yarnrc"
	echo '{}' >"$p/package.json"
	echo '// build' >"$p/build.gradle"
}

refused() {
	who=$1
	d=$T/ro-$who
	mkdir -p "$d"
	mkproject "$d"
	cat >"$d/attack.sh" <<EOF
$ATTEMPT
try yarn-release "echo 'console.log(1)' >>$REL"
try yarn-release-new "echo x >.yarn/releases/yarn-9.cjs"
try yarn-plugin "echo x >>.yarn/plugins/@yarnpkg/plugin-x.cjs"
try yarn-plugin-new "echo x >.yarn/plugins/evil.cjs"
try gradle-jar "echo evil >gradle/wrapper/gradle-wrapper.jar"
try mvn-jar "echo evil >.mvn/wrapper/maven-wrapper.jar"
try package-json "echo '{ }' >package.json"
try build-gradle "echo '// x' >>build.gradle"
try yarn-cache "echo x >.yarn/cache/pkg.zip"
try gradle-other "echo x >gradle/wrapper/notes.txt"
try sub-yarn-path "echo 'console.log(\"evil\")' >sub/tools/yarn.cjs"
try one-yarn-path "echo 'console.log(\"evil\")' >one/bin/yarn-1.js"
EOF
	[ -n "$RUN_AS" ] && chown -R 65534:65534 "$d"
	sleep 1.1 # older than the walk's 1 s guard: the cache may keep it
	cd "$d" || exit 1
	$RUN_AS "$CORDON" run --profile workspace-write --json-fd 3 -- sh attack.sh \
		3>"$T/rec" >"$T/out" 2>"$T/err"
	is "$?" 0 "$who: the run exits 0"
	for n in yarn-release yarn-release-new yarn-plugin yarn-plugin-new gradle-jar mvn-jar; do
		is "$(grep "^$n=" "$T/out")" "$n=erofs" "$who: $n is refused: read-only file system"
	done
	for n in package-json build-gradle yarn-cache gradle-other sub-yarn-path one-yarn-path; do
		is "$(grep "^$n=" "$T/out")" "$n=written" "$who: control: $n is written"
	done
	got=" $(planted) "
	for f in sub/tools/yarn.cjs one/bin/yarn-1.js; do
		case $got in *" $f "*) r=yes ;; *) r="no: $got" ;; esac
		is "$r" yes "$who: the yarnPath target $f, written, is in planted_paths"
	done
	for f in package.json build.gradle .yarn/cache notes.txt; do
		case $got in *"$f"*) r="listed: $got" ;; *) r=no ;; esac
		is "$r" no "$who: control: $f is not listed"
	done
	# the host: what yarn would hand to node, and what gradlew would run
	is "$(node "$REL" 2>&1)" "real yarn" "$who: the host's yarnPath runs the host's yarn"
	is "$(cat gradle/wrapper/gradle-wrapper.jar .mvn/wrapper/maven-wrapper.jar)" \
		"PK-real-jar
PK-real-mvn-jar" "$who: the wrapper jars are the host's"
	cd "$T" || exit 1
}
for_each_user refused

planted_new() {
	who=$1
	d=$T/new-$who
	mkdir -p "$d/a/gradle/wrapper" "$d/a/tools"
	echo 'yarnPath: tools/y.cjs' >"$d/a/.yarnrc.yml"
	echo '// build' >"$d/a/build.gradle"
	[ -n "$RUN_AS" ] && chown -R 65534:65534 "$d"
	sleep 1.1
	cd "$d" || exit 1
	$RUN_AS "$CORDON" run --profile workspace-write --json-fd 3 -- sh -c '
		mkdir -p a/.yarn/releases a/.yarn/plugins a/.yarn/cache
		echo x >a/.yarn/releases/y.cjs && echo x >a/.yarn/plugins/p.cjs
		echo x >a/.yarn/cache/c.zip
		echo x >a/gradle/wrapper/gradle-wrapper.jar
		echo x >a/tools/y.cjs
		echo x >a/tools/other.cjs && echo x >>a/build.gradle' 3>"$T/rec" >"$T/out" 2>"$T/err"
	is "$?" 0 "$who: the run exits 0"
	got=" $(planted) "
	for f in a/.yarn/releases a/.yarn/plugins a/gradle/wrapper/gradle-wrapper.jar a/tools/y.cjs; do
		case $got in *" $f "*) r=yes ;; *) r="no: $got" ;; esac
		is "$r" yes "$who: a new $f is in planted_paths"
	done
	for f in a/.yarn/cache other.cjs build.gradle; do
		case $got in *"$f"*) r="listed: $got" ;; *) r=no ;; esac
		is "$r" no "$who: control: $f is not listed"
	done
	cd "$T" || exit 1
}
for_each_user planted_new

done_testing
