#!/usr/bin/env bash
# mcp/test.sh: the MCP server's tests against the real stack; the runner is the client's
# (clients/typescript/test.sh mcp), which builds both packages and starts and stops the stack.
exec "$(cd "$(dirname -- "${BASH_SOURCE[0]}")" && pwd)/../clients/typescript/test.sh" mcp "$@"
