#!/usr/bin/env bash
# The local HA stack (docs/deployment.md), on loopback, from Debian's packages:
#   scripts/ha.sh up      etcd, three Patroni nodes (PostgreSQL 15, synchronous_mode, not strict),
#                         the two demo providers and two gateways on one multi-host connection
#                         string; prints where everything is. Returns once it is ready.
#   scripts/ha.sh status  who is primary and synchronous standby, and each gateway's /readyz
#   scripts/ha.sh drill   the short failover drill on a running stack: agents book under load, the
#                         primary's Patroni and postmaster are SIGKILLed, then every property is
#                         checked at the provider and in the database (scripts/ha_drill.py)
#   scripts/ha.sh down    stops everything `up` started (gateways first, then providers, Patroni,
#                         etcd); the state stays in HA_DIR for the next `up` unless HA_CLEAN=1
#
# State, logs and the ports chosen live in HA_DIR [build/ha]. The servers (etcd, Patroni and
# PostgreSQL) run as the `postgres` user when this runs as root (PostgreSQL refuses root), else as
# the caller. HA_SKIP_BUILD=1 uses build/release/bin as it is.
set -euo pipefail

repo=$(cd "$(dirname -- "${BASH_SOURCE[0]}")/.." && pwd)
cd "$repo"
# shellcheck source=scripts/lib.sh
source "$repo/scripts/lib.sh"

say() { echo "ha.sh: $*" >&2; }
die() { say "$*"; exit 1; }

dir=${HA_DIR:-$repo/build/ha}
case $dir in /*) ;; *) dir=$repo/$dir ;; esac
db=$dir/db            # owned by the servers' user: etcd and the Patroni nodes' data
env_file=$dir/stack.env
bin=$repo/build/release/bin
PGBIN=/usr/lib/postgresql/15/bin
nodes=(node1 node2 node3)

is_root() { [ "$(id -u)" -eq 0 ]; }
server_user() { if is_root; then echo postgres; else id -un; fi; }
# setpriv execs (runuser forks: its PID would not be the server's), so the PID we keep is the server's.
as_server_cmd=()
if is_root; then as_server_cmd=(setpriv --reuid=postgres --regid=postgres --init-groups env HOME=/var/lib/postgresql); fi
as_server() { "${as_server_cmd[@]}" "$@"; }

port_in_use() { [ -n "$(ss -ltnH "sport = :$1")" ]; }
taken=" "
free_port() {
  local port=$1
  while port_in_use "$port" || [[ $taken == *" $port "* ]]; do port=$((port + 1)); done
  taken+="$port "
  echo "$port"
}

pid_alive() { [ -n "${1:-}" ] && kill -0 "$1" 2>/dev/null; }
pid_of() { cat "$dir/pids/$1" 2>/dev/null || true; }

# Starts "$@" in the background with its output in logs/NAME.log and its PID in pids/NAME.
launch() {
  local name=$1
  shift
  setsid "$@" >"$dir/logs/$name.log" 2>&1 </dev/null &
  echo $! >"$dir/pids/$name"
}

# stop_name NAME GRACE: TERM, wait, KILL; the PID file goes.
stop_name() {
  local name=$1 grace=$2 pid
  pid=$(pid_of "$name")
  if pid_alive "$pid"; then
    say "stopping $name (pid $pid)"
    kill -TERM "$pid" 2>/dev/null || true
    local _
    for _ in $(seq 1 $((grace * 10))); do pid_alive "$pid" || break; sleep 0.1; done
    pid_alive "$pid" && kill -KILL "$pid" 2>/dev/null || true
  fi
  rm -f "$dir/pids/$name"
}

rest_port() { local v="REST_${1^^}"; echo "${!v}"; }
pg_port() { local v="PG_${1^^}"; echo "${!v}"; }

# The node whose Patroni REST API says it is the leader (GET /primary answers 200 there only).
leader() {
  local n
  for n in "${nodes[@]}"; do
    if curl -fsS -o /dev/null --max-time 1 "http://127.0.0.1:$(rest_port "$n")/primary" 2>/dev/null; then
      echo "$n"
      return 0
    fi
  done
  return 1
}

# Patroni's view of the cluster (from any node that answers), as "name role state lag" lines.
members() {
  local n
  for n in "${nodes[@]}"; do
    if curl -fsS --max-time 1 "http://127.0.0.1:$(rest_port "$n")/cluster" 2>/dev/null |
      python3 -c 'import json,sys
for m in json.load(sys.stdin)["members"]:
    print(m["name"], m["role"], m["state"], m.get("lag", 0))'; then
      return 0
    fi
  done
  return 1
}

write_patroni_config() {
  local n=$1 rest pg
  rest=$(rest_port "$n")
  pg=$(pg_port "$n")
  # synchronous_mode: a commit is acknowledged only once the synchronous standby has flushed it,
  # and Patroni promotes only that standby: no acknowledged commit is lost by a failover. Not
  # strict: with no standby left the primary goes on alone (a lost commit is then possible if
  # it dies too, and Patroni will not promote anyone automatically); strict would stop every
  # write instead. docs/deployment.md weighs the two. ttl 8, loop_wait 1, retry_timeout 3: a
  # dead primary is replaced in about 10 s (the leader key expires after ttl).
  cat >"$dir/$n.yml" <<YAML
scope: write-gateway-ha
namespace: /write-gateway-ha/
name: $n
log:
  level: WARNING
restapi:
  listen: 127.0.0.1:$rest
  connect_address: 127.0.0.1:$rest
etcd3:
  hosts: 127.0.0.1:$ETCD_CLIENT
bootstrap:
  dcs:
    ttl: 8
    loop_wait: 1
    retry_timeout: 3
    maximum_lag_on_failover: 1048576
    synchronous_mode: true
    synchronous_mode_strict: false
    synchronous_node_count: 1
    postgresql:
      use_pg_rewind: true
      use_slots: true
      parameters:
        wal_level: replica
        hot_standby: "on"
        wal_log_hints: "on"
        max_wal_senders: 10
        max_replication_slots: 10
        max_connections: 200
        synchronous_commit: "on"
  initdb:
    - encoding: UTF8
    - locale: C
  pg_hba:
    - local all all trust
    - host all all 127.0.0.1/32 trust
    - host replication all 127.0.0.1/32 trust
postgresql:
  listen: 127.0.0.1:$pg
  connect_address: 127.0.0.1:$pg
  data_dir: $db/$n
  bin_dir: $PGBIN
  pgpass: $db/$n.pgpass
  authentication:
    superuser: {username: postgres, password: ha-local-only}
    replication: {username: replicator, password: ha-local-only}
    rewind: {username: postgres, password: ha-local-only}
  parameters:
    unix_socket_directories: $db
    logging_collector: "off"
tags:
  nofailover: false
  noloadbalance: false
  clonefrom: false
  nosync: false
YAML
}

write_gateway_config() {
  local i=$1 port=$2
  python3 - "$repo/config/dev.json" "$dir/gateway$i.json" "$port" "$BOOKING_PORT" "$CRM_PORT" "$dir/gateway$i.guard" <<'PY'
import json, sys
src, out, port, booking, crm, guard = sys.argv[1:]
c = json.load(open(src))
c["listen"]["port"] = int(port)
d = c["database"]
# The failover settings docs/deployment.md explains: a connect gives up in 2 s and libpq tries the
# next host; a silent peer is found by keepalives and tcp_user_timeout; the guard's watermark
# survives a restart in its state file.
d.update({"connect_timeout_s": 2, "keepalives_idle_s": 5, "keepalives_interval_s": 2, "keepalives_count": 3,
          "tcp_user_timeout_ms": 5000, "guard_state_file": guard, "guard_interval_ms": 200})
for p in c["providers"]:
    if p["name"] == "booking":
        p["base_url"] = "http://127.0.0.1:%s" % booking
    if p["name"] == "crm":
        p["base_url"] = "http://127.0.0.1:%s" % crm
json.dump(c, open(out, "w"), indent=2)
PY
}

cmd_up() {
  if [ -f "$env_file" ] && pid_alive "$(pid_of etcd)"; then die "already up (HA_DIR $dir); scripts/ha.sh down first"; fi
  mkdir -p "$dir/logs" "$dir/pids"
  if [ "${HA_SKIP_BUILD:-0}" != 1 ]; then
    say "building write-gateway and demo-provider (build/release)"
    scripts/build.sh release --target write-gateway demo-provider
  fi
  [ -x "$bin/write-gateway" ] && [ -x "$bin/demo-provider" ] || die "build/release/bin lacks write-gateway or demo-provider"
  for tool in etcd patroni patronictl; do command -v "$tool" >/dev/null || die "$tool is missing: scripts/deps.sh installs it"; done

  # Ports below the ephemeral range (32768-60999), first free from each base.
  {
    echo "ETCD_CLIENT=$(free_port 23790)"
    echo "ETCD_PEER=$(free_port 23800)"
    local i=0 n
    for n in "${nodes[@]}"; do
      echo "PG_${n^^}=$(free_port $((25541 + i)))"
      echo "REST_${n^^}=$(free_port $((28008 + i)))"
      i=$((i + 1))
    done
    echo "GATEWAY1_PORT=$(free_port 18281)"
    echo "GATEWAY2_PORT=$(free_port 18282)"
    echo "BOOKING_PORT=$(free_port 19401)"
    echo "BOOKING_CONTROL_PORT=$(free_port 19491)"
    echo "CRM_PORT=$(free_port 19402)"
    echo "CRM_CONTROL_PORT=$(free_port 19492)"
  } >"$env_file"
  # shellcheck disable=SC1090
  source "$env_file"
  local hosts="" n
  for n in "${nodes[@]}"; do hosts+="${hosts:+,}127.0.0.1:$(pg_port "$n")"; done
  # One string for every gateway: libpq tries the hosts in order and keeps the one that takes writes.
  echo "DATABASE_URL='postgresql://postgres@$hosts/postgres?target_session_attrs=read-write'" >>"$env_file"
  source "$env_file"

  mkdir -p "$db"
  if is_root; then chown postgres:postgres "$db"; fi
  chmod 0700 "$db"

  say "starting etcd on 127.0.0.1:$ETCD_CLIENT"
  launch etcd "${as_server_cmd[@]}" etcd --name ha-etcd --data-dir "$db/etcd" \
    --listen-client-urls "http://127.0.0.1:$ETCD_CLIENT" --advertise-client-urls "http://127.0.0.1:$ETCD_CLIENT" \
    --listen-peer-urls "http://127.0.0.1:$ETCD_PEER" --initial-advertise-peer-urls "http://127.0.0.1:$ETCD_PEER" \
    --initial-cluster "ha-etcd=http://127.0.0.1:$ETCD_PEER" --initial-cluster-state new
  local _
  for _ in $(seq 1 100); do
    curl -fsS -o /dev/null --max-time 1 "http://127.0.0.1:$ETCD_CLIENT/health" 2>/dev/null && break
    pid_alive "$(pid_of etcd)" || die "etcd exited; see $dir/logs/etcd.log"
    sleep 0.1
  done

  for n in "${nodes[@]}"; do write_patroni_config "$n"; done
  # The first node bootstraps (initdb) alone, so the others clone it instead of racing for it.
  say "starting Patroni node1 (PostgreSQL on 127.0.0.1:$PG_NODE1)"
  launch node1 "${as_server_cmd[@]}" patroni "$dir/node1.yml"
  for _ in $(seq 1 600); do
    [ "$(leader || true)" = node1 ] && break
    pid_alive "$(pid_of node1)" || die "Patroni node1 exited; see $dir/logs/node1.log"
    sleep 0.1
  done
  [ "$(leader || true)" = node1 ] || die "node1 did not become the leader; see $dir/logs/node1.log"
  for n in node2 node3; do
    say "starting Patroni $n (PostgreSQL on 127.0.0.1:$(pg_port "$n"))"
    launch "$n" "${as_server_cmd[@]}" patroni "$dir/$n.yml"
  done
  say "waiting for a synchronous standby and a second replica"
  wait_cluster 900 || die "the cluster did not settle; see $dir/logs/node*.log"

  say "starting the providers"
  export BOOKING_KEY_TENANT_A=booking-secret-tenant-a BOOKING_KEY_TENANT_B=booking-secret-tenant-b
  export CRM_KEY_TENANT_A=crm-secret-tenant-a CRM_KEY_TENANT_B=crm-secret-tenant-b
  DEMO_PROVIDER_CREDENTIALS="$BOOKING_KEY_TENANT_A,$BOOKING_KEY_TENANT_B" launch booking \
    "$bin/demo-provider" --kind booking --port "$BOOKING_PORT" --control-port "$BOOKING_CONTROL_PORT"
  DEMO_PROVIDER_CREDENTIALS="$CRM_KEY_TENANT_A,$CRM_KEY_TENANT_B" launch crm \
    "$bin/demo-provider" --kind crm --port "$CRM_PORT" --control-port "$CRM_CONTROL_PORT"

  local i
  for i in 1 2; do
    local port_var="GATEWAY${i}_PORT"
    write_gateway_config "$i" "${!port_var}"
    say "starting gateway$i on 127.0.0.1:${!port_var}"
    GATEWAY_DATABASE_URL=$DATABASE_URL launch "gateway$i" "$bin/write-gateway" --config "$dir/gateway$i.json"
  done
  for i in 1 2; do
    local port_var="GATEWAY${i}_PORT"
    wait_ready "$(pid_of "gateway$i")" "http://127.0.0.1:${!port_var}/readyz" 300 0.1 ||
      die "gateway$i did not become ready; see $dir/logs/gateway$i.log"
  done
  cmd_status
}

# True once there is a leader, a synchronous standby and one more replica, all streaming.
wait_cluster() {
  local tries=$1 _ m
  for _ in $(seq 1 "$tries"); do
    m=$(members 2>/dev/null || true)
    if grep -Eq ' leader running' <<<"$m" && grep -Eq ' sync_standby (streaming|running)' <<<"$m" &&
      grep -Eq ' replica (streaming|running)' <<<"$m"; then
      return 0
    fi
    sleep 0.1
  done
  return 1
}

load_env() {
  [ -f "$env_file" ] || die "not up (no $env_file): scripts/ha.sh up"
  # shellcheck disable=SC1090
  source "$env_file"
}

cmd_status() {
  load_env
  echo "ha.sh: HA_DIR $dir"
  echo "  database   $DATABASE_URL"
  echo "  etcd       http://127.0.0.1:$ETCD_CLIENT (pid $(pid_of etcd))"
  members | sed 's/^/  patroni    /' || echo "  patroni    no node answers"
  local i
  for i in 1 2; do
    local port_var="GATEWAY${i}_PORT" ready
    ready=$(curl -sS --max-time 2 "http://127.0.0.1:${!port_var}/readyz" 2>/dev/null || echo "no answer")
    echo "  gateway$i   http://127.0.0.1:${!port_var}  readyz: $ready"
  done
  echo "  booking    http://127.0.0.1:$BOOKING_PORT (control $BOOKING_CONTROL_PORT)"
  echo "  crm        http://127.0.0.1:$CRM_PORT (control $CRM_CONTROL_PORT)"
  echo "  logs       $dir/logs/"
}

# The postmaster of NODE's data directory, from its postmaster.pid.
postmaster_pid() { as_server head -n 1 "$db/$1/postmaster.pid" 2>/dev/null || true; }

cmd_drill() {
  load_env
  local old
  old=$(leader) || die "no leader: is the stack up?"
  wait_cluster 300 || die "the cluster is not settled (no synchronous standby): scripts/ha.sh status"
  local out=$dir/drill
  rm -rf "$out"
  mkdir -p "$out"
  say "drill: agents book through both gateways; the primary ($old) is SIGKILLed 3 s in"
  python3 scripts/ha_drill.py run \
    --gateway "http://127.0.0.1:$GATEWAY1_PORT" --gateway "http://127.0.0.1:$GATEWAY2_PORT" \
    --provider-control "http://127.0.0.1:$BOOKING_CONTROL_PORT" --out "$out" --deadline 100 &
  local agents=$!
  sleep 3
  local patroni_pid postmaster
  patroni_pid=$(pid_of "$old")
  postmaster=$(postmaster_pid "$old")
  say "drill: SIGKILL Patroni $old (pid $patroni_pid) and its postmaster (pid $postmaster)"
  date +%s.%N >"$out/killed_at"
  kill -KILL "$patroni_pid" "$postmaster" 2>/dev/null || true
  local rc=0
  wait "$agents" || rc=$?
  local new
  new=$(leader || echo none)
  say "drill: the new primary is $new"
  # Every acknowledged commit and grant, read from the new primary (any host: libpq finds it).
  [ "$rc" = 0 ] && { python3 scripts/ha_drill.py check --out "$out" --database "$DATABASE_URL" \
    --provider-control "http://127.0.0.1:$BOOKING_CONTROL_PORT" --old-primary "$old" --new-primary "$new" || rc=$?; }
  # The killed node rejoins as a replica (pg_rewind), so a next drill has three nodes again.
  say "drill: restarting Patroni $old; it rejoins as a replica"
  launch "$old" "${as_server_cmd[@]}" patroni "$dir/$old.yml"
  if ! wait_cluster 600; then
    say "drill: $old did not rejoin as a streaming replica within 60 s; see $dir/logs/$old.log"
    rc=1
  fi
  [ "$rc" = 0 ] && say "drill: passed (report: $out/report.txt)" || say "drill: FAILED (see $out/)"
  return "$rc"
}

cmd_down() {
  [ -f "$env_file" ] || { say "not up"; return 0; }
  # shellcheck disable=SC1090
  source "$env_file"
  # Gateways first, with time to drain; then what they depend on.
  stop_name gateway1 30
  stop_name gateway2 30
  stop_name booking 5
  stop_name crm 5
  local n
  for n in "${nodes[@]}"; do stop_name "$n" 30; done
  # A postmaster whose Patroni was killed (the drill) outlives it: stop what is still running.
  for n in "${nodes[@]}"; do
    if [ -f "$db/$n/PG_VERSION" ] && as_server "$PGBIN/pg_ctl" -D "$db/$n" status >/dev/null 2>&1; then
      say "stopping the PostgreSQL of $n left behind"
      as_server "$PGBIN/pg_ctl" -D "$db/$n" stop -m fast -w -t 30 >/dev/null || true
    fi
  done
  stop_name etcd 10
  rm -f "$env_file"
  if [ "${HA_CLEAN:-0}" = 1 ]; then rm -rf "$dir"; say "removed $dir"; fi
  say "down"
}

case ${1:-} in
  up) cmd_up ;;
  status) cmd_status ;;
  drill) cmd_drill ;;
  down) cmd_down ;;
  *) sed -n '2,15p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2 ;;
esac
