# wire.py — the pipe to a `cordon mcp` process that raw.py and batch.py
# drive: one JSON-RPC message per line each way (MCP stdio framing).
import json, os, select, subprocess, time


class Peer:
    def __init__(self, argv):
        self.p = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        self.buf = b""

    def send_bytes(self, b):
        self.p.stdin.write(b)
        self.p.stdin.flush()

    def send(self, obj):
        self.send_bytes(json.dumps(obj, separators=(",", ":")).encode() + b"\n")

    def recv(self, wait):
        """The next line as JSON, or None when nothing came within `wait` s."""
        end = time.time() + wait
        while b"\n" not in self.buf:
            r, _, _ = select.select([self.p.stdout], [], [], max(0, end - time.time()))
            if not r:
                return None
            chunk = os.read(self.p.stdout.fileno(), 1 << 20)
            if not chunk:
                return None
            self.buf += chunk
        line, self.buf = self.buf.split(b"\n", 1)
        return json.loads(line)

    def close(self):
        """Close its stdin and wait for it: the exit status."""
        self.p.stdin.close()
        self.p.wait(timeout=20)
        return self.p.returncode
