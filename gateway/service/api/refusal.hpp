// One client-safe explanation per refusal code, shared by every route, so
// the same code never reads differently depending on where it came from.
#pragma once

#include "core/codes.hpp"
#include "http/message.hpp"

namespace gw {

http::Response refusal(Code code);

}  // namespace gw
