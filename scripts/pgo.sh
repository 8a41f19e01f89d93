#!/usr/bin/env bash
# The profile the release tree is optimized with: scripts/pgo.sh   (scripts/build.sh runs it)
# Builds build/pgo-train (the gateway's libraries instrumented: CMake's GATEWAY_PROFILE_GENERATE),
# runs that gateway under the loads it exists for, and prints the directory of the profile it
# wrote: build/pgo/<id>, the id a hash of what the gateway's libraries compile from and how
# (gateway/, schema/, the top CMakeLists.txt, this script and scripts/build.sh, which hold the
# flags). So only a change there trains again (a commit alone does not: the build's commit id is
# a string, not code); the profile of that code is reused, older ones are removed.
#
# The training: a private PostgreSQL (no fsync: the same code runs, faster), the booking demo
# provider and the gateway with its default settings (access log on), then gateway-load's
# pass-through GETs at 1 and 8 agents, protected writes at 8 agents with sequential names and at
# 64 with random ones, and claims at 8: about 15 seconds of load. Everything is stopped and
# removed at the end; the gateway's own exit (SIGTERM) writes the profile.
#
# Why: GCC's profile-guided optimization lays out the hot paths and inlines where the counts say
# so; a pass-through takes about 15% fewer instructions with it (docs/performance.md).
# Env: PGO_BUILD_JOBS (BUILD_JOBS, 2)
set -euo pipefail

repo=$(cd "$(dirname -- "${BASH_SOURCE[0]}")/.." && pwd)
cd "$repo"
# shellcheck source=scripts/lib.sh
source "$repo/scripts/lib.sh"

id=$({ find gateway schema -type f -print0 | sort -z | xargs -0 sha256sum
       sha256sum CMakeLists.txt scripts/build.sh scripts/pgo.sh; } | sha256sum | cut -c1-12)
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

# First free port from $1 up (below the kernel's ephemeral range, as scripts/test.sh picks).
free_port() {
  local port=$1
  while [ -n "$(ss -ltnH "sport = :$port")" ]; do port=$((port + 1)); done
  echo "$port"
}

work=$repo/build/pgo/run
pgdir=$work/pg
gateway_pid=
provider_pid=
# shellcheck disable=SC2317 # called by the trap
cleanup() {
  if [ -n "$gateway_pid" ]; then stop_pid "$gateway_pid" 30; fi
  if [ -n "$provider_pid" ]; then stop_pid "$provider_pid" 5; fi
  scripts/pg.sh destroy "$pgdir" >/dev/null 2>&1 || true
}
trap cleanup EXIT

echo "== training the profile of $bin/write-gateway ($id)" >&2
rm -rf "$raw" "$work"
mkdir -p "$work"
pgport=$(free_port 25641)
PG_EXTRA_OPTS="-c fsync=off -c synchronous_commit=off -c full_page_writes=off" \
  scripts/pg.sh start "$pgdir" "$pgport" >/dev/null
GATEWAY_DATABASE_URL=$(scripts/pg.sh url "$pgdir" "$pgport")
export GATEWAY_DATABASE_URL
provport=$(free_port 19641)
ctlport=$(free_port $((provport + 1)))
gwport=$(free_port 18641)

DEMO_PROVIDER_CREDENTIAL=booking-secret \
  "$bin/demo-provider" --kind booking --port "$provport" --control-port "$ctlport" >"$work/provider.log" 2>&1 &
provider_pid=$!
jq -n --slurpfile dev config/dev.json --argjson port "$gwport" --arg provider "http://127.0.0.1:$provport" '{
    listen: {address: "127.0.0.1", port: $port},
    database: {url_env: "GATEWAY_DATABASE_URL"},
    agents: $dev[0].agents,
    operators: $dev[0].operators,
    providers: [{name: "booking", base_url: $provider, max_connections: 64,
                 credential: {tenants: {"tenant-a": {env: "BOOKING_KEY_TENANT_A"}}}}]
  }' >"$work/gateway.json"
BOOKING_KEY_TENANT_A=booking-secret "$bin/write-gateway" --config "$work/gateway.json" >"$work/gateway.log" 2>&1 &
gateway_pid=$!
wait_ready "$gateway_pid" "http://127.0.0.1:$gwport/readyz" 300 0.1 ||
  { tail -n 20 "$work/gateway.log" >&2; echo "pgo.sh: the gateway did not get ready" >&2; exit 1; }
wait_ready "$provider_pid" "http://127.0.0.1:$ctlport/__test/requests" 100 0.1 ||
  { tail -n 20 "$work/provider.log" >&2; echo "pgo.sh: the demo provider did not get ready" >&2; exit 1; }
# The booking the pass-through GETs read (bench/run.sh makes the same one).
curl -fsS -X POST -H 'Authorization: Bearer booking-secret' -H 'Content-Type: application/json' \
  -d '{"slot":"bench-passthrough","customer":"bench"}' "http://127.0.0.1:$provport/bookings" >/dev/null

load() { "$bin/gateway-load" --port "$gwport" --json "$work/load.json" "$@" >"$work/load.txt" 2>&1; }
for run in "passthrough 8 3" "passthrough 1 1" "protected 8 3" "protected 64 2 --names random" "claim 8 2"; do
  # shellcheck disable=SC2086 # the run's words are its arguments
  set -- $run
  mode=$1 clients=$2 seconds=$3
  shift 3
  load --mode "$mode" --clients "$clients" --duration "$seconds" "$@" ||
    { cat "$work/load.txt" >&2; echo "pgo.sh: the training load '$run' failed" >&2; exit 1; }
  # A profile of refusals would optimize the wrong paths; a few (a slow machine's hiccup) would
  # not, and must not fail a build.
  ok=$(jq .ok "$work/load.json")
  replies=$(jq .replies "$work/load.json")
  if [ "$ok" -eq 0 ] || [ $((ok * 10)) -lt $((replies * 9)) ]; then
    cat "$work/load.txt" >&2
    echo "pgo.sh: '$run' had only $ok of $replies replies ok" >&2
    exit 1
  fi
  [ "$ok" = "$replies" ] || echo "pgo.sh: '$run' had $ok of $replies replies ok" >&2
done

# The gateway's exit writes its counts; the demo provider and gateway-load link the same Asio
# library, and theirs are merged in as well.
stop_pid "$gateway_pid" 30
gateway_pid=
stop_pid "$provider_pid" 5
provider_pid=
# gateway-load and the demo provider write counts for the Asio library too: only the gateway's
# own libraries' counts say that it exited cleanly and wrote its profile (not killed by stop_pid).
ls "$raw"/*gw_service*.gcda >/dev/null 2>&1 ||
  { echo "pgo.sh: the gateway wrote no profile of its own libraries into $raw" >&2; exit 1; }
rm -rf "$repo"/build/pgo/[0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f]
mv "$raw" "$profile"
echo "$profile"
