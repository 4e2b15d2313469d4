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
hits=$(grep -nE '(^|[^a-z_])(secure_)?getenv[[:space:]]*\(' src/lib/*.c src/lib/*.h 2>/dev/null)
if [ -n "$hits" ]; then
	echo "$hits"
	echo "lint: getenv outside src/cli" >&2
	rc=1
fi
# SQL and SQLite belong to the store's backend files (store.h).
if ! sh scripts/lint-store.sh .; then
	rc=1
fi

if ! cppcheck --quiet --error-exitcode=1 --enable=warning,portability \
	--inline-suppr --suppress=missingIncludeSystem -D_GNU_SOURCE -Isrc/lib src 2>&1; then
	echo "lint: cppcheck findings above" >&2
	rc=1
fi
[ "$rc" -eq 0 ] && echo "lint: clean"
exit "$rc"
