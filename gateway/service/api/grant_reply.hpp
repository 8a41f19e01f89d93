// The body of a granted claim, written in place: claims are the gateway's
// busiest route after protected writes, and building this as an
// nlohmann::json object and dumping it was most of the gateway's own work
// per claim. The bytes are what that dump gave (tests/service/grant_reply_tests.cpp).
#pragma once

#include "core/grant.hpp"

#include <cstdint>
#include <string>
#include <string_view>

namespace gw {

// {"code":"granted","grant":{"epoch",...,"tenant"},"grant_token":...,"version":...}
std::string granted_body(const GrantIdentity& grant, std::int64_t expires_at_ms, std::string_view token,
                         std::int64_t version);

}  // namespace gw
