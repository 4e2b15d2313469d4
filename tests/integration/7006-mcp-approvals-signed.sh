#!/bin/sh
# 7006-mcp-approvals-signed.sh — approver-signed decisions on `cordon mcp`'s
# path (issue 19): a call held by the stdio gateway, under a policy that
# pins alice's key (approvers.keys), is released only by a decision signed
# with that key.  Forged in the state database (as any writer of it can):
# an answer in alice's name unsigned, with a malformed signature, signed
# with mallory's key (cordon fed a forger's policy) -> the client gets an
# isError result saying why, the server never sees the call, and the audit
# log has an approval.refused record; `cordon approvals approve --key`
# with alice's key -> the call reaches the server (positive control).
# Root and uid 65534.
: "${CORDON_TEST_TIMEOUT:=240}"
export CORDON_TEST_TIMEOUT
. "${CORDON_SRC:-.}/tests/lib.sh"

# A stdio MCP server: tools "echo" and "held"; it logs every call it runs.
mkdir -p "$T/bin"
cat >"$T/bin/srv.py" <<'EOS'
import json, sys
log = open(sys.argv[1], "a")
schema = {"type": "object", "properties": {"text": {"type": "string"}}}
for line in sys.stdin:
    m = json.loads(line)
    if "method" not in m or "id" not in m:
        continue
    meth, r = m["method"], {}
    if meth == "initialize":
        r = {"protocolVersion": m["params"]["protocolVersion"], "capabilities": {"tools": {}},
             "serverInfo": {"name": "t", "version": "1"}}
    elif meth == "tools/list":
        r = {"tools": [{"name": n, "description": n, "inputSchema": schema} for n in ("echo", "held")]}
    elif meth == "tools/call":
        text = m["params"]["arguments"].get("text", "")
        log.write(text + "\n")
        log.flush()
        r = {"content": [{"type": "text", "text": "ran " + text}]}
    sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": m["id"], "result": r}) + "\n")
    sys.stdout.flush()
EOS
# The client: initialize, tools/list, then one held call per argument
# (TEXT), each after the last one's answer; one line per answer.
cat >"$T/bin/cl.py" <<'EOS'
import json, os, sys
sys.path.insert(0, os.path.join(os.environ["CORDON_SRC"], "tests", "mcp"))
from wire import Peer
texts = sys.argv[1:sys.argv.index("--")]
p = Peer(sys.argv[sys.argv.index("--") + 1:])
p.send({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
    "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "c", "version": "1"}}})
p.recv(60)
p.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
p.send({"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
p.recv(60)
for i, t in enumerate(texts):
    p.send({"jsonrpc": "2.0", "id": 10 + i, "method": "tools/call",
            "params": {"name": "held", "arguments": {"text": t}}})
    while True:
        m = p.recv(90)
        if m is None or m.get("id") == 10 + i:
            break
    if m is None:
        print(json.dumps({"none": t}), flush=True)
    elif "result" in m:
        c = m["result"].get("content") or [{}]
        print(json.dumps({"isError": bool(m["result"].get("isError")), "text": c[0].get("text", "")}), flush=True)
    else:
        print(json.dumps({"error": m.get("error")}), flush=True)
p.p.stdin.close()
p.p.wait()
EOS
chmod 0755 "$T/bin" && chmod 0644 "$T/bin/srv.py" "$T/bin/cl.py"

signed() {
	who=$1
	D=$T/$who
	mkdir -p "$D/log" "$D/work" "$D/k"
	: >"$D/log/calls"
	[ "$who" = nobody ] && chown -R 65534:65534 "$D"
	cd "$D/work" || exit 1
	for n in alice mallory; do
		$RUN_AS "$CORDON" approvals keygen --key "$D/k/$n.key" >"$D/k/$n.pub" 2>/dev/null
	done
	G='owner: ops, justification: t, review_by: 2099-01-01, expires: 2099-01-01'
	cat >"$D/p.yaml" <<-YAML
		version: 1
		agents: [{id: coder, owner: ops}]
		tools:
		  - {id: t, kind: mcp, operations: {echo: read}, args: {text: value}}
		  - {id: t/held, kind: mcp, operations: {held: update}, args: {text: value}}
		approvers:
		  people: [alice]
		  keys:
		    alice: "$(cat "$D/k/alice.pub")"
		profiles:
		  srv: {timeout: 1h, rw: [$D/log], ro: [$T/bin]}
		grants:
		  - {id: launch, agent: coder, tool: t, actions: [execute], scope: {argv: [/usr/bin/python3, $T/bin/srv.py]}, profile: srv, $G}
		  - {id: held, agent: coder, tool: t/held, actions: [update], approval: human, $G}
	YAML
	# The forger's copy names mallory's key as alice's.
	sed "s|$(cat "$D/k/alice.pub")|$(cat "$D/k/mallory.pub")|" "$D/p.yaml" >"$D/evil.yaml"
	chmod 0644 "$D/p.yaml" "$D/evil.yaml"
	state=$CORDON_STATE
	[ -n "$RUN_AS" ] && state="$S/.state-nobody/state.db"
	gw() { $RUN_AS /usr/bin/python3 "$T/bin/cl.py" "$@" -- "$CORDON" mcp --policy "$D/p.yaml" --agent coder \
		--server t --approval-timeout 60s -- /usr/bin/python3 "$T/bin/srv.py" "$D/log/calls"; }
	# held TEXT: the id of the pending request for the call with TEXT.
	held() {
		_i=0
		while [ $_i -lt 300 ]; do
			_id=$($RUN_AS "$CORDON" approvals list 2>/dev/null |
				awk -v w="$1" 'index($0, w) && $2 == "pending" {print $1; exit}')
			[ -n "$_id" ] && { echo "$_id"; return 0; }
			sleep 0.1
			_i=$((_i + 1))
		done
		return 1
	}
	# forge SQL: as the owner of the state database would.
	forge() { $RUN_AS sqlite3 "$state" "$1"; }

	gw >/dev/null 2>"$D/pin.err"
	ok "$who: pins approve --all" $RUN_AS "$CORDON" mcp pins approve --server t --all
	gw c-signed c-unsigned c-garbled c-mallory >"$D/out" 2>"$D/err" &
	cpid=$!

	# Positive control: alice approves with her key; the call runs.
	id=$(held c-signed)
	ok "$who: the call is held ($id)" test -n "$id"
	is "$(cat "$D/log/calls")" "" "$who: ... and has not reached the server"
	ok "$who: alice approves with her key" $RUN_AS "$CORDON" approvals approve "$id" \
		--as alice --key "$D/k/alice.key" --policy "$D/p.yaml"
	case $(forge "SELECT signature FROM approvals WHERE id = '$id'") in
	ed25519:*) ok "$who: ... the signature is stored with the decision" true ;;
	*) nok "$who: ... the signature is stored with the decision" true ;;
	esac

	# An unsigned answer in alice's name, written into the database.
	id=$(held c-unsigned)
	forge "UPDATE approvals SET status = 'approved', decided_by = 'alice', decided_at = $(date +%s) WHERE id = '$id'"
	# A signature that is not one.
	id=$(held c-garbled)
	forge "UPDATE approvals SET status = 'approved', decided_by = 'alice', decided_at = $(date +%s), signature = 'ed25519:AAAA' WHERE id = '$id'"
	# Signed with mallory's key: cordon refuses with the real policy, a
	# forger's own policy lets it write one.
	id=$(held c-mallory)
	refused "$who: cordon will not sign for alice with mallory's key" "not the one the policy pins" \
		$RUN_AS "$CORDON" approvals approve "$id" --as alice --key "$D/k/mallory.key" --policy "$D/p.yaml"
	ok "$who: ... a forger's policy lets it write one" $RUN_AS "$CORDON" approvals approve "$id" \
		--as alice --key "$D/k/mallory.key" --policy "$D/evil.yaml"
	wait $cpid

	is "$(sed -n 1p "$D/out")" '{"isError": false, "text": "ran c-signed"}' "$who: the signed approval releases the call"
	line() { sed -n "$1p" "$D/out"; }
	for c in "2 c-unsigned unsigned, but the policy pins a key for 'alice'" \
		"3 c-garbled its signature is malformed" \
		"4 c-mallory its signature does not verify with alice's key"; do
		n=${c%% *}
		r=${c#* }
		name=${r%% *}
		why=${r#* }
		case $(line "$n") in
		*'"isError": true'*"the decision is not alice's: $why"*) ok "$who: $name: the client gets a denial saying why" true ;;
		*) nok "$who: $name: the client gets a denial saying why ($(line "$n"))" true ;;
		esac
	done
	is "$(cat "$D/log/calls")" c-signed "$who: the server ran only the signed call"
	is "$($RUN_AS "$CORDON" log show 2>/dev/null | grep -c '"kind":"approval.refused"')" 3 \
		"$who: each refused answer is an approval.refused record"
	is "$(forge "SELECT count(*) FROM approvals WHERE status = 'approved'")" 3 \
		"$who: ... and was never used (still 'approved', not 'used')"
	cd "$T" || exit 1
}
for_each_user signed
done_testing
