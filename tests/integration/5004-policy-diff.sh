#!/bin/sh
# cordon policy diff OLD NEW: the new access a change adds, over the files
# in tests/data/policy/diff (NAME.yaml against old.yaml, expected output in
# NAME.expect; the summary line is compared without its hashes).
. "${CORDON_SRC:-.}/tests/lib.sh"
D="$CORDON_SRC/tests/data/policy/diff"

for name in wide same; do
	"$CORDON" policy diff "$D/old.yaml" "$D/$name.yaml" >"$T/$name.out" 2>"$T/$name.err"
	rc=$?
	want=1
	[ "$name" = same ] && want=0
	is "$rc" "$want" "$name: exit $want"
	sed 's/ (old sha256 .*//' "$T/$name.out" >"$T/$name.got"
	if diff -u "$D/$name.expect" "$T/$name.got" >"$T/$name.diff"; then r=0; else r=1; fi
	is "$r" 0 "$name: the report lists every change"
	[ "$r" -eq 0 ] || sed 's/^/# /' "$T/$name.diff"
done

# A file against itself: nothing, exit 0.
out=$("$CORDON" policy diff "$D/old.yaml" "$D/old.yaml")
is "$?" 0 "identical files exit 0"
case $out in "0 widening, 0 narrowing"*) r=0 ;; *) r=1 ;; esac
is "$r" 0 "identical files report nothing"

# The other direction of a widening is a narrowing only.
"$CORDON" policy diff "$D/wide.yaml" "$D/old.yaml" >"$T/rev.out"
X
grep -q '^+ grant read-repo paths: /repo/src/\*\*$' "$T/rev.out"
is "$?" 0 "reverse: the path wide.yaml dropped is new access"
grep -q '^- forbid no-other-sh added' "$T/rev.out"
is "$?" 0 "reverse: a forbid rule added is a narrowing"

# Removing one of two grants that named different profiles lifts a denial.
"$CORDON" policy diff "$D/conflict-old.yaml" "$D/conflict-new.yaml" >"$T/c.out"
is "$?" 1 "a lifted profile conflict widens"
grep -q "^+ grant all profile-conflict: requests matching both 'all' and 'src'" "$T/c.out"
is "$?" 0 "the lifted conflict is named"

# --json: the same items, machine-readable.
"$CORDON" policy diff --json "$D/old.yaml" "$D/wide.yaml" >"$T/j.out"
is "$?" 1 "--json exits like the text form"
is "$(jq -r '.widens' "$T/j.out")" true "--json: widens"
is "$(jq -r '.widening | length' "$T/j.out")" 19 "--json: 19 widenings"
is "$(jq -r '.narrowing | length' "$T/j.out")" 2 "--json: 2 narrowings"
is "$(jq -r '.widening[] | select(.id == "no-other-sh") | .change' "$T/j.out")" removed "--json: a removed forbid rule"
is "$(jq -r '.new_sha256' "$T/j.out")" "$(sha256sum <"$D/wide.yaml" | cut -d' ' -f1)" "--json: the new file's SHA-256"
"$CORDON" policy diff "$D/old.yaml" "$D/same.yaml" --json >"$T/j2.out"
is "$(jq -r '.widens' "$T/j2.out")" false "--json after the files: no widening"

# Usage and load errors.
"$CORDON" policy diff "$D/old.yaml" >/dev/null 2>"$T/e"
is "$?" 2 "one file: usage, exit 2"
"$CORDON" policy diff "$D/old.yaml" "$D/old.yaml" "$D/old.yaml" >/dev/null 2>&1
is "$?" 2 "three files: usage, exit 2"
"$CORDON" policy diff --bogus "$D/old.yaml" "$D/old.yaml" >/dev/null 2>&1
is "$?" 2 "unknown option: usage, exit 2"
"$CORDON" policy diff --help | grep -q 'Exit 0 when nothing widens'
is "$?" 0 "--help documents the exit statuses"
printf 'version: 1\nagents: []\ntools: []\nbogus: 1\n' >"$T/bad.yaml"
"$CORDON" policy diff "$D/old.yaml" "$T/bad.yaml" >/dev/null 2>"$T/e"
is "$?" 4 "a new file that does not load: exit 4"
grep -q "bad.yaml:4:1" "$T/e"
is "$?" 0 "the load error names file:line:col"
"$CORDON" policy diff "$T/missing.yaml" "$D/old.yaml" >/dev/null 2>&1
is "$?" 4 "an old file that does not exist: exit 4"
done_testing
