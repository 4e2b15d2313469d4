#!/bin/sh
# cordon inventory (issue 8): each configured MCP server is started in its
# sandbox and asked what it really offers; per agent the report shows the
# tools granted, the tools offered but not in the policy, the tools the
# policy names that are not offered, and the server's reach.  With the real
# reference servers (filesystem, everything), as root and as nobody.
. "${CORDON_SRC:-.}/tests/lib.sh"
. "$CORDON_SRC/tests/mcp/setup.sh"

if ! mcp_setup; then
	skip "cannot install the MCP SDK and servers (npm ci)"
	done_testing
fi

inv() {
	u=$1
	D=$T/$u
	mkdir -p "$D/data" "$D/work"
	[ "$u" = nobody ] && chown -R 65534:65534 "$D"
	cat >"$D/policy.yaml" <<EOP
version: 1
agents: [{id: coder, owner: ops}, {id: reader, owner: ops}]
tools:
  - id: fs
    kind: mcp
    operations: {read_text_file: read, write_file: update, delete_file: delete}
    args: {path: path, content: value}
  - id: ev
    kind: mcp
    operations: {echo: read}
    args: {message: value}
profiles:
  fs-server: {timeout: 1h, rw: [$D/data], ro: [$MCP_CACHE]}
  ev-server: {timeout: 1h, ro: [$MCP_CACHE]}
grants:
  - {id: fs-launch, agent: coder, tool: fs, actions: [execute], scope: {argv: [node, $MCP_FS_JS]}, profile: fs-server, owner: ops, justification: t, review_by: 2030-01-01, expires: 2030-01-01}
  - {id: ev-launch, agent: reader, tool: ev, actions: [execute], scope: {argv: [node, $MCP_EVERYTHING_JS]}, profile: ev-server, owner: ops, justification: t, review_by: 2030-01-01, expires: 2030-01-01}
  - {id: fs-read, agent: coder, tool: fs, actions: [read], scope: {paths: [$D/data/**]}, owner: ops, justification: t, review_by: 2030-01-01, expires: 2030-01-01}
  - {id: fs-read2, agent: reader, tool: fs, actions: [read], scope: {paths: [$D/data/**]}, owner: ops, justification: t, review_by: 2030-01-01, expires: 2030-01-01}
  - {id: ev-echo, agent: reader, tool: ev, actions: [read], owner: ops, justification: t, review_by: 2030-01-01, expires: 2030-01-01}
  - {id: fs-del, agent: coder, tool: fs, actions: [delete], scope: {paths: [$D/data/tmp/**]}, approval: human, owner: ops, justification: t, review_by: 2030-01-01, expires: 2030-01-01}
EOP
	cat >"$D/mcp.json" <<EOJ
{"mcpServers": {
  "files": {"command": "cordon", "args": ["mcp", "--policy", "$D/policy.yaml", "--agent", "coder", "--server", "fs", "--", "node", "$MCP_FS_JS", "$D/data"]},
  "ev": {"command": "node", "args": ["$MCP_EVERYTHING_JS", "stdio"]},
  "ghost": {"command": "node", "args": ["/nonexistent.js"]}
}}
EOJ
	chmod 0644 "$D/policy.yaml" "$D/mcp.json"
	cd "$D/work" || return
	$RUN_AS "$CORDON" inventory --policy "$D/policy.yaml" --config "$D/mcp.json" --json >"$D/inv.json" 2>"$D/inv.err"
	is "$?" 1 "$u: servers offering tools the policy does not name: exit 1"
	q() { python3 -c "import json,sys; r=json.load(open('$D/inv.json')); print($1)"; }
	is "$(q "r['fs']['launched_as']")" coder "$u: the wrapped entry is unwrapped to server fs, launched by coder"
	n=$(q "r['fs']['offered']")
	[ "$n" -ge 10 ]
	is "$?" 0 "$u: the filesystem server really offers its tools ($n)"
	is "$(q "'directory_tree' in r['fs']['not_in_policy'] and 'read_text_file' not in r['fs']['not_in_policy']")" True \
		"$u: offered tools the policy does not name are listed"
	is "$(q "r['fs']['not_offered']")" "['delete_file']" "$u: a policy tool the server does not offer is listed"
	is "$(q "sorted(g['tool'] for g in r['fs']['granted']['coder'])")" "['read_text_file']" \
		"$u: of what the server offers, coder is granted read_text_file"
	is "$(q "r['fs']['reach']['rw']")" "['$D/data']" "$u: the server's reach is its profile's writable path"
	is "$(q "r['ev']['launched_as']")" reader "$u: server-everything is launched by the agent allowed to"
	is "$(q "[g['tool'] for g in r['ev']['granted']['reader']]")" "['echo']" "$u: reader is granted echo only"
	is "$(q "'error' in r['ghost']")" True "$u: a server no agent may launch is reported, not skipped"
	$RUN_AS "$CORDON" inventory --policy "$D/policy.yaml" --config "$D/mcp.json" >"$D/inv.txt" 2>&1
	case $(cat "$D/inv.txt") in *"server fs (launched as coder"*"not in the policy:"*directory_tree*"NOT INVENTORIED"*) r=0 ;; *) r=1 ;; esac
	is "$r" 0 "$u: the text report says the same"
	cd "$T" || return
}
for_each_user inv
nok "a config without mcpServers is refused" "$CORDON" inventory --policy "$T/root/policy.yaml" --config /dev/null
done_testing
