#!/usr/bin/env bash
# Builds and runs the libFuzzer harnesses (tests/fuzz, docs/fuzzing.md):
#   scripts/fuzz.sh [seconds-per-harness]   (default 15)
# Configures build/fuzz with clang 19 (-DGATEWAY_FUZZ=ON: ASan + UBSan + coverage feedback), builds
# it, then runs each harness for that long over a copy of its seed corpus, as many at once as there
# are cores (FUZZ_JOBS). Prints one summary line
# per harness and exits non-zero if any of them crashed (or failed to run). Crash inputs are kept
# in build/fuzz/artifacts/, each harness's log in build/fuzz/logs/.
# Replay a crash: build/fuzz/bin/<harness> build/fuzz/artifacts/<harness>-crash-...
set -euo pipefail

repo=$(cd "$(dirname -- "${BASH_SOURCE[0]}")/.." && pwd)
cd "$repo"

seconds=${1:-15}
case $seconds in
  '' | *[!0-9]*) echo "usage: $0 [seconds-per-harness]" >&2; exit 2 ;;
esac

scripts/deps.sh

# deps.sh installs what this needs beyond the gateway's build: clang-19, libclang-rt-19-dev (the
# libFuzzer that -fsanitize=fuzzer links, libclang_rt.fuzzer-x86_64.a, and the sanitizer
# runtimes) and llvm-19 (the symbolizer that turns a crash's stack into file:line).

# The same ccache setup as scripts/build.sh: one per-user cache for every checkout.
export CCACHE_DIR=${CCACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/ccache}
export CCACHE_BASEDIR=${CCACHE_BASEDIR:-$repo}
export CCACHE_NOHASHDIR=${CCACHE_NOHASHDIR:-true}
export CCACHE_SLOPPINESS=${CCACHE_SLOPPINESS:-pch_defines,time_macros}

dir=build/fuzz
rm -f "$dir/summary.txt"  # scripts/test.sh reads it: never last run's
# -O1 with line tables: fast enough to fuzz, and every report has file:line. Debug, not Release:
# the project's assert()s stay in.
flags=(-DGATEWAY_FUZZ=ON -DGATEWAY_WERROR=ON -DCMAKE_CXX_COMPILER=clang++-19 -DCMAKE_BUILD_TYPE=Debug
       "-DCMAKE_CXX_FLAGS_DEBUG=-O1 -g1")
# Configure once, and again whenever the flags above change (as scripts/build.sh does).
stamp=$dir/.configured-with
if [ ! -f "$dir/build.ninja" ] || [ "$(cat "$stamp" 2>/dev/null)" != "${flags[*]}" ]; then
  rm -rf "$dir/CMakeCache.txt" "$dir/CMakeFiles"  # a changed compiler needs a new cache
  cmake -S . -B "$dir" -G Ninja "${flags[@]}"
  printf '%s' "${flags[*]}" > "$stamp"
fi
echo "== building $dir" >&2
cmake --build "$dir" -j"${BUILD_JOBS:-2}"

harnesses=(request_head_fuzz grant_token_fuzz json_body_fuzz config_fuzz provider_path_fuzz webhook_signature_fuzz
           session_fuzz)
mkdir -p "$dir/artifacts" "$dir/logs"
export ASAN_SYMBOLIZER_PATH=${ASAN_SYMBOLIZER_PATH:-/usr/lib/llvm-19/bin/llvm-symbolizer}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1}

# One harness: its run, then its summary line in $dir/logs/<harness>.result.
fuzz_one() {
  local h=$1
  # libFuzzer adds what it finds to its first corpus directory: a copy, so the repo's seeds only
  # change when someone commits new ones.
  local corpus=$dir/corpus/$h
  rm -rf "$corpus"
  mkdir -p "$corpus"
  cp tests/fuzz/corpus/"$h"/* "$corpus"/
  # session_fuzz streams up to 8 MiB per input into a live server whose every allocation stays
  # under 64 KiB (a body) and whose read buffers are capped at 24 KiB: one allocation of 4 MiB or
  # more (a buffer grown by what the client streams) or a process past 1 GiB is a crash.
  local rss=2048 malloc=()
  [ "$h" = session_fuzz ] && rss=1024 malloc=(-malloc_limit_mb=4)
  local args=(-max_total_time="$seconds" -timeout=5 -rss_limit_mb="$rss" "${malloc[@]}" -print_final_stats=1
              -artifact_prefix="$dir/artifacts/$h-")
  [ -f "tests/fuzz/$h.dict" ] && args+=(-dict="tests/fuzz/$h.dict")
  local log=$dir/logs/$h.log rc=0 outcome artifact
  echo "== fuzzing $h for ${seconds}s" >&2
  "$dir/bin/$h" "${args[@]}" "$corpus" >"$log" 2>&1 || rc=$?
  local execs cov
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
  cov=$(grep -oE 'cov: [0-9]+ ft: [0-9]+' "$log" | tail -n 1 || true)
  if [ "$rc" -eq 0 ]; then
    outcome=ok
  else
    artifact=$(sed -n 's/.*Test unit written to //p' "$log" | tail -n 1)
    outcome="FAILED (exit $rc${artifact:+, input $artifact}; log $log)"
    tail -n 40 "$log" >&2
  fi
  echo "${execs:-?} execs, ${cov:-no coverage line}, corpus $(find "$corpus" -type f | wc -l) files: $outcome" \
    > "$dir/logs/$h.result"
}

# As many harnesses at once as there are cores (FUZZ_JOBS): each is one process on one core.
jobs=${FUZZ_JOBS:-$(nproc)}
rm -f "$dir"/logs/*.result
running=0
for h in "${harnesses[@]}"; do
  if [ "$running" -ge "$jobs" ]; then
    wait -n || true
    running=$((running - 1))
  fi
  fuzz_one "$h" &
  running=$((running + 1))
done
wait || true

echo
failures=0
crashed=0
for h in "${harnesses[@]}"; do
  line=$(cat "$dir/logs/$h.result" 2>/dev/null || echo "FAILED (no result: the run did not finish)")
  echo "fuzz.sh summary [$h]: $line"
  case $line in *FAILED*) failures=$((failures + 1)); crashed=1 ;; esac
done
# One line for scripts/test.sh's own summary.
echo "${#harnesses[@]} harnesses, ${seconds}s each, $failures failed" > "$dir/summary.txt"
exit "$crashed"
