#!/usr/bin/env bash
# Installs the Debian 12 packages needed to build, test and run the gateway.
# Fast when everything is present: one dpkg-query, no apt-get. GATEWAY_SKIP_DEPS=1 skips it.
set -euo pipefail

[ "${GATEWAY_SKIP_DEPS:-0}" = 1 ] && exit 0

# Boost is pinned to 1.81: an unversioned libboost-*-dev pulls 1.74, which conflicts with
# libboost1.81-dev and would remove it. Never add one here.
packages=(
  build-essential cmake ninja-build ccache pkg-config
  libboost1.81-dev libboost-url1.81-dev libboost-json1.81-dev
  libpqxx-dev libpq-dev nlohmann-json3-dev doctest-dev libssl-dev
  postgresql-15 openssl curl ca-certificates procps iproute2
)

# One dpkg-query for all; packages it does not know are simply absent from its output.
declare -A installed=()
while read -r state pkg; do
  if [ "$state" = ii ]; then installed[$pkg]=1; fi
done < <(dpkg-query -W -f='${db:Status-Abbrev} ${Package}\n' "${packages[@]}" 2>/dev/null || true)
missing=()
for pkg in "${packages[@]}"; do
  [ -n "${installed[$pkg]:-}" ] || missing+=("$pkg")
done
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
