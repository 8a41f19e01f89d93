// A request the gateway refuses with a code and a client-safe detail.
// Handlers throw it; the application boundary turns it into problem+json.
#pragma once

#include "core/codes.hpp"

#include <stdexcept>
#include <string>

namespace gw {

struct Rejection : std::runtime_error {
  Rejection(Code c, std::string detail, std::string allow_methods = {})
      : std::runtime_error(std::move(detail)), code(c), allow(std::move(allow_methods)) {}
  Code code;
  std::string allow;  // method_not_allowed: the Allow header's value
};

}  // namespace gw
