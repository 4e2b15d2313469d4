#!/bin/sh
# cordon serve (issue 18): the audit pages over a long log.  A page reads
# through the store's cursor (seq < before) and indexes, so the records of
# a rare agent that are the oldest of 150,000 come back on the first page;
# free text reads at most 4096 records a page and links on from where it
# stopped, so a word found only in the oldest records is reached page by
# page; "verify now" runs on a thread and connection of its own, so the
# console answers while it reads the whole chain.  (Root only: the
# console is the operator's.)
# Slow on a loaded box (each step a process and an HTTP round trip).
CORDON_TEST_TIMEOUT=${CORDON_TEST_TIMEOUT:-300}
. "${CORDON_SRC:-.}/tests/lib.sh"
. "$CORDON_SRC/tests/helpers/serve-start.sh"

APPEND="$CORDON_BUILD/tests/tools/audit-append"
[ -x "$APPEND" ] || skip "no $APPEND (make check builds it)"
A="$T/audit.db"
cd "$T" || exit 1
"$APPEND" --db "$A" -n 100 --bulk --agent rare --decision deny --target needle >/dev/null
"$APPEND" --db "$A" -n 149900 --bulk --agent busy --decision allow >/dev/null
is "$("$CORDON" log show --audit "$A" --json 2>/dev/null | tail -1 | grep -o '"seq":[0-9]*')" '"seq":150000' \
	"a log of 150,000 records, the rare agent's 100 the oldest"

cat >"$T/p.yaml" <<'YAML'
version: 1
agents:
  - {id: coder, owner: alice}
tools:
  - {id: shell, kind: command}
approvers:
  people: [alice]
grants: []
YAML
serve_wait=600
serve_start --listen 127.0.0.1:0 --policy "$T/p.yaml" --audit "$A"
ok "serve starts (its indexes made) ($origin)" test -n "$origin"
if command -v sqlite3 >/dev/null; then
	sqlite3 "$A" "SELECT name FROM sqlite_master WHERE type = 'index' AND name LIKE 'records%'
		ORDER BY name" | tr '\n' ' ' >"$T/idx"
	is "$(cat "$T/idx")" "records_agent records_decision records_kind records_run " \
		"... the log has the readers' indexes"
fi
sess=$(login "$link")
get() { code -H "Cookie: $sess" "$origin$1"; }
seqs() { grep -o 'id="seq-[0-9]*"' "$T/body" | tr -dc '0-9\n' | tr '\n' ' ' | sed 's/ $//'; }
older() { sed -n 's/.*id="older" href="\([^"]*\)".*/\1/p' "$T/body" | sed 's/&amp;/\&/g'; }
# The link without the keyset's time and host (bt, bh: last).
older_seq() { older | sed 's/&bt=.*//'; }

isb "$(get "/log?agent=rare")" 200 "the rare agent's page"
s=$(seqs)
is "$(echo "$s" | wc -w) $(echo "$s" | cut -d' ' -f1) $(echo "$s" | awk '{print $NF}')" "50 100 51" \
	"... its newest 50 records (seq 100 to 51), newest first"
is "$(older_seq)" "/log?before=51&agent=rare" "... a link to the older ones"
isb "$(get "$(older)")" 200 "the next page"
s=$(seqs)
is "$(echo "$s" | wc -w) $(echo "$s" | cut -d' ' -f1) $(echo "$s" | awk '{print $NF}')" "50 50 1" \
	"... the other 50 (seq 50 to 1)"
is "$(older)" "" "... and no older link"

isb "$(get "/log?before=75001")" 200 "a page in the middle"
s=$(seqs)
is "$(echo "$s" | cut -d' ' -f1) $(echo "$s" | awk '{print $NF}')" "75000 74951" \
	"... the 50 records before the cursor"

isb "$(get "/log?q=needle")" 200 "free text found only in the oldest records"
grep -q "No match in the 4096 records before seq" "$T/body"
is "$?" 0 "... the first page reads 4096 records and says so"
n=0
next=$(older)
ok "... with a link that goes on ($next)" test -n "$next"
while [ -n "$next" ] && [ $n -lt 200 ] && ! grep -q 'id="seq-' "$T/body"; do
	get "$next" >/dev/null
	next=$(older)
	n=$((n + 1))
done
s=$(seqs)
is "$(echo "$s" | cut -d' ' -f1)" 100 "... page by page, reaches the needle's newest record"
ok "... after about 150000 / 4096 pages ($n)" test "$n" -ge 30 -a "$n" -le 40

# Verify now, on its own thread: the console answers while it runs.
get /verify >/dev/null
csrf=$(csrf_in_body)
curl -s -o /dev/null -H "Cookie: $sess" -H "Origin: $origin" --data "csrf=$csrf" \
	"$origin/verify" &
post_pid=$!
seen=0
i=0
while [ $i -lt 300 ]; do
	get /verify >/dev/null
	if grep -q 'id="vrunning"' "$T/body"; then
		seen=1
		break
	fi
	grep -q 'id="vstate" class="ok"' "$T/body" && break
	sleep 0.02
	i=$((i + 1))
done
is "$seen" 1 "while a verify runs, the chain page answers and says it is running"
t0=$(date +%s%N)
isb "$(get "/log?agent=rare")" 200 "... and so does a log page"
t1=$(date +%s%N)
wait $post_pid
i=0
while [ $i -lt 600 ]; do
	get /verify >/dev/null
	grep -q 'id="vrunning"' "$T/body" || break
	sleep 0.1
	i=$((i + 1))
done
# 150,000 and the console's own records (the login, the verify's).
grep -q 'id="vstate" class="ok">intact: 15000[0-9] records' "$T/body"
is "$?" 0 "the verify finishes: intact, every record"
"$CORDON" log show --audit "$A" --kind console.verify --json 2>/dev/null | grep -q 'intact, 15000[0-9] records'
is "$?" 0 "... recorded as console.verify"
done_testing
