#!/usr/bin/env bash
# The local HA stack (docs/deployment.md), on loopback, from Debian's packages:
#   scripts/ha.sh up      etcd, three Patroni nodes (PostgreSQL 15, synchronous_mode, not strict),
#                         the two demo providers and two gateways on one multi-host connection
#                         string; prints where everything is. Returns once it is ready.
#   scripts/ha.sh status  who is primary and synchronous standby, and each gateway's /readyz
#   scripts/ha.sh drill [SCENARIO...]
#                         failover drills on a running stack, one after the other (default kill):
#                         agents book under load through both gateways, the fault happens 3 s in,
#                         then every property is checked at the provider and in the database
#                         (scripts/ha_drill.py). SCENARIO is one of
#                           kill                 SIGKILL the primary's Patroni and postmaster
#                           switchover           patronictl switchover to the synchronous standby
#                           etcd                 SIGKILL etcd, start it again HA_ETCD_DOWN_S [12] later
#                           gateway-and-primary  SIGKILL gateway1 with the primary's Patroni and postmaster
#                           partition            drop every packet to and from the primary's address
#                                                (iptables; needs CAP_NET_ADMIN, else reported as
#                                                skipped, exit 77 when it is the only one)
#                           all                  all of the above
#                         Each drill leaves the stack whole again (three nodes, two gateways).
#                         HA_DRILL_AGENTS [3], HA_DRILL_BOOKINGS [40 per agent], HA_DRILL_FAULT_AT [3 s]
#                         and HA_DRILL_DEADLINE [100 s] make it longer (bench/ha.sh).
#   scripts/ha.sh down    stops everything `up` started (gateways first, then providers, Patroni,
#                         etcd); the state stays in HA_DIR for the next `up` unless HA_CLEAN=1
#
# Each Patroni node has its own loopback address (127.0.77.N, or the next free 127.0.M.N) for
# PostgreSQL, its REST API and its way to etcd, so the partition drill can cut one node off by
# address.
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
# Loopback addresses of the nodes (all of 127.0.0.0/8 is on lo): node1 is $HA_NET.1, and so on,
# HA_NET being the first of 127.0.77, 127.0.78, ... where nothing listens (kept in stack.env), so
# two stacks on one machine never share a node address (the partition drill cuts one by address).
node_addr() { echo "${HA_NET:?}.${1#node}"; }
free_net() {
  local i
  for i in $(seq 77 126); do
    if ! ss -ltnH | awk '{ print $4 }' | grep -q "^127\.0\.$i\."; then echo "127.0.$i"; return 0; fi
  done
  die "no free 127.0.N.0/24 for the nodes (77-126 all have listeners)"
}

is_root() { [ "$(id -u)" -eq 0 ]; }
server_user() { if is_root; then echo postgres; else id -un; fi; }
# setpriv execs (runuser forks: its PID would not be the server's), so the PID we keep is the server's.
as_server_cmd=()
if is_root; then as_server_cmd=(setpriv --reuid=postgres --regid=postgres --init-groups env HOME=/var/lib/postgresql); fi
as_server() { "${as_server_cmd[@]}" "$@"; }

port_in_use() { [ -n "$(ss -ltnH "sport = :$1")" ]; }
# pick_port VAR BASE: the first port from BASE that nothing listens on and no earlier pick took,
# into VAR. Not a $(...) function: the list of ports taken must outlive the call (in a subshell
# each pick forgot the others, so three nodes could all get the first free port).
taken=" "
pick_port() {
  local candidate=$2
  while port_in_use "$candidate" || [[ $taken == *" $candidate "* ]]; do candidate=$((candidate + 1)); done
  taken+="$candidate "
  printf -v "$1" '%s' "$candidate"
}

pid_alive() { [ -n "${1:-}" ] && kill -0 "$1" 2>/dev/null; }
pid_of() { cat "$dir/pids/$1" 2>/dev/null || true; }

# Starts "$@" in the background with its output appended to logs/NAME.log (a restart by a drill
# keeps what the killed process wrote) and its PID in pids/NAME.
launch() {
  local name=$1
  shift
  setsid "$@" >>"$dir/logs/$name.log" 2>&1 </dev/null &
  echo $! >"$dir/pids/$name"
}

# stop_names GRACE NAME...: TERM to each at once, wait up to GRACE s for all, KILL what is left;
# the PID files go. (One after the other, each took about 2 s: `down` took 35 s.)
stop_names() {
  local grace=$1 name pid pids=() _
  shift
  for name in "$@"; do
    pid=$(pid_of "$name")
    if pid_alive "$pid"; then
      say "stopping $name (pid $pid)"
      kill -TERM "$pid" 2>/dev/null || true
      pids+=("$pid")
    fi
  done
  for _ in $(seq 1 $((grace * 10))); do
    local alive=0
    for pid in "${pids[@]}"; do pid_alive "$pid" && alive=1; done
    [ "$alive" = 0 ] && break
    sleep 0.1
  done
  for pid in "${pids[@]}"; do pid_alive "$pid" && kill -KILL "$pid" 2>/dev/null || true; done
  for name in "$@"; do rm -f "$dir/pids/$name"; done
}

rest_port() { local v="REST_${1^^}"; echo "${!v}"; }
rest_url() { echo "http://$(node_addr "$1"):$(rest_port "$1")"; }
pg_port() { local v="PG_${1^^}"; echo "${!v}"; }

# The node whose Patroni REST API says it is the leader (GET /primary answers 200 there only).
leader() {
  local n
  for n in "${nodes[@]}"; do
    if curl -fsS -o /dev/null --max-time 1 "$(rest_url "$n")/primary" 2>/dev/null; then
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
    if curl -fsS --max-time 1 "$(rest_url "$n")/cluster" 2>/dev/null |
      python3 -c 'import json,sys
for m in json.load(sys.stdin)["members"]:
    print(m["name"], m["role"], m["state"], m.get("lag", 0))'; then
      return 0
    fi
  done
  return 1
}

write_patroni_config() {
  local n=$1 rest pg addr
  rest=$(rest_port "$n")
  pg=$(pg_port "$n")
  addr=$(node_addr "$n")
  # synchronous_mode: a commit is acknowledged only once the synchronous standby has flushed it,
  # and Patroni promotes only that standby: no acknowledged commit is lost by a failover. Not
  # strict: with no standby left the primary goes on alone (a lost commit is then possible if
  # it dies too, and Patroni will not promote anyone automatically); strict would stop every
  # write instead. docs/deployment.md weighs the two. ttl 8, loop_wait 1, retry_timeout 3: a
  # dead primary is replaced in about 10 s (the leader key expires after ttl). failsafe_mode stays
  # off (Patroni's default): a primary that cannot update its leader key in etcd demotes itself,
  # so losing etcd stops writes until it is back (docs/deployment.md, "etcd lost"). Each node
  # reaches etcd on its own address (use_proxies: no discovery of etcd's advertised URL) and
  # Patroni talks to its own PostgreSQL on the Unix socket, so cutting the node's address cuts
  # exactly that node off.
  cat >"$dir/$n.yml" <<YAML
scope: write-gateway-ha
namespace: /write-gateway-ha/
name: $n
log:
  level: WARNING
restapi:
  listen: $addr:$rest
  connect_address: $addr:$rest
etcd3:
  hosts: $addr:$ETCD_CLIENT
  use_proxies: true
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
        track_commit_timestamp: "on"
  initdb:
    - encoding: UTF8
    - locale: C
  pg_hba:
    - local all all trust
    - host all all 127.0.0.0/8 trust
    - host replication all 127.0.0.0/8 trust
postgresql:
  listen: $addr:$pg
  connect_address: $addr:$pg
  use_unix_socket: true
  use_unix_socket_repl: false
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

provider_keys() {
  export BOOKING_KEY_TENANT_A=booking-secret-tenant-a BOOKING_KEY_TENANT_B=booking-secret-tenant-b
  export CRM_KEY_TENANT_A=crm-secret-tenant-a CRM_KEY_TENANT_B=crm-secret-tenant-b
}

# etcd on 127.0.0.1 and on each node's address (each node's Patroni uses its own); with its data
# directory kept, so the etcd drill starts it again with the cluster's keys.
start_etcd() {
  local urls="http://127.0.0.1:$ETCD_CLIENT" n _
  for n in "${nodes[@]}"; do urls+=",http://$(node_addr "$n"):$ETCD_CLIENT"; done
  say "starting etcd on 127.0.0.1:$ETCD_CLIENT (and each node's address)"
  launch etcd "${as_server_cmd[@]}" etcd --name ha-etcd --data-dir "$db/etcd" \
    --listen-client-urls "$urls" --advertise-client-urls "http://127.0.0.1:$ETCD_CLIENT" \
    --listen-peer-urls "http://127.0.0.1:$ETCD_PEER" --initial-advertise-peer-urls "http://127.0.0.1:$ETCD_PEER" \
    --initial-cluster "ha-etcd=http://127.0.0.1:$ETCD_PEER" --initial-cluster-state new
  for _ in $(seq 1 100); do
    curl -fsS -o /dev/null --max-time 1 "http://127.0.0.1:$ETCD_CLIENT/health" 2>/dev/null && return 0
    pid_alive "$(pid_of etcd)" || die "etcd exited; see $dir/logs/etcd.log"
    sleep 0.1
  done
  die "etcd did not answer within 10 s; see $dir/logs/etcd.log"
}

gateway_port() { local v="GATEWAY${1}_PORT"; echo "${!v}"; }
start_gateway() {
  provider_keys
  say "starting gateway$1 on 127.0.0.1:$(gateway_port "$1")"
  GATEWAY_DATABASE_URL=$DATABASE_URL launch "gateway$1" "$bin/write-gateway" --config "$dir/gateway$1.json"
}
wait_gateway() {
  wait_ready "$(pid_of "gateway$1")" "http://127.0.0.1:$(gateway_port "$1")/readyz" 300 0.1 ||
    die "gateway$1 did not become ready; see $dir/logs/gateway$1.log"
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
  local port i=0 n
  {
    echo "HA_NET=${HA_NET:-$(free_net)}"
    pick_port port 23790 && echo "ETCD_CLIENT=$port"
    pick_port port 23800 && echo "ETCD_PEER=$port"
    for n in "${nodes[@]}"; do
      pick_port port $((25541 + i)) && echo "PG_${n^^}=$port"
      pick_port port $((28008 + i)) && echo "REST_${n^^}=$port"
      i=$((i + 1))
    done
    pick_port port 18281 && echo "GATEWAY1_PORT=$port"
    pick_port port 18282 && echo "GATEWAY2_PORT=$port"
    pick_port port 19401 && echo "BOOKING_PORT=$port"
    pick_port port 19491 && echo "BOOKING_CONTROL_PORT=$port"
    pick_port port 19402 && echo "CRM_PORT=$port"
    pick_port port 19492 && echo "CRM_CONTROL_PORT=$port"
  } >"$env_file"
  # shellcheck disable=SC1090
  source "$env_file"
  local hosts="" n
  for n in "${nodes[@]}"; do hosts+="${hosts:+,}$(node_addr "$n"):$(pg_port "$n")"; done
  # One string for every gateway: libpq tries the hosts in order and keeps the one that takes writes.
  echo "DATABASE_URL='postgresql://postgres@$hosts/postgres?target_session_attrs=read-write'" >>"$env_file"
  source "$env_file"

  mkdir -p "$db"
  if is_root; then chown postgres:postgres "$db"; fi
  chmod 0700 "$db"

  start_etcd
  for n in "${nodes[@]}"; do write_patroni_config "$n"; done
  local first=(node1) rest=(node2 node3)
  # The state of an earlier `up` (kept by `down` without HA_CLEAN): the last leader may be any
  # node (drills move it), so all start at once and elect one among themselves.
  if [ -f "$db/node1/PG_VERSION" ]; then first=(); rest=("${nodes[@]}"); fi
  # On a fresh HA_DIR the first node bootstraps (initdb) alone, so the others clone it instead of
  # racing for it.
  for n in "${first[@]}"; do
    say "starting Patroni $n (PostgreSQL on $(node_addr "$n"):$(pg_port "$n"))"
    launch "$n" "${as_server_cmd[@]}" patroni "$dir/$n.yml"
    for _ in $(seq 1 600); do
      [ "$(leader || true)" = "$n" ] && break
      pid_alive "$(pid_of "$n")" || die "Patroni $n exited; see $dir/logs/$n.log"
      sleep 0.1
    done
    [ "$(leader || true)" = "$n" ] || die "$n did not become the leader; see $dir/logs/$n.log"
  done
  for n in "${rest[@]}"; do
    say "starting Patroni $n (PostgreSQL on $(node_addr "$n"):$(pg_port "$n"))"
    launch "$n" "${as_server_cmd[@]}" patroni "$dir/$n.yml"
  done
  say "waiting for a synchronous standby and a second replica"
  wait_cluster 900 || die "the cluster did not settle; see $dir/logs/node*.log"

  say "starting the providers"
  provider_keys
  DEMO_PROVIDER_CREDENTIALS="$BOOKING_KEY_TENANT_A,$BOOKING_KEY_TENANT_B" launch booking \
    "$bin/demo-provider" --kind booking --port "$BOOKING_PORT" --control-port "$BOOKING_CONTROL_PORT"
  DEMO_PROVIDER_CREDENTIALS="$CRM_KEY_TENANT_A,$CRM_KEY_TENANT_B" launch crm \
    "$bin/demo-provider" --kind crm --port "$CRM_PORT" --control-port "$CRM_CONTROL_PORT"

  local i
  for i in 1 2; do write_gateway_config "$i" "$(gateway_port "$i")"; start_gateway "$i"; done
  for i in 1 2; do wait_gateway "$i"; done
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

# The synchronous standby's name, from Patroni's view.
sync_standby() { members 2>/dev/null | awk '$2 == "sync_standby" { print $1; exit }'; }

# Polls until a node other than $1 is the leader (up to $2 tenths of a second); prints it.
wait_new_leader() {
  local old=$1 tries=$2 _ n
  for _ in $(seq 1 "$tries"); do
    n=$(leader 2>/dev/null || true)
    if [ -n "$n" ] && [ "$n" != "$old" ]; then echo "$n"; return 0; fi
    sleep 0.1
  done
  return 1
}

# When node $1 was promoted, as seconds since the epoch: the last entry of Patroni's /history
# (timeline, LSN, reason, time, new leader), which Patroni writes to etcd a loop or two after the
# promotion; polled for up to 10 s until that entry names $1 and comes after the fault ($2).
promotion_time() {
  local _ t
  for _ in $(seq 1 100); do
    t=$(curl -fsS --max-time 2 "$(rest_url "$1")/history" 2>/dev/null | python3 -c 'import json, sys
from datetime import datetime
h = json.load(sys.stdin)
if h and len(h[-1]) > 4 and h[-1][4] == sys.argv[1] and datetime.fromisoformat(h[-1][3]).timestamp() > float(sys.argv[2]):
    print("%.3f" % datetime.fromisoformat(h[-1][3]).timestamp())' "$1" "$2" 2>/dev/null || true)
    [ -n "$t" ] && { echo "$t"; return 0; }
    sleep 0.1
  done
  return 1
}

# Every booking the provider gets is delayed by 1.5 s (then executed, whether or not anyone still
# waits for the reply) until every agent has one in progress there (each has at most one), up to
# 5 s; prints how many were. The delay is lifted by provider_in_flight_end.
provider_in_flight() {
  local control="http://127.0.0.1:$BOOKING_CONTROL_PORT" want=$1 _ n=0
  curl -fsS -o /dev/null --max-time 2 -d '{"mode": "delay", "delay_ms": 1500}' "$control/__test/faults" ||
    { say "drill: the provider refused the fault"; echo 0; return 0; }
  for _ in $(seq 1 500); do
    n=$(curl -fsS --max-time 1 "$control/__test/activity" 2>/dev/null |
      python3 -c 'import json, sys; print(json.load(sys.stdin)["in_progress"])' 2>/dev/null || echo 0)
    [ "$n" -ge "$want" ] && break
    sleep 0.01
  done
  echo "$n"
}
provider_in_flight_end() {
  curl -fsS -o /dev/null --max-time 2 -d '{"mode": "none"}' "http://127.0.0.1:$BOOKING_CONTROL_PORT/__test/faults" ||
    say "drill: the provider's delay could not be lifted"
}

kill_primary() {
  local n=$1 patroni_pid postmaster
  patroni_pid=$(pid_of "$n")
  postmaster=$(postmaster_pid "$n")
  say "drill: SIGKILL Patroni $n (pid $patroni_pid) and its postmaster (pid $postmaster)"
  kill -KILL "$patroni_pid" "$postmaster" 2>/dev/null || true
}

# The partition drill's packet filter: every packet to or from the node's address is dropped
# silently on input (as a cut cable would: no reset, no error), in a chain of this stack's own
# (iptables; removed by the drill, and by `down` if a drill was interrupted). Needs CAP_NET_ADMIN.
chain() { echo "ha-drill-$ETCD_CLIENT"; }
partition_cut() {
  local addr=$1
  iptables -w -N "$(chain)" 2>"$out/iptables.err" &&
    iptables -w -A "$(chain)" -d "$addr" -j DROP 2>>"$out/iptables.err" &&
    iptables -w -A "$(chain)" -s "$addr" -j DROP 2>>"$out/iptables.err" &&
    iptables -w -I INPUT -j "$(chain)" 2>>"$out/iptables.err"
}
partition_heal() {
  command -v iptables >/dev/null || return 0
  iptables -w -S "$(chain)" >/dev/null 2>&1 || return 0
  while iptables -w -D INPUT -j "$(chain)" 2>/dev/null; do :; done
  iptables -w -F "$(chain)" 2>/dev/null || true
  iptables -w -X "$(chain)" 2>/dev/null || true
}
# Whether this process may filter packets here: CAP_NET_ADMIN in the effective set, and iptables
# able to read the filter table (a kernel without it, or a container's seccomp, says no).
can_partition() {
  command -v iptables >/dev/null || { echo "iptables is not installed (scripts/deps.sh installs it)"; return 1; }
  local eff err
  eff=$(awk '/^CapEff:/ { print $2 }' /proc/self/status)
  # CAP_NET_ADMIN is bit 12.
  if (( (16#$eff >> 12 & 1) == 0 )); then
    echo "this process lacks CAP_NET_ADMIN (root in the host's network namespace, or a container run with --cap-add NET_ADMIN)"
    return 1
  fi
  if ! err=$(iptables -w -S INPUT 2>&1 >/dev/null); then
    echo "iptables cannot read the filter table here: $err"
    return 1
  fi
  return 0
}

# One scenario: agents under load, the fault 3 s in, the checks, and the stack made whole again.
# Returns 0 (passed), 1 (failed) or 77 (skipped: no privilege for it here).
run_drill() {
  local scenario=$1 old new="" rc=0 why
  out=$dir/drill/$scenario
  rm -rf "$out"
  mkdir -p "$out"
  if [ "$scenario" = partition ] && ! why=$(can_partition); then
    say "drill partition: SKIPPED: cutting a node off needs a packet filter (iptables): $why"
    echo "skipped: $why" >"$out/report.txt"
    return 77
  fi
  old=$(leader) || { say "drill $scenario: no leader: is the stack up?"; return 1; }
  wait_cluster 300 || { say "drill $scenario: the cluster is not settled (no synchronous standby)"; return 1; }
  say "drill $scenario: agents book through both gateways; the fault comes ${HA_DRILL_FAULT_AT:-3} s in (primary: $old)"
  python3 scripts/ha_drill.py run \
    --gateway "http://127.0.0.1:$GATEWAY1_PORT" --gateway "http://127.0.0.1:$GATEWAY2_PORT" \
    --provider-control "http://127.0.0.1:$BOOKING_CONTROL_PORT" --out "$out" --deadline "${HA_DRILL_DEADLINE:-100}" \
    ${HA_DRILL_BOOKINGS:+--bookings-per-agent "$HA_DRILL_BOOKINGS"} ${HA_DRILL_AGENTS:+--agents "$HA_DRILL_AGENTS"} &
  local agents=$!
  sleep "${HA_DRILL_FAULT_AT:-3}"
  date +%s.%N >"$out/event_at"
  case $scenario in
    kill) kill_primary "$old" ;;
    gateway-and-primary)
      # So that gateway1 dies with forwards in flight: bookings wait 1.5 s at the provider until
      # all three agents have one there (two of them through gateway1). What gateway1 admitted
      # and sent is left in_flight in the database, executed at the provider, for gateway2's
      # sweeper and reconciler (a provider lookup) to settle; the check counts them.
      local held
      held=$(provider_in_flight 3)
      echo "$held" >"$out/in_flight_at_fault"
      say "drill: $held bookings in progress at the provider; SIGKILL gateway1 (pid $(pid_of gateway1)) at the same moment"
      kill -KILL "$(pid_of gateway1)" 2>/dev/null || true
      kill_primary "$old"
      provider_in_flight_end
      ;;
    switchover)
      local target
      target=$(sync_standby)
      say "drill: patronictl switchover $old -> ${target:-?} (the synchronous standby)"
      patronictl -c "$dir/$old.yml" switchover --leader "$old" --candidate "$target" --force >"$out/switchover.log" 2>&1 ||
        { say "drill: patronictl switchover failed: $(tail -n 3 "$out/switchover.log")"; rc=1; }
      ;;
    etcd)
      say "drill: SIGKILL etcd (pid $(pid_of etcd)); it starts again in ${HA_ETCD_DOWN_S:-12} s"
      kill -KILL "$(pid_of etcd)" 2>/dev/null || true
      sleep "${HA_ETCD_DOWN_S:-12}"
      start_etcd
      date +%s.%N >"$out/healed_at"
      ;;
    partition)
      say "drill: dropping every packet to and from $old ($(node_addr "$old")); its processes stay up"
      # Healed whatever happens, also when this script is interrupted.
      trap 'partition_heal' EXIT
      if ! partition_cut "$(node_addr "$old")"; then
        say "drill partition: iptables refused the filter: $(cat "$out/iptables.err")"
        partition_heal
        rc=1
      fi
      ;;
  esac
  if [ "$scenario" != etcd ]; then
    if new=$(wait_new_leader "$old" 600); then
      promotion_time "$new" "$(cat "$out/event_at")" >"$out/promoted_at" ||
        { rm -f "$out/promoted_at"; say "drill: Patroni's /history does not name the promotion of $new"; }
      say "drill: $new is the primary now"
    else
      say "drill $scenario: no other node became the primary within 60 s"
      rc=1
    fi
  fi
  wait "$agents" || rc=1
  [ -n "$new" ] || new=$(leader || echo none)
  if [ "$scenario" = partition ]; then
    # What the old primary holds, read through its Unix socket (not cut) before it is healed:
    # afterwards Patroni rewinds it onto the new timeline.
    python3 scripts/ha_drill.py snapshot --out "$out" \
      --database "host=$db port=$(pg_port "$old") user=postgres dbname=postgres" || rc=1
    say "drill: healing the partition"
    partition_heal
    trap - EXIT
  fi
  # Every acknowledged commit and grant, read from the primary now (any host: libpq finds it).
  [ "$rc" = 0 ] && { python3 scripts/ha_drill.py check --out "$out" --database "$DATABASE_URL" --scenario "$scenario" \
    --provider-control "http://127.0.0.1:$BOOKING_CONTROL_PORT" --old-primary "$old" --new-primary "$new" || rc=$?; }
  # The stack whole again for the next drill: what was killed is started; a killed or cut-off
  # node rejoins as a replica (pg_rewind).
  case $scenario in
    kill | gateway-and-primary)
      say "drill: restarting Patroni $old; it rejoins as a replica"
      launch "$old" "${as_server_cmd[@]}" patroni "$dir/$old.yml"
      ;;
  esac
  if [ "$scenario" = gateway-and-primary ]; then
    start_gateway 1
    wait_gateway 1
  fi
  if ! wait_cluster 900; then
    say "drill $scenario: the cluster did not settle again (three nodes streaming) within 90 s; see $dir/logs/"
    rc=1
  fi
  [ "$rc" = 0 ] && say "drill $scenario: passed (report: $out/report.txt)" || say "drill $scenario: FAILED (see $out/)"
  return "$rc"
}

cmd_drill() {
  load_env
  local scenarios=("$@") s rc=0 one summary=()
  [ ${#scenarios[@]} -gt 0 ] || scenarios=(kill)
  if [ "${scenarios[*]}" = all ]; then scenarios=(kill switchover etcd gateway-and-primary partition); fi
  for s in "${scenarios[@]}"; do
    case $s in kill | switchover | etcd | gateway-and-primary | partition) ;; *) die "unknown drill: $s" ;; esac
  done
  mkdir -p "$dir/drill"
  for s in "${scenarios[@]}"; do
    one=0
    run_drill "$s" || one=$?
    case $one in
      0) summary+=("$s: passed") ;;
      77) summary+=("$s: SKIPPED (no privilege for iptables here)") ;;
      *) summary+=("$s: FAILED"); rc=1 ;;
    esac
  done
  printf 'ha.sh: drill %s\n' "${summary[@]}" >&2
  # Only skipped: say so by the exit status too (77, as automake's skip).
  if [ "$rc" = 0 ] && ! printf '%s\n' "${summary[@]}" | grep -q passed; then return 77; fi
  return "$rc"
}

cmd_down() {
  [ -f "$env_file" ] || { say "not up"; return 0; }
  # shellcheck disable=SC1090
  source "$env_file"
  # Gateways first, with time to drain; then what they depend on. The replicas before the
  # leader, so no replica is left to take over from a leader that stops.
  stop_names 30 gateway1 gateway2
  stop_names 5 booking crm
  local n lead replicas=()
  lead=$(leader 2>/dev/null || true)
  for n in "${nodes[@]}"; do [ "$n" = "$lead" ] || replicas+=("$n"); done
  stop_names 30 "${replicas[@]}"
  [ -z "$lead" ] || stop_names 30 "$lead"
  # A postmaster whose Patroni was killed (the drill) outlives it: stop what is still running.
  for n in "${nodes[@]}"; do
    if [ -f "$db/$n/PG_VERSION" ] && as_server "$PGBIN/pg_ctl" -D "$db/$n" status >/dev/null 2>&1; then
      say "stopping the PostgreSQL of $n left behind"
      as_server "$PGBIN/pg_ctl" -D "$db/$n" stop -m fast -w -t 30 >/dev/null || true
    fi
  done
  stop_names 10 etcd
  # A partition drill interrupted before it healed: its filter goes too.
  partition_heal 2>/dev/null || true
  rm -f "$env_file"
  if [ "${HA_CLEAN:-0}" = 1 ]; then rm -rf "$dir"; say "removed $dir"; fi
  say "down"
}

case ${1:-} in
  up) cmd_up ;;
  status) cmd_status ;;
  drill) shift; cmd_drill "$@" ;;
  down) cmd_down ;;
  *) sed -n '2,31p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2 ;;
esac
