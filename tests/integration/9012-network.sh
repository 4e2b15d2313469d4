#!/bin/sh
# THREATS row 12: reach the network without the proxy — raw sockets, TCP,
# UDP/53 DNS, IPv6 literals, ping.  The net namespace is empty (loopback
# only): no route, no resolver, no raw sockets; AF_PACKET is refused by the
# filter (counted); Landlock denies TCP bind and connect even on loopback.
. "${CORDON_SRC:-.}/tests/lib.sh"
H=$CORDON_BUILD/tests/helpers

denied() {
	python3 -c 'import json,sys
r = json.load(open(sys.argv[1]))
print(" ".join(sorted(set(d["syscall"] for d in r.get("denied_syscalls") or []))))' "$1"
}

net() {
	who=$1
	run() { $RUN_AS "$CORDON" run --ro "$H" -- "$H/esc-probe" "$@"; }
	out=$($RUN_AS "$CORDON" run --json-fd 3 --ro "$H" -- "$H/try-syscall" socket-packet socket-netlink socket-netlink-high 3>"$T/rec")
	is "$out" "socket-packet errno=EPERM
socket-netlink errno=EPERM
socket-netlink-high errno=EPERM" "$who: AF_PACKET and AF_NETLINK sockets are refused"
	is "$(denied "$T/rec")" socket "$who: the record names socket"
	is "$(run raw)" "raw=EPERM" "$who: a raw ICMP socket needs CAP_NET_RAW: refused"
	is "$(run udp 8.8.8.8 53)" "sendto=ENETUNREACH" "$who: UDP to 8.8.8.8:53 has no route"
	is "$(run udp 2001:4860:4860::8888 53)" "sendto=ENETUNREACH" "$who: UDP to an IPv6 resolver has no route"
	is "$(run tcp 1.1.1.1 443)" "connect=EACCES" "$who: TCP connect to an outside address is denied (Landlock, before routing)"
	is "$(run tcp 2606:4700:4700::1111 443)" "connect=EACCES" "$who: TCP connect to an IPv6 literal is denied"
	is "$(run tcp 127.0.0.1 22)" "connect=EACCES" "$who: even a loopback TCP connect is denied"
	is "$(run tcp-bind)" "bind=EACCES" "$who: a TCP listener cannot be bound"
	out=$(run ping 8.8.8.8)
	case "$out" in
	socket=EACCES | sendto=ENETUNREACH) ok "$who: ping has no way out ($out)" true ;;
	*) ok "$who: ping has no way out ($out)" false ;;
	esac
	nok "$who: ping(1), if present, fails" $RUN_AS "$CORDON" run -- sh -c 'command -v ping >/dev/null && ping -c1 -W1 8.8.8.8'
	nok "$who: there is no /etc/resolv.conf" $RUN_AS "$CORDON" run -- test -e /etc/resolv.conf
	nok "$who: getent hosts example.com fails" $RUN_AS "$CORDON" run -- getent hosts example.com
	nok "$who: python cannot resolve a name either" $RUN_AS "$CORDON" run -- /usr/bin/python3 -c 'import socket; socket.getaddrinfo("example.com", 443)'
	is "$($RUN_AS "$CORDON" run -- sh -c 'grep -v "^Iface" /proc/net/route | wc -l')" 0 "$who: the IPv4 routing table is empty"
	nok "$who: curl, if present, cannot reach anything" $RUN_AS "$CORDON" run -- sh -c 'command -v curl >/dev/null && curl -sS -m 3 http://93.184.215.14/'
}

for_each_user net
done_testing
