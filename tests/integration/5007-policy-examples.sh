#!/bin/sh
# The example policies in examples/policies/ are real deployments in
# miniature: every file loads (`policy lint`), proves itself (`policy
# test`: its inline examples plus the generated boundary cases) and has
# a matrix; the four the issue names are all there.
. "${CORDON_SRC:-.}/tests/lib.sh"
E="$CORDON_SRC/examples/policies"

n=0
for f in "$E"/*.yaml; do
	name=$(basename "$f")
	n=$((n + 1))
	ok "lint $name" "$CORDON" policy lint "$f"
	"$CORDON" policy test "$f" >"$T/out" 2>&1
	rc=$?
	is "$rc" 0 "policy test $name"
	[ "$rc" -eq 0 ] || grep '^not ok' "$T/out" | head -5
	# Inline examples: the file proves itself at every load.
	ex=$("$CORDON" policy lint "$f" | sed -n 's/.* \([0-9][0-9]*\) examples;.*/\1/p')
	[ "${ex:-0}" -ge 5 ]
	is "$?" 0 "$name has inline examples (${ex:-0})"
	cases=$(grep -c '^ok' "$T/out")
	[ "$cases" -ge 20 ]
	is "$?" 0 "$name: policy test ran $cases cases"
	ok "matrix $name" "$CORDON" policy matrix "$f" --at 2027-01-01
done
[ "$n" -ge 4 ]
is "$?" 0 "at least four example policies ($n)"
for want in research-agent coding-agent customer-data-agent parent-delegation; do
	ok "examples/policies/$want.yaml exists" test -f "$E/$want.yaml"
done

# What each example promises, checked from the outside.
chk() { "$CORDON" policy check "$@" --at 2027-01-01 >/dev/null 2>&1; }
chk "$E/research-agent.yaml" --agent researcher --tool papers --action read --path /srv/papers/a.pdf
is "$?" 0 "research: reads the archive"
chk "$E/research-agent.yaml" --agent researcher --tool papers --action update --path /srv/papers/a.pdf
is "$?" 1 "research: never writes"
"$CORDON" policy matrix "$E/research-agent.yaml" --at 2027-01-01 | grep -q '^researcher  *r!!!!n'
is "$?" 0 "research: the matrix shows read and network, the rest forbidden"
chk "$E/coding-agent.yaml" --agent coder --tool shell --action execute -- git push origin main
is "$?" 1 "coding: no push"
chk "$E/coding-agent.yaml" --agent coder --tool shell --action execute -- make test
is "$?" 0 "coding: tests run"
chk "$E/customer-data-agent.yaml" --agent support-bot --tool crm --action read \
	--arg ticket=SUP-1 --arg customer_id=cus_1 --field name --field email_masked
is "$?" 0 "customer data: masked fields with a ticket"
chk "$E/customer-data-agent.yaml" --agent support-bot --tool crm --action read \
	--arg customer_id=cus_1 --field name
is "$?" 1 "customer data: no ticket, no read"
chk "$E/customer-data-agent.yaml" --agent support-bot --tool crm --action read \
	--arg ticket=SUP-1 --arg customer_id=cus_1 --field email
is "$?" 1 "customer data: a raw field is denied"
chk "$E/customer-data-agent.yaml" --agent support-bot --task support-queue --tool crm \
	--action update --arg ticket=SUP-1 --arg customer_id=cus_1 --field notes
is "$?" 3 "customer data: a note needs approval"
chk "$E/parent-delegation.yaml" --agent lead/reader --tool fs --action read --path /work/shop/docs/a.md
is "$?" 1 "delegation: a sub-agent has nothing until delegated"
grep -q 'cordon delegate .*--from lead --to lead/reader' "$E/parent-delegation.yaml" &&
	grep -q -- '--to lead/tester' "$E/parent-delegation.yaml"
is "$?" 0 "delegation: the file shows the two delegate commands"
done_testing
