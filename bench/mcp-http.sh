#!/bin/sh
# bench/mcp-http.sh CORDON — added latency per tools/call through cordon mcp
# to a remote server (url:, Streamable HTTP) vs the SDK client straight to
# that server over HTTP: server-everything's echo, ROUNDS rounds (default
# 5) alternating direct and gateway sessions, 1,000 calls each side; median
# and p99.  The server listens on all interfaces, so everything runs in a
# private network namespace (root: unshare --net).
set -eu
CORDON=${1:-$(pwd)/build/cordon}
CORDON_SRC=$(cd "$(dirname "$0")/.." && pwd)
. "$CORDON_SRC/tests/mcp/setup.sh"
mcp_setup
cp "$CORDON_SRC/bench/mcp-http-direct.mjs" "$MCP_CACHE/http-direct.mjs"
D=$(mktemp -d "${CORDON_BENCH_DIR:-/tmp}/cordon-mcp-http-bench.XXXXXX")
trap 'rm -rf "$D"' EXIT
cat >"$D/policy.yaml" <<EOP
version: 1
agents: [{id: bench, owner: ops}]
tools: [{id: every, kind: mcp, url: "http://127.0.0.1:3901/mcp", operations: {echo: read}, args: {message: value}}]
grants:
  - {id: read, agent: bench, tool: every, actions: [read], owner: o, justification: j, review_by: 2099-01-01, expires: 2099-01-01}
EOP
cat >"$D/inner.sh" <<'EOS'
set -eu
ip link set lo up
PORT=3901 node "$MCP_EVERYTHING_JS" streamableHttp >"$D/srv.log" 2>&1 &
SRV=$!
i=0
while ! (exec 3<>/dev/tcp/127.0.0.1/3901) 2>/dev/null && [ $i -lt 300 ]; do sleep 0.1; i=$((i + 1)); done
N=$((1000 / ROUNDS))
OPS='[{"op":"call","name":"echo","args":{"message":"hello"}},{"op":"bench","name":"echo","args":{"message":"hello"},"n":'"$N"'}]'
MCP_OPS='[{"op":"list"}]' node "$MCP_CLIENT" "$CORDON" mcp --policy "$D/policy.yaml" --agent bench >/dev/null 2>&1
"$CORDON" mcp pins approve --server every --all >/dev/null
i=0
while [ $i -lt "$ROUNDS" ]; do
	MCP_OPS="$OPS" node "$MCP_CACHE/http-direct.mjs" http://127.0.0.1:3901/mcp 2>/dev/null | tail -1 >>"$D/direct.jsonl"
	MCP_OPS="$OPS" node "$MCP_CLIENT" "$CORDON" mcp --policy "$D/policy.yaml" --agent bench 2>/dev/null | tail -1 >>"$D/gw.jsonl"
	i=$((i + 1))
done
kill $SRV
EOS
D=$D CORDON=$CORDON MCP_CLIENT=$MCP_CLIENT MCP_CACHE=$MCP_CACHE MCP_EVERYTHING_JS=$MCP_EVERYTHING_JS \
	ROUNDS=${ROUNDS:-5} CORDON_AUDIT="$D/audit.db" CORDON_STATE="$D/state.db" unshare --net sh "$D/inner.sh"
stats() { python3 -c '
import json, sys
ms = sorted(x for l in open(sys.argv[1]) for x in json.loads(l)["ms"])
print("%.3f %.3f %d" % (ms[len(ms)//2], ms[int(len(ms)*0.99)], len(ms)))' "$1"; }
set -- $(stats "$D/direct.jsonl") $(stats "$D/gw.jsonl")
echo "tools/call echo, $3 calls direct / $6 through cordon, ${ROUNDS:-5} rounds (ms): direct (HTTP) median $1 p99 $2; through cordon mcp (stdio front, HTTP upstream) median $4 p99 $5"
python3 -c "print('added: median %.3f ms, p99 %.3f ms' % ($4 - $1, $5 - $2))"
