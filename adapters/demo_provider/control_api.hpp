// The test-only control API: what tests read (requests, effects, faults) and
// set (faults, reset). Plain HTTP, no auth, never counted as business traffic.
#pragma once

#include "plain_http.hpp"
#include "provider_core.hpp"

namespace demo_provider {

// Listener changes that a fault switch implies are the server's job: it
// compares faults().refusing() before and after.
plain_reply handle_control(const plain_request& request, provider_core& core);

}  // namespace demo_provider
