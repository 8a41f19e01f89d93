#!/usr/bin/env bash
# THE quick start: scripts/run.sh [gateway args, e.g. --manual-clock]
# Builds the release tree, starts a private PostgreSQL (.local/pg, port 55432, durable), the two
# demo providers, then the gateway with config/dev.json in the foreground. Ctrl-C (or TERM)
# stops the gateway, the providers and PostgreSQL. The database persists in .local/pg.
set -euo pipefail

repo=$(cd "$(dirname -- "${BASH_SOURCE[0]}")/.." && pwd)
cd "$repo"

pgdir=$repo/.local/pg
pgport=${GATEWAY_DEV_PG_PORT:-55432}
logdir=$repo/.local/logs
bin=$repo/build/release/bin
config=config/dev.json

scripts/build.sh release

gateway_pid=
provider_pids=()

# shellcheck disable=SC2317 # reached from cleanup, which the traps call
# Stop a child with TERM, then KILL if it has not exited after $2 seconds.
# shellcheck source=scripts/lib.sh
source "$repo/scripts/lib.sh"

# shellcheck disable=SC2317 # called by the traps
cleanup() {
  trap - EXIT INT TERM HUP
  # The gateway first, and with time to spare: on TERM it finishes or records in-flight
  # forwards, which needs the providers and the database still up.
  if [ -n "$gateway_pid" ]; then stop_pid "$gateway_pid" 30; fi
  local pid
  for pid in "${provider_pids[@]}"; do stop_pid "$pid" 5; done
  scripts/pg.sh stop "$pgdir" || true
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
trap 'exit 129' HUP

# Durable settings (PostgreSQL defaults): this database is the authority the demo relies on.
PG_EXTRA_OPTS='' scripts/pg.sh start "$pgdir" "$pgport"
GATEWAY_DATABASE_URL=$(scripts/pg.sh url "$pgdir" "$pgport")
export GATEWAY_DATABASE_URL

mkdir -p "$logdir"

# start_provider KIND PORT CONTROL_PORT CREDENTIALS (comma-separated: one account each)
start_provider() {
  local kind=$1 port=$2 control=$3 credentials=$4 log=$logdir/$1-provider.log pid _
  if [ ! -x "$bin/demo-provider" ]; then
    echo "run.sh: warning: $bin/demo-provider not built; $kind provider not started" >&2
    return 0
  fi
  DEMO_PROVIDER_CREDENTIALS=$credentials \
    "$bin/demo-provider" --kind "$kind" --port "$port" --control-port "$control" >"$log" 2>&1 &
  pid=$!
  provider_pids+=("$pid")
  # Wait until it listens, so the gateway's first forward does not race the provider's start.
  for _ in $(seq 1 50); do
    kill -0 "$pid" 2>/dev/null || break
    [ -z "$(ss -ltnH "sport = :$port")" ] || return 0
    sleep 0.1
  done
  echo "run.sh: warning: $kind provider is not listening on port $port; last lines of $log:" >&2
  tail -n 20 "$log" >&2 || true
}
# Each tenant has its own account at each provider (config/dev.json reads
# them from these variables), so one tenant's agents never see another's data.
export BOOKING_KEY_TENANT_A=booking-secret-tenant-a BOOKING_KEY_TENANT_B=booking-secret-tenant-b
export CRM_KEY_TENANT_A=crm-secret-tenant-a CRM_KEY_TENANT_B=crm-secret-tenant-b
start_provider booking 9101 9191 "$BOOKING_KEY_TENANT_A,$BOOKING_KEY_TENANT_B"
start_provider crm 9102 9192 "$CRM_KEY_TENANT_A,$CRM_KEY_TENANT_B"

[ -x "$bin/write-gateway" ] || { echo "run.sh: $bin/write-gateway was not built" >&2; exit 1; }
[ -f "$config" ] || { echo "run.sh: $config is missing" >&2; exit 1; }

cat <<MSG
------------------------------------------------------------------------
write-gateway dev stack
  gateway    $bin/write-gateway --config $config $*
             listen address and dev tokens: $config and README.md (Quick start)
  database   $GATEWAY_DATABASE_URL   (data: .local/pg)
  providers  booking 127.0.0.1:9101 (control 9191), crm 127.0.0.1:9102 (control 9192)
             logs: .local/logs/
  Ctrl-C stops the gateway, the providers and PostgreSQL.
------------------------------------------------------------------------
MSG

# In the background plus `wait`, not exec: the shell must stay to clean up, and `wait` (unlike
# a foreground child) returns as soon as INT/TERM arrives, so the traps run at once.
"$bin/write-gateway" --config "$config" "$@" &
gateway_pid=$!
rc=0
wait "$gateway_pid" || rc=$?
gateway_pid=
exit "$rc"
