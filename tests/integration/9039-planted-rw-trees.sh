#!/bin/sh
# The check after the run covers every writable tree, not only the
# working directory: a .git (or another file the host runs on its own:
# .envrc, editor tasks, MCP client configs) created in a --rw directory
# is reported in planted_paths, as an absolute host path, with a warning.
# Before, only workspace-write's working tree was checked.  Controls: an
# ordinary new file and a host-run file that was there before the run are
# not reported, and a run that plants nothing reports nothing.  As root
# and as nobody.
: "${CORDON_TEST_TIMEOUT:=300}"
export CORDON_TEST_TIMEOUT
. "${CORDON_SRC:-.}/tests/lib.sh"

rw_trees() {
	who=$1
	d=$T/rw-$who
	mkdir -p "$d/cwd" "$d/out/keep/.vscode" "$d/out/deep/a/b"
	echo '{}' >"$d/out/keep/.vscode/tasks.json"
	[ -n "$RUN_AS" ] && chown -R 65534:65534 "$d"
	cd "$d/cwd" || exit 1
	$RUN_AS "$CORDON" run --rw "$d/out" --json-fd 3 -- sh -c "
		mkdir -p $d/out/sub/.git && echo '[core]' >$d/out/sub/.git/config
		echo 'export X=1' >$d/out/deep/a/b/.envrc
		echo plain >$d/out/plain.txt" 3>"$T/rec" 2>"$T/err"
	is "$?" 0 "$who: the run exits 0"
	got=" $(planted_paths) "
	case $got in *" $d/out/sub/.git "*) r=yes ;; *) r="no: $got" ;; esac
	is "$r" yes "$who: a .git created in a --rw tree is in planted_paths"
	case $got in *" $d/out/deep/a/b/.envrc "*) r=yes ;; *) r="no: $got" ;; esac
	is "$r" yes "$who: so is an .envrc three levels down"
	case $got in *plain.txt* | *.vscode*) r="listed: $got" ;; *) r=no ;; esac
	is "$r" no "$who: control: neither an ordinary new file nor .vscode from before the run is listed"
	ok "$who: the .git is warned about, naming the --rw directory" \
		grep -q "created '$d/out/sub/.git' in a --rw directory" "$T/err"
	is "$(cat "$d/out/plain.txt")" plain "$who: positive control: the --rw tree was written"
	$RUN_AS "$CORDON" run --rw "$d/out" --json-fd 3 -- sh -c "echo again >$d/out/plain.txt" \
		3>"$T/rec" 2>"$T/err"
	is "$(planted_paths)" "" "$who: control: a run that plants nothing reports nothing"
	cd "$T" || exit 1
}
for_each_user rw_trees

done_testing
