#!/bin/sh
# mutate.sh — break one wall at a time and check that the tests notice
# (`make mutate`, issue 16).
#
# Every mutation of tests/mutate/mutations.txt is applied, one at a time,
# to a copy of the tree (a temp directory under /var/tmp; the copy keeps
# its build directory, so each rebuild is incremental), then cordon and the
# test helpers are rebuilt and the test files the mutation names are run in
# order, stopping at the first failure.  The mutated files are put back
# before the next one.  The tests named by any mutation are first run once
# on the unmutated copy: a file that fails there proves nothing and is
# reported.  Prints a table  mutation | caught by | result  and the total
# runtime; exits 1 when a mutation survived, an anchor did not match
# exactly once, a mutant did not build, or the baseline failed.
#
# A mutation marked equivalent in the list ('! WHY': no test can tell it
# from the unmutated code, WHY says which other wall makes it so) is run
# all the same: its survival is expected and does not fail the run, but
# its being caught does (the claim is wrong: drop the mark).
#
#   MUTATE_FULL=1        run the whole suite (units, then every integration
#                        file) for each mutation instead of the named files
#   MUTATE_ONLY=REGEX    only the mutations whose name matches (grep -E)
#   MUTATE_KEEP=1        keep the copy (its path is printed)
#   MUTATE_LIST=FILE     another mutation list
set -u

SRC=$(cd "$(dirname "$0")/.." && pwd)
LIST=${MUTATE_LIST:-$SRC/tests/mutate/mutations.txt}
FULL=${MUTATE_FULL:-0}
ONLY=${MUTATE_ONLY:-}
start=$(date +%s)

die() {
	echo "mutate: $*" >&2
	exit 2
}
[ -r "$LIST" ] || die "no mutation list '$LIST'"
command -v python3 >/dev/null || die "python3 is needed (make check installs it)"
command -v prove >/dev/null || die "prove is needed (make check installs it)"

# The list's parser and the patcher: python3, because an anchor is a
# literal string that must occur exactly once, which sed cannot check.
tool() {
	python3 - "$@" <<'PY'
import os, re, shutil, sys

def unesc(s):
    return re.sub(r"\\(.)", lambda m: {"n": "\n", "t": "\t"}.get(m.group(1), m.group(1)), s)

def table(src, name):
    text = open(os.path.join(src, "src/lib/sandbox/seccomp.c")).read()
    m = re.search(r"^static const struct sc " + name + r"\[\] = \{\n(.*?)^\};", text, re.M | re.S)
    if not m:
        sys.exit("mutate: table %s not found in src/lib/sandbox/seccomp.c" % name)
    ents = re.findall(r'\{ "([a-z0-9_]+)", (-?\d+) \},', m.group(1))
    if not ents:
        sys.exit("mutate: table %s is empty" % name)
    return ents

def kernel_nr(name):
    for l in open("/usr/include/x86_64-linux-gnu/asm/unistd_64.h"):
        f = l.split()
        if len(f) == 3 and f[0] == "#define" and f[1] == "__NR_" + name:
            return f[2]
    sys.exit("mutate: no kernel number for syscall %s" % name)

def parse(path, src):
    muts, cur = [], None
    for n, line in enumerate(open(path), 1):
        line = line.rstrip("\n")
        where = "%s:%d" % (path, n)
        if not line.strip() or line.startswith("#"):
            continue
        if line.startswith("= "):
            name, _, tests = line[2:].partition(":")
            cur = {"name": name.strip(), "tests": tests.split(), "edits": [], "file": None, "at": where,
                   "equivalent": ""}
            if not cur["tests"]:
                sys.exit("mutate: %s: no test named" % where)
            muts.append(cur)
        elif line.startswith("%seccomp-tables"):
            tests = line.split()[1:]
            # Each entry of the deny tables moved to the allow list.
            for tab in ("eperm_tab", "enosys_tab", "silent_tab"):
                for name, nr in table(src, tab):
                    num = nr if nr != "-1" else kernel_nr(name)
                    ent = '{ "%s", %s },' % (name, nr)
                    muts.append({"name": "seccomp-allow-" + name, "tests": tests, "at": where, "equivalent": "",
                                 "edits": [("src/lib/sandbox/seccomp.c", ent, ""),
                                           ("src/lib/sandbox/seccomp.c", '\t{ "getrandom", -1 },\n};',
                                            '\t{ "getrandom", -1 },\n\t{ "%s", %s },\n};' % (name, num))]})
            cur = None
        elif cur is None:
            sys.exit("mutate: %s: outside a mutation" % where)
        elif line.startswith("! "):
            cur["equivalent"] = line[2:].strip()
        elif line.startswith("@ "):
            cur["file"] = line[2:].strip()
        elif line.startswith("- ") or line == "-":
            if not cur["file"]:
                sys.exit("mutate: %s: no file (@ FILE) before the edit" % where)
            cur["edits"].append([cur["file"], unesc(line[2:]), ""])
        elif line.startswith("+ ") or line == "+":
            if not cur["edits"] or cur["edits"][-1][2] != "":
                sys.exit("mutate: %s: '+' without its '-'" % where)
            cur["edits"][-1][2] = unesc(line[2:])
        else:
            sys.exit("mutate: %s: cannot read this line" % where)
    names = [m["name"] for m in muts]
    for m in muts:
        if not m["edits"]:
            sys.exit("mutate: %s: mutation %s changes nothing" % (m["at"], m["name"]))
        if names.count(m["name"]) > 1:
            sys.exit("mutate: %s: mutation %s is listed twice" % (m["at"], m["name"]))
    return muts

cmd, path, src = sys.argv[1:4]
muts = parse(path, src)
if cmd == "check":
    bad = 0
    for m in muts:
        for f, old, new in m["edits"]:
            k = open(os.path.join(src, f)).read().count(old)
            if k != 1:
                print("mutate: %s: %s: anchor found %d times in %s: %r" % (m["at"], m["name"], k, f, old))
                bad = 1
    sys.exit(bad)
elif cmd == "list":
    for m in muts:
        print("%s\t%s\t%s" % (m["name"], " ".join(m["tests"]), "yes" if m["equivalent"] else ""))
elif cmd == "apply":
    name, root, orig = sys.argv[4:7]
    m = [x for x in muts if x["name"] == name][0]
    for f, old, new in m["edits"]:
        p = os.path.join(root, f)
        text = open(p).read()
        k = text.count(old)
        if k != 1:
            print("anchor found %d times in %s: %r" % (k, f, old))
            sys.exit(3)
        keep = os.path.join(orig, f)
        if not os.path.exists(keep):
            os.makedirs(os.path.dirname(keep), exist_ok=True)
            shutil.copyfile(p, keep)
        open(p, "w").write(text.replace(old, new))
PY
}

# Every anchor must match the tree exactly once before anything runs.
tool check "$LIST" "$SRC" || die "the mutation list does not match the tree (fix its anchors)"
WORK=$(mktemp -d /var/tmp/cordon-mutate.XXXXXX) || die "mktemp"
chmod 0755 "$WORK" # the tests run the copy's helpers as nobody too
ORIG=$WORK/.orig
LOG=$WORK/.log
mkdir -p "$ORIG" "$LOG"
[ "${MUTATE_KEEP:-0}" = 1 ] || trap 'rm -rf "$WORK"' EXIT
trap 'exit 130' INT TERM
echo "mutate: copy in $WORK" >&2
tar -C "$SRC" --exclude=./.git --exclude=./build-san --exclude=./build-fuzz -cf - . |
	tar -C "$WORK" -xf - || die "copy the tree"
# No mutation touches the masking scanner: its generated pattern database
# (a 1 MB C file) need not be rebuilt each time libcordon.a changes.
sed -i 's|^\($(B)/gen-scandb: $(B)/src/gen/gen-scandb.o\) $(LIB)$|\1 \| $(LIB)|' "$WORK/Makefile"

# Test tokens: NNNN is tests/integration/NNNN-*.sh, NNNN@PART the same
# file with CORDON_TEST_PART=PART (only that part of it, where the file
# offers parts), test-NAME a unit test.
resolve() {
	case $1 in
	test-*) echo "build/tests/unit/$1" ;;
	*)
		part=${1#*@}
		[ "$part" = "$1" ] && part=""
		set -- "$WORK"/tests/integration/"${1%@*}"-*.sh
		[ $# = 1 ] && [ -f "$1" ] || return 1
		echo "tests/integration/${1##*/}${part:+@$part}"
		;;
	esac
}

tool list "$LIST" "$SRC" >"$LOG/all"
if [ -n "$ONLY" ]; then
	awk -F '\t' -v re="$ONLY" '$1 ~ re' "$LOG/all" >"$LOG/list"
	[ -s "$LOG/list" ] || die "no mutation matches '$ONLY'"
else
	cp "$LOG/all" "$LOG/list"
fi
if [ "$FULL" = 1 ]; then
	tests=$(cd "$WORK" && for f in tests/unit/test-*.c; do basename "$f" .c; done
		ls tests/integration/*.sh | sed 's|.*/\([0-9]*\)-.*|\1|')
else
	tests=$(cut -f2 "$LOG/list" | tr ' ' '\n' | awk 'NF && !seen[$0]++')
fi
files=""
for t in $tests; do
	f=$(resolve "$t") || die "test '$t' names no single file"
	files="$files $f"
done
units=$(for f in $files; do case $f in build/tests/unit/*) echo "$f" ;; esac; done)
# shellcheck disable=SC2086
helpers=$(cd "$WORK" && ls tests/helpers/*.c | sed 's|^\(.*\)\.c$|build/\1|')

build() {
	# shellcheck disable=SC2086
	nice make -C "$WORK" -j2 build/cordon $helpers $units </dev/null >"$LOG/build" 2>&1
}

# One test file; 0 when it passes.
run_test() {
	case $1 in
	build/tests/unit/*) (cd "$WORK" && timeout 600 "./$1") </dev/null >"$LOG/test" 2>&1 ;;
	*)
		part=${1#*@}
		[ "$part" = "$1" ] && part=""
		# A loaded machine: the harness's own 120 s watchdog is too short.
		(cd "$WORK" && CORDON="$WORK/build/cordon" CORDON_BUILD="$WORK/build" CORDON_SRC="$WORK" \
			CORDON_TEST_PART="$part" CORDON_TEST_TIMEOUT="${CORDON_TEST_TIMEOUT:-600}" \
			timeout 900 prove -v -e '' "${1%@*}") </dev/null >"$LOG/test" 2>&1
		;;
	esac
}

echo "mutate: building the copy" >&2
build || {
	tail -20 "$LOG/build" >&2
	die "the unmutated copy does not build"
}
sh "$WORK/scripts/deps.sh" test >/dev/null 2>&1

status=0
broken=""
echo "mutate: baseline: every named test on the unmutated copy" >&2
for f in $files; do
	if ! run_test "$f"; then
		echo "mutate: baseline FAILS: $f (it cannot count as catching anything)" >&2
		sed 's/^/    /' "$LOG/test" | grep -v '^    ok ' | tail -15 >&2
		broken="$broken $f "
		status=1
	fi
done

n=0
survived=0
errors=0
equivalent=0
: >"$LOG/table"
while IFS='	' read -r name mtests equiv; do
	n=$((n + 1))
	t0=$(date +%s)
	result=""
	by="-"
	if ! tool apply "$LIST" "$SRC" "$name" "$WORK" "$ORIG" >"$LOG/apply" 2>&1; then
		result="ANCHOR: $(tail -1 "$LOG/apply")"
		errors=$((errors + 1))
	elif ! build; then
		result="BUILD FAILED: $(grep -m1 'error' "$LOG/build")"
		errors=$((errors + 1))
	else
		if [ "$FULL" = 1 ]; then
			run=$files
		else
			run=$(for t in $mtests; do resolve "$t"; done)
		fi
		for f in $run; do
			case $broken in *" $f "*) continue ;; esac
			if ! run_test "$f"; then
				by=${f##*/}
				result="caught"
				# The first failing assertion, for the reader.
				why=$(grep -m1 '^not ok' "$LOG/test" | cut -c1-90)
				[ -n "$why" ] && by="$by ($why)"
				break
			fi
		done
		if [ -z "$result" ] && [ -n "$equiv" ]; then
			result="survived (equivalent, as listed)"
			equivalent=$((equivalent + 1))
		elif [ -z "$result" ]; then
			result="SURVIVED"
			survived=$((survived + 1))
		elif [ -n "$equiv" ]; then
			result="CAUGHT, but listed as equivalent: drop its '!' line"
			errors=$((errors + 1))
		fi
	fi
	# Put the files back (a fresh mtime: make rebuilds them next time).
	(cd "$ORIG" && find . -type f) | while read -r f; do
		cp "$ORIG/$f" "$WORK/$f" && rm -f "$ORIG/$f"
	done
	printf '%s | %s | %s\n' "$name" "$by" "$result" >>"$LOG/table"
	printf 'mutate: [%d] %s: %s %s (%ss)\n' "$n" "$name" "$result" \
		"$([ "$by" = - ] || echo "by $by")" "$(($(date +%s) - t0))" >&2
done <"$LOG/list"

echo
printf '%-36s | %-60s | %s\n' "mutation" "caught by (first failing test)" "result"
printf '%-36s-+-%-60s-+-%s\n' "------------------------------------" \
	"------------------------------------------------------------" "--------"
while IFS='|' read -r name by result; do
	printf '%-36s | %-60s | %s\n' "${name% }" "$(echo "$by" | sed 's/^ //; s/ $//')" "${result# }"
done <"$LOG/table"
elapsed=$(($(date +%s) - start))
echo
echo "$n mutations: $((n - survived - errors - equivalent)) caught, $survived survived, $equivalent equivalent (expected to survive), $errors could not be applied or built or were wrongly listed as equivalent${broken:+; baseline failures:$broken}"
echo "runtime: $((elapsed / 60)) min $((elapsed % 60)) s ($([ "$FULL" = 1 ] && echo 'whole suite' || echo 'named tests') per mutation)"
[ "$survived" -eq 0 ] && [ "$errors" -eq 0 ] || status=1
exit $status
