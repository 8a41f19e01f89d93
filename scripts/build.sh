#!/usr/bin/env bash
# Builds the gateway: scripts/build.sh [release|asan|all]   (default: all)
#   release -> build/release  (CMake's plain Release: -O3, no debug info; so CI builds -O3 once),
#              the gateway's own libraries with profile feedback from scripts/pgo.sh (GATEWAY_PGO=0:
#              without, when training again and recompiling the gateway after each change of its
#              code, a few minutes, is too long), and write-gateway linked with link-time
#              optimization (CMake's GATEWAY_LTO; the other executables link as usual); with the
#              profile, write-gateway is then laid out by BOLT from a run of its own
#              (scripts/bolt.sh; GATEWAY_BOLT=0: not)
#   asan    -> build/asan     (clang 19, -O0 with line tables, AddressSanitizer +
#              UndefinedBehaviorSanitizer)
# Binaries land in build/<tree>/bin/. A tree is configured only once; afterwards CMake's own
# regeneration check picks up CMakeLists.txt changes. Extra args after the tree name go to
# `cmake --build` (e.g. `scripts/build.sh release --target write-gateway`).
set -euo pipefail

repo=$(cd "$(dirname -- "${BASH_SOURCE[0]}")/.." && pwd)
cd "$repo"

which=${1:-all}
[ $# -eq 0 ] || shift
case $which in
  release) trees=(release) ;;
  asan) trees=(asan) ;;
  all) trees=(release asan) ;;
  *) echo "usage: $0 [release|asan|all] [cmake --build args...]" >&2; exit 2 ;;
esac

scripts/deps.sh

# ccache's own per-user cache, so every checkout on a machine (worktrees, CI's fresh clone) shares
# it. Paths are hashed relative to the checkout, so a clone elsewhere hits what another compiled.
# The sloppiness is what lets precompiled headers hit the cache at all.
export CCACHE_DIR=${CCACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/ccache}
export CCACHE_BASEDIR=${CCACHE_BASEDIR:-$repo}
export CCACHE_NOHASHDIR=${CCACHE_NOHASHDIR:-true}
export CCACHE_SLOPPINESS=${CCACHE_SLOPPINESS:-pch_defines,time_macros}

bolt=OFF
for tree in "${trees[@]}"; do
  dir=build/$tree
  # Compile time is CI time: full debug info costs ~40% of a Beast TU, so the release tree has
  # none and the sanitizer tree has line tables only (enough for file:line in every report).
  case $tree in
    # The Release flags are spelt out (CMake's own default): a value left in an old tree's
    # CMakeCache.txt would otherwise outlive a change here.
    release)
      flags=(-DCMAKE_BUILD_TYPE=Release "-DCMAKE_CXX_FLAGS_RELEASE=-O3 -DNDEBUG" -DGATEWAY_WERROR=ON)
      # The gateway's libraries optimized with a profile of their own run (scripts/pgo.sh). Its
      # path names the code it was trained on, so new code means new flags, and only the
      # gateway's objects compile again. GATEWAY_PGO=0 for quick edit-and-test rounds. Always passed: a
      # value left in the tree's cache would outlive a switch to GATEWAY_PGO=0.
      profile=
      if [ "${GATEWAY_PGO:-1}" != 0 ]; then profile=$(scripts/pgo.sh); fi
      # With the profile, write-gateway is then laid out by its own run as well (scripts/bolt.sh,
      # after the build below); GATEWAY_BOLT=0 leaves it as linked.
      bolt=OFF
      if [ -n "$profile" ] && [ "${GATEWAY_BOLT:-1}" != 0 ]; then bolt=ON; fi
      flags+=("-DGATEWAY_PROFILE_USE=$profile" -DGATEWAY_LTO=ON "-DGATEWAY_BOLT=$bolt")
      ;;
    # clang, not GCC: GCC 12 compiles this tree's instrumented Beast and coroutine code two to
    # three times slower (the demo provider's server.cpp 115 s against 40; the whole tree 23
    # minutes of CPU against 11, cold), and every CI run builds it cold. The release tree stays
    # GCC's, so both compilers' warnings hold (-Werror in each).
    asan) flags=(-DCMAKE_CXX_COMPILER=clang++-19 -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS_DEBUG=-g1
                 -DGATEWAY_SANITIZE=ON -DGATEWAY_WERROR=ON) ;;
  esac
  # Configure once, and again whenever the flags above change. build.ninja, not CMakeCache.txt:
  # a failed configure leaves the cache but no build.ninja.
  stamp=$dir/.configured-with
  if [ ! -f "$dir/build.ninja" ] || [ "$(cat "$stamp" 2>/dev/null)" != "${flags[*]}" ]; then
    # CMake keeps the compiler a tree was first configured with: a changed one needs a new cache.
    rm -rf "$dir/CMakeCache.txt" "$dir/CMakeFiles"
    cmake -S . -B "$dir" -G Ninja "${flags[@]}"
    printf '%s' "${flags[*]}" > "$stamp"
  fi
  echo "== building $dir" >&2
  # 2 jobs by default: the reference machine has 2 cores and a Beast TU takes ~830 MB.
  cmake --build "$dir" -j"${BUILD_JOBS:-2}" "$@"
  if [ "$tree" = release ] && [ "$bolt" = ON ] && [ -x "$dir/bin/write-gateway" ]; then
    # The training's provider and load come from the same tree. The layout changes where the
    # code lies, not what it does: a failure leaves the binary as linked, and says so
    # (bench/results.md's build fact too).
    cmake --build "$dir" -j"${BUILD_JOBS:-2}" --target demo-provider gateway-load
    scripts/bolt.sh "$dir/bin" || echo "build.sh: write-gateway left as linked: scripts/bolt.sh failed (above)" >&2
  fi
done
