#!/usr/bin/env bash
# THE test command: scripts/test.sh [release|asan|all]   (default: all)
# Builds the tree(s), checks the container files (scripts/check-container.py), starts a private
# PostgreSQL in build/test-pg on a free port, runs ctest in each tree, stops PostgreSQL, runs the
# benchmark's --quick smoke (release tree; it only has to complete and write
# build/bench-quick/results.md), runs every fuzz harness for 10 s (scripts/fuzz.sh), and exits
# non-zero if any tree, check, the smoke or a harness failed.
#
# Tests find their environment in:
#   GATEWAY_TEST_PG         libpq connection string of the shared test PostgreSQL
#   GATEWAY_TEST_PG_SCRIPT  absolute path of scripts/pg.sh (fault tests run private clusters)
#   GATEWAY_TEST_REPO       absolute repo root (config/, schema/, fixtures)
#   GATEWAY_TEST_BIN_DIR    the tree's bin/ (write-gateway, demo-provider)
set -euo pipefail

repo=$(cd "$(dirname -- "${BASH_SOURCE[0]}")/.." && pwd)
cd "$repo"

which=${1:-all}
case $which in
  release) trees=(release) ;;
  asan) trees=(asan) ;;
  all) trees=(release asan) ;;
  *) echo "usage: $0 [release|asan|all]" >&2; exit 2 ;;
esac

# Seconds per phase, printed with the summary: CI's budget is watched from there.
timings=()
phase_start=$SECONDS
phase_done() { timings+=("$1 $((SECONDS - phase_start))s"); phase_start=$SECONDS; }

scripts/deps.sh
phase_done deps
# The tests build the release tree without profile feedback (scripts/pgo.sh): a profile changes
# how the same code is laid out and inlined, not what it does, and its instrumented second build
# and training run were a third of a cold CI's build. bench/run.sh and scripts/run.sh build with
# it. Exported, so every script below that builds (run.sh, ha.sh, the bench smoke) reuses the
# same tree rather than train and recompile it. GATEWAY_PGO=1 scripts/test.sh tests the profiled build.
export GATEWAY_PGO=${GATEWAY_PGO:-0}
# Just installed or checked: build.sh need not check again.
GATEWAY_SKIP_DEPS=1 scripts/build.sh "$which"
phase_done build

# Dockerfile and docker-compose.yml, without Docker: they parse, name what config/ and
# scripts/deps.sh hold, and each check catches what it is for (scripts/check-container.py).
echo "== container files: scripts/check-container.py --self-test"
container_rc=0
python3 scripts/check-container.py --self-test || container_rc=$?

# Durability is irrelevant for throwaway clusters, and commits without fsync are much faster.
# Exported: the fault tests' own clusters (started via pg.sh) get the same settings.
export PG_EXTRA_OPTS="-c fsync=off -c synchronous_commit=off -c full_page_writes=off"
pgdir=$repo/build/test-pg

ctest_pid=
trap 'scripts/pg.sh stop "$pgdir" || true' EXIT
# ctest runs in the background, in its own process group, so that INT/TERM reach these traps at
# once (bash delays traps until a foreground child exits) and stopping it also stops the tests
# it started; then the EXIT trap stops PostgreSQL.
trap '[ -z "$ctest_pid" ] || kill -TERM -- "-$ctest_pid" 2>/dev/null; exit 130' INT
trap '[ -z "$ctest_pid" ] || kill -TERM -- "-$ctest_pid" 2>/dev/null; exit 143' TERM

# Fresh cluster every run, so no test depends on what an earlier run left behind.
scripts/pg.sh destroy "$pgdir"

port_in_use() { [ -n "$(ss -ltnH "sport = :$1")" ]; }

# First port from 25433 up that nothing listens on; retry on the next one if we lose a race. Below
# the kernel's ephemeral range (32768-60999), so no outgoing connection can hold it.
port=25433
started=0
while [ "$port" -lt 25533 ]; do
  if ! port_in_use "$port" && scripts/pg.sh start "$pgdir" "$port"; then
    started=1
    break
  fi
  port=$((port + 1))
done
[ "$started" = 1 ] || { echo "test.sh: could not start PostgreSQL on ports 25433-25532" >&2; exit 1; }

export GATEWAY_TEST_PG
GATEWAY_TEST_PG=$(scripts/pg.sh url "$pgdir" "$port")
export GATEWAY_TEST_PG_SCRIPT=$repo/scripts/pg.sh
export GATEWAY_TEST_REPO=$repo
# A UBSan report (fatal: -fno-sanitize-recover) is far easier to act on with its stack.
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1}
# The asan tree is clang's: its runtime finds the symbolizer by this path (Debian names the
# binary in PATH llvm-symbolizer-19), or its reports carry addresses instead of file:line.
export ASAN_SYMBOLIZER_PATH=${ASAN_SYMBOLIZER_PATH:-/usr/lib/llvm-19/bin/llvm-symbolizer}
# libpqxx leaks on a terminated connection (third-party; see the file).
export LSAN_OPTIONS=${LSAN_OPTIONS:-suppressions=$repo/tests/lsan.supp:print_suppressions=0}

declare -A result=()
suites=()  # the suites after ctest, one "name: passed|FAILED" each, for the summary
failed=0
for tree in "${trees[@]}"; do
  dir=build/$tree
  export GATEWAY_TEST_BIN_DIR=$repo/$dir/bin
  echo "== ctest $dir (PostgreSQL: $GATEWAY_TEST_PG)"
  rc=0
  # --no-tests=error: a tree that registers no tests is a broken build, not a pass.
  setsid ctest --test-dir "$dir" --output-on-failure -j2 --timeout 300 --no-tests=error \
    --output-log "$dir/ctest.log" &
  ctest_pid=$!
  wait "$ctest_pid" || rc=$?
  ctest_pid=
  phase_done "ctest-$tree"
  line=$(grep -E '^[0-9]+% tests passed' "$dir/ctest.log" | tail -n 1 || true)
  result[$tree]="${line:-no ctest summary} (ctest exit $rc)"
  [ "$rc" -eq 0 ] || failed=1
done

# README.md's curl session, end to end, against the stack scripts/run.sh starts (release tree),
# on free ports of its own (scripts/demo-stack.sh): the quick start cannot drift unnoticed.
if [[ " ${trees[*]} " == *" release "* ]]; then
  echo "== README session: scripts/demo-stack.sh"
  scripts/demo-stack.sh || { echo "test.sh: the README session failed (scripts/demo-stack.sh)" >&2; failed=1; }
  phase_done readme
fi

# --- Python client (issue #33): clients/python/test.sh ---------------------------------------
# Its unit tests, its tests against a real PostgreSQL, demo providers and gateway (the release
# tree's binaries, on free ports of its own), and every Python example in docs/clients.md.
if [[ " ${trees[*]} " == *" release "* ]]; then
  echo "== Python client: clients/python/test.sh"
  if GATEWAY_TEST_BIN_DIR=$repo/build/release/bin clients/python/test.sh; then
    suites+=("python client: passed")
  else
    echo "test.sh: the Python client's tests failed (clients/python/test.sh)" >&2
    suites+=("python client: FAILED")
    failed=1
  fi
  phase_done client-python
fi
# --- end of the Python client block -------------------------------------------------------------

# --- TypeScript client and MCP server (issue #33): clients/typescript/test.sh all ---------------
# npm ci from the committed lock files, tsc, then node --test against a private stack (the release
# tree's binaries): the client's unit and integration tests, docs/clients.md's TypeScript
# examples, and mcp/'s tests through the SDK's own client.
if [[ " ${trees[*]} " == *" release "* ]]; then
  echo "== TypeScript client and MCP server: clients/typescript/test.sh all"
  if GATEWAY_TEST_BIN_DIR=$repo/build/release/bin clients/typescript/test.sh all; then
    suites+=("typescript client and mcp: passed")
  else
    echo "test.sh: the TypeScript client's or the MCP server's tests failed (clients/typescript/test.sh)" >&2
    suites+=("typescript client and mcp: FAILED")
    failed=1
  fi
  phase_done client-ts
fi
# --- end of the TypeScript block ----------------------------------------------------------------

# ---- HA drill (issue #32): scripts/ha.sh up, drill, down ---------------------------------------
# etcd, three Patroni nodes and two gateways on loopback (build/ha-ci); three drills under load,
# each followed by every property checked at the provider and in the database: the primary's
# Patroni and postmaster SIGKILLed, a planned switchover, a gateway SIGKILLed with the primary
# (docs/deployment.md, "Drills"; etcd lost and the partition run with `scripts/ha.sh drill all`).
if [[ " ${trees[*]} " == *" release "* ]]; then
  echo "== HA drill: scripts/ha.sh up && scripts/ha.sh drill kill switchover gateway-and-primary"
  ha_rc=0
  export HA_DIR=$repo/build/ha-ci
  # Fresh every run (the servers run with Patroni's durable settings, not PG_EXTRA_OPTS), and
  # stopped whatever happens; the state and logs stay in build/ha-ci when the drill failed.
  scripts/ha.sh down >/dev/null 2>&1 || true
  rm -rf "$HA_DIR"
  if HA_SKIP_BUILD=1 scripts/ha.sh up; then
    scripts/ha.sh drill kill switchover gateway-and-primary || ha_rc=$?
  else
    ha_rc=1
  fi
  if [ "$ha_rc" -eq 0 ]; then HA_CLEAN=1 scripts/ha.sh down || true; else scripts/ha.sh down || true; fi
  unset HA_DIR
  if [ "$ha_rc" -eq 0 ]; then
    suites+=("ha drill: passed")
  else
    echo "test.sh: the HA drill failed (scripts/ha.sh drill; logs were in build/ha-ci)" >&2
    suites+=("ha drill: FAILED")
    failed=1
  fi
  phase_done ha-drill
fi
# ---- end of the HA drill block ------------------------------------------------------------------

# Stop now rather than in the trap so the summary is the last thing printed.
scripts/pg.sh stop "$pgdir"

# The benchmark's smoke (bench/run.sh --quick at one concurrency, 1 s per point, release tree):
# every kind of measurement runs once, completes, and writes its results and plot to
# build/bench-quick/ (never bench/results.md). No speed is asserted here or anywhere in the
# tests: the figures are for reading, on a quiet machine.
bench_line="not run (no release tree)"
if [[ " ${trees[*]} " == *" release "* ]]; then
  # A smaller history to start from (1,000 tasks instead of 20,000): the smoke checks that every
  # measurement runs, not what it measures, and seeding the full one took 10 s of CI.
  echo "== benchmark smoke: DURATION=1 CONCURRENCY=8 SEED_TASKS=1000 bench/run.sh --quick"
  bench_results=$repo/build/bench-quick/results.md
  rm -f "$bench_results" "${bench_results%.md}.png"
  bench_rc=0
  DURATION=1 CONCURRENCY=8 SEED_TASKS=1000 bench/run.sh --quick || bench_rc=$?
  if [ "$bench_rc" -eq 0 ] && grep -q '^| P-seq-8-gw ' "$bench_results" && [ -s "${bench_results%.md}.png" ]; then
    bench_line="completed, wrote build/bench-quick/results.md and results.png"
  else
    bench_line="FAILED (bench/run.sh --quick exit $bench_rc; logs in build/bench-logs/)"
    failed=1
  fi
  # bench/matrix.sh on one cell pair (quiet, then beside the neighbour): it runs and writes its table.
  echo "== matrix smoke: LEVELS=8 NAMES=sequential DATABASES=fresh DURATION=1 bench/matrix.sh"
  matrix_results=$repo/build/bench-quick/matrix_results.md
  rm -f "$matrix_results"
  matrix_rc=0
  BIN_DIR=$repo/build/release/bin RESULTS=$matrix_results LEVELS=8 NAMES=sequential DATABASES=fresh DURATION=1 \
    bench/matrix.sh || matrix_rc=$?
  if [ "$matrix_rc" -eq 0 ] && grep -q '^| fresh | sequential | 8 | neighbour ' "$matrix_results"; then
    bench_line+="; matrix smoke completed"
  else
    bench_line+="; matrix smoke FAILED (bench/matrix.sh exit $matrix_rc)"
    failed=1
  fi
  phase_done bench
fi

# A short run of every fuzz harness (docs/fuzzing.md); a crash fails the run like a failed test.
echo "== fuzz build/fuzz (scripts/fuzz.sh 10)"
fuzz_rc=0
scripts/fuzz.sh 10 || fuzz_rc=$?
phase_done fuzz
fuzz_line=$(cat build/fuzz/summary.txt 2>/dev/null || true)
[ "$fuzz_rc" -eq 0 ] || failed=1

[ "$container_rc" -eq 0 ] || failed=1

echo
echo "test.sh summary [container]: check-container.py exit $container_rc"
for tree in "${trees[@]}"; do
  echo "test.sh summary [$tree]: ${result[$tree]}"
done
for suite in "${suites[@]}"; do echo "test.sh summary [${suite%%:*}]:${suite#*:}"; done
echo "test.sh summary [bench]: $bench_line"
echo "test.sh summary [fuzz]: ${fuzz_line:-no fuzz summary} (fuzz.sh exit $fuzz_rc)"
echo "test.sh summary [time]: ${timings[*]}, total ${SECONDS}s"
exit "$failed"
