#!/usr/bin/env bash
# Installs the pinned MCP Inspector (package-lock.json), whose CLI
# TestGatewayToolSearchInspector drives through mcprt gateway -tool-search,
# once per lock, into a cache directory, and prints that directory: CI runs
#
#   MCPRT_INSPECTOR=$(bash test/e2e/inspector/install.sh) go test -race ./test/e2e
#
# Environment: MCPRT_INSPECTOR_CACHE (default $HOME/.cache/mcprt-inspector).
# Needs npm and Node.js 22 or later (the Inspector's engines).
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
cache=${MCPRT_INSPECTOR_CACHE:-$HOME/.cache/mcprt-inspector}
mkdir -p "$cache"
stamp=$(cat "$here/package.json" "$here/package-lock.json" | sha256sum | cut -d' ' -f1)
if [ "$(cat "$cache/.installed" 2>/dev/null)" != "$stamp" ] || [ ! -d "$cache/node_modules/.bin" ]; then
	rm -f "$cache/.installed"
	cp "$here/package.json" "$here/package-lock.json" "$cache/"
	(cd "$cache" && npm ci --no-audit --no-fund --loglevel=error) >&2
	echo "$stamp" >"$cache/.installed"
fi
echo "$cache"
