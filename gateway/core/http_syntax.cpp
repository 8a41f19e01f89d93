#include "core/http_syntax.hpp"

#include <algorithm>

namespace gw {
namespace {

bool is_tchar(char c) {
  if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')) return true;
  return std::string_view("!#$%&'*+-.^_`|~").find(c) != std::string_view::npos;
}

}  // namespace

bool is_http_token(std::string_view s) { return !s.empty() && std::all_of(s.begin(), s.end(), is_tchar); }

bool is_field_value(std::string_view s) {
  return std::all_of(s.begin(), s.end(), [](char c) {
    const auto u = static_cast<unsigned char>(c);
    return u == '\t' || (u >= 0x20 && u != 0x7f);
  });
}

}  // namespace gw
