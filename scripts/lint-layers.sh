#!/bin/sh
# lint-layers.sh [ROOT] — includes point down the module table of
# src/lib/README.md.  Run by scripts/lint.sh;
# tests/integration/0010-lint-layers.sh runs it on trees with a finding
# planted.
#
# A file in module M (src/lib/M/, or src/cli/ as module `cli`) may include
# "N/x.h" only when N's rank is below M's.  A bare "x.h" must be M's own:
# the compiler finds it beside the including file, and -Isrc/lib alone
# would not, so a bare include of another module's header fails the build.
# Prints each offending include; exits 1 when there is one.
set -eu
cd "${1:-$(dirname "$0")/..}" || exit 2
awk '
FNR == 1 { file++ }
file == 1 {	# the table: | rank | `module` | job |
	if (match($0, /^\| [0-9]+ \| `[a-z]+`/)) {
		split(substr($0, RSTART, RLENGTH), f, /[|` ]+/)
		rank[f[3]] = f[2]; n++
	}
	next
}
FNR == 1 {
	if (n == 0) { print "lint-layers: no module table in src/lib/README.md"; bad = 1; exit }
	m = FILENAME ~ /^src\/cli\// ? "cli" : FILENAME
	if (m != "cli") { sub(/^src\/lib\//, "", m); sub(/\/.*/, "", m) }
	if (!(m in rank)) { print FILENAME ": module \"" m "\" is not in src/lib/README.md"; bad = 1 }
}
/^#[ \t]*include[ \t]*"[a-z0-9_-]+\// && (m in rank) {
	h = $0; sub(/^[^"]*"/, "", h); sub(/".*/, "", h)
	o = h; sub(/\/.*/, "", o)
	if (!(o in rank))
		msg = "includes " h ": \"" o "\" is not a module of src/lib/README.md"
	else if (o == m)
		msg = "includes its own module'"'"'s header with the folder: write \"" substr(h, length(o) + 2) "\""
	else if (rank[o] + 0 >= rank[m] + 0)
		msg = m " (rank " rank[m] ") includes " h " (rank " rank[o] "): dependencies point down"
	else
		next
	print FILENAME ":" FNR ": " msg; bad = 1
}
END { exit bad }
' src/lib/README.md src/cli/*.[ch] src/lib/*/*.[ch]
