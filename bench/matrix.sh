#!/usr/bin/env bash
# Issue #30's first deliverable over its whole matrix: bench/matrix.sh
#
# Protected writes through the gateway from load alone, each configuration on a PostgreSQL
# cluster of its own (bench/profile.sh: durable defaults, the booking demo provider, the
# gateway's default access log on): a fresh database (its migrations, then the claims the load
# makes) or a seeded one (bench/pgbench_seed.sql, as bench/run.sh seeds it), sequential or random
# names, 1 to 1,000 agents, on a quiet machine and then beside a CPU-burning neighbour. For each:
# writes/s, p99, every reply that was not 2xx by status and code, the operations left in_flight
# or unknown once the load has its replies, and PostgreSQL's serialization failures; for each
# pair, the neighbour's p99 over the quiet one (issue #30: at most 2x). bench/run.sh, which must
# stay under 10 minutes, compares the gateway with its baselines; this covers what it cannot:
# every cell of the matrix, the gateway alone.
#
# Env (defaults): DURATION (3) measured seconds per cell after WARMUP (1), LEVELS ("1 8 64 256
# 1000"), NAMES ("sequential random"), DATABASES ("fresh seeded"), SEED ("10000 10": tasks x
# operations of the seeded database), RESULTS (bench/matrix_results.md), BIN_DIR (as
# profile.sh: binaries to use instead of building build/release); POOL, DIRECT, PIPELINE and
# IO_THREADS reach profile.sh. About 10 s a cell, 1,000 agents longer: 8 to 9 minutes in all.
set -euo pipefail

repo=$(cd "$(dirname -- "${BASH_SOURCE[0]}")/.." && pwd)
cd "$repo"
duration=${DURATION:-3}
warmup=${WARMUP:-1}
read -r -a levels <<<"${LEVELS:-1 8 64 256 1000}"
read -r -a name_kinds <<<"${NAMES:-sequential random}"
read -r -a databases <<<"${DATABASES:-fresh seeded}"
seed=${SEED:-10000 10}
results=${RESULTS:-$repo/bench/matrix_results.md}
work=$(mktemp -d /tmp/gateway-matrix.XXXXXX)
trap 'rm -rf "$work"' EXIT

for tool in jq psql; do command -v "$tool" >/dev/null || { echo "matrix.sh: $tool is missing (scripts/deps.sh)" >&2; exit 1; }; done
if [ -z "${BIN_DIR:-}" ]; then
  scripts/build.sh release --target write-gateway demo-provider gateway-load >&2
  export BIN_DIR=$repo/build/release/bin
fi
started=$(date -u '+%Y-%m-%d %H:%M:%S UTC')
t0=$SECONDS

# cell ID DATABASE NAMES AGENTS quiet|neighbour: one profile.sh run; prints its row's fields
# "ok_per_s p99_ms not_ok in_flight unknown serialization_failures" (not_ok: "0" or "N× code, ...").
cell() {
  local id=$1 db=$2 names=$3 agents=$4 machine=$5 out=$work/$1.out
  local -a env_args=(ACCESS_LOG=1 PROFILE_DIR="$work/profile")
  [ "$db" = fresh ] || env_args+=(PROFILE_SEED="$seed")
  [ "$machine" = quiet ] || env_args+=(NEIGHBOUR=1)
  echo "matrix: $id ($((SECONDS - t0)) s)" >&2
  if ! env "${env_args[@]}" bench/profile.sh protected "$agents" "$duration" --names "$names" --warmup "$warmup" \
    --run-id "$id" --json "$work/$id.json" >"$out" 2>&1; then
    echo "matrix: $id failed (profile.sh's output below)" >&2
    tail -n 20 "$out" >&2
    return 1
  fi
  local state in_flight unknown serial not_ok
  state=$(sed -n '/^Operations by state:/,/^$/p' "$out")
  in_flight=$(awk '$1 == "in_flight" { print $2 }' <<<"$state")
  unknown=$(awk '$1 == "unknown" { print $2 }' <<<"$state")
  serial=$(sed -n 's/^Serialization failures: \([0-9]*\)$/\1/p' "$out")
  not_ok=$(jq -r '[.not_ok, .setup_refusals | to_entries[] | "\(.value)× \(.key)"] | if length == 0 then "0" else join(", ") end' "$work/$id.json" | tr '|' '/')
  echo "$(jq -r '.ok_per_s | round' "$work/$id.json") $(jq -r '.p99_ms' "$work/$id.json") ${in_flight:-0} ${unknown:-0} ${serial:-0} $not_ok"
}

rows=() failures=0 worst_ratio=0 all_clean=yes
for db in "${databases[@]}"; do
  for names in "${name_kinds[@]}"; do
    for agents in "${levels[@]}"; do
      base=${db:0:1}-${names:0:3}-$agents
      declare -A p99=()
      for machine in quiet neighbour; do
        id=$base-$machine
        if ! line=$(cell "$id" "$db" "$names" "$agents" "$machine"); then
          failures=$((failures + 1))
          rows+=("| $db | $names | $agents | $machine | profile.sh failed | - | - | - | - | - |")
          all_clean=no
          continue
        fi
        read -r rate p99_ms in_flight unknown serial not_ok <<<"$line"
        p99[$machine]=$p99_ms
        [ "$not_ok" = 0 ] && [ "$in_flight" = 0 ] && [ "$unknown" = 0 ] || all_clean=no
        ratio=-
        if [ "$machine" = neighbour ] && [ -n "${p99[quiet]:-}" ]; then
          ratio=$(awk -v n="$p99_ms" -v q="${p99[quiet]}" 'BEGIN { printf "%.2f", (q > 0 ? n / q : 0) }')
          worst_ratio=$(awk -v a="$worst_ratio" -v b="$ratio" 'BEGIN { print (b > a ? b : a) }')
        fi
        rows+=("| $db | $names | $agents | $machine | $rate | $p99_ms | $ratio | $not_ok | $in_flight / $unknown | $serial |")
      done
      unset p99
    done
  done
done

mkdir -p "$(dirname -- "$results")"
{
  echo "# Protected writes over issue #30's matrix"
  echo
  echo "Written by \`bench/matrix.sh\`; every figure below comes from one run of it. Overwritten by the next run."
  echo
  echo "Command: \`DURATION=$duration WARMUP=$warmup LEVELS=\"${levels[*]}\" NAMES=\"${name_kinds[*]}\" DATABASES=\"${databases[*]}\" SEED=\"$seed\" bench/matrix.sh\`"
  echo
  echo "| fact | value |"
  echo "| --- | --- |"
  echo "| date | $started |"
  echo "| machine | $(nproc) cores, $(awk '/MemTotal/ { printf "%.0f GiB", $2 / 1048576 }' /proc/meminfo), Linux $(uname -r) |"
  echo "| commit | $(git rev-parse --short HEAD 2>/dev/null || echo unknown) |"
  echo "| binaries | $BIN_DIR |"
  echo "| each cell | bench/profile.sh protected AGENTS $duration --names NAMES --warmup $warmup: a new PostgreSQL 15 cluster (durable defaults), the booking demo provider, the gateway with pool_size ${POOL:-16}, direct_connections ${DIRECT:-8}, direct_pipeline ${PIPELINE:-4}, io_threads ${IO_THREADS:-2} and its access log on; seeded: bench/pgbench_seed.sql with $seed (tasks, operations each), then VACUUM ANALYZE and CHECKPOINT; neighbour: a shell loop burning one core during the load |"
  echo "| whole run | $((SECONDS - t0)) s |"
  echo
  echo "Every cell without a reply other than 2xx and with nothing left in flight: **$all_clean**. Largest p99 beside the neighbour over the quiet p99 of the same cell: **${worst_ratio}x** (issue #30: at most 2x)."
  echo
  echo "| database | names | agents | machine | writes/s | p99 ms | p99 over quiet | not 2xx (by status and Gateway-Status) | left in_flight / unknown | serialization failures (PostgreSQL log) |"
  echo "| --- | --- | ---: | --- | ---: | ---: | ---: | --- | --- | ---: |"
  printf '%s\n' "${rows[@]}"
  echo
  echo "Serialization failures are the database's: the gateway retries them inside its own bound, and a"
  echo "reply is 503 only if that bound is spent, which the \"not 2xx\" column would show."
} >"$results"
echo "matrix: wrote $results ($((SECONDS - t0)) s)" >&2
[ "$failures" -eq 0 ]
