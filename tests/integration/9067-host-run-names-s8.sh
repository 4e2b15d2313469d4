#!/bin/sh
# Issue 16 (session 8 attacker, F5 and F7): more files the host runs on
# its own, and more credential files.
# Host-run, at any depth of a workspace-write tree: read-only when they
# exist, in planted_paths when the run creates them: .pdbrc (python's
# pdb runs it), a virtualenv's pyvenv.cfg (its home = picks where the
# protected python loads its standard library) and bin/ entries whatever
# the environment is called (venv/, env/; python3.11 too), mercurial's
# .hg/hgrc (hooks), and editor-run configs (.pylintrc, mypy.ini,
# .devcontainer.json, ansible.cfg, rust-toolchain.toml ...).
# Credentials, covered (read empty) in any bound tree: .my.cnf,
# .vault-token, .gem/credentials, .m2/settings.xml, key stores (*.p12,
# *.pfx, *.jks), terraform state, .s3cfg, .boto, client_secret.json,
# .terraform.d/credentials.tfrc.json.  Controls: a project file beside
# each is written / read.  As root and as nobody.
: "${CORDON_TEST_TIMEOUT:=300}"
export CORDON_TEST_TIMEOUT
. "${CORDON_SRC:-.}/tests/lib.sh"

NAMES=".pdbrc venv/pyvenv.cfg venv/bin/activate venv/bin/python3.11 env/bin/activate
	.hg/hgrc .pylintrc mypy.ini .devcontainer.json ansible.cfg rust-toolchain.toml .Rprofile
	.irbrc .tool-versions"

names() {
	who=$1
	d=$T/names-$who
	mkdir -p "$d/old/a/venv/bin" "$d/old/a/env/bin" "$d/old/a/.hg" "$d/new/b"
	for f in $NAMES; do echo "orig" >"$d/old/a/$f"; done
	echo orig >"$d/old/a/main.py"
	[ -n "$RUN_AS" ] && chown -R 65534:65534 "$d"
	sleep 1.1 # older than the check's 1 s guard: only the run's changes count
	cd "$d/old" || exit 1
	$RUN_AS "$CORDON" run --profile workspace-write --json-fd 3 -- sh -c "
		for f in $(echo $NAMES) main.py; do
			if echo evil >>a/\$f; then echo \"\$f=written\"; else echo \"\$f=refused\"; fi
		done 2>/dev/null" 3>"$T/rec" >"$T/out" 2>"$T/err"
	is "$?" 0 "$who: the run exits 0"
	for f in $NAMES; do
		is "$(grep "^$f=" "$T/out")$(cat "$d/old/a/$f")" "$f=refusedorig" \
			"$who: an existing $f one level down is read-only, unchanged on the host"
	done
	is "$(grep -c '=written' "$T/out")" 1 "$who: positive control: main.py is written"

	cd "$d/new" || exit 1
	$RUN_AS "$CORDON" run --profile workspace-write --json-fd 3 -- sh -c "
		for f in $(echo $NAMES) src.py; do
			mkdir -p b/\$(dirname \$f) && echo evil >b/\$f
		done" 3>"$T/rec" 2>"$T/err"
	got=" $(planted_paths) "
	for f in $NAMES; do
		case $got in *" b/$f "*) r=yes ;; *) r="no: $got" ;; esac
		is "$r" yes "$who: a new b/$f is in planted_paths"
	done
	case $got in *src.py*) r="listed: $got" ;; *) r=no ;; esac
	is "$r" no "$who: control: src.py is not listed"
	cd "$T" || exit 1
}
for_each_user names

CREDS=".my.cnf .vault-token .gem/credentials .m2/settings.xml cert.p12 cert.pfx keystore.jks
	terraform.tfstate terraform.tfstate.backup .s3cfg .boto .databrickscfg .htpasswd
	client_secret.json .composer/auth.json .pulumi/credentials.json
	.terraform.d/credentials.tfrc.json"

creds() {
	who=$1
	d=$T/creds-$who
	mkdir -p "$d/p/.gem" "$d/p/.m2" "$d/p/.composer" "$d/p/.pulumi" "$d/p/.terraform.d"
	for f in $CREDS; do echo "SECRET-$f" >"$d/p/$f"; done
	echo PUBLIC >"$d/p/README"
	[ -n "$RUN_AS" ] && chown -R 65534:65534 "$d"
	cd "$d/p" || exit 1
	$RUN_AS "$CORDON" run -- sh -c "cat $(echo $CREDS) README" >"$T/out" 2>"$T/err"
	is "$?" 0 "$who: the run exits 0"
	lacks "$who: every credential file reads empty" SECRET "$T/out" PUBLIC
	is "$(grep -c PUBLIC "$T/out")" 1 "$who: positive control: README reads"
	cd "$T" || exit 1
}
for_each_user creds

done_testing
