#include "store/authority_clock.hpp"

namespace gw {

std::string AuthorityClock::now_sql(int param) const {
  // The manual form still names the parameter so both forms bind alike.
  if (manual_) return "(a.manual_now_ms + 0 * $" + std::to_string(param) + "::bigint)";
  return "GREATEST(a.clock_floor_ms, $" + std::to_string(param) +
         "::bigint, floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint)";
}

void AuthorityClock::observe(std::int64_t now_ms) {
  auto seen = high_water_.load();
  while (seen < now_ms && !high_water_.compare_exchange_weak(seen, now_ms)) {
  }
}

}  // namespace gw
