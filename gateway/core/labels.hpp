// Wire value rules shared by every input: labels (spec section 1) and the
// non-negative 63-bit integers used for epochs, versions, times and leases.
#pragma once

#include <cstdint>
#include <limits>
#include <optional>
#include <string_view>

#include <nlohmann/json_fwd.hpp>

namespace gw {

inline constexpr std::int64_t max_integer = std::numeric_limits<std::int64_t>::max();
inline constexpr std::size_t max_label_length = 80;

// 1 to 80 printable ASCII characters (codes 33 to 126).
bool is_label(std::string_view value);

// A JSON integer in [0, 2^63-1]. Booleans, floats (even 1.0), strings and
// negatives are not integers.
std::optional<std::int64_t> json_integer(const nlohmann::json& value);

// ASCII case-insensitive equality: header names, methods, schemes. Inline:
// every request compares each of its headers against dozens of names, and
// nearly every pair differs in length.
inline bool ascii_iequals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  const auto lower = [](char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; };
  for (std::size_t i = 0; i < a.size(); ++i)
    if (lower(a[i]) != lower(b[i])) return false;
  return true;
}

// A decimal header value: digits only, no sign or spaces, in [0, 2^63-1].
std::optional<std::int64_t> decimal_integer(std::string_view text);

// a + b when it stays within [0, 2^63-1].
std::optional<std::int64_t> checked_add(std::int64_t a, std::int64_t b);

}  // namespace gw
