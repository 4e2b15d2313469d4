# batch.py — a raw client that negotiates protocol version argv[1] with
# `cordon mcp` (argv[2:]) and sends JSON-RPC batches (MCP 2025-03-26).
# Environment: DATA, the server's directory.  Prints one line per check:
#   version V                       what the server settled on
#   NAME array N: ID KIND DETAIL;…  an array answer (sorted by id)
#   NAME object CODE MESSAGE        a single answer
#   NAME none                       nothing within the wait
import json, os, sys

version = sys.argv[1]
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from wire import Peer

peer = Peer(sys.argv[2:])
data = os.environ["DATA"]
send = peer.send


def recv(wait=20.0):
    return peer.recv(wait)


def brief(m):
    if "error" in m:
        return "%s error %d %s" % (json.dumps(m.get("id")), m["error"]["code"], m["error"]["message"][:50])
    r = m["result"]
    if "tools" in r:
        return "%s tools %s" % (json.dumps(m["id"]), ",".join(sorted(t["name"] for t in r["tools"])))
    if "content" in r:
        t = r["content"][0]["text"] if r.get("content") else ""
        return "%s call %s %s" % (json.dumps(m["id"]), "isError" if r.get("isError") else "ok", t[:40].replace("\n", "\\n"))
    return "%s result" % json.dumps(m["id"])

def show(name, m):
    if m is None:
        print(name, "none")
    elif isinstance(m, list):
        items = sorted(m, key=lambda x: json.dumps(x.get("id")))
        print(name, "array", len(m), ": " + "; ".join(brief(x) for x in items))
    else:
        print(name, "object", brief(m))
    sys.stdout.flush()

def req(i, method, params=None):
    o = {"jsonrpc": "2.0", "id": i, "method": method}
    if params is not None:
        o["params"] = params
    return o

def call(i, tool, **args):
    return req(i, "tools/call", {"name": tool, "arguments": args})

send(req(0, "initialize", {"protocolVersion": version, "capabilities": {}, "clientInfo": {"name": "batch", "version": "1"}}))
m = recv(30)
print("version", m["result"]["protocolVersion"] if m and "result" in m else "none")
send({"jsonrpc": "2.0", "method": "notifications/initialized"})
send([req(1, "tools/list", {}),
      call(2, "read_text_file", path=data + "/hello.txt"),
      call(3, "write_file", path=data + "/evil.txt", content="x"),
      {"jsonrpc": "2.0", "method": "notifications/progress", "params": {"progressToken": 9, "progress": 1}},
      req(4, "ping")])
show("mixed", recv())
send([{"jsonrpc": "2.0", "method": "notifications/progress", "params": {"progressToken": 9, "progress": 2}}])
show("notifications-only", recv(2))
send([])
show("empty", recv())
send([req(5, "ping")] * 101)
show("too-many", recv())
send([req(6, "initialize", {"protocolVersion": version, "capabilities": {}}), 7, req(8, "ping"), req(8, "ping")])
show("initialize-dup-invalid", recv())
send(req(9, "ping"))
show("single-after", recv())
print("exit", peer.close())
