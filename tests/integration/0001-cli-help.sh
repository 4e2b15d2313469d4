#!/bin/sh
# Every command has --help; every `cordon run` option (the launcher's table,
# shared with `cordon shell`) is in both commands' --help and in cordon(1);
# bad input is one line and a non-zero exit.
. "${CORDON_SRC:-.}/tests/lib.sh"

for sub in run shell cache log policy proxy proposals; do
	ok "cordon $sub --help exits 0" "$CORDON" "$sub" --help
done
ok "cordon --help lists every command" sh -c "'$CORDON' --help | grep -q run && '$CORDON' --help | grep -q shell && '$CORDON' --help | grep -q log && '$CORDON' --help | grep -q policy && '$CORDON' --help | grep -q proxy"
"$CORDON" run --help >"$T/help"
"$CORDON" shell --help >"$T/shell-help"
sed 's/\\//g' "$CORDON_SRC/docs/cordon.1" >"$T/man"
# The options the code accepts, read from its option table.
opts=$(sed -n '/^static const struct option options\[\] = {/,/^};/p' "$CORDON_SRC/src/cli/cli-launch-opts.c" |
	grep -o '{ "[a-z-]*"' | cut -d'"' -f2 | grep -v '^help$')
n=0
for o in $opts; do
	n=$((n + 1))
	ok "cordon run --help documents --$o" grep -q -- "--$o" "$T/help"
	ok "cordon shell --help documents --$o" grep -q -- "--$o" "$T/shell-help"
	ok "cordon(1) documents --$o" grep -q -- "--$o" "$T/man"
done
ok "the option table was read ($n options)" test "$n" -ge 20
"$CORDON" nonsense 2>"$T/err"
is $? 2 "an unknown command exits 2"
is "$(wc -l <"$T/err" | tr -d ' ')" 1 "with one line"
done_testing
