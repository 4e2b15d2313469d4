#!/bin/sh
# Issue 16, finding 6: home directories and credential files.  A working
# directory or a bind (--ro, --rw, --scratch) that is or contains a home
# directory (a login account's from /etc/passwd, even a fresh one without
# .ssh; root's; $HOME) is refused unless --allow-home; a directory below a
# home is fine.  Well-known credential files, and the profile's
# cover_files globs, are covered (read empty) in every bound tree at any
# depth and listed in the record's covered_paths; ordinary files beside
# them stay readable.
: "${CORDON_TEST_TIMEOUT:=300}"
export CORDON_TEST_TIMEOUT
. "${CORDON_SRC:-.}/tests/lib.sh"

# A fresh login account whose home holds nothing (no .ssh, no .aws).
FRESH=""
if [ "$(id -u)" -eq 0 ] && command -v useradd >/dev/null; then
	FRESH=cdt$$
	mkdir -p "$T/users/fresh" && chmod 0755 "$T/users"
	if useradd -M -d "$T/users/fresh" -s /bin/sh "$FRESH" 2>/dev/null; then
		chown "$FRESH" "$T/users/fresh"
		trap 'userdel "$FRESH" 2>/dev/null; kill $_tap_watchdog 2>/dev/null; rm -rf "$T" "$S"' EXIT
	else
		FRESH=""
	fi
fi

# A JSON field of the record in $T/rec: a python expression over `p`.
rj() {
	python3 -c "import json,sys; p=json.load(open(sys.argv[1])); print($1)" "$T/rec"
}

homes() {
	who=$1
	h=$T/home-$who
	mkdir -p "$h/project" "$T/other-$who"
	[ -n "$RUN_AS" ] && chown -R 65534:65534 "$h" "$T/other-$who"
	# $HOME (as the caller has it): an empty home, as every new user's.
	for how in cwd ro rw scratch; do
		case $how in
		cwd) (cd "$h" && $RUN_AS env HOME="$h" "$CORDON" run -- true) 2>"$T/err" ;;
		ro) (cd "$T/other-$who" && $RUN_AS env HOME="$h" "$CORDON" run --ro "$h" -- true) 2>"$T/err" ;;
		rw) (cd "$T/other-$who" && $RUN_AS env HOME="$h" "$CORDON" run --rw "$h:/mnt/h" -- true) 2>"$T/err" ;;
		scratch) (cd "$T/other-$who" && $RUN_AS env HOME="$h" "$CORDON" run --scratch "$h" -- true) 2>"$T/err" ;;
		esac
		is "$?" 125 "$who: \$HOME as $how is refused"
		ok "$who: ... naming the home" grep -q "is or contains the home directory '$h' (\$HOME)" "$T/err"
	done
	(cd "$T/other-$who" && $RUN_AS env HOME="$h" "$CORDON" run --ro "$T:/mnt/t" -- true) 2>"$T/err"
	is "$?" 125 "$who: a bind of an ancestor of \$HOME is refused"
	(cd "$h/project" && $RUN_AS env HOME="$h" "$CORDON" run -- true) 2>"$T/err"
	is "$?" 0 "$who: positive control: a project below \$HOME runs"
	(cd "$T/other-$who" && $RUN_AS env HOME="$h" "$CORDON" run --ro "$h/project" -- true) 2>"$T/err"
	is "$?" 0 "$who: positive control: a bind below \$HOME runs"
	(cd "$h" && $RUN_AS env HOME="$h" "$CORDON" run --allow-home -- true) 2>"$T/err"
	is "$?" 0 "$who: --allow-home lets \$HOME be the working directory"
	(cd "$T/other-$who" && $RUN_AS env HOME="$h" "$CORDON" run --allow-home --ro "$h" -- true) 2>"$T/err"
	is "$?" 0 "$who: --allow-home lets \$HOME be bound"
	# Root's home and a fresh login account's, from /etc/passwd, whatever
	# $HOME says.
	(cd "$T/other-$who" && $RUN_AS env HOME=/nonexistent "$CORDON" run --ro /root:/mnt/r -- true) 2>"$T/err"
	is "$?" 125 "$who: root's home as a bind is refused"
	ok "$who: ... naming it" grep -q "home directory '/root' (of user root)" "$T/err"
	if [ -n "$FRESH" ]; then
		for how in cwd ro rw scratch; do
			case $how in
			cwd) (cd "$T/users/fresh" && $RUN_AS env HOME=/nonexistent "$CORDON" run -- true) 2>"$T/err" ;;
			ro) (cd "$T/other-$who" && $RUN_AS env HOME=/nonexistent "$CORDON" run --ro "$T/users:/mnt/u" -- true) 2>"$T/err" ;;
			rw) (cd "$T/other-$who" && $RUN_AS env HOME=/nonexistent "$CORDON" run --rw "$T/users/fresh:/mnt/u" -- true) 2>"$T/err" ;;
			scratch) (cd "$T/other-$who" && $RUN_AS env HOME=/nonexistent "$CORDON" run --scratch "$T/users/fresh" -- true) 2>"$T/err" ;;
			esac
			is "$?" 125 "$who: a fresh user's home (no .ssh) as $how is refused"
			ok "$who: ... naming the user" grep -q "(of user $FRESH)" "$T/err"
		done
		(cd "$T/other-$who" && $RUN_AS env HOME=/nonexistent "$CORDON" run --allow-home --ro "$T/users/fresh:/mnt/u" -- true) 2>"$T/err"
		is "$?" 0 "$who: --allow-home lets a fresh user's home be bound"
	else
		skip "no useradd or not root: the fresh-account case needs one"
	fi
}
for_each_user homes

# Credential files at depth in every kind of bound tree.
plant_creds() {
	d=$1
	mkdir -p "$d/a/b/c" "$d/x/.docker" "$d/x/.kube" "$d/y/.aws" "$d/y/.config/gh" "$d/keys"
	for f in a/b/c/.netrc a/b/.git-credentials a/.npmrc a/.pypirc x/.docker/config.json \
		x/.kube/config y/.aws/credentials y/.config/gh/hosts.yml keys/id_ed25519 keys/id_rsa \
		keys/server.key keys/app.secret; do
		echo "SECRET-$f" >"$d/$f"
		echo "plain" >"$(dirname "$d/$f")/ordinary.txt"
	done
	printf -- '-----BEGIN PRIVATE KEY-----\nSECRET-pem\n-----END PRIVATE KEY-----\n' >"$d/keys/priv.pem"
	printf -- '-----BEGIN CERTIFICATE-----\nPUBLIC-cert\n-----END CERTIFICATE-----\n' >"$d/keys/cert.pem"
	mkdir -p "$d/x/.docker/conf" && echo plain >"$d/x/.docker/conf/other.json"
}

creds() {
	who=$1
	base=$T/creds-$who
	rm -rf "$base" && mkdir -p "$base"
	for t in cwd ro rw scratch; do plant_creds "$base/$t"; done
	printf 'cover_files: ["*.secret"]\n' >"$base/p.yaml"
	chmod 0644 "$base/p.yaml"
	[ -n "$RUN_AS" ] && chown -R 65534:65534 "$base"
	cd "$base/cwd" || exit 1
	$RUN_AS "$CORDON" run --profile "$base/p.yaml" --json-fd 3 --ro "$base/ro:/mnt/ro" \
		--rw "$base/rw:/mnt/rw" --scratch "$base/scratch" -- sh -c '
		for top in . /mnt/ro /mnt/rw /tmp; do
			for f in a/b/c/.netrc a/b/.git-credentials a/.npmrc a/.pypirc x/.docker/config.json \
				x/.kube/config y/.aws/credentials y/.config/gh/hosts.yml keys/id_ed25519 \
				keys/id_rsa keys/server.key keys/app.secret keys/priv.pem; do
				echo "$top/$f:$(cat "$top/$f" 2>&1)"
			done
			echo "$top/cert:$(cat "$top/keys/cert.pem" | sed -n 2p)"
			echo "$top/aws-other:$(cat "$top/y/.aws/ordinary.txt")"
			echo "$top/plain:$(cat "$top/a/b/c/ordinary.txt" "$top/y/.config/gh/ordinary.txt" "$top/x/.docker/conf/other.json" | tr -d "\n")"
		done' >"$T/out" 3>"$T/rec" 2>"$T/err"
	is "$?" 0 "$who: the run with credentials in every bound tree exits 0"
	is "$(grep -c SECRET "$T/out")" 0 "$who: no credential file could be read, in any tree"
	is "$(grep -c ':$' "$T/out")" 56 "$who: each of 13 credential files (and .aws's other file) x 4 trees reads empty"
	is "$(grep -c 'cert:PUBLIC-cert$' "$T/out")" 4 "$who: positive control: a certificate .pem stays readable"
	is "$(grep -c 'aws-other:$' "$T/out")" 4 "$who: anything below .aws reads empty (token caches, config)"
	is "$(grep -c 'plain:plainplainplain$' "$T/out")" 4 "$who: positive control: ordinary files beside them are readable"
	grep 'plain:' "$T/out" | grep -v 'plainplainplain$' | sed 's/^/#   /' | head -4
	n=$(rj 'len([c for c in p["covered_paths"] if c["reason"] == "credential file"])')
	is "$n" 56 "$who: the record lists all 56 in covered_paths"
	ok "$who: ... with their paths inside" \
		sh -c "python3 -c 'import json,sys; c=[x[\"path\"] for x in json.load(open(sys.argv[1]))[\"covered_paths\"]]; assert \"/mnt/ro/a/b/c/.netrc\" in c and \"/tmp/y/.config/gh/hosts.yml\" in c and \"$base/cwd/keys/app.secret\" in c' '$T/rec'"
	# Without the profile's glob, app.secret is an ordinary file.
	out=$($RUN_AS "$CORDON" run -- cat keys/app.secret 2>&1)
	is "$out" "SECRET-keys/app.secret" "$who: positive control: *.secret is covered only by the profile's glob"
	# --skip-socket-scan still covers them.
	out=$($RUN_AS "$CORDON" run --skip-socket-scan -- cat a/b/c/.netrc 2>&1)
	is "$out" "" "$who: --skip-socket-scan does not skip credential coverage"
	# workspace-write: a covered file can be neither read nor replaced.
	$RUN_AS "$CORDON" run --profile workspace-write -- sh -c 'mv a/b/c/.netrc a/b/c/n2' 2>"$T/err"
	ok "$who: workspace-write: a covered file cannot be renamed away (EBUSY)" grep -q "busy" "$T/err"
	cd "$T" || exit 1
}
for_each_user creds

# A directory the walk cannot open hides what is inside it.  In a tree
# the sandbox can write, one the caller owns is refused (the sandbox could
# chmod it back and read what was never checked); in a read-only tree it
# is skipped (the sandbox cannot chmod it either).  Root reads every
# directory, so for root the credential is simply covered.
hidden() {
	who=$1
	d=$T/hid-$who
	mkdir -p "$d/work/cfg" "$d/tree/cfg"
	echo SECRET-netrc >"$d/work/cfg/.netrc"
	echo SECRET-netrc >"$d/tree/cfg/.netrc"
	[ -n "$RUN_AS" ] && chown -R 65534:65534 "$d"
	cd "$d/work" || exit 1
	$RUN_AS "$CORDON" run --profile workspace-write -- chmod 000 cfg 2>"$T/err"
	rc=$?
	# For a rootless caller the after-run check cannot open the directory
	# the command hid: it says its check was incomplete, and exits 125.
	if [ -n "$RUN_AS" ]; then
		is "$rc" 125 "$who: run 1 hides the directory holding the .netrc: the after-run check is incomplete (125)"
		ok "$who: ... saying so" grep -q "incomplete" "$T/err"
	else
		is "$rc" 0 "$who: control: run 1 hides the directory holding the .netrc"
	fi
	is "$(stat -c %a "$d/work/cfg")" 0 "$who: ... and the directory is mode 000 on the host"
	out=$($RUN_AS "$CORDON" run --profile workspace-write -- sh -c 'chmod 755 cfg; cat cfg/.netrc' 2>"$T/err")
	rc=$?
	is "$(printf '%s' "$out" | grep -c SECRET)" 0 "$who: run 2 cannot chmod the directory back and read the .netrc"
	if [ -n "$RUN_AS" ]; then
		is "$rc" 125 "$who: ... the run is refused"
		ok "$who: ... in one line naming the directory" \
			grep -q "cannot read '$d/work/cfg' (Permission denied).*the sandbox could make it readable" "$T/err"
	fi
	chmod 0755 "$d/work/cfg"
	out=$($RUN_AS "$CORDON" run --profile workspace-write -- cat cfg/.netrc 2>&1)
	is "$out" "" "$who: positive control: readable again, the .netrc is covered"
	chmod 0000 "$d/tree/cfg"
	$RUN_AS "$CORDON" run --ro "$d/tree:/mnt/t" -- true 2>"$T/err"
	is "$?" 0 "$who: positive control: an unreadable directory in a read-only tree is skipped"
	out=$($RUN_AS "$CORDON" run --rw "$d/tree:/mnt/t" -- sh -c 'chmod 755 /mnt/t/cfg; cat /mnt/t/cfg/.netrc' 2>"$T/err")
	rc=$?
	is "$(printf '%s' "$out" | grep -c SECRET)" 0 "$who: ... in a --rw tree the sandbox cannot chmod it back and read the .netrc"
	[ -n "$RUN_AS" ] && is "$rc" 125 "$who: ... the run is refused"
	cd "$T" || exit 1
}
for_each_user hidden

# Keys under any name in .ssh, .aws/config, a private key past the first
# 64 KiB of a .pem, a hard link to a covered file, a credential bound by
# itself: all covered; public keys, known_hosts and plain files are not.
more_creds() {
	who=$1
	d=$T/more-$who
	mkdir -p "$d/work/k/.ssh" "$d/work/k/.aws" "$d/work/a" "$d/out"
	cd "$d/work" || exit 1
	for f in k/.ssh/deploy k/.aws/config a/.netrc; do echo "SECRET-$f" >"$f"; done
	echo PUBLIC >k/.ssh/deploy.pub
	echo PUBLIC >k/.ssh/known_hosts
	{ i=0; while [ $i -lt 1200 ]; do echo "-----BEGIN CERTIFICATE----- padding padding padding padding"; i=$((i + 1)); done
	  printf -- '-----BEGIN PRIVATE KEY-----\nSECRET-big\n-----END PRIVATE KEY-----\n'; } >big.pem
	ln a/.netrc linked-copy
	echo SECRET-bound >"$d/out/.netrc"
	echo PUBLIC >"$d/out/plain.txt"
	[ -n "$RUN_AS" ] && chown -R 65534:65534 "$d"
	out=$($RUN_AS "$CORDON" run --ro "$d/out/.netrc:/mnt/n" --ro "$d/out/plain.txt:/mnt/p" -- sh -c '
		cat k/.ssh/deploy k/.aws/config linked-copy /mnt/n; grep -c SECRET big.pem
		cat k/.ssh/deploy.pub k/.ssh/known_hosts /mnt/p' 2>"$T/err")
	is "$?" 0 "$who: the run exits 0"
	is "$(printf '%s' "$out" | grep -c SECRET)" 0 "$who: .ssh/deploy, .aws/config, a hard link, a bound .netrc read empty"
	is "$(printf '%s' "$out" | head -1)" 0 "$who: a .pem with its private key past 64 KiB is covered"
	is "$(printf '%s' "$out" | grep -c PUBLIC)" 3 "$who: positive control: .pub, known_hosts, a bound plain file read"
	cd "$T" || exit 1
}
for_each_user more_creds

# The profile key is validated by policy lint.
cat >"$T/pol.yaml" <<'EOP'
version: 1
agents: [{id: a, owner: ops}]
tools: [{id: shell, kind: command}]
profiles:
  p: {cover_files: ["*.secret", "conf/token.json"]}
grants:
  - {id: g, agent: a, tool: shell, actions: [execute], scope: {argv: [sh]}, profile: p, owner: ops, justification: t, review_by: 2099-01-01, expires: 2099-01-01}
EOP
ok "policy lint accepts cover_files globs" "$CORDON" policy lint "$T/pol.yaml"
sed 's|"\*.secret"|"/etc/shadow"|' "$T/pol.yaml" >"$T/bad.yaml"
"$CORDON" policy lint "$T/bad.yaml" >"$T/err" 2>&1
is "$?" 1 "policy lint refuses an absolute cover_files entry"
ok "... naming it" grep -q "cover_files '/etc/shadow' is not a relative glob" "$T/err"

done_testing
