#!/usr/bin/env bash
# Where one load spends its database time: bench/profile.sh MODE AGENTS SECONDS [gateway-load args]
#   e.g. bench/profile.sh protected 64 8 --names sequential
# Starts a private PostgreSQL (durable defaults, plus pg_stat_statements with planning time), the
# booking demo provider and the gateway from build/release, runs gateway-load once, then prints:
# the load's summary, CPU ticks of the gateway, PostgreSQL and the machine over the run, the
# statements by time spent (calls, times planned, execution and planning ms: a statement planned
# far less often than called runs a cached plan), the operations by state, and the
# serialization failures in the PostgreSQL log by reason. Everything is stopped and removed at
# the end. The numbers behind docs/performance.md came from it; bench/run.sh is the benchmark.
# Env: NEIGHBOUR (1: a shell loop burns one core during the load), POOL (database.pool_size, 16), GROUP (database.group_max, 1), DIRECT (database.direct_connections, 8), PIPELINE (database.direct_pipeline, 4), IO_THREADS (http.io_threads, 2), PROFILE_DIR
# (build/profile), PROFILE_PG_OPTS (more PostgreSQL server options, e.g. "-c plan_cache_mode=force_generic_plan"), PROFILE_PG_PORT (25801), PROFILE_GATEWAY_PORT (18801),
# PROFILE_PROVIDER_PORT (19801), PROFILE_CONTROL_PORT (19802), ACCESS_LOG (1: the gateway's access log
# on, and the medians of its duration_ms, db_ms and upstream_ms per route printed at the end:
# where a request's time went), PERF_DATA (a path: `perf record -g`
# of the gateway during the load, written there; read it with `perf report -i PATH`; PERF_CALL_GRAPH
# replaces its -g, e.g. " " for none or "--call-graph dwarf"), GATEWAY_WRAP
# (a command the gateway runs under, e.g. "valgrind --tool=callgrind --callgrind-out-file=PATH":
# user-space instructions per request, free of this machine's noise), PROFILE_SQL (SQL run once the
# gateway is ready and has migrated, before the load: to try a schema change, e.g. an index dropped),
# PROFILE_SEED ("TASKS OPS": first bench/pgbench_seed.sql's history of TASKS finished tasks with OPS
# operations each, vacuumed, analysed and checkpointed, as bench/run.sh's seeded database).
set -euo pipefail

repo=$(cd "$(dirname -- "${BASH_SOURCE[0]}")/.." && pwd)
cd "$repo"
[ $# -ge 3 ] || { sed -n '2,3p' "$0" >&2; exit 2; }
mode=$1 agents=$2 seconds=$3
shift 3

bin=${BIN_DIR:-$repo/build/release/bin}
dir=${PROFILE_DIR:-$repo/build/profile}
pgdir=$dir/pg
pgport=${PROFILE_PG_PORT:-25801}
gwport=${PROFILE_GATEWAY_PORT:-18801}
provport=${PROFILE_PROVIDER_PORT:-19801}
ctlport=${PROFILE_CONTROL_PORT:-19802}

[ -n "${BIN_DIR:-}" ] || scripts/build.sh release --target write-gateway demo-provider gateway-load >&2
mkdir -p "$dir"
gateway_pid=
provider_pid=
neighbour_pid=
# shellcheck source=scripts/lib.sh
source "$repo/scripts/lib.sh"
# shellcheck disable=SC2317 # called by the trap
cleanup() {
  if [ -n "$neighbour_pid" ]; then kill "$neighbour_pid" 2>/dev/null || true; fi
  if [ -n "$gateway_pid" ]; then stop_pid "$gateway_pid" 30; fi
  # A wrapper that forks the gateway (GATEWAY_WRAP="perf stat ...") may exit on SIGTERM without
  # passing it on: a gateway still running this config would hold the port for the next run.
  pkill -TERM -f -- "write-gateway --config $dir/gateway.json" 2>/dev/null || true
  if [ -n "$provider_pid" ]; then stop_pid "$provider_pid" 5; fi
  scripts/pg.sh destroy "$pgdir" >/dev/null 2>&1 || true
}
trap cleanup EXIT

scripts/pg.sh destroy "$pgdir" >/dev/null 2>&1 || true
PG_EXTRA_OPTS="-c shared_preload_libraries=pg_stat_statements -c pg_stat_statements.track_planning=on ${PROFILE_PG_OPTS:-}" \
  scripts/pg.sh start "$pgdir" "$pgport" >/dev/null
GATEWAY_DATABASE_URL=$(scripts/pg.sh url "$pgdir" "$pgport")
export GATEWAY_DATABASE_URL
pglog=$(readlink -f "$pgdir")/postgres.log
psql_q() { psql "$GATEWAY_DATABASE_URL" -X -q -v ON_ERROR_STOP=1 "$@"; }

DEMO_PROVIDER_CREDENTIAL=booking-secret \
  "$bin/demo-provider" --kind booking --port "$provport" --control-port "$ctlport" >"$dir/provider.log" 2>&1 &
provider_pid=$!
jq -n --slurpfile dev config/dev.json --argjson port "$gwport" --argjson pool "${POOL:-16}" \
  --argjson group "${GROUP:-1}" --argjson direct "${DIRECT:-8}" --argjson pipeline "${PIPELINE:-4}" --argjson io "${IO_THREADS:-2}" --arg provider "http://127.0.0.1:$provport" \
  --argjson access "$([ "${ACCESS_LOG:-0}" = 1 ] && echo true || echo false)" '{
    listen: {address: "127.0.0.1", port: $port},
    database: {url_env: "GATEWAY_DATABASE_URL", pool_size: $pool, group_max: $group, direct_connections: $direct, direct_pipeline: $pipeline},
    http: {io_threads: $io},
    log: {access: $access},
    agents: $dev[0].agents,
    operators: $dev[0].operators,
    providers: [{name: "booking", base_url: $provider, max_connections: 64,
                 credential: {tenants: {"tenant-a": {env: "BOOKING_KEY_TENANT_A"}}}}]
  }' >"$dir/gateway.json"
BOOKING_KEY_TENANT_A=booking-secret LD_PRELOAD=${GATEWAY_PRELOAD:-} ${GATEWAY_WRAP:-} "$bin/write-gateway" --config "$dir/gateway.json" >"$dir/gateway.log" 2>&1 &
gateway_pid=$!
wait_ready "$gateway_pid" "http://127.0.0.1:$gwport/readyz" 100 0.1 ||
  { tail -n 20 "$dir/gateway.log" >&2; echo "profile.sh: the gateway did not get ready" >&2; exit 1; }

# One booking (bk_1) for pass-through GETs (--mode passthrough), as bench/run.sh makes.
curl -sf -X POST -H 'Authorization: Bearer booking-secret' -H 'Content-Type: application/json' \
  -d '{"slot":"bench-passthrough","customer":"bench"}' "http://127.0.0.1:$provport/bookings" >/dev/null
if [ -n "${PROFILE_SEED:-}" ]; then  # "TASKS OPS": the history bench/run.sh gives its seeded database
  read -r seed_tasks seed_ops <<<"$PROFILE_SEED"
  psql_q -v tasks="$seed_tasks" -v ops="$seed_ops" -f bench/pgbench_seed.sql >/dev/null
  psql_q -c 'VACUUM ANALYZE' -c CHECKPOINT >/dev/null
fi
if [ -n "${PROFILE_SQL:-}" ]; then psql_q -c "$PROFILE_SQL" >/dev/null; fi
psql_q -c 'CREATE EXTENSION IF NOT EXISTS pg_stat_statements' -c 'SELECT pg_stat_statements_reset()' >/dev/null
serialization_before=$(grep -c 'could not serialize' "$pglog" || true)
ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat" 2>/dev/null || echo 0; }
postgres_ticks() {
  local total=0 pid
  for pid in $(pgrep -u postgres); do total=$((total + $(ticks "$pid"))); done
  echo "$total"
}
machine_ticks() { awk '/^cpu / { print $2 + $3 + $4 + $7 + $8 + $9, $5 + $6 }' /proc/stat; }
g0=$(ticks "$gateway_pid"); p0=$(postgres_ticks); read -r busy0 idle0 < <(machine_ticks)
perf_pid=
if [ -n "${PERF_DATA:-}" ]; then
  # shellcheck disable=SC2086 # split on purpose: PERF_CALL_GRAPH=" " records no call graph
  perf record -q -F 499 ${PERF_CALL_GRAPH:--g} -p "$gateway_pid" -o "$PERF_DATA" 2>/dev/null &
  perf_pid=$!
fi
if [ "${NEIGHBOUR:-0}" = 1 ]; then  # one other busy process on the machine, as a shared host has
  (while :; do :; done) &
  neighbour_pid=$!
fi
"$bin/gateway-load" --mode "$mode" --port "$gwport" --clients "$agents" --duration "$seconds" "$@"
if [ -n "$neighbour_pid" ]; then kill "$neighbour_pid"; wait "$neighbour_pid" 2>/dev/null || true; fi
if [ -n "$perf_pid" ]; then kill -INT "$perf_pid"; wait "$perf_pid" || true; fi
g1=$(ticks "$gateway_pid"); p1=$(postgres_ticks); read -r busy1 idle1 < <(machine_ticks)

echo
echo "CPU ticks ($(getconf CLK_TCK)/s per core, $(nproc) cores): gateway $((g1 - g0)), postgres $((p1 - p0))," \
  "machine busy $((busy1 - busy0)), idle or waiting $((idle1 - idle0))"
echo
echo "Statements by time (calls, times planned, ms, WAL bytes per call):"
psql_q -A -F ' | ' -c "
  SELECT calls, plans, round(total_exec_time::numeric) AS exec_ms, round(total_plan_time::numeric) AS plan_ms,
         round(((total_exec_time + total_plan_time) / NULLIF(calls, 0))::numeric, 3) AS ms_per_call,
         round(wal_bytes / NULLIF(calls, 0)) AS wal_per_call,
         left(regexp_replace(query, '\s+', ' ', 'g'), 100) AS statement
  FROM pg_stat_statements ORDER BY total_exec_time + total_plan_time DESC LIMIT 15"
echo
echo "Operations by state:"
psql_q -At -F ' ' -c 'SELECT state, count(*) FROM operations GROUP BY state ORDER BY state'
if [ "${ACCESS_LOG:-0}" = 1 ]; then
  echo
  echo "Access log, medians per route (ms): requests, duration_ms, db_ms, upstream_ms"
  jq -R -r 'fromjson? | select(.event == "request")' "$dir/gateway.log" | jq -s -r '
    def median: sort | if length == 0 then "-" else .[(length / 2 | floor)] end;
    group_by(.route)[] | "\(.[0].route): \(length), \(map(.duration_ms) | median), \(map(.db_ms) | median), \(map(.upstream_ms // empty) | median)"'
fi
echo
echo "Row writes by table (inserts, updates, of which HOT: an update that is not HOT adds index entries):"
psql_q -A -F ' | ' -c "
  SELECT relname, n_tup_ins, n_tup_upd, n_tup_hot_upd FROM pg_stat_user_tables
  WHERE n_tup_ins + n_tup_upd > 0 ORDER BY n_tup_upd DESC, n_tup_ins DESC"
echo
echo "Sizes in 8 KiB pages after the load (a table's rows that moved off their page leave dead versions there until a vacuum):"
psql_q -A -F ' | ' -c "
  SELECT c.relname, c.relkind, pg_relation_size(c.oid) / 8192 AS pages
  FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
  WHERE n.nspname = 'public' AND c.relname IN ('tasks', 'tasks_pkey', 'task_ledger', 'task_ledger_pkey', 'operations',
                                               'operations_pkey')
  ORDER BY c.relname"
echo
echo "Serialization failures: $(( $(grep -c 'could not serialize' "$pglog" || true) - serialization_before ))"
grep -A2 'could not serialize' "$pglog" | grep -oE 'Reason code: .*' | sort | uniq -c | sort -rn || true
echo "... by statement:"
grep -A3 'could not serialize' "$pglog" | grep -oE 'STATEMENT: .{0,70}' | sort | uniq -c | sort -rn | head -n 8 || true
