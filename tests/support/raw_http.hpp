// Helpers of the tests that speak raw HTTP to a gateway (bad input, framing).
#pragma once

#include "support/gateway_fixture.hpp"

#include <string>

namespace gw::test {

// How many tasks the gateway's database holds: a refused request made none.
inline std::string task_count(Gateway& g) { return g.db().scalar("SELECT count(*) FROM tasks"); }

// Idle keep-alive connections outlive any client deadline here, so an EOF
// can only be the gateway's deliberate close.
inline GatewayOptions long_idle() {
  return {.manual_clock = true, .edit = [](nlohmann::json& c) { c["http"]["idle_timeout_ms"] = 600000; }};
}

}  // namespace gw::test
