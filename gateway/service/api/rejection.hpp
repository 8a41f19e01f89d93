// A request the gateway refuses with a code and a client-safe detail.
// Handlers throw it; the application boundary turns it into problem+json.
#pragma once

#include "core/codes.hpp"

#include <nlohmann/json.hpp>

#include <stdexcept>
#include <string>

namespace gw {

struct Rejection : std::runtime_error {
  Rejection(Code c, std::string detail, nlohmann::json members = nlohmann::json::object())
      : std::runtime_error(std::move(detail)), code(c), extra(std::move(members)) {}
  Code code;
  nlohmann::json extra;  // problem+json extension members
  std::string allow;     // method_not_allowed: the Allow header's value
};

// 404 for a path no route matches: `"missing": "route"` tells a client that
// its base URL is wrong, where a 404 of a known route (no such operation,
// task or provider) names what is missing instead (docs/api.md, "Errors").
Rejection no_such_route();

}  // namespace gw
