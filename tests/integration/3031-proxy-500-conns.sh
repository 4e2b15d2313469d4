#!/bin/sh
# cordon proxy under 500 concurrent tunnels (THREATS row 25): with
# --max-conns 500, 500 CONNECT tunnels are open at once, the 501st is
# refused with 503 while they are, every tunnel then carries its own
# payload there and back unchanged, every attempt has its record, and once
# they are closed a new tunnel is accepted again.  Once more with a
# descriptor limit that lets only some tunnels splice (the others copy).  Loopback only: the
# upstream is a python3 asyncio echo server on 127.0.0.1.  Run as the
# invoking user and as nobody.
. "${CORDON_SRC:-.}/tests/lib.sh"

command -v python3 >/dev/null 2>&1 || {
	skip "python3 is needed for the upstream server and the clients"
	done_testing
}
N=500
# Client, upstream and proxy each hold N descriptors or more.
if [ "$(ulimit -Hn)" != unlimited ] && [ "$(ulimit -Hn)" -lt $((4 * N)) ]; then
	skip "the descriptor limit ($(ulimit -Hn)) is below $((4 * N))"
	done_testing
fi
ulimit -n $((8 * N)) 2>/dev/null || ulimit -n "$(ulimit -Hn)"

# The upstream: echo everything until the client's end of file, then close.
cat >"$T/echo.py" <<'PY'
import asyncio, sys
async def echo(r, w):
    try:
        while True:
            d = await r.read(65536)
            if not d:
                break
            w.write(d)
            await w.drain()
    finally:
        w.close()
async def main():
    s = await asyncio.start_server(echo, "127.0.0.1", 0, backlog=1024)
    print(s.sockets[0].getsockname()[1], flush=True)
    await asyncio.sleep(110)
asyncio.run(main())
PY

# The client: N tunnels open at once, one more that must be refused, then
# every tunnel sends 16 KiB of its own and must get exactly those back;
# then one last tunnel after all are closed.  Prints one word per check.
cat >"$T/many.py" <<'PY'
import asyncio, hashlib, sys
import os, time
pp, up, n, sync = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
req = b"CONNECT 127.0.0.1:%d HTTP/1.1\r\nHost: 127.0.0.1:%d\r\n\r\n" % (up, up)

async def tunnel():
    r, w = await asyncio.open_connection("127.0.0.1", pp)
    w.write(req)
    head = await asyncio.wait_for(r.readuntil(b"\r\n\r\n"), 30)
    return r, w, head.split(b" ")[1]

def payload(i):
    seed = hashlib.sha256(b"%d" % i).digest()
    return seed * 512  # 16 KiB, different for every tunnel

async def exchange(i, r, w):
    p = payload(i)
    w.write(p)
    await w.drain()
    w.write_eof()
    got = await asyncio.wait_for(r.read(), 60)
    w.close()
    return got == p

async def main():
    opened = await asyncio.gather(*(tunnel() for _ in range(n)), return_exceptions=True)
    ok = [t for t in opened if not isinstance(t, Exception) and t[2] == b"200"]
    print("open", len(ok))
    open(sync + ".open", "w").close()
    for _ in range(300):
        if os.path.exists(sync + ".go"):
            break
        await asyncio.sleep(0.1)
    # The cap: one more while all n are open.
    try:
        r, w = await asyncio.open_connection("127.0.0.1", pp)
        w.write(req)
        d = await asyncio.wait_for(r.read(), 10)
        print("extra", d.split(b" ")[1].decode() if d.startswith(b"HTTP/") else "closed")
        print("extra-reason", b"connection cap reached" in d)
        w.close()
    except Exception as e:
        print("extra", "error:%s" % e)
    res = await asyncio.gather(*(exchange(i, r, w) for i, (r, w, _) in enumerate(ok)),
                               return_exceptions=True)
    print("intact", sum(1 for x in res if x is True))
    await asyncio.sleep(0.5)
    r, w, st = await tunnel()
    print("after", st.decode(), await exchange(n, r, w))

asyncio.run(main())
PY

# nobody cannot use a python3 under /root (pyenv shims): the system's.
SYSPATH=/usr/local/bin:/usr/bin:/bin

check() { # WHO [NOFILE]: NOFILE the proxy's descriptor limit
	who=$1
	nofile=${2:-$((8 * N))}
	W="$T/w-$who"
	mkdir -p "$W"
	[ "$who" = nobody ] && chown 65534:65534 "$W"
	# as_nobody is a function: a background job is a subshell around the
	# real process, which says its own pid before it becomes the server.
	$RUN_AS env PATH="$SYSPATH" sh -c 'echo $$ >"$0.pid"; exec python3 -u "$1"' \
		"$W/echo" "$T/echo.py" >"$W/echo.port" 2>"$W/echo.err" &
	echo_job=$!
	for _ in $(seq 300); do [ -s "$W/echo.port" ] && break; sleep 0.1; done
	up=$(cat "$W/echo.port")
	$RUN_AS sh -c 'echo $$ >"$0.pid"; ulimit -n "$1"; shift; exec "$@"' "$W/px" "$nofile" \
		"$CORDON" proxy --listen 127.0.0.1:0 --allow-host "127.0.0.1:$up" \
		--max-conns $N --audit "$W/audit.db" >"$W/px.out" 2>"$W/px.err" &
	px_job=$!
	for _ in $(seq 300); do grep -q '^listening on ' "$W/px.out" 2>/dev/null && break; sleep 0.1; done
	pp=$(sed -n 's/^listening on 127\.0\.0\.1:\([0-9]*\)$/\1/p' "$W/px.out")
	pipes0=$(ls -l "/proc/$(cat "$W/px.pid")/fd" 2>/dev/null | grep -c 'pipe:')
	$RUN_AS env PATH="$SYSPATH" python3 "$T/many.py" "$pp" "$up" $N "$W/sync" \
		>"$W/many.out" 2>"$W/many.err" &
	many_job=$!
	# While all N are open: how many of the proxy's descriptors are pipes.
	for _ in $(seq 300); do [ -e "$W/sync.open" ] && break; sleep 0.1; done
	pipes=$(($(ls -l "/proc/$(cat "$W/px.pid")/fd" 2>/dev/null | grep -c 'pipe:') - pipes0))
	touch "$W/sync.go"
	wait "$many_job"
	res() { sed -n "s/^$1 //p" "$W/many.out"; }
	is "$(res open)" $N "$who: $N tunnels are open at once through one proxy"
	if [ -z "${2:-}" ]; then
		is "$pipes" $((4 * N)) "$who:   every one of them splices (two pipes each)"
	else
		ok "$who:   some splice, the others copy ($pipes pipe ends)" \
			test "$pipes" -gt 0 -a "$pipes" -lt $((4 * N))
	fi
	is "$(res extra)" 503 "$who: the tunnel past --max-conns $N is refused with 503"
	is "$(res extra-reason)" True "$who:   saying the connection cap was reached"
	is "$(res intact)" $N "$who: every tunnel carries its own 16 KiB there and back unchanged"
	is "$(res after)" "200 True" "$who: once they are closed a new tunnel is accepted and works"
	kill "$(cat "$W/px.pid")" 2>/dev/null
	wait "$px_job"
	is $? 0 "$who: the proxy stops cleanly"
	kill "$(cat "$W/echo.pid")" 2>/dev/null
	wait "$echo_job" 2>/dev/null
	$RUN_AS "$CORDON" log export --format jsonl --audit "$W/audit.db" >"$W/log.jsonl"
	got=$(python3 - "$W/log.jsonl" <<'PY'
import json, sys
allow = deny_cap = results = full = 0
for line in open(sys.argv[1]):
    r = json.loads(line)
    d = r.get("details") or {}
    if r["kind"] == "egress" and r["decision"] == "allow":
        allow += 1
    elif r["kind"] == "egress" and d.get("status") == 503 and "cap" in r.get("reason", ""):
        deny_cap += 1
    elif r["kind"] == "egress.result":
        results += 1
        full += d.get("bytes_up") == 16384
print(allow, deny_cap, results, full)
PY
)
	n1=$((N + 1))
	is "$got" "$n1 1 $n1 $n1" \
		"$who: $n1 allowed records, one for the cap, $n1 results with every byte counted"
	[ -s "$W/many.err" ] && sed 's/^/#   /' "$W/many.err" | tail -5
}
for_each_user check
# With a descriptor limit that leaves room for pipes for about a hundred
# connections only, the others copy through their buffers: the same checks.
check root-1500fds 1500

done_testing
