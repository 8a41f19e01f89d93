#!/usr/bin/env bash
# The benchmarks, in one run: bench/run.sh [--quick]      (bench/README.md)
#
# Builds what it runs (release tree), starts a private PostgreSQL (build/bench-pg, durable
# default settings, destroyed before and after), the booking demo provider, the gateway, a
# private nginx (build/bench-nginx) and a static upstream nginx of its own (build/bench-static),
# then measures every gateway figure next to the baseline a
# careful engineer would write instead, in the same run:
#   protected mutation  gateway  vs  minimal SQL (bench/minimal_protected.sql on its own two
#                       tables, bench/minimal_schema.sql: a SERIALIZABLE admission and a READ
#                       COMMITTED outcome, pgbench -M prepared at the SAME client count as agents)
#   claim               gateway  vs  minimal SQL (bench/minimal_claim.sql: one transaction)
#   GET pass-through    gateway  vs  nginx (keep-alive reverse proxy, worker_processes = the
#                       gateway's io_threads, access log as the gateway's), both in front of a
#                       static upstream (PASSTHROUGH)  vs  the same nginx
#                       adding the headers the gateway forwards (request id both ways, trace
#                       context, Forwarded: what they cost the provider and the agent)  vs  the
#                       bare proxy (bench/bare_proxy.cpp: the gateway's stack with none of its
#                       work)  vs  the provider directly (at 8 agents only: the host's speed that
#                       day), in alternating rounds of one load run, so that the machine's drift
#                       lands on all of them alike
#   protected mutation  gateway  vs  nginx plus a careful client library on PostgreSQL: each
#                       agent runs the minimal SQL's statements itself (bench/pg_client.cpp,
#                       gateway-load --mode client) and POSTs the booking through the nginx
#                       above, which adds the provider's credential: what an engineer would
#                       build instead of the gateway, provider hop included (CLIENT_CONCURRENCY)
# The first measurement is a protected pair on a fresh database (the gateway's migrations and
# the claims the load makes; the minimal SQL's owner rows and no history); then both sides get
# a history (bench/pgbench_seed.sql, bench/minimal_seed.sql) and the sweep over the number of
# agents runs, with sequential task names (trip-<run>-1, ...: the SERIALIZABLE worst case) and
# random ones for the database-bound work (the minimal protected script takes no names: from 256
# clients up, where each side has one round, the random pass reuses its sequential measurement);
# then one protected pair beside a CPU-burning neighbour process, the pass-through, and the
# memory of idle keep-alive connections (gateway and nginx). Writes a markdown table
# (throughput, p50/p90/p99/p99.9, every non-2xx reply by code, serialization failures from the
# PostgreSQL log, operations left unresolved, CPU per process) and a PNG plot of throughput and
# p99 against concurrency next to it.
#
#   bench/run.sh           3 s per point, 1/8/64/256/1000 agents, 10,000 idle connections;
#                          writes bench/results.md and bench/results.png (under 10 minutes of
#                          measuring on 2 cores, plus the build)
#   bench/run.sh --quick   2 s per point, 8/64 agents, sequential names only, 1,000 idle
#                          connections; writes
#                          build/bench-quick/results.md and .png (under 2 minutes; CI's smoke)
#
# Env (defaults): DURATION (3, quick 2) measured seconds per point, WARMUP=1 second of load
# before them (new pgbench connections, first claims: not counted; at most 0.5 s before each
# server's first pass-through round), ROUNDS (2)
# pass-through rounds per server, DB_ROUNDS (2, quick 1) rounds per side of each database
# comparison up to 64 clients (2: gateway, minimal, minimal, gateway), CONCURRENCY ("1 8 64 256 1000",
# quick "8 64"), NAMES ("sequential random", quick "sequential"), FRESH_CLIENTS=64 and
# NEIGHBOUR_CLIENTS=64 (agents of the fresh-database pair and of the pair beside the CPU-burning
# neighbour), IDLE_CONNECTIONS (10000, quick 1000), POOL=16 gateway database connections,
# DIRECT=8 connections per I/O thread for decisions made without a worker (database.direct_connections),
# PIPELINE=4 decisions at once on one of them (database.direct_pipeline),
# GROUP (database.group_max; unset: the gateway's default),
# UPSTREAM=static (protected writes go to a static nginx that answers 201, the upstream
# "that costs almost nothing" of issue #30's setup; "booking": to the booking demo provider),
# PASSTHROUGH=static (the GET pass-through reads from the static nginx, which answers 200 with
# a small JSON body, issue #30's setup for its whole table; "booking": reads booking bk_1 from the
# booking demo provider, whose own cost per request then dilutes the proxies' difference),
# IO_THREADS=2 (gateway io_threads = nginx worker_processes), PROVIDER_CONNECTIONS (the most
# agents of the run: the gateway's providers' max_connections; nginx opens an upstream
# connection per request in flight and keeps 64 idle ones per worker), CLIENT_CONCURRENCY
# ("1 64", quick "64"; "" for none: agents of the pairs with the careful client, random names,
# seeded database), ACCESS_LOG=1 (the
# gateway's log.access, its default, and nginx's access_log to a file in the combined format;
# 0: both off), LOAD_THREADS=1 (gateway-load event loops), MAX_TRIES=8 (pgbench tries per
# transaction, as the gateway's SERIALIZABLE loop), SEED_TASKS=10000, SEED_OPS=10 (the history
# of both sides: tasks x operations each; SEED_TASKS is also the minimal SQL's owner rows),
# RESULTS (the markdown file to write), BIN_DIR (binaries to measure instead of building
# build/release: write-gateway, demo-provider, gateway-load, bare-proxy), BENCH_PG_PORT=25719,
# BENCH_GATEWAY_PORT=18471, BENCH_PROVIDER_PORT=19473, BENCH_CONTROL_PORT=19474,
# BENCH_NGINX_PORT=18472, BENCH_BARE_PORT=18473,
# BENCH_NGINX_FORWARDING_PORT=18475, BENCH_STATIC_PORT=18476.
# Installs what it needs and the gateway build does not (jq, nginx-light, gnuplot-nox) with
# apt-get when missing. Logs of the last run: build/bench-logs/.
set -euo pipefail

repo=$(cd "$(dirname -- "${BASH_SOURCE[0]}")/.." && pwd)
cd "$repo"

quick=0
case ${1:-} in
  --quick) quick=1 ;;
  '') ;;
  -h | --help) awk 'NR > 1 && !/^#/ { exit } NR > 1 { sub(/^# ?/, ""); print }' "$0"; exit 0 ;;
  *) echo "usage: bench/run.sh [--quick]" >&2; exit 2 ;;
esac

if [ "$quick" = 1 ]; then
  duration=${DURATION:-2}
  read -r -a levels <<<"${CONCURRENCY:-8 64}"
  read -r -a name_kinds <<<"${NAMES:-sequential}"
  idle_n=${IDLE_CONNECTIONS:-1000}
  results=${RESULTS:-$repo/build/bench-quick/results.md}
else
  duration=${DURATION:-3}
  read -r -a levels <<<"${CONCURRENCY:-1 8 64 256 1000}"
  read -r -a name_kinds <<<"${NAMES:-sequential random}"
  idle_n=${IDLE_CONNECTIONS:-10000}
  results=${RESULTS:-$repo/bench/results.md}
fi
warmup=${WARMUP:-1}
# Four servers (five at 8 agents) alternate in the pass-through, each first round opened by its
# own warm-up: two rounds, and at most half a second of warm-up there (keep-alive connections,
# nothing to fill), keep its five levels to about 90 s of the run (89 s on 6 December).
rounds=${ROUNDS:-2}
passthrough_warmup=$(awk -v w="$warmup" 'BEGIN { print (w > 0.5 ? 0.5 : w) }')
db_rounds=${DB_ROUNDS:-$([ "$quick" = 1 ] && echo 1 || echo 2)}
pool=${POOL:-16}
direct=${DIRECT:-8}
pipeline=${PIPELINE:-4}
group=${GROUP:-}
io_threads=${IO_THREADS:-2}
upstream=${UPSTREAM:-static}
passthrough_upstream=${PASSTHROUGH:-static}
load_threads=${LOAD_THREADS:-1}
max_tries=${MAX_TRIES:-8}
seed_tasks=${SEED_TASKS:-10000}
seed_ops=${SEED_OPS:-10}
fresh_clients=${FRESH_CLIENTS:-64}
neighbour_clients=${NEIGHBOUR_CLIENTS:-64}
# shellcheck disable=SC2206 # a list of numbers
client_levels=(${CLIENT_CONCURRENCY-$([ "$quick" = 1 ] && echo 64 || echo 1 64)})
access_log=${ACCESS_LOG:-1}
pgport=${BENCH_PG_PORT:-25719}
gwport=${BENCH_GATEWAY_PORT:-18471}
provport=${BENCH_PROVIDER_PORT:-19473}
ctlport=${BENCH_CONTROL_PORT:-19474}
nginxport=${BENCH_NGINX_PORT:-18472}
bareport=${BENCH_BARE_PORT:-18473}
nginxfwdport=${BENCH_NGINX_FORWARDING_PORT:-18475}
staticport=${BENCH_STATIC_PORT:-18476}
plot=${results%.md}.png

case $access_log in 0 | 1) ;; *) echo "bench: ACCESS_LOG must be 0 or 1" >&2; exit 2 ;; esac
max_level=1
for c in "${levels[@]}" "$fresh_clients" "$neighbour_clients" "${client_levels[@]}"; do
  case $c in '' | *[!0-9]* | 0) echo "bench: CONCURRENCY, FRESH_CLIENTS, NEIGHBOUR_CLIENTS and CLIENT_CONCURRENCY must be positive integers" >&2; exit 2 ;; esac
  [ "$c" -le "$max_level" ] || max_level=$c
done
# nginx opens an upstream connection for every request in flight, with no cap (keepalive 64 caps
# only the idle ones a worker keeps): the gateway's providers get room for as many.
provider_conns=${PROVIDER_CONNECTIONS:-$max_level}
command_line="DURATION=$duration WARMUP=$warmup ROUNDS=$rounds DB_ROUNDS=$db_rounds CONCURRENCY=\"${levels[*]}\" NAMES=\"${name_kinds[*]}\" FRESH_CLIENTS=$fresh_clients NEIGHBOUR_CLIENTS=$neighbour_clients CLIENT_CONCURRENCY=\"${client_levels[*]}\" IDLE_CONNECTIONS=$idle_n POOL=$pool DIRECT=$direct PIPELINE=$pipeline${group:+ GROUP=$group} IO_THREADS=$io_threads UPSTREAM=$upstream PASSTHROUGH=$passthrough_upstream PROVIDER_CONNECTIONS=$provider_conns ACCESS_LOG=$access_log LOAD_THREADS=$load_threads MAX_TRIES=$max_tries SEED_TASKS=$seed_tasks SEED_OPS=$seed_ops bench/run.sh$([ "$quick" = 0 ] || echo ' --quick')"

pgdir=$repo/build/bench-pg
nginxdir=$repo/build/bench-nginx
staticdir=$repo/build/bench-static
logs=$repo/build/bench-logs
# BIN_DIR: measure binaries built elsewhere (another checkout's build/release/bin, e.g. of a
# commit while this working tree is being edited) instead of building this one's release tree.
bin=${BIN_DIR:-$repo/build/release/bin}
started_at=$(date -u '+%Y-%m-%d %H:%M:%S UTC')
t0=$SECONDS

say() { echo "bench: $*" >&2; }
die() { say "$*"; exit 1; }
case $upstream in static | booking) ;; *) die "UPSTREAM is static or booking, not $upstream" ;; esac
case $passthrough_upstream in static | booking) ;; *) die "PASSTHROUGH is static or booking, not $passthrough_upstream" ;; esac

# --- What the benchmark needs beyond the gateway's build (scripts/deps.sh) ------------------
need_packages() {
  local missing=() cmd pkg
  for pair in jq:jq nginx:nginx-light gnuplot:gnuplot-nox pgbench:postgresql-client-15 curl:curl ss:iproute2; do
    cmd=${pair%%:*} pkg=${pair#*:}
    if [ "$cmd" = nginx ]; then
      [ -x /usr/sbin/nginx ] || missing+=("$pkg")
    else
      command -v "$cmd" >/dev/null || missing+=("$pkg")
    fi
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  say "installing ${missing[*]}"
  local sudo=()
  if [ "$(id -u)" -ne 0 ]; then
    command -v sudo >/dev/null || die "not root and no sudo; install: ${missing[*]}"
    sudo=(sudo)
  fi
  "${sudo[@]}" apt-get update -q >&2
  # nginx's postinst would start the system-wide nginx on port 80: a policy-rc.d that says 101
  # ("action forbidden") keeps it stopped; the benchmark runs its own private instance.
  local policy=/usr/sbin/policy-rc.d added_policy=0
  if [ ! -e "$policy" ]; then
    printf '#!/bin/sh\n# bench/run.sh: no service starts while it installs packages\nexit 101\n' |
      "${sudo[@]}" tee "$policy" >/dev/null
    "${sudo[@]}" chmod 0755 "$policy"
    added_policy=1
  fi
  local rc=0
  "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive \
    apt-get install -y -q --no-install-recommends "${missing[@]}" >&2 || rc=$?
  [ "$added_policy" = 0 ] || "${sudo[@]}" rm -f "$policy"
  [ "$rc" -eq 0 ] || die "apt-get install ${missing[*]} failed"
}
need_packages

# Only what the benchmarks run: a test target that does not build must not stop them.
if [ -z "${BIN_DIR:-}" ]; then
  scripts/build.sh release --target write-gateway demo-provider gateway-load bare-proxy
fi
for b in write-gateway demo-provider gateway-load bare-proxy; do [ -x "$bin/$b" ] || die "no $bin/$b"; done
build_s=$((SECONDS - t0))

for port in "$pgport" "$gwport" "$provport" "$ctlport" "$nginxport" "$bareport" "$nginxfwdport" "$staticport"; do
  [ -z "$(ss -ltnH "sport = :$port")" ] || die "port $port is in use; set BENCH_*_PORT"
done

# 1,000 agents and 10,000 idle connections need descriptors: the hard limit, for every
# process started below (gateway, nginx, pgbench, gateway-load).
ulimit -n "$(ulimit -Hn)"
[ "$(ulimit -n)" -gt $((idle_n + 1000)) ] || say "warning: open-file limit $(ulimit -n) is low for $idle_n idle connections"

rm -rf "$logs"
mkdir -p "$logs" "$(dirname -- "$results")"
work=$(mktemp -d /tmp/gateway-bench.XXXXXX)
gateway_pid=
provider_pid=
nginx_pid=
static_pid=
bare_pid=
idle_pid=
neighbour_pid=

# shellcheck source=scripts/lib.sh
source "$repo/scripts/lib.sh"

# shellcheck disable=SC2317 # called by the traps
cleanup() {
  trap - EXIT INT TERM HUP
  if [ -n "$neighbour_pid" ]; then stop_pid "$neighbour_pid" 1; fi
  if [ -n "$idle_pid" ]; then stop_pid "$idle_pid" 5; fi
  if [ -n "$nginx_pid" ]; then stop_pid "$nginx_pid" 5; fi
  if [ -n "$static_pid" ]; then stop_pid "$static_pid" 5; fi
  if [ -n "$bare_pid" ]; then stop_pid "$bare_pid" 5; fi
  if [ -n "$gateway_pid" ]; then stop_pid "$gateway_pid" 30; fi
  if [ -n "$provider_pid" ]; then stop_pid "$provider_pid" 5; fi
  # The server's log outlives its cluster: which statements failed to serialize, and what
  # autovacuum and the checkpoints were doing while a measurement ran.
  if [ -n "${pglog:-}" ] && [ -f "$pglog" ]; then cp "$pglog" "$logs/postgres.log" || true; fi
  scripts/pg.sh destroy "$pgdir" || true
  rm -rf "$work" "$nginxdir" "$staticdir"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
trap 'exit 129' HUP

# --- PostgreSQL: durable defaults (fsync, synchronous_commit, full_page_writes all on) -------
# Room for the minimal SQL's clients (as many as the most agents, and the 100 that time the
# connection cost below), the gateway's pool and its I/O threads' own connections (all held open
# through the minimal SQL's rounds), and psql: cut_round's must get in beside 1,000 clients.
scripts/pg.sh destroy "$pgdir"
pg_clients_max=$((max_level > 100 ? max_level : 100))
PG_EXTRA_OPTS="-c max_connections=$((pg_clients_max + pool + direct * io_threads + 20)) -c log_autovacuum_min_duration=0 -c log_line_prefix='%m [%p] %a: '" \
  scripts/pg.sh start "$pgdir" "$pgport"
pgreal=$(readlink -f "$pgdir")
pglog=$pgreal/postgres.log
GATEWAY_DATABASE_URL=$(scripts/pg.sh url "$pgdir" "$pgport")
export GATEWAY_DATABASE_URL
psql_q() { psql "$GATEWAY_DATABASE_URL" -X -q -At -v ON_ERROR_STOP=1 "$@"; }

# --- The booking provider, the gateway and nginx --------------------------------------------
DEMO_PROVIDER_CREDENTIAL=booking-secret \
  "$bin/demo-provider" --kind booking --port "$provport" --control-port "$ctlport" >"$logs/provider.log" 2>&1 &
provider_pid=$!

# Dev tokens from config/dev.json; everything else is the benchmark's.
config=$work/gateway.json
jq -n --slurpfile dev config/dev.json --argjson gwport "$gwport" --argjson pool "$pool" --argjson direct "$direct" --argjson pipeline "$pipeline" --argjson group "${group:-null}" \
  --argjson io "$io_threads" --argjson access "$([ "$access_log" = 1 ] && echo true || echo false)" --argjson maxconn $((idle_n + max_level + 1000)) --argjson upconns "$provider_conns" \
  --arg provider "http://127.0.0.1:$provport" --arg static "http://127.0.0.1:$staticport" '{
    listen: {address: "127.0.0.1", port: $gwport},
    database: ({url_env: "GATEWAY_DATABASE_URL", pool_size: $pool, direct_connections: $direct, direct_pipeline: $pipeline} + (if $group == null then {} else {group_max: $group} end)),
    http: {io_threads: $io, max_connections: $maxconn},
    log: {access: $access},
    agents: $dev[0].agents,
    operators: $dev[0].operators,
    providers: [{name: "booking", base_url: $provider,
                 credential: {tenants: {"tenant-a": {env: "BOOKING_KEY_TENANT_A"}}},
                 connect_timeout_ms: 1000, request_timeout_ms: 5000, idle_retire_ms: 2000,
                 max_connections: $upconns},
                {name: "static", base_url: $static,
                 credential: {tenants: {"tenant-a": {env: "BOOKING_KEY_TENANT_A"}}},
                 connect_timeout_ms: 1000, request_timeout_ms: 5000, idle_retire_ms: 2000,
                 max_connections: $upconns}]
  }' >"$config"
cp "$config" "$logs/gateway.json"
BOOKING_KEY_TENANT_A=booking-secret "$bin/write-gateway" --config "$config" >"$logs/gateway.log" 2>&1 &
gateway_pid=$!
wait_ready "$gateway_pid" "http://127.0.0.1:$gwport/readyz" 100 0.1 ||
  { tail -n 20 "$logs/gateway.log" >&2; die "the gateway is not ready (log: $logs/gateway.log)"; }
[ -n "$(ss -ltnH "sport = :$provport")" ] || die "the provider is not listening (log: $logs/provider.log)"

# nginx as a plain keep-alive reverse proxy to the same provider, under the same path as the
# gateway's pass-through route, injecting the provider credential as the gateway does. Its
# access log follows the gateway's (on by default there): one line per request to a file, in
# nginx's default (combined) format, as the gateway writes one JSON line per request to its
# stderr, which goes to a file here.
if [ "$access_log" = 1 ]; then
  nginx_access="access_log $nginxdir/access.log;" access_label="access log on"
else
  nginx_access="access_log off;" access_label="access log off"
fi
passthrough_task=bench-passthrough
# The pass-through's upstream (PASSTHROUGH): the gateway's provider route, its port, and what
# the results say of it.
if [ "$passthrough_upstream" = static ]; then
  passthrough_provider=static passthrough_port=$staticport
  passthrough_label="the static nginx (an instance of its own; 200 and a 35-byte JSON body, access log off), issue #30's upstream"
else
  passthrough_provider=booking passthrough_port=$provport
  passthrough_label="the booking demo provider (PASSTHROUGH=booking), booking bk_1"
fi
passthrough_path=/v1/tenants/tenant-a/tasks/$passthrough_task/providers/$passthrough_provider/bookings/bk_1

# What both private nginx servers say first in their http block: temporary files under their
# own directory (the defaults are root's, under /var/lib/nginx) and no cap on the requests a
# keep-alive connection may carry.
nginx_private_http() {
  local kind
  for kind in client_body proxy fastcgi uwsgi scgi; do echo "  ${kind}_temp_path $1/temp/${kind#client_};"; done
  echo "  keepalive_requests 1000000;"
}

# The static upstream "that costs almost nothing" of issue #30's setup, unlogged: the protected
# writes (UPSTREAM=static) get a 201, the pass-through's reads (PASSTHROUGH=static) a 200, each
# with a small JSON body. An nginx of its own: as a server of the proxy's nginx, a worker often
# served both ends of a pass-through, so nginx's upstream hop stayed in one process where every
# other proxy's crossed to another (1 agent: 14.4 thousand replies/s that way against 11.7
# thousand with the upstream apart, docs/performance.md).
rm -rf "$staticdir"
mkdir -p "$staticdir/temp"
cat >"$staticdir/nginx.conf" <<EOF
# Written by bench/run.sh: the static upstream.
daemon off;
worker_processes auto;
worker_rlimit_nofile $((2 * max_level + 2000));
pid $staticdir/nginx.pid;
error_log $staticdir/error.log warn;
events { worker_connections $((2 * max_level + 1000)); }
http {
  access_log off;
$(nginx_private_http "$staticdir")
  server {
    listen 127.0.0.1:$staticport;
    default_type application/json;
    location / {
      if (\$request_method = GET) { return 200 '{"id":"bk_1","status":"confirmed"}\n'; }
      return 201 '{"id":"bk_static","status":"confirmed"}\n';
    }
  }
}
EOF
/usr/sbin/nginx -p "$staticdir" -c "$staticdir/nginx.conf" -e "$staticdir/error.log" >"$logs/static.log" 2>&1 &
static_pid=$!
wait_ready "$static_pid" "http://127.0.0.1:$staticport/healthz" 50 0.1 ||
  { cat "$logs/static.log" "$staticdir/error.log" >&2 || true; die "the static upstream nginx did not start"; }

rm -rf "$nginxdir"
mkdir -p "$nginxdir/temp"
cat >"$nginxdir/nginx.conf" <<EOF
# Written by bench/run.sh: a private nginx for the pass-through baseline.
daemon off;
worker_processes $io_threads;
worker_rlimit_nofile $((idle_n + max_level + 2000));
pid $nginxdir/nginx.pid;
error_log $nginxdir/error.log warn;
events { worker_connections $((idle_n + max_level + 1000)); }
http {
  $nginx_access
$(nginx_private_http "$nginxdir")
  upstream provider {
    server 127.0.0.1:$passthrough_port;
    keepalive 64;
  }
  server {
    listen 127.0.0.1:$nginxport;
    location /healthz { return 200 "ok\n"; }
    location /v1/tenants/tenant-a/tasks/$passthrough_task/providers/$passthrough_provider/ {
      proxy_pass http://provider/;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_set_header Authorization "Bearer booking-secret";
    }
  }
  # The same proxy doing the gateway's forwarding work as well (docs/api.md, "Headers"): a
  # request id to the provider and back to the agent, the trace context, Forwarded. The span id
  # is fixed (nginx has no second random id): the bytes the provider reads are as many.
  server {
    listen 127.0.0.1:$nginxfwdport;
    location /v1/tenants/tenant-a/tasks/$passthrough_task/providers/$passthrough_provider/ {
      proxy_pass http://provider/;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_set_header Authorization "Bearer booking-secret";
      proxy_set_header X-Request-Id \$request_id;
      proxy_set_header traceparent "00-\$request_id-00f067aa0ba902b7-01";
      proxy_set_header Forwarded "for=\$remote_addr;proto=http;host=\\"\$host\\"";
      add_header X-Request-Id \$request_id;
    }
  }
}
EOF
/usr/sbin/nginx -p "$nginxdir" -c "$nginxdir/nginx.conf" -e "$nginxdir/error.log" >"$logs/nginx.log" 2>&1 &
nginx_pid=$!
wait_ready "$nginx_pid" "http://127.0.0.1:$nginxport/healthz" 50 0.1 ||
  { cat "$logs/nginx.log" "$nginxdir/error.log" >&2 || true; die "nginx did not start"; }

# The floor of the gateway's own stack (bench/bare_proxy.cpp): Asio coroutines and Beast's
# parsers forwarding the same GET, with nothing of the gateway's own work. Beside nginx, it says
# how much of the gateway's gap to nginx is the stack and how much is the gateway.
"$bin/bare-proxy" --port "$bareport" --upstream-port "$passthrough_port" --threads "$io_threads" >"$logs/bare-proxy.log" 2>&1 &
bare_pid=$!
for _ in $(seq 50); do [ -z "$(ss -ltnH "sport = :$bareport")" ] || break; sleep 0.1; done
[ -n "$(ss -ltnH "sport = :$bareport")" ] || die "the bare proxy is not listening (log: $logs/bare-proxy.log)"

# The gateway has applied its migrations; the minimal SQL gets its tables and owner rows. No
# history yet: the first measurement is on a fresh database (seed_history, below).
psql_q -v tasks="$seed_tasks" -f bench/minimal_schema.sql
psql_q -c CHECKPOINT
# pgbench's -T counts from before its clients connect, and a new backend costs milliseconds
# (far more on a busy machine): measure it once, so that every pgbench run gets its connection
# time on top of the measured seconds. conn_ms_per_100 = how long 100 clients take to connect.
echo 'SELECT 1;' >"$work/select1.sql"
conn_ms_per_100=$(pgbench -h 127.0.0.1 -p "$pgport" -U postgres -n -c 100 -j 2 -t 1 -f "$work/select1.sql" postgres 2>&1 |
  sed -n 's/^initial connection time = \([0-9]*\).*/\1/p')
conn_ms_per_100=${conn_ms_per_100:-1000}
say "100 PostgreSQL connections take ${conn_ms_per_100} ms"
pm_pid=$(head -n 1 "$pgreal/postmaster.pid")

# --- CPU accounting (what top/pidstat would show, summed over each measurement) ------------
hz=$(getconf CLK_TCK)
# Fork-free (these run twice per measurement, with up to a thousand backends alive):
# ticks PID [all] adds utime+stime of one process (with "all", plus the children it has
# reaped) to $ticks_sum; tree_ticks PID sets $ticks_sum to a parent with its exited children
# plus every live child (postmaster and backends, nginx master and workers).
ticks() {
  local f
  { read -r -a f <"/proc/$1/stat"; } 2>/dev/null || return 0
  if [ "${2:-}" = all ]; then ticks_sum=$((ticks_sum + f[13] + f[14] + f[15] + f[16])); else ticks_sum=$((ticks_sum + f[13] + f[14])); fi
}
tree_ticks() {
  local kids=() child
  ticks_sum=0
  ticks "$1" all
  { read -r -a kids <"/proc/$1/task/$1/children"; } 2>/dev/null || true
  for child in "${kids[@]}"; do ticks "$child"; done
}
ticks_of() { ticks_sum=0; ticks "$1"; echo "$ticks_sum"; }
machine_ticks() { # busy total
  local _ user nice system idle iowait irq softirq steal
  read -r _ user nice system idle iowait irq softirq steal _ </proc/stat
  echo "$((user + nice + system + irq + softirq + steal)) $((user + nice + system + idle + iowait + irq + softirq + steal))"
}
# A measurement's serialization failures and other errors are its own side's: the log prefix
# names each line's client (pgbench; write-gateway and write-gateway-direct), so the other
# side's last scripts of an alternating pair, still ending, are not counted against it.
log_side() { case $1 in *-sql*) echo 'pgbench' ;; *-client*) echo 'careful-client' ;; *) echo 'write-gateway[a-z-]*' ;; esac; }
serialization_failures() { grep -Ec "\] $1: ERROR:  could not serialize access" "$pglog" || true; }
db_errors() { grep -Ec "\] $1: ERROR: " "$pglog" || true; }
rss_kib() { awk '/^VmRSS:/ { print $2 }' "/proc/$1/status"; }
tree_rss_kib() {
  local total child
  total=$(rss_kib "$1")
  for child in $(pgrep -P "$1"); do total=$((total + $(rss_kib "$child"))); done
  echo "$total"
}

# Runs the load command; its CPU (it and its children) lands in $work/client_ticks.
run_client() {
  CLIENT_TICKS=$work/client_ticks bash -c \
    '"$@"; rc=$?; read -r -a f </proc/$$/stat; echo $((f[15] + f[16])) >"$CLIENT_TICKS"; exit $rc' bash "$@"
}

# Operations a protected measurement left unresolved once its load had ended, "A B": the
# gateway's in_flight and unknown operations on that measurement's tasks (their names hold its
# run id; the partial index operations_unresolved covers exactly these states), or the minimal
# SQL's operations still admitted under that run's keys (<run>-<client>-<k>) and "-".
gateway_left() {
  psql_q -F ' ' -c "SELECT count(*) FILTER (WHERE state = 'in_flight'), count(*) FILTER (WHERE state = 'unknown')
                    FROM operations WHERE state IN ('in_flight', 'unknown') AND position('$1' IN task) > 0"
}
minimal_left() {
  echo "$(psql_q -c "SELECT count(*) FROM minimal.operations WHERE state = 'admitted' AND starts_with(op_id, '$1-')") -"
}

# --- Measurements -----------------------------------------------------------------------------
rows=()     # markdown table rows, in order
details=()  # per measurement: what came back
failures=0  # measurements whose client or round watcher failed (reported, the run goes on)
step=0
db_kinds=2  # protected, claim
# Rounds per side of one database comparison (db_pair): $db_rounds up to 64 clients (the issue #30
# targets are at 1 and 64: their ratios must not be one window's drift), else 1.
db_rounds_for() { if [ "$1" -le 64 ]; then echo "$db_rounds"; else echo 1; fi; }
# The pair beside the neighbour: $db_rounds rounds of $duration s each (ABBA). Its p99 is held
# against the quiet one, and one 3 s window of a shared machine moved it by a factor of two
# from run to run (65 and 129 ms in two full runs, 57 to 74 ms in three profile runs).
neighbour_rounds=$db_rounds
db_measurements=0 shared_levels=0 client_measurements=0
for c in "${levels[@]}"; do
  db_measurements=$((db_measurements + 2 * $(db_rounds_for "$c")))
  [ "$(db_rounds_for "$c")" -gt 1 ] || shared_levels=$((shared_levels + 1))
done
for c in "${client_levels[@]}"; do client_measurements=$((client_measurements + 2 * $(db_rounds_for "$c"))); done
# Less the minimal protected rounds that a later pass of names takes from the first (db_pair).
total_steps=$(( ${#name_kinds[@]} * db_kinds * db_measurements - (${#name_kinds[@]} - 1) * shared_levels
  + 2 * $(db_rounds_for "$fresh_clients") + 2 * neighbour_rounds + client_measurements + ${#levels[@]} + 2 + (quick == 0 ? 1 : 0) ))
plotdata=$work/plot
mkdir -p "$plotdata"

# cpu_cols_from "PG GW PROVIDER NGINX LOADGEN BUSY TOTAL SECONDS" (ticks, and the wall seconds
# they were counted over): the CPU columns, % of one core (the machine has $(nproc) cores: 100%
# each); other = the machine's busy ticks no listed process took; idle includes I/O wait.
cpu_cols_from() {
  awk -v hz="$hz" -v n="$(nproc)" -v raw="$1" 'BEGIN {
    split(raw, v, " "); pg = v[1]; gw = v[2]; pv = v[3]; ng = v[4]; cl = v[5]; mb = v[6]; mt = v[7]; w = v[8]
    f = 100 / (hz * w); other = mb - pg - gw - pv - ng - cl; if (other < 0) other = 0
    printf "%.0f | %.0f | %.0f | %.0f | %.0f | %.0f | %.0f", pg * f, gw * f, pv * f, ng * f, cl * f, other * f, (mt > 0 ? (mt - mb) * 100 * n / mt : 0)
  }'
}
# add_raw A B: two such lists added field by field.
add_raw() { awk -v a="$1" -v b="$2" 'BEGIN { split(a, x, " "); split(b, y, " "); for (i = 1; i <= 8; i++) printf "%s%s", (i > 1 ? " " : ""), x[i] + y[i] }'; }
# The CPU of a database round is counted over its measured window only, as the pass-through's is:
# counted over the whole client run, it took in the load generator's start (its claims, 64
# connections) and end, when the machine is mostly idle, and the gateway's rows showed a third of
# a core idle that its steady state never has (0% to 4% by /proc/stat every 0.25 s, 7 December).
# watch_args: gateway-load's --watch for the processes of the CPU columns, sampled by it at the
# edges of its window.
watch_args=()
set_watch_args() {
  watch_args=(--watch "postgres=$pm_pid" --watch "gateway=$gateway_pid" --watch "provider=$provider_pid"
              --watch "static=$static_pid" --watch "nginx=$nginx_pid")
}
set_watch_args
# raw_from_json FILE [PROXY]: cpu_cols_from's list from a gateway-load JSON written with
# watch_args, PROXY's ticks (gateway, or the pass-through's bare) in the proxy's column.
raw_from_json() {
  jq -r --arg proxy "${2:-gateway}" '.cpu_ticks as $t | [$t.postgres, $t[$proxy], $t.provider + $t.static, $t.nginx,
         (.cpu_s * .ticks_per_s | round), .machine_busy_ticks, .machine_total_ticks, .elapsed_s]
         | map(tostring) | join(" ")' "$1"
}
# window_cpu LOADGEN_PID: the same list's counters now (the wall clock in place of seconds;
# LOADGEN_PID may be empty), for a window whose edges the caller picks; window_raw A B [LOADGEN]:
# the list between two such samples, LOADGEN's ticks in place of the load generator's when given.
window_cpu() {
  local pg gw pv ng cl m
  tree_ticks "$pm_pid"; pg=$ticks_sum; tree_ticks "$gateway_pid"; gw=$ticks_sum
  tree_ticks "$provider_pid"; pv=$ticks_sum; tree_ticks "$static_pid"; pv=$((pv + ticks_sum))
  tree_ticks "$nginx_pid"; ng=$ticks_sum
  cl=0; [ -z "$1" ] || cl=$(ticks_of "$1")
  m=$(machine_ticks)
  echo "$pg $gw $pv $ng $cl $m $(date +%s.%N)"
}
window_raw() {
  awk -v a="$1" -v b="$2" -v cl="${3:-}" 'BEGIN {
    split(a, x, " "); split(b, y, " ")
    for (i = 1; i <= 8; i++) printf "%s%s", (i > 1 ? " " : ""), (i == 5 && cl != "" ? cl : i < 8 ? y[i] - x[i] : sprintf("%.3f", y[i] - x[i]))
  }'
}

# measure ID DB|HTTP LABEL -- command...: one measurement, with the CPU, serialization failures
# and database errors around it. Sets last_out, last_rc, cpu_raw, cpu_cols, db_serial,
# db_errors_other.
measure() {
  local id=$1 kind=$2 label=$3
  shift 3
  [ "$1" = -- ] && shift
  step=$((step + 1))
  say "[$step/$total_steps] $label ($(( SECONDS - t0 )) s)"
  # A fresh provider with one booking (bk_1) for the pass-through GETs.
  if [ "$kind" = HTTP ]; then
    curl -sf -X POST "http://127.0.0.1:$ctlport/__test/reset" >/dev/null
    curl -sf -X POST -H 'Authorization: Bearer booking-secret' -H 'Content-Type: application/json' \
      -d '{"slot":"bench-passthrough","customer":"bench"}' "http://127.0.0.1:$provport/bookings" >/dev/null
  fi
  local c0 c1 sf0 er0 sf1 er1
  local side; side=$(log_side "$id")
  c0=$(window_cpu ""); sf0=$(serialization_failures "$side"); er0=$(db_errors "$side")
  last_out=$logs/$id.out
  last_rc=0
  run_client "$@" >"$last_out" 2>&1 || last_rc=$?
  # The careful client's backends end as it exits: their CPU is the postmaster's once they have.
  if [ "$side" = careful-client ]; then
    for _ in $(seq 20); do
      [ "$(psql_q -c "SELECT count(*) FROM pg_stat_activity WHERE application_name = 'careful-client'")" -gt 0 ] || break
      sleep 0.1
    done
  fi
  c1=$(window_cpu ""); sf1=$(serialization_failures "$side"); er1=$(db_errors "$side")
  if [ "$last_rc" -ne 0 ]; then
    failures=$((failures + 1))
    say "$id: the client exited with $last_rc (output: $last_out)"
    tail -n 5 "$last_out" >&2
  fi
  # The client's CPU is what run_client's shell counted for it once it had exited.
  cpu_raw=$(window_raw "$c0" "$c1" "$(cat "$work/client_ticks" 2>/dev/null || echo 0)")
  cpu_cols=$(cpu_cols_from "$cpu_raw")
  db_serial=$((sf1 - sf0))
  db_errors_other=$((er1 - er0 - db_serial))
}

# The measured window of one pgbench run's per-transaction logs: pgbench runs the round's
# seconds plus WARMUP, plus 1.25 times the time its clients take to connect and one more per 250
# clients (every new backend loads its catalog caches and prepares its statements first: at
# 1,000 clients that takes seconds; the gateway's pool is warm, and gateway-load does not count
# its first WARMUP seconds either), and only the script runs that completed in the last D
# seconds count. pgbench_window D LATENCIES FILES...: appends the latency (µs, retries
# included) of each successful run in the window to LATENCIES and prints "ok failed retries
# span", span being how long the window's completions span (less than D when almost nothing
# completes). Log line: client tx time script epoch us [retries]; time is
# "failed"/"serialization"/"deadlock" for a run that failed every try.
pgbench_window() {
  local d=$1 lat=$2
  shift 2
  cat "$@" | awk -v d="$d" -v lat="$lat" '
    { t[NR] = $5 + $6 / 1e6; l[NR] = $3; r[NR] = (NF >= 7 ? $NF : 0); if (t[NR] > end) end = t[NR] }
    END {
      for (i = 1; i <= NR; i++) {
        if (t[i] <= end - d) continue
        retries += r[i]
        if (l[i] ~ /^[0-9]+$/) { ok++; print l[i] >>lat; if (first == 0 || t[i] < first) first = t[i] } else failed++
      }
      print ok + 0, failed + 0, retries + 0, (ok > 0 ? end - first : 0)
    }'
}

# percentiles LATENCIES: "p50 p90 p99 p99.9" in ms of a file of µs, one per line ("- - - -" if empty).
percentiles() {
  sort -n "$1" | awk '{ v[++n] = $1 } END {
    split("0.50 0.90 0.99 0.999", p, " ")
    for (i = 1; i <= 4; i++) {
      if (n == 0) { printf "%s-", (i > 1 ? " " : ""); continue }
      k = int(p[i] * n); if (k < p[i] * n) k++; if (k < 1) k = 1
      printf "%s%.2f", (i > 1 ? " " : ""), v[k] / 1000
    }
    print ""
  }'
}

# plot_point SERIES CONCURRENCY OK_PER_S P99_MS
plot_point() { echo "$2 $3 $4" >>"$plotdata/$1.dat"; }

# The database-bound work, gateway against minimal SQL, in rounds: ABBA for $db_rounds = 2 (gateway,
# minimal, minimal, gateway), each side's figures over all its rounds. One after the other, the two
# would each get whatever the machine did in its own seconds: this machine's commit latency
# (fsync) moved by a factor of two within minutes. From 256 agents up it is one round each: the
# full run must stay under 10 minutes (a pgbench run at 1,000 clients costs 20 s of connecting).
# Per side, summed over its rounds: acc_ok, acc_window (seconds), acc_raw (CPU ticks for
# cpu_cols_from), acc_serial, acc_left ("A B" of gateway_left/minimal_left, or "-" for claims),
# acc_notes, and the latencies in $work/ID.lat.
declare -A acc_ok acc_window acc_raw acc_serial acc_left acc_notes
# Completions of each round (by round id), and each pair's ratio round by round (by the
# gateway's row id): how far the machine moved within one comparison.
declare -A round_ok pair_rounds
acc_reset() {
  acc_ok[$1]=0 acc_window[$1]=0 acc_raw[$1]="0 0 0 0 0 0 0 0" acc_serial[$1]=0 acc_left[$1]=- acc_notes[$1]=
  : >"$work/$1.lat"
  rm -f "$work/$1"-r*.json
}
acc_add() { # ID OK WINDOW_S [LEFT]: after a measure; LEFT "A B" for a protected one
  acc_ok[$1]=$((acc_ok[$1] + $2))
  acc_window[$1]=$(awk -v a="${acc_window[$1]}" -v b="$3" 'BEGIN { print a + b }')
  acc_raw[$1]=$(add_raw "${acc_raw[$1]}" "$cpu_raw")
  acc_serial[$1]=$((acc_serial[$1] + db_serial))
  [ -z "${4:-}" ] || acc_left[$1]=$(add_left "${acc_left[$1]}" "$4")
}
add_left() { # "A B" + "A B", where "-" is nothing yet (first operand) or not counted (B)
  [ "$1" = - ] && { echo "$2"; return; }
  awk -v a="$1" -v b="$2" 'BEGIN { split(a, x, " "); split(b, y, " "); print x[1] + y[1], (y[2] == "-" ? "-" : x[2] + y[2]) }'
}

# gw_round ID ROUND SECONDS LABEL KIND gateway-load-args...: one round of the gateway's side.
gw_round() {
  local id=$1 r=$2 secs=$3 label=$4 kind=$5
  shift 5
  local rid=$id-r$r left=
  # The gateway's pool is warm after the first round; agents only reconnect and claim.
  measure "$rid" DB "$label, round $r" -- "$bin/gateway-load" --threads "$load_threads" --duration "$secs" \
    --warmup "$([ "$r" -eq 1 ] && echo "$warmup" || echo 0.5)" --run-id "$rid" --json "$work/$rid.json" \
    --latencies "$work/$rid.lat" "${watch_args[@]}" "$@"
  window_cpu_from_json "$work/$rid.json"
  [ "$kind" != protected ] || left=$(gateway_left "$rid")
  keep_round "$id" "$r" "$secs" "$label" "$left"
}

# window_cpu_from_json FILE: cpu_raw over the window of the gateway-load run that wrote FILE
# (left as measure() counted it when the run failed).
window_cpu_from_json() {
  local raw
  [ "$last_rc" -eq 0 ] && [ -s "$1" ] && raw=$(raw_from_json "$1") && [ -n "$raw" ] || return 0
  cpu_raw=$raw
  cpu_cols=$(cpu_cols_from "$cpu_raw")
}

# keep_round ID ROUND SECONDS LABEL LEFT [JQ]: a gateway-load round's figures added to ID's (none,
# and why, when it failed), JQ's text from its JSON added to ID's notes, its output to the details.
keep_round() {
  local id=$1 r=$2 secs=$3 label=$4 left=$5 note=${6:-} rid=$1-r$2
  if [ "$last_rc" -eq 0 ] && [ -s "$work/$rid.json" ]; then
    cat "$work/$rid.lat" >>"$work/$id.lat"
    round_ok[$rid]=$(jq -r .ok "$work/$rid.json")
    acc_add "$id" "${round_ok[$rid]}" "$secs" "$left"
    [ -z "$note" ] || acc_notes[$id]+="; round $r: $(jq -r "$note" "$work/$rid.json")"
  else
    round_ok[$rid]=0
    acc_add "$id" 0 "$secs" "$left"
    acc_notes[$id]+="; round $r: gateway-load exited $last_rc: $(tail -n 1 "$last_out" | tr '|' '/')"
  fi
  details+=("### $rid: $label, round $r" "" '```' "$(cat "$last_out")" "other database errors in the log: $db_errors_other" '```' "")
}

# cut_round CLIENTS LIMIT SECONDS ROUND: run beside one pgbench round (ROUND: its id); prints how many of its scripts it
# ended. pgbench -T counts from before its clients connect (PostgreSQL 15), so the limit carries
# an allowance for connecting, estimated from conn_ms_per_100. Once all clients are connected and
# the warm-up and the measured seconds have passed (2 s of grace), the round is cut short when more
# than half of the clients have had their transaction open for longer than the measured seconds:
# they are queueing, the window's figures are in, and the allowance would only add queue.
# Otherwise pgbench ends as -T says, and whatever is still open 2 s past the limit is ended.
cut_round() {
  local n=$1 limit=$2 secs=$3 rid=$4 start connected_at='' backends="application_name = 'pgbench' AND datname = 'postgres'"
  start=$(date +%s.%N)
  since_start() { awk -v s="$start" -v n="$(date +%s.%N)" 'BEGIN { print n - s }'; }
  sleep_until() { sleep "$(awk -v t="$1" -v e="$(since_start)" 'BEGIN { d = t - e; print (d > 0 ? d : 0) }')"; }
  end_scripts() { echo "$(psql_q -c "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE $backends") $1"; }
  while awk -v e="$(since_start)" -v l="$limit" 'BEGIN { exit !(e < l) }'; do
    if [ "$(psql_q -c "SELECT count(*) FROM pg_stat_activity WHERE $backends")" -ge "$n" ]; then
      connected_at=$(since_start)
      break
    fi
    sleep 0.25
  done
  if [ -n "$connected_at" ]; then
    # The CPU columns' window: from the warm-up's end, the round's seconds (window_cpu), with
    # pgbench's own CPU; written to $work/cpu-ROUND for sql_round.
    local pgbench_pid c0 c1
    pgbench_pid=$(pgrep -x -n pgbench || true)
    sleep_until "$(awk -v c="$connected_at" -v w="$warmup" 'BEGIN { print c + w }')"
    c0=$(window_cpu "$pgbench_pid")
    sleep_until "$(awk -v c="$connected_at" -v w="$warmup" -v s="$secs" 'BEGIN { print c + w + s }')"
    c1=$(window_cpu "$pgbench_pid")
    window_raw "$c0" "$c1" >"$work/cpu-$rid"
    # The clients start together once the last has connected: a transaction open longer than
    # the window itself, at its end, is one that took all of it waiting (seconds may be
    # fractional: 1.5 for two rounds of 3).
    sleep_until "$(awk -v c="$connected_at" -v w="$warmup" -v s="$secs" 'BEGIN { print c + w + s + 2 }')"
    if [ "$(psql_q -c "SELECT count(*) FROM pg_stat_activity WHERE $backends
          AND xact_start < now() - interval '$secs seconds'")" -gt $((n / 2)) ]; then
      end_scripts queued
      return
    fi
  fi
  sleep_until "$(awk -v l="$limit" 'BEGIN { print l + 2 }')"
  end_scripts late
}

# sql_round ID ROUND SECONDS LABEL KIND CLIENTS NAMES: one round of the minimal SQL's side.
sql_round() {
  local id=$1 r=$2 secs=$3 label=$4 kind=$5 n=$6 names=$7 random=0 threads=2
  local rid=$id-r$r
  [ "$names" = random ] && random=1
  [ "$n" -ge 2 ] || threads=1
  rm -f "$work/$rid".*
  local limit  # pgbench -T takes whole seconds
  limit=$(awk -v s="$secs" -v w="$warmup" -v n="$n" -v c="$conn_ms_per_100" \
    'BEGIN { l = s + w + int(n / 250) + 1 + int(5 * n * c / 400000); print (l == int(l) ? l : int(l) + 1) }')
  # pgbench -T starts no script after `limit` seconds, but then waits for every open one: at
  # 1,000 clients SERIALIZABLE scripts queue for a minute, long after the measured window.
  # cut_round ends them (pg_terminate_backend) and the row says how many. They are past the
  # measured window whenever they end, so waiting for them would only cost the full run.
  rm -f "$work/cut-$rid" "$work/cpu-$rid"
  (cut_round "$n" "$limit" "$secs" "$rid" >"$work/cut-$rid") 2>"$logs/$rid.cut.err" &
  local cutter=$!
  # The scripts name their isolation level: SERIALIZABLE where the baseline needs it.
  measure "$rid" DB "$label, round $r" -- \
    env PGOPTIONS='-c search_path=minimal' \
    pgbench -h 127.0.0.1 -p "$pgport" -U postgres -n -M prepared -c "$n" -j "$threads" \
    -T "$limit" \
    --max-tries="$max_tries" --failures-detailed -D run="$rid" -D random="$random" -D k=0 -D clients="$n" \
    -D tasks="$seed_tasks" -l --log-prefix="$work/$rid" -f "bench/minimal_$kind.sql" postgres
  kill "$cutter" 2>/dev/null || true
  wait "$cutter" 2>/dev/null || true
  # A watcher that failed (its CPU window and any cut lost) is counted as a failed measurement.
  if [ -s "$logs/$rid.cut.err" ]; then
    failures=$((failures + 1))
    say "$rid: the round's watcher failed (log: $logs/$rid.cut.err)"
  fi
  # The window's CPU when the cutter saw it through; else measure()'s, over the whole run.
  if [ -s "$work/cpu-$rid" ]; then
    cpu_raw=$(cat "$work/cpu-$rid")
    cpu_cols=$(cpu_cols_from "$cpu_raw")
  fi
  local cut=0 cut_why='' ok failed retried span left=''
  [ ! -s "$work/cut-$rid" ] || read -r cut cut_why <"$work/cut-$rid"
  [ "$kind" != protected ] || left=$(minimal_left "$rid")
  read -r ok failed retried span < <(pgbench_window "$secs" "$work/$id.lat" "$work/$rid".[0-9]* 2>/dev/null || echo "0 ? ? 0")
  round_ok[$rid]=$ok
  acc_add "$id" "$ok" "$secs" "$left"
  local notes="round $r: $failed failed after $max_tries tries, $retried retries"
  awk -v s="$span" -v d="$secs" 'BEGIN { exit !(s < d - 0.5) }' && notes+=", its completions span only $span s of $secs"
  local aborted
  # Each client ended by the cut above aborts too; those are counted there, not here.
  aborted=$(grep -c 'aborted in command' "$last_out" || true)
  aborted=$((aborted > cut ? aborted - cut : 0))
  [ "$aborted" -eq 0 ] ||
    notes+=", $aborted clients aborted ($( (grep -m1 -o 'ERROR: .*' "$last_out" || true) | tr '|' '/'))"
  if [ "$cut" -gt 0 ] && [ "$cut_why" = queued ]; then
    notes+=", $cut scripts ended $((warmup + secs + 2)) s after all clients had connected, most of them open for more than $secs s"
  elif [ "$cut" -gt 0 ]; then
    notes+=", $cut scripts still open 2 s after the run's end were ended"
  elif [ "$last_rc" -ne 0 ]; then
    notes+=", pgbench exited $last_rc"
  fi
  acc_notes[$id]+="; $notes"
  details+=("### $rid: $label, round $r" "" "pgbench's own summary (the whole run, warm-up included, connection time excluded):" ""
            '```' "$(awk '/^(number of|latency|tps|maximum number of tries|total number|initial connection|pgbench: error)/ && n++ < 20' "$last_out")"
            "other database errors in the log: $db_errors_other" '```' "")
}

# client_round ID ROUND SECONDS LABEL CLIENTS: one round of "nginx plus a careful client library
# on PostgreSQL": gateway-load's client mode, each agent on a PostgreSQL connection of its own
# (application_name careful-client, for the log's serialization failures) running the minimal
# SQL's statements, the booking POSTed through the proxy nginx; the minimal SQL's owner rows.
client_round() {
  local id=$1 r=$2 secs=$3 label=$4 n=$5
  local rid=$id-r$r
  measure "$rid" DB "$label, round $r" -- "$bin/gateway-load" --mode client --threads "$load_threads" --clients "$n" \
    --duration "$secs" --warmup "$([ "$r" -eq 1 ] && echo "$warmup" || echo 0.5)" --run-id "$rid" \
    --json "$work/$rid.json" --latencies "$work/$rid.lat" --tasks "$seed_tasks" --max-tries "$max_tries" \
    --pg "host=127.0.0.1 port=$pgport user=postgres dbname=postgres application_name=careful-client options='-c search_path=minimal'" \
    --url "http://127.0.0.1:$nginxport/v1/tenants/tenant-a/tasks/$passthrough_task/providers/$passthrough_provider/bookings" \
    "${watch_args[@]}"
  window_cpu_from_json "$work/$rid.json"
  keep_round "$id" "$r" "$secs" "$label" "$(minimal_left "$rid")" '"\(.serialization_retries) transactions run again"'
}

# client_pair CLIENTS: protected writes on the seeded database, the gateway (random names)
# against the careful client (a random task of the minimal SQL's), in ABBA rounds as db_pair's.
# Both forward to the same static upstream; the client's requests go through nginx, with its
# access log as the gateway's.
client_pair() {
  local c=$1 rounds secs r first side
  local gid=P-cl-$c-gw cid=P-cl-$c-client
  local glabel="protected random $c agents: gateway (the pair with the careful client)"
  local clabel="protected $c agents: nginx plus a careful client library (the minimal SQL from each agent, the booking through nginx), a random task of $seed_tasks"
  rounds=$(db_rounds_for "$c")
  secs=$(awk -v d="$duration" -v r="$rounds" 'BEGIN { print d / r }')
  acc_reset "$gid"
  acc_reset "$cid"
  for ((r = 1; r <= rounds; r++)); do
    first=gw
    [ $((r % 2)) -eq 0 ] && first=client
    for side in $first $([ "$first" = gw ] && echo client || echo gw); do
      if [ "$side" = gw ]; then
        gw_round "$gid" "$r" "$secs" "$glabel" protected --mode protected --names random --port "$gwport" --clients "$c" \
          --provider "$upstream"
      else
        client_round "$cid" "$r" "$secs" "$clabel" "$c"
      fi
    done
  done
  db_row "$gid" "$glabel" "$c" seeded "" gw
  db_row "$cid" "$clabel" "$c" seeded "" gw
  round_ratios "$gid" "$cid" "$rounds"
}

# share_round FROM TO: side TO's figures are side FROM's, the same script measured earlier in the
# run (see db_pair); the row says so.
declare -A shared_sql
share_round() {
  local from=$1 to=$2
  acc_ok[$to]=${acc_ok[$from]} acc_window[$to]=${acc_window[$from]} acc_raw[$to]=${acc_raw[$from]}
  acc_serial[$to]=${acc_serial[$from]} acc_left[$to]=${acc_left[$from]}
  acc_notes[$to]="; the measurement of $from (the same script: it takes no names)${acc_notes[$from]}"
  cp "$work/$from.lat" "$work/$to.lat"
  round_ok[$to-r1]=${round_ok[$from-r1]:-0}
}

# db_row ID LABEL CLIENTS DATABASE SERIES gw|sql: the table row (and, with a SERIES, the plot
# point) of one side.
db_row() {
  local id=$1 label=$2 n=$3 db=$4 series=$5 side=$6 rate pcts errs p99 left
  rate=$(awk -v ok="${acc_ok[$id]}" -v w="${acc_window[$id]}" 'BEGIN { printf "%.0f", (w > 0 ? ok / w : 0) }')
  pcts=$(percentiles "$work/$id.lat")
  if [ "$side" = gw ]; then
    errs=$(cat "$work/$id"-r*.json 2>/dev/null | jq -rs '
      (reduce (.[] | .not_ok | to_entries[]) as $e ({}; .[$e.key] += $e.value)) as $n
      | (reduce (.[] | .setup_refusals | to_entries[]) as $e ({}; .[$e.key] += $e.value)) as $s
      | [$n | to_entries[] | "\(.value)× \(.key)"] + [$s | to_entries[] | "setup: \(.value)× \(.key)"]
      | if length == 0 then "0" else join(", ") end' | tr '|' '/')
    errs="${errs:-0}${acc_notes[$id]}"
  else
    errs=${acc_notes[$id]#; }
  fi
  left=${acc_left[$id]}
  case $left in -) ;; *' -') left=${left% -} ;; *) left=${left/ / \/ } ;; esac
  rows+=("| $id | $label | $n | $db | $rate | ${pcts// / | } | $errs | ${acc_serial[$id]} | $left | $(cpu_cols_from "${acc_raw[$id]}") |")
  p99=$(echo "$pcts" | cut -d' ' -f3)
  [ -z "$series" ] || plot_point "$series" "$n" "$rate" "$p99"
}

# db_pair KIND NAMES CLIENTS [fresh|neighbour]: the gateway and the minimal SQL for one kind of
# work (protected or claim), in ABBA rounds (one round each from 256 clients up). Untagged, it is
# a point of the sweep on the seeded database (plotted); "fresh" is the pair before any history
# exists, "neighbour" the pair beside the CPU-burning process (table rows only).
db_pair() {
  local kind=$1 names=$2 c=$3 tag=${4:-} s rounds secs r first
  s=$(short "$names")
  local P=P db=seeded where='' suffix='' series_gw='' series_sql=''
  [ "$kind" = claim ] && P=C
  case $tag in
    fresh) db=fresh suffix=-fresh where=', fresh database' ;;
    neighbour) suffix=-neighbour where=', beside a CPU-burning neighbour' ;;
    *) series_gw=$kind-$s-gateway series_sql=$kind-$s-minimal ;;
  esac
  local gid=$P-$s-$c-gw$suffix sid=$P-$s-$c-sql$suffix
  local glabel="$kind $names $c agents$where: gateway" slabel="$kind $names $c clients$where: minimal SQL"
  # The minimal protected mutation picks one of its $seed_tasks owner rows at random: the
  # names apply to the gateway's tasks and to the minimal claims only.
  [ "$kind" = claim ] || slabel="$kind $c clients$where: minimal SQL, a random task of $seed_tasks"
  rounds=$(db_rounds_for "$c")
  secs=$(awk -v d="$duration" -v r="$rounds" 'BEGIN { print d / r }')
  if [ "$tag" = neighbour ]; then rounds=$neighbour_rounds secs=$duration; fi
  acc_reset "$gid"
  acc_reset "$sid"
  # The minimal protected script takes no names, so a later pass of names would run the very
  # same script again. Where a level has one round per side (no ABBA pairing to keep), that pass
  # takes the first pass's measurement: at 1,000 clients a pgbench round is some 37 s of
  # connecting and ending backends on this host, for a figure already in the table.
  local shared=''
  if [ "$kind" = protected ] && [ -z "$tag" ] && [ "$rounds" -eq 1 ]; then
    shared=${shared_sql[$c]:-}
    [ -n "$shared" ] || shared_sql[$c]=$sid
  fi
  for ((r = 1; r <= rounds; r++)); do
    first=gw
    [ $((r % 2)) -eq 0 ] && first=sql
    for side in $first $([ "$first" = gw ] && echo sql || echo gw); do
      if [ "$side" = sql ] && [ -n "$shared" ]; then
        share_round "$shared" "$sid"
      elif [ "$side" = gw ]; then
        gw_round "$gid" "$r" "$secs" "$glabel" "$kind" --mode "$kind" --names "$names" --port "$gwport" --clients "$c" \
          --provider "$upstream"
      else
        sql_round "$sid" "$r" "$secs" "$slabel" "$kind" "$c" "$names"
      fi
    done
  done
  db_row "$gid" "$glabel" "$c" "$db" "$series_gw" gw
  db_row "$sid" "$slabel" "$c" "$db" "$series_sql" sql
  round_ratios "$gid" "$sid" "$rounds"
}

# round_ratios GATEWAY BASELINE ROUNDS: each round's sides ran the same seconds back to back, so
# their ratio is that round's; kept (pair_rounds) for the summary when the pair ran in rounds.
round_ratios() {
  local gid=$1 bid=$2 rounds=$3 r
  [ "$rounds" -gt 1 ] || return 0
  pair_rounds[$gid]=$(for ((r = 1; r <= rounds; r++)); do echo "${round_ok[$gid-r$r]:-0} ${round_ok[$bid-r$r]:-0}"; done |
    awk '{ printf "%s%s", (NR > 1 ? " " : ""), ($2 > 0 ? sprintf("%.2f", $1 / $2) : "-") }')
}

# load_phase ID KIND LABEL SERIES gateway-load-args...
load_phase() {
  local id=$1 kind=$2 label=$3 series=$4
  shift 4
  local n
  n=$(echo "$*" | sed -n 's/.*--clients \([0-9]*\).*/\1/p')
  measure "$id" "$kind" "$label" -- "$bin/gateway-load" --threads "$load_threads" --duration "$duration" --warmup "$warmup" \
    --run-id "$id" --json "$work/$id.json" "${watch_args[@]}" "$@"
  window_cpu_from_json "$work/$id.json"
  load_row "$id" "$label" "$n" "$series" "$work/$id.json"
  details+=("### $id: $label" "" '```' "$(cat "$last_out")" "other database errors in the log: $db_errors_other" '```' "")
}

# load_row ID LABEL N SERIES JSON: the table row (and plot point) of one gateway-load result of
# HTTP work (no database column, nothing left unresolved), with the CPU columns in $cpu_cols and
# the serialization failures of $db_serial.
load_row() {
  local id=$1 label=$2 n=$3 series=$4 j=$5
  if [ "$last_rc" -ne 0 ] || [ ! -s "$j" ]; then
    rows+=("| $id | $label | $n | - | - | - | - | - | - | gateway-load exited $last_rc: $(tail -n 1 "$last_out" | tr '|' '/') | $db_serial | - | $cpu_cols |")
  else
    local errs
    errs=$(jq -r '[.not_ok | to_entries[] | "\(.value)× \(.key)"] + [.setup_refusals | to_entries[] | "setup: \(.value)× \(.key)"] | if length == 0 then "0" else join(", ") end' "$j" | tr '|' '/')
    rows+=("| $id | $label | $n | - | $(jq -r '.ok_per_s | round' "$j") | $(jq -r '[.p50_ms, .p90_ms, .p99_ms, .p999_ms] | map(. * 100 | round / 100 | tostring) | join(" | ")' "$j") | $errs | $db_serial | - | $cpu_cols |")
    plot_point "$series" "$n" "$(jq -r '.ok_per_s | round' "$j")" "$(jq -r '.p99_ms' "$j")"
  fi
}

# alternate_phase N: the GET pass-through at N agents through the gateway, through nginx, through
# the bare proxy and to the provider directly, in one gateway-load run that loads each in turn,
# $rounds rounds each (bench/load.cpp, --alternate). Run one after the other, they would each get
# whatever the machine was doing in their seconds: drift of 20% or more on a shared machine,
# which is the size of the difference being measured. Each row's CPU columns cover its own
# rounds only; the bare proxy's CPU is in its rows' gateway column.
alternate_phase() {
  local c=$1 id=G-$1
  local sides=(gw nginx nginxfwd bare)
  local labels=("GET pass-through $c agents: gateway, $access_label" "GET pass-through $c agents: nginx, $access_label"
                "GET pass-through $c agents: nginx adding the gateway's forwarded headers, $access_label"
                "GET pass-through $c agents: the bare proxy (the stack alone, no log)")
  local series=(passthrough-gateway passthrough-nginx passthrough-nginxfwd passthrough-bare)
  local what="gateway, nginx, nginx with the gateway's headers and the bare proxy"
  local provider_side=()
  # The provider alone at 8 agents only: what this host serves that day, to compare runs by
  # (3.7 s a level, which it would take from the 10 minutes at every level).
  if [ "$c" = 8 ]; then
    sides+=(provider) labels+=("GET $c agents: the provider directly") series+=(passthrough-provider)
    provider_side=(--alternate "provider,http://127.0.0.1:$passthrough_port/bookings/bk_1,booking-secret")
    what="gateway, nginx, nginx with the gateway's headers, the bare proxy and the provider directly"
  fi
  measure "$id" HTTP "GET pass-through $c agents: $what, alternating" -- \
    "$bin/gateway-load" --mode get --threads "$load_threads" --clients "$c" \
    --duration "$duration" --warmup "$passthrough_warmup" --rounds "$rounds" --json "$work/$id.json" \
    --alternate "gw,http://127.0.0.1:$gwport$passthrough_path,dev-agent-token-a" \
    --alternate "nginx,http://127.0.0.1:$nginxport$passthrough_path,dev-agent-token-a" \
    --alternate "nginxfwd,http://127.0.0.1:$nginxfwdport$passthrough_path,dev-agent-token-a" \
    --alternate "bare,http://127.0.0.1:$bareport$passthrough_path,dev-agent-token-a" \
    "${provider_side[@]}" "${watch_args[@]}" --watch "bare=$bare_pid"
  local i side j
  for i in "${!sides[@]}"; do
    side=${sides[$i]} j=$work/$id-${sides[$i]}.json
    if [ "$last_rc" -eq 0 ] && [ -s "$work/$id.json" ]; then
      jq ".sides[\"$side\"]" "$work/$id.json" >"$j"
      # The proxy not measured in this side's rounds (next to idle) counts as "other".
      cpu_cols=$(cpu_cols_from "$(raw_from_json "$j" "$([ "$side" = bare ] && echo bare || echo gateway)")")
    else
      : >"$j"
    fi
    load_row "$id-$side" "${labels[$i]}" "$c" "${series[$i]}" "$j"
  done
  details+=("### ${sides[*]/#/$id-}: GET pass-through $c agents, alternating" "" '```' "$(cat "$last_out")" '```' "")
}

loadavg_before=$(cut -d' ' -f1-3 /proc/loadavg)

short() { [ "$1" = sequential ] && echo seq || echo rnd; }
# First, as a new deployment starts: the gateway's tables hold only what its migrations made
# and what the load claims; the minimal SQL's, its owner rows and no operation.
db_pair protected sequential "$fresh_clients" fresh

# Then the history every later measurement runs on, for both sides.
seed_t0=$SECONDS
say "seeding $seed_tasks tasks x $seed_ops operations for the gateway and for the minimal SQL"
psql_q -v tasks="$seed_tasks" -v ops="$seed_ops" -f bench/pgbench_seed.sql
psql_q -v tasks="$seed_tasks" -v ops="$seed_ops" -f bench/minimal_seed.sql
# Then as a running database would be: vacuumed and analysed (autovacuum, on by default, keeps
# it so during the run), with no checkpoint pending.
psql_q -c 'VACUUM ANALYZE'
psql_q -c CHECKPOINT
seed_s=$((SECONDS - seed_t0))

for names in "${name_kinds[@]}"; do
  for kind in protected claim; do
    for c in "${levels[@]}"; do
      db_pair "$kind" "$names" "$c"
    done
  done
done

# What an engineer would build instead of the gateway, the provider hop included.
for c in "${client_levels[@]}"; do client_pair "$c"; done

# A neighbour that burns one core for the whole pair, as another tenant of a shared machine
# would: both sides lose the same CPU, and the CPU columns show it as "other".
(while :; do :; done) &
neighbour_pid=$!
db_pair protected sequential "$neighbour_clients" neighbour
stop_pid "$neighbour_pid" 1
neighbour_pid=
# The pass-through touches no database. What PostgreSQL still owes the writes above (a
# checkpoint, autovacuum's workers) is let finish first, at most 20 s: in the run of 5646fc1 it
# took a fifth of a core during the 1-agent rounds of the gateway and nginx, and none in the others.
psql_q -c CHECKPOINT
for _ in $(seq 40); do
  [ "$(psql_q -c "SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'autovacuum worker'")" = 0 ] && break
  sleep 0.5
done
for c in "${levels[@]}"; do
  alternate_phase "$c"
done
if [ "$quick" = 0 ]; then
  load_phase "D-64-provider" HTTP "booking POST 64 agents: the provider directly (the upstream's own cost)" direct \
    --mode direct --port "$provport" --clients 64
fi

# --- Idle keep-alive connections: memory per connection --------------------------------------
# idle_memory ID LABEL PID URL: opens $idle_n connections (one GET each), reads the server's RSS
# (with its children) while they are held, then lets them go.
idle_rows=()
idle_memory() {
  local id=$1 label=$2 pid=$3 url=$4 before after opened still
  step=$((step + 1))
  say "[$step/$total_steps] $label: $idle_n idle connections ($(( SECONDS - t0 )) s)"
  before=$(tree_rss_kib "$pid")
  "$bin/gateway-load" --mode idle --url "$url" --clients "$idle_n" --duration 120 --timeout-ms 20000 \
    --json "$work/$id.json" >"$logs/$id.out" 2>&1 &
  idle_pid=$!
  for _ in $(seq 1 600); do
    grep -q '^idle: .* open' "$logs/$id.out" && break
    kill -0 "$idle_pid" 2>/dev/null || break
    sleep 0.1
  done
  after=$(tree_rss_kib "$pid")
  kill -TERM "$idle_pid" 2>/dev/null || true
  wait "$idle_pid" || true
  idle_pid=
  opened=$(jq -r '.opened // 0' "$work/$id.json" 2>/dev/null || echo 0)
  still=$(jq -r '.still_open // 0' "$work/$id.json" 2>/dev/null || echo 0)
  idle_rows+=("| $label | $opened of $idle_n | $still | $((before / 1024)) | $((after / 1024)) | $(awk -v a="$after" -v b="$before" -v n="$opened" 'BEGIN { if (n > 0) printf "%.1f", (a - b) / n; else print "-" }') |")
  details+=("### $id: $label, $idle_n idle connections" "" '```' "$(cat "$logs/$id.out")" '```' "")
}
idle_memory I-gw "gateway (GET /healthz, then idle)" "$gateway_pid" "http://127.0.0.1:$gwport/healthz"
idle_memory I-nginx "nginx, $io_threads workers (GET /healthz, then idle)" "$nginx_pid" "http://127.0.0.1:$nginxport/healthz"

# --- The plot -------------------------------------------------------------------------------
plot_ok=no
{
  echo "set terminal pngcairo size 1400,1500 font ',10'"
  echo "set output '$plot'"
  echo "set multiplot layout 3,2 title 'bench/run.sh $( [ "$quick" = 1 ] && echo '--quick ')($started_at, $(nproc) cores, shared by load generator, gateway, provider, PostgreSQL, nginx)'"
  echo "set logscale x 2; set grid; set key top left; set xlabel 'agents (clients)'; set xrange [0.7:$max_level * 1.4]"
  echo "set xtics (${levels[*]/%/,})" | sed 's/,)/)/; s/ *, */, /g'
  panel() { # title ylabel logy series:label...
    local title=$1 ylabel=$2 col=$3 sep=''
    shift 3
    echo "set title '$title'; set ylabel '$ylabel'"
    if [ "$col" = 3 ]; then echo "set logscale y"; else echo "unset logscale y"; echo "set yrange [0:*]"; fi
    printf 'plot '
    for pair in "$@"; do
      local datafile=$plotdata/${pair%%:*}.dat
      [ -s "$datafile" ] || continue
      printf "%s'%s' using 1:%s with linespoints lw 2 title '%s'" "$sep" "$datafile" "$col" "${pair#*:}"
      sep=', '
    done
    echo
  }
  for kind in protected claim; do
    # The minimal protected mutation picks a random owner row in either pass: its two lines are
    # the same script, measured beside the gateway's sequential and random names.
    if [ "$kind" = protected ]; then
      seq_minimal='minimal SQL, beside sequential' rnd_minimal='minimal SQL, beside random'
    else
      seq_minimal='minimal SQL, sequential names' rnd_minimal='minimal SQL, random names'
    fi
    for col in 2 3; do
      [ "$col" = 2 ] && y='successful requests/s' || y='p99 latency, ms (log)'
      panel "$kind: $([ "$col" = 2 ] && echo throughput || echo p99)" "$y" "$col" \
        "$kind-seq-gateway:gateway, sequential names" "$kind-seq-minimal:$seq_minimal" \
        "$kind-rnd-gateway:gateway, random names" "$kind-rnd-minimal:$rnd_minimal"
    done
  done
  for col in 2 3; do
    [ "$col" = 2 ] && y='successful requests/s' || y='p99 latency, ms (log)'
    panel "GET pass-through: $([ "$col" = 2 ] && echo throughput || echo p99)" "$y" "$col" \
      "passthrough-gateway:gateway" "passthrough-nginx:nginx (keep-alive proxy)" \
      "passthrough-nginxfwd:nginx adding the gateway headers" "passthrough-bare:bare proxy (the stack alone)" \
      "passthrough-provider:provider directly"
  done
  echo "unset multiplot"
} >"$work/plot.gp"
cp "$work/plot.gp" "$logs/plot.gp"
if gnuplot "$work/plot.gp" 2>"$logs/gnuplot.log"; then plot_ok=yes; else say "gnuplot failed (log: $logs/gnuplot.log)"; fi

# --- The report -----------------------------------------------------------------------------
# summary: the gateway over its baseline at each point, from the table's rows (ok/s over
# ok/s), then the fresh pair and the neighbour's p99 against the quiet one: issue #30's targets,
# read off the run rather than by hand.
summary() {
  { for id in "${!pair_rounds[@]}"; do echo "ROUNDS $id ${pair_rounds[$id]}"; done; printf '%s\n' "${rows[@]}"; } | awk -v levels="${levels[*]}" -v kinds="${name_kinds[*]}" \
    -v fresh="$fresh_clients" -v nb="$neighbour_clients" -F'|' '
    function trim(s) { gsub(/^ +| +$/, "", s); return s }
    /^ROUNDS / { n = split($0, w, " "); r = w[3]; for (i = 4; i <= n; i++) r = r ", " w[i]; rounds[w[2]] = r; next }
    { id = trim($2); ok[id] = trim($6); p99[id] = trim($9) }
    function ratio(a, b) { return (a in ok) && (b in ok) && ok[b] + 0 > 0 ? sprintf("%.2fx", ok[a] / ok[b]) : "-" }
    # The pair'"'"'s ratio, and its rounds'"'"' one by one where it ran in several.
    function cell(a, b) { return ratio(a, b) ((a in rounds) ? " (" rounds[a] ")" : "") }
    function by_round(a) { return (a in rounds) ? "; by round " rounds[a] : "" }
    function line(label, pre, base, side,   i, out) {
      out = "| " label
      for (i = 1; i <= nl; i++) out = out " | " cell(pre "-" lv[i] "-" (side == "" ? "gw" : side), pre "-" lv[i] "-" base)
      print out " |"
    }
    END {
      nl = split(levels, lv, " "); nk = split(kinds, kd, " ")
      head = "| gateway against |"; rule = "| --- |"
      for (i = 1; i <= nl; i++) { head = head " " lv[i] " |"; rule = rule " ---: |" }
      print head; print rule
      for (k = 1; k <= nk; k++) { s = kd[k] == "sequential" ? "seq" : "rnd"; line("minimal SQL, protected, " kd[k] " names", "P-" s, "sql") }
      for (k = 1; k <= nk; k++) { s = kd[k] == "sequential" ? "seq" : "rnd"; line("minimal SQL, claims, " kd[k] " names", "C-" s, "sql") }
      line("nginx, GET pass-through", "G", "nginx")
      line("nginx adding the gateway'"'"'s forwarded headers, GET pass-through", "G", "nginxfwd")
      line("(the bare proxy against nginx: the stack'"'"'s floor)", "G", "nginx", "bare")
      line("nginx plus a careful client library on PostgreSQL, protected, random names", "P-cl", "client")
      print ""
      g = "P-seq-" fresh "-gw-fresh"; q = "P-seq-" fresh "-sql-fresh"
      if (g in ok) printf "- Fresh database, %s agents: %s protected writes/s against the minimal SQL'"'"'s %s (%s%s); p99 %s against %s ms.\n", fresh, ok[g], ok[q], ratio(g, q), by_round(g), p99[g], p99[q]
      g = "P-seq-" nb "-gw-neighbour"; q = "P-seq-" nb "-sql-neighbour"; quiet = "P-seq-" nb "-gw"
      if (g in ok) {
        rel = (quiet in p99) && p99[quiet] + 0 > 0 ? sprintf("%.2fx the %s ms of the quiet pair with the same names and agents", p99[g] / p99[quiet], p99[quiet]) : "no quiet pair with the same names and agents in this run"
        printf "- Beside the CPU-burning neighbour, %s agents: %s protected writes/s against the minimal SQL'"'"'s %s (%s%s); p99 %s ms, %s (issue #30: at most 2x).\n", nb, ok[g], ok[q], ratio(g, q), by_round(g), p99[g], rel
      }
    }'
}

metrics=$(curl -sf "http://127.0.0.1:$gwport/metrics" | grep -E '^gateway_(replies_total|events_total|log_lines_dropped_total)' || true)
log_dropped=$(echo "$metrics" | awk '/^gateway_log_lines_dropped_total/ { print $2 }')
# The whole database, every measurement's leftovers together (the rows give each its own).
unresolved_end=$(psql_q -F ' ' -c "SELECT count(*) FILTER (WHERE state = 'in_flight'), count(*) FILTER (WHERE state = 'unknown')
                                   FROM operations WHERE state IN ('in_flight', 'unknown')")
pg_settings=$(psql_q -F ' = ' -c "SELECT name, setting FROM pg_settings WHERE name IN
  ('fsync','synchronous_commit','full_page_writes','wal_sync_method','shared_buffers','max_connections','max_pred_locks_per_transaction','max_pred_locks_per_page','max_pred_locks_per_relation') ORDER BY name")
pg_version=$(psql_q -c 'SHOW server_version')
nginx_version=$(/usr/sbin/nginx -v 2>&1 | sed 's/^nginx version: //')
build_type=$(sed -n 's/^CMAKE_BUILD_TYPE:[A-Z]*=//p' "$bin/../CMakeCache.txt" 2>/dev/null || echo unknown)
profile_used=$(sed -n 's/^GATEWAY_PROFILE_USE:[A-Z]*=//p' "$bin/../CMakeCache.txt" 2>/dev/null || true)
# Read whole before it is searched: grep -q would stop reading early, and under pipefail
# readelf's broken pipe would read as "not laid out".
sections=$(readelf -SW "$bin/write-gateway" 2>/dev/null || true)
if grep -q '\.note\.bolt_info' <<<"$sections"; then
  layout="write-gateway laid out by BOLT from a run of its own (scripts/bolt.sh)"
else
  layout="write-gateway as linked (no BOLT layout)"
fi
if [ -n "${BIN_DIR:-}" ]; then
  commit="binaries from BIN_DIR=$BIN_DIR; scripts from $(git rev-parse --short HEAD)$(git diff --quiet HEAD -- bench ':!bench/results.md' ':!bench/results.png' 2>/dev/null || echo " (bench/ modified in the working tree)")"
else
  commit=$(git rev-parse --short HEAD)$(git diff --quiet HEAD -- gateway adapters schema bench ':!bench/results.md' ':!bench/results.png' 2>/dev/null || echo " (gateway/, adapters/, schema/ or bench/ modified in the working tree)")
fi
total_s=$((SECONDS - t0))
relplot=$(basename -- "$plot")

{
  echo "# Benchmark results"
  echo
  echo "Written by \`bench/run.sh\`; every figure below comes from one run of it. Overwritten by the next run."
  echo
  echo "Command: \`$command_line\`"
  echo
  echo "| fact | value |"
  echo "| --- | --- |"
  echo "| date | $started_at |"
  echo "| machine | $(nproc) cores ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//')), $(free -g | awk '/^Mem:/ {print $2}') GiB, $(uname -sr) |"
  echo "| load average before the run | $loadavg_before |"
  echo "| PostgreSQL | $pg_version, private cluster on 127.0.0.1, durable defaults: $(echo "$pg_settings" | tr '\n' ',' | sed 's/,$//; s/,/, /g') |"
  echo "| build | $bin, CMAKE_BUILD_TYPE=$build_type, $(g++ --version | head -n 1), $(if [ -n "$profile_used" ]; then echo "the gateway's libraries optimized with the profile in ${profile_used#"$repo"/} (scripts/pgo.sh)"; elif [ -f "$bin/../CMakeCache.txt" ]; then echo "no profile (GATEWAY_PGO=0)"; else echo "profile unknown (no build tree beside BIN_DIR)"; fi), $layout |"
  echo "| commit | $commit |"
  echo "| protected writes' upstream | $([ "$upstream" = static ] && echo "the static nginx (an instance of its own; 201 and a 40-byte JSON body, access log off), as in issue #30's setup; UPSTREAM=booking sends them to the booking demo provider" || echo "the booking demo provider (UPSTREAM=booking)") |"
  echo "| pass-through's upstream | $passthrough_label |"
  echo "| gateway | pool_size $pool, direct_connections $direct, direct_pipeline $pipeline, group_max ${group:-default}, io_threads $io_threads, providers' max_connections $provider_conns, $access_label (log.access; JSON lines on stderr to build/bench-logs/gateway.log, ${log_dropped:-?} lines dropped by its queue) (config: build/bench-logs/gateway.json) |"
  echo "| nginx | $nginx_version, worker_processes $io_threads, upstream keepalive 64, proxy_http_version 1.1, Connection \"\", $([ "$access_log" = 1 ] && echo "access_log on (default combined format, to a file)" || echo "access_log off") |"
  echo "| load generator | gateway-load (bench/load.cpp): Asio coroutines on $load_threads thread(s), one keep-alive connection per agent; pgbench -M prepared -j 2, --max-tries=$max_tries, the isolation each script names (SERIALIZABLE admissions and claims, READ COMMITTED outcomes) |"
  echo "| data | fresh for the first pair (gateway: its migrations and the load's claims; minimal SQL: $seed_tasks owner rows, no operation); then seeded with $seed_tasks finished tasks x $seed_ops committed operations on both sides (bench/pgbench_seed.sql, bench/minimal_seed.sql, ${seed_s} s); every measurement adds to it |"
  echo "| left unresolved at the end | $(echo "$unresolved_end" | awk '{ print $1 " in_flight, " $2 " unknown" }') operations in the gateway's database |"
  echo "| duration | $duration s per point; whole script ${total_s} s (build ${build_s} s) |"
  echo
  echo "![throughput and p99 against concurrency]($relplot)"
  echo
  echo "Load generator, gateway, demo provider, static upstream, nginx and PostgreSQL all share these $(nproc) cores:"
  echo "every figure is the whole stack on one small box, not the capacity of one component. The"
  echo "CPU columns show where the time went (% of one core; $(nproc)00% = the whole machine; **provider**"
  echo "is the booking demo provider and the static upstream, **nginx** the proxy nginx); **other**"
  echo "is everything else running on the machine during the measurement, **idle** includes I/O wait."
  echo
  echo "The gateway's replies per second over its baseline's, from the table below: the minimal SQL"
  echo "at the same client count for protected writes and claims, nginx with the same access log for"
  echo "the pass-through (issue #30 asks for 1.0x or more). In parentheses, a pair run in several rounds:"
  echo "each round's own ratio, its two sides back to back, which shows how far the machine moved."
  echo
  summary
  echo
  echo "| id | what | agents / clients | database | ok/s | p50 ms | p90 ms | p99 ms | p99.9 ms | not ok (non-2xx by status and Gateway-Status; pgbench: failed) | serialization failures (PostgreSQL log) | operations left in_flight / unknown (minimal SQL: admitted) | CPU postgres | gateway | provider | nginx | load gen | other | idle |"
  echo "| --- | --- | ---: | --- | ---: | ---: | ---: | ---: | ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
  printf '%s\n' "${rows[@]}"
  echo
  echo "Idle keep-alive connections (each served one GET, then held): resident memory of the server"
  echo "process (nginx: master and workers) before they were opened and while they were held."
  echo
  echo "| server | connections open | still answering after the hold | RSS before, MiB | RSS held, MiB | KiB per idle connection |"
  echo "| --- | ---: | ---: | ---: | ---: | ---: |"
  printf '%s\n' "${idle_rows[@]}"
  echo
  echo "How to read it:"
  echo
  echo "- Ids: P = protected mutation, C = claim, G = GET pass-through, D = the provider's own POST,"
  echo "  I = idle connections; seq/rnd = sequential or random task names; the number is the agents"
  echo "  (the gateway's HTTP clients) or pgbench's clients, which are the same: the minimal SQL runs at"
  echo "  the gateway's agent count, not at its pool size ($pool database connections). -fresh: the"
  echo "  run's first pair, before any history; -neighbour: the pair beside a process that burns one"
  echo "  core (\`while :; do :; done\`, its CPU under **other**)."
  echo "- **database**: fresh = no history yet (gateway: its migrations and the claims the load"
  echo "  makes; minimal SQL: its $seed_tasks owner rows); seeded = after the history of both sides"
  echo "  ($seed_tasks tasks x $seed_ops operations each, and what earlier measurements added)."
  echo "- **Minimal SQL** is what a careful engineer would write without the gateway, on two tables"
  echo "  of their own with primary keys only (bench/minimal_schema.sql: owners, operations), one"
  echo "  statement per round trip, pgbench -M prepared. Protected mutation"
  echo "  (bench/minimal_protected.sql): a SERIALIZABLE admission (the owner row FOR UPDATE, the key"
  echo "  looked up, the operation inserted) and a READ COMMITTED outcome (the operation marked"
  echo "  succeeded, the owner's version bumped under its epoch), on a random one of the $seed_tasks"
  echo "  owners. Claim (bench/minimal_claim.sql): one SERIALIZABLE transaction, the owner row FOR"
  echo "  UPDATE and an upsert taking a new epoch from a sequence. A serialization failure is retried"
  echo "  up to $max_tries tries (as the gateway's loop). It forwards nothing, stores no response and"
  echo "  keeps no attempt record: it is the database's side of the work, the bar the gateway is"
  echo "  measured against."
  echo "- **Sequential names** (trip-<run>-1, trip-<run>-2, …, keys trip-<run>-1-op-1, …) are what real"
  echo "  callers send and the worst case for SERIALIZABLE: neighbouring keys share a B-tree leaf page,"
  echo "  and PostgreSQL's predicate locks are per page. **Random names** start with 16 random hex"
  echo "  digits, as UUIDs would. They name the gateway's tasks and the minimal claims; the minimal"
  echo "  protected mutation picks a random owner row under either."
  echo "- ok/s counts successful requests only (gateway: 201 committed or 200 granted; nginx and the"
  echo "  provider: 2xx; pgbench: committed script runs, both transactions for a protected"
  echo "  mutation). Latencies are of successful requests, retries included. **not ok** lists every"
  echo "  other reply by HTTP status and Gateway-Status code (\"io: …\" is a connection error); for"
  echo "  pgbench, the script runs that still failed after $max_tries tries, and the retries."
  echo "- **serialization failures** counts 'could not serialize access' in the PostgreSQL log during"
  echo "  the measurement, of the measured side's connections only (the log names each line's"
  echo "  application: pgbench or the gateway's): the retries the gateway's SERIALIZABLE loop (or"
  echo "  pgbench) absorbed plus those it gave up on. The log is kept in build/bench-logs/postgres.log."
  echo "- **operations left**: after each protected measurement, the gateway's operations on that"
  echo "  measurement's tasks still in_flight / unknown once its load had ended, i.e. blocked until"
  echo "  reconciled, from load alone (the whole database's at the end is in the facts above); for"
  echo "  the minimal SQL, its operations still admitted (a script ended before its outcome)."
  echo "- Protected agents each claim one task before the clock starts and, after anything but a"
  echo "  commit, go on with a freshly claimed one. Claims each take a fresh task. Pass-through GETs"
  echo "  (\`GET $passthrough_path\`, the agent token only, no grant) read from $passthrough_label,"
  echo "  through the gateway, through nginx under the same path (it injects the provider credential,"
  echo "  as the gateway does), and at /bookings/bk_1 on the upstream itself; the gateway and nginx both with"
  echo "  the $access_label (gateway: log.access; nginx: access_log, combined format, to a file)."
  echo "  The bare proxy (bench/bare_proxy.cpp) forwards the same GET with the gateway's stack alone:"
  echo "  Asio coroutines, Beast's parsers, mimalloc, connections placed as the gateway places them,"
  echo "  one upstream connection per agent; no token, route, credential scan, ids, log or limits."
  echo "  Its rows' CPU is in the gateway column."
  echo "- Idle memory: nginx allocates its whole connection table when it starts (worker_connections"
  echo "  is sized for this run), so its cost per connection is already in \"RSS before\"; the column is"
  echo "  what holding the connections added. The gateway allocates per connection."
  echo "- pgbench connects its clients before it starts (100 connections took ${conn_ms_per_100} ms"
  echo "  here, measured at the start); the gateway's pool is connected already. Neither the"
  echo "  connection time nor the first $warmup s of load (cold backends, first claims) is counted."
  echo "- Rounds: up to 64 agents the gateway and the minimal SQL ran in $db_rounds rounds each (gateway,"
  echo "  minimal, minimal, gateway for 2), splitting the $duration s; beside the neighbour, $neighbour_rounds"
  echo "  rounds of $duration s each (its p99 is held against the quiet one: one short window is too"
  echo "  noisy for that); each pass-through row is $rounds rounds of one run that"
  echo "  loaded the gateway, nginx, the bare proxy and the provider in turn: the machine's drift lands on every side"
  echo "  of a comparison alike. Each row counts its own rounds only, CPU columns included."
  echo "- The machine may be shared: compare figures within one run, not across runs."
  echo
  echo "## Details"
  echo
  printf '%s\n' "${details[@]}"
  echo "### Gateway counters at the end (/metrics)"
  echo
  echo '```'
  echo "$metrics"
  echo '```'
} >"$results"

say "wrote $results and $([ "$plot_ok" = yes ] && echo "$plot" || echo "no plot") (${total_s} s, $failures measurement(s) whose client or round watcher failed)"
[ "$plot_ok" = yes ] || exit 1
