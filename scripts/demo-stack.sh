#!/usr/bin/env bash
# scripts/demo-stack.sh: what CI runs after the tests (scripts/test.sh). Starts scripts/run.sh in
# the background on free ports with a fresh database ($GATEWAY_DEV_DIR, default build/demo-stack),
# waits until the gateway is ready, runs scripts/demo.sh against it, then stops the stack (TERM,
# and waits). Exits with demo.sh's status; non-zero also when the stack never became ready.
#
# README.md's walk-throughs must work at human speed, so demo.sh pauses before every step:
# README_PAUSE_S [300] seconds of authority time, a reader's five minutes. The gateway runs with
# its manual clock (set to the real time first), and demo.sh moves it on by the pause, so a
# lease, a forward deadline or a settle window (10 s) that a reader's pause would outlast is
# outlasted here too, while each pause takes README_PAUSE_REAL_S [1] real second (CI time).
# README_PAUSE_S=0 runs the session without pauses.
set -euo pipefail

repo=$(cd "$(dirname -- "${BASH_SOURCE[0]}")/.." && pwd)
cd "$repo"
# shellcheck source=scripts/lib.sh
source "$repo/scripts/lib.sh"

say() { echo "demo-stack.sh: $*" >&2; }

port_in_use() { [ -n "$(ss -ltnH "sport = :$1")" ]; }
taken=" "
# free_port FROM: the first port from FROM up that nothing listens on and this script has not
# handed out, so a developer's own run.sh (or another checkout's CI) on the defaults is no clash.
free_port() {
  local port=$1
  while port_in_use "$port" || [[ $taken == *" $port "* ]]; do port=$((port + 1)); done
  taken+="$port "
  echo "$port"
}

GATEWAY_PORT=$(free_port 18080)
BOOKING_PORT=$(free_port 19101)
CRM_PORT=$(free_port 19102)
BOOKING_CONTROL_PORT=$(free_port 19191)
CRM_CONTROL_PORT=$(free_port 19192)
# Below the kernel's ephemeral range (32768-60999 by default): a port in it can be taken by any
# outgoing connection between this check and PostgreSQL's bind, which is how CI once lost 55632.
GATEWAY_DEV_PG_PORT=$(free_port 25632)
GATEWAY_DEV_DIR=${GATEWAY_DEV_DIR:-$repo/build/demo-stack}
export GATEWAY_PORT BOOKING_PORT CRM_PORT BOOKING_CONTROL_PORT CRM_CONTROL_PORT GATEWAY_DEV_PG_PORT GATEWAY_DEV_DIR

# A fresh database: demo.sh does not need one, but CI should not depend on an earlier run.
scripts/pg.sh destroy "$GATEWAY_DEV_DIR/pg"
mkdir -p "$GATEWAY_DEV_DIR"
log=$GATEWAY_DEV_DIR/run.log
say "scripts/run.sh on gateway port $GATEWAY_PORT (log: $log)"
scripts/run.sh --manual-clock >"$log" 2>&1 &
stack=$!
# run.sh stops the gateway (up to 30 s), the providers and PostgreSQL on TERM.
trap 'stop_pid "$stack" 60' EXIT

ready=0
wait_ready "$stack" "http://127.0.0.1:$GATEWAY_PORT/readyz" 300 1 && ready=1
if [ "$ready" != 1 ]; then
  say "the stack did not become ready; last lines of $log:"
  tail -n 40 "$log" >&2 || true
  exit 1
fi

# Authority time starts at the real time, as a reader's gateway would have it.
if ! curl -sS --max-time 30 -o /dev/null -X POST "http://127.0.0.1:$GATEWAY_PORT/v1/admin/clock" \
  -H "Authorization: Bearer dev-operator-token" -d "{\"now_ms\":$(date +%s%3N)}"; then
  say "could not set the gateway's manual clock"
  exit 1
fi

rc=0
README_PAUSE_S=${README_PAUSE_S:-300} README_PAUSE_REAL_S=${README_PAUSE_REAL_S:-1} scripts/demo.sh || rc=$?
stop_pid "$stack" 60
trap - EXIT
if [ "$rc" != 0 ]; then
  say "demo.sh failed (exit $rc); the stack's output is in $log"
fi
exit "$rc"
