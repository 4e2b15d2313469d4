#!/bin/sh
# Three holes a third outside review found in the tree walk (issue 16):
#  - a git directory whose `objects` is a dangling symlink in one run and
#    made real in the next: its config (a planted fsmonitor) was never
#    reported or pinned; now the dangling symlink counts (the first run
#    reports the directory, the next keeps its config read-only);
#  - hooks of a bare repository not named *.git added through --propose
#    were not flagged; now a file in hooks/ or info/ of any directory that
#    is a git directory by git's rule is flagged;
#  - AWS SSO and CLI token caches were readable; now anything below a
#    .aws directory is covered.
# As root and as nobody.
. "${CORDON_SRC:-.}/tests/lib.sh"

PLANT='mkdir -p refs/heads && echo "ref: refs/heads/main" >HEAD && ln -s x/bar objects &&
printf "[core]\n\tbare = false\n\tfsmonitor = \"touch MARK; false\"\n" >config'

check() {
	who=$1
	w=$T/$who
	mkdir -p "$w/tree" "$w/prop"
	[ -n "$RUN_AS" ] && chown -R 65534:65534 "$w"
	cd "$w/tree" || exit 1
	$RUN_AS "$CORDON" run --profile workspace-write --json-fd 3 -- sh -c "$PLANT" 3>"$T/rec" 2>"$T/err"
	is "$?" 0 "$who: run 1 plants HEAD, config and a dangling objects symlink"
	got=$(python3 -c 'import json,sys; print(" ".join(json.load(open(sys.argv[1])).get("planted_paths") or []))' "$T/rec" 2>/dev/null)
	case " $got " in *" . "* | *" config "*) r=0 ;; *) r=1 ;; esac
	is "$r" 0 "$who: run 1 reports the tree as a git directory in planted_paths ($got)"
	ok "$who: ... with a warning" grep -q "git" "$T/err"
	$RUN_AS "$CORDON" run --profile workspace-write -- sh -c 'mkdir -p x/bar; echo "[core]" >>config' 2>"$T/err"
	ok "$who: run 2 cannot change that config (EROFS)" grep -q "Read-only file system" "$T/err"
	ok "$who: control: run 2 could make the objects directory" test -d "$w/tree/x/bar"

	# --propose: a hook in a bare repository called "mirror".
	cd "$w/prop" || exit 1
	$RUN_AS git init -q --bare mirror 2>/dev/null
	$RUN_AS sh -c 'mkdir -p src/hooks && echo "export const x = 1" >src/hooks/useX.js.orig'
	out=$($RUN_AS "$CORDON" run --propose -- sh -c '
		printf "#!/bin/sh\ntouch MARK\n" >mirror/hooks/post-receive
		echo "* filter=x" >mirror/info/attributes
		echo "export const y = 2" >src/hooks/useY.js' 2>&1)
	id=$(printf '%s\n' "$out" | sed -n 's/.*proposal \(prop-[A-Za-z0-9-]*\).*/\1/p' | head -1)
	[ -n "$id" ] || id=$($RUN_AS "$CORDON" proposals list --json | python3 -c 'import json,sys; print(json.load(sys.stdin)[-1]["id"])')
	flagged=$($RUN_AS "$CORDON" proposals show "$id" --json | python3 -c '
import json, sys
p = json.load(sys.stdin)
print(" ".join(sorted(f["path"] for f in p["files"] if f.get("flagged"))))' 2>/dev/null)
	is "$flagged" "mirror/hooks/post-receive mirror/info/attributes" \
		"$who: --propose flags a hook and info/attributes of a bare repository named mirror, not src/hooks/useY.js"

	# AWS token caches.
	# (a directory holding .aws itself is refused as a home: one below it)
	mkdir -p "$w/aws/u/.aws/sso/cache" "$w/aws/u/.aws/cli/cache"
	echo SECRET-SSO >"$w/aws/u/.aws/sso/cache/abc.json"
	echo SECRET-CLI >"$w/aws/u/.aws/cli/cache/def.json"
	echo readable >"$w/aws/notes.txt"
	[ -n "$RUN_AS" ] && chown -R 65534:65534 "$w/aws"
	cd "$w/aws" || exit 1
	out=$($RUN_AS "$CORDON" run -- sh -c 'cat u/.aws/sso/cache/abc.json u/.aws/cli/cache/def.json notes.txt' 2>&1)
	is "$out" readable "$who: .aws SSO and CLI caches read empty; control: notes.txt reads"
}
for_each_user check

done_testing
