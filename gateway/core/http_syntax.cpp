#include "core/http_syntax.hpp"

#include <algorithm>
#include <array>

namespace gw {
namespace {

// RFC 9110 tchar, as a table: every header name of every request is checked.
constexpr auto tchar_table = [] {
  std::array<bool, 256> t{};
  for (int c = 'a'; c <= 'z'; ++c) t[c] = true;
  for (int c = 'A'; c <= 'Z'; ++c) t[c] = true;
  for (int c = '0'; c <= '9'; ++c) t[c] = true;
  for (char c : std::string_view("!#$%&'*+-.^_`|~")) t[static_cast<unsigned char>(c)] = true;
  return t;
}();

}  // namespace

bool is_http_token(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return tchar_table[static_cast<unsigned char>(c)]; });
}

bool is_field_value(std::string_view s) {
  return std::all_of(s.begin(), s.end(), [](char c) {
    const auto u = static_cast<unsigned char>(c);
    return u == '\t' || (u >= 0x20 && u != 0x7f);
  });
}

}  // namespace gw
