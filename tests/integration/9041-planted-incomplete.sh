#!/bin/sh
# A check after the run that cannot read a tree whole keeps everything it
# found and says so: a directory nested deeper than the walk goes, or a
# path longer than PATH_MAX, is itself listed in planted_paths ("contents
# not checked"), the shallow a/.envrc planted beside it is listed too, the
# record's planted_check reads "incomplete: WHY", one line on stderr says
# so, and cordon exits 125 (the command's own 0 is the record's
# exit_code).  Before, such a tree made the whole check fail with a
# warning: planted_paths was [] and nothing told the record.  Controls:
# the same plant without the deep directory is complete and exits 0.  In
# a --rw tree and the workspace-write working tree, as root and as nobody.
: "${CORDON_TEST_TIMEOUT:=300}"
export CORDON_TEST_TIMEOUT
. "${CORDON_SRC:-.}/tests/lib.sh"

# record: the --json record's fields, read once (python starts slowly)
record() {
	eval "$(python3 -c '
import json, shlex, sys
try:
    r = json.load(open(sys.argv[1]))
except Exception as e:
    r = {"planted_check": "no record: %s" % e}
for k in ("planted_paths", "planted_check", "exit_code"):
    v = r.get(k, "absent")
    v = " ".join(sorted(v)) if isinstance(v, list) else str(v)
    print("rec_%s=%s" % (k, shlex.quote(v)))' "$T/rec")"
}

DEEP='p=deep; i=0; while [ $i -lt 80 ]; do p=$p/d; i=$((i+1)); done; mkdir -p $p && echo evil >$p/.envrc || exit 11'
# 20 names of 250 bytes: past PATH_MAX, made one chdir at a time
LONG='python3 -c "import os
os.mkdir(\"long\"); os.chdir(\"long\")
for i in range(20):
    os.mkdir(\"n\" * 250); os.chdir(\"n\" * 250)
open(\".envrc\", \"w\").write(\"evil\")" || exit 12'

incomplete() {
	who=$1
	for mode in rw ww; do
		d=$T/$mode-$who
		mkdir -p "$d/cwd" "$d/tree"
		[ -n "$RUN_AS" ] && chown -R 65534:65534 "$d"
		if [ $mode = rw ]; then
			cd "$d/cwd" || exit 1
			set -- --rw "$d/tree"
			pre="$d/tree/"
		else
			cd "$d/tree" || exit 1
			set -- --profile workspace-write
			pre=
		fi
		for what in DEEP LONG; do
			eval "plant=\$$what"
			rm -rf "$d/tree/a"
			$RUN_AS "$CORDON" run "$@" --json-fd 3 -- sh -c \
				"cd '$d/tree' && mkdir a && echo evil >a/.envrc && $plant" \
				3>"$T/rec" 2>"$T/err"
			is "$?" 125 "$who/$mode/$what: the run exits 125: the check was incomplete"
			record
			is "$rec_exit_code" 0 "$who/$mode/$what: the command's own status, 0, is in the record"
			got=" $rec_planted_paths "
			case $got in *" ${pre}a/.envrc "*) r=yes ;; *) r="no: $got" ;; esac
			is "$r" yes "$who/$mode/$what: the shallow a/.envrc is still in planted_paths"
			case "$what:$got" in
			DEEP:*" ${pre}deep/d/d/"*) r=yes ;;
			LONG:*" ${pre}long/nnnn"*) r=yes ;;
			*) r="no: $got" ;;
			esac
			is "$r" yes "$who/$mode/$what: the directory left unchecked is in planted_paths"
			case $rec_planted_check in
			"incomplete: "*"contents not checked: '$d/tree/"*) r=yes ;;
			*) r="no: $rec_planted_check" ;;
			esac
			is "$r" yes "$who/$mode/$what: planted_check says incomplete, and why"
			ok "$who/$mode/$what: one line on stderr says the check was incomplete" \
				grep -q "the check for planted git or host-run files was incomplete: " "$T/err"
			rm -rf "$d/tree/deep" "$d/tree/long"
		done
		rm -rf "$d/tree/a"
		$RUN_AS "$CORDON" run "$@" --json-fd 3 -- sh -c \
			"cd '$d/tree' && mkdir a && echo evil >a/.envrc" 3>"$T/rec" 2>"$T/err"
		is "$?" 0 "$who/$mode: control: without the deep tree the run exits 0"
		record
		is "$rec_planted_paths" "${pre}a/.envrc" "$who/$mode: control: ... reports a/.envrc alone"
		is "$rec_planted_check" complete "$who/$mode: control: ... and its check was complete"
		cd "$T" || exit 1
	done
}
for_each_user incomplete

done_testing
