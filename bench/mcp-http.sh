#!/bin/sh
# bench/mcp-http.sh CORDON — added latency per tools/call through cordon mcp
# to a remote server (url:, Streamable HTTP) vs the SDK client straight to
# that server over HTTP: server-everything's echo, ROUNDS rounds (default
# 5) alternating direct and gateway sessions, 1,000 calls each side; median
# and p99.  A third side: the SDK client over HTTP to `cordon mcp --listen`
# (the HTTP front, a bearer token) in front of the same server.  Then
# SESSIONS (default 50) sessions opened and held through the front: the
# memory they add (the front and its session processes, PSS).  CALLS
# (default 1000) calls per side.  The server listens on all interfaces, so
# everything runs in a private network namespace (root: unshare --net).
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
# sh has no /dev/tcp: a connect of python's.
while ! python3 -c 'import socket; socket.create_connection(("127.0.0.1", 3901), 2).close()' 2>/dev/null && [ $i -lt 300 ]; do sleep 0.1; i=$((i + 1)); done
N=$((CALLS / ROUNDS))
TOKEN=$("$CORDON" mcp token add --agent bench | tail -1)
"$CORDON" mcp --listen 127.0.0.1:3902 --policy "$D/policy.yaml" --max-sessions 256 >/dev/null 2>"$D/front.err" &
FRONT=$!
i=0
while ! grep -q 'listening on' "$D/front.err" && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
OPS='[{"op":"call","name":"echo","args":{"message":"hello"}},{"op":"bench","name":"echo","args":{"message":"hello"},"n":'"$N"'}]'
MCP_OPS='[{"op":"list"}]' node "$MCP_CLIENT" "$CORDON" mcp --policy "$D/policy.yaml" --agent bench >/dev/null 2>&1
"$CORDON" mcp pins approve --server every --all >/dev/null
i=0
while [ $i -lt "$ROUNDS" ]; do
	MCP_OPS="$OPS" node "$MCP_CACHE/http-direct.mjs" http://127.0.0.1:3901/mcp 2>/dev/null | tail -1 >>"$D/direct.jsonl"
	MCP_OPS="$OPS" node "$MCP_CLIENT" "$CORDON" mcp --policy "$D/policy.yaml" --agent bench 2>/dev/null | tail -1 >>"$D/gw.jsonl"
	MCP_OPS="$OPS" MCP_TOKEN=$TOKEN node "$MCP_CACHE/http-direct.mjs" http://127.0.0.1:3902/mcp 2>/dev/null | tail -1 >>"$D/front.jsonl"
	i=$((i + 1))
done
# Memory: PSS (shared pages split among the processes sharing them) of the
# front and its descendants, before and with SESSIONS sessions open (each
# initialized, then held).
rss() { python3 -c '
import os, sys
kids = {}
for p in os.listdir("/proc"):
    if p.isdigit():
        try: kids.setdefault(open("/proc/%s/stat" % p).read().rsplit(")", 1)[1].split()[1], []).append(p)
        except OSError: pass
todo, kb = [sys.argv[1]], 0
while todo:
    p = todo.pop()
    try: kb += int([l for l in open("/proc/%s/smaps_rollup" % p) if l.startswith("Pss:")][0].split()[1])
    except (OSError, IndexError): pass
    todo += kids.get(p, [])
print(kb)' "$FRONT"; }
before=$(rss)
INIT='{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"b","version":"1"}}}'
t0=$(date +%s%N)
i=0
while [ $i -lt "$SESSIONS" ]; do
	curl -s -o /dev/null -X POST http://127.0.0.1:3902/mcp -H "Authorization: Bearer $TOKEN" \
		-H 'Content-Type: application/json' -H 'Accept: application/json, text/event-stream' --data-binary "$INIT"
	i=$((i + 1))
done
t1=$(date +%s%N)
sleep 1
after=$(rss)
echo "$SESSIONS $before $after $(((t1 - t0) / 1000000))" >"$D/mem"
kill $FRONT
wait $FRONT 2>/dev/null || true
kill $SRV
EOS
D=$D CORDON=$CORDON MCP_CLIENT=$MCP_CLIENT MCP_CACHE=$MCP_CACHE MCP_EVERYTHING_JS=$MCP_EVERYTHING_JS \
	ROUNDS=${ROUNDS:-5} CALLS=${CALLS:-1000} SESSIONS=${SESSIONS:-50} CORDON_AUDIT="$D/audit.db" CORDON_STATE="$D/state.db" unshare --net sh "$D/inner.sh"
stats() { python3 -c '
import json, sys
ms = sorted(x for l in open(sys.argv[1]) for x in json.loads(l)["ms"])
print("%.3f %.3f %d" % (ms[len(ms)//2], ms[int(len(ms)*0.99)], len(ms)))' "$1"; }
set -- $(stats "$D/direct.jsonl") $(stats "$D/gw.jsonl") $(stats "$D/front.jsonl")
echo "load: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "tools/call echo, $3 calls a side, ${ROUNDS:-5} rounds (ms): direct (HTTP) median $1 p99 $2"
echo "  through cordon mcp (stdio, HTTP upstream): median $4 p99 $5 (added: $(python3 -c "print('%.3f' % ($4 - $1))"))"
echo "  through cordon mcp --listen (HTTP front, HTTP upstream): median $7 p99 $8 (added: $(python3 -c "print('%.3f' % ($7 - $1))"))"
set -- $(cat "$D/mem")
echo "sessions held through the front: $1 opened in $4 ms; PSS $2 kB before, $3 kB with them: $(((${3} - ${2}) / ${1})) kB per session"
