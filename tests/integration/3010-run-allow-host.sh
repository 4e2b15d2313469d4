#!/bin/sh
# cordon run --allow-host: the sandbox reaches exactly the named
# destinations through cordon's egress proxy, and nothing without it; every
# attempt is in the audit log under the run's id.  Loopback only: the
# "outside" server is a python3 HTTP server on the host's 127.0.0.1.
. "${CORDON_SRC:-.}/tests/lib.sh"

start_http_server
server=$http_pid
port=$http_port

egress() {
	who=$1
	db=$CORDON_AUDIT
	[ -n "$RUN_AS" ] && db="$S/.state-nobody/audit.db"
	is "$($RUN_AS "$CORDON" run --allow-host "127.0.0.1:$port" -- curl -s "http://127.0.0.1:$port/")" \
		outside-ok "$who: an allowed destination is reached through the proxy (curl, HTTP_PROXY)"
	is "$($RUN_AS "$CORDON" run --allow-host "127.0.0.1:$port" -- python3 -c "import urllib.request; print(urllib.request.urlopen('http://127.0.0.1:$port/').read().decode())")" \
		outside-ok "$who: ... and with python's urllib"
	is "$($RUN_AS "$CORDON" run --allow-host "127.0.0.1:$port" -- curl -s --socks5-hostname 127.0.0.1:3128 "http://127.0.0.1:$port/")" \
		outside-ok "$who: ... and over SOCKS5 on the same port (curl --socks5-hostname)"
	is "$($RUN_AS "$CORDON" run --allow-host "127.0.0.1:$port" -- curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$((port + 1))/")" \
		403 "$who: another port of the same host is refused by the proxy (403)"
	is "$($RUN_AS "$CORDON" run --allow-host "127.0.0.1:$port" -- curl -s -o /dev/null -w '%{http_code}' "http://localhost:$port/")" \
		403 "$who: localhost is not 127.0.0.1: a name never vouches for a loopback address"
	nok "$who: ignoring the proxy gets no connection (Landlock allows only the proxy port)" \
		$RUN_AS "$CORDON" run --allow-host "127.0.0.1:$port" -- curl -s --noproxy '*' --max-time 3 "http://127.0.0.1:$port/"
	nok "$who: a raw socket to the destination fails too" \
		$RUN_AS "$CORDON" run --allow-host "127.0.0.1:$port" -- python3 -c "import socket; socket.create_connection(('127.0.0.1', $port), timeout=2)"
	nok "$who: without --allow-host there is no proxy at all" \
		$RUN_AS "$CORDON" run -- curl -s --max-time 3 -x "http://127.0.0.1:3128" "http://127.0.0.1:$port/"
	$RUN_AS "$CORDON" run --json --allow-host "127.0.0.1:$port" -- curl -s -o /dev/null "http://127.0.0.1:$port/x" >"$T/rec"
	run_id=$(tail -1 "$T/rec" | python3 -c 'import json,sys; print(json.load(sys.stdin)["run_id"])')
	is "$("$CORDON" log export --format jsonl --audit "$db" | python3 -c "
import json, sys
print(sum(1 for r in map(json.loads, sys.stdin) if r['kind'] == 'egress' and r.get('run_id') == '$run_id' and r.get('decision') == 'allow'))")" \
		1 "$who: the attempt is an egress record under the run's id"
	ok "$who: the log verifies" "$CORDON" log verify --audit "$db"
	sleep 0.3
	nok "$who: no proxy outlives its run" pgrep -f "cordon proxy --listen-fd 3 --stop-fd 4 --run-id $run_id"
}

for_each_user egress

"$CORDON" run --allow-host 'EXAMPLE.COM.' -- true 2>"$T/err"
is $? 125 "an unnormalized host is refused"
"$CORDON" run --allow-host "127.0.0.1:$port" --net none -- true 2>/dev/null
is $? 125 "--net none and --allow-host together are refused"
kill "$server" 2>/dev/null
done_testing
