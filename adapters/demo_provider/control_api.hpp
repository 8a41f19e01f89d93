// The test-only control API on the control port. Plain HTTP, no auth, never
// counted as business traffic. Every reply is JSON.
//
//   GET  /__test/requests       {"requests": [{"method","target","headers","body","connection"}, ...]}:
//                               every business request read, in order; "connection" numbers
//                               the business connections in accept order (a reused one repeats)
//   GET  /__test/effects        {"effects": N, "by_key": {idempotency key: N}} ("" = no key)
//   GET  /__test/activity       {"in_progress": N, "held": M}: business requests read and not
//                               yet answered or closed (held ones included), and those held
//   GET  /__test/faults         the current fault plan
//   POST /__test/faults         {"mode": M, "count": N, "delay_ms": D, "status": S,
//                               "retry_after": "..."}: the next N business requests (all, when
//                               count is absent) get fault M; modes in fault_plan.hpp.
//                               "none" clears. A bad body is 400 invalid_fault with a detail.
//   POST /__test/release        {} or {"count": K}: held requests (the K longest held, or all)
//                               go on to execute and answer. {"released": n, "held": m}
//   GET  /__test/reply_headers  the headers added to every business reply
//   POST /__test/reply_headers  {"headers": [[name, value], ...]}: replaces them; [] clears. A value
//                               may be {"hex": "..."} for bytes 0x80-0xFF (obs-text)
//   GET  /__test/echo           {"forms": [...]}: the forms business replies echo the request's
//                               headers in (echo.hpp)
//   POST /__test/echo           {"forms": ["body", "upper", ...]}: replaces them; [] turns the echo
//                               off. A bad body is 400 invalid_echo with a detail
//   POST /__test/reset          business state, records, effects, faults, reply headers, echo and
//                               webhook records back to new; held requests are closed without
//                               executing
//   GET  /__test/webhooks       {"delivered": [{"id","timestamp","body","headers",
//                               "receiver_status","receiver_body"} or {..., "error"}], "queued": N}
//   POST /__test/webhooks       {"key": K, "status": S, "state": "executed", "id": I,
//                               "signature": "valid"|"bad"|"missing", "timestamp_offset_s": N}:
//                               sends one signed webhook about K now and answers with its
//                               delivery (200, or 502 when the receiver could not be reached).
//                               Only key is required; status defaults to the reply K's execution
//                               produced. 409 webhooks_not_configured without --webhook-url.
#pragma once

#include "plain_http.hpp"
#include "provider_core.hpp"

namespace demo_provider {

// Listener changes that a fault switch implies are the server's job: it
// compares faults().refusing() before and after.
plain_reply handle_control(const plain_request& request, provider_core& core);

}  // namespace demo_provider
