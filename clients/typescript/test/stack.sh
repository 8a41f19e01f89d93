# shellcheck shell=bash
# The real stack for the TypeScript client's and the MCP server's tests, sourced by their
# test.sh: a private PostgreSQL, the two demo providers and the gateway from
# $GATEWAY_TEST_BIN_DIR, on free ports, with config/dev.json's ports rewritten. stack_start
# exports what the tests read (GATEWAY_URL, BOOKING_CONTROL_URL, CRM_CONTROL_URL,
# GATEWAY_TEST_PG_DIR, GATEWAY_TEST_PG_PORT, GATEWAY_TEST_PG_SCRIPT); stack_stop stops only what
# stack_start started. Callers set REPO and trap stack_stop on EXIT.

stack_pids=()
stack_gateway_pid=
stack_pg_dir=

stack_port_in_use() { [ -n "$(ss -ltnH "sport = :$1")" ]; }
stack_taken=" "
# The first port from $1 up that nothing listens on and that this run has not handed out yet.
stack_free_port() {
  local port=$1
  while stack_port_in_use "$port" || [[ $stack_taken == *" $port "* ]]; do port=$((port + 1)); done
  stack_taken+="$port "
  echo "$port"
}

# stack_wait_port PID PORT WHAT: until PORT listens (false if PID exits first or 10 s pass).
stack_wait_port() {
  local pid=$1 port=$2 what=$3 _
  for _ in $(seq 1 100); do
    kill -0 "$pid" 2>/dev/null || break
    stack_port_in_use "$port" && return 0
    sleep 0.1
  done
  echo "stack.sh: $what did not start listening on $port" >&2
  return 1
}

# stack_start DIR BIN: everything under DIR (database, logs, config).
stack_start() {
  local dir=$1 bin=$2 gw booking crm booking_ctl crm_ctl pg
  [ -x "$bin/write-gateway" ] && [ -x "$bin/demo-provider" ] ||
    { echo "stack.sh: $bin has no write-gateway and demo-provider (scripts/build.sh release)" >&2; return 1; }
  gw=$(stack_free_port 18380); booking=$(stack_free_port 19301); crm=$(stack_free_port 19302)
  booking_ctl=$(stack_free_port 19391); crm_ctl=$(stack_free_port 19392)
  # Below the ephemeral range, so no outgoing connection can hold it when PostgreSQL binds.
  pg=$(stack_free_port 25832)
  mkdir -p "$dir/logs"
  stack_pg_dir=$dir/pg
  "$REPO/scripts/pg.sh" destroy "$stack_pg_dir"
  PG_EXTRA_OPTS=${PG_EXTRA_OPTS:-"-c fsync=off -c synchronous_commit=off"} "$REPO/scripts/pg.sh" start "$stack_pg_dir" "$pg"
  GATEWAY_DATABASE_URL=$("$REPO/scripts/pg.sh" url "$stack_pg_dir" "$pg")
  export GATEWAY_DATABASE_URL
  export BOOKING_KEY_TENANT_A=booking-secret-tenant-a BOOKING_KEY_TENANT_B=booking-secret-tenant-b
  export CRM_KEY_TENANT_A=crm-secret-tenant-a CRM_KEY_TENANT_B=crm-secret-tenant-b
  DEMO_PROVIDER_CREDENTIALS="$BOOKING_KEY_TENANT_A,$BOOKING_KEY_TENANT_B" \
    "$bin/demo-provider" --kind booking --port "$booking" --control-port "$booking_ctl" >"$dir/logs/booking.log" 2>&1 &
  stack_pids+=($!)
  stack_wait_port $! "$booking" "the booking provider" || return 1
  DEMO_PROVIDER_CREDENTIALS="$CRM_KEY_TENANT_A,$CRM_KEY_TENANT_B" \
    "$bin/demo-provider" --kind crm --port "$crm" --control-port "$crm_ctl" >"$dir/logs/crm.log" 2>&1 &
  stack_pids+=($!)
  stack_wait_port $! "$crm" "the crm provider" || return 1
  sed -e "s|\"port\": 8080|\"port\": $gw|" \
    -e "s|\"base_url\": \"http://127.0.0.1:9101\"|\"base_url\": \"http://127.0.0.1:$booking\"|" \
    -e "s|\"base_url\": \"http://127.0.0.1:9102\"|\"base_url\": \"http://127.0.0.1:$crm\"|" \
    "$REPO/config/dev.json" >"$dir/gateway.json"
  grep -q "\"port\": $gw" "$dir/gateway.json" || { echo "stack.sh: config/dev.json changed shape; update stack.sh" >&2; return 1; }
  "$bin/write-gateway" --config "$dir/gateway.json" >"$dir/logs/gateway.out" 2>"$dir/logs/gateway.log" &
  stack_gateway_pid=$!
  local _
  for _ in $(seq 1 300); do
    kill -0 "$stack_gateway_pid" 2>/dev/null || break
    if curl -fsS -o /dev/null --max-time 2 "http://127.0.0.1:$gw/readyz" 2>/dev/null; then
      export GATEWAY_URL=http://127.0.0.1:$gw
      export BOOKING_CONTROL_URL=http://127.0.0.1:$booking_ctl CRM_CONTROL_URL=http://127.0.0.1:$crm_ctl
      export GATEWAY_TEST_PG_DIR=$stack_pg_dir GATEWAY_TEST_PG_PORT=$pg GATEWAY_TEST_PG_SCRIPT=$REPO/scripts/pg.sh
      echo "stack.sh: gateway $GATEWAY_URL, booking control $BOOKING_CONTROL_URL, PostgreSQL port $pg (logs: $dir/logs)" >&2
      return 0
    fi
    sleep 0.2
  done
  echo "stack.sh: the gateway did not become ready; last lines of its log:" >&2
  tail -n 20 "$dir/logs/gateway.log" >&2 || true
  return 1
}

# stack_stop_pid PID GRACE: TERM, up to GRACE seconds, then KILL.
stack_stop_pid() {
  local pid=$1 grace=$2 _
  kill -TERM "$pid" 2>/dev/null || return 0
  for _ in $(seq 1 $((grace * 10))); do
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  kill -KILL "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
}

stack_stop() {
  # The gateway first: its drain records in-flight forwards, which needs the rest still up.
  if [ -n "$stack_gateway_pid" ]; then stack_stop_pid "$stack_gateway_pid" 30; stack_gateway_pid=; fi
  local pid
  for pid in "${stack_pids[@]}"; do stack_stop_pid "$pid" 5; done
  stack_pids=()
  if [ -n "$stack_pg_dir" ]; then "$REPO/scripts/pg.sh" stop "$stack_pg_dir" || true; stack_pg_dir=; fi
}
