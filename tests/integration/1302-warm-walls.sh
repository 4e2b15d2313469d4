#!/bin/sh
# The warm service is cordon's own, never a sandbox's: its directory is
# masked in every sandbox (a tmpfs over the directory, which a service
# restart's new socket does not detach) and a writable bind of it refuses
# the run; the service opens only an existing audit log, a regular file
# of the user's, never a symlink, never creating one.  The attacker's
# case: rootless (uid 65534, the sandbox has the service's uid), its own
# HOME, XDG_RUNTIME_DIR unset, the audit log and state elsewhere, so the
# service listens in ~/.local/state/cordon, which the state does not hide.
. "${CORDON_SRC:-.}/tests/lib.sh"

[ "$(id -u)" -eq 0 ] || { skip "needs root for the uid 65534 half"; done_testing; }

H=$T/home
L=$S/nlogs
mkdir -p "$H" "$T/proj" "$T/ro" "$L"
chown 65534:65534 "$H" "$T/proj" "$T/ro" "$L"
chmod 0700 "$L"
cat >"$T/proj/cl.py" <<'PY'
import socket, json, struct, sys
s = socket.socket(socket.AF_UNIX)
try:
    s.connect(sys.argv[1])
except OSError as e:
    print("connect-failed", e.errno); sys.exit(0)
def tx(o):
    b = json.dumps(o).encode()
    s.sendall(struct.pack('<I', len(b)) + b)
    n = struct.unpack('<I', s.recv(4))[0]
    d = b''
    while len(d) < n: d += s.recv(n - len(d))
    print(d.decode(), flush=True)
tx({"op": "open", "audit": sys.argv[2], "every": 0, "secs": 0})
tx({"op": "append", "lazy": False, "recs": [{"kind": "run.result", "run_id": "forged",
    "agent": "x", "decision": "allow", "reason": "FORGED from inside", "exit_code": 0}]})
PY
chmod 0644 "$T/proj/cl.py"
SOCK=$H/.local/state/cordon/service.sock
DB=$L/audit.db

# As the attacker had it: nobody, env -i, no XDG_RUNTIME_DIR, CORDON_AUDIT
# and CORDON_STATE outside HOME.
nb() {
	as_nobody env -i PATH=/usr/bin:/bin HOME="$H" CORDON_AUDIT="$DB" \
		CORDON_STATE="$L/state.db" CORDON_WARM=1 CORDON_SERVICE_IDLE=60 "$@"
}
svc_kill() {
	p=$(cat "$H/.local/state/cordon/service.lock" 2>/dev/null)
	[ -n "$p" ] && kill "$p" 2>/dev/null
	i=0
	while [ -n "$p" ] && kill -0 "$p" 2>/dev/null && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
}
trap 'svc_kill; _tap_cleanup' EXIT
wait_sock() {
	i=0
	while [ ! -S "$SOCK" ] && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
	[ -S "$SOCK" ]
}
last_path() {
	"$CORDON" log export --format jsonl --audit "$DB" | python3 -c '
import json, sys
last = None
for l in sys.stdin:
    x = json.loads(l)
    if x["kind"] == "run.result": last = x
print((last.get("details") or {}).get("path"))'
}
cd "$T/proj" || exit 1

# Positive control: the warm path works for this user.
nb "$CORDON" run -- /bin/true
is $? 0 "the first run runs (cold, it starts the service)"
ok "the service listens in ~/.local/state/cordon" wait_sock
nb "$CORDON" run -- /bin/true
is $? 0 "the second run runs"
is "$(last_path)" warm "the second run went through the service (path warm)"

# (1) From inside a sandbox that binds HOME read-only.
nb "$CORDON" run --allow-home --ro "$H" -- sh -c \
	"echo RAN; ls -a '$H/.local/state/cordon'; python3 '$T/proj/cl.py' '$SOCK' '$DB'" >"$T/in.out" 2>&1
cat "$T/in.out" | sed 's/^/# /'
ok "the sandbox ran and saw HOME" grep -q '^RAN' "$T/in.out"
lacks "the service's directory is empty inside (no socket, no lock)" \
	'service\.(sock|lock)' "$T/in.out" '^RAN'
ok "the socket is not connectable from inside" grep -q '^connect-failed' "$T/in.out"
lacks "no open or append was answered" '"ok"' "$T/in.out" '^RAN'
nb "$CORDON" log export --format jsonl --audit "$DB" >"$T/log.jsonl"
lacks "no forged record is in the log" 'FORGED' "$T/log.jsonl" 'run\.result'
ok "the log verifies" nb "$CORDON" log verify --audit "$DB"

# A writable bind of the service's directory refuses the run.
refused "a writable bind of HOME (holding the service's directory) refuses the run" \
	"cordon's own file .*service\.sock" nb "$CORDON" run --allow-home --rw "$H" -- /bin/true

# (2) A service restart (unlink, bind anew) while a sandbox runs: the
# mask is over the directory, so the new socket stays out of sight.
nb "$CORDON" run --allow-home --ro "$H" -- sh -c \
	"echo RAN; i=0; while [ ! -e '$T/proj/go' ] && [ \$i -lt 200 ]; do sleep 0.1; i=\$((i+1)); done
	 ls -a '$H/.local/state/cordon'; python3 '$T/proj/cl.py' '$SOCK' '$DB'" >"$T/in2.out" 2>&1 &
sbx=$!
i=0
while ! grep -q '^RAN' "$T/in2.out" && [ $i -lt 300 ]; do sleep 0.1; i=$((i + 1)); done
svc_kill
nb "$CORDON" run -- /bin/true >/dev/null 2>&1 # cold; starts a new service
ok "a new service listens (a new socket inode)" wait_sock
touch "$T/proj/go"
wait $sbx
cat "$T/in2.out" | sed 's/^/# /'
ok "the running sandbox reached its check" grep -q '^RAN' "$T/in2.out"
ok "the re-created socket is not connectable from the running sandbox" \
	grep -q '^connect-failed' "$T/in2.out"
lacks "and the directory is still empty inside" 'service\.(sock|lock)' "$T/in2.out" '^RAN'
nb "$CORDON" log export --format jsonl --audit "$DB" >"$T/log.jsonl"
lacks "no forged record is in the log after the restart" 'FORGED' "$T/log.jsonl" 'run\.result'

# (b) The service never creates a database, and opens only a regular
# file of the user's, never through a symlink (asked directly, on the host).
nb python3 "$T/proj/cl.py" "$SOCK" "$T/ro/PLANTED.db" >"$T/plant.out" 2>&1
cat "$T/plant.out" | sed 's/^/# /'
ok "an open naming a new database is refused" grep -q '"ok": *false' "$T/plant.out"
ok "  and nothing was created" test -z "$(ls -A "$T/ro")"
ln -s "$DB" "$T/ro/link.db"
nb python3 "$T/proj/cl.py" "$SOCK" "$T/ro/link.db" >"$T/link.out" 2>&1
ok "an open naming a symlink to the log is refused" grep -q '"ok": *false' "$T/link.out"
cp "$DB" "$T/rootdb.db" && chown 0:0 "$T/rootdb.db" && chmod 0666 "$T/rootdb.db"
nb python3 "$T/proj/cl.py" "$SOCK" "$T/rootdb.db" >"$T/own.out" 2>&1
ok "an open naming another user's file is refused" grep -q '"ok": *false' "$T/own.out"
nb python3 "$T/proj/cl.py" "$SOCK" "$DB" >"$T/good.out" 2>&1
ok "positive control: the user's own log opens" grep -q '"log_id"' "$T/good.out"

# A new log goes cold: its first run creates it itself.
nb env CORDON_AUDIT="$L/new.db" "$CORDON" run -- /bin/true
is $? 0 "a run for a new log runs"
ok "it created the log" test -f "$L/new.db"
DB=$L/new.db
is "$(last_path)" cold "  cold (the service does not create logs)"
nb env CORDON_AUDIT="$L/new.db" "$CORDON" run -- /bin/true
is "$(last_path)" warm "  and the next run for it goes warm"

svc_kill

# Root's half: its service's directory is masked too (root's sandbox runs
# as a slot uid, so the 0700 directory was closed to it anyway).
RH=$T/rhome
mkdir -p "$RH" "$S/rlogs"
rt() {
	env -i PATH=/usr/bin:/bin HOME="$RH" CORDON_AUDIT="$S/rlogs/audit.db" \
		CORDON_STATE="$S/rlogs/state.db" CORDON_WARM=1 CORDON_SERVICE_IDLE=60 "$@"
}
rt "$CORDON" run -- /bin/true
SOCK=$RH/.local/state/cordon/service.sock
ok "root: the service listens in ~/.local/state/cordon" wait_sock
rt "$CORDON" run --allow-home --ro "$RH" -- sh -c \
	"echo RAN; ls -a '$RH/.local/state/cordon' 2>&1" >"$T/r.out" 2>&1
cat "$T/r.out" | sed 's/^/# /'
ok "root: the sandbox listed the directory" grep -qx '\.\.' "$T/r.out"
lacks "root: the service's directory is empty inside" 'service\.(sock|lock)' "$T/r.out" '^RAN'
refused "root: a writable bind of HOME refuses the run" "cordon's own file .*service\.sock" \
	rt "$CORDON" run --allow-home --rw "$RH" -- /bin/true
p=$(cat "$RH/.local/state/cordon/service.lock" 2>/dev/null)
[ -n "$p" ] && kill "$p"
done_testing
