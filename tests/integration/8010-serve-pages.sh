#!/bin/sh
# cordon serve (issue 18): the console's audit-log pages over HTTP with
# curl.  The log page lists records newest first, a page at a time (the
# cursor is a seq), filtered by agent, run id, kind, decision, time and
# free text; a run's page groups its records; every field comes back
# escaped; the chain page's "verify now" runs the verify of `cordon log
# verify` and sees a tampered record; without a login every page is 401;
# the POST needs the Origin and the CSRF token.  (Root only: the console
# is the operator's.)
# Slow on a loaded box (each step a process and an HTTP round trip).
CORDON_TEST_TIMEOUT=${CORDON_TEST_TIMEOUT:-300}
. "${CORDON_SRC:-.}/tests/lib.sh"
. "$CORDON_SRC/tests/helpers/serve-start.sh"

cat >"$T/p.yaml" <<'YAML'
version: 1
agents:
  - {id: coder, owner: alice}
  - {id: other, owner: alice}
tools:
  - {id: shell, kind: command}
profiles:
  ws: {workspace: write}
approvers:
  people: [alice, bot]
grants:
  - id: echo
    agent: coder
    tool: shell
    actions: [execute]
    scope: {argv: [echo]}
    profile: ws
    owner: alice
    justification: tests
    review_by: 2099-01-01
    expires: 2099-01-01
YAML
P="$T/p.yaml"
cd "$T" || exit 1

# Records: an allowed run with hostile text in its argv, a denied run,
# and enough further records to need a second page.
hostile=$(printf '<script>alert(1)</script>\342\200\256evil\033[31m')
"$CORDON" run --policy "$P" --agent coder -- echo "$hostile" >/dev/null 2>&1
is "$?" 0 "an allowed run with hostile text in its argv"
"$CORDON" run --policy "$P" --agent coder -- rm -rf /tmp/nothing-here >/dev/null 2>&1
is "$?" 125 "a denied run"
i=0
while [ $i -lt 30 ]; do
	"$CORDON" run --policy "$P" --agent coder -- echo "filler$i" >/dev/null 2>&1
	i=$((i + 1))
done
# A proposal: a file edited with hostile text, a git hook planted (flagged).
mkdir -p "$T/ws" && printf 'hello\n' >"$T/ws/a.txt"
(cd "$T/ws" && "$CORDON" run --propose --agent bot --task t18 -- sh -c '
	printf "<script>alert(2)</script>\342\200\256x\n" >> a.txt
	mkdir -p .git/hooks; printf "#!/bin/sh\necho pwned\n" > .git/hooks/pre-commit') \
	>"$T/prop.out" 2>"$T/prop.err"
is "$?" 0 "a proposing run"
pid=$("$CORDON" proposals list --json | python3 -c 'import json,sys; print(json.load(sys.stdin)[0]["id"])')
ok "... made proposal $pid" test -n "$pid"
# Two more: one to reject, one whose base changes before it is applied.
mkdir -p "$T/ws2" && printf 'one\n' >"$T/ws2/b.txt"
(cd "$T/ws2" && "$CORDON" run --propose --agent bot -- sh -c 'echo two >> b.txt') >/dev/null 2>&1
pid2=$("$CORDON" proposals list --json | python3 -c 'import json,sys; print(json.load(sys.stdin)[0]["id"])')
(cd "$T/ws2" && "$CORDON" run --propose --agent bot -- sh -c 'echo three >> b.txt') >/dev/null 2>&1
pid3=$("$CORDON" proposals list --json | python3 -c 'import json,sys; print(json.load(sys.stdin)[0]["id"])')
ok "... and proposals $pid2, $pid3" test -n "$pid2" -a -n "$pid3" -a "$pid2" != "$pid3"
pstatus() { "$CORDON" proposals list --json | python3 -c "import json,sys; print([p['status'] for p in json.load(sys.stdin) if p['id'] == '$1'][0])"; }
"$CORDON" log export --format jsonl >"$T/log"
run_ok=$(grep '"run.intent"' "$T/log" | grep 'script' | head -1 | sed 's/.*"run_id":"\([^"]*\)".*/\1/')
run_deny=$(grep '"kind":"decision"' "$T/log" | grep '"decision":"deny"' | head -1 | sed 's/.*"run_id":"\([^"]*\)".*/\1/')
ok "the runs have ids ($run_ok, $run_deny)" test -n "$run_ok" -a -n "$run_deny"

serve_start --listen 127.0.0.1:0 --policy "$P"
ok "serve prints a login link ($origin)" test -n "$origin"

for pg in /log "/run?id=$run_ok" /verify /proposals "/proposal?id=$pid"; do
	isb "$(code "$origin$pg")" 401 "no login: $pg is 401"
	has "$run_ok" || has "$pid" && nok "... and shows nothing" true || ok "... and shows nothing" true
done
isb "$(code -X POST -H "Origin: $origin" --data "csrf=x" "$origin/verify")" 401 \
	"no login: verify now is refused"

sess=$(login "$link")
ok "logged in" test -n "$sess"
get() { code -H "Cookie: $sess" "$origin$1"; }

isb "$(get /log)" 200 "the audit log page"
n=$(grep -o '<tr id="seq-' "$T/body" | wc -l)
is "$n" 50 "... shows one page of 50 records"
first=$(grep -o 'id="seq-[0-9]*"' "$T/body" | head -1 | tr -dc 0-9)
second=$(grep -o 'id="seq-[0-9]*"' "$T/body" | sed -n 2p | tr -dc 0-9)
last=$(grep -o 'id="seq-[0-9]*"' "$T/body" | tail -1 | tr -dc 0-9)
size=$(grep -c . "$T/log")
ok "... newest first ($first > $second, the newest is seq $size or later)" \
	test "$first" -gt "$second" -a "$first" -ge "$size"
older=$(sed -n 's/.*id="older" href="\([^"]*\)".*/\1/p' "$T/body" | sed 's/&amp;/\&/g')
is "${older%%&bt=*}" "/log?before=$last" "... with a link to older records before seq $last"
isb "$(get "$older")" 200 "the older page"
n2=$(grep -o 'id="seq-[0-9]*"' "$T/body" | head -1 | tr -dc 0-9)
is "$n2" $((last - 1)) "... starts right after the cursor"

isb "$(get "/log?run=$run_ok")" 200 "filtered by run id"
runs=$(grep -o 'class="run" href="/run?id=[^"]*"' "$T/body" | sort -u | wc -l)
is "$runs" 1 "... only that run's records"
has '&lt;script&gt;alert(1)&lt;/script&gt;'
is "$?" 0 "markup in a record is escaped"
has '<script>alert'
is "$?" 1 "... no <script> element comes through"
has '\\u202E'
is "$?" 0 "a bidi override is shown as a visible \\u202E"
grep -q "$(printf '\033')" "$T/body"
is "$?" 1 "a terminal escape is never sent raw"

isb "$(get "/log?decision=deny&kind=decision")" 200 "filtered by decision and kind"
grep -o 'id="seq-[0-9]*"' "$T/body" | wc -l | grep -qx 1
is "$?" 0 "... the one denied decision"
has "$run_deny"
is "$?" 0 "... of the denied run"
isb "$(get "/log?agent=other")" 200 "filtered by an agent with no records"
has "No record matches"
is "$?" 0 "... nothing matches"
isb "$(get "/log?q=filler17")" 200 "free text"
has filler17 && ! has filler16
is "$?" 0 "... finds only the matching records"
isb "$(get "/log?since=2099-01-01")" 200 "a time range in the future"
has "No record matches"
is "$?" 0 "... matches nothing"
isb "$(get "/log?since=yesterday-ish")" 400 "a malformed time is refused with 400"
isb "$(get "/log?before=12x")" 400 "a malformed cursor is refused with 400"
isb "$(get "/log?q=%3Cb%3Ex%22")" 200 "a hostile filter value"
has 'value="&lt;b&gt;x&quot;"'
is "$?" 0 "... is escaped in the form"

isb "$(get "/run?id=$run_ok")" 200 "the run's page"
sec() { sed 's/<section/\n<section/g' "$T/body" | grep "id=\"sec-$1\""; }
sec 0 | grep -q '>run.intent<'
is "$?" 0 "... its intent under Intent and decision"
sec 1 | grep -q '>run.result<'
is "$?" 0 "... its result under Result"
sec 1 | grep -q '>run.intent<'
is "$?" 1 "... and not its intent"
has '&lt;script&gt;' && ! has '<script>alert'
is "$?" 0 "... hostile text escaped"
isb "$(get "/run?id=$run_deny")" 200 "the denied run's page"
sed 's/<section/\n<section/g' "$T/body" | grep 'id="sec-4"' | grep -q '>decision<'
is "$?" 0 "... lists its denial"
isb "$(get "/run?id=no-such-run")" 200 "an unknown run"
has "No record of this run"
is "$?" 0 "... says so"

isb "$(get /proposals)" 200 "the proposals page"
has "href=\"/proposal?id=$pid\""
is "$?" 0 "... links the proposal"
isb "$(get "/proposal?id=$pid")" 200 "the proposal's page"
sed 's/<section/\n<section/g' "$T/body" | grep 'class="file flagged"' | grep -q 'pre-commit'
is "$?" 0 "... the planted hook is highlighted as flagged"
sed 's/<section/\n<section/g' "$T/body" | grep 'class="file"' | grep -q 'a.txt'
is "$?" 0 "... the edited file is not"
has '<span class="add">+&lt;script&gt;alert(2)&lt;/script&gt;<span class="esc">\\u202E</span>x</span>'
is "$?" 0 "... its diff line added, escaped, the bidi override visible"
has '<script>alert'
is "$?" 1 "... no <script> element comes through"
isb "$(get "/proposal?id=pr-0000")" 404 "an unknown proposal is 404"
isb "$(get "/proposal?id=%3Cx%3E")" 400 "a malformed proposal id is 400"

# Apply and reject: POSTs with the Origin and the CSRF token, through the
# functions of cordon proposals apply|reject.
get "/proposal?id=$pid" >/dev/null
pcsrf=$(csrf_in_body)
has "action=\"/proposals/$pid\""
is "$?" 0 "a pending proposal has Apply and Reject buttons"
isb "$(code -X POST -H "Cookie: $sess" --data "csrf=$pcsrf&decision=apply" \
	"$origin/proposals/$pid")" 403 "apply without an Origin: 403"
isb "$(code -X POST -H "Cookie: $sess" -H "Origin: $origin" \
	--data "csrf=$(printf '%064d' 1)&decision=apply" "$origin/proposals/$pid")" 403 \
	"apply with a wrong CSRF token: 403"
isb "$(code -X POST -H "Origin: $origin" --data "csrf=$pcsrf&decision=apply" \
	"$origin/proposals/$pid")" 401 "apply without a login: 401"
is "$(pstatus "$pid")" pending "... the proposal is still pending"
# bot is an approver of the console's policy (a login is checked against
# it), and the agent that made the proposals.
cat >"$T/bot.yaml" <<'YAML'
version: 1
agents:
  - {id: someone, owner: alice}
tools:
  - {id: shell, kind: command}
approvers:
  people: [bot]
grants: []
YAML
s_bot=$(login_as bot "$T/bot.yaml")
code -H "Cookie: $s_bot" "$origin/proposal?id=$pid" >/dev/null
bcsrf=$(csrf_in_body)
isb "$(code -X POST -H "Cookie: $s_bot" -H "Origin: $origin" --data "csrf=$bcsrf&decision=apply" \
	"$origin/proposals/$pid")" 403 "the agent that made a proposal cannot apply it"
has "an agent never approves its own proposal"
is "$?" 0 "... refused as the CLI refuses it"
is "$(pstatus "$pid")" pending "... the proposal is still pending"
isb "$(code -X POST -H "Cookie: $sess" -H "Origin: $origin" --data "csrf=$pcsrf&decision=apply" \
	"$origin/proposals/$pid")" 303 "the operator applies it"
grep -q 'alert(2)' "$T/ws/a.txt"
is "$?" 0 "... the edit is in the real tree"
[ -e "$T/ws/.git/hooks/pre-commit" ]
is "$?" 1 "... the flagged hook is not"
is "$(pstatus "$pid")" partial "... the proposal is partial (the flagged file is left)"
"$CORDON" log export --format jsonl | grep '"proposal.applied"' | grep -q "\"target\":\"$pid\""
is "$?" 0 "... recorded as proposal.applied"
isb "$(code -X POST -H "Cookie: $sess" -H "Origin: $origin" --data "csrf=$pcsrf&decision=apply" \
	"$origin/proposals/$pid")" 409 "applying it again: nothing left but the flagged file, 409"
isb "$(code -X POST -H "Cookie: $sess" -H "Origin: $origin" --data "csrf=$pcsrf&decision=reject" \
	"$origin/proposals/$pid2")" 303 "the operator rejects another"
is "$(pstatus "$pid2")" rejected "... it is rejected"
is "$(cat "$T/ws2/b.txt")" one "... and nothing of it applied"
"$CORDON" log export --format jsonl | grep '"proposal.rejected"' | grep -q "\"target\":\"$pid2\""
is "$?" 0 "... recorded as proposal.rejected"
echo changed >"$T/ws2/b.txt"
isb "$(code -X POST -H "Cookie: $sess" -H "Origin: $origin" --data "csrf=$pcsrf&decision=apply" \
	"$origin/proposals/$pid3")" 409 "a proposal whose base changed since its run: 409"
is "$(cat "$T/ws2/b.txt")" changed "... the newer content is kept"
is "$(pstatus "$pid3")" pending "... the proposal stays pending"
"$CORDON" log export --format jsonl | grep '"proposal.refused"' | grep -q "\"target\":\"$pid3\""
is "$?" 0 "... recorded as proposal.refused"

isb "$(get /verify)" 200 "the chain page"
has "Not verified since"
is "$?" 0 "... not verified yet"
csrf=$(csrf_in_body)
isb "$(code -X POST -H "Cookie: $sess" -H "Origin: http://evil.example" --data "csrf=$csrf" \
	"$origin/verify")" 403 "verify now from another Origin: 403"
isb "$(code -X POST -H "Cookie: $sess" -H "Origin: $origin" --data "csrf=$(printf '%064d' 1)" \
	"$origin/verify")" 403 "verify now with a wrong CSRF token: 403"
isb "$(code -X POST -H "Cookie: $sess" -H "Origin: $origin" --data "csrf=$csrf" \
	"$origin/verify")" 303 "verify now"
get /verify >/dev/null
has 'id="vstate" class="ok">intact:'
is "$?" 0 "... the chain is intact ($(grep -o 'intact: [0-9]* records' "$T/body"))"
"$CORDON" log verify >/dev/null 2>&1
is "$?" 0 "... as cordon log verify says"

# Tamper with a record: verify now sees it.
seq=$(grep '"run.intent"' "$T/log" | grep filler3\" | head -1 | sed 's/.*"seq":\([0-9]*\).*/\1/')
sqlite3 "$CORDON_AUDIT" "UPDATE records SET target = 'tampered' WHERE seq = $seq" 2>"$T/sq.err"
ok "a record rewritten behind the log's back (seq $seq)" test ! -s "$T/sq.err"
isb "$(code -X POST -H "Cookie: $sess" -H "Origin: $origin" --data "csrf=$csrf" \
	"$origin/verify")" 303 "verify now again"
get /verify >/dev/null
has "id=\"vstate\" class=\"error\">FAILED: seq $seq: modified"
r=$?
[ $r = 0 ] || diag "$(grep -o 'id="vstate"[^<]*' "$T/body")"
is "$r" 0 "... reports the modified record"
"$CORDON" log export --format jsonl | grep -q '"console.verify"'
is "$?" 0 "the audit log records the console's verifications"

serve_stop
is "$?" 0 "serve stops on SIGTERM with exit 0"
done_testing
