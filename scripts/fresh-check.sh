#!/bin/sh
# fresh-check.sh — `make fresh-check`: does the README hold on a fresh
# Debian 12?  Too slow for `make check`.
#
#   1. a pristine root: `debootstrap bookworm` (default variant) from the
#      Debian mirror this machine's apt uses, plus git and ca-certificates,
#      cached as a tarball under $CORDON_FRESH_CACHE (/var/cache/cordon-fresh)
#      so that reruns take seconds;
#   2. a copy of it with this repository (its committed HEAD) cloned to
#      /root/cordon, where root usually clones (a 0700 home);
#   3. entered with new mount and pid namespaces and pivot_root (a chroot
#      forbids user namespaces, which cordon needs), /proc, /dev, /sys
#      mounted;
#   4. the README's first code block run there as written, with prove
#      verbose (PROVE_FLAGS=-v) so that every test line is in the log,
#      each test file given 600 s (CORDON_TEST_TIMEOUT) rather than 120:
#      this check is about what gets installed, and it often runs beside
#      other work on a loaded machine;
#   5. then the package: `make deb`, `dpkg -i` of it, `cordon doctor` from
#      /usr/bin, the AppArmor profile disabled (Debian 12's AppArmor 3
#      cannot parse it), and `dpkg --purge` taking the disable link away.
#
# Fails when a command of the block fails or the output has a `# SKIP`
# or a skipped file.  The log is build/fresh-check.log; the root is removed
# on success and kept (path printed) on failure; CORDON_FRESH_ROOT=DIR runs
# again in such a root (packages already installed, the clone updated).
# Needs root and the network (the mirror; npm's registry for the MCP tests).
set -eu

die() {
	echo "fresh-check: $*" >&2
	exit 1
}
[ "$(id -u)" -eq 0 ] || die "needs root (debootstrap, mounts, namespaces)"
src=$(cd "$(dirname "$0")/.." && pwd)
cache=${CORDON_FRESH_CACHE:-/var/cache/cordon-fresh}
suite=bookworm
pristine=$cache/$suite-git.tar.gz
log=$src/build/fresh-check.log
mkdir -p "$cache" "$src/build"

# The mirror this machine's apt already uses (deb822 or one-line format).
mirror() {
	for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list /etc/apt/sources.list.d/*.sources; do
		[ -f "$f" ] || continue
		awk '/^URIs:/ { for (i = 2; i <= NF; i++) print $i }
		     /^deb / { for (i = 2; i <= NF; i++) if ($i ~ /:\/\//) { print $i; break } }' "$f"
	done | grep -E '/debian/?$' | head -1
}

build_pristine() {
	command -v debootstrap >/dev/null 2>&1 || {
		apt-get update -qq && apt-get install -y -qq --no-install-recommends debootstrap
	} || die "cannot install debootstrap"
	url=$(mirror)
	[ -n "$url" ] || url=http://deb.debian.org/debian
	tmp=$cache/root.tmp
	if [ ! -f "$tmp/.debootstrap-done" ]; then
		rm -rf "$tmp"
		echo "fresh-check: debootstrap $suite from $url (a few minutes)" >&2
		debootstrap "$suite" "$tmp" "$url" >"$cache/debootstrap.log" 2>&1 ||
			die "debootstrap failed: $(tail -3 "$cache/debootstrap.log")"
		touch "$tmp/.debootstrap-done"
	fi
	# git and ca-certificates, as a user who clones over https has them;
	# then no package lists, as debootstrap leaves a fresh machine.
	cp /etc/resolv.conf "$tmp/etc/resolv.conf"
	unshare --mount sh -c 'mount -t proc proc "$1/proc" &&
		chroot "$1" sh -c "apt-get update -qq && DEBIAN_FRONTEND=noninteractive \
			apt-get install -y -qq --no-install-recommends git ca-certificates && apt-get clean &&
			rm -rf /var/lib/apt/lists/*"' sh "$tmp" >>"$cache/debootstrap.log" 2>&1 ||
		die "installing git in the root failed: $(tail -3 "$cache/debootstrap.log")"
	rm -f "$tmp/.debootstrap-done"
	tar -C "$tmp" -czf "$pristine.tmp" . && mv "$pristine.tmp" "$pristine"
	rm -rf "$tmp"
}

[ -f "$pristine" ] || build_pristine

# The README's first ```sh block, as written.
block=$(awk '/^```sh$/ { on = 1; next } on && /^```$/ { exit } on { print }' "$src/README.md")
[ -n "$block" ] || die "README.md has no \`\`\`sh block"

if [ -n "${CORDON_FRESH_ROOT:-}" ]; then
	# Again in a root a failed run kept (its packages installed): the
	# clone moved to this repository's HEAD.
	root=$CORDON_FRESH_ROOT
	[ -d "$root/root/cordon/.git" ] || die "$root has no /root/cordon clone"
	git -C "$root/root/cordon" fetch -q "$src" HEAD &&
		git -C "$root/root/cordon" reset -q --hard FETCH_HEAD || die "cannot update $root/root/cordon"
else
	root=$(mktemp -d /var/tmp/cordon-fresh.XXXXXX)
	chmod 0755 "$root"
	tar -C "$root" -xzf "$pristine"
	git clone -q "$src" "$root/root/cordon" || die "git clone $src failed"
	chmod 0700 "$root/root"
fi
# The network this machine sits behind: its resolver, and the local CA
# certificates it trusts (an intercepting egress proxy's, say), without
# which npm cannot fetch the MCP SDK over TLS.
cp /etc/resolv.conf "$root/etc/resolv.conf"
if ls /usr/local/share/ca-certificates/*.crt >/dev/null 2>&1; then
	mkdir -p "$root/usr/local/share/ca-certificates"
	cp /usr/local/share/ca-certificates/*.crt "$root/usr/local/share/ca-certificates/"
	chroot "$root" update-ca-certificates >/dev/null 2>&1 ||
		die "update-ca-certificates in the root failed"
fi
printf '%s\n' "$block" >"$root/root/readme-block.sh"
# Step 5, after the block passed: the Debian package on the same root.
cat >"$root/root/deb-check.sh" <<'EOF'
echo "fresh-check: make deb, dpkg -i, cordon doctor"
make deb
dpkg -i build/cordon_*.deb
/usr/bin/cordon --version
/usr/bin/cordon doctor
test -L /etc/apparmor.d/disable/cordon ||
	{ echo "fresh-check: the AppArmor profile is not disabled on AppArmor 3"; exit 1; }
dpkg --purge cordon
test ! -e /usr/bin/cordon && test ! -L /etc/apparmor.d/disable/cordon ||
	{ echo "fresh-check: dpkg --purge cordon left files behind"; exit 1; }
echo "fresh-check: the package installed, cordon doctor passed, the purge was clean"
EOF
echo "fresh-check: $(git -C "$src" log -1 --format='%h %s' | cut -c1-72)" >&2
echo "fresh-check: running the README's first block in $root (log: $log)" >&2
printf '%s\n' "$block" | sed 's/^/fresh-check: | /' >&2

# New mount and pid namespaces; the root becomes / by pivot_root.
rc=0
unshare --mount --pid --fork --propagation private sh -euc '
	r=$1
	mount --rbind "$r" "$r"
	mount -t proc proc "$r/proc"
	mount --rbind /dev "$r/dev"
	mount --rbind /sys "$r/sys"
	cd "$r"
	mkdir -p .old-root
	pivot_root . .old-root
	umount -l /.old-root
	rmdir /.old-root
	cd /root/cordon
	exec env -i HOME=/root USER=root LOGNAME=root SHELL=/bin/sh TERM=dumb \
		PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
		PROVE_FLAGS=-v CORDON_TEST_TIMEOUT="${CORDON_TEST_TIMEOUT:-600}" \
		sh -c "sh -e /root/readme-block.sh && sh -e /root/deb-check.sh"
' sh "$root" </dev/null >"$log" 2>&1 || rc=$?

skips=$(grep -cE '# SKIP|skipped:' "$log" || true)
fails=$(grep -cE '^not ok' "$log" || true)
tail -15 "$log" >&2
echo "fresh-check: exit $rc, $fails 'not ok' lines, $skips skips (log: $log)" >&2
if [ "$rc" -ne 0 ] || [ "$skips" -ne 0 ]; then
	grep -E '^not ok|# SKIP|skipped:' "$log" | head -40 >&2
	echo "fresh-check: FAILED; the root is kept in $root" >&2
	exit 1
fi
rm -rf "$root"
echo "fresh-check: ok: the README's first block passed on a pristine $suite root" >&2
