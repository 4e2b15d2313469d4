#!/bin/sh
# Session 11's credential attack, F1: a private key at any depth below a
# .ssh directory (.ssh/keys/work, a common IdentityFile layout, and
# .ssh/keys/deep/id) reads empty, in the working directory and through
# a --ro bind of the .ssh directory itself; so does the target of a
# symlink in .ssh/keys/ (a key kept elsewhere in the tree).  Controls,
# shown whole: a public key, known_hosts and config in .ssh/keys/, and an
# ordinary file beside .ssh.  As root and as nobody; each run twice (the
# second replays the scan cache).
: "${CORDON_TEST_TIMEOUT:=300}"
export CORDON_TEST_TIMEOUT
. "${CORDON_SRC:-.}/tests/lib.sh"

SECRET=s3cr3t-$$
KEY="-----BEGIN OPENSSH PRIVATE KEY-----
$SECRET
-----END OPENSSH PRIVATE KEY-----"

ssh_depth() {
	who=$1
	d=$T/p-$who
	mkdir -p "$d/dot/.ssh/keys/deep" "$d/vault"
	echo "$KEY" >"$d/dot/.ssh/keys/work"
	echo "$KEY" >"$d/dot/.ssh/keys/deep/id"
	echo "$KEY" >"$d/vault/kept"
	ln -s ../../../vault/kept "$d/dot/.ssh/keys/linked"
	echo "ssh-ed25519 AAAApub-$who" >"$d/dot/.ssh/keys/work.pub"
	echo "host ssh-ed25519 AAAAhost-$who" >"$d/dot/.ssh/keys/known_hosts"
	echo "Host x-$who" >"$d/dot/.ssh/keys/config"
	echo "plain-$who" >"$d/dot/plain"
	[ -n "$RUN_AS" ] && chown -R -h 65534:65534 "$d"
	sleep 1.1 # older than the walk's 1 s guard: the cache may keep it
	cd "$d" || exit 1
	for pass in 1 2; do
		$RUN_AS "$CORDON" run --ro "$d/dot/.ssh:/s" -- sh -c '
			for f in dot/.ssh/keys/work dot/.ssh/keys/deep/id /s/keys/work \
				/s/keys/deep/id vault/kept /s/keys/linked dot/.ssh/keys/linked \
				/s/keys/work.pub /s/keys/known_hosts /s/keys/config dot/plain; do
				printf "%s:" "$f"; cat "$f" 2>/dev/null | tr "\n" " "; echo
			done' >"$T/out" 2>"$T/err"
		rc=$?
		is "$rc" 0 "$who ($pass): the run exits 0"
		[ "$rc" -eq 0 ] || sed 's/^/# /' "$T/err"
		for f in dot/.ssh/keys/work dot/.ssh/keys/deep/id /s/keys/work /s/keys/deep/id \
			vault/kept /s/keys/linked dot/.ssh/keys/linked; do
			is "$(grep "^$f:" "$T/out")" "$f:" "$who ($pass): $f reads empty"
		done
		for f in work.pub known_hosts config; do
			is "$(grep "^/s/keys/$f:" "$T/out")" "/s/keys/$f:$(tr '\n' ' ' <"dot/.ssh/keys/$f")" \
				"$who ($pass): control: /s/keys/$f is shown whole"
		done
		is "$(grep "^dot/plain:" "$T/out")" "dot/plain:plain-$who " \
			"$who ($pass): control: dot/plain is shown whole"
	done
	cd "$T" || exit 1
}

for_each_user ssh_depth

done_testing
