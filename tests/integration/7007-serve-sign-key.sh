#!/bin/sh
# 7007-serve-sign-key.sh — `cordon serve --sign-key K` end to end (issue
# 19): alice, whose own key the policy pins (approvers.keys), logs in with
# a one-time link and approves a held `cordon run` in the console; the run
# proceeds, and the decision row carries a signature that verifies (openssl,
# over the documented message) under K's public key, listed in
# approvers.consoles, and not under alice's.  A console without
# --sign-key on the same policy cannot release a held run: refused at the
# button, the run still waits and is denied at its (short) timeout, on
# the record as approval.expired (never an answer refused).
# Root only: the console is the operator's (the sandbox halves are 7002's).
. "${CORDON_SRC:-.}/tests/lib.sh"
. "$CORDON_SRC/tests/helpers/serve-start.sh"

for n in console alice; do
	"$CORDON" approvals keygen --key "$T/$n.key" >"$T/$n.pub" 2>/dev/null
done
cat >"$T/p.yaml" <<YAML
version: 1
agents:
  - {id: coder, owner: alice}
tools:
  - {id: shell, kind: command}
profiles:
  ws: {workspace: write}
approvers:
  people: [alice]
  keys:
    alice: "$(cat "$T/alice.pub")"
  consoles: ["$(cat "$T/console.pub")"]
grants:
  - {id: rm, agent: coder, tool: shell, actions: [execute], scope: {argv: [rm]}, approval: human, profile: ws, owner: alice, justification: tests, review_by: 2099-01-01, expires: 2099-01-01}
YAML
P="$T/p.yaml"
cd "$T" && touch v1 v2 && chmod 0666 v1 v2

run_pid=""
trap 'stop_bg $serve_pid $run_pid; _tap_cleanup' EXIT
# console [options]: start a console; its origin in $origin.
console() { serve_start --listen 127.0.0.1:0 --policy "$P" "$@"; }
stop_console() {
	serve_stop 2>/dev/null
	serve_pid=""
}
# hold FILE TIMEOUT: rm FILE held in the background; its id in $id.
hold() {
	("$CORDON" run --policy "$P" --agent coder --approval-timeout "$2" -- rm "$1" \
		>"$T/o-$1" 2>&1; echo $? >"$T/rc-$1") &
	run_pid=$!
	id=""
	i=0
	while [ -z "$id" ] && [ $i -lt 150 ]; do
		id=$("$CORDON" approvals list | awk -v w="$1" 'index($0, w) && $2 == "pending" {print $1; exit}')
		[ -n "$id" ] || sleep 0.1
		i=$((i + 1))
	done
}
approve() {
	code -X POST -H "Cookie: $1" -H "Origin: $origin" \
		--data "csrf=$(csrf_of "$1")&decision=approve" "$origin/calls/$2"
}

# verifies ID PUBFILE: the row's signature verifies under PUBFILE's key,
# over the message of src/lib/gate/approval-sign.c (recomputed here).
verifies() {
	sqlite3 -separator '|' "$CORDON_STATE" "SELECT id, run_id, agent, tool, action, args_sha256, created,
		status, decided_by, decided_at, signature FROM approvals WHERE id = '$1'" >"$T/row"
	/usr/bin/python3 - "$T/row" "$2" "$T/v" <<-'EOP' || return 1
		import base64, hashlib, sys
		f = open(sys.argv[1]).read().rstrip("\n").split("|")
		names = ["id", "run_id", "agent", "tool", "action", "args_sha256", "created",
		         "decision", "by", "decided_at"]
		f[7] = "approved" if f[7] in ("approved", "used") else "denied"
		h = hashlib.sha512(b"cordon approval decision v1\n")
		for n, v in zip(names, f[:10]):
		    b = v.encode()
		    h.update(("%s %d:" % (n, len(b))).encode() + b + b"\n")
		open(sys.argv[3] + ".msg", "wb").write(h.digest())
		open(sys.argv[3] + ".sig", "wb").write(base64.b64decode(f[10][len("ed25519:"):]))
		pk = base64.b64decode(open(sys.argv[2]).read().strip()[len("ed25519:"):])
		der = bytes.fromhex("302a300506032b6570032100") + pk
		open(sys.argv[3] + ".pem", "w").write("-----BEGIN PUBLIC KEY-----\n" +
		    base64.b64encode(der).decode() + "\n-----END PUBLIC KEY-----\n")
	EOP
	openssl pkeyutl -verify -pubin -inkey "$T/v.pem" -rawin -in "$T/v.msg" -sigfile "$T/v.sig" >/dev/null 2>&1
}

# The console with --sign-key: alice approves, the run proceeds.
console --sign-key "$T/console.key"
case $link in http://127.0.0.1:*/login\?t=*) ok "serve --sign-key starts ($origin)" true ;;
*) nok "serve --sign-key starts ($link; $(cat "$T/serve.err"))" true ;; esac
hold v1 60s
ok "the call is held ($id)" test -n "$id"
s=$(login_as alice "$P")
ok "alice logs in with a one-time link" test -n "$s"
isb "$(approve "$s" "$id")" 303 "alice approves in the console"
wait $run_pid
run_pid=""
is "$(cat "$T/rc-v1")" 0 "the held run proceeds (exit 0)"
nok "... and removed the file" test -e v1
ok "the decision row's signature verifies under the console key (approvers.consoles)" verifies "$id" "$T/console.pub"
case $(cut -d'|' -f9,11 "$T/row") in alice\|ed25519:*) ok "... a decision in alice's name" true ;;
*) nok "... a decision in alice's name ($(cat "$T/row"))" true ;; esac
nok "... and not under alice's own key (control: the check can fail)" verifies "$id" "$T/alice.pub"
stop_console

# The console without --sign-key: it cannot release the call.
console
hold v2 6s
ok "a second call is held ($id)" test -n "$id"
s=$(login_as alice "$P")
st=$(approve "$s" "$id")
nok "a console without --sign-key does not take alice's approval ($st)" test "$st" = 303
case $(tr '\n' ' ' <"$T/body") in *"the policy pins a key for"*) ok "... saying why" true ;;
*) nok "... saying why ($(head -c 300 "$T/body" | tr '\n' ' '))" true ;; esac
wait $run_pid
run_pid=""
is "$(cat "$T/rc-v2")" 125 "the run waits, then is denied at its timeout (exit 125)"
ok "... and nothing ran" test -e v2
is "$(sqlite3 "$CORDON_STATE" "SELECT status FROM approvals WHERE id = '$id'")" expired "... the request expired unanswered"
"$CORDON" log export --format jsonl >"$T/log"
is "$(grep "$id" "$T/log" | grep -c '"approval.expired"')" 1 "... on the record as approval.expired"
is "$(grep "$id" "$T/log" | grep -c '"approval.refused"')" 0 "... with no answer ever written to refuse"
stop_console
done_testing
