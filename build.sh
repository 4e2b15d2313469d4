#!/bin/sh
# build.sh — the README's two commands, needing nothing but /bin/sh:
#
#   ./build.sh demo     install what is missing, build, run the demo
#   ./build.sh check    install what is missing, build, pass every test
#
# A fresh Debian has no make or compiler.  As root the missing Debian
# packages are installed with apt-get (scripts/deps.sh); as anyone else the
# exact `apt-get install` line is printed and we stop.  Then make runs the
# target; further arguments go to make as they are (WERROR=1, SAN=1, ...).
# `./build.sh` alone builds ./build/cordon; any other make target works too.
set -eu
cd "$(dirname "$0")"

target=${1:-all}
[ $# -gt 0 ] && shift

case "$target" in
demo) groups="build demo" ;;
check) groups="build test" ;;
lint) groups="build lint" ;;
fuzz) groups="build fuzz" ;;
bench) groups="build test bench" ;;
-h | --help)
	sed -n '2,11s/^# \{0,1\}//p' "$0"
	exit 0
	;;
*) groups="build" ;;
esac

# shellcheck disable=SC2086
sh scripts/deps.sh $groups
exec make "$target" "$@"
