#!/usr/bin/env bash
# Installs the pinned authorization server (oidc-provider, package-lock.json)
# that the e2e tests of -http-oauth-issuer get real tokens from, once per
# lock, into a cache directory, and prints that directory: CI runs
#
#   MCPRT_OAUTH_AS=$(bash test/oauth/install.sh) go test -race ./...
#
# The tests run test/oauth/as.mjs with that directory's node_modules.
# Environment: MCPRT_OAUTH_AS_CACHE (default $HOME/.cache/mcprt-oauth-as).
# Needs npm and Node.js 20 or later.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
cache=${MCPRT_OAUTH_AS_CACHE:-$HOME/.cache/mcprt-oauth-as}
mkdir -p "$cache"
stamp=$(cat "$here/package.json" "$here/package-lock.json" | sha256sum | cut -d' ' -f1)
if [ "$(cat "$cache/.installed" 2>/dev/null)" != "$stamp" ] || [ ! -d "$cache/node_modules/oidc-provider" ]; then
	rm -f "$cache/.installed"
	cp "$here/package.json" "$here/package-lock.json" "$cache/"
	(cd "$cache" && npm ci --no-audit --no-fund --loglevel=error) >&2
	echo "$stamp" >"$cache/.installed"
fi
echo "$cache"
