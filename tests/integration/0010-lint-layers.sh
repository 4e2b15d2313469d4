#!/bin/sh
# make lint keeps the modules' dependencies pointing one way, down the
# table of src/lib/README.md: scripts/lint-layers.sh passes the tree as it
# is, and fails — naming the file and line — on a copy where a module
# includes a module above it, one of its own rank, a folder that is no
# module, or its own header through its folder; a file in a folder the
# table does not name is refused too.
. "${CORDON_SRC:-.}/tests/lib.sh"
LINT="$CORDON_SRC/scripts/lint-layers.sh"

ok "the tree's includes point down the module table" sh "$LINT" "$CORDON_SRC"

# A copy of the table and of the sources' include lines only.
tree() {
	rm -rf "$T/t"
	mkdir -p "$T/t/src/lib" "$T/t/src/cli"
	cp "$CORDON_SRC/src/lib/README.md" "$T/t/src/lib/README.md"
	for d in "$CORDON_SRC"/src/lib/*/; do
		m=$(basename "$d")
		mkdir -p "$T/t/src/lib/$m"
		printf '#include "util/err.h"\n' >"$T/t/src/lib/$m/x.c"
	done
	printf '/* util */\n#include "err.h"\n' >"$T/t/src/lib/util/x.c"
	printf '#include "gate/gate.h"\n#include "util/err.h"\n' >"$T/t/src/cli/main.c"
}

tree
ok "control: downward includes, and a module's own headers without a folder, pass" sh "$LINT" "$T/t"

plant() { # FILE LINE EXPECTED DESCRIPTION
	tree
	printf '%s\n' "$2" >>"$T/t/$1"
	sh "$LINT" "$T/t" >"$T/out" 2>&1
	is "$?" 1 "$4: refused"
	n=$(wc -l <"$T/t/$1" | tr -d ' ')
	ok "$4: the finding names $1:$n" grep -q "^$1:$n: .*$3" "$T/out"
}

plant src/lib/audit/x.c '#include "gate/gate.h"' "dependencies point down" "audit includes the gate (up)"
plant src/lib/util/x.c '#include "store/store.h"' "dependencies point down" "util includes the store (up)"
plant src/lib/sandbox/x.c '#include "egress/egress.h"' "rank 5.*rank 5" "sandbox includes egress (same rank)"
plant src/lib/policy/x.c '#include "nowhere/x.h"' "is not a module" "an include of a folder that is no module"
plant src/lib/mask/x.c '#include "mask/mask.h"' "with the folder" "a module's own header through its folder"
plant src/lib/gate/x.c '#  include "cli/cli.h"' "dependencies point down" "the gate includes a front end (up)"

tree
mkdir -p "$T/t/src/lib/extra"
printf '#include "util/err.h"\n' >"$T/t/src/lib/extra/y.c"
sh "$LINT" "$T/t" >"$T/out" 2>&1
is "$?" 1 "a folder the table does not name: refused"
ok "it is named" grep -q 'src/lib/extra/y.c: module "extra" is not in' "$T/out"

tree
sed -i '/^| [0-9]/d' "$T/t/src/lib/README.md"
sh "$LINT" "$T/t" >"$T/out" 2>&1
is "$?" 1 "a table without rows: refused"

done_testing
