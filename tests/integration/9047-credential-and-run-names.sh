#!/bin/sh
# Names the session-5 attack review found missing from the lists.
# Credentials, covered at any depth of any bound tree: dotenv files (.env,
# .env.NAME), gcloud's .config/gcloud, azure's .azure, cargo's
# .cargo/credentials(.toml).  Controls: the dotenv templates
# (.env.example, .env.sample, .env.template), .envrc's neighbour
# .environment, cargo's config.toml and another file of .config read.
# Files the host runs on its own, kept read-only at any depth of a
# workspace-write tree and reported after the run when new: .npmrc
# (node-options runs code on any npm command), .yarnrc (yarn-path) and
# .yarnrc.yml (yarnPath).  Control: a Makefile, the project's own code,
# is written and not reported.  As root and as nobody.
: "${CORDON_TEST_TIMEOUT:=300}"
export CORDON_TEST_TIMEOUT
. "${CORDON_SRC:-.}/tests/lib.sh"

creds() {
	who=$1
	d=$T/creds-$who
	p=$d/work/app
	mkdir -p "$p/.config/gcloud/legacy_credentials/me" "$p/.azure" "$p/.cargo"
	for f in .env .env.local .env.production .config/gcloud/credentials.db \
		.config/gcloud/legacy_credentials/me/adc.json .azure/msal_token_cache.json \
		.cargo/credentials .cargo/credentials.toml; do
		echo "SECRET-$f" >"$p/$f"
	done
	for f in .env.example .env.sample .env.template .environment .cargo/config.toml \
		.config/other.conf; do
		echo "PUBLIC-$f" >"$p/$f"
	done
	[ -n "$RUN_AS" ] && chown -R 65534:65534 "$d"
	cd "$d/work" || exit 1
	$RUN_AS "$CORDON" run -- sh -c 'cd app && for f in .env .env.local .env.production \
		.config/gcloud/credentials.db .config/gcloud/legacy_credentials/me/adc.json \
		.azure/msal_token_cache.json .cargo/credentials .cargo/credentials.toml \
		.env.example .env.sample .env.template .environment .cargo/config.toml \
		.config/other.conf; do cat "$f"; done' >"$T/out" 2>"$T/err"
	is "$?" 0 "$who: the run exits 0"
	lacks "$who: no dotenv, gcloud, azure or cargo credential reads" SECRET "$T/out" PUBLIC
	is "$(grep -c PUBLIC "$T/out")" 6 \
		"$who: positive control: the dotenv templates, .environment, cargo's config and .config/other.conf read"
	cd "$T" || exit 1
}
for_each_user creds

runs() {
	who=$1
	d=$T/runs-$who
	mkdir -p "$d/work/pkg" "$d/work/deep/a"
	echo 'registry=https://registry.npmjs.org/' >"$d/work/pkg/.yarnrc"
	echo 'nodeLinker: node-modules' >"$d/work/pkg/.yarnrc.yml"
	echo 'all:' >"$d/work/Makefile"
	[ -n "$RUN_AS" ] && chown -R 65534:65534 "$d"
	cd "$d/work" || exit 1
	$RUN_AS "$CORDON" run --profile workspace-write --json-fd 3 -- sh -c '
		for f in pkg/.yarnrc pkg/.yarnrc.yml; do
			if echo "yarnPath: /tmp/evil.cjs" >>"$f"; then echo "$f=written"; else echo "$f=refused"; fi
		done
		echo "node-options=--require /tmp/evil.js" >deep/a/.npmrc
		echo "yarnPath: evil.cjs" >deep/a/.yarnrc.yml
		echo "all: ; echo built" >Makefile && echo Makefile=written' \
		3>"$T/rec" >"$T/out" 2>"$T/err"
	is "$?" 0 "$who: the run exits 0"
	is "$(grep '^pkg/' "$T/out" | tr '\n' ' ')" "pkg/.yarnrc=refused pkg/.yarnrc.yml=refused " \
		"$who: an existing .yarnrc and .yarnrc.yml one level down are read-only"
	is "$(cat "$d/work/pkg/.yarnrc.yml")" "nodeLinker: node-modules" "$who: ... and unchanged on the host"
	got=" $(planted_paths) "
	case $got in *" deep/a/.npmrc "*) r=yes ;; *) r="no: $got" ;; esac
	is "$r" yes "$who: a new .npmrc two levels down is in planted_paths"
	case $got in *" deep/a/.yarnrc.yml "*) r=yes ;; *) r="no: $got" ;; esac
	is "$r" yes "$who: so is a new .yarnrc.yml"
	case $got in *Makefile*) r="listed: $got" ;; *) r=no ;; esac
	is "$r" no "$who: control: the Makefile is not listed"
	is "$(grep '^Makefile=' "$T/out")$(cat "$d/work/Makefile")" "Makefile=writtenall: ; echo built" \
		"$who: positive control: the Makefile was written, on the host too"
	cd "$T" || exit 1
}
for_each_user runs

done_testing
