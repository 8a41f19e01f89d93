#!/usr/bin/env bash
# scripts/demo.sh: README.md's "A session with curl", end to end, against a running stack
# (scripts/run.sh). Each step is the README's command, checked: the HTTP status, Gateway-Status
# and what the README shows of the reply. Exits non-zero at the first mismatch.
#
# Fresh names on every run (a task and booking slots no earlier run used), so it passes any
# number of times on the same database and providers. Keep it in step with the README.
#
# Env: GATEWAY_PORT [8080], BOOKING_CONTROL_PORT [9191] (as for run.sh), DEMO_RUN [a timestamp
# plus this shell's pid]: the suffix of the task's name and the slots.
set -euo pipefail

G=http://127.0.0.1:${GATEWAY_PORT:-8080}
control=127.0.0.1:${BOOKING_CONTROL_PORT:-9191}
RUN=${DEMO_RUN:-$(date +%s)-$$}
A=dev-agent-token-a
O=dev-operator-token
T=$G/v1/tenants/tenant-a/tasks/trip-$RUN
NINE="{\"slot\":\"$RUN 09:00\",\"customer\":\"ada\"}"
TEN="{\"slot\":\"$RUN 10:00\",\"customer\":\"ada\"}"

tmp=$(mktemp -d)
trap 'rm -rf -- "$tmp"' EXIT

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

echo "demo.sh: $G, task trip-$RUN"

# 1. Claim the task: a grant with a new epoch, and a token that carries it.
call "1. claim trip-$RUN as region-eu" 200 granted \
  -X POST "$T/claim" -H "Authorization: Bearer $A" -d '{"owner":"region-eu","lease_ms":60000}'
expect "1. claim: the owner in the grant" has '"owner":"region-eu"'
expect "1. claim: version 0" has '"version":0'
OLD=$(json_string grant_token)
[ -n "$OLD" ] || fail "1. claim: no grant_token in the reply"

# 2. Book through the gateway.
book_nine() {
  curl_args=(-X POST "$T/providers/booking/bookings" -H "Authorization: Bearer $1"
    -H "Fence-Grant: $2" -H "Idempotency-Key: book-slot-9am" -H "Expected-Version: 0"
    -H 'Content-Type: application/json' -d "$NINE")
}
book_nine "$A" "$OLD"
call "2. book 9:00 with the grant, key book-slot-9am" 201 committed "${curl_args[@]}"
expect "2. book: Committed-Version 1" header_is Committed-Version 1
expect "2. book: the provider's booking" has '"status":"confirmed"'
first_booking=$body

# 3. Retry exactly: the recorded reply, byte for byte; no second booking.
call "3. the exact retry" 201 historical_retry "${curl_args[@]}"
expect "3. retry: Idempotent-Replayed" header_is Idempotent-Replayed true
expect "3. retry: the same bytes" [ "$body" = "$first_booking" ]

# 4. Ownership moves: region-eu releases, region-us claims.
call "4. release region-eu's grant" 200 released \
  -X POST "$T/release" -H "Authorization: Bearer $A" -d "{\"grant_token\":\"$OLD\"}"
call "4. claim as region-us" 200 granted \
  -X POST "$T/claim" -H "Authorization: Bearer $A" -d '{"owner":"region-us","lease_ms":60000}'
NEW=$(json_string grant_token)
[ -n "$NEW" ] || fail "4. claim: no grant_token in the reply"

# 5. The old owner comes back with a new booking: rejected before anything is sent.
call "5. the old owner books 10:00" 409 stale_owner \
  -X POST "$T/providers/booking/bookings" -H "Authorization: Bearer $A" \
  -H "Fence-Grant: $OLD" -H "Idempotency-Key: book-slot-10am" -H "Expected-Version: 1" \
  -d "$TEN"
expect "5. a problem+json body" header_is Content-Type application/problem+json

# 6. The new owner recovering the same intent gets the recorded result.
book_nine "$A" "$NEW"
call "6. the new owner's exact retry of book-slot-9am" 201 historical_retry "${curl_args[@]}"
expect "6. the same booking" [ "$body" = "$first_booking" ]

# 7. The operation's receipt, for the current owner only; the diagnostic task view.
call "7. the receipt of book-slot-9am" 200 ok \
  "$T/operations/book-slot-9am" -H "Authorization: Bearer $A" -H "Fence-Grant: $NEW"
expect "7. receipt: succeeded" has '"state":"succeeded"'
call "7. the task view" 200 ok "$T" -H "Authorization: Bearer $A"
expect "7. task view: region-us at version 1" has '"owner":"region-us"'
expect "7. task view: version 1" has '"version":1'

# What the provider executed: this operation once, under the key the gateway sent it
# (the operator's view of the operation names that key).
call "   the operation as the operator sees it" 200 ok \
  "$G/v1/admin/operations/tenant-a/trip-$RUN/book-slot-9am" -H "Authorization: Bearer $O"
key=$(json_string upstream_key)
[ -n "$key" ] || fail "the operator's view: no upstream_key"
call "   the provider's effects (control port $control)" 200 - "$control/__test/effects"
expect "the provider executed book-slot-9am exactly once ($key)" has "\"$key\":1"

echo "demo.sh: all $steps replies as README.md says"
