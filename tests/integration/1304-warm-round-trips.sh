#!/bin/sh
# The warm path's round trips (cli-warm.h): a run's open rides with its
# first append, so a warm run asks the service twice (the decision and
# intent, then the result), never before it has a plan; a service of an
# older cordon (which knows only a separate open) still serves it warm;
# the service answers each request exactly once, a refused one too.
: "${CORDON_TEST_TIMEOUT:=240}"
export CORDON_TEST_TIMEOUT
. "${CORDON_SRC:-.}/tests/lib.sh"

export CORDON_WARM=1 CORDON_SERVICE_DIR="$S/.svc" CORDON_SERVICE_IDLE=60
mkdir -p "$S/.svc" && chmod 1777 "$S/.svc"

last_path() {
	"$CORDON" log export --format jsonl --audit "$1" | python3 -c '
import json, sys
last = None
for l in sys.stdin:
    x = json.loads(l)
    if x["kind"] == "run.result": last = x
print((last.get("details") or {}).get("path"))'
}
wait_sock() { # wait_sock DIR: until a service listens there (5 s)
	i=0
	while [ ! -S "$1/service.sock" ] && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
	[ -S "$1/service.sock" ]
}

trips() {
	who=$1
	uid=0
	db=$CORDON_AUDIT
	[ -n "$RUN_AS" ] && uid=65534 && db="$S/.state-nobody/audit.db"
	mkdir -p "$T/w-$who" && chmod 0777 "$T/w-$who" && cd "$T/w-$who" || exit 1
	$RUN_AS "$CORDON" run -- /bin/true
	ok "$who: the first run starts the service" wait_sock "$S/.svc/$uid"
	$RUN_AS "$CORDON" run -- /bin/true
	is "$(last_path "$db")" warm "$who: control: the next run is warm"
	# Every request the client writes begins {"op": (one send per body).
	$RUN_AS strace -f -qq -e trace=sendto -e signal=none -s 65536 -o "$T/w-$who/st" \
		"$CORDON" run -- sh -c 'exit 6'
	is $? 6 "$who: a traced warm run runs"
	is "$(last_path "$db")" warm "$who: and is warm"
	grep -o 'sendto([0-9]*, "{\\"op\\":\\"[a-z]*' "$T/w-$who/st" | sed 's/.*"//' >"$T/w-$who/ops"
	is "$(tr '\n' ' ' <"$T/w-$who/ops")" "append append " \
		"$who: two requests to the service per warm run (the open rides with the first)"
	is "$(grep -c 'sendto([0-9]*, "{\\"op\\":\\"append\\".*\\"open\\":{\\"audit\\":' "$T/w-$who/st")" 1 \
		"$who: the first append names the log to open, the second does not"
	ok "$who: the log verifies" "$CORDON" log verify --audit "$db"
	cd "$T" || exit 1
}
for_each_user trips

# One answer per request: an append before any open is refused once, and
# the next request is answered as itself (the service used to answer a
# refused append twice, "unknown request" too).
got=$(python3 - "$S/.svc/0/service.sock" "$CORDON_AUDIT" <<'EOF'
import json, socket, struct, sys
s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); s.settimeout(10)
def frame(o):
    b = json.dumps(o).encode(); s.sendall(struct.pack("<I", len(b)) + b)
def answer():
    h = b""
    while len(h) < 4: h += s.recv(4 - len(h))
    n = struct.unpack("<I", h)[0]; b = b""
    while len(b) < n: b += s.recv(n - len(b))
    return json.loads(b)
frame({"op": "append", "lazy": False, "recs": [{"kind": "decision"}]})
a = answer()
frame({"op": "open", "audit": sys.argv[2], "every": 0, "secs": 0})
b = answer()
print(a.get("error"), "|", b.get("ok"), "log_id" in b)
EOF
)
is "$got" "append before open | True True" "an append before open is refused once; the open after it is answered as an open"

# A service of an older cordon: an append that carries its open is
# "append before open" (then "unknown request"); the run sends the open
# on its own and stays warm.
mkdir -p "$S/.old/0" && chmod 700 "$S/.old/0"
python3 - "$S/.old/0/service.sock" "$T/old-reqs" <<'EOF' &
import json, os, socket, struct, sys
path, out = sys.argv[1:3]
s = socket.socket(socket.AF_UNIX); s.bind(path); s.listen(8)
def frame(c, o):
    b = json.dumps(o).encode(); c.sendall(struct.pack("<I", len(b)) + b)
def req(c):
    h = b""
    while len(h) < 4:
        k = c.recv(4 - len(h))
        if not k: return None
        h += k
    n = struct.unpack("<I", h)[0]; b = b""
    while len(b) < n: b += c.recv(n - len(b))
    return json.loads(b)
seq = 100
for _ in range(4):
    c, _ = s.accept(); opened = False
    while True:
        r = req(c)
        if r is None: break
        with open(out, "a") as f:
            paths = [json.loads(x.get("details_json") or "{}").get("path") for x in r.get("recs", [])
                     if x.get("kind") == "run.result"]
            f.write("%s%s%s\n" % (r.get("op"), "+open" if "open" in r else "",
                                  "".join(" " + str(p) for p in paths)))
        if r.get("op") == "open":
            opened = True; frame(c, {"ok": True, "log_id": "0" * 32})
        elif r.get("op") == "append" and not opened:
            frame(c, {"ok": False, "error": "append before open"})
            frame(c, {"ok": False, "error": "unknown request"})
        elif r.get("op") == "append":
            seq += len(r["recs"]); frame(c, {"ok": True, "last": seq})
    c.close()
EOF
old_pid=$!
ok "an older service listens" wait_sock "$S/.old/0"
mkdir -p "$T/old" && cd "$T/old" || exit 1
CORDON_SERVICE_DIR="$S/.old" "$CORDON" run -- sh -c 'exit 3'
is $? 3 "an older service: the run runs"
is "$(head -3 "$T/old-reqs" | tr '\n' ' ')" "append+open open append " \
	"an older service: the refused open-with-append is followed by an open on its own, then the append"
is "$(tail -1 "$T/old-reqs")" "append warm" "an older service: the result went through it and says warm"
kill "$old_pid" 2>/dev/null; wait "$old_pid" 2>/dev/null
cd "$T" || exit 1
done_testing
