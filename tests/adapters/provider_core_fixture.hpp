// What the demo provider's pure tests share: its clock's fixed instants and
// one business request served the way its server serves it, minus the waiting.
#pragma once

#include "provider_core.hpp"

#include <nlohmann/json.hpp>

#include <chrono>
#include <string>

namespace demo_provider::test {

inline const auto epoch = provider_core::clock::time_point{};
inline const auto an_hour_in = epoch + std::chrono::hours(1);

// POST /bookings for `slot`, under Idempotency-Key `key` (none when empty).
inline plain_request booking(const std::string& slot, const std::string& key) {
  header_list headers;
  if (!key.empty()) headers.emplace_back("Idempotency-Key", key);
  return plain_request{"POST", "/bookings", headers, nlohmann::json{{"slot", slot}, {"customer", "c"}}.dump()};
}

// One business request as the server handles it: recorded, answered under
// the next planned fault, finished.
inline plain_reply serve(provider_core& core, const plain_request& request,
                         provider_core::clock::time_point now = epoch) {
  core.record(request);
  const plain_reply reply = core.answer(request, core.faults().take(), now);
  core.finished();
  return reply;
}

}  // namespace demo_provider::test
