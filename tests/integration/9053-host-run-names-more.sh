#!/bin/sh
# Issue 16 (session 6 attacker, finding 5): more files the host runs on
# its own, and credentials known by their content.
# Host-run, at any depth of a workspace-write tree: read-only when they
# exist (EROFS), in planted_paths when the run creates them:
# .cargo/config.toml and .cargo/config (build.rustc-wrapper runs on any
# cargo command), .venv/bin/python (editors run it; a link to the system
# python is kept as a link and reported when replaced), .pnpmfile.cjs,
# bunfig.toml, .mvn/ (extensions.xml, wrapper/), lefthook.yml, mise.toml
# and .mise.toml, .nvim.lua, .exrc.  --propose flags them.
# Credentials, covered (read empty) in any bound tree: a .json holding a
# GCP service account key whatever its name, and a .yarnrc.yml holding an
# npmAuthToken; under node_modules one whose name names a secret
# (sa-key.json).  Controls: cargo's .cargo/registry, an ordinary .json, a
# service account key fixture under node_modules named otherwise (sa.json:
# not read there), a .yarnrc.yml without
# a token, and a project file beside each stay as they were.  As root and
# as nobody.
: "${CORDON_TEST_TIMEOUT:=300}"
export CORDON_TEST_TIMEOUT
. "${CORDON_SRC:-.}/tests/lib.sh"

NAMES=".cargo/config.toml .cargo/config .pnpmfile.cjs bunfig.toml .mvn/extensions.xml
	.mvn/wrapper/maven-wrapper.properties lefthook.yml mise.toml .mise.toml .nvim.lua .exrc
	.pnpmfile.mjs .pnpmfile.js .vimrc gradle.properties gradle/wrapper/gradle-wrapper.properties
	.venv/bin/activate.fish .venv/bin/activate.csh .venv/bin/Activate.ps1"

names() {
	who=$1
	d=$T/names-$who
	mkdir -p "$d/old/a/.cargo" "$d/old/a/.mvn/wrapper" "$d/old/a/.venv/bin" "$d/old/a/.cargo/registry" \
		"$d/old/a/gradle/wrapper" \
		"$d/new/b"
	for f in $NAMES; do echo "orig" >"$d/old/a/$f"; done
	echo orig >"$d/old/a/.cargo/registry/index"
	echo orig >"$d/old/a/main.rs"
	ln -s /usr/bin/python3 "$d/old/a/.venv/bin/python"
	[ -n "$RUN_AS" ] && chown -R 65534:65534 "$d"
	sleep 1.1 # older than the check's 1 s guard: only the run's changes count
	cd "$d/old" || exit 1
	$RUN_AS "$CORDON" run --profile workspace-write --json-fd 3 -- sh -c "
		for f in $(echo $NAMES) .cargo/registry/index main.rs; do
			if echo evil >>a/\$f; then echo \"\$f=written\"; else echo \"\$f=refused\"; fi
		done 2>/dev/null
		a/.venv/bin/python -c 'print(\"venv-python-runs\")'" 3>"$T/rec" >"$T/out" 2>"$T/err"
	is "$?" 0 "$who: the run exits 0"
	for f in $NAMES; do
		is "$(grep "^$f=" "$T/out")$(cat "$d/old/a/$f")" "$f=refusedorig" \
			"$who: an existing $f one level down is read-only, unchanged on the host"
	done
	is "$(grep -c '=written' "$T/out")" 2 "$who: positive control: .cargo/registry/index and main.rs are written"
	ok "$who: positive control: the virtualenv's python (a link) runs" grep -q venv-python-runs "$T/out"
	is "$(planted_paths)" "" "$who: nothing was planted"

	$RUN_AS "$CORDON" run --profile workspace-write --json-fd 3 -- sh -c '
		rm a/.venv/bin/python && printf "#!/bin/sh\necho evil\n" >a/.venv/bin/python' \
		3>"$T/rec" 2>"$T/err"
	is "$(planted_paths)" "a/.venv/bin/python" "$who: the virtualenv's python replaced by the run is reported"

	cd "$d/new" || exit 1
	$RUN_AS "$CORDON" run --profile workspace-write --json-fd 3 -- sh -c "
		for f in $(echo $NAMES) .venv/bin/python .cargo/registry/index src.rs; do
			mkdir -p b/\$(dirname \$f) && echo evil >b/\$f
		done" 3>"$T/rec" 2>"$T/err"
	got=" $(planted_paths) "
	for f in .cargo/config.toml .cargo/config .pnpmfile.cjs bunfig.toml .mvn lefthook.yml \
		mise.toml .mise.toml .nvim.lua .exrc .venv/bin/python .pnpmfile.mjs .pnpmfile.js .vimrc \
		gradle.properties gradle/wrapper/gradle-wrapper.properties .venv/bin/activate.fish \
		.venv/bin/activate.csh .venv/bin/Activate.ps1; do
		case $got in *" b/$f "*) r=yes ;; *) r="no: $got" ;; esac
		is "$r" yes "$who: a new b/$f is in planted_paths"
	done
	case $got in *registry* | *src.rs*) r="listed: $got" ;; *) r=no ;; esac
	is "$r" no "$who: control: .cargo/registry/index and src.rs are not listed"

	$RUN_AS "$CORDON" run --propose -- sh -c "mkdir -p c/.cargo && echo x >c/.cargo/config.toml &&
		echo x >c/bunfig.toml && echo x >c/lib.rs" >/dev/null 2>&1
	id=$($RUN_AS "$CORDON" proposals list --json | python3 -c 'import json,sys; print([p["id"] for p in json.load(sys.stdin) if p["tree"] == sys.argv[1]][-1])' "$d/new")
	$RUN_AS "$CORDON" proposals show "$id" --json >"$T/show.json"
	is "$(python3 -c 'import json,sys; print(" ".join(sorted(f["path"] for f in json.load(open(sys.argv[1]))["files"] if f["flagged"])))' "$T/show.json")" \
		"c/.cargo/config.toml c/bunfig.toml" "$who: --propose flags .cargo/config.toml and bunfig.toml (not lib.rs)"
	cd "$T" || exit 1
}
for_each_user names

SA='{
  "type": "service_account",
  "project_id": "proj",
  "private_key_id": "0123",
  "private_key": "-----BEGIN PRIVATE KEY-----\nSECRET-SA\n-----END PRIVATE KEY-----\n",
  "client_email": "x@proj.iam.gserviceaccount.com"
}'

content() {
	who=$1
	d=$T/content-$who
	mkdir -p "$d/p/keys" "$d/p/node_modules/lib/test" "$d/p/web"
	printf '%s\n' "$SA" >"$d/p/keys/proj-1a2b3c4d5e6f.json"
	printf '{"type": "authorized_user", "client_secret": "x", "refresh_token": "SECRET-ADC"}\n' \
		>"$d/p/adc-copy.json"
	printf '%s\n' "$SA" | sed 's/SECRET-SA/PUBLIC-FIXTURE/' >"$d/p/node_modules/lib/test/sa.json"
	printf '%s\n' "$SA" | sed 's/SECRET-SA/SECRET-NM/' >"$d/p/node_modules/lib/test/sa-key.json"
	printf '{"name": "PUBLIC-pkg", "private_key": "not a service account"}\n' >"$d/p/package.json"
	printf 'npmRegistryServer: "https://npm.example"\nnpmAuthToken: "SECRET-YARN"\n' >"$d/p/.yarnrc.yml"
	printf 'nodeLinker: PUBLIC-node-modules\n' >"$d/p/web/.yarnrc.yml"
	[ -n "$RUN_AS" ] && chown -R 65534:65534 "$d"
	cd "$d/p" || exit 1
	$RUN_AS "$CORDON" run -- sh -c 'cat keys/proj-1a2b3c4d5e6f.json adc-copy.json .yarnrc.yml \
		node_modules/lib/test/sa.json node_modules/lib/test/sa-key.json package.json \
		web/.yarnrc.yml' >"$T/out" 2>"$T/err"
	is "$?" 0 "$who: the run exits 0"
	lacks "$who: the service account key, the ADC copy and the yarn token read empty" SECRET "$T/out" PUBLIC
	is "$(grep -c PUBLIC "$T/out")" 3 \
		"$who: positive control: the node_modules fixture, package.json and a token-less .yarnrc.yml read"
	$RUN_AS "$CORDON" run --json-fd 3 -- true 3>"$T/rec" 2>"$T/err"
	ok "$who: the record lists the covered key as a credential file" python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))
sys.exit(0 if any(c["path"].endswith("/keys/proj-1a2b3c4d5e6f.json") and c["reason"] == "credential file"
                  for c in r["covered_paths"]) else 1)' "$T/rec"
	cd "$T" || exit 1
}
for_each_user content

done_testing
