#!/bin/sh
# JSON-RPC batches through cordon mcp with the reference filesystem server
# (MCP-NOTES 12): a client that negotiated 2025-03-26 gets one array
# answering all the requests of its batch (an allowed read, a denied write,
# tools/list, ping), each call decided and recorded as a single one would
# be, every element sent to the server as a line of its own; a batch of
# notifications gets no answer; an empty batch, 101 elements, initialize
# inside a batch, an invalid element and a duplicate id are refused
# (THREATS 33); under 2025-11-25 a batch is one -32600 error.  As root and
# as nobody.
. "${CORDON_SRC:-.}/tests/lib.sh"
. "$CORDON_SRC/tests/mcp/setup.sh"

if ! mcp_setup; then
	skip "cannot install the MCP SDK and servers (npm ci)"
	done_testing
fi

case_user() {
	u=$1
	D=$T/batch-$u
	mkdir -p "$D/data" "$D/work" "$T/.state-$u"
	echo hello >"$D/data/hello.txt"
	[ "$u" = nobody ] && chown -R 65534:65534 "$D" "$T/.state-$u"
	cat >"$D/policy.yaml" <<EOP
version: 1
agents: [{id: coder, owner: ops}]
tools:
  - id: fs
    kind: mcp
    operations: {read_text_file: read, write_file: update}
    args: {path: path, head: value, tail: value, content: value}
profiles:
  fs-server: {timeout: 1h, output_limit: 1G, rw: [$D/data], ro: [$MCP_CACHE]}
grants:
  - {id: fs-launch, agent: coder, tool: fs, actions: [execute], scope: {argv: [node, $MCP_FS_JS]}, profile: fs-server, owner: ops, justification: t, review_by: 2030-01-01, expires: 2030-01-01}
  - {id: fs-read, agent: coder, tool: fs, actions: [read], scope: {paths: [$D/data/**]}, owner: ops, justification: t, review_by: 2030-01-01, expires: 2030-01-01}
EOP
	export CORDON_STATE="$T/.state-$u/state.db"
	cd "$D/work" || return
	gw() { $RUN_AS env CORDON_STATE="$CORDON_STATE" DATA="$D/data" "$@"; }
	logs() { $RUN_AS "$CORDON" log show 2>/dev/null; }
	# A first session lists the tools (their pins are new), then approved.
	gw env MCP_OPS='[{"op":"list"}]' node "$MCP_CLIENT" "$CORDON" mcp --policy "$D/policy.yaml" --agent coder --server fs -- node "$MCP_FS_JS" "$D/data" >/dev/null 2>&1
	ok "$u: pins approve --all" gw "$CORDON" mcp pins approve --server fs --all
	batch() { gw python3 "$CORDON_SRC/tests/mcp/batch.py" "$1" "$CORDON" mcp --policy "$D/policy.yaml" --agent coder --server fs -- node "$MCP_FS_JS" "$D/data" 2>"$D/stderr"; }

	batch 2025-03-26 >"$D/b.out"
	is "$(sed -n 's/^version //p' "$D/b.out")" 2025-03-26 "$u: server-filesystem settles on 2025-03-26 when asked"
	is "$(sed -n 's/^mixed //p' "$D/b.out")" \
		"array 4 : 1 tools read_text_file; 2 call ok hello\\n; 3 call isError denied by policy: no grant for agent 'co; 4 result" \
		"$u: a batch is answered with one array: list, allowed read, denied write, ping"
	nok "$u: ... and the denied write wrote nothing" test -e "$D/data/evil.txt"
	is "$(sed -n 's/^notifications-only //p' "$D/b.out")" none "$u: a batch of notifications gets no answer"
	case $(sed -n 's/^empty //p' "$D/b.out") in 'object null error -32600 '*) r=0 ;; *) r=1 ;; esac
	is "$r" 0 "$u: an empty batch is one -32600 error object"
	case $(sed -n 's/^too-many //p' "$D/b.out") in 'object null error -32600 a batch holds at most 100'*) r=0 ;; *) r=1 ;; esac
	is "$r" 0 "$u: 101 elements: one -32600 error object"
	is "$(sed -n 's/^initialize-dup-invalid //p' "$D/b.out" | cut -d: -f1)" 'array 4 ' "$u: initialize, an invalid element and a duplicate id each get an error"
	is "$(sed -n 's/^initialize-dup-invalid //p' "$D/b.out" | grep -o 'initialize must not\|duplicate id\|8 result' | tr '\n' ,)" 'initialize must not,8 result,duplicate id,' "$u: ... and the rest is answered"
	is "$(sed -n 's/^single-after //p' "$D/b.out")" 'object 9 result' "$u: a single request afterwards is answered singly"
	is "$(sed -n 's/^exit //p' "$D/b.out")" 0 "$u: the session ends cleanly"
	is "$(logs | grep -c '"kind":"mcp.call".*"tool":"fs/read_text_file".*"decision":"allow"')" 1 "$u: the batched read is an mcp.call record, allowed"
	is "$(logs | grep -c '"kind":"mcp.call".*"tool":"fs/write_file".*"decision":"deny"')" 1 "$u: the batched write is an mcp.call record, denied"
	is "$(logs | grep -c '"kind":"mcp.result".*"result_sha256"')" 1 "$u: the read's result is recorded with its hash"
	is "$(logs | grep -c '"kind":"mcp.protocol".*within a batch')" 1 "$u: the duplicate id is a protocol record"

	# The same read on its own: the same record, but for time and chain.
	gw env MCP_OPS='[{"op":"call","name":"read_text_file","args":{"path":"'"$D"'/data/hello.txt"}}]' node "$MCP_CLIENT" "$CORDON" mcp --policy "$D/policy.yaml" --agent coder --server fs -- node "$MCP_FS_JS" "$D/data" >/dev/null 2>&1
	norm() { python3 -c 'import json,sys
for l in sys.stdin:
    r = json.loads(l)
    for k in ("seq", "time", "time_ns", "run_id", "prev_hash", "hash", "duration_ms", "stdout_sha256"):
        r.pop(k, None)
    r.get("details", {}).pop("result_sha256", None)
    print(json.dumps(r, sort_keys=True))'; }
	is "$(logs | grep '"kind":"mcp.call".*"tool":"fs/read_text_file"' | norm | uniq | wc -l)" 1 "$u: the batched call's record is the single call's"
	is "$(logs | grep '"kind":"mcp.result".*"tool":"fs/read_text_file"' | norm | uniq | wc -l)" 1 "$u: ... and so is its result's (but for the hash of the response, whose id differs)"

	batch 2025-11-25 >"$D/n.out"
	is "$(sed -n 's/^version //p' "$D/n.out")" 2025-11-25 "$u: 2025-11-25 negotiated"
	case $(sed -n 's/^mixed //p' "$D/n.out") in 'object null error -32600 batch arrays are not supported with protocol'*) r=0 ;; *) r=1 ;; esac
	is "$r" 0 "$u: under 2025-11-25 a batch is one -32600 error object"
	is "$(logs | grep -c '"kind":"mcp.call"')" 3 "$u: ... and none of its calls is decided or run"
	cd "$T" || return
}

for_each_user case_user
done_testing
