#!/bin/sh
# make-deb.sh — `make deb`: a Debian binary package of the built cordon,
# with dpkg's own tools (dpkg-deb, dpkg-shlibdeps), from a git checkout or
# from a tree without .git (a release tarball) alike.
#
# Usage: scripts/make-deb.sh BUILD_DIR
#   reads BUILD_DIR/cordon, writes BUILD_DIR/cordon_VERSION_ARCH.deb and
#   prints its path (MAKE_DEB_KEEP=1 keeps the tree it was built from,
#   BUILD_DIR/deb).
#
# The version is the one `cordon --version` prints (src/cli/main.c: one
# source).  The package holds /usr/bin/cordon (stripped), the man pages
# (gzip'ed), the shell completions when the binary has `cordon completion
# SHELL`, the AppArmor profile (/etc/apparmor.d/cordon, a conffile, see
# packaging/deb/postinst), the docs and examples under
# /usr/share/doc/cordon.  Depends comes from dpkg-shlibdeps, plus what
# cordon opens with dlopen (src/lib/mask/hs-load.c: libvectorscan5's libraries;
# named in packaging/deb/control.in); Recommends: libpq5, opened with dlopen
# only when a postgresql:// URI names the store (src/lib/store/store-pg-conn.c),
# and libarchive13, opened only by `cordon run --image` (src/lib/image/image-arc.c).
set -eu

die() {
	echo "make-deb: $*" >&2
	exit 1
}
src=$(cd "$(dirname "$0")/.." && pwd)
b=$(cd "${1:?usage: make-deb.sh BUILD_DIR}" && pwd)
bin=$b/cordon
[ -x "$bin" ] || die "no $bin: build it first (make)"
umask 022

ver=$("$bin" --version | sed -n 's/^cordon \([0-9][0-9A-Za-z.+~]*\)$/\1/p')
[ -n "$ver" ] || die "cannot read the version from '$bin --version'"
arch=$(dpkg --print-architecture)
# The changelog's date: SOURCE_DATE_EPOCH, the last commit's, or now.
when=${SOURCE_DATE_EPOCH:-}
if [ -z "$when" ] && [ "$(git -C "$src" rev-parse --show-toplevel 2>/dev/null)" = "$src" ]; then
	when=$(git -C "$src" log -1 --format=%ct 2>/dev/null || true)
fi
[ -n "$when" ] || when=$(date +%s)

w=$b/deb
root=$w/root
doc=$root/usr/share/doc/cordon
[ -n "${MAKE_DEB_KEEP:-}" ] || rm -rf "$w"
mkdir -p "$root/DEBIAN" "$doc"

# The binary, stripped as Debian policy wants (the build keeps -g).
install -D -m 0755 "$bin" "$root/usr/bin/cordon"
strip --strip-unneeded --remove-section=.comment --remove-section=.note "$root/usr/bin/cordon"
ln -s cordon "$root/usr/bin/cordon-oci" # the OCI runtime (multi-call)

# Man pages by their section suffix, compressed.
for m in "$src"/docs/*.[1-8]; do
	[ -f "$m" ] || continue
	n=$(basename "$m")
	mkdir -p "$root/usr/share/man/man${n##*.}"
	gzip -9n <"$m" >"$root/usr/share/man/man${n##*.}/$n.gz"
done

# Shell completions, each where its shell looks, when this cordon has the
# command (generated from the binary's own option tables).
completion() { # SHELL DEST
	if "$bin" completion "$1" >"$w/completion" 2>/dev/null && [ -s "$w/completion" ]; then
		install -D -m 0644 "$w/completion" "$root$2"
	fi
	rm -f "$w/completion"
}
completion bash /usr/share/bash-completion/completions/cordon
completion zsh /usr/share/zsh/vendor-completions/_cordon
completion fish /usr/share/fish/vendor_completions.d/cordon.fish

install -D -m 0644 "$src/packaging/apparmor/cordon" "$root/etc/apparmor.d/cordon"
echo /etc/apparmor.d/cordon >"$root/DEBIAN/conffiles"
install -m 0755 "$src/packaging/deb/postinst" "$src/packaging/deb/postrm" "$root/DEBIAN/"

install -D -m 0644 "$src/packaging/deb/lintian-overrides" "$root/usr/share/lintian/overrides/cordon"

# Documentation: the README and docs/*.md compressed, copyright as is.
install -m 0644 "$src/packaging/deb/copyright" "$doc/copyright"
for f in "$src/README.md" "$src"/docs/*.md; do
	if [ -f "$f" ]; then gzip -9n <"$f" >"$doc/$(basename "$f").gz"; fi
done
printf 'cordon (%s) unstable; urgency=medium\n\n  * Built from the source tree by make deb.\n\n -- %s  %s\n' \
	"$ver" "cordon maintainers <maintainers@users.noreply.a-seed-54a06640.example>" \
	"$(date -u -R -d "@$when")" | gzip -9n >"$doc/changelog.gz"

# Examples: the tracked files (every file of a tree without .git, which is
# what a release tarball holds), without VCS files.
if [ "$(git -C "$src" rev-parse --show-toplevel 2>/dev/null)" = "$src" ]; then
	git -C "$src" ls-files examples
else
	(cd "$src" && find examples -type f)
fi | while IFS= read -r f; do
	case "$f" in */.gitignore | */.gitattributes) continue ;; esac
	mode=0644
	[ -x "$src/$f" ] && mode=0755
	install -D -m "$mode" "$src/$f" "$doc/$f"
done
[ -d "$doc/examples" ] || die "no examples found in $src/examples"

# Depends from the libraries the binary links (dpkg-shlibdeps wants a
# debian/control to read; a minimal one in a directory of its own).
mkdir -p "$w/shlibs/debian"
printf 'Source: cordon\n\nPackage: cordon\nArchitecture: any\n' >"$w/shlibs/debian/control"
(cd "$w/shlibs" && dpkg-shlibdeps -O "$root/usr/bin/cordon") >"$w/shlibdeps.out" 2>&1 ||
	die "dpkg-shlibdeps failed: $(cat "$w/shlibdeps.out")"
deps=$(sed -n 's/^shlibs:Depends=//p' "$w/shlibdeps.out")
[ -n "$deps" ] || die "dpkg-shlibdeps named no dependency: $(cat "$w/shlibdeps.out")"

(cd "$root" && find usr -type f | LC_ALL=C sort | xargs md5sum) >"$root/DEBIAN/md5sums"
size=$(du -sk --apparent-size "$root/usr" "$root/etc" | awk '{ s += $1 } END { print s }')
sed -e "s/@VERSION@/$ver/" -e "s/@ARCH@/$arch/" -e "s/@SIZE@/$size/" -e "s/@DEPENDS@/$deps/" \
	"$src/packaging/deb/control.in" >"$root/DEBIAN/control"

out=$b/cordon_${ver}_${arch}.deb
rm -f "$out"
# gzip: xz took 13 s of a loaded machine against gzip's 2 s, for 15% less.
dpkg-deb --root-owner-group -Zgzip --build "$root" "$out" >/dev/null || die "dpkg-deb failed"
[ -n "${MAKE_DEB_KEEP:-}" ] || rm -rf "$w"
echo "$out"
