// Refusals: a request the gateway turns down with a code and a client-safe
// detail. Handlers throw a Refusal; the application boundary turns it into
// problem+json. (A refused protected attempt is also kept as a rejection in
// the audit trail, store/rejection_store.hpp: "rejection" names that record
// only.)
#pragma once

#include "core/codes.hpp"
#include "http/message.hpp"

#include <nlohmann/json.hpp>

#include <stdexcept>
#include <string>
#include <string_view>

namespace gw {

struct Refusal : std::runtime_error {
  Refusal(Code c, std::string detail, nlohmann::json members = nlohmann::json::object())
      : std::runtime_error(std::move(detail)), code(c), extra(std::move(members)) {}
  Code code;
  nlohmann::json extra;  // problem+json extension members
  std::string allow;     // method_not_allowed: the Allow header's value
};

// 404 for a path no route matches: `"missing": "route"` tells a client that
// its base URL is wrong, where a 404 of a known route (no such operation,
// task or provider) names what is missing instead (docs/api.md, "Errors").
Refusal no_such_route();

// One client-safe explanation per refusal code, shared by every route, so
// the same code never reads differently depending on where it came from.
http::Response refusal(Code code);

// 404 not_found naming what is missing ("operation", "task", "provider"; a
// path no route matches is no_such_route(), "route"): docs/api.md, "Errors".
http::Response not_found(std::string_view missing, std::string detail);
// The 404 of an operation id the task does not have.
http::Response no_such_operation();

}  // namespace gw
