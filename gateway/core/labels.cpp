#include "core/labels.hpp"

#include <nlohmann/json.hpp>

namespace gw {

bool is_label(std::string_view value) {
  if (value.empty() || value.size() > max_label_length) return false;
  for (unsigned char c : value)
    if (c < 33 || c > 126) return false;
  return true;
}

std::optional<std::int64_t> json_integer(const nlohmann::json& value) {
  // nlohmann stores non-negative literals as unsigned and 1.0 as a float, so
  // the type tag alone separates integers from everything else.
  if (value.is_number_unsigned()) {
    auto v = value.get<std::uint64_t>();
    if (v <= static_cast<std::uint64_t>(max_integer)) return static_cast<std::int64_t>(v);
    return std::nullopt;
  }
  if (value.is_number_integer()) {
    auto v = value.get<std::int64_t>();
    if (v >= 0) return v;
  }
  return std::nullopt;
}

std::optional<std::int64_t> decimal_integer(std::string_view text) {
  if (text.empty() || text.size() > 19) return std::nullopt;
  std::uint64_t v = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return std::nullopt;
    v = v * 10 + static_cast<std::uint64_t>(c - '0');
  }
  if (v > static_cast<std::uint64_t>(max_integer)) return std::nullopt;
  return static_cast<std::int64_t>(v);
}

std::optional<std::int64_t> checked_add(std::int64_t a, std::int64_t b) {
  if (a < 0 || b < 0 || a > max_integer - b) return std::nullopt;
  return a + b;
}

}  // namespace gw
