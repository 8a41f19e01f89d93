#!/usr/bin/env bash
# The benchmarks, in one run: bench/run.sh   (about 2 minutes once the release tree is built)
# Builds the release tree, starts a private PostgreSQL (build/bench-pg, durable default settings,
# destroyed before and after), the booking demo provider and the gateway, then measures each
# gateway figure next to its baseline and writes bench/results.md (overwritten):
#   pgbench admission, pgbench admission+outcome   the database work of a protected request
#   gateway protected                              the whole protected request through the gateway
#   direct                                         the same booking POST to the provider itself
#   pgbench claim, gateway claim                   the ownership transaction alone, and through HTTP
# Env (defaults): DURATION=10 seconds per measurement, CLIENTS=32 gateway-load threads,
# POOL=16 gateway database connections, PG_CLIENTS=$POOL pgbench clients (the same database
# concurrency as the gateway), PG_CLIENTS_REF=64 (the TOOLCHAIN.md reference point),
# SEED_TASKS=20000 and SEED_OPS=5 (the history the database starts from: bench/pgbench_seed.sql),
# BENCH_PG_PORT=55719, BENCH_GATEWAY_PORT=18471, BENCH_PROVIDER_PORT=19473, BENCH_CONTROL_PORT=19474.
# Logs of the last run: build/bench-logs/.
set -euo pipefail

repo=$(cd "$(dirname -- "${BASH_SOURCE[0]}")/.." && pwd)
cd "$repo"

duration=${DURATION:-10}
clients=${CLIENTS:-32}
pool=${POOL:-16}
pg_clients=${PG_CLIENTS:-$pool}
pg_clients_ref=${PG_CLIENTS_REF:-64}
seed_tasks=${SEED_TASKS:-20000}
seed_ops=${SEED_OPS:-5}
pgport=${BENCH_PG_PORT:-55719}
gwport=${BENCH_GATEWAY_PORT:-18471}
provport=${BENCH_PROVIDER_PORT:-19473}
ctlport=${BENCH_CONTROL_PORT:-19474}
command_line="DURATION=$duration CLIENTS=$clients POOL=$pool PG_CLIENTS=$pg_clients PG_CLIENTS_REF=$pg_clients_ref SEED_TASKS=$seed_tasks SEED_OPS=$seed_ops bench/run.sh"

pgdir=$repo/build/bench-pg
logs=$repo/build/bench-logs
bin=$repo/build/release/bin
results=$repo/bench/results.md
started_at=$(date -u '+%Y-%m-%d %H:%M:%S UTC')
t0=$SECONDS

say() { echo "bench: $*" >&2; }
die() { say "$*"; exit 1; }

# Only what the benchmarks run: a test target that does not build must not stop them.
scripts/build.sh release --target write-gateway demo-provider gateway-load
build_s=$((SECONDS - t0))

for port in "$pgport" "$gwport" "$provport" "$ctlport"; do
  [ -z "$(ss -ltnH "sport = :$port")" ] || die "port $port is in use; set BENCH_*_PORT"
done

rm -rf "$logs"
mkdir -p "$logs"
work=$(mktemp -d /tmp/gateway-bench.XXXXXX)
gateway_pid=
provider_pid=

# shellcheck source=scripts/lib.sh
source "$repo/scripts/lib.sh"

# shellcheck disable=SC2317 # called by the traps
cleanup() {
  trap - EXIT INT TERM HUP
  if [ -n "$gateway_pid" ]; then stop_pid "$gateway_pid" 30; fi
  if [ -n "$provider_pid" ]; then stop_pid "$provider_pid" 5; fi
  scripts/pg.sh destroy "$pgdir" || true
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
trap 'exit 129' HUP

# --- PostgreSQL: durable defaults (fsync, synchronous_commit, full_page_writes all on) -------
scripts/pg.sh destroy "$pgdir"
PG_EXTRA_OPTS='' scripts/pg.sh start "$pgdir" "$pgport"
pgreal=$(readlink -f "$pgdir")
pglog=$pgreal/postgres.log
GATEWAY_DATABASE_URL=$(scripts/pg.sh url "$pgdir" "$pgport")
export GATEWAY_DATABASE_URL
psql_q() { psql "$GATEWAY_DATABASE_URL" -X -q -At -v ON_ERROR_STOP=1 "$@"; }

# --- The booking provider and the gateway --------------------------------------------------
DEMO_PROVIDER_CREDENTIAL=booking-secret \
  "$bin/demo-provider" --kind booking --port "$provport" --control-port "$ctlport" >"$logs/provider.log" 2>&1 &
provider_pid=$!

# Dev tokens from config/dev.json; everything else is the benchmark's.
config=$work/gateway.json
jq -n --slurpfile dev config/dev.json --argjson gwport "$gwport" --argjson pool "$pool" \
  --arg provider "http://127.0.0.1:$provport" '{
    listen: {address: "127.0.0.1", port: $gwport},
    database: {url_env: "GATEWAY_DATABASE_URL", pool_size: $pool},
    http: {io_threads: 2},
    agents: $dev[0].agents,
    operators: $dev[0].operators,
    providers: [{name: "booking", base_url: $provider,
                 credential: {tenants: {"tenant-a": {env: "BOOKING_KEY_TENANT_A"}}},
                 connect_timeout_ms: 1000, request_timeout_ms: 5000, idle_retire_ms: 2000,
                 max_connections: 32}]
  }' >"$config"
cp "$config" "$logs/gateway.json"
BOOKING_KEY_TENANT_A=booking-secret "$bin/write-gateway" --config "$config" >"$logs/gateway.log" 2>&1 &
gateway_pid=$!
for _ in $(seq 1 100); do
  curl -sf "http://127.0.0.1:$gwport/readyz" >/dev/null 2>&1 && break
  kill -0 "$gateway_pid" 2>/dev/null || { tail -n 20 "$logs/gateway.log" >&2; die "the gateway exited"; }
  sleep 0.1
done
curl -sf "http://127.0.0.1:$gwport/readyz" >/dev/null || die "the gateway is not ready (log: $logs/gateway.log)"
[ -n "$(ss -ltnH "sport = :$provport")" ] || die "the provider is not listening (log: $logs/provider.log)"

# The gateway has applied its migrations: now the history every measurement starts from.
seed_t0=$SECONDS
psql_q -v tasks="$seed_tasks" -v ops="$seed_ops" -f bench/pgbench_seed.sql
seed_s=$((SECONDS - seed_t0))

# --- CPU accounting (what top/pidstat would show, summed over each measurement) ------------
hz=$(getconf CLK_TCK)
# utime+stime of one process; with "all", plus the children it has reaped.
ticks_of() {
  local f
  read -r -a f <"/proc/$1/stat" 2>/dev/null || { echo 0; return; }
  if [ "${2:-}" = all ]; then echo $((f[13] + f[14] + f[15] + f[16])); else echo $((f[13] + f[14])); fi
}
# The postmaster with its exited backends, plus every live backend.
pg_ticks() {
  local pm total child
  pm=$(head -n 1 "$pgreal/postmaster.pid")
  total=$(ticks_of "$pm" all)
  for child in $(pgrep -P "$pm"); do total=$((total + $(ticks_of "$child"))); done
  echo "$total"
}
machine_ticks() { # busy total
  local _ user nice system idle iowait irq softirq steal
  read -r _ user nice system idle iowait irq softirq steal _ </proc/stat
  echo "$((user + nice + system + irq + softirq + steal)) $((user + nice + system + idle + iowait + irq + softirq + steal))"
}
serialization_failures() { grep -c 'could not serialize access' "$pglog" || true; }
db_errors() { grep -c ' ERROR: ' "$pglog" || true; }

# Runs the load command; its CPU (it and its children) lands in $work/client_ticks.
run_client() {
  CLIENT_TICKS=$work/client_ticks bash -c \
    '"$@"; rc=$?; read -r -a f </proc/$$/stat; echo $((f[15] + f[16])) >"$CLIENT_TICKS"; exit $rc' bash "$@"
}

rows=()      # markdown table rows, in order
plans=()     # per measurement: start state and the outcome statement's plan
details=()   # per measurement: what came back

# The plan of the gateway's outcome statement (ledger_store.cpp outcome_sql, a committed 201)
# for the data and statistics as they are now; PostgreSQL plans libpqxx's unnamed statements
# with their parameter values, as it plans these literals.
outcome_plan() {
  psql_q -c "EXPLAIN
WITH o AS (UPDATE operations
           SET state = 'succeeded', updated_ms = 0, committed_version = 1, response_status = 201,
               response_headers = '[]'::jsonb, response_body = ''::bytea, response_sha256 = decode('', 'hex'),
               response_length = 0
           WHERE tenant = 'tenant-a' AND task = md5('seed-1') AND op_id = 'k'),
     a AS (UPDATE operation_attempts SET outcome = 'succeeded', outcome_ms = 0, upstream_status = 201, detail = ''
           WHERE tenant = 'tenant-a' AND task = md5('seed-1') AND op_id = 'k' AND attempt = 1)
UPDATE task_ledger SET version = 1, open_op = NULL
WHERE tenant = 'tenant-a' AND task = md5('seed-1')
RETURNING version"
}
# How that plan finds the operation: "Index Scan using operations_pkey", ...
outcome_lookup() { outcome_plan | grep -A1 'Update on operations' | tail -n 1 | sed 's/^ *-> *//; s/ on operations .*//'; }

# measure ID WHAT -- command...: runs one measurement and samples the CPU, serialization
# failures and errors around it. Sets last_out, cpu_cols and db_serial.
measure() {
  local id=$1 what=$2
  shift 2
  [ "$1" = -- ] && shift
  say "measuring $id: $what"
  # Every measurement starts from the same state: operations a previous one left in flight
  # (outcome never recorded) leave the partial index operations_unresolved, and statistics
  # are fresh, as autovacuum keeps them on a running database.
  leftover=$(psql_q -c "WITH u AS (UPDATE operations SET state = 'not_executed' WHERE state = 'in_flight' RETURNING 1)
                        SELECT count(*) FROM u")
  psql_q -c 'VACUUM ANALYZE'
  plan_at_start=$(outcome_lookup)
  outcome_plan >"$work/$id.plan"
  psql_q -c CHECKPOINT
  curl -sf -X POST "http://127.0.0.1:$ctlport/__test/reset" >/dev/null
  sleep 1
  local pg0 gw0 pv0 m0 sf0 er0 w0 pg1 gw1 pv1 m1 sf1 er1 w1
  pg0=$(pg_ticks); gw0=$(ticks_of "$gateway_pid"); pv0=$(ticks_of "$provider_pid"); m0=$(machine_ticks)
  sf0=$(serialization_failures); er0=$(db_errors); w0=$(date +%s.%N)
  last_out=$logs/$id.out
  run_client "$@" >"$last_out" 2>&1 || { cat "$last_out" >&2; die "$id failed"; }
  w1=$(date +%s.%N)
  pg1=$(pg_ticks); gw1=$(ticks_of "$gateway_pid"); pv1=$(ticks_of "$provider_pid"); m1=$(machine_ticks)
  sf1=$(serialization_failures); er1=$(db_errors)
  inflight_after=$(psql_q -c "SELECT count(*) FROM operations WHERE state = 'in_flight'")
  plans+=("| $id | $leftover | $plan_at_start | $inflight_after |")
  local cl; cl=$(cat "$work/client_ticks")
  # CPU as % of one core over the measurement (the machine has $(nproc) cores: 100% each).
  cpu=$(awk -v hz="$hz" -v w="$(awk -v a="$w0" -v b="$w1" 'BEGIN{print b-a}')" \
    -v pg=$((pg1 - pg0)) -v gw=$((gw1 - gw0)) -v pv=$((pv1 - pv0)) -v cl="$cl" \
    -v mb="$(( ${m1% *} - ${m0% *} ))" -v mt="$(( ${m1#* } - ${m0#* } ))" -v n="$(nproc)" 'BEGIN {
      f = 100 / (hz * w); other = mb - pg - gw - pv - cl; if (other < 0) other = 0
      printf "%.0f | %.0f | %.0f | %.0f | %.0f | %.0f", pg * f, gw * f, pv * f, cl * f, other * f, (mt - mb) * 100 * n / mt
    }')
  db_serial=$((sf1 - sf0))
  db_errors_other=$((er1 - er0 - db_serial))
  cpu_cols=$cpu
}

# Percentiles (ms) of pgbench's per-transaction log: successful transactions only, as
# gateway-load reports its ok replies.
pgbench_percentiles() {
  awk '$3 ~ /^[0-9]+$/ { print $3 }' "$@" | sort -n | awk '
    { v[NR] = $1 }
    END {
      if (NR == 0) { print "- | - | -"; exit }
      split("0.50 0.90 0.99", p, " ")
      for (i = 1; i <= 3; i++) { r = int(p[i] * NR); if (r < p[i] * NR) r++; if (r < 1) r = 1; out = out sprintf("%s%.2f", (i > 1 ? " | " : ""), v[r] / 1000) }
      print out
    }'
}

pgbench_phase() {
  local id=$1 what=$2 script=$3 nclients=$4
  rm -f "$work/$id".*
  psql_q -v prefix="$id" -v clients="$nclients" -f bench/pgbench_tasks.sql
  measure "$id" "$what" -- \
    env PGOPTIONS='-c default_transaction_isolation=serializable' \
    pgbench -h 127.0.0.1 -p "$pgport" -U postgres -n -M extended -c "$nclients" -j 2 -T "$duration" \
    --max-tries=1 --failures-detailed -D prefix="$id" -l --log-prefix="$work/$id" -f "$script" postgres
  local tps failed lat
  tps=$(sed -n 's/^tps = \([0-9.]*\) .*/\1/p' "$last_out")
  failed=$(sed -n 's/^number of failed transactions: \([0-9]*\).*/\1/p' "$last_out")
  lat=$(pgbench_percentiles "$work/$id".*)
  rows+=("| $id | $what | $nclients | $nclients | $(printf '%.0f' "$tps") | $lat | $failed failed | $db_serial | $cpu_cols |")
  details+=("### $id: $what" "" '```' "$(grep -E '^(number of|latency|tps|maximum number of tries)' "$last_out")"
            "other database errors in the log: $db_errors_other" '```' "")
}

load_phase() {
  local id=$1 what=$2 mode=$3 port=$4 dbconns=$5
  measure "$id" "$what" -- \
    "$bin/gateway-load" --mode "$mode" --port "$port" --clients "$clients" --duration "$duration" \
    --json "$work/$id.json"
  local j=$work/$id.json
  rows+=("| $id | $what | $clients | $dbconns | $(jq -r '.ok_per_s | round' "$j") | $(jq -r '"\(.p50_ms) \(.p90_ms) \(.p99_ms)"' "$j" | awk '{ printf "%.2f | %.2f | %.2f", $1, $2, $3 }') | $(jq -r '.errors' "$j") | $db_serial | $cpu_cols |")
  details+=("### $id: $what" "" '```' "$(cat "$last_out")" "other database errors in the log: $db_errors_other" '```' "")
}

loadavg_before=$(cut -d' ' -f1-3 /proc/loadavg)

pgbench_phase A1 "pgbench: admission transaction" bench/pgbench_admission.sql "$pg_clients"
pgbench_phase A2 "pgbench: admission + outcome transactions" bench/pgbench_protected.sql "$pg_clients"
pgbench_phase A3 "pgbench: admission + outcome (TOOLCHAIN.md reference concurrency)" bench/pgbench_protected.sql "$pg_clients_ref"
load_phase B "gateway: protected booking POST (admission, forward, outcome)" protected "$gwport" "$pool"
load_phase C "direct: the same booking POST to the provider" direct "$provport" 0
pgbench_phase D1 "pgbench: claim transaction" bench/pgbench_claim.sql "$pg_clients"
load_phase D2 "gateway: claim of a fresh task" claim "$gwport" "$pool"

metrics=$(curl -sf "http://127.0.0.1:$gwport/metrics" | grep -E '^gateway_(replies_total|events_total)' || true)
pg_settings=$(psql_q -F ' = ' -c "SELECT name, setting FROM pg_settings WHERE name IN
  ('fsync','synchronous_commit','full_page_writes','wal_sync_method','shared_buffers','max_pred_locks_per_transaction','max_pred_locks_per_page','max_pred_locks_per_relation') ORDER BY name")
pg_version=$(psql_q -c 'SHOW server_version')
build_type=$(sed -n 's/^CMAKE_BUILD_TYPE:[A-Z]*=//p' build/release/CMakeCache.txt)
commit=$(git rev-parse --short HEAD)$(git diff --quiet HEAD -- gateway adapters schema 2>/dev/null || echo " (gateway/, adapters/ or schema/ modified in the working tree)")
total_s=$((SECONDS - t0))

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
  echo "| build | build/release, CMAKE_BUILD_TYPE=$build_type, $(g++ --version | head -n 1) |"
  echo "| commit | $commit |"
  echo "| gateway | pool_size $pool, io_threads 2, booking provider max_connections 32 (config: build/bench-logs/gateway.json) |"
  echo "| data | seeded before the first measurement with $seed_tasks finished tasks x $seed_ops committed operations (bench/pgbench_seed.sql, ${seed_s} s); every measurement adds to it |"
  echo "| duration | $duration s per measurement; whole script ${total_s} s (build ${build_s} s) |"
  echo
  echo "Load generator, gateway, demo provider and PostgreSQL all share these $(nproc) cores: every"
  echo "figure is the whole stack on one small box, not the capacity of one component. The CPU"
  echo "columns show where the time went (% of one core; $(nproc)00% = the whole machine); **other** is"
  echo "everything else running on the machine during the measurement, **idle** includes I/O wait."
  echo
  echo "| id | what | clients | DB conns | ok/s | p50 ms | p90 ms | p99 ms | errors | DB serialization failures | CPU postgres | gateway | provider | load gen | other | idle |"
  echo "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
  printf '%s\n' "${rows[@]}"
  echo
  echo "How to read it:"
  echo
  echo "- B (a protected request through the gateway) is compared with A1/A2 (the same database"
  echo "  statements from pgbench at the gateway's database concurrency, POOL=$pool) and with C (the"
  echo "  provider alone). A3 repeats A2 at the concurrency of the TOOLCHAIN.md baseline. D2 is"
  echo "  compared with D1. The outcome statement finds its operation by primary key only; its"
  echo "  plan is in the details (an earlier version with a condition on state scanned the partial"
  echo "  index operations_unresolved and made most admissions fail serialization)."
  echo "- ok/s counts successful requests only (gateway: 201 committed or 200 granted; pgbench:"
  echo "  committed scripts). Latencies are of successful requests. **errors** are every other reply"
  echo "  (gateway-load) or failed transactions (pgbench runs with --max-tries=1, so each"
  echo "  serialization failure is one failed transaction; the client goes on with a new one)."
  echo "- **DB serialization failures** counts 'could not serialize access' in the PostgreSQL log"
  echo "  during the measurement: for the gateway these are the retries its SERIALIZABLE loop"
  echo "  absorbed (up to 8 attempts with jittered backoff) plus those it gave up on."
  echo "- Task names and keys are random in both (gateway-load: random hex; pgbench: md5 and random"
  echo "  numbers), and every measurement starts on fresh tasks of its own."
  echo "- pgbench latency is one script run (A2: both transactions), measured by pgbench itself on"
  echo "  its own connection; gateway latency is the HTTP round trip including queueing for one of"
  echo "  the $pool database workers."
  echo
  echo "## Details"
  echo
  printf '%s\n' "${details[@]}"
  echo "### The outcome statement's plan"
  echo
  echo "Before each measurement: operations left in flight by the previous one (their outcome was"
  echo "never recorded; set to not_executed so that every measurement starts alike), then VACUUM"
  echo "ANALYZE, then how the plan of the gateway's outcome statement finds the operation; after it,"
  echo "the operations it left in flight."
  echo
  echo "| id | left in flight before | outcome UPDATE finds the operation by | left in flight after |"
  echo "| --- | ---: | --- | ---: |"
  printf '%s\n' "${plans[@]}"
  echo
  echo "The whole plan before B:"
  echo
  echo '```'
  cat "$work/B.plan"
  echo '```'
  echo
  echo "### Gateway counters at the end (/metrics)"
  echo
  echo '```'
  echo "$metrics"
  echo '```'
} >"$results"

say "wrote $results (${total_s} s)"
cat "$results"
