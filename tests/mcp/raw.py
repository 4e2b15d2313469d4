# raw.py — hostile frames to `cordon mcp` (argv), one at a time; prints one
# line per frame: "NAME <the JSON-RPC error code or 'result'> <message>",
# or "NAME none" when nothing came back within the wait.
import json, os, sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from wire import Peer

peer = Peer(sys.argv[1:])
send = peer.send_bytes


def recv(wait=15.0):
    return peer.recv(wait)


def show(name, m):
    if m is None:
        print(name, "none")
    elif "error" in m:
        print(name, m["error"]["code"], json.dumps(m.get("id")), m["error"]["message"][:60])
    else:
        print(name, "result", json.dumps(m.get("id")))
    sys.stdout.flush()

init = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}}}
send(json.dumps(init).encode() + b"\n")
show("initialize", recv(30))
send(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
frames = [
    ("invalid-utf8", b'{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":"\xff\xfe"}}\n'),
    ("not-json", b'this is not json\n'),
    ("deep-nesting", b'{"jsonrpc":"2.0","id":2,"method":"ping","params":{"a":' + b'[' * 100000 + b']' * 100000 + b'}}\n'),
    ("id-null", b'{"jsonrpc":"2.0","id":null,"method":"ping"}\n'),
    ("id-float", b'{"jsonrpc":"2.0","id":1.5,"method":"ping"}\n'),
    ("id-object", b'{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}\n'),
    ("batch", b'[{"jsonrpc":"2.0","id":3,"method":"ping"}]\n'),
    ("duplicate-key", b'{"jsonrpc":"2.0","id":4,"id":5,"method":"ping"}\n'),
    ("call-no-name", b'{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{}}\n'),
    ("line-64mb", b'{"jsonrpc":"2.0","id":7,"method":"ping","params":{"x":"' + b'A' * (64 << 20) + b'"}}\n'),
]
for name, f in frames:
    send(f)
    show(name, recv())
# A response to nothing is dropped without an answer; then the session
# still works.
send(b'{"jsonrpc":"2.0","id":12345,"result":{}}\n')
show("response-to-nothing", recv(2))
send(b'{"jsonrpc":"2.0","id":"after","method":"ping"}\n')
show("ping-after", recv())
print("exit", peer.close())
