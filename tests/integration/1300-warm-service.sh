#!/bin/sh
# The warm path's service (cli-warm.h): started by the first run, one per
# user, its records group-committed; every run whose service is absent,
# stale, another user's, killed or answering wrongly goes cold and still
# records everything; no acknowledged record is lost to a kill -9.
# About 200 sandboxed runs: on a loaded 2-CPU box that is minutes.
: "${CORDON_TEST_TIMEOUT:=360}"
export CORDON_TEST_TIMEOUT
. "${CORDON_SRC:-.}/tests/lib.sh"

export CORDON_WARM=1 CORDON_SERVICE_DIR="$S/.svc" CORDON_SERVICE_IDLE=60
mkdir -p "$S/.svc" && chmod 1777 "$S/.svc"

# jsonl of the log -> "RESULTS DISTINCT_RUN_IDS WARM COLD INTENTS"
census() {
	"$CORDON" log export --format jsonl --audit "$1" | python3 -c '
import json, sys
res = [json.loads(l) for l in sys.stdin]
r = [x for x in res if x["kind"] == "run.result"]
paths = [(x.get("details") or {}).get("path") for x in r]
print(len(r), len({x["run_id"] for x in r}), paths.count("warm"), paths.count("cold"),
      len([x for x in res if x["kind"] == "run.intent"]))'
}
last_path() {
	"$CORDON" log export --format jsonl --audit "$1" | python3 -c '
import json, sys
last = None
for l in sys.stdin:
    x = json.loads(l)
    if x["kind"] == "run.result": last = x
print((last.get("details") or {}).get("path"))'
}
svc_pid() { cat "$S/.svc/$1/service.lock" 2>/dev/null; }
wait_sock() { # wait_sock UID: until the service listens (5 s)
	i=0
	while [ ! -S "$S/.svc/$1/service.sock" ] && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
	[ -S "$S/.svc/$1/service.sock" ]
}
agents() { # agents N RUNS: N concurrent agents, RUNS runs each; fails count in $T/fails
	: >"$T/fails"
	a=0
	pids=""
	while [ $a -lt "$1" ]; do
		(k=0; while [ $k -lt "$2" ]; do
			$RUN_AS "$CORDON" run -- /bin/true >/dev/null 2>>"$T/agent-err" || echo x >>"$T/fails"
			k=$((k + 1)); done) &
		pids="$pids $!"
		a=$((a + 1))
	done
	wait $pids # not a bare wait: lib.sh's watchdog is a child too
}

warm() {
	who=$1
	uid=0
	db=$CORDON_AUDIT
	[ -n "$RUN_AS" ] && uid=65534 && db="$S/.state-nobody/audit.db"
	mkdir -p "$T/w-$who" && chmod 0755 "$T/w-$who" && cd "$T/w-$who" || exit 1

	$RUN_AS "$CORDON" run -- /bin/true
	is $? 0 "$who: the first run runs"
	is "$(last_path "$db")" cold "$who: it found no service, so it recorded the run itself"
	ok "$who: and started the service" wait_sock $uid
	is "$(stat -c '%a %u' "$S/.svc/$uid")" "700 $uid" "$who: the service's directory is 0700 and the user's"
	is "$(stat -c %u "/proc/$(svc_pid $uid)/status")" "$uid" "$who: the service runs as the user"
	$RUN_AS "$CORDON" run -- sh -c 'exit 4'
	is $? 4 "$who: a warm run passes the exit status through"
	is "$(last_path "$db")" warm "$who: the next run went through the service"
	ok "$who: the log verifies" "$CORDON" log verify --audit "$db"

	# 8 agents x 8 runs: every record there, once, the log linear.
	before=$(census "$db" | cut -d' ' -f1)
	agents 8 4
	is "$(wc -l <"$T/fails")" 0 "$who: 32 concurrent warm runs all ran"
	set -- $(census "$db")
	is "$(($1 - before))" 32 "$who: each has its result record"
	is "$1" "$2" "$who: each result once"
	is "$1" "$5" "$who: an intent for each result"
	ok "$who: the log verifies after concurrent warm runs" "$CORDON" log verify --audit "$db"

	# kill -9 of the service under load: no run fails, no acknowledged
	# record is lost, the log verifies, the service is gone.
	pid=$(svc_pid $uid)
	before=$(census "$db" | cut -d' ' -f2)
	(sleep 0.5; kill -9 "$pid") &
	killer=$!
	agents 8 4
	wait $killer
	is "$(wc -l <"$T/fails")" 0 "$who: every run survived the service's kill -9"
	set -- $(census "$db")
	is "$(($2 - before))" 32 "$who: every run's result is in the log"
	ok "$who: the log verifies after the kill" "$CORDON" log verify --audit "$db"
	# Gone, or a zombie waiting for a parent that does not reap (the
	# service is detached; on some machines pid 1 never reaps).  A zombie
	# reaped between the two looks is gone: looked at once more
	# (fresh-check, session 14: "grep: /proc/PID/status: No such file").
	ok "$who: the killed service is gone" sh -c \
		"! kill -0 $pid 2>/dev/null || grep -q '^State:[[:space:]]*Z' /proc/$pid/status 2>/dev/null || ! kill -0 $pid 2>/dev/null"
	diag "$who: after the kill: $3 warm, $4 cold results in all; $1 results for $2 runs"
	ok "$who: a new service serves the runs that follow" sh -c "
		i=0; while [ \$i -lt 30 ]; do
			$RUN_AS '$CORDON' run -- /bin/true >/dev/null 2>&1
			[ \"\$(cat '$S/.svc/$uid/service.lock' 2>/dev/null)\" != '$pid' ] && [ -S '$S/.svc/$uid/service.sock' ] && exit 0
			sleep 0.2; i=\$((i + 1)); done; exit 1"
	$RUN_AS "$CORDON" run -- /bin/true
	is "$(last_path "$db")" warm "$who: and they are warm again"

	# Switched off: cold, and no service is started.
	kill -9 "$(svc_pid $uid)" 2>/dev/null
	sleep 0.2
	rm -f "$S/.svc/$uid/service.sock"
	CORDON_WARM=0 $RUN_AS "$CORDON" run -- /bin/true
	is "$(last_path "$db")" cold "$who: CORDON_WARM=0 runs cold"
	sleep 0.5
	nok "$who: and starts no service" test -S "$S/.svc/$uid/service.sock"

	# An unwritable log: the same refusal warm and cold.
	cold=$(CORDON_WARM=0 $RUN_AS "$CORDON" run --audit /proc/nope/audit.db -- /bin/true 2>&1)
	c1=$?
	$RUN_AS "$CORDON" run -- /bin/true >/dev/null 2>&1
	wait_sock $uid
	hot=$($RUN_AS "$CORDON" run --audit /proc/nope/audit.db -- /bin/true 2>&1)
	is "$? $c1" "125 125" "$who: an unwritable log refuses the run, warm as cold"
	is "$hot" "$cold" "$who: with the same message"
	cd "$T" || exit 1
}
for_each_user warm

# A service that answers wrongly: the run goes cold and records all.
fake() { # fake SOCK MODE OUT: a listener standing for a broken service
	python3 -c '
import json, os, socket, struct, sys
path, mode, out = sys.argv[1:4]
try: os.unlink(path)
except FileNotFoundError: pass
s = socket.socket(socket.AF_UNIX); s.bind(path); s.listen(8)
open(out, "w").close()
def frame(o):
    b = json.dumps(o).encode(); return struct.pack("<I", len(b)) + b
while True:
    c, _ = s.accept(); got = c.recv(65536)
    with open(out, "a") as f: f.write("%d\n" % len(got))
    if mode == "garbage":
        c.sendall(b"\x05\x00\x00\x00hello")
    elif mode == "badappend" and got:
        c.sendall(frame({"ok": True, "log_id": "0" * 32}))
        c.recv(1 << 22); c.sendall(frame({"ok": True, "last": "x"}))
    c.close()' "$@" &
	fake_pid=$!
	i=0; while [ ! -e "$3" ] && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
}
kill -9 "$(svc_pid 0)" 2>/dev/null
rm -f "$S/.svc/0/service.sock"
mkdir -p "$T/f" && cd "$T/f" || exit 1
for mode in garbage badappend; do
	fake "$S/.svc/0/service.sock" $mode "$T/fake-$mode"
	n0=$(census "$CORDON_AUDIT" | cut -d' ' -f1)
	"$CORDON" run -- sh -c 'exit 5'
	is $? 5 "a service answering $mode: the run runs"
	is "$(last_path "$CORDON_AUDIT")" cold "a service answering $mode: the run recorded itself (cold)"
	is "$(($(census "$CORDON_AUDIT" | cut -d' ' -f1) - n0))" 1 "a service answering $mode: its result is there"
	ok "a service answering $mode: the log verifies" "$CORDON" log verify --audit "$CORDON_AUDIT"
	kill "$fake_pid"; wait "$fake_pid" 2>/dev/null
done

# Another user's listener in nobody's directory: never spoken to.
kill -9 "$(svc_pid 65534)" 2>/dev/null
rm -f "$S/.svc/65534/service.sock"
mkdir -p "$S/.svc/65534" && chown 65534:65534 "$S/.svc/65534" && chmod 700 "$S/.svc/65534"
fake "$S/.svc/65534/service.sock" garbage "$T/fake-foreign"
chmod 777 "$S/.svc/65534/service.sock"
mkdir -p "$T/g" && chmod 755 "$T/g" && cd "$T/g" || exit 1
as_nobody "$CORDON" run -- /bin/true
is $? 0 "nobody, a root-owned listener at its socket: the run runs"
is "$(last_path "$S/.state-nobody/audit.db")" cold "nobody: it went cold"
is "$(sort -u "$T/fake-foreign" | tr '\n' ' ')" "0 " "nobody: not one byte was sent to another user's listener"
kill "$fake_pid"; wait "$fake_pid" 2>/dev/null
cd "$T" || exit 1
done_testing
