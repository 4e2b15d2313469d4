#!/bin/sh
# Check (and, as root, install) the Debian packages cordon needs.
#
# Usage: scripts/deps.sh build|demo|test|bench|lint|fuzz|deb ...
# Each group names Debian packages; a package counts as present when dpkg
# says it is installed. As root the missing ones are installed with
# apt-get; as anyone else the exact command is printed (no sudo assumed:
# it may not exist) and we stop, so nothing is half set up.
set -eu

pkgs_build="gcc make pkg-config libc6-dev libseccomp-dev libsodium-dev libsqlite3-dev libyaml-dev libjansson-dev libvectorscan-dev libidn2-dev libunistring-dev libpsl-dev"
# Headers only: libpq, libcurl and libmicrohttpd are loaded on first use
# (src/lib/util/dl.h), so the binary links none of them; libarchive for
# image roots.
pkgs_build="$pkgs_build libpq-dev libcurl4-openssl-dev libmicrohttpd-dev libarchive-dev"
pkgs_demo="python3 util-linux"
# Every command the tests drive: prove (perl), setpriv/unshare/script
# (util-linux, bsdutils), ip (iproute2), jq, node and npm (the MCP SDK
# tests; Debian's nodejs has no npm), ca-certificates (npm ci fetches the
# pinned SDK over TLS), tar and gzip (npm unpacks), apparmor (its parser checks
# packaging/apparmor/cordon), and the rest.
pkgs_test="perl util-linux bsdutils iproute2 python3 git sqlite3 procps coreutils libcap2-bin binutils gcc make curl ca-certificates jq nodejs tmux groff-base strace tar gzip diffutils findutils iputils-ping keyutils apparmor"
# The shells whose completion scripts 0008 loads and queries (bash is
# essential), and asciinema, which 1201 asks to parse a session export.
pkgs_test="$pkgs_test zsh fish asciinema"
# The real peers of the new front ends: a PostgreSQL server the tests start
# (the shared store), containerd and a static busybox for the images the OCI
# tests build, chromium for the console's browser tests.
pkgs_test="$pkgs_test postgresql containerd busybox-static chromium"
# openssl: the TLS test of `cordon mcp --listen` makes its certificate.
pkgs_test="$pkgs_test openssl"
pkgs_bench="hyperfine bubblewrap firejail crun tinyproxy squid"
pkgs_lint="clang-format cppcheck"
pkgs_fuzz="clang"
# make deb: dpkg-deb and dpkg-shlibdeps, strip, gzip.
pkgs_deb="dpkg-dev binutils gzip"

want=""
for group in "$@"; do
	case "$group" in
	build) want="$want $pkgs_build" ;;
	demo) want="$want $pkgs_demo" ;;
	test) want="$want $pkgs_test" ;;
	bench) want="$want $pkgs_bench" ;;
	lint) want="$want $pkgs_lint" ;;
	fuzz) want="$want $pkgs_fuzz" ;;
	deb) want="$want $pkgs_deb" ;;
	*) echo "deps.sh: unknown group '$group' (build demo test bench lint fuzz deb)" >&2; exit 2 ;;
	esac
done

missing=""
for p in $want; do
	if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
		missing="$missing $p"
	fi
done
# npm comes with NodeSource's nodejs, in Debian's own package otherwise:
# ask for the package only when the command is missing (the two conflict).
case " $want " in
*" nodejs "*) command -v npm >/dev/null 2>&1 || missing="$missing npm" ;;
esac
[ -z "$missing" ] && exit 0

if [ "$(id -u)" -ne 0 ]; then
	echo "cordon: missing Debian packages:$missing" >&2
	echo "cordon: as root, run: apt-get update && apt-get install -y --no-install-recommends$missing" >&2
	exit 1
fi
echo "cordon: installing missing Debian packages:$missing" >&2
export DEBIAN_FRONTEND=noninteractive
# An old or absent package list makes apt-get miss packages: refresh once
# (a debootstrapped root has none for the configured mirror at all).
apt-get update -qq >&2 || { echo "cordon: apt-get update failed" >&2; exit 1; }
# shellcheck disable=SC2086
apt-get install -y -qq --no-install-recommends $missing >&2 ||
	{ echo "cordon: apt-get install failed for:$missing" >&2; exit 1; }
