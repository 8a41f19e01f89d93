#include "store/pg_result.hpp"

#include <charconv>

namespace gw {

std::int64_t parse_pg_integer(std::string_view text) {
  std::int64_t value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size() || text.empty())
    throw PgDecodeError("not an integer: " + std::string(text));
  return value;
}

std::string parse_pg_bytea(std::string_view text) {
  const auto nibble = [text](char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    throw PgDecodeError("not a hex bytea: " + std::string(text.substr(0, 64)));
  };
  if (text.size() < 2 || text.substr(0, 2) != "\\x" || text.size() % 2 != 0)
    throw PgDecodeError("not a hex bytea: " + std::string(text.substr(0, 64)));
  std::string bytes;
  bytes.reserve((text.size() - 2) / 2);
  for (std::size_t i = 2; i < text.size(); i += 2)
    bytes.push_back(static_cast<char>(nibble(text[i]) << 4 | nibble(text[i + 1])));
  return bytes;
}

}  // namespace gw
