#!/bin/sh
# make lint: formatting, banned calls, SQL outside the store, cppcheck.  Exits
# non-zero on any finding.
set -u
cd "$(dirname "$0")/.." || exit 1
rc=0
files=$(git ls-files 'src/*.c' 'src/*.h' 'tests/*.c' 'tests/*.h' 2>/dev/null)
[ -n "$files" ] || files=$(find src tests -name '*.[ch]')

# shellcheck disable=SC2086
if ! clang-format --dry-run --Werror $files 2>/tmp/cordon-lint.$$; then
	head -40 /tmp/cordon-lint.$$
	echo "lint: clang-format: run 'clang-format -i' on the files above" >&2
	rc=1
fi
rm -f /tmp/cordon-lint.$$

banned='strcpy|strcat|sprintf|vsprintf|gets|strtok|strncpy|strncat|atoi|atol|sscanf|alloca|system|popen|mktemp|rand'
# shellcheck disable=SC2086
hits=$(grep -nE "(^|[^a-zA-Z0-9_.>])($banned)[[:space:]]*\(" $(echo "$files" | grep '^src/') | grep -vE '^[^:]+:[0-9]+:[[:space:]]*(/\*|\*)')
if [ -n "$hits" ]; then
	echo "$hits"
	echo "lint: banned calls above (see STYLE.md)" >&2
	rc=1
fi
# getenv belongs to the CLI only.
hits=$(grep -nE '(^|[^a-z_])(secure_)?getenv[[:space:]]*\(' src/lib/*/*.c src/lib/*/*.h 2>/dev/null)
if [ -n "$hits" ]; then
	echo "$hits"
	echo "lint: getenv outside src/cli" >&2
	rc=1
fi
# SQL and SQLite belong to the store's backend files (store.h).
if ! sh scripts/lint-store.sh .; then
	rc=1
fi
# Includes point down the module table of src/lib/README.md.
if ! sh scripts/lint-layers.sh .; then
	echo "lint: an include points up the module table (src/lib/README.md)" >&2
	rc=1
fi

# Size: no src/ .c file over 1000 lines, no function over 120 (STYLE.md),
# except those named in scripts/size-allow.txt ("path[:function] reason").
# A function starts at its first column-0 line before a column-0 '{' and
# ends at the next column-0 '}'; its length is counted from its name line.
# shellcheck disable=SC2016
hits=$(git ls-files 'src/*.c' 2>/dev/null | xargs awk -v allow=scripts/size-allow.txt '
BEGIN {
	while ((getline l < allow) > 0)
		if (l !~ /^[[:space:]]*(#|$)/) {
			split(l, f, /[[:space:]]+/)
			ok[f[1]] = 1
		}
}
FNR == 1 {
	if (prev != "" && plines > 1000 && !(prev in ok))
		printf "%s: %d lines (at most 1000)\n", prev, plines
	prev = FILENAME
	hdr = 0; infn = 0; pend = 0
}
{ plines = FNR }
/^[A-Za-z_]/ && !infn {
	if (hdr == 0 || pend) { hdr = FNR; htext = "" }
	htext = htext $0
	pend = ($0 ~ /[;}]$/ || $0 ~ /^#/)
	next
}
/^\{/ && !infn {
	s = htext; sub(/\(.*/, "", s); n = split(s, a, /[^A-Za-z0-9_]+/)
	name = a[n]; if (name == "" && n > 1) name = a[n - 1]
	if (!hdr || name == "") { name = "?"; hdr = FNR }
	infn = 1; start = hdr
	next
}
/^\}/ && infn {
	if (FNR - start > 120 && !((FILENAME ":" name) in ok))
		printf "%s:%d: %s() is %d lines (at most 120)\n", FILENAME, start, name, FNR - start
	infn = 0; hdr = 0
	next
}
/^$/ && !infn { hdr = 0 }
END {
	if (prev != "" && plines > 1000 && !(prev in ok))
		printf "%s: %d lines (at most 1000)\n", prev, plines
}')
if [ -n "$hits" ]; then
	echo "$hits"
	echo "lint: too long above: split it, or name it in scripts/size-allow.txt with a reason" >&2
	rc=1
fi

if ! cppcheck --quiet --error-exitcode=1 --enable=warning,portability \
	--inline-suppr --suppress=missingIncludeSystem -D_GNU_SOURCE -Isrc/lib src 2>&1; then
	echo "lint: cppcheck findings above" >&2
	rc=1
fi
[ "$rc" -eq 0 ] && echo "lint: clean"
exit "$rc"
