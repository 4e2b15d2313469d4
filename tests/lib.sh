# lib.sh — the shell half of the test harness (TAP), sourced by every
# integration test:  . "${CORDON_SRC:-.}/tests/lib.sh"
#
# Gives each test its own temp dir (removed on exit), a timeout, and
#   ok DESC CMD...             pass when CMD exits 0
#   nok DESC CMD...            pass when CMD fails
#   is GOT WANT DESC           string equality
#   skip WHY                   SKIP (a failure when CORDON_TEST_MUST_WORK=1)
#   done_testing               print the plan, exit 1 if anything failed
#   as_nobody CMD...           run CMD as uid/gid 65534 (the rootless case)
#   for_each_user FUNC         run FUNC as the invoking user, then (when root) as nobody
set -u

: "${CORDON:=$(pwd)/build/cordon}"
: "${CORDON_BUILD:=$(pwd)/build}"
: "${CORDON_SRC:=$(pwd)}"
export CORDON CORDON_BUILD CORDON_SRC

_tap_n=0
_tap_failed=0
T=$(mktemp -d /tmp/cordon-test.XXXXXX)
chmod 0755 "$T"
# cordon's own state (audit log, state database) lives beside the test's
# directory, never in it: a sandbox run from $T must not see it (plan.c
# refuses a writable view of it).
S=$(mktemp -d /tmp/cordon-state.XXXXXX)
chmod 0755 "$S"
trap 'rm -rf "$T" "$S"' EXIT
cd "$T" || exit 1

# A hung test fails instead of stalling prove: kill ourselves after the
# per-test timeout (CORDON_TEST_TIMEOUT seconds, default 120).
(
	sleep "${CORDON_TEST_TIMEOUT:-120}" </dev/null >/dev/null 2>&1
	echo "not ok - test timed out after ${CORDON_TEST_TIMEOUT:-120}s"
	kill -TERM $$ 2>/dev/null
) &
_tap_watchdog=$!
trap 'kill $_tap_watchdog 2>/dev/null; rm -rf "$T" "$S"' EXIT

_tap_line() {
	_tap_n=$((_tap_n + 1))
	if [ "$1" -eq 0 ]; then
		echo "ok $_tap_n - $2"
	else
		_tap_failed=$((_tap_failed + 1))
		echo "not ok $_tap_n - $2"
	fi
}

ok() {
	_desc=$1
	shift
	"$@" >"$T/.ok.out" 2>&1
	_rc=$?
	_tap_line "$_rc" "$_desc"
	if [ "$_rc" -ne 0 ]; then
		echo "#   command failed (exit $_rc): $*"
		sed 's/^/#   /' "$T/.ok.out" | head -20
	fi
	return 0
}

nok() {
	_desc=$1
	shift
	"$@" >"$T/.ok.out" 2>&1
	_rc=$?
	if [ "$_rc" -ne 0 ]; then _tap_line 0 "$_desc"; else
		_tap_line 1 "$_desc"
		echo "#   command succeeded but should have failed: $*"
		sed 's/^/#   /' "$T/.ok.out" | head -20
	fi
	return 0
}

is() {
	if [ "$1" = "$2" ]; then
		_tap_line 0 "$3"
	else
		_tap_line 1 "$3"
		printf '#   got:  %s\n#   want: %s\n' "$1" "$2" | head -20
	fi
}

skip() {
	_tap_n=$((_tap_n + 1))
	if [ "${CORDON_TEST_MUST_WORK:-0}" = 1 ]; then
		_tap_failed=$((_tap_failed + 1))
		echo "not ok $_tap_n - skipped, but CORDON_TEST_MUST_WORK=1: $*"
	else
		echo "ok $_tap_n # SKIP $*"
	fi
}

diag() { echo "# $*"; }

done_testing() {
	echo "1..$_tap_n"
	[ "$_tap_failed" -eq 0 ] || { echo "# $_tap_failed of $_tap_n failed"; exit 1; }
	exit 0
}

# Every cordon run writes the audit log (no log, no run): each test keeps
# its own, one per user, so runs as root and as nobody never share a file.
mkdir -p "$S/.state-root" "$S/.state-nobody"
chown 65534:65534 "$S/.state-nobody" 2>/dev/null
export CORDON_AUDIT="$S/.state-$(id -u | sed 's/^0$/root/')/audit.db"
export CORDON_STATE="$S/.state-$(id -u | sed 's/^0$/root/')/state.db"

as_nobody() {
	CORDON_AUDIT="$S/.state-nobody/audit.db" CORDON_STATE="$S/.state-nobody/state.db" \
		HOME=/nonexistent \
		setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all "$@"
}

# A loopback-only HTTP server standing for "the outside" in egress tests:
# answers every GET with "outside-ok" for up to two minutes.  Sets
# http_port and http_pid; never listens on anything but 127.0.0.1.
start_http_server() {
	python3 -c '
import http.server, socketserver
class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        self.send_response(200); self.end_headers(); self.wfile.write(b"outside-ok")
    def log_message(self, *a): pass
s = socketserver.TCPServer(("127.0.0.1", 0), H)
print(s.server_address[1], flush=True)
s.timeout = 1
for _ in range(120): s.handle_request()
' >"$T/.http-port" &
	http_pid=$!
	_i=0
	while [ ! -s "$T/.http-port" ] && [ $_i -lt 50 ]; do sleep 0.1; _i=$((_i + 1)); done
	http_port=$(cat "$T/.http-port")
}

# Run a test function as the invoking user and, when that is root, again as
# nobody: cordon is rootless first.  The function gets the label as $1.
for_each_user() {
	"$1" "$(id -un)"
	if [ "$(id -u)" -eq 0 ]; then
		RUN_AS=as_nobody "$1" nobody
		RUN_AS=""
	fi
}
RUN_AS=""
