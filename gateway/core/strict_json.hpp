// JSON that means one thing to every reader. RFC 8259 leaves an object with
// the same member twice undefined: one parser takes the first, another the
// last, so a grant token or a body could say two things at once. Every JSON
// the gateway reads from outside goes through here.
#pragma once

#include <nlohmann/json.hpp>

#include <string_view>

namespace gw {

// nlohmann::json::parse without exceptions, and a discarded value for an
// object with a repeated member name at any depth (also for invalid JSON).
nlohmann::json parse_strict_json(std::string_view text);

}  // namespace gw
