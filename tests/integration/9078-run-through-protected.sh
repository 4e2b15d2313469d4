#!/bin/sh
# Issue 16 (session 10's outside review, F2): files the host runs on its
# own through a protected file, or that an editor runs on opening the
# project.  In a workspace-write tree:
# - what an .envrc sources (source_env_if_exists .envrc.local,
#   source_env sub, whose .envrc is read-only by its name, and source_env
#   env.sh, a file) and evaluates (use nix: shell.nix, default.nix;
#   use flake: flake.nix) is read-only: direnv runs it on the next cd,
#   with no new `direnv allow` (it allows the .envrc by its own content);
#   one named but not there yet (default.nix) is in planted_paths when made;
# - pyproject.toml, setup.cfg and tox.ini are read-only while they hold a
#   pylint init-hook / load-plugins or mypy plugins (editors run them on
#   open); one without stays writable, and is in planted_paths when
#   rewritten (an init-hook added);
# - .yarn/sdks/ (what the read-only .vscode/settings.json makes the
#   editor run) is read-only whole; eslint.config.js, .prettierrc.cjs,
#   pylintrc.toml are read-only by name;
# - yarn PnP's .pnp.cjs stays writable (yarn install rewrites it) but is
#   in planted_paths when written.
# --propose flags .pnp.cjs, .yarn/sdks, an .envrc.local beside an .envrc
# and a pyproject.toml whose new content holds an init-hook.
# Controls: an ordinary file, a pyproject.toml without those keys and a
# file the .envrc does not name are written.  As root and as nobody.
: "${CORDON_TEST_TIMEOUT:=300}"
export CORDON_TEST_TIMEOUT
. "${CORDON_SRC:-.}/tests/lib.sh"

mktree() {
	p=$1
	mkdir -p "$p/d/sub" "$p/n" "$p/py" "$p/cfg" "$p/plain" "$p/js/.yarn/sdks/typescript/lib"
	printf 'source_env_if_exists .envrc.local\nsource_env "sub"\nsource_env env.sh\nuse nix\n' >"$p/d/.envrc"
	echo 'export A=1' >"$p/d/.envrc.local"
	echo 'export B=1' >"$p/d/sub/.envrc"
	echo '{ shellHook = "true"; }' >"$p/d/shell.nix"
	echo 'x' >"$p/d/other.sh"
	echo 'export C=1' >"$p/d/env.sh"
	printf 'use flake\n' >"$p/n/.envrc"
	echo '{ }' >"$p/n/flake.nix"
	printf '[tool.pylint.main]\ninit-hook = "import sys"\n' >"$p/py/pyproject.toml"
	printf '[mypy]\nplugins = pydantic.mypy\n' >"$p/cfg/setup.cfg"
	printf '[tox]\nenvlist = py3\n[pylint]\nload-plugins = x\n' >"$p/cfg/tox.ini"
	printf '[project]\nname = "x"\n' >"$p/plain/pyproject.toml"
	echo 'module.exports = 1' >"$p/js/.yarn/sdks/typescript/lib/tsserver.js"
	echo 'export default []' >"$p/js/eslint.config.js"
	echo 'module.exports = {}' >"$p/js/.prettierrc.cjs"
	echo '[main]' >"$p/py/pylintrc.toml"
	echo '/* pnp */' >"$p/js/.pnp.cjs"
}

through() {
	who=$1
	d=$T/t-$who
	mkdir -p "$d"
	mktree "$d"
	cat >"$d/attack.sh" <<'EOF'
try envrc-local "echo 'touch /tmp/x' >>d/.envrc.local"
try envrc-sub "echo 'touch /tmp/x' >>d/sub/.envrc"
try envrc-file "echo 'touch /tmp/x' >>d/env.sh"
try shell-nix "echo '{ shellHook = \"touch /tmp/x\"; }' >d/shell.nix"
try default-nix-new "echo '{ }' >d/default.nix"
try flake-nix "echo '{ evil }' >n/flake.nix"
try pyproject-hook "echo '# x' >>py/pyproject.toml"
try setup-cfg "echo '# x' >>cfg/setup.cfg"
try tox-ini "echo '# x' >>cfg/tox.ini"
try yarn-sdk "echo 'evil' >js/.yarn/sdks/typescript/lib/tsserver.js"
try yarn-sdk-new "echo 'evil' >js/.yarn/sdks/new.js"
try eslint "echo 'evil' >js/eslint.config.js"
try prettier "echo 'evil' >js/.prettierrc.cjs"
try pylintrc-toml "echo 'evil' >>py/pylintrc.toml"
try control-other "echo y >>d/other.sh"
try control-pyproject "printf '[tool.pylint.main]\ninit-hook = \"import os\"\n' >>plain/pyproject.toml"
try pnp "echo '/* evil */' >js/.pnp.cjs"
EOF
	printf '%s\n' "$ATTEMPT" | cat - "$d/attack.sh" >"$d/a2" && mv "$d/a2" "$d/attack.sh"
	[ -n "$RUN_AS" ] && chown -R 65534:65534 "$d"
	sleep 1.1 # older than the walk's 1 s guard: the cache may keep it
	cd "$d" || exit 1
	$RUN_AS "$CORDON" run --profile workspace-write --json-fd 3 -- sh attack.sh \
		3>"$T/rec" >"$T/out" 2>"$T/err"
	is "$?" 0 "$who: the run exits 0"
	for n in envrc-local envrc-sub envrc-file shell-nix flake-nix pyproject-hook \
		setup-cfg tox-ini yarn-sdk yarn-sdk-new eslint prettier pylintrc-toml; do
		is "$(grep "^$n=" "$T/out")" "$n=erofs" "$who: $n is refused: read-only file system"
	done
	for n in control-other control-pyproject pnp default-nix-new; do
		is "$(grep "^$n=" "$T/out")" "$n=written" "$who: control: $n is written"
	done
	got=" $(planted_paths) "
	for f in plain/pyproject.toml js/.pnp.cjs d/default.nix; do
		case $got in *" $f "*) r=yes ;; *) r="no: $got" ;; esac
		is "$r" yes "$who: $f, written, is in planted_paths"
	done
	case $got in *other.sh*) r="listed: $got" ;; *) r=no ;; esac
	is "$r" no "$who: control: d/other.sh is not listed"
	# --propose: .pnp.cjs, an .yarn/sdks file, .envrc.local and an
	# init-hook added to a pyproject.toml are flagged; other.sh and a
	# pyproject.toml edit without one are not
	$RUN_AS "$CORDON" run --propose --agent bot -- sh -c 'echo y >>js/.pnp.cjs
		echo y >>js/.yarn/sdks/typescript/lib/tsserver.js; echo y >>d/other.sh
		echo y >>d/.envrc.local; echo "[tool.pylint.main]
init-hook = \"import os\"" >>plain/pyproject.toml
		mkdir -p q && echo "[project]" >q/pyproject.toml' >"$T/out" 2>"$T/err"
	is "$?" 0 "$who: the proposing run exits 0"
	is "$(grep -o '[0-9]* added.*flagged' "$T/err")" \
		"1 added, 5 modified, 0 deleted, 1 mkdir, 0 rmdir, 0 refused, 4 flagged" \
		"$who: --propose flags .pnp.cjs, the sdk file, .envrc.local, the init-hook"
	cd "$T" || exit 1
}
for_each_user through

done_testing
