#!/bin/sh
# cordon policy check: data-driven decisions (decisions.txt: EXIT | OUTPUT
# PREFIX | ARGS, over base.yaml until a line '@policy FILE' names another
# policy in tests/data/policy), then explain.  ARGS are read as shell words
# (quotes make one token of 'git  push'; no globbing); --at defaults to
# 2029-06-01.
. "${CORDON_SRC:-.}/tests/lib.sh"
D="$CORDON_SRC/tests/data/policy"
P="$D/base.yaml"

n=0
while IFS='|' read -r want_rc want_out args; do
	case $want_rc in '#'* | '') continue ;; esac
	case $want_rc in '@policy '*)
		P="$D/$(echo "${want_rc#@policy }" | tr -d ' ')"
		continue
		;;
	esac
	n=$((n + 1))
	want_rc=$(echo "$want_rc" | tr -d ' ')
	want_out=$(echo "$want_out" | sed 's/^ *//; s/ *$//')
	case " $args " in *" --at "*) at="" ;; *) at="--at 2029-06-01" ;; esac
	set -f
	eval "set -- $args"
	set +f
	# shellcheck disable=SC2086
	out=$("$CORDON" policy check "$P" $at "$@" 2>&1)
	rc=$?
	is "$rc" "$want_rc" "exit $want_rc:$args"
	# Every case names what it expects: an empty prefix would match anything.
	r=1
	[ -n "$want_out" ] && case $out in "$want_out"*) r=0 ;; esac
	is "$r" 0 "output '$want_out':$args"
	[ "$r" -eq 0 ] || diag "got: $out"
done <"$D/decisions.txt"
[ "$n" -ge 120 ]
is "$?" 0 "decisions.txt holds at least 120 cases ($n)"

# explain: every rule with match / no-match, then the decision.
P="$D/base.yaml"
out=$("$CORDON" policy explain "$P" --agent coder --tool fs --action read --path /repo/a --at 2029-06-01)
is "$?" 0 "explain exits like check"
case $out in *"grant  read-repo"*"match "*) r=0 ;; *) r=1 ;; esac
is "$r" 0 "explain shows the matching grant"
case $out in *"grant  git-status"*"no-match  for tool 'sh'"*) r=0 ;; *) r=1 ;; esac
is "$r" 0 "explain says why a grant did not match"
case $out in *"forbid no-env"*"no-match"*) r=0 ;; *) r=1 ;; esac
is "$r" 0 "explain lists forbid rules"
case $out in *"decision: allow grants:read-repo"*) r=0 ;; *) r=1 ;; esac
is "$r" 0 "explain ends with the decision"
out=$("$CORDON" policy explain "$P" --agent coder --tool fs --action read --path /repo/a --at 2030-02-01)
case $out in *"read-repo"*"expired"*) r=0 ;; *) r=1 ;; esac
is "$r" 0 "explain says a grant expired"

# A broken policy denies (exit 4), never allows.
printf 'version: 1\nagents: []\ntools: []\nbogus: 1\n' >"$T/bad.yaml"
"$CORDON" policy check "$T/bad.yaml" --agent a --tool t --action read >/dev/null 2>&1
is "$?" 4 "check with a broken policy exits 4"
done_testing
