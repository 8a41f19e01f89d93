#!/usr/bin/env bash
# Builds the gateway: scripts/build.sh [release|asan|all]   (default: all)
#   release -> build/release  (RelWithDebInfo)
#   asan    -> build/asan     (Debug, AddressSanitizer + UndefinedBehaviorSanitizer)
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

# A project-local cache unless the caller (e.g. CI) keeps one elsewhere. The sloppiness is what
# lets precompiled headers hit the cache at all.
export CCACHE_DIR=${CCACHE_DIR:-$repo/.local/ccache}
export CCACHE_SLOPPINESS=${CCACHE_SLOPPINESS:-pch_defines,time_macros}

for tree in "${trees[@]}"; do
  dir=build/$tree
  case $tree in
    release) flags=(-DCMAKE_BUILD_TYPE=RelWithDebInfo) ;;
    asan) flags=(-DCMAKE_BUILD_TYPE=Debug -DGATEWAY_SANITIZE=ON) ;;
  esac
  # build.ninja, not CMakeCache.txt: a failed configure leaves the cache but no build.ninja.
  if [ ! -f "$dir/build.ninja" ]; then
    cmake -S . -B "$dir" -G Ninja "${flags[@]}"
  fi
  echo "== building $dir" >&2
  # 2 jobs by default: the reference machine has 2 cores and a Beast TU takes ~830 MB.
  cmake --build "$dir" -j"${BUILD_JOBS:-2}" "$@"
done
