// RFC 4648 section 5 base64url without padding, as grant tokens use it.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace gw {

std::string base64url_encode(std::string_view bytes);

// Strict: rejects padding, characters outside the alphabet and impossible
// lengths, so one token has exactly one spelling.
std::optional<std::string> base64url_decode(std::string_view text);

}  // namespace gw
