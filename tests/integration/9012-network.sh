#!/bin/sh
# THREATS row 12: reach the network without the proxy — raw sockets, TCP,
# UDP/53 DNS, IPv6 literals, ping.  The net namespace is empty (loopback
# only): no route, no resolver, no raw sockets; AF_PACKET is refused by the
# filter (counted); Landlock denies TCP bind and connect even on loopback.
. "${CORDON_SRC:-.}/tests/lib.sh"
H=$CORDON_BUILD/tests/helpers

net() {
	who=$1
	run() { $RUN_AS "$CORDON" run --ro "$H" -- "$H/esc-probe" "$@"; }
	out=$($RUN_AS "$CORDON" run --json-fd 3 --ro "$H" -- "$H/try-syscall" socket-packet socket-netlink socket-netlink-high 3>"$T/rec")
	is "$out" "socket-packet errno=EPERM
socket-netlink errno=EPERM
socket-netlink-high errno=EPERM" "$who: AF_PACKET and AF_NETLINK sockets are refused"
	is "$(denied_names "$T/rec")" socket "$who: the record names socket"
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
	if command -v ping >/dev/null 2>&1; then
		refused "$who: ping(1) fails" 'Operation not permitted|Network is unreachable|Permission denied' \
			$RUN_AS "$CORDON" run -- ping -c1 -W1 8.8.8.8
	else
		skip "ping(1) (iputils-ping) is not installed: only esc-probe's ICMP socket above was tried"
	fi
	absent_in "$who: there is no /etc/resolv.conf" /etc/resolv.conf $RUN_AS "$CORDON" run --
	is "$($RUN_AS "$CORDON" run -- sh -c 'getent hosts example.com; echo "getent=$?"; getent hosts localhost >/dev/null; echo "localhost=$?"')" \
		"getent=2
localhost=0" "$who: getent hosts example.com finds nothing (2), while localhost (/etc/hosts) resolves"
	refused "$who: python cannot resolve a name either" 'socket.gaierror' \
		$RUN_AS "$CORDON" run -- /usr/bin/python3 -c 'import socket; socket.getaddrinfo("example.com", 443)'
	is "$($RUN_AS "$CORDON" run -- sh -c 'grep -v "^Iface" /proc/net/route | wc -l')" 0 "$who: the IPv4 routing table is empty"
	if command -v curl >/dev/null 2>&1; then
		refused "$who: curl cannot reach anything" 'curl: \(7\)' $RUN_AS "$CORDON" run -- curl -sS -m 3 http://93.184.215.14/
	else
		skip "curl is not installed"
	fi
}

for_each_user net
done_testing
