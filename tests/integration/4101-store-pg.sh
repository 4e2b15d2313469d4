#!/bin/sh
# 4101-store-pg.sh — PostgreSQL as the shared store (issue 19), with a real
# server (tests/helpers/pg-start.sh) and hosts as UTS namespaces
# (unshare --uts + hostname), each with its own writer role:
#   - two hosts write one log; it verifies, one chain per host;
#   - a writer can neither change nor delete records, nor append to
#     another host's chain (row-level security), and cordon on a host its
#     role is not mapped to cannot run;
#   - a record changed by the database owner is caught, and verify names
#     the broken chain; so is a chain cut below this host's signed
#     checkpoint (the file stays in the host's local state directory);
#   - a call held on one host is approved from the other and runs; two
#     approvers racing for one request: one wins, the call runs once;
#   - a break-glass grant revoked on one host stops on the other;
#   - the store stopped: the next run is refused (125) and nothing runs;
#   - the connection secrets (PGPASSWORD, .pgpass, the socket) never reach
#     the sandbox.
: "${CORDON_TEST_TIMEOUT:=240}" # a server, and a suite inside
export CORDON_TEST_TIMEOUT
. "${CORDON_SRC:-.}/tests/lib.sh"
. "$CORDON_SRC/tests/helpers/pg-start.sh"

pg_start || { done_testing; exit; }
ADMIN="postgresql://cordon_admin@/cordon?host=$PG_SOCK"
# The owner's first connection makes the schema.
ok "the owner's first connection makes the schema" env PGPASSWORD="$PG_ADMIN_PW" \
	"$CORDON" log verify --audit "$ADMIN"
pg_audit_hosts a b c

# on HOST ROLE CMD...: CMD as host HOST (its own UTS namespace), connected
# as ROLE, with state and audit in the shared store.
on() {
	_h=$1 _r=$2
	shift 2
	env PGPASSWORD="pw-${_r#host_}" CORDON_AUDIT="postgresql://$_r@/cordon?host=$PG_SOCK" \
		CORDON_STATE="postgresql://$_r@/cordon?host=$PG_SOCK" \
		unshare --uts sh -c 'hostname "$0" && exec "$@"' "$_h" "$@"
}
cat >"$T/on.sh" <<EOS
PG_SOCK=$PG_SOCK
$(sed -n '/^on() {/,/^}/p' "$CORDON_SRC/tests/integration/4101-store-pg.sh")
EOS
verify() { env PGPASSWORD="$PG_ADMIN_PW" "$CORDON" log verify --audit "$ADMIN" "$@"; }

W="$T/w"
mkdir -p "$W" && chmod 0777 "$W" && cd "$W" || exit 1

# ---- two hosts, one log ------------------------------------------------
is "$(on host-a host_a "$CORDON" run -- echo from-a 2>&1)" from-a "host-a runs with the shared store"
is "$(on host-b host_b "$CORDON" run -- echo from-b 2>&1)" from-b "host-b runs with the shared store"
is "$(pg_sql "SELECT host || ':' || count(*) || ':' || max(seq) FROM audit_records GROUP BY host ORDER BY host" | tr '\n' ' ')" \
	"host-a:3:3 host-b:3:3 " "one chain per host, each numbered from 1"
is "$(pg_sql "SELECT count(*) FROM audit_records WHERE kind = 'run.intent' AND details::jsonb->'argv'->>1 = 'from-a'")" 1 \
	"records are readable columns (details queried as jsonb)"
out=$(verify 2>&1)
is "$?" 0 "the shared log verifies"
case $out in *"chains: 2"*"intact: 6 records"*) ok "verify walked both chains ($out)" true ;;
*) nok "verify walked both chains ($out)" true ;; esac

# ---- writers append only, and only to their own chain ----------------
refused "a writer cannot change a record" "permission denied" \
	env PGPASSWORD=pw-a psql -X -qAt -h "$PG_SOCK" -U host_a -d cordon -c "UPDATE audit_records SET reason = 'x'"
refused "a writer cannot delete a record" "permission denied" \
	env PGPASSWORD=pw-a psql -X -qAt -h "$PG_SOCK" -U host_a -d cordon -c "DELETE FROM audit_records"
refused "a writer cannot append to another host's chain" "row-level security" \
	env PGPASSWORD=pw-a psql -X -qAt -h "$PG_SOCK" -U host_a -d cordon -c \
	"INSERT INTO audit_records (host, seq, time_ns, kind, prev_hash, hash) VALUES ('host-b', 99, 1, 'x', 'a', 'b')"
ok "... while its own chain takes its records (control)" \
	env PGPASSWORD=pw-a psql -X -qAt -h "$PG_SOCK" -U host_a -d cordon -c "SELECT 1 FROM audit_records WHERE host = 'host-a' LIMIT 1"
out=$(on host-b host_a "$CORDON" run -- touch "$W/wrong-chain" 2>&1)
is "$?" 125 "cordon on a host its role is not mapped to does not run (125)"
case $out in *"row-level security"*) ok "... and says the store refused the record" true ;;
*) nok "... and says the store refused the record ($out)" true ;; esac
[ ! -e "$W/wrong-chain" ]
is "$?" 0 "... and nothing ran"

# ---- held on one host, approved from the other -----------------------
# Decisions through the shared store are signed (approval-sign.h): each
# approver's key, pinned in the policy.
for n in alice bob; do "$CORDON" approvals keygen --key "$T/$n.key" >"$T/$n.pub" 2>/dev/null; done
cat >"$T/p.yaml" <<'YAML'
version: 1
agents:
  - {id: coder, owner: alice}
tools:
  - {id: shell, kind: command}
profiles:
  ws: {workspace: write}
approvers:
  people: [alice, bob]
  keys: {alice: "ALICE_KEY", bob: "BOB_KEY"}
break_glass: {max_ttl: 1h}
grants:
  - id: rm
    agent: coder
    tool: shell
    actions: [execute]
    scope: {argv: [rm]}
    approval: human
    profile: ws
    owner: alice
    justification: tests
    review_by: 2099-01-01
    expires: 2099-01-01
YAML
sed -i "s|ALICE_KEY|$(cat "$T/alice.pub")|; s|BOB_KEY|$(cat "$T/bob.pub")|" "$T/p.yaml"
chmod 0644 "$T/p.yaml"
P=$T/p.yaml
pending() { # the id of the pending request naming $1, as host $2 sees it
	_i=0
	while [ $_i -lt 100 ]; do
		_id=$(on "$2" "host_${2#host-}" "$CORDON" approvals list |
			awk -v w="\"$1\"" 'index($0, w) && $2 == "pending" {print $1; exit}')
		[ -n "$_id" ] && { echo "$_id"; return 0; }
		sleep 0.1
		_i=$((_i + 1))
	done
	return 1
}
touch v1 v2
(on host-a host_a "$CORDON" run --policy "$P" --agent coder --approval-timeout 60s -- rm v1 \
	>"$T/o1" 2>&1; echo $? >"$T/rc1") &
bgp=$!
id=$(pending v1 host-b)
is "$?" 0 "a call held on host-a is listed on host-b ($id)"
ok "host-b approves it" on host-b host_b "$CORDON" approvals approve "$id" --as alice --key "$T/alice.key"
wait $bgp
is "$(cat "$T/rc1")" 0 "the held call ran on host-a"
[ ! -e v1 ]
is "$?" 0 "... and removed the file"

# Two approvers race for one request, from two hosts: one wins.
(on host-a host_a "$CORDON" run --policy "$P" --agent coder --approval-timeout 60s -- rm v2 \
	>"$T/o2" 2>&1; echo $? >"$T/rc2") &
bgp=$!
id2=$(pending v2 host-a)
(on host-a host_a "$CORDON" approvals approve "$id2" --as alice --key "$T/alice.key" >/dev/null 2>&1; echo $? >"$T/ra") &
pa=$!
(on host-b host_b "$CORDON" approvals approve "$id2" --as bob --key "$T/bob.key" >/dev/null 2>&1; echo $? >"$T/rb") &
pb=$!
wait $pa $pb $bgp
is "$(cat "$T/ra" "$T/rb" | sort | tr '\n' ' ')" "0 1 " "two racing approvals: exactly one succeeds"
is "$(cat "$T/rc2")" 0 "the call ran"
is "$(pg_sql "SELECT status FROM approvals WHERE id = '$id2'")" used "the approval was used, once"
is "$(verify --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["intact"])')" True \
	"the log still verifies"
n=$(env PGPASSWORD="$PG_ADMIN_PW" "$CORDON" log export --format jsonl --audit "$ADMIN" |
	grep -c "\"approval.approved\".*$id2\|$id2.*\"approval.approved\"")
is "$n" 1 "one approval.approved record for the raced request"

# ---- break-glass revoked on one host stops on the other --------------
bg=$(on host-a host_a "$CORDON" grant break-glass --policy "$P" --agent coder --tool shell \
	--actions execute --scope 'argv=echo' --ticket INC-9 --ttl 10m --by bob --key "$T/bob.key" | cut -f1)
case $bg in bg-*) ok "host-a makes a break-glass grant ($bg)" true ;; *) nok "host-a makes a break-glass grant ($bg)" true ;; esac
is "$(on host-b host_b "$CORDON" run --policy "$P" --agent coder -- echo glass 2>&1)" glass \
	"host-b runs under it"
ok "host-a revokes it" on host-a host_a "$CORDON" grant revoke "$bg" --by bob
out=$(on host-b host_b "$CORDON" run --policy "$P" --agent coder -- echo glass 2>&1)
is "$?" 125 "host-b's next use is refused"
is "$(pg_sql "SELECT uses || ' ' || ended FROM temp_grants WHERE id = '$bg'")" "1 revoked" \
	"its use counter and revocation are shared"

# ---- a row changed in the database -----------------------------------
ok "before the change, the log verifies (control)" verify
was=$(pg_sql "SELECT reason FROM audit_records WHERE host = 'host-b' AND seq = 1")
pg_sql "UPDATE audit_records SET reason = 'nothing to see' WHERE host = 'host-b' AND seq = 1"
out=$(verify 2>&1)
is "$?" 1 "a record changed by the owner fails verify"
case $out in *"chain 'host-b': seq 1: modified"*) ok "... naming the chain and the record" true ;;
*) nok "... naming the chain and the record ($out)" true ;; esac
pg_sql "UPDATE audit_records SET reason = \$\$$was\$\$ WHERE host = 'host-b' AND seq = 1"
ok "put back, it verifies again" verify

# ---- signed checkpoints: this host's file, in its local state dir ----
K=$T/ck
mkdir -p "$K/w" && chmod -R 0755 "$K"
(
	export HOME="$K" XDG_CONFIG_HOME="$K/cfg" XDG_STATE_HOME="$K/st"
	cd "$K/w" || exit 1
	"$CORDON" log keygen >/dev/null
	for i in 1 2 3; do on host-c host_c "$CORDON" run -- /bin/true; done
	on host-c host_c "$CORDON" log checkpoint >/dev/null
)
ok "the checkpoint file of a shared store is written in the local state dir" \
	test -s "$K/st/cordon/audit-pg.checkpoints"
ck() { env HOME="$K" XDG_CONFIG_HOME="$K/cfg" XDG_STATE_HOME="$K/st" sh -c '. "$0"; cd "$1" && on host-c host_c "$CORDON" log verify' "$T/on.sh" "$K/w"; }
ok "host-c's chain verifies against its checkpoints (control)" ck
pg_sql "DELETE FROM audit_records WHERE host = 'host-c' AND seq > 4"
out=$(ck 2>&1)
is "$?" 1 "the owner cutting host-c's chain below a signed checkpoint fails verify"
case $out in *"chain 'host-c'"*"signed checkpoint covers"*) ok "... naming the chain and the checkpoint" true ;;
*) nok "... naming the chain and the checkpoint ($out)" true ;; esac
pg_sql "DELETE FROM audit_records WHERE host = 'host-c'"

# ---- connection secrets never reach the sandbox ----------------------
H=$T/home
mkdir -p "$H" && chmod 0755 "$H"
printf '*:*:*:host_a:pw-a\n' >"$H/.pgpass" && chmod 0600 "$H/.pgpass"
refused "a sandbox that would write the directory holding .pgpass is refused" "cordon's own file" \
	env HOME="$H" XDG_STATE_HOME="$S/xdg" sh -c '. "$0"; on host-a host_a "$CORDON" run --allow-home --rw "$HOME" -- true' "$T/on.sh"
# Binds that show the home's directory and the socket's.
inside=$(HOME=$H XDG_STATE_HOME="$S/xdg" on host-a host_a "$CORDON" run --allow-home --ro "$T" --ro "$PG_DIR" -- sh -c \
	'echo ran; env | grep -c "^PG" ; ls -A "$0" 2>&1; cat "$1/.pgpass" 2>&1' "$PG_SOCK" "$H" 2>&1)
case $inside in ran*) ok "the probe ran inside" true ;; *) nok "the probe ran inside ($inside)" true ;; esac
case $inside in *pw-a*) nok "the .pgpass is hidden inside ($inside)" true ;;
*) ok "the .pgpass is hidden inside" true ;; esac
case $inside in *.s.PGSQL*) nok "the socket directory is hidden inside ($inside)" true ;;
*) ok "the socket directory is hidden inside" true ;; esac
is "$(printf '%s\n' "$inside" | sed -n 2p)" 0 "no PG* variable (PGPASSWORD) inside"
ok "... while on the host both are there (control)" test -S "$PG_SOCK/.s.PGSQL.5432" -a -s "$H/.pgpass"

# ---- the store stopped ------------------------------------------------
pg_stop
out=$(on host-a host_a "$CORDON" run -- touch "$W/after-stop" 2>&1)
is "$?" 125 "the store stopped: the next run is refused (125)"
[ ! -e "$W/after-stop" ]
is "$?" 0 "... and nothing ran"
case $out in *"cannot connect"*) ok "... saying the store cannot be reached" true ;;
*) nok "... saying the store cannot be reached ($out)" true ;; esac
out=$(env CORDON_AUDIT="postgresql://host_a:pw-secret@/cordon?host=$PG_SOCK" "$CORDON" run -- true 2>&1)
case $out in *pw-secret*) nok "a password in the URI is never printed ($out)" true ;;
*"cannot connect"*) ok "a password in the URI is never printed" true ;;
*) nok "a password in the URI is never printed: no refusal ($out)" true ;; esac
out=$(env CORDON_AUDIT="postgresql:///cordon?host=$PG_SOCK&user=host_a&password=pw-secret" "$CORDON" run -- true 2>&1)
case $out in *pw-secret*) nok "... nor one among its parameters ($out)" true ;;
*"cannot connect"*) ok "... nor one among its parameters" true ;;
*) nok "... nor one among its parameters: no refusal ($out)" true ;; esac
pg_start
is "$(on host-a host_a "$CORDON" run -- echo back 2>&1)" back "the store back: runs resume (control)"
ok "and the log verifies" verify
done_testing
