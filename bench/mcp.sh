#!/bin/sh
# bench/mcp.sh CORDON — added latency per tools/call through cordon mcp vs
# the same server direct: 1,000 calls of server-filesystem's
# read_text_file on a small file with the official SDK client; median and
# p99 of each, and the difference.  The calls are made in ROUNDS rounds
# (default 5) that alternate direct and gateway sessions, so load from
# other work on the machine falls on both alike.  The audit log and state
# database go to /tmp unless CORDON_BENCH_DIR says otherwise, or to the
# store CORDON_BENCH_STORE names (a PostgreSQL URI: bench/store-pg.sh).
set -eu
CORDON=${1:-$(pwd)/build/cordon}
CORDON_SRC=$(cd "$(dirname "$0")/.." && pwd)
. "$CORDON_SRC/tests/mcp/setup.sh"
mcp_setup
D=$(mktemp -d "${CORDON_BENCH_DIR:-/tmp}/cordon-mcp-bench.XXXXXX")
trap 'rm -rf "$D"' EXIT
mkdir -p "$D/data" "$D/work" "$D/state"
echo hello >"$D/data/hello.txt"
cat >"$D/policy.yaml" <<EOP
version: 1
agents: [{id: bench, owner: ops}]
tools: [{id: fs, kind: mcp, operations: {read_text_file: read}, args: {path: path}}]
profiles: {fs: {timeout: 1h, output_limit: 1G, ro: [$D/data, $MCP_CACHE]}}
grants:
  - {id: launch, agent: bench, tool: fs, actions: [execute], scope: {argv: [node, $MCP_FS_JS]}, profile: fs, owner: o, justification: j, review_by: 2099-01-01, expires: 2099-01-01}
  - {id: read, agent: bench, tool: fs, actions: [read], scope: {paths: [$D/data/**]}, owner: o, justification: j, review_by: 2099-01-01, expires: 2099-01-01}
EOP
export CORDON_AUDIT="${CORDON_BENCH_STORE:-$D/state/audit.db}" CORDON_STATE="${CORDON_BENCH_STORE:-$D/state/state.db}"
cd "$D/work"
ROUNDS=${ROUNDS:-5}
N=$((1000 / ROUNDS))
OPS='[{"op":"call","name":"read_text_file","args":{"path":"'"$D"'/data/hello.txt"}},{"op":"bench","name":"read_text_file","args":{"path":"'"$D"'/data/hello.txt"},"n":'"$N"'}]'
MCP_OPS='[{"op":"list"}]' node "$MCP_CLIENT" "$CORDON" mcp --policy "$D/policy.yaml" --agent bench --server fs -- node "$MCP_FS_JS" "$D/data" 2>/dev/null >/dev/null
"$CORDON" mcp pins approve --server fs --all >/dev/null
i=0
while [ $i -lt "$ROUNDS" ]; do
	MCP_OPS="$OPS" node "$MCP_CLIENT" node "$MCP_FS_JS" "$D/data" 2>/dev/null | tail -1 >>"$D/direct.jsonl"
	MCP_OPS="$OPS" node "$MCP_CLIENT" "$CORDON" mcp --policy "$D/policy.yaml" --agent bench --server fs -- node "$MCP_FS_JS" "$D/data" 2>/dev/null | tail -1 >>"$D/gw.jsonl"
	i=$((i + 1))
done
stats() { python3 -c '
import json, sys
ms = sorted(x for l in open(sys.argv[1]) for x in json.loads(l)["ms"])
print("%.3f %.3f" % (ms[len(ms)//2], ms[int(len(ms)*0.99)]))' "$1"; }
set -- $(stats "$D/direct.jsonl") $(stats "$D/gw.jsonl")
echo "tools/call read_text_file, $((N * ROUNDS)) calls in $ROUNDS rounds (ms): direct median $1 p99 $2; through cordon mcp median $3 p99 $4"
python3 -c "print('added: median %.3f ms, p99 %.3f ms (goal: < 0.5 ms at the median)' % ($3 - $1, $4 - $2))"
