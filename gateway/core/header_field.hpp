// One HTTP header field as it crossed the wire: the name as spelled, the
// value as received. The server's requests, the application's replies, the
// upstream client's messages and webhook verification all hold lists of this
// one type, so a list moves from one to the next with no copy and no
// conversion.
#pragma once

#include <string>
#include <string_view>
#include <utility>

namespace gw {

struct HeaderField {
  HeaderField() = default;
  // Spelled out: emplace_back(name, value) needs it where C++20's
  // parenthesized aggregate initialization is missing (clang before 16).
  HeaderField(std::string n, std::string v) : name(std::move(n)), value(std::move(v)) {}
  // emplace_back(std::in_place, name, value) from bytes still in a parser's
  // buffer: each string is built in place, not built and then moved (a short
  // string's move is a copy). Tagged, so that a pair of literals stays
  // unambiguous.
  HeaderField(std::in_place_t, std::string_view n, std::string_view v) : name(n), value(v) {}

  std::string name;
  std::string value;
  bool operator==(const HeaderField&) const = default;
};

}  // namespace gw
