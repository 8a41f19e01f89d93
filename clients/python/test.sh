#!/usr/bin/env bash
# clients/python/test.sh: the Python client's tests, and every Python example in docs/clients.md,
# against a real stack. Builds nothing: the gateway and the demo provider come from
# $GATEWAY_TEST_BIN_DIR (default build/release/bin; `scripts/build.sh release --target
# write-gateway demo-provider` makes them). The suite (python3 -m unittest) starts a private
# PostgreSQL, both demo providers and the gateway on free ports (tests/stack.py), in
# $WRITEGATEWAY_TEST_DIR (default build/clients-python, its database fresh every run), and stops
# them when it ends, also on failure, Ctrl-C or TERM. Exits non-zero if any test or example failed.
#
# Env: PYTHON [/usr/bin/python3, else python3 on PATH]: the interpreter (3.11 or later).
set -euo pipefail

here=$(cd "$(dirname -- "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)

say() { echo "clients/python/test.sh: $*" >&2; }
die() { say "$*"; exit 1; }

python=${PYTHON:-}
if [ -z "$python" ]; then
  if [ -x /usr/bin/python3 ]; then python=/usr/bin/python3; else python=python3; fi
fi
"$python" -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null ||
  die "$python is not Python 3.11 or later (set PYTHON)"

bin=${GATEWAY_TEST_BIN_DIR:-$repo/build/release/bin}
case $bin in /*) ;; *) bin=$repo/$bin ;; esac
for program in write-gateway demo-provider; do
  [ -x "$bin/$program" ] ||
    die "$bin/$program is missing: build it (scripts/build.sh release --target write-gateway demo-provider) or set GATEWAY_TEST_BIN_DIR"
done
export GATEWAY_TEST_BIN_DIR=$bin
export WRITEGATEWAY_TEST_DIR=${WRITEGATEWAY_TEST_DIR:-$repo/build/clients-python}
mkdir -p "$WRITEGATEWAY_TEST_DIR"

suite=
# shellcheck disable=SC2317 # called by the traps
finish() {
  trap - EXIT INT TERM
  if [ -n "$suite" ]; then
    # TERM unwinds the suite like Ctrl-C, so it stops the gateway and providers it started;
    # then anything of its process group still alive (a test's child agent) goes.
    kill -TERM "$suite" 2>/dev/null || true
    wait "$suite" 2>/dev/null || true
    kill -KILL -- "-$suite" 2>/dev/null || true
  fi
  # PostgreSQL runs outside the suite's process group (pg_ctl daemonizes it).
  "$repo/scripts/pg.sh" stop "$WRITEGATEWAY_TEST_DIR/pg" || true
}
trap finish EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

say "binaries from $bin; stack in $WRITEGATEWAY_TEST_DIR; $("$python" --version)"
cd "$here"
# In the background, in its own process group, so that INT/TERM reach the traps at once (bash
# delays traps until a foreground child exits) and the whole suite can be stopped.
setsid "$python" -m unittest discover -s tests -t . -v &
suite=$!
rc=0
wait "$suite" || rc=$?
suite=
if [ "$rc" -ne 0 ]; then
  say "FAILED (unittest exit $rc); the stack's logs are in $WRITEGATEWAY_TEST_DIR/logs"
fi
exit "$rc"
