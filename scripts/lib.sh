# shellcheck shell=bash
# Shell functions shared by scripts/run.sh, scripts/demo-stack.sh and bench/run.sh (sourced, not run).

# stop_pid PID GRACE_SECONDS: SIGTERM, wait up to GRACE_SECONDS, then SIGKILL.
# The gateway drains in-flight forwards on SIGTERM, so give it time first.
stop_pid() {
  local pid=$1 grace=$2 _
  kill -TERM "$pid" 2>/dev/null || return 0
  for _ in $(seq 1 $((grace * 10))); do
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  kill -KILL "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
}

# wait_ready PID URL TRIES PAUSE: true once URL answers 2xx, false if PID exits or TRIES run out.
wait_ready() {
  local pid=$1 url=$2 tries=$3 pause=$4 _
  for _ in $(seq 1 "$tries"); do
    kill -0 "$pid" 2>/dev/null || return 1
    curl -fsS -o /dev/null --max-time 2 "$url" 2>/dev/null && return 0
    sleep "$pause"
  done
  return 1
}
