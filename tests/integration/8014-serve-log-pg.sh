#!/bin/sh
# cordon serve (issue 18) over a PostgreSQL audit log written by two hosts,
# whose chains are numbered each from 1 and interleave in time: the audit
# page's cursor is the record's (time, host, seq), the store's order, so
# following "Older records" from the newest page visits every record once,
# newest first (a seq cursor skipped and repeated records of the other
# chain); a filtered page the same; the console makes the (time, host,
# seq) index the deep pages walk.  (Root only: the console is the
# operator's; PostgreSQL from tests/helpers/pg-start.sh.)
CORDON_TEST_TIMEOUT=${CORDON_TEST_TIMEOUT:-300}
. "${CORDON_SRC:-.}/tests/lib.sh"
. "$CORDON_SRC/tests/helpers/pg-start.sh"
. "$CORDON_SRC/tests/helpers/serve-start.sh"

APPEND="$CORDON_BUILD/tests/tools/audit-append"
[ -x "$APPEND" ] || nok "no $APPEND (make check builds it)" true
pg_start || { done_testing; exit; }
URI="postgresql://cordon_admin@/cordon?host=$PG_SOCK"
export PGPASSWORD="$PG_ADMIN_PW"
as_host() { # HOST CMD...
	_h=$1
	shift
	unshare --uts sh -c 'hostname "$0" && exec "$@"' "$_h" "$@"
}
# host-a 70, host-b 70, host-a 70 more: seqs 1-140 and 1-70, in time order
# a1..a70 b1..b70 a71..a140.
as_host host-a "$APPEND" --db "$URI" -n 70 --agent ann --decision allow >/dev/null &&
	as_host host-b "$APPEND" --db "$URI" -n 70 --agent bob --decision deny >/dev/null &&
	as_host host-a "$APPEND" --db "$URI" -n 70 --agent ann --decision allow >/dev/null
is "$?" 0 "two hosts append to one log"
is "$(pg_sql "SELECT host || ':' || count(*) || ':' || max(seq) FROM audit_records GROUP BY host ORDER BY host" | tr '\n' ' ')" \
	"host-a:140:140 host-b:70:70 " "... one chain each, numbered from 1"

cat >"$T/p.yaml" <<'YAML'
version: 1
agents:
  - {id: coder, owner: alice}
tools:
  - {id: shell, kind: command}
approvers:
  people: [alice]
YAML
trap 'stop_bg $serve_pid; _pg_cleanup' EXIT
serve_wait=300
serve_start --listen 127.0.0.1:0 --policy "$T/p.yaml" --audit "$URI" --state "$T/state.db"
ok "serve prints a login link ($origin)" test -n "$origin"
sess=$(login "$link")
ok "logged in" test -n "$sess"

# Follow "Older records" from PATH; every row's seq and time, in page order.
walk() {
	_p=$1
	_n=0
	: >"$T/rows"
	while [ -n "$_p" ] && [ $_n -lt 20 ]; do
		curl -s -H "Cookie: $sess" "$origin$_p" >"$T/page"
		grep -o '<tr id="seq-[0-9]*"[^>]*><td class="seq">[0-9]*</td><td>[^<]*' "$T/page" |
			sed 's/.*<td class="seq">\([0-9]*\)<\/td><td>\(.*\)/\2 \1/' >>"$T/rows"
		_p=$(grep -o 'id="older" href="[^"]*"' "$T/page" | sed 's/.*href="//; s/"$//; s/&amp;/\&/g')
		_n=$((_n + 1))
	done
}
walk /log
all=$(pg_sql "SELECT count(*) FROM audit_records")
ok "the log has 210 records and the console's own ($all)" test "$all" -gt 210
is "$(wc -l <"$T/rows")" "$all" "following Older records visits $all rows"
is "$(sort -u "$T/rows" | wc -l)" "$all" "... each record once"
ok "... newest first" sort -r -c "$T/rows"
is "$(grep -c ' 140$' "$T/rows") $(tail -1 "$T/rows" | cut -d' ' -f2)" "1 1" \
	"... host-a's last among them, its first the oldest"
walk "/log?decision=allow"
is "$(sort -u "$T/rows" | wc -l)" 140 "a filtered walk (host-a's allows) visits its 140 records once"
curl -s -H "Cookie: $sess" "$origin/log" | grep -q 'id="older" href="/log?before=[0-9]*&amp;bt=[0-9]*&amp;bh=host-a"'
is "$?" 0 "the older link carries the record's time and host"
is "$(pg_sql "SELECT count(*) FROM pg_indexes WHERE indexname = 'audit_records_page' AND indexdef LIKE '%(time_ns, host, seq)%'")" 1 \
	"the console made the (time, host, seq) index"
curl -s -o /dev/null -w '%{http_code}' -H "Cookie: $sess" "$origin/log?before=5&bt=x&bh=host-a" >"$T/code"
is "$(cat "$T/code")" 400 "a malformed cursor is 400"
done_testing
