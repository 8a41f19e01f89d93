#!/usr/bin/env bash
# The training run both profiles of the release gateway come from:
#   scripts/train.sh GATEWAY TOOLS WORK
# GATEWAY is an instrumented write-gateway (scripts/pgo.sh's, with GCC's counters; scripts/bolt.sh's,
# with BOLT's); TOOLS the directory holding demo-provider and gateway-load; WORK a scratch
# directory, emptied first. Starts a private PostgreSQL (no fsync: the same code runs, faster),
# the booking demo provider and the gateway with its default settings (access log on), then
# gateway-load's pass-through GETs at 1 and 8 agents, protected writes at 8 agents with
# sequential names and at 64 with random ones, and claims at 8: about 15 seconds of load. Then
# stops the gateway with SIGTERM, so that its own exit writes the profile, and everything else.
# Fails if a load fails or is mostly refused: a profile of refusals optimizes the wrong paths.
set -euo pipefail

[ $# -eq 3 ] || { echo "usage: $0 GATEWAY TOOLS WORK" >&2; exit 2; }
gateway=$1 tools=$2 work=$3

repo=$(cd "$(dirname -- "${BASH_SOURCE[0]}")/.." && pwd)
cd "$repo"
# shellcheck source=scripts/lib.sh
source "$repo/scripts/lib.sh"

# First free port from $1 up (below the kernel's ephemeral range, as scripts/test.sh picks).
free_port() {
  local port=$1
  while [ -n "$(ss -ltnH "sport = :$port")" ]; do port=$((port + 1)); done
  echo "$port"
}

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

rm -rf "$work"
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
  "$tools/demo-provider" --kind booking --port "$provport" --control-port "$ctlport" >"$work/provider.log" 2>&1 &
provider_pid=$!
jq -n --slurpfile dev config/dev.json --argjson port "$gwport" --arg provider "http://127.0.0.1:$provport" '{
    listen: {address: "127.0.0.1", port: $port},
    database: {url_env: "GATEWAY_DATABASE_URL"},
    agents: $dev[0].agents,
    operators: $dev[0].operators,
    providers: [{name: "booking", base_url: $provider, max_connections: 64,
                 credential: {tenants: {"tenant-a": {env: "BOOKING_KEY_TENANT_A"}}}}]
  }' >"$work/gateway.json"
BOOKING_KEY_TENANT_A=booking-secret "$gateway" --config "$work/gateway.json" >"$work/gateway.log" 2>&1 &
gateway_pid=$!
wait_ready "$gateway_pid" "http://127.0.0.1:$gwport/readyz" 300 0.1 ||
  { tail -n 20 "$work/gateway.log" >&2; echo "train.sh: the gateway did not get ready" >&2; exit 1; }
wait_ready "$provider_pid" "http://127.0.0.1:$ctlport/__test/requests" 100 0.1 ||
  { tail -n 20 "$work/provider.log" >&2; echo "train.sh: the demo provider did not get ready" >&2; exit 1; }
# The booking the pass-through GETs read (bench/run.sh makes the same one).
curl -fsS -X POST -H 'Authorization: Bearer booking-secret' -H 'Content-Type: application/json' \
  -d '{"slot":"bench-passthrough","customer":"bench"}' "http://127.0.0.1:$provport/bookings" >/dev/null

load() { "$tools/gateway-load" --port "$gwport" --json "$work/load.json" "$@" >"$work/load.txt" 2>&1; }
for run in "passthrough 8 3" "passthrough 1 1" "protected 8 3" "protected 64 2 --names random" "claim 8 2"; do
  # shellcheck disable=SC2086 # the run's words are its arguments
  set -- $run
  mode=$1 clients=$2 seconds=$3
  shift 3
  load --mode "$mode" --clients "$clients" --duration "$seconds" "$@" ||
    { cat "$work/load.txt" >&2; echo "train.sh: the training load '$run' failed" >&2; exit 1; }
  # A few refusals (a slow machine's hiccup) do not skew a profile and must not fail a build.
  ok=$(jq .ok "$work/load.json")
  replies=$(jq .replies "$work/load.json")
  if [ "$ok" -eq 0 ] || [ $((ok * 10)) -lt $((replies * 9)) ]; then
    cat "$work/load.txt" >&2
    echo "train.sh: '$run' had only $ok of $replies replies ok" >&2
    exit 1
  fi
  [ "$ok" = "$replies" ] || echo "train.sh: '$run' had $ok of $replies replies ok" >&2
done

# The gateway's own exit writes its profile: SIGTERM, not a kill.
stop_pid "$gateway_pid" 30
gateway_pid=
stop_pid "$provider_pid" 5
provider_pid=
