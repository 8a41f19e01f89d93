#!/usr/bin/env bash
# The profile the release tree is optimized with: scripts/pgo.sh   (scripts/build.sh runs it)
# Builds build/pgo-train (the gateway's libraries instrumented: CMake's GATEWAY_PROFILE_GENERATE),
# runs that gateway under the loads it exists for, and prints the directory of the profile it
# wrote: build/pgo/<id>, the id a hash of what the gateway's libraries compile from and how
# (gateway/, schema/, the top CMakeLists.txt, this script, scripts/train.sh and scripts/build.sh,
# which holds the flags). So only a change there trains again (a commit alone does not: the
# build's commit id is a string, not code); the profile of that code is reused, older ones are
# removed.
#
# The training is scripts/train.sh's (about 15 seconds of pass-through GETs, protected writes and
# claims against a private PostgreSQL); the gateway's own exit (SIGTERM) writes the profile.
#
# Why: GCC's profile-guided optimization lays out the hot paths and inlines where the counts say
# so; a pass-through takes about 15% fewer instructions with it (docs/performance.md).
# Env: PGO_BUILD_JOBS (BUILD_JOBS, 2)
set -euo pipefail

repo=$(cd "$(dirname -- "${BASH_SOURCE[0]}")/.." && pwd)
cd "$repo"
id=$({ find gateway schema -type f -print0 | sort -z | xargs -0 sha256sum
       sha256sum CMakeLists.txt scripts/build.sh scripts/pgo.sh scripts/train.sh; } | sha256sum | cut -c1-12)
profile=$repo/build/pgo/$id
if [ -d "$profile" ]; then
  echo "$profile"
  exit 0
fi

tree=build/pgo-train
raw=$repo/build/pgo/raw
flags=(-DCMAKE_BUILD_TYPE=Release "-DCMAKE_CXX_FLAGS_RELEASE=-O3 -DNDEBUG" -DGATEWAY_WERROR=ON
       "-DGATEWAY_PROFILE_GENERATE=$raw")
stamp=$tree/.configured-with
if [ ! -f "$tree/build.ninja" ] || [ "$(cat "$stamp" 2>/dev/null)" != "${flags[*]}" ]; then
  cmake -S . -B "$tree" -G Ninja "${flags[@]}" >&2
  printf '%s' "${flags[*]}" > "$stamp"
fi
echo "== building $tree" >&2
cmake --build "$tree" -j"${PGO_BUILD_JOBS:-${BUILD_JOBS:-2}}" --target write-gateway demo-provider gateway-load >&2

bin=$repo/$tree/bin

echo "== training the profile of $bin/write-gateway ($id)" >&2
rm -rf "$raw"
scripts/train.sh "$bin/write-gateway" "$bin" "$repo/build/pgo/run"
rm -rf "$repo/build/pgo/run"
# gateway-load and the demo provider write counts for the Asio library too: only the gateway's
# own libraries' counts say that it exited cleanly and wrote its profile (not killed by stop_pid).
ls "$raw"/*gw_service*.gcda >/dev/null 2>&1 ||
  { echo "pgo.sh: the gateway wrote no profile of its own libraries into $raw" >&2; exit 1; }
rm -rf "$repo"/build/pgo/[0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f]
mv "$raw" "$profile"
echo "$profile"
