// Operator-facing events (held, swept, recorded late, ...) as one JSON line
// each on stderr, so a line is never interleaved with another thread's.
// Never pass a token, a credential or a body.
#pragma once

#include <nlohmann/json.hpp>

namespace gw {

void log_event(const std::string& event, nlohmann::json fields);

}  // namespace gw
