#!/usr/bin/env bash
# THE quick start: scripts/run.sh [gateway args, e.g. --manual-clock]
# Builds write-gateway and demo-provider (only those: the tests build in scripts/test.sh), starts a
# private PostgreSQL (durable), the two demo providers, then the gateway, waits until it is ready
# and prints its ports and dev tokens. Runs in the foreground; Ctrl-C (or TERM) stops the gateway,
# the providers and PostgreSQL. The database persists in $GATEWAY_DEV_DIR/pg.
#
# Every port is an environment variable (default in brackets):
#   GATEWAY_PORT [8080]  BOOKING_PORT [9101]  BOOKING_CONTROL_PORT [9191]
#   CRM_PORT [9102]      CRM_CONTROL_PORT [9192]  GATEWAY_DEV_PG_PORT [25432]
# The defaults are all below the kernel's ephemeral range (32768-60999), where any outgoing
# connection could be holding a port when PostgreSQL or a server binds it.
# GATEWAY_DEV_DIR [.local] holds the database, the provider logs and the config the gateway runs
# with: config/dev.json with these ports written in (the tracked file is never edited).
set -euo pipefail

repo=$(cd "$(dirname -- "${BASH_SOURCE[0]}")/.." && pwd)
cd "$repo"
# shellcheck source=scripts/lib.sh
source "$repo/scripts/lib.sh"

say() { echo "run.sh: $*" >&2; }
die() { say "$*"; exit 1; }

gateway_port=${GATEWAY_PORT:-8080}
booking_port=${BOOKING_PORT:-9101}
booking_control=${BOOKING_CONTROL_PORT:-9191}
crm_port=${CRM_PORT:-9102}
crm_control=${CRM_CONTROL_PORT:-9192}
pgport=${GATEWAY_DEV_PG_PORT:-25432}
devdir=${GATEWAY_DEV_DIR:-$repo/.local}
case $devdir in /*) ;; *) devdir=$repo/$devdir ;; esac
pgdir=$devdir/pg
logdir=$devdir/logs
bin=$repo/build/release/bin
source_config=config/dev.json
config=$devdir/dev.json

declare -A port_owner=()
for var in GATEWAY_PORT BOOKING_PORT BOOKING_CONTROL_PORT CRM_PORT CRM_CONTROL_PORT GATEWAY_DEV_PG_PORT; do
  case $var in
    GATEWAY_PORT) port=$gateway_port ;;
    BOOKING_PORT) port=$booking_port ;;
    BOOKING_CONTROL_PORT) port=$booking_control ;;
    CRM_PORT) port=$crm_port ;;
    CRM_CONTROL_PORT) port=$crm_control ;;
    GATEWAY_DEV_PG_PORT) port=$pgport ;;
  esac
  case $port in '' | *[!0-9]*) die "$var must be a port number, not '$port'" ;; esac
  if [ "${#port}" -gt 5 ] || [ "$port" -lt 1 ] || [ "$port" -gt 65535 ]; then die "$var must be 1 to 65535, not $port"; fi
  [ -z "${port_owner[$port]:-}" ] || die "$var and ${port_owner[$port]} are both $port"
  port_owner[$port]=$var
done

port_in_use() { [ -n "$(ss -ltnH "sport = :$1")" ]; }

# Refuse before building or starting anything: a port someone else holds would otherwise show up
# much later as a provider that "is not listening" or a gateway that exits.
for port in "$gateway_port" "$booking_port" "$booking_control" "$crm_port" "$crm_control"; do
  if port_in_use "$port"; then
    die "port $port (${port_owner[$port]}) is in use, perhaps by another run.sh; choose another: ${port_owner[$port]}=N $0"
  fi
done
if ! scripts/pg.sh status "$pgdir" && port_in_use "$pgport"; then
  die "port $pgport (GATEWAY_DEV_PG_PORT) is in use; choose another: GATEWAY_DEV_PG_PORT=N $0"
fi

say "building write-gateway and demo-provider in build/release (the first build takes several minutes on 2 cores; later ones, seconds)"
scripts/build.sh release --target write-gateway demo-provider
[ -x "$bin/write-gateway" ] || die "$bin/write-gateway was not built"
[ -x "$bin/demo-provider" ] || die "$bin/demo-provider was not built"

gateway_pid=
provider_pids=()

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

say "starting PostgreSQL on port $pgport (data: $pgdir)"
# Durable settings (PostgreSQL defaults): this database is the authority the demo relies on.
PG_EXTRA_OPTS='' scripts/pg.sh start "$pgdir" "$pgport"
GATEWAY_DATABASE_URL=$(scripts/pg.sh url "$pgdir" "$pgport")
export GATEWAY_DATABASE_URL

mkdir -p "$logdir"

# start_provider KIND PORT CONTROL_PORT CREDENTIALS (comma-separated: one account each)
start_provider() {
  local kind=$1 port=$2 control=$3 credentials=$4 log=$logdir/$1-provider.log pid _
  say "starting the $kind provider on 127.0.0.1:$port (control port $control; log: $log)"
  DEMO_PROVIDER_CREDENTIALS=$credentials \
    "$bin/demo-provider" --kind "$kind" --port "$port" --control-port "$control" >"$log" 2>&1 &
  pid=$!
  provider_pids+=("$pid")
  # Wait until it listens, so the gateway's first forward does not race the provider's start.
  for _ in $(seq 1 50); do
    kill -0 "$pid" 2>/dev/null || break
    ! port_in_use "$port" || return 0
    sleep 0.1
  done
  say "warning: the $kind provider is not listening on port $port; last lines of $log:"
  tail -n 20 "$log" >&2 || true
}
# Each tenant has its own account at each provider (config/dev.json reads
# them from these variables), so one tenant's agents never see another's data.
export BOOKING_KEY_TENANT_A=booking-secret-tenant-a BOOKING_KEY_TENANT_B=booking-secret-tenant-b
export CRM_KEY_TENANT_A=crm-secret-tenant-a CRM_KEY_TENANT_B=crm-secret-tenant-b
start_provider booking "$booking_port" "$booking_control" "$BOOKING_KEY_TENANT_A,$BOOKING_KEY_TENANT_B"
start_provider crm "$crm_port" "$crm_control" "$CRM_KEY_TENANT_A,$CRM_KEY_TENANT_B"

# config/dev.json with the chosen ports. Each value must occur exactly once: if the file changes
# shape, say so rather than run a gateway on ports nobody asked for.
[ -f "$source_config" ] || die "$source_config is missing"
for pattern in '"port": 8080' '"base_url": "http://127.0.0.1:9101"' '"base_url": "http://127.0.0.1:9102"'; do
  [ "$(grep -cF -- "$pattern" "$source_config")" = 1 ] ||
    die "$source_config no longer has $pattern exactly once; update the config rewrite in $0"
done
sed -e "s|\"port\": 8080|\"port\": $gateway_port|" \
  -e "s|\"base_url\": \"http://127.0.0.1:9101\"|\"base_url\": \"http://127.0.0.1:$booking_port\"|" \
  -e "s|\"base_url\": \"http://127.0.0.1:9102\"|\"base_url\": \"http://127.0.0.1:$crm_port\"|" \
  "$source_config" >"$config.tmp"
mv "$config.tmp" "$config"

say "starting the gateway on 127.0.0.1:$gateway_port (build/release/bin/write-gateway --config ${config#"$repo"/}${*:+ $*})"
# In the background plus `wait`, not exec: the shell must stay to clean up, and `wait` (unlike
# a foreground child) returns as soon as INT/TERM arrives, so the traps run at once.
"$bin/write-gateway" --config "$config" "$@" &
gateway_pid=$!

say "waiting until http://127.0.0.1:$gateway_port/readyz answers 200"
ready=0
wait_ready "$gateway_pid" "http://127.0.0.1:$gateway_port/readyz" 600 0.1 && ready=1

if [ "$ready" = 1 ]; then
  # The tokens README.md lists. The config holds only their hashes: check each one is there, so
  # this banner cannot advertise a token the gateway would refuse.
  token_lines=
  label="tokens"
  for entry in "dev-agent-token-a|agent for tenant-a, tenant-b" "dev-agent-token-b|agent for tenant-b" \
    "dev-operator-token|operator (admin routes, gatewayctl)"; do
    token=${entry%%|*}
    hash=$(printf %s "$token" | sha256sum | cut -d' ' -f1)
    note=${entry#*|}
    grep -q "$hash" "$config" || note="NOT in $source_config: $note"
    token_lines+=$(printf '\n  %-12s %-20s %s' "$label" "$token" "$note")
    label=
  done
  # The same ports for demo.sh, when they are not the defaults.
  demo_env=
  [ "$gateway_port" = 8080 ] || demo_env+="GATEWAY_PORT=$gateway_port "
  [ "$booking_control" = 9191 ] || demo_env+="BOOKING_CONTROL_PORT=$booking_control "
  cat <<MSG
------------------------------------------------------------------------
write-gateway dev stack is ready
  gateway      http://127.0.0.1:$gateway_port  (GATEWAY_PORT); config ${config#"$repo"/}
  booking      http://127.0.0.1:$booking_port  (BOOKING_PORT), control port $booking_control (BOOKING_CONTROL_PORT)
  crm          http://127.0.0.1:$crm_port  (CRM_PORT), control port $crm_control (CRM_CONTROL_PORT)
  database     $GATEWAY_DATABASE_URL  (GATEWAY_DEV_PG_PORT; data ${pgdir#"$repo"/})
  logs         gateway: this terminal; providers: ${logdir#"$repo"/}/${token_lines}
  try          curl -s http://127.0.0.1:$gateway_port/readyz
               ${demo_env}scripts/demo.sh   (README.md's curl session, end to end)
  Ctrl-C stops the gateway, the providers and PostgreSQL.
------------------------------------------------------------------------
MSG
elif kill -0 "$gateway_pid" 2>/dev/null; then
  say "warning: the gateway is running but /readyz has not answered 200 within 60 s; see its output above"
fi

rc=0
wait "$gateway_pid" || rc=$?
gateway_pid=
[ "$rc" = 0 ] || say "the gateway exited with status $rc; see its output above"
exit "$rc"
