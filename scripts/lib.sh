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
