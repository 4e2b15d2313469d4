# setup.sh — sourced by the MCP tests and bench/mcp.sh: installs the pinned
# SDK client and reference servers from tests/mcp/package-lock.json with
# `npm ci` into a cache directory keyed by the lockfile's hash (once), and
# sets MCP_CACHE, MCP_CLIENT, MCP_FS_JS and MCP_EVERYTHING_JS.  Returns
# non-zero (with a reason on stderr) when node or npm is missing or the
# install fails.
mcp_setup() {
	command -v node >/dev/null 2>&1 || { echo "node is missing (scripts/deps.sh test)" >&2; return 1; }
	command -v npm >/dev/null 2>&1 || { echo "npm is missing (scripts/deps.sh test)" >&2; return 1; }
	_src=${CORDON_SRC:-.}/tests/mcp
	_key=$(cat "$_src/package-lock.json" "$_src/client.mjs" | sha256sum | cut -c1-16)
	MCP_CACHE=${CORDON_TEST_CACHE:-/var/tmp/cordon-test-cache}/mcp-$_key
	if [ ! -f "$MCP_CACHE/.done" ]; then
		mkdir -p "$MCP_CACHE" && chmod 0755 "$MCP_CACHE" "$(dirname "$MCP_CACHE")" || return 1
		cp "$_src/package.json" "$_src/package-lock.json" "$_src/client.mjs" "$MCP_CACHE/" || return 1
		(cd "$MCP_CACHE" && npm ci --no-audit --no-fund --ignore-scripts >npm-ci.log 2>&1) ||
			{ echo "npm ci failed: $(tail -3 "$MCP_CACHE/npm-ci.log")" >&2; return 1; }
		chmod -R a+rX "$MCP_CACHE"
		touch "$MCP_CACHE/.done"
	fi
	MCP_CLIENT=$MCP_CACHE/client.mjs
	MCP_FS_JS=$MCP_CACHE/node_modules/@modelcontextprotocol/server-filesystem/dist/index.js
	MCP_EVERYTHING_JS=$MCP_CACHE/node_modules/@modelcontextprotocol/server-everything/dist/index.js
	export MCP_CACHE MCP_CLIENT MCP_FS_JS MCP_EVERYTHING_JS
}
