// One client-safe explanation per refusal code, shared by every route, so
// the same code never reads differently depending on where it came from.
#pragma once

#include "core/codes.hpp"
#include "http/message.hpp"

#include <string>
#include <string_view>

namespace gw {

http::Response refusal(Code code);

// 404 not_found naming what is missing ("operation", "task", "provider"; a
// path no route matches is no_such_route(), "route"): docs/api.md, "Errors".
http::Response not_found(std::string_view missing, std::string detail);
// The 404 of an operation id the task does not have.
http::Response no_such_operation();

}  // namespace gw
