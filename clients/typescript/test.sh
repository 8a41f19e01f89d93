#!/usr/bin/env bash
# clients/typescript/test.sh [client|mcp|all]   (default: all)
# The TypeScript client's tests (and, with mcp or all, the MCP server's: mcp/test.sh) against
# the real gateway, PostgreSQL and demo providers. Installs the npm dependencies from the
# committed lock files (npm ci, offline cache first), builds with tsc, starts a private stack on
# free ports with the binaries in $GATEWAY_TEST_BIN_DIR (default build/release/bin), runs the
# unit tests, the integration tests one file at a time (one of them stops and starts the
# database), and every TypeScript example of docs/clients.md as written. Stops what it started,
# also on failure or Ctrl-C; exits non-zero if anything failed.
set -euo pipefail

here=$(cd "$(dirname -- "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$here/../.." && pwd)
which=${1:-all}
case $which in client | mcp | all) ;; *) echo "usage: $0 [client|mcp|all]" >&2; exit 2 ;; esac
bin=${GATEWAY_TEST_BIN_DIR:-$REPO/build/release/bin}
case $bin in /*) ;; *) bin=$REPO/$bin ;; esac
work=$REPO/build/clients-ts

say() { echo "clients/typescript/test.sh: $*" >&2; }
command -v node >/dev/null && command -v npm >/dev/null || { say "node and npm are needed (scripts/deps.sh installs them)"; exit 1; }

# shellcheck source=clients/typescript/test/stack.sh
source "$here/test/stack.sh"
trap stack_stop EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

npm_install() {
  # The committed lock file, exactly; the local cache first, the registry for what it lacks.
  (cd "$1" && npm ci --prefer-offline --no-audit --no-fund --loglevel=error)
}

say "npm ci and tsc (clients/typescript)"
npm_install "$here"
(cd "$here" && npx tsc -p tsconfig.json && npx tsc -p tsconfig.test.json)
if [ "$which" != client ]; then
  say "npm ci and tsc (mcp)"
  npm_install "$REPO/mcp"
  (cd "$REPO/mcp" && npx tsc -p tsconfig.json && npx tsc -p tsconfig.test.json)
fi

failed=()
# run_tests NAME DIR FILES...: each file on its own, so no two share the stack at once.
run_tests() {
  local name=$1 dir=$2 file
  shift 2
  for file in "$@"; do
    say "node --test ${file#"$dir"/}"
    (cd "$dir" && node --test "$file") || failed+=("$name: ${file#"$dir"/}")
  done
}

stack_start "$work/stack" "$bin"

if [ "$which" != mcp ]; then
  run_tests client "$here" "$here"/dist-test/test/unit/*.test.js "$here"/dist-test/test/integration/*.test.js
  # docs/clients.md's TypeScript examples, as written: each ```ts block of the "## TypeScript"
  # section becomes one file, compiled against the package and run against the stack.
  examples=$here/dist-examples
  rm -rf "$examples" && mkdir -p "$examples/src"
  python3 "$here/test/extract_examples.py" "$REPO/docs/clients.md" "TypeScript" ts "$examples/src"
  cp "$here/test/examples.tsconfig.json" "$examples/tsconfig.json"
  (cd "$here" && npx tsc -p dist-examples/tsconfig.json) || failed+=("docs/clients.md examples: tsc")
  for example in "$examples"/out/*.js; do
    [ -e "$example" ] || { failed+=("docs/clients.md: no TypeScript example found"); break; }
    say "docs/clients.md example ${example##*/}"
    (cd "$here" && node "$example") || failed+=("docs/clients.md example ${example##*/}")
  done
fi
if [ "$which" != client ]; then
  run_tests mcp "$REPO/mcp" "$REPO"/mcp/dist-test/mcp/test/*.test.js
fi

if [ ${#failed[@]} -ne 0 ]; then
  say "FAILED: ${failed[*]}"
  exit 1
fi
say "all passed ($which)"
