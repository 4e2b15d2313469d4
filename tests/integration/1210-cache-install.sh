#!/bin/sh
# Package caches and install steps: --cache NAME:DEST is the agent's own
# directory under cordon's state directory (two agents never share one);
# --install runs first with the caches writable and the named egress only,
# then the command sees the caches read-only and has no network; `cordon
# cache list|clear` manage them without following what a sandbox planted.
. "${CORDON_SRC:-.}/tests/lib.sh"

start_http_server
port=$http_port

caches() {
	who=$1
	state=$(dirname "$CORDON_STATE")
	[ -n "$RUN_AS" ] && state=$S/.state-nobody

	is "$($RUN_AS "$CORDON" run --agent alice --cache pip:/cache -- sh -c 'echo from-alice >/cache/x; cat /cache/x')" \
		from-alice "$who: a cache is writable at DEST"
	is "$($RUN_AS "$CORDON" run --agent alice --cache pip:/cache -- cat /cache/x)" from-alice \
		"$who: and kept for the agent's next run"
	nok "$who: another agent's cache of the same name is another directory" \
		$RUN_AS "$CORDON" run --agent bob --cache pip:/cache -- cat /cache/x
	nok "$who: runs without --agent have their own too" \
		$RUN_AS "$CORDON" run --cache pip:/cache -- cat /cache/x
	is "$($RUN_AS "$CORDON" run --agent alice --cache pip:/cache -- sh -c "test -e '$state/caches' && echo visible || echo hidden")" \
		hidden "$who: the cache store itself is not visible inside"
	$RUN_AS "$CORDON" cache list --json >"$T/list-$who"
	is "$(python3 -c 'import json,sys; print(" ".join(sorted("%s/%s/%d" % (e["agent"] or "-", e["name"], e["files"]) for e in json.load(open(sys.argv[1])))))' "$T/list-$who")" \
		"-/pip/0 alice/pip/1 bob/pip/0" "$who: cache list names each agent's caches"

	# The install step fills the cache through the allowlisted loopback
	# index; the command reads it, cannot write it, and has no network.
	out=$($RUN_AS "$CORDON" run --agent alice --cache pip:/cache --allow-host "127.0.0.1:$port" \
		--install "curl -sf -o /cache/pkg http://127.0.0.1:$port/pkg && echo installed" \
		-- sh -c 'cat /cache/pkg; echo; touch /cache/new 2>/dev/null && echo writable || echo read-only
curl -s --max-time 3 http://127.0.0.1:'"$port"'/ >/dev/null && echo net || echo no-net
curl -s --max-time 3 -x http://127.0.0.1:3128 http://127.0.0.1:'"$port"'/ >/dev/null && echo proxy || echo no-proxy' 2>"$T/install-err-$who")
	rc=$?
	is "$rc" 0 "$who: the install run succeeds"
	is "$out" "outside-ok
read-only
no-net
no-proxy" "$who: the command sees the installed file read-only, without network"
	ok "$who: the install step's output went to stderr" grep -qx installed "$T/install-err-$who"

	$RUN_AS "$CORDON" run --agent alice --cache pip:/cache --install 'exit 3' -- sh -c "echo ran" >"$T/failed-$who" 2>"$T/failed-err-$who"
	is "$?" 125 "$who: a failed install step refuses the command"
	is "$(cat "$T/failed-$who")" "" "$who: which did not run"
	ok "$who: with a reason" grep -q 'install step failed (exit 3)' "$T/failed-err-$who"
	nok "$who: without --allow-host the install step has no network" \
		$RUN_AS "$CORDON" run --agent alice --cache pip:/cache --install "curl -sf --max-time 3 -o /cache/pkg2 http://127.0.0.1:$port/" -- true

	# Clearing does not follow what the sandbox planted.
	echo keep >"$T/keep-$who"
	chmod 0644 "$T/keep-$who"
	$RUN_AS "$CORDON" run --agent alice --cache pip:/cache -- sh -c "ln -s '$T/keep-$who' /cache/link; mkdir /cache/ro; echo x >/cache/ro/f; chmod 0555 /cache/ro"
	ok "$who: cache clear" $RUN_AS "$CORDON" cache clear pip --agent alice
	is "$(cat "$T/keep-$who")" keep "$who: a planted symlink's target is left alone"
	$RUN_AS "$CORDON" cache list --agent alice --json >"$T/caches-$who" 2>&1
	lacks "$who: the cleared cache is gone" pip "$T/caches-$who" '^[[{]'
	nok "$who: clearing a missing cache fails" $RUN_AS "$CORDON" cache clear pip --agent alice
}

for_each_user caches

for bad in "../x:/c" ".hidden:/c" "a/b:/c" "x" "x:relative"; do
	"$CORDON" run --cache "$bad" -- true 2>"$T/err"
	is "$?" 125 "--cache '$bad' is refused"
	is "$(wc -l <"$T/err" | tr -d ' ')" 1 "with one line"
done
"$CORDON" cache clear ../x 2>/dev/null
is "$?" 2 "cache clear refuses a path"
"$CORDON" cache frob 2>/dev/null
is "$?" 2 "an unknown cache subcommand"
printf 'version: 1\nagents: [{id: a1, owner: o}]\ntools: [{id: shell, kind: command}]\ngrants:\n  - {id: t, agent: a1, tool: shell, actions: [execute], scope: {argv: ["true"]}, owner: o, justification: j, review_by: 2099-01-01, expires: 2099-01-01}\n' >"$T/cp.yaml"
chmod 0644 "$T/cp.yaml"
"$CORDON" run --policy "$T/cp.yaml" --agent a1 --cache pip:/cache -- true 2>"$T/cp.err"
is "$?" 0 "--cache is allowed under --policy (the agent's own cache)"
kill "$http_pid" 2>/dev/null
done_testing
