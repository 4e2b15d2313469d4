#!/bin/sh
# Egress from the policy (issue 6: "also from the policy's grants"): the
# profile a grant names can list allow_hosts; cordon run --policy then
# starts the proxy with exactly those destinations, and --allow-host stays
# refused under --policy.  As root and as nobody.
. "${CORDON_SRC:-.}/tests/lib.sh"

start_http_server
port=$http_port
cat >"$T/p.yaml" <<EOP
version: 1
agents: [{id: fetcher, owner: ops}, {id: offline, owner: ops}]
tools: [{id: shell, kind: command}]
profiles:
  web: {allow_hosts: ["127.0.0.1:$port"]}
grants:
  - {id: curl-web, agent: fetcher, tool: shell, actions: [execute], scope: {argv: [curl]}, profile: web, owner: ops, justification: t, review_by: 2099-01-01, expires: 2099-01-01}
  - {id: curl-off, agent: offline, tool: shell, actions: [execute], scope: {argv: [curl]}, owner: ops, justification: t, review_by: 2099-01-01, expires: 2099-01-01}
EOP
chmod 0644 "$T/p.yaml"

pe() {
	who=$1
	mkdir -p "$T/w-$who" && chmod 0755 "$T/w-$who" && cd "$T/w-$who" || exit 1
	is "$($RUN_AS "$CORDON" run --policy "$T/p.yaml" --agent fetcher -- curl -s "http://127.0.0.1:$port/")" \
		outside-ok "$who: the granted profile's allow_hosts are reached through the proxy"
	is "$($RUN_AS "$CORDON" run --policy "$T/p.yaml" --agent fetcher -- curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$((port + 1))/")" \
		403 "$who: any other destination is refused (403)"
	nok "$who: a grant whose profile names no host has no network" \
		$RUN_AS "$CORDON" run --policy "$T/p.yaml" --agent offline -- curl -s --max-time 3 -x "http://127.0.0.1:3128" "http://127.0.0.1:$port/"
	nok "$who: --allow-host stays refused under --policy" \
		$RUN_AS "$CORDON" run --policy "$T/p.yaml" --agent offline --allow-host "127.0.0.1:$port" -- curl -s "http://127.0.0.1:$port/"
	db=$CORDON_AUDIT
	[ -n "$RUN_AS" ] && db="$S/.state-nobody/audit.db"
	n=$("$CORDON" log export --format jsonl --audit "$db" | grep -c '"kind":"egress"')
	[ "$n" -ge 2 ]
	is "$?" 0 "$who: each attempt is an egress record ($n)"
}
for_each_user pe

# --install under a policy (issue 10): the install step is decided as tool
# install and gets its granted profile's allow_hosts; the command then runs
# with the cache read-only and no network.
cat >"$T/pi.yaml" <<EOP
version: 1
agents: [{id: a1, owner: ops}]
tools: [{id: shell, kind: command}, {id: install, kind: command}]
profiles:
  inst: {allow_hosts: ["127.0.0.1:$port"]}
grants:
  - {id: i, agent: a1, tool: install, actions: [execute], scope: {argv: [/bin/sh, -c]}, profile: inst, owner: ops, justification: t, review_by: 2099-01-01, expires: 2099-01-01}
  - {id: c, agent: a1, tool: shell, actions: [execute], scope: {argv: [sh, -c]}, owner: ops, justification: t, review_by: 2099-01-01, expires: 2099-01-01}
EOP
chmod 0644 "$T/pi.yaml"
mkdir -p "$T/wi" && cd "$T/wi" || exit 1
out=$("$CORDON" run --policy "$T/pi.yaml" --agent a1 --cache idx:/cache \
	--install "curl -s http://127.0.0.1:$port/ > /cache/page" -- \
	sh -c 'cat /cache/page; echo; curl -s --max-time 3 -x http://127.0.0.1:3128 http://127.0.0.1:'"$port"'/ || echo no-network' 2>/dev/null)
is "$out" "outside-ok
no-network" "--install under a policy fills the cache through the install profile's egress; the command has none"
# A grant that masks data masks its egress records too: a name asked for
# can carry it, e.g. as a DNS label (issue 9 item 5).
cat >"$T/pm.yaml" <<EOP
version: 1
agents: [{id: m1, owner: ops}]
tools: [{id: shell, kind: command}]
profiles:
  web: {allow_hosts: ["127.0.0.1:$port"]}
grants:
  - {id: mweb, agent: m1, tool: shell, actions: [execute], scope: {argv: [curl]}, profile: web, mask: {email: redact, card: redact}, owner: ops, justification: t, review_by: 2099-01-01, expires: 2099-01-01}
EOP
chmod 0644 "$T/pm.yaml"
mkdir -p "$T/wm" && cd "$T/wm" || exit 1
CORDON_MASK_KEY="$S/mask.key" "$CORDON" run --policy "$T/pm.yaml" --agent m1 --task T-m -- curl -s -o /dev/null "http://4111111111111111.example/" >/dev/null 2>&1
"$CORDON" log export --format jsonl --kind egress --run "$("$CORDON" log export --format jsonl --task T-m --kind run.intent | sed 's/.*"run_id":"\([0-9a-f]*\)".*/\1/' | head -1)" >"$T/eg.log"
[ -s "$T/eg.log" ]
is "$?" 0 "a masked run's refused egress attempt is recorded"
nok "... without the card number it named as a host" grep -q '4111111111111111' "$T/eg.log"
grep -q '"host":"<card>.example"' "$T/eg.log"
is "$?" 0 "... masked in place"
grep -q '"commitments":' "$T/eg.log"
is "$?" 0 "... with its commitments"
kill "$http_pid" 2>/dev/null
done_testing
