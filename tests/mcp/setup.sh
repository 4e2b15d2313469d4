# setup.sh — sourced by the MCP tests and bench/mcp.sh: installs the pinned
# SDK client and reference servers from tests/mcp/package-lock.json with
# `npm ci` into a cache directory keyed by the lockfile's hash (once), and
# sets MCP_CACHE, MCP_CLIENT, MCP_FS_JS and MCP_EVERYTHING_JS.  Returns
# non-zero (with a reason on stderr) when node or npm is missing or the
# install fails.

# Under the lock: a clean install, checked, and only then marked done (an
# interrupted or failed install is redone by the next test, never used).
_mcp_install() {
	rm -f "$2/.done"
	rm -rf "$2/node_modules"
	cp "$1/package.json" "$1/package-lock.json" "$1/client.mjs" "$2/" || return 1
	(cd "$2" && npm ci --no-audit --no-fund --ignore-scripts >npm-ci.log 2>&1) ||
		{ echo "npm ci failed: $(grep -m3 'ERR!' "$2/npm-ci.log" || tail -3 "$2/npm-ci.log")" >&2; return 1; }
	for _f in node_modules/@modelcontextprotocol/server-filesystem/dist/index.js \
		node_modules/@modelcontextprotocol/server-everything/dist/index.js \
		node_modules/@modelcontextprotocol/sdk/package.json; do
		[ -s "$2/$_f" ] || { echo "npm ci left no $_f in $2" >&2; return 1; }
	done
	chmod -R a+rX "$2" || return 1
	touch "$2/.done"
}

mcp_setup() {
	command -v node >/dev/null 2>&1 || { echo "node is missing (scripts/deps.sh test)" >&2; return 1; }
	command -v npm >/dev/null 2>&1 || { echo "npm is missing (scripts/deps.sh test)" >&2; return 1; }
	_src=${CORDON_SRC:-.}/tests/mcp
	_key=$(cat "$_src/package-lock.json" "$_src/client.mjs" | sha256sum | cut -c1-16)
	MCP_CACHE=${CORDON_TEST_CACHE:-/var/tmp/cordon-test-cache}/mcp-$_key
	if [ ! -f "$MCP_CACHE/.done" ]; then
		mkdir -p "$MCP_CACHE" && chmod 0755 "$MCP_CACHE" "$(dirname "$MCP_CACHE")" || return 1
		# Tests run in parallel (prove -j): one installs while the others
		# wait on the lock (flock, bounded), then find it done.
		(
			flock -w 600 9 || { echo "waited 600 s for another npm ci ($MCP_CACHE.lock)" >&2; exit 1; }
			[ -f "$MCP_CACHE/.done" ] && exit 0
			_mcp_install "$_src" "$MCP_CACHE"
		) 9>>"$MCP_CACHE.lock" || return 1
	fi
	MCP_CLIENT=$MCP_CACHE/client.mjs
	MCP_FS_JS=$MCP_CACHE/node_modules/@modelcontextprotocol/server-filesystem/dist/index.js
	MCP_EVERYTHING_JS=$MCP_CACHE/node_modules/@modelcontextprotocol/server-everything/dist/index.js
	export MCP_CACHE MCP_CLIENT MCP_FS_JS MCP_EVERYTHING_JS
	# Debian 12's Node 18 has no global `crypto` unless asked for; the SDK's
	# Streamable HTTP transport uses it (server-everything's streamableHttp
	# mode answered "crypto is not defined" to every initialize there).
	# (`node -e` cannot tell: it sees the crypto module as a global there.)
	if [ "$(node -p 'process.versions.node.split(".")[0]' 2>/dev/null)" -lt 19 ] 2>/dev/null; then
		NODE_OPTIONS="--experimental-global-webcrypto${NODE_OPTIONS:+ $NODE_OPTIONS}"
		export NODE_OPTIONS
	fi
}
