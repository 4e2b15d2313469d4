#!/bin/sh
# cordon serve (issue 18): "Commit to branch" on a proposal's page, with
# curl.  The POST needs the Origin, the CSRF token and a login; the agent
# that made the proposal may not; an invalid or existing branch name is
# refused (409) and the proposal stays pending; the commit goes through
# the function of `cordon proposals commit`: the branch holds exactly the
# changes but the flagged file, the work tree and index are untouched, no
# hook of the repository runs, proposal.committed is recorded.  (Root
# only: the console is the operator's.)
CORDON_TEST_TIMEOUT=${CORDON_TEST_TIMEOUT:-300}
. "${CORDON_SRC:-.}/tests/lib.sh"
. "$CORDON_SRC/tests/helpers/serve-start.sh"

mkdir -p "$T/marks" "$T/ws"
cd "$T/ws" || exit 1
git init -q . && printf 'hello\n' >a.txt && printf 'bye\n' >b.txt && git add -A &&
	git -c user.name=t -c user.email=t@t commit -qm init
is "$?" 0 "a repository"
for h in reference-transaction post-commit pre-commit post-checkout; do
	printf '#!/bin/sh\ntouch "%s/%s"\n' "$T/marks" "$h" >".git/hooks/$h"
	chmod 0755 ".git/hooks/$h"
done
head=$(git rev-parse HEAD)
idx=$(sha256sum .git/index | cut -c1-64)
"$CORDON" run --propose --agent bot --task t8012 -- sh -c '
	printf "<b>world</b>\n" >> a.txt; rm b.txt; printf "n\n" > n.txt
	printf "[x]\n" > .mcp.json' >/dev/null 2>&1
is "$?" 0 "a proposing run"
pid=$("$CORDON" proposals list --json | python3 -c 'import json,sys; print(json.load(sys.stdin)[0]["id"])')
ok "... made proposal $pid" test -n "$pid"
pstatus() { "$CORDON" proposals list --json | python3 -c "import json,sys; print([p['status'] for p in json.load(sys.stdin) if p['id'] == '$1'][0])"; }

cat >"$T/p.yaml" <<'YAML'
version: 1
agents:
  - {id: coder, owner: alice}
tools:
  - {id: shell, kind: command}
approvers:
  people: [alice, bot]
grants: []
YAML
serve_start --listen 127.0.0.1:0 --policy "$T/p.yaml"
ok "serve prints a login link ($origin)" test -n "$origin"

sess=$(login "$link")
ok "logged in" test -n "$sess"
isb "$(code -H "Cookie: $sess" "$origin/proposal?id=$pid")" 200 "the proposal's page"
csrf=$(csrf_in_body)
has 'value="commit"'
is "$?" 0 "... has a Commit to branch button"
has "name=\"branch\" maxlength=\"200\" value=\"cordon/$pid\""
is "$?" 0 "... and a branch field"
post() { code -X POST "$@" "$origin/proposals/$pid"; }

isb "$(post -H "Cookie: $sess" --data "csrf=$csrf&decision=commit&branch=x")" 403 \
	"commit without an Origin: 403"
isb "$(post -H "Cookie: $sess" -H "Origin: http://evil.example" \
	--data "csrf=$csrf&decision=commit&branch=x")" 403 "commit from another Origin: 403"
isb "$(post -H "Cookie: $sess" -H "Origin: $origin" \
	--data "csrf=$(printf '%064d' 1)&decision=commit&branch=x")" 403 "commit with a wrong CSRF token: 403"
isb "$(post -H "Origin: $origin" --data "csrf=$csrf&decision=commit&branch=x")" 401 \
	"commit without a login: 401"
isb "$(post -H "Cookie: $sess" -H "Origin: $origin" --data "csrf=$csrf&decision=commit")" 400 \
	"commit without a branch name: 400"
s_bot=$(login_as bot "$T/p.yaml")
code -H "Cookie: $s_bot" "$origin/proposal?id=$pid" >/dev/null
bcsrf=$(csrf_in_body)
isb "$(post -H "Cookie: $s_bot" -H "Origin: $origin" --data "csrf=$bcsrf&decision=commit&branch=x")" \
	403 "the agent that made the proposal cannot commit it"
for bad in 'a..b' '-x' 'x%20y' 'HEAD%3Ax' 'x.lock' '%3Cb%3E..x'; do
	isb "$(post -H "Cookie: $sess" -H "Origin: $origin" --data "csrf=$csrf&decision=commit&branch=$bad")" \
		409 "branch name '$bad' is refused"
done
has '&lt;b&gt;'
is "$?" 0 "... the refusal names it escaped"
git branch taken
isb "$(post -H "Cookie: $sess" -H "Origin: $origin" --data "csrf=$csrf&decision=commit&branch=taken")" \
	409 "an existing branch is refused"
has "exists already"
is "$?" 0 "... saying so"
is "$(git rev-parse taken)" "$head" "... and it is left where it was"
is "$(git branch --list | wc -l)" 2 "no branch was made by the refusals"
is "$(pstatus "$pid")" pending "the proposal is still pending"
rm -f "$T/marks/"*

isb "$(post -H "Cookie: $sess" -H "Origin: $origin" \
	--data "csrf=$csrf&decision=commit&branch=review%2F$pid")" 303 "the operator commits it on review/$pid"
is "$(ls "$T/marks")" "" "... no hook of the repository ran"
is "$(git rev-parse "review/$pid^")" "$head" "... the branch sits on HEAD"
is "$(git diff --no-ext-diff --name-status "$head" "review/$pid" | LC_ALL=C sort | tr '\t\n' ' ')" \
	"A n.txt D b.txt M a.txt " "... it has exactly the changes but the flagged file"
is "$(git cat-file blob "review/$pid:a.txt")" "$(printf 'hello\n<b>world</b>')" "... a.txt's new content"
is "$(cat a.txt)" hello "... the work tree is untouched"
ok "... b.txt still there, no n.txt" test -f b.txt -a ! -e n.txt
is "$(sha256sum .git/index | cut -c1-64)" "$idx" "... the index is untouched"
is "$(git rev-parse HEAD)" "$head" "... HEAD is untouched"
is "$(pstatus "$pid")" committed "... the proposal is committed"
"$CORDON" log export --format jsonl | grep '"proposal.committed"' | grep "\"target\":\"$pid\"" | grep -q "review/$pid"
is "$?" 0 "... recorded as proposal.committed with its branch"
code -H "Cookie: $sess" "$origin/proposal?id=$pid" >/dev/null
has 'value="commit"'
is "$?" 1 "... and its page has no buttons any more"
isb "$(post -H "Cookie: $sess" -H "Origin: $origin" --data "csrf=$csrf&decision=commit&branch=again")" \
	403 "committing it again is refused"
nok "... no branch 'again'" git rev-parse --verify --quiet again

done_testing
