#!/bin/sh
# make deb: a Debian package built with dpkg's tools from a tree without
# .git (a release tarball: git archive of this tree) and from a git
# checkout of it, left in build/.  Its control fields (the version cordon
# prints, Depends covering every library the binary links), its files (the
# binary stripped, man pages gzip'ed, the AppArmor profile as a conffile,
# docs, copyright, examples; completions exactly when the binary has
# `cordon completion`), the extracted binary running (--version, doctor
# --json), and the maintainer scripts' AppArmor handling in a DPKG_ROOT.
#
# The tree's build is copied in (its sources dated older), so make deb only
# packages: a rebuild would cost minutes, and the build uses no git anyway.
# Nothing here runs as nobody (no sandbox), so no staged copy is needed.
CORDON_TEST_NO_STAGE=1
. "${CORDON_SRC:-.}/tests/lib.sh"
src=$(cd "$CORDON_SRC" && pwd)
b=$(cd "$CORDON_BUILD" && pwd)
ver=$("$CORDON" --version | sed -n 's/^cordon //p')

# --- a tree without .git ---------------------------------------------------
tree=$T/tree
mkdir -p "$tree"
if git -C "$src" rev-parse --git-dir >/dev/null 2>&1; then
	# The tracked files as they are now (stash create leaves the tree,
	# the index and the stash list alone), else HEAD.
	rev=$(git -C "$src" stash create 2>/dev/null)
	git -C "$src" archive --format=tar "${rev:-HEAD}" | tar -x -C "$tree"
else
	(cd "$src" && tar --exclude=./build --exclude=./build-san --exclude=./build-fuzz -cf - .) |
		tar -x -C "$tree"
fi
ok "the tarball tree has no .git" test ! -e "$tree/.git"
find "$tree" -exec touch -h -d '2001-01-01' {} +
mkdir -p "$tree/build"
for f in cordon .deps-build libcordon.a gen-seccomp gen-scandb src gen; do
	cp -pR "$b/$f" "$tree/build/"
done
ok "the copied build is up to date there (make deb will only package)" \
	make -C "$tree" -q build/cordon

check_deb() { # TREE WHAT
	rm -f "$1"/build/cordon_*.deb
	make -s -C "$1" deb >"$T/make.out" 2>&1
	rc=$?
	is "$rc" 0 "$2: make deb exits 0"
	[ "$rc" -eq 0 ] || sed 's/^/#   /' "$T/make.out" | tail -5
	deb=$1/build/cordon_${ver}_$(dpkg --print-architecture).deb
	is "$(tail -1 "$T/make.out")" "$deb" "$2: it names build/cordon_${ver}_ARCH.deb"
	ok "$2: the .deb is there" test -s "$deb"
	ok "$2: the staging tree is gone" test ! -e "$1/build/deb"
}
check_deb "$tree" "tarball"
cp "$deb" "$T/cordon.deb"
deb=$T/cordon.deb

# --- control ---------------------------------------------------------------
field() { dpkg-deb -f "$deb" "$1"; }
is "$(field Package)" cordon "Package: cordon"
is "$(field Version)" "$ver" "Version: what cordon --version prints ($ver)"
is "$(sed -n '/^\.TH /s/.*"cordon \([^"]*\)".*/\1/p' "$src/docs/cordon.1")" "$ver" \
	"cordon(1) says the same version"
is "$(field Architecture)" "$(dpkg --print-architecture)" "Architecture: this machine's"
deps=$(field Depends)
printf '%s\n' "$deps" | grep -Eq '^libc6 \(>= 2\.[0-9]+\)'
is "$?" 0 "Depends names libc6 with a version (dpkg-shlibdeps): $deps"
dpkg-deb -x "$deb" "$T/x"
pkg_of() { # SONAME: the installed package holding it (/lib or /usr/lib)
	_p=$(ldconfig -p | awk -v l="$1" '$1 == l { print $NF; exit }')
	[ -n "$_p" ] || return 0
	{ dpkg -S "$_p" || dpkg -S "/usr$_p" || dpkg -S "${_p#/usr}"; } 2>/dev/null | head -1 | cut -d: -f1
}
missing=""
for lib in $(objdump -p "$T/x/usr/bin/cordon" | awk '$1 == "NEEDED" { print $2 }'); do
	pkg=$(pkg_of "$lib")
	case ", $deps," in *", ${pkg:-?} "* | *", ${pkg:-?},"*) ;; *) missing="$missing $lib(${pkg:-none})" ;; esac
done
is "$missing" "" "every library the binary needs comes from a package in Depends"
missing=""
for lib in $(sed -n 's/.*\.soname = "\([^"]*\)".*/\1/p' "$src/src/lib/mask/hs-load.c"); do
	pkg=$(pkg_of "$lib")
	case ", $deps," in *", ${pkg:-?},"*) ;; *) missing="$missing $lib(${pkg:-none})" ;; esac
done
is "$missing" "" "and every library it opens with dlopen (hs-load.c) too"
is "$(dpkg-deb -I "$deb" conffiles)" "/etc/apparmor.d/cordon" "the AppArmor profile is a conffile"

# --- files -----------------------------------------------------------------
dpkg-deb -c "$deb" >"$T/list"
for f in usr/bin/cordon usr/share/man/man1/cordon.1.gz usr/share/man/man5/cordon-policy.5.gz \
	etc/apparmor.d/cordon usr/share/doc/cordon/copyright usr/share/doc/cordon/README.md.gz \
	usr/share/doc/cordon/changelog.gz usr/share/doc/cordon/examples/policies/coding-agent.yaml \
	usr/share/doc/cordon/examples/project/Makefile; do
	grep -q " \./$f\$" "$T/list"
	is "$?" 0 "the package has /$f"
done
is "$(awk '$2 != "root/root"' "$T/list")" "" "every file is root's"
lacks "no VCS file is shipped" '\.git(ignore|attributes)?$' "$T/list" 'examples/project/Makefile'
is "$(awk '$1 ~ /^-..x/ && $NF ~ /^\.\/usr\/bin\// { print $NF }' "$T/list")" "./usr/bin/cordon" \
	"/usr/bin/cordon is executable, alone in /usr/bin"
is "$(readlink "$T/x/usr/bin/cordon-oci")" cordon "/usr/bin/cordon-oci is a link to cordon (the OCI runtime)"
is "$(readelf -S "$T/x/usr/bin/cordon" | grep -c '\.debug_')" 0 "the binary is stripped"
ok "the extracted man page is docs/cordon.1" sh -c 'gzip -dc "$1" | cmp -s - "$2"' sh \
	"$T/x/usr/share/man/man1/cordon.1.gz" "$src/docs/cordon.1"
ok "the extracted profile is packaging/apparmor/cordon" \
	cmp -s "$T/x/etc/apparmor.d/cordon" "$src/packaging/apparmor/cordon"
for sh in bash zsh fish; do
	case $sh in
	bash) f=usr/share/bash-completion/completions/cordon ;;
	zsh) f=usr/share/zsh/vendor-completions/_cordon ;;
	fish) f=usr/share/fish/vendor_completions.d/cordon.fish ;;
	esac
	if "$CORDON" completion "$sh" >"$T/c.$sh" 2>/dev/null && [ -s "$T/c.$sh" ]; then
		ok "$sh completion: cordon has it, the package has /$f, the same" \
			cmp -s "$T/c.$sh" "$T/x/$f"
	else
		ok "$sh completion: cordon lacks it, so does the package" test ! -e "$T/x/$f"
	fi
done

# --- the extracted binary runs -------------------------------------------
is "$("$T/x/usr/bin/cordon" --version)" "cordon $ver" "the extracted cordon --version"
env HOME="$T/home" CORDON_AUDIT="$S/a.db" CORDON_STATE="$S/s.db" CORDON_MASK_KEY="$S/k" \
	"$T/x/usr/bin/cordon" doctor --json >"$T/doctor.json" 2>&1
is "$?" 0 "the extracted cordon doctor --json exits 0"
is "$(jq -r '.ok' "$T/doctor.json" 2>&1)" true "... and says ok"

# --- a git checkout: tracked examples only -----------------------------------
if git -C "$tree" init -q && git -C "$tree" add examples &&
	git -C "$tree" -c user.name=t -c user.email=t@t commit -q -m t; then
	echo stray >"$tree/examples/project/out/result.txt"
	check_deb "$tree" "git checkout"
	dpkg-deb -c "$deb" >"$T/list2"
	lacks "git checkout: an untracked file in examples/ is not shipped" 'result\.txt' \
		"$T/list2" 'examples/project/Makefile'
	rm -f "$tree/examples/project/out/result.txt"
else
	ok "git init/commit of the tree" false
fi

# --- the maintainer scripts' AppArmor handling (DPKG_ROOT) ----------------
# AppArmor 3 (Debian 12) cannot parse the profile: postinst disables it
# with the usual link so the boot-time load does not fail; AppArmor 4
# parses it: the link goes (only one postinst made).  Fake parsers stand
# for both; nothing is loaded under DPKG_ROOT.
r=$T/root
mkdir -p "$r/etc/apparmor.d" "$T/old" "$T/new"
cp "$T/x/etc/apparmor.d/cordon" "$r/etc/apparmor.d/cordon"
dpkg-deb -e "$deb" "$T/ctl"
printf '#!/bin/sh\necho "$*" >>"%s/parser.log"\necho "syntax error" >&2\nexit 1\n' "$T" \
	>"$T/old/apparmor_parser"
printf '#!/bin/sh\necho "$*" >>"%s/parser.log"\nexit 0\n' "$T" >"$T/new/apparmor_parser"
chmod +x "$T/old/apparmor_parser" "$T/new/apparmor_parser"
link=$r/etc/apparmor.d/disable/cordon
pi() { env DPKG_ROOT="$r" PATH="$1:/usr/bin:/bin" sh "$T/ctl/postinst" configure; }
ok "postinst, AppArmor 3: exit 0" pi "$T/old"
is "$(readlink "$link")" /etc/apparmor.d/cordon "... the profile is disabled by the usual link"
ok "... marked as postinst's" test -f "$r/var/lib/cordon/apparmor-disabled"
ok "postinst again: exit 0" pi "$T/old"
: >"$T/parser.log"
ok "postinst, AppArmor 4: exit 0" pi "$T/new"
ok "... the link is gone" test ! -e "$link" -a ! -L "$link"
is "$(cat "$T/parser.log")" "-QT $r/etc/apparmor.d/cordon" "... parsed, not loaded (DPKG_ROOT)"
ok "... and the mark" test ! -e "$r/var/lib/cordon"
mkdir -p "$r/etc/apparmor.d/disable"
ln -s /etc/apparmor.d/cordon "$link"
ok "an administrator's own link: postinst, AppArmor 4" pi "$T/new"
is "$(readlink "$link")" /etc/apparmor.d/cordon "... keeps it"
rm -f "$link"
ok "(no apparmor_parser in /usr/bin:/bin)" env PATH=/usr/bin:/bin sh -c '! command -v apparmor_parser'
ok "no apparmor_parser on PATH: postinst exits 0" pi "$T/none"
is "$(readlink "$link")" /etc/apparmor.d/cordon "... and disables the profile"
ok "postrm purge: exit 0" env DPKG_ROOT="$r" sh "$T/ctl/postrm" purge
ok "... removes the link and the mark" test ! -e "$link" -a ! -L "$link" -a ! -e "$r/var/lib/cordon"
ok "... and leaves the rest" test -f "$r/etc/apparmor.d/cordon"

# --- dpkg itself: install into an empty root, purge ------------------------
# Its scripts run outside it (DPKG_ROOT), AppArmor 3 standing in; the root
# has no libc6, so Depends is forced.
d=$T/dpkg
mkdir -p "$d/var/lib/dpkg/info" "$d/var/lib/dpkg/updates"
: >"$d/var/lib/dpkg/status"
ok "dpkg -i into an empty root: exit 0" env PATH="$T/old:$PATH" \
	dpkg --root="$d" --force-script-chrootless --force-depends -i "$deb"
is "$(dpkg-query --admindir="$d/var/lib/dpkg" -W -f='${Status}' cordon 2>&1)" \
	"install ok installed" "... cordon is installed there"
is "$("$d/usr/bin/cordon" --version)" "cordon $ver" "... its /usr/bin/cordon runs"
is "$(readlink "$d/etc/apparmor.d/disable/cordon")" /etc/apparmor.d/cordon \
	"... the profile disabled (AppArmor 3)"
ok "dpkg --purge: exit 0" env PATH="$T/old:$PATH" \
	dpkg --root="$d" --force-script-chrootless --purge cordon
is "$(cd "$d" && find . -mindepth 1 ! -path './var/lib/dpkg*' ! -path ./var/lib ! -path ./var)" "" \
	"... and nothing of it is left (the profile, the link, the directories it made)"
done_testing
