// RFC 4648 base64: section 5 base64url without padding, as grant tokens use
// it, and section 4 standard base64, as Standard Webhooks secrets and
// signatures use it.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace gw {

std::string base64url_encode(std::string_view bytes);

// Strict: rejects padding, characters outside the alphabet and impossible
// lengths, so one token has exactly one spelling.
std::optional<std::string> base64url_decode(std::string_view text);

// Standard alphabet (+ and /), padded with '='.
std::string base64_encode(std::string_view bytes);

// Standard alphabet; the padding may be given in full or left out (secrets
// are pasted by hand), but never partly, in the middle, or with non-zero
// leftover bits.
std::optional<std::string> base64_decode(std::string_view text);

}  // namespace gw
