#!/usr/bin/env bash
# Installs the pinned MCP reference servers and the TypeScript SDK v2 with
# @modelcontextprotocol/ext-apps (package-lock.json), which
# TestGatewayNPMServers and TestGatewayMCPApp run behind mcprt gateway,
# once per lock, into a cache directory, and prints that directory: CI runs
#
#   MCPRT_NPM_SERVERS=$(bash test/e2e/npm/install.sh) go test -race ./...
#
# Environment: MCPRT_NPM_CACHE (default $HOME/.cache/mcprt-npm-servers).
# Needs npm and Node.js 20 or later.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
cache=${MCPRT_NPM_CACHE:-$HOME/.cache/mcprt-npm-servers}
mkdir -p "$cache"
stamp=$(cat "$here/package.json" "$here/package-lock.json" | sha256sum | cut -d' ' -f1)
if [ "$(cat "$cache/.installed" 2>/dev/null)" != "$stamp" ] || [ ! -d "$cache/node_modules/.bin" ]; then
	rm -f "$cache/.installed"
	cp "$here/package.json" "$here/package-lock.json" "$cache/"
	(cd "$cache" && npm ci --no-audit --no-fund --loglevel=error) >&2
	echo "$stamp" >"$cache/.installed"
fi
echo "$cache"
