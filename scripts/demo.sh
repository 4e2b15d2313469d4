#!/bin/sh
# make demo: run a few commands an agent might try through `cordon run` with
# the built-in strict profile, and show what the sandbox allowed and denied.
set -u
CORDON=${1:-build/cordon}
case "$CORDON" in /*) ;; *) CORDON=$(pwd)/$CORDON ;; esac

# A throwaway project directory: cordon refuses /, /tmp or a home
# directory as the working directory, since it would expose them.
proj=$(mktemp -d /tmp/cordon-demo.XXXXXX)
chmod 0755 "$proj"
trap 'rm -rf "$proj"' EXIT
printf 'print("hello from the sandbox")\n' >"$proj/hello.py"
# The demo's runs go to their own audit log, not the operator's.
export CORDON_AUDIT="$proj/.state/audit.db"
cd "$proj" || exit 1

bold() { printf '\n\033[1m== %s\033[0m\n' "$*"; }
show() {
	printf '$ cordon run -- %s\n' "$*"
	"$CORDON" run --json-fd 3 -- "$@" 3>"$proj/.rec" 2>&1 | sed 's/^/  | /'
	python3 - "$proj/.rec" <<'PY' 2>/dev/null || cat "$proj/.rec"
import json, sys
r = json.load(open(sys.argv[1]))
d = ", ".join("%s x%d" % (e["syscall"], e["count"]) for e in r.get("denied_syscalls", []))
w = [k for k, v in r.get("walls", {}).items() if v]
print("  -> reason=%s exit=%s wall=%sms%s" % (r["reason"], r["exit_code"], r["wall_ms"],
      ("  denied syscalls: " + d) if d else ""))
PY
}

bold "1. a normal command runs: python, the scratch dir is writable"
show sh -c 'python3 hello.py; echo scratch > /tmp/note && cat /tmp/note; id'
bold "2. the project is read-only: writes fail, nothing lands on the host"
show sh -c 'echo pwned > hello.py'
bold "3. host secrets are not there: /etc/shadow, /root, /home, host env"
show sh -c 'ls /etc/shadow /root /home; env'
bold "4. no network: only loopback, no route out, no DNS"
show python3 -c 'import socket; socket.create_connection(("1.1.1.1", 443), timeout=2)'
bold "5. privileged syscalls are refused and counted: nested namespaces, ptrace"
show sh -c 'unshare -U -r id; python3 -c "import ctypes; print(\"ptrace:\", ctypes.CDLL(None).syscall(101, 16, 1, 0, 0))"'
bold "6. a runaway loop dies at the wall clock (--timeout 1s), with its children"
printf '$ cordon run --timeout 1s -- sh -c "yes >/dev/null & while :; do :; done"\n'
"$CORDON" run --timeout 1s -- sh -c 'yes >/dev/null & while :; do :; done' >"$proj/.out" 2>&1
rc=$?
sed 's/^/  | /' "$proj/.out"
echo "  -> exit $rc (124: the timeout killed the whole process tree)"
bold "7. every run is in the tamper-evident audit log, decided and recorded before it ran"
"$CORDON" log export --format jsonl | python3 -c '
import json, sys
for r in [json.loads(l) for l in sys.stdin][-6:]:
    argv = (r.get("details") or {}).get("argv")
    print("  | seq %-3d %-11s run %s  %s" % (r["seq"], r["kind"], r["run_id"][:8],
          r.get("decision") or "%s, exit %s" % (r.get("reason"), r.get("exit_code"))),
          " ".join(argv)[:40] if argv else "")'
"$CORDON" log verify 2>&1 | head -1 | sed 's/^/  | /'
bold "done: every run above was a fresh sandbox, destroyed when it ended"
# The README's examples say `cordon`: say exactly how to get there.
printf '\ncordon is built at %s; it is not on your PATH yet. Either:\n' "$CORDON"
printf '  export PATH="%s:$PATH"          # this shell only\n' "$(dirname "$CORDON")"
printf '  make install PREFIX=$HOME/.local   # then ~/.local/bin on your PATH\n'
printf '  make install                       # as root: /usr/local/bin/cordon\n'
printf 'then try: cordon run -- id; cordon run --help\n' 
