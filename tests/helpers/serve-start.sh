# serve-start.sh — what the console tests (7007, 8000-8014) share, sourced
# after tests/lib.sh:   . "$CORDON_SRC/tests/helpers/serve-start.sh"
#
#   serve_start SERVE-OPTION...  `cordon serve SERVE-OPTION...` in the
#                      background (pid in serve_pid, stopped on exit); waits
#                      up to $serve_wait tenths of a second (default 100)
#                      for its first line in $serve_link (default $T/link;
#                      stderr in $serve_err, default $T/serve.err); sets
#                      link (that line: the operator's login link) and
#                      origin (the link up to /login)
#   serve_stop         SIGTERM to serve_pid, then its exit status
#   code CURL-ARG...   curl: the body in $T/body, the headers in $H ($T/h);
#                      prints the HTTP status
#   isb GOT WANT DESC  is, showing the last answer when it fails
#   has TEXT           the last answer's body holds TEXT
#   login LINK         posts a login link's secret to $origin; prints the
#                      session cookie (name=value)
#   login_as NAME POLICY  the same with a fresh `serve login NAME` link
#   csrf_in_body       the CSRF token in the last answer's forms
#   csrf_of COOKIE     the CSRF token on that session's held-calls page
# A test that starts more than cordon serve sets its own trap (killing
# $serve_pid too).

serve_pid=""
trap 'stop_bg $serve_pid; _tap_cleanup' EXIT

serve_start() {
	: "${serve_link:=$T/link}"
	: >"$serve_link"
	"$CORDON" serve "$@" >"$serve_link" 2>"${serve_err:-$T/serve.err}" &
	serve_pid=$!
	_i=0
	while [ ! -s "$serve_link" ] && [ $_i -lt "${serve_wait:-100}" ]; do
		sleep 0.1
		_i=$((_i + 1))
	done
	link=$(head -1 "$serve_link")
	origin=${link%%/login*}
}

serve_stop() {
	kill $serve_pid
	wait $serve_pid
}

H="$T/h"
code() { curl -s -o "$T/body" -D "$H" -w '%{http_code}' "$@"; }
isb() { [ "$1" = "$2" ] || diag "answer: $(head -c 600 "$T/body" | tr "\n" " ")"; is "$@"; }
has() { grep -q -- "$1" "$T/body"; }

login() {
	code -X POST -H "Origin: $origin" --data "t=${1#*t=}" "$origin/login" >/dev/null
	awk -F': ' 'tolower($1) == "set-cookie" {print $2}' "$H" | tr -d '\r' | sed 's/;.*//'
}
login_as() {
	_l=$("$CORDON" serve login "$1" --listen "${origin#http://}" --policy "$2") || return 1
	login "$_l"
}
csrf_in_body() { sed -n 's/.*name="csrf" value="\([0-9a-f]*\)".*/\1/p' "$T/body" | head -1; }
csrf_of() {
	code -H "Cookie: $1" "$origin/" >/dev/null
	csrf_in_body
}
