#!/usr/bin/env bash
# Lays out the release gateway's machine code by where its own run goes: scripts/bolt.sh BIN
# (scripts/build.sh runs it on the profiled release tree). BIN is a directory holding
# write-gateway (linked with its relocations, CMake's GATEWAY_BOLT), demo-provider and
# gateway-load. Rewrites BIN/write-gateway in place with LLVM's post-link optimizer, BOLT:
# instruments a copy, runs it under scripts/train.sh's loads, and reorders the binary's basic
# blocks and functions by the counts, the hot ones together and the cold ones split off.
# A binary BOLT already rewrote is left alone; the counts are kept per input binary and training
# (build/bolt/<hash>.fdata), so a rebuild that links the same bytes does not train again.
#
# Why, on top of GCC's profile (scripts/pgo.sh): GCC lays out each function, and the linker
# places whole sections; BOLT sees the linked program and packs the blocks every request runs
# into a few hundred KiB. On a host where the agent, the gateway, PostgreSQL and the provider
# share two cores, each request finds the gateway's code cold in the caches, and the fewer
# lines and pages it spans, the less each request waits on them (docs/performance.md, "The
# gateway laid out by BOLT from a run of its own").
# GATEWAY_BOLT=0 (scripts/build.sh) skips it.
set -euo pipefail

[ $# -eq 1 ] || { echo "usage: $0 BIN" >&2; exit 2; }
bin=$(cd "$1" && pwd)
target=$bin/write-gateway

repo=$(cd "$(dirname -- "${BASH_SOURCE[0]}")/.." && pwd)
cd "$repo"

# Debian's bolt-16 (scripts/deps.sh). Called by its own path: the /usr/bin/llvm-bolt-16 link
# looks for its instrumentation runtime beside itself, where it is not.
bolt=/usr/lib/llvm-16/bin/llvm-bolt
[ -x "$bolt" ] || { echo "bolt.sh: $bolt is missing (scripts/deps.sh installs bolt-16)" >&2; exit 1; }

sections=$(readelf -SW "$target")
if grep -q '\.note\.bolt_info' <<<"$sections"; then
  echo "bolt.sh: $target is laid out already" >&2
  exit 0
fi
# Without its relocations BOLT could move blocks inside a function but not the functions.
grep -q '\.rela\.text' <<<"$sections" ||
  { echo "bolt.sh: $target has no relocations: link it with GATEWAY_BOLT=ON" >&2; exit 1; }

store=$repo/build/bolt
counts=$store/$({ sha256sum "$target"; sha256sum scripts/train.sh; } | sha256sum | cut -c1-16).fdata
work=$store/run
mkdir -p "$store"
if [ ! -s "$counts" ]; then
  echo "== training the layout of $target" >&2
  rm -rf "$work"
  mkdir -p "$work"
  "$bolt" "$target" -o "$work/write-gateway.instrumented" -instrument \
    -instrumentation-file="$work/counts.fdata" >"$work/instrument.log" 2>&1 ||
    { tail -n 20 "$work/instrument.log" >&2; echo "bolt.sh: instrumenting $target failed" >&2; exit 1; }
  scripts/train.sh "$work/write-gateway.instrumented" "$bin" "$work/train"
  [ -s "$work/counts.fdata" ] ||
    { echo "bolt.sh: the instrumented gateway wrote no counts (did it exit on its own?)" >&2; exit 1; }
  rm -f "$store"/*.fdata
  mv "$work/counts.fdata" "$counts"
  rm -rf "$work"
fi

# ext-tsp orders a function's blocks to keep hot paths falling through; hfsort+ places
# functions that call each other side by side; cold blocks go to a region of their own. PLT
# calls made hot are taken through the GOT directly (the binary binds at load: -z now).
echo "== laying out $target" >&2
"$bolt" "$target" -o "$target.bolt" -data="$counts" \
  -reorder-blocks=ext-tsp -reorder-functions=hfsort+ -split-functions -split-all-cold -split-eh \
  -icf=1 -use-gnu-stack -plt=hot -peepholes=all -frame-opt=hot -simplify-rodata-loads \
  >"$store/layout.log" 2>&1 ||
  { tail -n 20 "$store/layout.log" >&2; echo "bolt.sh: BOLT failed on $target" >&2; rm -f "$target.bolt"; exit 1; }
mv "$target.bolt" "$target"
