#!/bin/sh
# The README's two commands (./build.sh demo, ./build.sh check) on a
# machine missing packages: as root they refresh the package lists once,
# install what is missing and run make; as anyone else they print the one
# exact install line (no sudo: a fresh Debian has none) and stop before
# make.  dpkg-query, apt-get and make are stubs here: nothing is installed.
. "${CORDON_SRC:-.}/tests/lib.sh"

mkdir -p "$T/src/scripts" "$T/bin"
cp "$CORDON_SRC/build.sh" "$T/src/"
cp "$CORDON_SRC/scripts/deps.sh" "$T/src/scripts/"
# Nothing is installed; apt-get and make say what they were asked.
cat >"$T/bin/dpkg-query" <<'EOF'
#!/bin/sh
exit 1
EOF
cat >"$T/bin/apt-get" <<'EOF'
#!/bin/sh
echo "apt-get $*" >>"$LOGDIR/calls"
EOF
cat >"$T/bin/make" <<'EOF'
#!/bin/sh
echo "make $*" >>"$LOGDIR/calls"
EOF
chmod -R a+rX "$T/src" "$T/bin"
chmod a+x "$T/bin/"*
mkdir -p "$T/log-root" "$T/log-nobody"
chmod 0777 "$T/log-nobody"
P="$T/bin:/usr/bin:/bin:/usr/sbin:/sbin"

# As nobody: one line to run as root, exit 1, make never started.
as_nobody env PATH="$P" LOGDIR="$T/log-nobody" sh "$T/src/build.sh" demo >"$T/out" 2>"$T/err"
is "$?" 1 "nobody: ./build.sh demo with packages missing stops (exit 1)"
is "$(grep -c 'apt-get install' "$T/err")" 1 "nobody: ... printing one install line"
ok "nobody: ... the exact line, to run as root, demo packages included" grep -qx \
	'cordon: as root, run: apt-get update && apt-get install -y --no-install-recommends gcc make .* python3 util-linux' "$T/err"
nok "nobody: ... never assuming sudo" grep -q sudo "$T/err"
nok "nobody: ... and neither apt-get nor make ran" test -e "$T/log-nobody/calls"
as_nobody env PATH="$P" LOGDIR="$T/log-nobody" sh "$T/src/build.sh" check >/dev/null 2>"$T/err"
ok "nobody: ./build.sh check names the test tools (jq, node)" grep -q 'install .* jq nodejs ' "$T/err"

# As root: apt-get update once, one install of everything missing, then
# make with the arguments passed through.
if [ "$(id -u)" -eq 0 ]; then
	env PATH="$P" LOGDIR="$T/log-root" sh "$T/src/build.sh" check WERROR=1 >"$T/out" 2>"$T/err"
	is "$?" 0 "root: ./build.sh check installs and runs make"
	is "$(grep -c '^apt-get update' "$T/log-root/calls")" 1 "root: ... apt-get update once"
	ok "root: ... one apt-get install with the test tools" \
		grep -q '^apt-get install -y -qq --no-install-recommends .* jq nodejs ' "$T/log-root/calls"
	is "$(tail -1 "$T/log-root/calls")" "make check WERROR=1" "root: ... then make check WERROR=1"
else
	skip "the root half needs root"
fi
done_testing
