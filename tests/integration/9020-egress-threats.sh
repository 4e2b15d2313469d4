#!/bin/sh
# THREATS rows 20-26 through `cordon run --allow-host`: from inside the
# sandbox, each attempt goes to the run's own proxy (127.0.0.1:3128) and is
# refused.  Loopback only: the one upstream is a python3 server on the
# host's 127.0.0.1; every other target is refused before the proxy
# resolves or connects anything, and the UDP check only asks the kernel
# for a route (a UDP connect sends no packet).
. "${CORDON_SRC:-.}/tests/lib.sh"

command -v python3 >/dev/null 2>&1 || {
	skip "python3 is needed for the upstream server and the probes"
	done_testing
}
export CORDON_AUDIT="$S/audit.db"
start_http_server
SRV=$http_pid
port=$http_port

# probe.py: one raw request per line of its table, sent to the sandbox's
# proxy; prints "NAME STATUS" (or "NAME closed").
cat >"$T/probe.py" <<'PY'
import socket, sys, time
port, lport = sys.argv[1], sys.argv[2]
cases = [
    # row 20: metadata, private, CGNAT, link-local literals
    ("metadata", "GET http://169.254.169.254/latest/meta-data/ HTTP/1.1\r\nHost: 169.254.169.254\r\n\r\n"),
    ("metadata-name", "GET http://metadata.google.internal/ HTTP/1.1\r\nHost: metadata.google.internal\r\n\r\n"),
    ("rfc1918", "CONNECT 10.0.0.1:443 HTTP/1.1\r\n\r\n"),
    ("cgnat", "CONNECT 100.64.0.1:443 HTTP/1.1\r\n\r\n"),
    ("loopback-name", "GET http://localhost:%s/ HTTP/1.1\r\nHost: localhost:%s\r\n\r\n" % (lport, lport)),
    # row 21: odd spellings of 127.0.0.1 and the IPv6 forms
    ("decimal", "CONNECT 2130706433:%s HTTP/1.1\r\n\r\n" % port),
    ("octal", "CONNECT 0177.0.0.1:%s HTTP/1.1\r\n\r\n" % port),
    ("hex", "CONNECT 0x7f.1:%s HTTP/1.1\r\n\r\n" % port),
    ("short", "CONNECT 127.1:%s HTTP/1.1\r\n\r\n" % port),
    ("trailing-dot", "CONNECT 127.0.0.1.:%s HTTP/1.1\r\n\r\n" % port),
    ("unspecified", "CONNECT 0.0.0.0:%s HTTP/1.1\r\n\r\n" % port),
    ("v6-any", "CONNECT [::]:%s HTTP/1.1\r\n\r\n" % port),
    ("v6-loopback", "CONNECT [::1]:%s HTTP/1.1\r\n\r\n" % port),
    ("v6-mapped", "CONNECT [::ffff:127.0.0.1]:%s HTTP/1.1\r\n\r\n" % port),
    ("nat64", "CONNECT [64:ff9b::7f00:1]:%s HTTP/1.1\r\n\r\n" % port),
    ("6to4", "CONNECT [2002:7f00:1::]:%s HTTP/1.1\r\n\r\n" % port),
    ("teredo", "CONNECT [2001:0:4136:e378:8000:63bf:80ff:fffe]:%s HTTP/1.1\r\n\r\n" % port),
    # row 23: Host and CONNECT disagree, userinfo, absolute-URI tricks
    ("host-mismatch", "GET http://127.0.0.1:%s/ HTTP/1.1\r\nHost: evil.example\r\n\r\n" % port),
    ("connect-host", "CONNECT 127.0.0.1:%s HTTP/1.1\r\nHost: evil.example:443\r\n\r\n" % port),
    ("userinfo", "GET http://127.0.0.1:%s@evil.example/ HTTP/1.1\r\nHost: evil.example\r\n\r\n" % port),
    ("two-hosts", "GET http://127.0.0.1:%s/ HTTP/1.1\r\nHost: 127.0.0.1:%s\r\nHost: evil.example\r\n\r\n" % (port, port)),
    ("smuggle", "GET http://127.0.0.1:%s/ HTTP/1.1\r\nHost: 127.0.0.1:%s\r\nContent-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n" % (port, port)),
    # row 24: a wildcard never matches its apex or a longer suffix
    ("apex", "CONNECT example.com:443 HTTP/1.1\r\n\r\n"),
    ("suffix", "CONNECT evilexample.com:443 HTTP/1.1\r\n\r\n"),
    ("deeper-other", "CONNECT a.example.com.evil.example:443 HTTP/1.1\r\n\r\n"),
    # row 25: a huge head
    ("huge", "GET http://127.0.0.1:%s/ HTTP/1.1\r\nHost: 127.0.0.1:%s\r\n" % (port, port) + "X-A: " + "a" * 3000 + "\r\n" + ("X-B: " + "b" * 3000 + "\r\n") * 3 + "\r\n"),
    # control: the allowed destination works
    ("allowed", "GET http://127.0.0.1:%s/ HTTP/1.1\r\nHost: 127.0.0.1:%s\r\n\r\n" % (port, port)),
]
for name, raw in cases:
    s = socket.create_connection(("127.0.0.1", 3128))
    s.settimeout(20)
    try:
        s.sendall(raw.encode())
    except OSError:
        pass
    d = b""
    try:
        while b"\r\n" not in d:
            x = s.recv(4096)
            if not x:
                break
            d += x
    except OSError:
        pass
    st = d.split(b" ")[1].decode() if d.startswith(b"HTTP/1.") else "closed"
    print(name, st)
    s.close()
PY
# localhost is allowed by name on another port, where no address entry
# names 127.0.0.1: the name resolves (through /etc/hosts) to loopback.
LP=$((port == 65535 ? 2 : port + 1))
"$CORDON" run --allow-host "127.0.0.1:$port" --allow-host "localhost:$LP" \
	--allow-host '*.example.com' -- python3 -c "$(cat "$T/probe.py")" "$port" "$LP" >"$T/out" 2>"$T/err"
for c in metadata metadata-name rfc1918 cgnat loopback-name; do
	is "$(sed -n "s/^$c //p" "$T/out")" 403 "row 20: $c is refused (403)"
done
for c in decimal octal hex short trailing-dot unspecified v6-any v6-loopback v6-mapped nat64 6to4 teredo; do
	is "$(sed -n "s/^$c //p" "$T/out")" 403 "row 21: odd spelling $c is refused (403)"
done
for c in host-mismatch connect-host userinfo; do
	is "$(sed -n "s/^$c //p" "$T/out")" 403 "row 23: $c is refused (403)"
done
for c in two-hosts smuggle; do
	st=$(sed -n "s/^$c //p" "$T/out")
	ok "row 23: $c is refused ($st)" test "$st" = 400 -o "$st" = 403
done
for c in apex suffix deeper-other; do
	is "$(sed -n "s/^$c //p" "$T/out")" 403 "row 24: *.example.com does not allow $c (403)"
done
is "$(sed -n "s/^huge //p" "$T/out")" 431 "row 25: a head over 8 KiB is cut off (431)"
is "$(sed -n "s/^allowed //p" "$T/out")" 200 "the allowed destination is reached (control)"

# Row 22: an allowed name that resolves to loopback was refused above
# (localhost is in the allowlist by name); the decision names the address.
# The proxy vets every address the name resolves to and names the first
# it refuses, in the resolver's order: a stock Debian /etc/hosts also has
# "::1 localhost", which getaddrinfo sorts first ("[::1] is loopback").
"$CORDON" log export --format jsonl >"$T/log.jsonl"
ok "row 22: the allowed name's loopback address is the logged reason" \
	grep -Eq '"decision":"deny".*"reason":"(127\.0\.0\.1|\[::1\]) is loopback and not named in the allowlist"' "$T/log.jsonl"

# Row 25: a slow head is cut off at the header timeout (10 s in a run).
out=$("$CORDON" run --allow-host "127.0.0.1:$port" -- python3 -c '
import socket, time
s = socket.create_connection(("127.0.0.1", 3128)); s.settimeout(30)
s.sendall(b"GET http://127.0.0.1/ HTTP/1.1\r\n")
t = time.time(); cut = None
for _ in range(40):
    try:
        s.sendall(b"X-Slow: 1\r\n")
        d = s.recv(4096, socket.MSG_DONTWAIT)
        cut = d.split(b" ")[1].decode() if d else "closed"
        break
    except BlockingIOError:
        time.sleep(0.5)
    except OSError:
        cut = "reset"
        break
print("cut %s" % cut if cut and time.time() - t < 15 else "not cut")
' 2>&1)
is "$out" "cut 408" "row 25: a slowloris head is cut off at the header timeout (408)"

# Row 26: no resolver inside.
is "$("$CORDON" run --allow-host "127.0.0.1:$port" -- sh -c 'getent hosts example.com; echo "getent=$?"')" getent=2 \
	"row 26: getent hosts example.com finds nothing (exit 2)"
absent_in "row 26: there is no /etc/resolv.conf" /etc/resolv.conf "$CORDON" run --allow-host "127.0.0.1:$port" --
is "$("$CORDON" run --allow-host "127.0.0.1:$port" -- python3 -c '
import socket, errno
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
try:
    s.connect(("192.0.2.53", 53)); print("route")
except OSError as e:
    print(errno.errorcode.get(e.errno, e.errno))
')" ENETUNREACH "row 26: UDP to port 53 has no route (a connect only, no packet)"
ok "the log verifies" "$CORDON" log verify
kill "$SRV" 2>/dev/null
done_testing
