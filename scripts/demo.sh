#!/usr/bin/env bash
# scripts/demo.sh: README.md's "A session with curl", then its "Held operations" walk-through,
# end to end, against a running stack (scripts/run.sh). Each step is the README's command,
# checked: the HTTP status, Gateway-Status and what the README shows of the reply (gatewayctl's
# exit code and output for the walk-through's operator steps). Exits non-zero at the first
# mismatch.
#
# Fresh names on every run (a task and booking slots no earlier run used), so it passes any
# number of times on the same database and providers. Keep it in step with the README.
#
# Env: GATEWAY_PORT [8080], BOOKING_CONTROL_PORT [9191] (as for run.sh), DEMO_RUN [a timestamp
# plus this shell's pid]: the suffix of the task's name and the slots.
# README_PAUSE_S [0]: a reader's pause before every step, in seconds. Against a gateway on the
# database clock demo.sh sleeps that long (README_PAUSE_S=300: the README at human speed, about
# an hour and a half). Against one started with --manual-clock (/readyz says "clock":"manual";
# scripts/demo-stack.sh does this in CI) the pause is authority time: demo.sh moves the clock on
# by README_PAUSE_S, which is what leases, forward deadlines and settle windows are measured in,
# and sleeps README_PAUSE_REAL_S [1] so the gateway's own loops (status lookups) get to run.
# GATEWAYCTL [build/release/bin/gatewayctl]: the operator CLI the walk-through runs.
set -euo pipefail

repo=$(cd "$(dirname -- "${BASH_SOURCE[0]}")/.." && pwd)
G=http://127.0.0.1:${GATEWAY_PORT:-8080}
control=127.0.0.1:${BOOKING_CONTROL_PORT:-9191}
RUN=${DEMO_RUN:-$(date +%s)-$$}
A=dev-agent-token-a
O=dev-operator-token
T=$G/v1/tenants/tenant-a/tasks/trip-$RUN
NINE="{\"slot\":\"$RUN 09:00\",\"customer\":\"ada\"}"
TEN="{\"slot\":\"$RUN 10:00\",\"customer\":\"ada\"}"

tmp=$(mktemp -d)
provider_down=0
# Whatever happens, the provider is not left down (H1 to H5) for the next run or the reader.
trap '[ "$provider_down" = 0 ] || curl -s -o /dev/null -X POST "$control/__test/faults" -d "{\"mode\":\"none\"}"
rm -rf -- "$tmp"' EXIT
pause_s=${README_PAUSE_S:-0}
pause_real_s=${README_PAUSE_REAL_S:-1}
case $pause_s$pause_real_s in *[!0-9]*) echo "demo.sh: README_PAUSE_S and README_PAUSE_REAL_S must be whole seconds" >&2; exit 2 ;; esac
ctl_bin=${GATEWAYCTL:-$repo/build/release/bin/gatewayctl}

steps=0
status=
body=

fail() {
  echo "demo.sh: FAILED at $*" >&2
  echo "demo.sh: reply was HTTP $status" >&2
  sed 's/^/  /' "$tmp/headers" >&2 2>/dev/null || true
  echo "  ${body:0:2000}" >&2
  exit 1
}

# header NAME: the last reply's header value, without the CR.
header() { { grep -i "^$1:" "$tmp/headers" || true; } | head -n 1 | cut -d: -f2- | sed 's/^ *//' | tr -d '\r'; }

# json_string NAME: a string member of the last reply's (compact) JSON body.
json_string() { sed -n "s/.*\"$1\":\"\\([^\"]*\\)\".*/\\1/p" <<<"$body"; }

# call WHAT STATUS GATEWAY_STATUS CURL_ARGS...: one request, checked. GATEWAY_STATUS "-" means
# the reply must carry none.
call() {
  local what=$1 want_status=$2 want_code=$3 code
  shift 3
  steps=$((steps + 1))
  status=$(curl -sS --max-time 30 -D "$tmp/headers" -o "$tmp/body" -w '%{http_code}' "$@") ||
    { status="none (curl failed: is scripts/run.sh up, on this GATEWAY_PORT?)"; body=; fail "$what"; }
  body=$(cat "$tmp/body")
  [ "$status" = "$want_status" ] || fail "$what: expected HTTP $want_status"
  code=$(header Gateway-Status)
  if [ "$want_code" = - ]; then
    [ -z "$code" ] || fail "$what: expected no Gateway-Status, got $code"
  else
    [ "$code" = "$want_code" ] || fail "$what: expected Gateway-Status $want_code, got '${code}'"
  fi
  printf 'demo.sh: ok  %-62s %s %s\n' "$what" "$status" "${code:--}"
}

# expect WHAT CONDITION...: a check of the last reply beyond its status.
expect() {
  local what=$1
  shift
  "$@" || fail "$what"
}
has() { [[ $body == *"$1"* ]]; }
header_is() { [ "$(header "$1")" = "$2" ]; }

# json_integer NAME: an integer member of the last reply's (compact) JSON body.
json_integer() { sed -n "s/.*\"$1\":\([0-9][0-9]*\).*/\1/p" <<<"$body"; }

manual_clock=0
if [ "$pause_s" != 0 ]; then
  ready=$(curl -sS --max-time 30 "$G/readyz") || { echo "demo.sh: $G/readyz did not answer" >&2; exit 1; }
  [[ $ready != *'"clock":"manual"'* ]] || manual_clock=1
fi

# pause: a reader stops to read before the next step (README_PAUSE_S, above).
pause() {
  [ "$pause_s" != 0 ] || return 0
  if [ "$manual_clock" = 1 ]; then
    local now
    now=$(curl -sS --max-time 30 "$G/v1/admin/held?limit=1" -H "Authorization: Bearer $O" |
      sed -n 's/.*"now_ms":\([0-9][0-9]*\).*/\1/p')
    [ -n "$now" ] || { echo "demo.sh: could not read the gateway's authority time" >&2; exit 1; }
    curl -sS --max-time 30 -o /dev/null -X POST "$G/v1/admin/clock" -H "Authorization: Bearer $O" \
      -d "{\"now_ms\":$((now + pause_s * 1000))}"
    sleep "$pause_real_s"
  else
    sleep "$pause_s"
  fi
}

# ctl WHAT EXIT ARGS...: the README's `$CTL ARGS`, checked for its exit code; its stdout in
# $body, its stderr in $tmp/ctl.err.
ctl() {
  local what=$1 want=$2 rc=0
  shift 2
  steps=$((steps + 1))
  body=$("$ctl_bin" --url "$G" --token "$O" "$@" 2>"$tmp/ctl.err") || rc=$?
  status="gatewayctl exit $rc"
  : >"$tmp/headers"
  if [ "$rc" != "$want" ]; then
    body="$body
stderr: $(cat "$tmp/ctl.err")"
    fail "$what: expected gatewayctl to exit $want"
  fi
  printf 'demo.sh: ok  %-62s %s\n' "$what" "exit $rc"
}

echo "demo.sh: $G, task trip-$RUN"

# 1. Claim the task for an hour: a grant with a new epoch, and a token that carries it.
pause
call "1. claim trip-$RUN as region-eu" 200 granted \
  -X POST "$T/claim" -H "Authorization: Bearer $A" -d '{"owner":"region-eu","lease_ms":3600000}'
expect "1. claim: the owner in the grant" has '"owner":"region-eu"'
expect "1. claim: version 0" has '"version":0'
OLD=$(json_string grant_token)
[ -n "$OLD" ] || fail "1. claim: no grant_token in the reply"
old_epoch=$(json_integer epoch)

# 2. Book through the gateway.
book_nine() {
  curl_args=(-X POST "$T/providers/booking/bookings" -H "Authorization: Bearer $1"
    -H "Fence-Grant: $2" -H "Idempotency-Key: book-slot-9am" -H "Expected-Version: 0"
    -H 'Content-Type: application/json' -d "$NINE")
}
book_nine "$A" "$OLD"
pause
call "2. book 9:00 with the grant, key book-slot-9am" 201 committed "${curl_args[@]}"
expect "2. book: Committed-Version 1" header_is Committed-Version 1
expect "2. book: the provider's booking" has '"status":"confirmed"'
expect "2. book: a booking id bk_<n>, as the README shows" has '"booking_id":"bk_'
first_booking=$body

# 3. Retry exactly: the recorded reply, byte for byte; no second booking.
pause
call "3. the exact retry" 201 historical_retry "${curl_args[@]}"
expect "3. retry: Idempotent-Replayed" header_is Idempotent-Replayed true
expect "3. retry: the same bytes" [ "$body" = "$first_booking" ]

# 4. Ownership moves: region-eu releases, region-us claims.
pause
call "4. release region-eu's grant" 200 released \
  -X POST "$T/release" -H "Authorization: Bearer $A" -d "{\"grant_token\":\"$OLD\"}"
call "4. claim as region-us" 200 granted \
  -X POST "$T/claim" -H "Authorization: Bearer $A" -d '{"owner":"region-us","lease_ms":3600000}'
NEW=$(json_string grant_token)
[ -n "$NEW" ] || fail "4. claim: no grant_token in the reply"
expect "4. claim: a larger epoch than step 1's ($old_epoch)" [ "$(json_integer epoch)" -gt "$old_epoch" ]

# 5. The old owner comes back with a new booking: rejected before anything is sent.
pause
call "5. the old owner books 10:00" 409 stale_owner \
  -X POST "$T/providers/booking/bookings" -H "Authorization: Bearer $A" \
  -H "Fence-Grant: $OLD" -H "Idempotency-Key: book-slot-10am" -H "Expected-Version: 1" \
  -d "$TEN"
expect "5. a problem+json body" header_is Content-Type application/problem+json

# 6. The new owner recovering the same intent gets the recorded result.
book_nine "$A" "$NEW"
pause
call "6. the new owner's exact retry of book-slot-9am" 201 historical_retry "${curl_args[@]}"
expect "6. the same booking" [ "$body" = "$first_booking" ]

# 7. The operation's receipt, for the current owner only; the diagnostic task view.
pause
call "7. the receipt of book-slot-9am" 200 ok \
  "$T/operations/book-slot-9am" -H "Authorization: Bearer $A" -H "Fence-Grant: $NEW"
expect "7. receipt: succeeded" has '"state":"succeeded"'
call "7. the task view" 200 ok "$T" -H "Authorization: Bearer $A"
expect "7. task view: region-us at version 1" has '"owner":"region-us"'
expect "7. task view: version 1" has '"version":1'

# 8. What the provider executed: this operation once, under the key the gateway sent it
#    (the operator's view of the operation names that key).
pause
call "8. the operation as the operator sees it" 200 ok \
  "$G/v1/admin/operations/tenant-a/trip-$RUN/book-slot-9am" -H "Authorization: Bearer $O"
key=$(json_string upstream_key)
[ -n "$key" ] || fail "8. the operator's view: no upstream_key"
call "8. the provider's effects (control port $control)" 200 - "$control/__test/effects"
expect "8. the provider executed book-slot-9am exactly once ($key)" has "\"$key\":1"

# Held operations: README.md's walk-through, on the same task (version 1) with region-us's grant.
[ -x "$ctl_bin" ] || { echo "demo.sh: $ctl_bin is missing: scripts/build.sh release --target gatewayctl" >&2; exit 1; }

# 0. A fresh hour for the grant.
pause
call "H0. renew region-us's grant for an hour" 200 renewed \
  -X POST "$T/renew" -H "Authorization: Bearer $A" -d "{\"grant_token\":\"$NEW\",\"lease_ms\":3600000}"

# 1. The booking provider goes down until step 5: every request, lookups included, answers 503.
pause
provider_down=1
call "H1. the provider answers everything 503" 200 - \
  -X POST "$control/__test/faults" -d '{"mode":"error_5xx"}'

# 2. Book: held, outcome unknown.
book_ten() {
  curl_args=(-X POST "$T/providers/booking/bookings" -H "Authorization: Bearer $A"
    -H "Fence-Grant: $NEW" -H "Idempotency-Key: book-slot-10am" -H "Expected-Version: 1"
    -H 'Content-Type: application/json' -d "$TEN")
}
book_ten
pause
call "H2. book 10:00 while the provider is down" 504 unknown_outcome "${curl_args[@]}"
expect "H2. the status line says Outcome Unknown" grep -q '^HTTP/1.1 504 Outcome Unknown' "$tmp/headers"
expect "H2. the body says the provider answered 503" has '"provider_status":503'
#    Any other write on the task: 409 unresolved_operation naming book-slot-10am.
call "H2. another write on the task is refused" 409 unresolved_operation \
  -X POST "$T/providers/booking/bookings" -H "Authorization: Bearer $A" \
  -H "Fence-Grant: $NEW" -H "Idempotency-Key: book-slot-11am" -H "Expected-Version: 1" \
  -H 'Content-Type: application/json' -d "$TEN"
expect "H2. unresolved_operation names book-slot-10am" has '"id":"book-slot-10am"'

# 3. Find it: still held, however long the pause was (the lookups get 503 too).
pause
ctl "H3. \$CTL held --task trip-$RUN" 0 held --task "trip-$RUN"
expect "H3. held lists book-slot-10am as unknown" grep -q "book-slot-10am  unknown" <<<"$body"
ctl "H3. \$CTL show tenant-a trip-$RUN book-slot-10am" 0 show tenant-a "trip-$RUN" book-slot-10am
expect "H3. show: state unknown" grep -qE '^state +unknown$' <<<"$body"
expect "H3. show: the attempt's 503" grep -q "provider replied 503" <<<"$body"

# 4. The operator's evidence: nothing executed under the key; resolve not_executed.
pause
ctl "H4. \$CTL show ... --json, for the upstream key" 0 show tenant-a "trip-$RUN" book-slot-10am --json
key10=$(sed -n 's/.*"upstream_key": "\([^"]*\)".*/\1/p' <<<"$body" | head -n 1)
[ -n "$key10" ] || fail "H4. show --json: no upstream_key"
call "H4. the provider's effects" 200 - "$control/__test/effects"
expect "H4. nothing executed under $key10" [ "$(grep -c "\"$key10\"" <<<"$body" || true)" = 0 ]
ctl "H4. \$CTL resolve ... --outcome not_executed" 0 \
  resolve tenant-a "trip-$RUN" book-slot-10am --outcome not_executed --evidence "provider: nothing under $key10"
expect "H4. resolve: state not_executed" grep -qE '^state +not_executed$' <<<"$body"

# 5. The provider is back.
pause
call "H5. the provider is back" 200 - -X POST "$control/__test/faults" -d '{"mode":"none"}'
provider_down=0

# 6. The exact retry of step 2 commits: one booking.
book_ten
pause
call "H6. the exact retry of book-slot-10am" 201 committed "${curl_args[@]}"
expect "H6. Committed-Version 2" header_is Committed-Version 2
call "H6. the provider's effects" 200 - "$control/__test/effects"
expect "H6. the provider executed book-slot-10am exactly once ($key10)" has "\"$key10\":1"

echo "demo.sh: all $steps replies as README.md says"
