#!/usr/bin/env bash
# Installs the Debian 12 packages needed to build, test and run the gateway:
#   scripts/deps.sh [all|build]   (default: all)
#   build  what compiles the gateway and the demo providers; the Dockerfile's build stage runs
#          exactly this, so the image and the development machines cannot drift apart
#   all    build, plus what tests and local runs need (PostgreSQL, Chromium for the operator
#          page's browser test, python3-yaml for the container check, ...)
#   scripts/deps.sh --list [all|build]   prints the group's packages, one a line, installs nothing
# Fast when everything is present: one dpkg-query, no apt-get. GATEWAY_SKIP_DEPS=1 skips it.
set -euo pipefail

list=0
if [ "${1:-}" = --list ]; then list=1; shift; fi
group=${1:-all}

# Boost is pinned to 1.81: an unversioned libboost-*-dev pulls 1.74, which conflicts with
# libboost1.81-dev and would remove it. Never add one here.
build_packages=(
  build-essential cmake ninja-build pkg-config
  libboost1.81-dev libboost-url1.81-dev libboost-json1.81-dev
  libpqxx-dev libpq-dev nlohmann-json3-dev doctest-dev libssl-dev ca-certificates libmimalloc-dev
)
# chromium: tests/ui drives it headless (DevTools over a pipe); fonts-dejavu-core so its
# screenshots have glyphs; zlib1g-dev: those tests decode the PNGs.
# patroni, etcd-server, etcd-client: the local HA stack and its drill (scripts/ha.sh); iptables:
# its partition drill drops a node's packets on lo (skipped where the container may not).
# clang-19, libclang-rt-19-dev (its sanitizer runtimes and libFuzzer) and llvm-19 (the
# symbolizer): the asan tree and the fuzz tree compile with clang (scripts/build.sh says why).
# bolt-16: LLVM's post-link optimizer, which lays out the profiled release gateway
# (scripts/bolt.sh; the Dockerfile's image is built without a profile, so without it); jq: the
# training run both profiles come from reads its load's figures with it (scripts/train.sh).
# Node.js and npm are checked by command, below the list.
test_packages=(
  ccache postgresql-15 openssl curl procps iproute2 clang-19 libclang-rt-19-dev llvm-19 bolt-16 jq
  chromium fonts-dejavu-core zlib1g-dev python3 python3-yaml
  patroni etcd-server etcd-client iptables
)
case $group in
  build) packages=("${build_packages[@]}") ;;
  all) packages=("${build_packages[@]}" "${test_packages[@]}") ;;
  *) echo "usage: $0 [--list] [all|build]" >&2; exit 2 ;;
esac

if [ "$list" = 1 ]; then printf '%s\n' "${packages[@]}"; exit 0; fi
[ "${GATEWAY_SKIP_DEPS:-0}" = 1 ] && exit 0

# One dpkg-query for all; packages it does not know are simply absent from its output.
declare -A installed=()
while read -r state pkg; do
  if [ "$state" = ii ]; then installed[$pkg]=1; fi
done < <(dpkg-query -W -f='${db:Status-Abbrev} ${Package}\n' "${packages[@]}" 2>/dev/null || true)
missing=()
for pkg in "${packages[@]}"; do
  [ -n "${installed[$pkg]:-}" ] || missing+=("$pkg")
done
# Node.js and npm (the TypeScript client and mcp/): any install will do (the machines come with
# NodeSource's Node.js 20, whose nodejs package bundles npm); Debian's nodejs and npm when absent.
if [ "$group" = all ] && ! { command -v node && command -v npm; } >/dev/null; then
  missing+=(nodejs npm)
fi
[ ${#missing[@]} -eq 0 ] && exit 0

echo "deps.sh: installing ${missing[*]}" >&2
sudo=()
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null || { echo "deps.sh: not root and no sudo; install: ${missing[*]}" >&2; exit 1; }
  sudo=(sudo)
fi
# env, not export: sudo would drop an exported DEBIAN_FRONTEND.
"${sudo[@]}" apt-get update -q
"${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}"
