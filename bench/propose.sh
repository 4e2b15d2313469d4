#!/bin/sh
# bench/propose.sh — proposal mode's costs on a 50,000-file tree with a
# change set of 1,000 files (600 modified, 300 added, 100 deleted):
#   - the proposing run (overlay mount, the command, then the change set
#     computed: upper-layer walk, SHA-256 of every base and new file, a
#     diff per text file, the new content copied into the store, one
#     state-database transaction, one audit record), with the
#     computation's own time as cordon reports it;
#   - the same command in a plain run writing to a copy (no overlay, no
#     proposal), for the overhead;
#   - apply (re-check of every base, temp+fsync+RENAME_EXCHANGE per file);
#   - apply --branch (one git fast-import).
#
#   sh bench/propose.sh [CORDON] [DIR]
# DIR (tree and state) defaults to a fresh temp dir under /var/tmp (disk).
# ROUNDS=3 repetitions; the median is printed.  Needs python3 and git.
set -eu
CORDON=${1:-build/cordon}
case $CORDON in /*) ;; *) CORDON=$(pwd)/$CORDON ;; esac
DIR=${2:-$(mktemp -d /var/tmp/cordon-bench-propose.XXXXXX)}
ROUNDS=${ROUNDS:-3}
FILES=${FILES:-50000}
chmod 755 "$DIR"
export CORDON_STATE="$DIR/state/state.db" CORDON_AUDIT="$DIR/state/audit.db"
unset XDG_STATE_HOME

now() { date +%s%N; }
ms() { echo $((($2 - $1) / 1000000)); }
median() { tr ' ' '\n' | grep . | sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }

# The tree: FILES small text files in 500 directories, in a git repository.
mktree() {
	cd "$DIR"
	rm -rf "$1"
	python3 - "$1" "$FILES" <<'EOF'
import os, sys
root, n = sys.argv[1], int(sys.argv[2])
for i in range(n):
    d = os.path.join(root, "d%03d" % (i % 500))
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "f%05d.txt" % i), "w") as f:
        f.write("line one of file %d\nline two\nline three\n" % i)
EOF
	(cd "$1" && git init -q . && git add -A && git -c user.name=b -c user.email=b@b commit -qm tree)
}

# The command: 600 modified, 300 added, 100 deleted (python: one process).
CHANGE='import os
for i in range(600):
    with open("d%03d/f%05d.txt" % (i % 500, i), "a") as f: f.write("changed\n")
for i in range(300):
    with open("d%03d/new%05d.txt" % (i % 500, i), "w") as f: f.write("new file %d\n" % i)
for i in range(100):
    j = 1000 + i
    os.unlink("d%03d/f%05d.txt" % (j % 500, j))'

echo "# proposal benchmark in $DIR ($(df -T "$DIR" | awk 'NR==2 { print $2 }')), $FILES files, 1000 changed, $ROUNDS rounds"
runs="" plains="" computes="" applies="" branches=""
r=0
while [ "$r" -lt "$ROUNDS" ]; do
	r=$((r + 1))
	mktree "$DIR/tree$r"
	cd "$DIR/tree$r"
	t0=$(now)
	"$CORDON" run --propose --agent bench --timeout 10m -- python3 -c "$CHANGE" 2>"$DIR/err"
	t1=$(now)
	runs="$runs $(ms "$t0" "$t1")"
	computes="$computes $(sed -n 's/.*computed in \([0-9]*\) ms.*/\1/p' "$DIR/err")"
	id=$("$CORDON" proposals list | head -1 | cut -f1)
	n=$("$CORDON" proposals show "$id" --json | python3 -c 'import json,sys; print(len(json.load(sys.stdin)["files"]))')
	[ "$n" = 1000 ] || { echo "expected 1000 files in the proposal, got $n" >&2; exit 1; }
	t0=$(now)
	"$CORDON" proposals apply "$id" --as bench-operator --branch "bench/$id" >/dev/null
	t1=$(now)
	branches="$branches $(ms "$t0" "$t1")"
	# The branch commit ended the proposal; a second run applies.
	"$CORDON" run --propose --agent bench --timeout 10m -- python3 -c "$CHANGE" 2>/dev/null
	id=$("$CORDON" proposals list | head -1 | cut -f1)
	t0=$(now)
	"$CORDON" proposals apply "$id" --as bench-operator >/dev/null
	t1=$(now)
	applies="$applies $(ms "$t0" "$t1")"
	# Baseline: the same command writing into a copy through --rw.
	mktree "$DIR/plain$r"
	cd "$DIR/plain$r"
	t0=$(now)
	"$CORDON" run --profile workspace-write --timeout 10m -- python3 -c "$CHANGE"
	t1=$(now)
	plains="$plains $(ms "$t0" "$t1")"
	cd "$DIR"
done
printf '| step | median ms | rounds (ms) |\n|---|---:|---|\n'
printf '| plain run, workspace-write (the command alone) | %s | %s |\n' "$(echo "$plains" | median)" "$plains"
printf '| run --propose, total | %s | %s |\n' "$(echo "$runs" | median)" "$runs"
printf '| of which: change set computed and stored | %s | %s |\n' "$(echo "$computes" | median)" "$computes"
printf '| proposals apply (1,000 files) | %s | %s |\n' "$(echo "$applies" | median)" "$applies"
printf '| proposals apply --branch (1,000 files) | %s | %s |\n' "$(echo "$branches" | median)" "$branches"
[ -n "${2:-}" ] || rm -rf "$DIR" 2>/dev/null || true
