#include "core/http_syntax.hpp"

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>

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
  const auto allowed = [](char c) {
    const auto u = static_cast<unsigned char>(c);
    return u == '\t' || (u >= 0x20 && u != 0x7f);
  };
  // Every field of every request and reply passes here, several times: eight
  // bytes at a time. A word with no byte below 0x20 and none equal to 0x7f is
  // all allowed (0x80 and up is obs-text); (w - 0x01..) & ~w & 0x80.. is
  // nonzero exactly when some byte of w is zero (Hacker's Delight 6-1). A
  // word that may hold one is checked byte by byte: HTAB is allowed.
  constexpr std::uint64_t ones = 0x0101010101010101, highs = 0x8080808080808080;
  const char* p = s.data();
  const char* const end = p + s.size();
  for (; end - p >= 8; p += 8) {
    std::uint64_t w;
    std::memcpy(&w, p, sizeof w);
    const std::uint64_t del = w ^ (ones * 0x7f);
    const std::uint64_t suspect = ((w - ones * 0x20) & ~w & highs) | ((del - ones) & ~del & highs);
    if (suspect != 0 && !std::all_of(p, p + 8, allowed)) return false;
  }
  return std::all_of(p, end, allowed);
}

bool same_field_name(std::string_view a, std::string_view b) {
  const auto fold = [](char c) {
    if (c == '_') return '-';
    return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c;
  };
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [&](char x, char y) { return fold(x) == fold(y); });
}

bool field_name_has_prefix(std::string_view name, std::string_view prefix) {
  return name.size() >= prefix.size() && same_field_name(name.substr(0, prefix.size()), prefix);
}

}  // namespace gw
