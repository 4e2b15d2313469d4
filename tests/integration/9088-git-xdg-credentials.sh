#!/bin/sh
# Session 11's credential attack, F7: git credential-store's XDG file,
# .config/git/credentials (the same secret as .git-credentials), reads
# empty, in the working directory and through a --ro bind of .config and
# of .config/git.  Controls, shown whole: git's own config and ignore
# file beside it, and a file named credentials outside .config/git.  As
# root and as nobody; each run twice (the second replays the scan cache).
: "${CORDON_TEST_TIMEOUT:=300}"
export CORDON_TEST_TIMEOUT
. "${CORDON_SRC:-.}/tests/lib.sh"

SECRET=s3cr3t-$$

xdg_creds() {
	who=$1
	d=$T/p-$who
	mkdir -p "$d/dot/.config/git" "$d/docs"
	echo "https://u:$SECRET@github.com" >"$d/dot/.config/git/credentials"
	echo "[user] name = x-$who" >"$d/dot/.config/git/config"
	echo "*.o-$who" >"$d/dot/.config/git/ignore"
	echo "how to store credentials-$who" >"$d/docs/credentials"
	[ -n "$RUN_AS" ] && chown -R 65534:65534 "$d"
	sleep 1.1 # older than the walk's 1 s guard: the cache may keep it
	cd "$d" || exit 1
	for pass in 1 2; do
		$RUN_AS "$CORDON" run --ro "$d/dot/.config:/cfg" --ro "$d/dot/.config/git:/g" -- sh -c '
			for f in dot/.config/git/credentials /cfg/git/credentials /g/credentials \
				/cfg/git/config /g/ignore docs/credentials; do
				printf "%s:" "$f"; cat "$f" 2>/dev/null | tr "\n" " "; echo
			done' >"$T/out" 2>"$T/err"
		rc=$?
		is "$rc" 0 "$who ($pass): the run exits 0"
		[ "$rc" -eq 0 ] || sed 's/^/# /' "$T/err"
		for f in dot/.config/git/credentials /cfg/git/credentials /g/credentials; do
			is "$(grep "^$f:" "$T/out")" "$f:" "$who ($pass): $f reads empty"
		done
		is "$(grep "^/cfg/git/config:" "$T/out")" "/cfg/git/config:[user] name = x-$who " \
			"$who ($pass): control: git's config is shown whole"
		is "$(grep "^/g/ignore:" "$T/out")" "/g/ignore:*.o-$who " \
			"$who ($pass): control: git's ignore file is shown whole"
		is "$(grep "^docs/credentials:" "$T/out")" \
			"docs/credentials:how to store credentials-$who " \
			"$who ($pass): control: docs/credentials is shown whole"
	done
	cd "$T" || exit 1
}

for_each_user xdg_creds

done_testing
