#!/bin/sh
# cordon policy test: examples plus generated boundary cases.  The example
# policies pass; a grant whose own scope reaches past its boundary is named.
. "${CORDON_SRC:-.}/tests/lib.sh"
D="$CORDON_SRC/tests/data/policy"

for f in "$CORDON_SRC"/examples/policies/*.yaml "$D/base.yaml"; do
	ok "policy test $(basename "$f")" "$CORDON" policy test "$f"
done
out=$("$CORDON" policy test "$D/base.yaml")
n=$(printf '%s\n' "$out" | grep -c '^ok')
[ "$n" -ge 30 ]
is "$?" 0 "base.yaml generates at least 30 boundary cases ($n)"
case $out in *"grant read-repo: the second it expires is denied"*) r=0 ;; *) r=1 ;; esac
is "$r" 0 "expiry boundary case generated"
case $out in *"grant web: the wildcard's own base host is denied"*) r=0 ;; *) r=1 ;; esac
is "$r" 0 "wildcard base host case generated"
case $out in *"grant git-status: argv with the last token extended is denied"*) r=0 ;; *) r=1 ;; esac
is "$r" 0 "argv token case generated"

out=$("$CORDON" policy test "$D/leaky.yaml")
is "$?" 1 "a leaky grant fails policy test"
case $out in *"not ok"*"grant wide: a sibling path must be denied but is allow, leaking via wide"*) r=0 ;; *) r=1 ;; esac
is "$r" 0 "policy test names the leaking grant"

cp "$CORDON_SRC/tests/data/policy/bad/failing-example.yaml" "$T/f.yaml"
out=$("$CORDON" policy test "$T/f.yaml" 2>&1)
is "$?" 1 "a failing example fails policy test"
done_testing
