# lib.sh — the shell half of the test harness (TAP), sourced by every
# integration test:  . "${CORDON_SRC:-.}/tests/lib.sh"
#
# Gives each test its own temp dir (removed on exit), a timeout, and
#   ok DESC CMD...             pass when CMD exits 0
#   nok DESC CMD...            pass when CMD fails (but not with 127, "not
#                              found": a check whose command is missing
#                              tests nothing).  Prefer refused/lacks: a
#                              wall's test names the denial it expects.
#   refused DESC ERE CMD...    pass when CMD fails AND its output (stdout and
#                              stderr) matches ERE (grep -Ei): the specific
#                              denial, never just any failure
#   lacks DESC ERE FILE [PROOF]  pass when FILE does not match ERE but does
#                              match PROOF (default: the file is not empty):
#                              the output really came from a run
#   nok_if_ran DESC FILE ERE CMD...  nok, but only once FILE matches ERE
#                              (proof that the sandboxed run really happened:
#                              "nothing survived" means nothing otherwise)
#   ok_if_ran DESC FILE ERE CMD...   the same for ok ("the host is unchanged")
#   absent_in DESC PATH RUNNER...  pass when `RUNNER... sh -c ...` ran and
#                              saw no PATH (e.g. RUNNER = $RUN_AS "$CORDON" run --)
#   record_denies DESC REC NAME [COUNT]  the --json record REC counts
#                              refused calls of syscall NAME (COUNT of them)
#   denied_names REC           the names of the syscalls the --json record
#                              REC counts as refused, sorted, on one line
#   planted_paths              the planted_paths of the --json record
#                              $T/rec, sorted, on one line ("absent" when
#                              the record has none)
#   is GOT WANT DESC           string equality
#   skip WHY                   SKIP (a failure when CORDON_TEST_MUST_WORK=1;
#                              listed at the end of `make check` otherwise)
#   done_testing               print the plan, exit 1 if anything failed
#   as_nobody CMD...           run CMD as uid/gid 65534 (the rootless case);
#                              also an executable on PATH (tests/helpers/
#                              as-nobody, as_nobody), usable in `sh -c`
#   for_each_user FUNC         run FUNC as the invoking user, then as nobody
#                              (a SKIP when not root)
#
# An assertion also fails when as_nobody refused to run something since the
# previous assertion (nobody could not reach the build: a permission error
# would pass as a denial).  When nobody cannot reach $CORDON (a checkout in
# a 0700 home), the build and the sources are staged first in a 0755
# directory under /tmp, and CORDON, CORDON_BUILD, CORDON_SRC point there;
# CORDON_TEST_NO_STAGE=1 turns that off.
set -u

: "${CORDON:=$(pwd)/build/cordon}"
: "${CORDON_BUILD:=$(pwd)/build}"
: "${CORDON_SRC:=$(pwd)}"
export CORDON CORDON_BUILD CORDON_SRC

_tap_n=0
_tap_failed=0
_tap_errs_seen=0
_tap_file=$(basename "$0")
T=$(mktemp -d /tmp/cordon-test.XXXXXX)
chmod 0755 "$T"
# cordon's own state (audit log, state database) lives beside the test's
# directory, never in it: a sandbox run from $T must not see it (plan.c
# refuses a writable view of it).
S=$(mktemp -d /tmp/cordon-state.XXXXXX)
chmod 0755 "$S"
_tap_stage=""
_tap_cleanup() {
	kill "${_tap_watchdog:-}" 2>/dev/null
	# the warm path's services this test started (each lock names its pid),
	# for $S and for state directories the test made under $T
	for _l in "$S"/.svc/*/service.lock $(find "$T" -path '*/.svc/*/service.lock' 2>/dev/null); do
		[ -s "$_l" ] && kill -9 "$(cat "$_l")" 2>/dev/null
	done
	rm -rf "$T" "$S" ${_tap_stage:+"$_tap_stage"}
}
trap _tap_cleanup EXIT
# as-nobody writes why it refused to run something here; every assertion
# checks it (see _tap_line).
CORDON_TEST_ERRORS=$S/.harness-errors
CORDON_TEST_DIR=$T
CORDON_TEST_STATE=$S
export CORDON_TEST_ERRORS CORDON_TEST_DIR CORDON_TEST_STATE
: >"$CORDON_TEST_ERRORS"
PATH=$CORDON_SRC/tests/helpers:$PATH
export PATH

# The unprivileged half runs the build as uid 65534: from a checkout nobody
# cannot reach (root's 0700 home) every such case would fail with EACCES, and
# a negative check would take that for a denial.  Stage what those cases use
# — the binary, the test helpers and tools, the sources the tests read — in
# a 0755 directory of its own under /tmp, root-owned, removed on exit.
_nobody_reaches() {
	setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all sh -c \
		'test -x "$1" && test -r "$2/tests/lib.sh" && { test ! -e "$3" || test -x "$3"; }' \
		_ "$CORDON" "$CORDON_SRC" "$CORDON_BUILD/tests/helpers" 2>/dev/null
}
_stage_for_nobody() {
	_tap_stage=$(mktemp -d /tmp/cordon-stage.XXXXXX) || return 1
	mkdir -p "$_tap_stage/build/tests" "$_tap_stage/src" || return 1
	cp "$CORDON" "$_tap_stage/build/cordon" || return 1
	# The OCI runtime is the same binary under another name.
	ln -s cordon "$_tap_stage/build/cordon-oci" || return 1
	for _d in helpers tools preload; do
		[ -d "$CORDON_BUILD/tests/$_d" ] && { cp -R "$CORDON_BUILD/tests/$_d" "$_tap_stage/build/tests/" || return 1; }
	done
	for _d in tests examples docs src scripts; do
		[ -d "$CORDON_SRC/$_d" ] && { cp -R "$CORDON_SRC/$_d" "$_tap_stage/src/" || return 1; }
	done
	for _f in build.sh Makefile README.md; do
		[ -f "$CORDON_SRC/$_f" ] && { cp "$CORDON_SRC/$_f" "$_tap_stage/src/" || return 1; }
	done
	find "$_tap_stage/build" "$_tap_stage/src" -name '*.o' -o -name '*.d' | xargs rm -f
	chmod -R u=rwX,go=rX "$_tap_stage" || return 1
	CORDON=$_tap_stage/build/cordon
	CORDON_BUILD=$_tap_stage/build
	CORDON_SRC=$_tap_stage/src
	export CORDON CORDON_BUILD CORDON_SRC
}
if [ "$(id -u)" -eq 0 ] && ! _nobody_reaches; then
	if [ "${CORDON_TEST_NO_STAGE:-0}" = 1 ]; then
		echo "# uid 65534 cannot reach $CORDON and CORDON_TEST_NO_STAGE=1: every as_nobody case will fail"
	elif ! _stage_for_nobody || ! _nobody_reaches; then
		echo "not ok 1 - cannot stage the build where uid 65534 can reach it (from $CORDON)"
		echo "1..1"
		exit 1
	fi
fi

# A hung test fails instead of stalling prove: kill ourselves after the
# per-test timeout (CORDON_TEST_TIMEOUT seconds, default 120).
# Its sleep goes with it when the test ends (_tap_cleanup's TERM).
(
	trap 'kill "$_sl" 2>/dev/null; exit 0' TERM
	sleep "${CORDON_TEST_TIMEOUT:-120}" </dev/null >/dev/null 2>&1 &
	_sl=$!
	wait "$_sl" || exit 0
	echo "not ok - test timed out after ${CORDON_TEST_TIMEOUT:-120}s"
	kill -TERM $$ 2>/dev/null
) &
_tap_watchdog=$!
cd "$T" || exit 1

# New lines in $CORDON_TEST_ERRORS since the last assertion (as-nobody
# refused to run something): printed, and the assertion fails.
_tap_line() {
	_tap_n=$((_tap_n + 1))
	_tap_why=""
	_e=$(wc -l <"$CORDON_TEST_ERRORS" 2>/dev/null || echo 0)
	if [ "$_e" -gt "$_tap_errs_seen" ]; then
		_tap_why=$(tail -n +$((_tap_errs_seen + 1)) "$CORDON_TEST_ERRORS" | sed 's/^/#   harness: /')
		_tap_errs_seen=$_e
		set -- 1 "$2 (the harness could not run it as nobody)"
	fi
	if [ "$1" -eq 0 ]; then
		echo "ok $_tap_n - $2"
	else
		_tap_failed=$((_tap_failed + 1))
		echo "not ok $_tap_n - $2"
		# also on stderr, which prove shows when not verbose (CI's log)
		echo "# $(basename "$0"): not ok $_tap_n - $2" >&2
	fi
	[ -z "$_tap_why" ] || echo "$_tap_why"
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
	if [ "$_rc" -eq 127 ]; then
		_tap_line 1 "$_desc"
		echo "#   command not found (exit 127): a check that cannot run tests nothing: $*"
		sed 's/^/#   /' "$T/.ok.out" | head -20
	elif [ "$_rc" -ne 0 ]; then _tap_line 0 "$_desc"; else
		_tap_line 1 "$_desc"
		echo "#   command succeeded but should have failed: $*"
		sed 's/^/#   /' "$T/.ok.out" | head -20
	fi
	return 0
}

refused() {
	_desc=$1
	_want=$2
	shift 2
	"$@" >"$T/.ok.out" 2>&1
	_rc=$?
	if [ "$_rc" -eq 0 ]; then
		_tap_line 1 "$_desc"
		echo "#   command succeeded but should have been refused: $*"
	elif ! grep -Eqi -- "$_want" "$T/.ok.out"; then
		_tap_line 1 "$_desc"
		echo "#   command failed (exit $_rc) but not with the expected denial /$_want/: $*"
	else
		_tap_line 0 "$_desc"
		return 0
	fi
	sed 's/^/#   /' "$T/.ok.out" | head -20
	return 0
}

lacks() {
	if [ ! -s "$3" ] || ! grep -Eq -- "${4:-.}" "$3"; then
		_tap_line 1 "$1"
		echo "#   $3 does not show that the run happened (want /${4:-.}/): nothing was tested"
	elif grep -Eq -- "$2" "$3"; then
		_tap_line 1 "$1"
		echo "#   $3 matches /$2/:"
		grep -E -- "$2" "$3" | head -5 | sed 's/^/#   /'
	else
		_tap_line 0 "$1"
		return 0
	fi
	sed 's/^/#   /' "$3" 2>/dev/null | head -20
	return 0
}

_tap_ran() {
	[ -s "$2" ] && grep -Eq -- "$3" "$2" && return 0
	_tap_line 1 "$1"
	echo "#   $2 does not show that the run happened (want /$3/): nothing was tested"
	sed 's/^/#   /' "$2" 2>/dev/null | head -10
	return 1
}

nok_if_ran() {
	_tap_ran "$1" "$2" "$3" || return 0
	_d=$1
	shift 3
	nok "$_d" "$@"
}

ok_if_ran() {
	_tap_ran "$1" "$2" "$3" || return 0
	_d=$1
	shift 3
	ok "$_d" "$@"
}

absent_in() {
	_desc=$1
	_path=$2
	shift 2
	# shellcheck disable=SC2016
	_got=$("$@" sh -c 'if test -e "$1" || test -L "$1"; then echo "present: $1"; else echo "absent: $1"; fi' sh "$_path" 2>&1)
	_rc=$?
	if [ "$_rc" -eq 0 ] && [ "$_got" = "absent: $_path" ]; then
		_tap_line 0 "$_desc"
	else
		_tap_line 1 "$_desc"
		echo "#   want 'absent: $_path' and exit 0, got exit $_rc:"
		printf '%s\n' "$_got" | head -10 | sed 's/^/#   /'
	fi
	return 0
}

denied_names() {
	python3 -c 'import json,sys
r = json.load(open(sys.argv[1]))
print(" ".join(sorted(set(d["syscall"] for d in r.get("denied_syscalls") or []))))' "$1"
}

planted_paths() {
	python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))
print(" ".join(sorted(r.get("planted_paths") or [])) if "planted_paths" in r else "absent")' "$T/rec" 2>&1
}

record_denies() {
	_got=$(python3 -c 'import json,sys
try:
    r = json.load(open(sys.argv[1]))
except Exception as e:
    print("no record: %s" % e); sys.exit(0)
print(sum(d["count"] for d in r.get("denied_syscalls") or [] if d["syscall"] == sys.argv[2]))' "$2" "$3" 2>&1)
	if [ -n "${4:-}" ]; then
		is "$_got" "$4" "$1"
	else
		case $_got in [1-9]*) _tap_line 0 "$1" ;; *)
			_tap_line 1 "$1"
			echo "#   the record $2 counts no refused $3 (got: $_got)"
		esac
	fi
	return 0
}

is() {
	if [ "$1" = "$2" ]; then
		_tap_line 0 "$3"
	else
		_tap_line 1 "$3"
		_d=$(printf '#   got:  %s\n#   want: %s\n' "$1" "$2" | head -20)
		echo "$_d"
		echo "$_d" >&2
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
	[ -z "${CORDON_SKIP_LOG:-}" ] || echo "$_tap_file: $*" >>"$CORDON_SKIP_LOG"
}

diag() { echo "# $*"; }

done_testing() {
	# as_nobody refusals after the last assertion still fail the test.
	if [ -s "$CORDON_TEST_ERRORS" ] && [ "$(wc -l <"$CORDON_TEST_ERRORS")" -gt "$_tap_errs_seen" ]; then
		_tap_line 0 "no as_nobody run was refused after the last assertion"
	fi
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
# CORDON_TEST_PG_URI (set by 4102, which starts the server): the invoking
# user's state and audit log live in that PostgreSQL database instead.
if [ -n "${CORDON_TEST_PG_URI:-}" ]; then
	CORDON_AUDIT=$CORDON_TEST_PG_URI
	CORDON_STATE=$CORDON_TEST_PG_URI
fi

# The warm path (a per-user `cordon service`, cli-warm.h): off unless
# CORDON_TEST_WARM=1, so that the whole suite runs both ways.  When on,
# each test has its own services (one per uid, under $S/.svc), stopped
# on exit.
if [ "${CORDON_TEST_WARM:-0}" = 1 ]; then
	mkdir -p "$S/.svc" && chmod 1777 "$S/.svc"
	export CORDON_WARM=1 CORDON_SERVICE_DIR="$S/.svc" CORDON_SERVICE_IDLE=30
else
	export CORDON_WARM=0
fi

# The script (tests/helpers/as-nobody) does the work, so that the same
# checks hold inside `sh -c` strings (where this function does not exist).
# ATTEMPT: shell text defining try NAME CMD, for a sandbox's command (run
# it as `$ATTEMPT; try ...` inside): runs CMD and prints NAME=written,
# NAME=erofs (a read-only mount) or NAME=refused: WHY.
ATTEMPT='try() {
	n=$1
	shift
	if sh -c "$*" 2>"/tmp/e"; then echo "$n=written"
	elif grep -q "Read-only file system" /tmp/e; then echo "$n=erofs"
	else echo "$n=refused: $(cat /tmp/e)"; fi
}'

# masked_in_run WHO (for for_each_user): the tree `mktree DIR` makes, as
# WHO, read by `cordon run` twice (the second replays the scan cache):
# each file of $SECRETS reads empty (none shows $SECRET), each of
# $CONTROLS whole.
masked_in_run() {
	who=$1
	d=$T/w-$who
	mktree "$d"
	[ -n "$RUN_AS" ] && chown -R 65534:65534 "$d"
	sleep 1.1 # older than the walk's 1 s guard: the cache may keep it
	cd "$d" || exit 1
	for pass in 1 2; do
		$RUN_AS "$CORDON" run -- sh -c 'for f in '"$SECRETS $CONTROLS"'; do
			printf "%s:" "$f"; cat "$f" 2>/dev/null | tr "\n" " "; echo; done' \
			>"$T/out" 2>"$T/err"
		is "$?" 0 "$who ($pass): the run exits 0"
		for f in $SECRETS; do
			line=$(grep -F "$f:" "$T/out" | grep "^$f:")
			case $line in
			*"$SECRET"*) r="shown: $line" ;;
			"$f:") r=masked ;;
			*) r="other: $line" ;;
			esac
			is "$r" masked "$who ($pass): $f is masked"
		done
		for f in $CONTROLS; do
			is "$(grep "^$f:" "$T/out")" "$f:$(tr '\n' ' ' <"$f")" \
				"$who ($pass): control: $f is shown whole"
		done
	done
	cd "$T" || exit 1
}

# stop_bg PID...: SIGTERM each background job and wait for it, so that a
# trap leaves nothing still shutting down when the test ends (the reaper
# would name it).
stop_bg() {
	for _sb in "$@"; do
		[ -n "$_sb" ] && kill "$_sb" 2>/dev/null && wait "$_sb" 2>/dev/null
	done
	return 0
}

# kill_tree PID: SIGTERM PID and every process below it, then reap PID.
# For a background job whose $! is a wrapper (a subshell running a shell
# function, as_nobody's checks) rather than the program itself.
kill_tree() {
	_kt_todo=$1 _kt_all=""
	while [ -n "$_kt_todo" ]; do
		_kt_all="$_kt_all $_kt_todo"
		_kt_next=""
		for _kt_p in $_kt_todo; do
			_kt_next="$_kt_next $(cat /proc/$_kt_p/task/*/children 2>/dev/null)"
		done
		_kt_todo=$(echo $_kt_next)
	done
	kill $_kt_all 2>/dev/null
	wait "$1" 2>/dev/null
	return 0
}

as_nobody() {
	"$CORDON_SRC/tests/helpers/as-nobody" "$@"
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
	# Up to 30 s: on a loaded machine python3 alone can take seconds to start.
	while [ ! -s "$T/.http-port" ] && [ $_i -lt 300 ]; do sleep 0.1; _i=$((_i + 1)); done
	http_port=$(cat "$T/.http-port")
	[ -n "$http_port" ] || diag "start_http_server: the server did not start within 30 s"
}

# Run a test function as the invoking user and, when that is root, again as
# nobody: cordon is rootless first.  The function gets the label as $1.
for_each_user() {
	"$1" "$(id -un)"
	if [ "$(id -u)" -eq 0 ]; then
		RUN_AS=as_nobody "$1" nobody
		RUN_AS=""
	else
		skip "$1: the half as uid 65534 needs root (as_nobody); only uid $(id -u) ran"
	fi
}
RUN_AS=""
