#!/bin/sh
# cordon proxy against a resolver the test controls (THREATS rows 20, 22):
# an allowed name whose first answer is an address the allowlist names and
# whose next answers are 127.0.0.1 (DNS rebinding) is resolved once per
# request and connected to the address that was checked, never to the
# rebound one; the rebound answer is refused; a name with one private
# address among its answers, the metadata address, CGNAT and an IPv4-mapped
# IPv6 answer are refused before any connect.  IDNA end to end with curl:
# an entry written as a U-label matches the A-label curl sends; a
# look-alike (Cyrillic a) never matches an ASCII entry.
#
# Everything runs in a network and mount namespace this test makes
# (unshare -r -n -m, rootless): only its own loopback exists, the test
# resolver listens on its 127.0.0.1:53 and /etc/resolv.conf is bind-mounted
# over in that namespace alone.  Run as the invoking user and as nobody.
. "${CORDON_SRC:-.}/tests/lib.sh"

command -v python3 >/dev/null 2>&1 || {
	skip "python3 is needed for the test resolver and servers"
	done_testing
}
if ! unshare -r -n -m true 2>/dev/null; then
	skip "unshare -r -n -m: no user namespaces here"
	done_testing
fi

# The resolver: A answers per name from a table, a name's list of answer
# sets is used in turn (the last one repeats); AAAA answers from its own
# table or nothing.  Every query is logged as "TYPE NAME".
cat >"$T/dns.py" <<'PY'
import socket, struct, sys
log = open(sys.argv[1], "a", buffering=1)
A = {
    "rebind.test": [["127.0.0.2"], ["127.0.0.1"]],
    "rebind2.test": [["127.0.0.2"], ["127.0.0.1"]],
    "mixed.test": [["127.0.0.2", "10.1.2.3"]],
    "meta.test": [["169.254.169.254"]],
    "cgnat.test": [["100.64.0.1"]],
    "v6.test": [[]],
    "xn--bcher-kva.test": [["127.0.0.2"]],
    "apple.test": [["127.0.0.2"]],
    "xn--pple-43d.test": [["127.0.0.2"]],
}
AAAA = {"v6.test": [["::ffff:127.0.0.1"]]}
seen = {}
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind(("127.0.0.1", 53))
print("ready", flush=True)
while True:
    q, peer = s.recvfrom(512)
    if len(q) < 17:
        continue
    i, labels = 12, []
    while i < len(q) and q[i]:
        labels.append(q[i + 1:i + 1 + q[i]].decode("ascii", "replace"))
        i += 1 + q[i]
    name = ".".join(labels).lower()
    qtype = struct.unpack("!H", q[i + 1:i + 3])[0]
    question = q[12:i + 5]
    table, fam, tname = (A, socket.AF_INET, "A") if qtype == 1 else (AAAA, socket.AF_INET6, "AAAA")
    log.write("%s %s\n" % (tname, name))
    answers, rcode = [], 3  # NXDOMAIN unless the name is ours
    if name in A or name in AAAA:
        rcode = 0
        sets = table.get(name, [[]])
        k = seen.get((tname, name), 0)
        seen[(tname, name)] = k + 1
        answers = sets[min(k, len(sets) - 1)] if qtype in (1, 28) else []
    out = q[:2] + struct.pack("!HHHHH", 0x8580 | rcode, 1, len(answers), 0, 0) + question
    for a in answers:
        rd = socket.inet_pton(fam, a)
        out += struct.pack("!HHHIH", 0xC00C, qtype, 1, 0, len(rd)) + rd
    s.sendto(out, peer)
PY

# An upstream that says who it is to every connection, and counts them.
cat >"$T/upstream.py" <<'PY'
import socket, sys
addr, word, count = sys.argv[1], sys.argv[2].encode(), sys.argv[3]
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind((addr, 8080))
s.listen(16)
print("ready", flush=True)
n = 0
while True:
    c, _ = s.accept()
    n += 1
    open(count, "w").write("%d\n" % n)
    try:
        c.recv(4096)
        c.sendall(b"HTTP/1.0 200 OK\r\nContent-Length: %d\r\n\r\n%s" % (len(word), word))
    except OSError:
        pass
    c.close()
PY

# The client: one request through the proxy, prints the status and body.
cat >"$T/get.py" <<'PY'
import socket, sys
port, raw, tunnel = int(sys.argv[1]), sys.argv[2], sys.argv[3] if len(sys.argv) > 3 else ""
s = socket.create_connection(("127.0.0.1", port))
s.settimeout(10)
s.sendall(raw.encode().decode("unicode_escape").encode("latin-1"))
d = b""
while b"\r\n\r\n" not in d:
    x = s.recv(65536)
    if not x:
        break
    d += x
status = d.split(b" ")[1].decode() if d.startswith(b"HTTP/") else "none"
if tunnel and status == "200":
    s.sendall(tunnel.encode().decode("unicode_escape").encode("latin-1"))
    d = b""
while True:
    x = s.recv(65536)
    if not x:
        break
    d += x
reason = [l for l in d.split(b"\r\n") if l.startswith(b"X-Cordon-Reason: ")]
print(status, d.split(b"\r\n\r\n")[-1].decode("latin-1").strip() or "-",
      reason[0][17:].decode() if reason else "")
PY

# Inside the namespaces: resolver, two upstreams on 127.0.0.2:8080
# ("vetted") and 127.0.0.1:8080 ("rebound"), the proxy; one line per
# request in $W/results.
cat >"$T/inner.sh" <<'SH'
set -u
W=$1
ip link set lo up || exit 1
printf 'nameserver 127.0.0.1\noptions attempts:1 timeout:2\n' >"$W/resolv.conf"
mount --bind "$W/resolv.conf" /etc/resolv.conf || exit 1
waitfor() { for _ in $(seq 300); do [ -s "$1" ] && return 0; sleep 0.1; done; return 1; }
python3 -u "$T/dns.py" "$W/queries" >"$W/dns.out" 2>&1 &
DNS=$!
python3 -u "$T/upstream.py" 127.0.0.2 vetted "$W/vetted.count" >"$W/up2.out" 2>&1 &
UP2=$!
python3 -u "$T/upstream.py" 127.0.0.1 rebound "$W/rebound.count" >"$W/up1.out" 2>&1 &
UP1=$!
waitfor "$W/dns.out" && waitfor "$W/up2.out" && waitfor "$W/up1.out" || exit 1
"$CORDON" proxy --listen 127.0.0.1:0 --audit "$W/audit.db" \
	--allow-host rebind.test:8080 --allow-host rebind2.test:8080 \
	--allow-host mixed.test:8080 --allow-host meta.test:80 --allow-host cgnat.test:8080 \
	--allow-host v6.test:8080 --allow-host 127.0.0.2:8080 \
	--allow-host "b$(printf '\303\274')cher.test:8080" --allow-host apple.test:8080 \
	>"$W/px.out" 2>"$W/px.err" &
PX=$!
waitfor "$W/px.out" || exit 1
PP=$(sed -n 's/^listening on 127\.0\.0\.1:\([0-9]*\)$/\1/p' "$W/px.out")
req() { # LABEL ARGS...
	label=$1
	shift
	echo "$label $(python3 "$T/get.py" "$PP" "$@")" >>"$W/results"
	echo "$label-queries $(grep -c . "$W/queries")" >>"$W/results"
}
req connect1 "CONNECT rebind.test:8080 HTTP/1.1\r\n\r\n" "GET / HTTP/1.0\r\n\r\n"
req connect2 "CONNECT rebind.test:8080 HTTP/1.1\r\n\r\n" "GET / HTTP/1.0\r\n\r\n"
req plain1 "GET http://rebind2.test:8080/ HTTP/1.1\r\nHost: rebind2.test:8080\r\n\r\n"
req plain2 "GET http://rebind2.test:8080/ HTTP/1.1\r\nHost: rebind2.test:8080\r\n\r\n"
req mixed "CONNECT mixed.test:8080 HTTP/1.1\r\n\r\n"
req meta "GET http://meta.test/latest/meta-data/ HTTP/1.1\r\nHost: meta.test\r\n\r\n"
req cgnat "CONNECT cgnat.test:8080 HTTP/1.1\r\n\r\n"
req v6 "CONNECT v6.test:8080 HTTP/1.1\r\n\r\n"
# IDNA through curl, which sends A-labels: the U-label entry matches its
# A-label; a look-alike (Cyrillic a) does not match the ASCII entry.
idn() { # LABEL HOST
	echo "$1 $(LC_ALL=C.UTF-8 curl -s -x "http://127.0.0.1:$PP" -w ' %{http_code}' "http://$2:8080/" | tr -d '\n')" \
		>>"$W/results"
}
idn idn-ulabel "b$(printf '\303\274')cher.test"
idn idn-ascii apple.test
idn idn-lookalike "$(printf '\320\260')pple.test"
kill "$PX"
wait "$PX"
echo "proxy-exit $?" >>"$W/results"
kill "$DNS" "$UP1" "$UP2" 2>/dev/null
exit 0
SH

check() { # WHO
	who=$1
	W="$T/w-$who"
	mkdir -p "$W"
	[ "$who" = nobody ] && chown 65534:65534 "$W"
	$RUN_AS env T="$T" CORDON="$CORDON" unshare -r -n -m sh "$T/inner.sh" "$W" >"$W/inner.log" 2>&1
	is $? 0 "$who: the namespaces, the resolver, the upstreams and the proxy start"
	res() { sed -n "s/^$1 //p" "$W/results"; }
	is "$(res connect1)" "200 vetted " \
		"$who: CONNECT to an allowed name reaches the address its one answer named"
	is "$(res connect1-queries)" 2 "$who:   one lookup for it (A and AAAA once)"
	case "$(res connect2)" in
	"403 "*"127.0.0.1 is loopback and not named in the allowlist") r=0 ;;
	*) r=1 ;;
	esac
	is "$r" 0 "$who: the same name rebound to 127.0.0.1 is refused with the reason"
	is "$(res connect2-queries)" 4 "$who:   again one lookup, never a second one per request"
	is "$(res plain1)" "200 vetted " "$who: plain http:// to an allowed name goes to the vetted address"
	case "$(res plain2)" in "403 "*loopback*) r=0 ;; *) r=1 ;; esac
	is "$r" 0 "$who:   and is refused once the name rebinds"
	case "$(res mixed)" in "403 "*"10.1.2.3 is private"*) r=0 ;; *) r=1 ;; esac
	is "$r" 0 "$who: one private address among the answers refuses the name"
	case "$(res meta)" in "403 "*"169.254.169.254 is link-local"*) r=0 ;; *) r=1 ;; esac
	is "$r" 0 "$who: a name for the metadata address is refused"
	case "$(res cgnat)" in "403 "*"100.64.0.1 is cgnat"*) r=0 ;; *) r=1 ;; esac
	is "$r" 0 "$who: a name for a CGNAT address is refused"
	case "$(res v6)" in "403 "*"[::ffff:127.0.0.1] is loopback"*) r=0 ;; *) r=1 ;; esac
	is "$r" 0 "$who: an IPv4-mapped IPv6 answer takes the embedded address's class"
	is "$(cat "$W/rebound.count" 2>/dev/null || echo 0)" 0 \
		"$who: nothing ever connected to the rebound address"
	is "$(cat "$W/vetted.count" 2>/dev/null || echo 0)" 4 \
		"$who: the vetted address had exactly the four allowed requests"
	if command -v curl >/dev/null 2>&1; then
		is "$(res idn-ulabel)" "vetted 200" \
			"$who: IDNA: an allowlist entry written as a U-label matches curl's A-label"
		is "$(res idn-ascii)" "vetted 200" "$who: IDNA: the ASCII entry works"
		case "$(res idn-lookalike)" in *"not in the allowlist"*" 403") r=0 ;; *) r=1 ;; esac
		is "$r" 0 "$who: IDNA: a look-alike (Cyrillic a) does not match the ASCII entry"
	fi
	is "$(res proxy-exit)" 0 "$who: the proxy stops cleanly"
	# The records: the allowed attempt names the one address resolved and
	# used; the refused ones name what was resolved and no address used.
	$RUN_AS "$CORDON" log export --format jsonl --audit "$W/audit.db" >"$W/log.jsonl"
	got=$(python3 - "$W/log.jsonl" <<'PY'
import json, sys
out = []
for line in open(sys.argv[1]):
    r = json.loads(line)
    if r["kind"] != "egress":
        continue
    d = r.get("details") or {}
    out.append("%s %s %s %s" % (r["target"], r["decision"], ",".join(d.get("addresses", [])),
                                d.get("address", "-")))
print(";".join(out))
PY
)
	is "$got" "rebind.test:8080 allow 127.0.0.2 127.0.0.2;rebind.test:8080 deny 127.0.0.1 -;rebind2.test:8080 allow 127.0.0.2 127.0.0.2;rebind2.test:8080 deny 127.0.0.1 -;mixed.test:8080 deny 127.0.0.2,10.1.2.3 -;meta.test:80 deny 169.254.169.254 -;cgnat.test:8080 deny 100.64.0.1 -;v6.test:8080 deny [::ffff:127.0.0.1] -;xn--bcher-kva.test:8080 allow 127.0.0.2 127.0.0.2;apple.test:8080 allow 127.0.0.2 127.0.0.2;xn--pple-43d.test:8080 deny  -" \
		"$who: each attempt's record names the addresses resolved and the one used"
	[ -s "$W/results" ] || sed 's/^/#   /' "$W/inner.log" | head -20
}
for_each_user check

done_testing
