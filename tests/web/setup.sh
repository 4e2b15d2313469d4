# setup.sh — sourced by the browser tests of `cordon serve`: installs the
# pinned playwright-core from tests/web/package-lock.json with `npm ci`
# into a cache directory keyed by the lockfile's hash (once; no browser
# download: the tests drive Debian's chromium), and sets WEB_CACHE.
# Returns non-zero (with a reason on stderr) when node, npm or chromium is
# missing or the install fails.
#   web_run SECONDS SCRIPT [NAME=VALUE...]  node runs SCRIPT of the cache
#   (SHOTS: $CORDON_BUILD/test-artifacts, and NAME=VALUE in its environment)
#   for at most SECONDS; its TAP lines become the calling test's (lib.sh),
#   then "the browser flow passed" (its exit status 0).

_web_install() {
	rm -f "$2/.done"
	rm -rf "$2/node_modules"
	cp "$1/package.json" "$1/package-lock.json" "$1"/*.mjs "$2/" || return 1
	(cd "$2" && PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 npm ci --no-audit --no-fund --ignore-scripts \
		>npm-ci.log 2>&1) ||
		{ echo "npm ci failed: $(grep -m3 'ERR!' "$2/npm-ci.log" || tail -3 "$2/npm-ci.log")" >&2; return 1; }
	[ -s "$2/node_modules/playwright-core/package.json" ] ||
		{ echo "npm ci left no playwright-core in $2" >&2; return 1; }
	chmod -R a+rX "$2" || return 1
	touch "$2/.done"
}

web_setup() {
	command -v node >/dev/null 2>&1 || { echo "node is missing (scripts/deps.sh test)" >&2; return 1; }
	command -v npm >/dev/null 2>&1 || { echo "npm is missing (scripts/deps.sh test)" >&2; return 1; }
	[ -x /usr/bin/chromium ] || { echo "chromium is missing (scripts/deps.sh test)" >&2; return 1; }
	_src=${CORDON_SRC:-.}/tests/web
	_key=$(cat "$_src/package-lock.json" "$_src"/*.mjs | sha256sum | cut -c1-16)
	WEB_CACHE=${CORDON_TEST_CACHE:-/var/tmp/cordon-test-cache}/web-$_key
	if [ ! -f "$WEB_CACHE/.done" ]; then
		mkdir -p "$WEB_CACHE" && chmod 0755 "$WEB_CACHE" "$(dirname "$WEB_CACHE")" || return 1
		(
			flock -w 600 9 || { echo "waited 600 s for another npm ci ($WEB_CACHE.lock)" >&2; exit 1; }
			[ -f "$WEB_CACHE/.done" ] && exit 0
			_web_install "$_src" "$WEB_CACHE"
		) 9>>"$WEB_CACHE.lock" || return 1
	fi
	export WEB_CACHE
}

web_run() {
	_web_secs=$1 _web_js=$2
	shift 2
	env "$@" SHOTS="$CORDON_BUILD/test-artifacts" NODE_PATH="$WEB_CACHE/node_modules" \
		timeout "$_web_secs" node "$WEB_CACHE/$_web_js" >"$T/browser.tap" 2>"$T/browser.err"
	_web_rc=$?
	# The browser's own TAP lines, renumbered into this test's.
	while IFS= read -r _web_line; do
		case $_web_line in
		"ok "*) ok "browser: ${_web_line#* - }" true ;;
		"not ok "*) nok "browser: ${_web_line#* - }" true ;;
		"#"*) diag "${_web_line#\# }" ;;
		esac
	done <"$T/browser.tap"
	is "$_web_rc" 0 "the browser flow passed$( [ $_web_rc = 0 ] || echo ": $(tail -3 "$T/browser.err")")"
}
