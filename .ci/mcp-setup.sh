#!/usr/bin/env bash
# Installs what tests/mcp needs beyond the Python extras: the MCP reference server
# (server-everything), the conformance suite, an OAuth authorization server (oidc-provider, for
# the protected-resource tests), the AG-UI client and the AI SDK (tests/ui checks toolwire's
# UI streams with each protocol's own client), and Node 22 (the conformance CLI needs it; the
# machine's own Node may be older). Everything goes into .ci/node/ so nothing global changes.
# Safe to run again: npm skips what is already installed at these versions.
set -euo pipefail
cd "$(dirname "$0")"
mkdir -p node
cd node
# Installed files are not part of the project: keep git from ever picking them up.
printf '*\n' > .gitignore
if [ ! -f package.json ]; then
    printf '{"name": "toolwire-mcp-ci", "private": true}\n' > package.json
fi
npm install --no-audit --no-fund --loglevel=error \
    node@22 \
    @modelcontextprotocol/server-everything@2026.8.31 \
    @modelcontextprotocol/conformance@0.1.16 \
    oidc-provider@9.13.3 \
    @ag-ui/client@1.0.0 \
    ai@7.0.173 \
    zod@4.1.12
./node_modules/.bin/node --version
