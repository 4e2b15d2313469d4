#!/bin/sh
# cordon mcp --listen: a call held for approval through the front (the
# SDK's StreamableHTTPClientTransport), approved with `cordon approvals
# approve` after 11 s, reaches the client (the answer then comes as an
# event stream, kept alive); TLS with --tls-cert/--tls-key (a client that
# trusts the certificate connects; plain HTTP and an untrusting client do
# not); off loopback without TLS the front does not start.
. "${CORDON_SRC:-.}/tests/lib.sh"

. "$CORDON_SRC/tests/helpers/mcp-front-fixture.sh"

# A call held for approval through the front: the SDK client waits, a
# person approves, the result reaches it (after 10 s: as an event stream).
. "$CORDON_SRC/tests/mcp/setup.sh"
if mcp_setup; then
	front f2
	mkdir -p "$D/sdk"
	cp "$CORDON_SRC/tests/mcp/http-client.mjs" "$D/sdk/"
	ln -s "$MCP_CACHE/node_modules" "$D/sdk/node_modules"
	init 2025-06-18
	post "$S" '{"jsonrpc":"2.0","id":1,"method":"tools/list"}' >/dev/null
	"$CORDON" mcp pins approve --server t --all >/dev/null
	: >"$D/log/calls"
	MCP_URL=$U MCP_TOKEN=$A MCP_OPS='[{"op":"call","name":"held","args":{"text":"h"}}]' \
		node "$D/sdk/http-client.mjs" >"$D/held.out" 2>"$D/sdk.err" &
	BG=$!
	aid=""
	i=0
	while [ -z "$aid" ] && [ $i -lt 150 ]; do
		sleep 0.1
		i=$((i + 1))
		aid=$("$CORDON" approvals list 2>/dev/null | awk '$2 == "pending" {print $1; exit}')
	done
	ok "the held call is queued ($aid)" test -n "$aid"
	sleep 11
	is "$(cat "$D/log/calls")" "" "... and has not reached the server after 11 s"
	ok "a person approves" "$CORDON" approvals approve "$aid" --as bob
	wait $BG
	BG=""
	is "$(cat "$D/held.out")" '{"isError":false,"text":"ran held"}' "the SDK client gets the result"
	is "$(cat "$D/log/calls")" held "... the server ran it once"
	stop_front
else
	skip "cannot install the MCP SDK (npm ci)"
fi

# TLS: --tls-cert/--tls-key; a client that trusts the certificate
# connects, plain HTTP to it does not.
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2 -subj /CN=127.0.0.1 -addext subjectAltName=IP:127.0.0.1 \
	-keyout "$D/key.pem" -out "$D/cert.pem" 2>/dev/null
front f3 --tls-cert "$D/cert.pem" --tls-key "$D/key.pem"
case $U in https://127.0.0.1:*) r=0 ;; *) r=1 ;; esac
is "$r" 0 "TLS: the front says https ($U)"
is "$(post "" '{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}' --cacert "$D/cert.pem")" 200 "TLS: initialize over https"
H=$(echo "$U" | sed 's/^https/http/')
st=$(curl -s -o /dev/null -w '%{http_code}' --max-time 5 -X POST "$H" -H "Authorization: Bearer $A" --data-binary '{}')
nok "TLS: plain http to it gets no answer ($st)" test "$st" = 200
st=$(curl -s -o /dev/null -w '%{http_code}' --max-time 5 -X POST "$U" -H "Authorization: Bearer $A" --data-binary '{}')
is "$st" 000 "TLS: a client that does not trust the certificate does not connect"
stop_front
"$CORDON" mcp --listen 0.0.0.0:0 --policy "$D/policy.yaml" -- $SRV >/dev/null 2>"$D/f4.err"
r=$?
nok "off loopback without TLS: refused at start ($r)" test "$r" = 0
ok "... saying why" grep -q 'tls-cert' "$D/f4.err"
done_testing
